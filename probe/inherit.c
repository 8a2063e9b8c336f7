/* Inheritance forensics (inherit.h). */
#include "inherit.h"

#include <errno.h>
#include <fnmatch.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))
/* include/uapi/linux/major.h has no name for it: the NVIDIA driver registers character major 195 */
#define NVIDIA_CHARACTER_MAJOR 195
#define DRM_CHARACTER_MAJOR 226
#define NET_UNIX_LINE_MAX 8192

/* First match wins: fnmatch patterns over the fd's target. */
static const struct {
    const char *pattern;
    enum hd_fd_class fd_class;
} target_classes[] = {
    { "/dev/nvidia-uvm*", HD_FD_CLASS_NVIDIA_UVM },
    { "/dev/nvidia*", HD_FD_CLASS_NVIDIA },
    { "/dev/dri/*", HD_FD_CLASS_DRI },
    { "/dev/shm/*", HD_FD_CLASS_SHM },
    { "/memfd:*", HD_FD_CLASS_MEMFD },
    { "/dev/*", HD_FD_CLASS_DEVICE },
    { "/*", HD_FD_CLASS_FILE },
    { "pipe:\\[*\\]", HD_FD_CLASS_PIPE },
    { "socket:\\[*\\]", HD_FD_CLASS_SOCKET },
    { "anon_inode:\\[eventfd\\]", HD_FD_CLASS_EVENTFD },
    { "anon_inode:*", HD_FD_CLASS_ANON },
};

enum hd_fd_class probe_fd_class_of_target(const char *target)
{
    for (size_t i = 0; target && i < COUNT(target_classes); i++)
        if (fnmatch(target_classes[i].pattern, target, 0) == 0)
            return target_classes[i].fd_class;
    return HD_FD_CLASS_OTHER;
}

/* Well-known unix socket names: X11 (/tmp/.X11-unix/X0, or the abstract @/tmp/.X11-unix/X0), Wayland
 * ($XDG_RUNTIME_DIR/wayland-0), D-Bus (the system bus, session buses in /run/user or abstract @/tmp/dbus-*). */
static const struct {
    const char *pattern;
    enum hd_fd_class fd_class;
} socket_classes[] = {
    { "*/.X11-unix/X*", HD_FD_CLASS_X11 },
    { "*/wayland-*", HD_FD_CLASS_WAYLAND },
    { "@wayland-*", HD_FD_CLASS_WAYLAND },
    { "*dbus*", HD_FD_CLASS_DBUS },
    { "*/bus", HD_FD_CLASS_DBUS },
};

enum hd_fd_class probe_unix_socket_class(const char *name)
{
    for (size_t i = 0; name && i < COUNT(socket_classes); i++)
        if (fnmatch(socket_classes[i].pattern, name, 0) == 0)
            return socket_classes[i].fd_class;
    return HD_FD_CLASS_UNIX_SOCKET;
}

/* "Num RefCount Protocol Flags Type St Inode Path": the path is the 8th field and may hold spaces. */
bool probe_parse_net_unix_line(const char *line, size_t length, uint64_t *inode, char **name)
{
    *name = NULL;
    const char *p = line, *end = line + length;
    while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
        end--;
    for (int field = 0; field < 6; field++) {
        while (p < end && *p == ' ')
            p++;
        if (p == end)
            return false;
        while (p < end && *p != ' ')
            p++;
    }
    while (p < end && *p == ' ')
        p++;
    uint64_t value = 0;
    const char *digits = p;
    for (; p < end && *p >= '0' && *p <= '9' && value < UINT64_MAX / 10; p++)
        value = value * 10 + (uint64_t)(*p - '0');
    if (p == digits || (p < end && *p != ' '))
        return false;
    *inode = value;
    while (p < end && *p == ' ')
        p++;
    if (p < end) {
        *name = strndup(p, (size_t)(end - p));
        if (*name && **name == '\0') {
            free(*name);
            *name = NULL;
        }
    }
    return true;
}

