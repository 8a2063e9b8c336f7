/* Inheritance forensics (inherit.h). */
#include "inherit.h"

#include "fds.h"
#include "util.h"

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

/* include/uapi/linux/major.h has no name for it: the NVIDIA driver registers character major 195 */
#define NVIDIA_CHARACTER_MAJOR 195
#define DRM_CHARACTER_MAJOR 226

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

/* A unix socket gets the class of its name, or, unnamed (a client's end), of its peer's: the accepted socket of a
 * server has the server's name, so a client of /tmp/.X11-unix/X0 is an X11 connection too. */
static void name_unix_socket(struct hd_fd *fd, const struct probe_unix_socket_table *unix_sockets)
{
    const struct probe_unix_socket *own =
        fd->kind == HD_FD_SOCKET ? probe_unix_socket_find(unix_sockets, fd->inode) : NULL;
    if (!own)
        return; /* not a unix socket (TCP, UDP, netlink), or one of another network namespace */
    const struct probe_unix_socket *peer = own->name ? NULL : probe_unix_socket_find(unix_sockets, own->peer_inode);
    const char *name = own->name ? own->name : peer ? peer->name : NULL;
    fd->fd_class = name ? probe_unix_socket_class(name) : HD_FD_CLASS_UNIX_SOCKET;
    if (name && !fd->socket_name)
        fd->socket_name = strdup(name);
}

/* The inode of the network namespace of `pid` (0: hangdoc's own), 0 when it cannot be told: /proc/<pid>/ns needs
 * ptrace read access to the process. */
static uint64_t network_namespace_of(pid_t pid)
{
    char path[64];
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
    else
        snprintf(path, sizeof path, "/proc/self/ns/net");
    struct stat status;
    return stat(path, &status) == 0 ? (uint64_t)status.st_ino : 0;
}

static bool has_sockets(const struct hd_process *process)
{
    for (size_t f = 0; f < process->nfds; f++)
        if (process->fds[f].kind == HD_FD_SOCKET)
            return true;
    return false;
}

/* sock_diag answers for the network namespace of the socket that asks, hangdoc's (net/core/sock_diag.c, by
 * sock_net()): the unix sockets of a process in another one are not in the table. One note for them all. */
static void note_other_network_namespaces(struct hd_snapshot *snapshot)
{
    uint64_t own = network_namespace_of(0), first_namespace = 0;
    pid_t first = 0;
    size_t count = 0;
    for (size_t p = 0; own && p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        if (process->kernel_thread || !has_sockets(process))
            continue;
        uint64_t theirs = network_namespace_of(process->pid);
        if (!theirs || theirs == own)
            continue;
        if (count++ == 0) {
            first = process->pid;
            first_namespace = theirs;
        }
    }
    if (count)
        hd_snapshot_note(snapshot, HD_NOTE_SOCKETS, first, 0,
                         "unix sockets: %zu process%s in another network namespace than hangdoc's (process %d in "
                         "net:[%llu]): sock_diag lists hangdoc's alone, so the names and peers of their unix sockets "
                         "are unknown (nsenter --target %d --net runs hangdoc in that one)",
                         count, count == 1 ? "" : "es", (int)first, (unsigned long long)first_namespace, (int)first);
}

void probe_classify_fds(struct hd_snapshot *snapshot, const struct probe_unix_socket_table *unix_sockets)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        for (size_t f = 0; f < process->nfds; f++) {
            struct hd_fd *fd = &process->fds[f];
            fd->fd_class = probe_fd_class_of_target(fd->target);
            read_device_numbers(process->pid, fd);
            name_unix_socket(fd, unix_sockets);
        }
    }
    note_other_network_namespaces(snapshot);
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