static int compare_inodes(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The peer of a connected unix socket (sock_diag), 0 when unknown */
static uint64_t peer_of(const struct hd_snapshot *snapshot, uint64_t inode)
{
    struct hd_socket_peer key = { .inode = inode };
    /* bsearch() must not be given a NULL array, even of no element */
    const struct hd_socket_peer *found =
        snapshot->nunix_peers ? bsearch(&key, snapshot->unix_peers, snapshot->nunix_peers, sizeof key, compare_inodes)
                              : NULL;
    return found ? found->peer_inode : 0;
}

/* The socket inodes the snapshot's fds hold and their peers, sorted: only their lines of /proc/net/unix matter,
 * and a host may have a hundred thousand. NULL when there are none (or memory ran out). */
static uint64_t *wanted_inodes(const struct hd_snapshot *snapshot, size_t *count)
{
    size_t total = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        total += snapshot->processes[p].nfds;
    uint64_t *inodes = total ? calloc(total * 2, sizeof *inodes) : NULL;
    *count = 0;
    for (size_t p = 0; inodes && p < snapshot->nprocesses; p++)
        for (size_t f = 0; f < snapshot->processes[p].nfds; f++) {
            const struct hd_fd *fd = &snapshot->processes[p].fds[f];
            if (fd->kind != HD_FD_SOCKET)
                continue;
            inodes[(*count)++] = fd->inode;
            uint64_t peer = peer_of(snapshot, fd->inode);
            if (peer)
                inodes[(*count)++] = peer;
        }
    if (inodes)
        qsort(inodes, *count, sizeof *inodes, compare_inodes);
    return inodes;
}

/* A line of /proc/net/unix that concerns the snapshot; `name` NULL for an unnamed socket. */
struct unix_socket {
    uint64_t inode; /* first: sorted and searched by it */
    char *name;
};

static const struct unix_socket *find_socket(const struct unix_socket *sockets, size_t count, uint64_t inode)
{
    return inode && count ? bsearch(&inode, sockets, count, sizeof *sockets, compare_inodes) : NULL;
}

/* Unix sockets get the class of their name, or, for a client's unnamed end, of its peer's: the accepted socket of
 * a server is listed with the server's path. */
static void name_sockets(struct hd_snapshot *snapshot, const struct unix_socket *sockets, size_t count)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        for (size_t f = 0; f < snapshot->processes[p].nfds; f++) {
            struct hd_fd *fd = &snapshot->processes[p].fds[f];
            const struct unix_socket *own = fd->kind == HD_FD_SOCKET ? find_socket(sockets, count, fd->inode) : NULL;
            if (!own)
                continue; /* not a unix socket: TCP, UDP, netlink */
            const struct unix_socket *named = own->name ? own : find_socket(sockets, count, peer_of(snapshot, fd->inode));
            const char *name = named ? named->name : NULL;
            fd->fd_class = name ? probe_unix_socket_class(name) : HD_FD_CLASS_UNIX_SOCKET;
            if (name && !fd->socket_name)
                fd->socket_name = strdup(name);
        }
}

static bool keep_socket(struct unix_socket **sockets, size_t *count, uint64_t inode, char *name)
{
    struct unix_socket *grown = reallocarray(*sockets, *count + 1, sizeof *grown);
    if (!grown)
        return false;
    *sockets = grown;
    (*sockets)[(*count)++] = (struct unix_socket){ .inode = inode, .name = name };
    return true;
}

/* The unix sockets of the network namespace of the first process (a tree shares one, as a rule). */
static void read_unix_socket_names(struct hd_snapshot *snapshot)
{
    size_t nwanted, nsockets = 0;
    uint64_t *wanted = wanted_inodes(snapshot, &nwanted);
    if (!wanted)
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/net/unix", (int)snapshot->processes[0].pid);
    FILE *file = fopen(path, "re");
    if (!file) {
        hd_snapshot_note(snapshot, HD_NOTE_SOCKETS, 0, 0, "unix socket names: %s: %s", path, strerror(errno));
        free(wanted);
        return;
    }
    struct unix_socket *sockets = NULL;
    char *line = NULL;
    size_t cap = 0;
    ssize_t length;
    while ((length = getline(&line, &cap, file)) > 0) {
        uint64_t inode;
        char *name;
        if (length > NET_UNIX_LINE_MAX || !probe_parse_net_unix_line(line, (size_t)length, &inode, &name))
            continue;
        if (nwanted == 0 || !bsearch(&inode, wanted, nwanted, sizeof *wanted, compare_inodes) ||
            !keep_socket(&sockets, &nsockets, inode, name))
            free(name);
    }
    free(line);
    fclose(file);
    free(wanted);
    if (sockets)
        qsort(sockets, nsockets, sizeof *sockets, compare_inodes);
    name_sockets(snapshot, sockets, nsockets);
    for (size_t i = 0; i < nsockets; i++)
        free(sockets[i].name);
    free(sockets);
}

/* /dev files: the device's own numbers, so that a renamed NVIDIA node (major 195) is still recognised. */
static void read_device_numbers(pid_t pid, struct hd_fd *fd)
{
    if (fd->fd_class != HD_FD_CLASS_DEVICE && fd->fd_class != HD_FD_CLASS_NVIDIA &&
        fd->fd_class != HD_FD_CLASS_NVIDIA_UVM && fd->fd_class != HD_FD_CLASS_DRI)
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd->fd);
    struct stat status;
    if (stat(path, &status) != 0 || !(S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode)))
        return;
    fd->device_known = true;
    fd->device_major = major(status.st_rdev);
    fd->device_minor = minor(status.st_rdev);
    if (S_ISCHR(status.st_mode) && fd->device_major == NVIDIA_CHARACTER_MAJOR && fd->fd_class != HD_FD_CLASS_NVIDIA_UVM)
        fd->fd_class = HD_FD_CLASS_NVIDIA;
    else if (S_ISCHR(status.st_mode) && fd->device_major == DRM_CHARACTER_MAJOR)
        fd->fd_class = HD_FD_CLASS_DRI;
}

void probe_classify_fds(struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        for (size_t f = 0; f < process->nfds; f++) {
            process->fds[f].fd_class = probe_fd_class_of_target(process->fds[f].target);
            read_device_numbers(process->pid, &process->fds[f]);
        }
    }
    read_unix_socket_names(snapshot);
}

/* ---- kcmp ------------------------------------------------------------------------------------------------------ */

static int kcmp_files(pid_t a, int fd_a, pid_t b, int fd_b)
{
    long result = syscall(SYS_kcmp, (long)a, (long)b, (long)KCMP_FILE, (long)fd_a, (long)fd_b);
    return result < 0 ? -errno : (int)result;
}

static void note_kcmp_refusal(struct hd_snapshot *snapshot, const struct hd_process *child, int error)
{
    if (error == -ENOSYS) {
        hd_snapshot_note(snapshot, HD_NOTE_KERNEL, child->pid, 0,
                         "inherited fds: kcmp() is not available (a kernel without CONFIG_KCMP): which fds came "
                         "from the parent is not proven");
        return;
    }
    char scope[16] = "?";
    FILE *file = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    if (file) {
        if (!fgets(scope, sizeof scope, file))
            snprintf(scope, sizeof scope, "?");
        scope[strcspn(scope, "\n")] = '\0';
        fclose(file);
    }
    hd_snapshot_note(snapshot, HD_NOTE_KERNEL, child->pid, 0,
                     "inherited fds: kcmp(KCMP_FILE) against parent %d refused (%s): it needs ptrace read access to "
                     "both processes (the same uid, Yama ptrace_scope %s allowing it, or CAP_SYS_PTRACE)",
                     (int)child->ppid, strerror(-error), scope);
}

/* Only fds whose targets read the same can be one open file: kcmp is asked about those alone. */
static int prove_process(struct hd_process *child, const struct hd_process *parent)
{
    for (size_t f = 0; f < child->nfds; f++) {
        struct hd_fd *fd = &child->fds[f];
        for (size_t g = 0; g < parent->nfds; g++) {
            const struct hd_fd *theirs = &parent->fds[g];
            if (!fd->target || !theirs->target || strcmp(fd->target, theirs->target) != 0)
                continue;
            int same = kcmp_files(child->pid, fd->fd, parent->pid, theirs->fd);
            if (same < 0 && same != -EBADF && same != -ESRCH)
                return same;
            if (same == 0) {
                fd->inherited_from = (struct hd_fd_origin){ .pid = parent->pid, .fd = theirs->fd };
                break;
            }
        }
        fd->inherited_checked = true;
    }
    return 0;
}

void probe_prove_inherited_fds(struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *child = &snapshot->processes[p];
        const struct hd_process *parent = hd_snapshot_find_process(snapshot, child->ppid);
        if (!parent || child->nfds == 0 || child->kernel_thread || child->zombie)
            continue;
        int error = prove_process(child, parent);
        if (error)
            note_kcmp_refusal(snapshot, child, error);
    }
}

/* ---- Python's multiprocessing ------------------------------------------------------------------------------------ */

/* What multiprocessing puts after `python -c` (Lib/multiprocessing/{spawn,forkserver,resource_tracker}.py) */
static const struct {
    const char *code;
    enum hd_python_role role;
} python_commands[] = {
    { "from multiprocessing.spawn import spawn_main", HD_PYTHON_ROLE_SPAWN_CHILD },
    { "from multiprocessing.forkserver import main", HD_PYTHON_ROLE_FORKSERVER },
    { "from multiprocessing.resource_tracker import main", HD_PYTHON_ROLE_RESOURCE_TRACKER },
    { "from multiprocessing.semaphore_tracker import main", HD_PYTHON_ROLE_RESOURCE_TRACKER },
};

enum hd_python_role probe_python_role_of_cmdline(char *const *argv, size_t argc)
{
    for (size_t a = 0; a + 1 < argc; a++) {
        if (strcmp(argv[a], "-c") != 0)
            continue;
        for (size_t i = 0; i < COUNT(python_commands); i++)
            if (strstr(argv[a + 1], python_commands[i].code))
                return python_commands[i].role;
        return HD_PYTHON_ROLE_NONE;
    }
    return HD_PYTHON_ROLE_NONE;
}

static bool same_command_line(const struct hd_process *a, const struct hd_process *b)
{
    if (a->argc != b->argc)
        return false;
    for (size_t i = 0; i < a->argc; i++)
        if (strcmp(a->argv[i], b->argv[i]) != 0)
            return false;
    return true;
}

/* The role a process's command line gives it, when that command line is its own. A process whose origin is
 * unknown (its AT_RANDOM unreadable, origin.h) and whose command line is its parent's may be a fork of it: the
 * command line then describes the parent. */
static enum hd_python_role role_of_own_cmdline(const struct hd_process *process, const struct hd_process *parent)
{
    if (process->origin == HD_ORIGIN_UNKNOWN && parent && same_command_line(process, parent))
        return HD_PYTHON_ROLE_NONE;
    return probe_python_role_of_cmdline(process->argv, process->argc);
}

static void refine_one(struct hd_snapshot *snapshot, struct hd_process *process)
{
    struct hd_process *parent = hd_snapshot_find_process(snapshot, process->ppid);
    if (!hd_process_is_python(process))
        return;
    /* a forked child keeps its parent's command line: what it says describes the parent, not the child */
    bool forked = process->origin == HD_ORIGIN_FORKED;
    if (forked && parent && parent->python_role == HD_PYTHON_ROLE_FORKSERVER) {
        process->origin = HD_ORIGIN_FORKSERVER;
        process->python_role = HD_PYTHON_ROLE_FORKSERVER_CHILD;
        process->python_start_method = HD_PYTHON_FORKSERVER;
    } else if (forked && parent && hd_process_is_python(parent)) {
        process->python_role = HD_PYTHON_ROLE_FORK_CHILD;
        process->python_start_method = HD_PYTHON_FORK;
    } else if (!forked) {
        process->python_role = role_of_own_cmdline(process, parent);
        if (process->python_role == HD_PYTHON_ROLE_SPAWN_CHILD) {
            process->origin = HD_ORIGIN_SPAWN;
            process->python_start_method = HD_PYTHON_SPAWN;
        } else if (process->python_role == HD_PYTHON_ROLE_FORKSERVER) {
            process->python_start_method = HD_PYTHON_FORKSERVER;
        }
    }
    if (!parent || process->python_role == HD_PYTHON_ROLE_RESOURCE_TRACKER ||
        process->python_role == HD_PYTHON_ROLE_FORKSERVER_CHILD)
        return;
    /* the parent that starts workers this way is the tree's main process */
    if (process->python_start_method != HD_PYTHON_NONE && parent->python_role == HD_PYTHON_ROLE_NONE)
        parent->python_role = HD_PYTHON_ROLE_MAIN;
    if (process->python_start_method > parent->python_start_method && parent->python_role == HD_PYTHON_ROLE_MAIN)
        parent->python_start_method = process->python_start_method;
}

void probe_refine_origins(struct hd_snapshot *snapshot)
{
    /* tree order: a parent's role is known before its children are looked at */
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        refine_one(snapshot, &snapshot->processes[p]);
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        if (snapshot->processes[p].python_start_method > snapshot->python_start_method)
            snapshot->python_start_method = snapshot->processes[p].python_start_method;
}
