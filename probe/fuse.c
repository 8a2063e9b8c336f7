/* FUSE clients, mounts, connections and daemons (fuse.h). */
#include "fuse.h"

#include "clock.h"
#include "memory.h"
#include "procfs.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MOUNTINFO_MAX (1024 * 1024)
#define FUSE_MOUNTS_MAX 64
#define PATH_ARGUMENT_MAX 4096
/* Looking outside the snapshot for a daemon reads one fd directory per process: bounded */
#define OUTSIDE_PROCESSES_MAX 65536
#define AT_FDCWD_VALUE (-100)

/* ---- where a thread is --------------------------------------------------------------------------------------- */

/* A kernel stack's frame names this place when it begins with one of these (the first match wins). */
static const struct {
    const char *function;
    enum probe_fuse_place place;
} fuse_functions[] = {
    { "fuse_dev_do_read", PROBE_FUSE_DAEMON_READ },
    { "fuse_dev_read", PROBE_FUSE_DAEMON_READ },
    { "fuse_dev_splice_read", PROBE_FUSE_DAEMON_READ },
    { "request_wait_answer", PROBE_FUSE_CALL },
    { "fuse_", PROBE_FUSE_CALL },
    { "__fuse_", PROBE_FUSE_CALL },
};

static enum probe_fuse_place place_of_function(const char *name, size_t length)
{
    for (size_t i = 0; i < COUNT(fuse_functions); i++) {
        size_t n = strlen(fuse_functions[i].function);
        if (length >= n && strncmp(name, fuse_functions[i].function, n) == 0)
            return fuse_functions[i].place;
    }
    return PROBE_FUSE_NONE;
}

enum probe_fuse_place probe_fuse_place(const char *kernel_stack, const char *wchan, bool *awaits_answer)
{
    *awaits_answer = false;
    if (!kernel_stack) {
        enum probe_fuse_place place = wchan ? place_of_function(wchan, strlen(wchan)) : PROBE_FUSE_NONE;
        *awaits_answer = place == PROBE_FUSE_CALL && strcmp(wchan, "request_wait_answer") == 0;
        return place;
    }
    /* "[<0>] request_wait_answer+0x16a/0x280" a line; the daemon's read wins over the FUSE frames above it */
    enum probe_fuse_place found = PROBE_FUSE_NONE;
    for (const char *line = kernel_stack; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        const char *name = memchr(line, ']', length);
        if (name) {
            name++;
            while (name < line + length && *name == ' ')
                name++;
            const char *plus = memchr(name, '+', (size_t)(line + length - name));
            size_t name_length = plus ? (size_t)(plus - name) : (size_t)(line + length - name);
            enum probe_fuse_place place = place_of_function(name, name_length);
            if (place == PROBE_FUSE_DAEMON_READ)
                return place;
            if (place == PROBE_FUSE_CALL) {
                found = place;
                *awaits_answer |= name_length == strlen("request_wait_answer") &&
                                  strncmp(name, "request_wait_answer", name_length) == 0;
            }
        }
        line = end ? end + 1 : line + length;
    }
    return found;
}

/* ---- mountinfo ------------------------------------------------------------------------------------------------ */

/* The next space-separated field of [*p, end) into out (unescaping \ooo); false when there is none or it is cut. */
static bool take_field(const char **p, const char *end, char *out, size_t size)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s >= end)
        return false;
    size_t n = 0;
    while (s < end && *s != ' ') {
        char c = *s++;
        if (c == '\\' && end - s >= 3 && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' &&
            s[2] <= '7') {
            c = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0'));
            s += 3;
        }
        if (n + 1 >= size)
            return false;
        out[n++] = c;
    }
    out[n] = '\0';
    *p = s;
    return true;
}

static bool is_fuse_type(const char *type)
{
    return strcmp(type, "fuse") == 0 || strcmp(type, "fuseblk") == 0 || strncmp(type, "fuse.", 5) == 0 ||
           strncmp(type, "fuseblk.", 8) == 0;
}

/* One line: "ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS". */
static bool parse_mount_line(const char *line, const char *end, struct probe_fuse_mount *mount)
{
    char field[512];
    const char *p = line;
    char *after;
    if (!take_field(&p, end, field, sizeof field))
        return false;
    long id = strtol(field, &after, 10);
    if (*after || id <= 0 || id > 1L << 30)
        return false;
    if (!take_field(&p, end, field, sizeof field) || !take_field(&p, end, field, sizeof field))
        return false;
    unsigned major, minor;
    char extra;
    if (sscanf(field, "%u:%u%c", &major, &minor, &extra) != 2)
        return false;
    if (!take_field(&p, end, field, sizeof field) ||
        !take_field(&p, end, mount->mount_point, sizeof mount->mount_point))
        return false;
    /* the options, then optional fields up to the lone "-" */
    for (;;) {
        if (!take_field(&p, end, field, sizeof field))
            return false;
        if (strcmp(field, "-") == 0)
            break;
    }
    if (!take_field(&p, end, mount->fs_type, sizeof mount->fs_type) || !is_fuse_type(mount->fs_type))
        return false;
    if (!take_field(&p, end, mount->source, sizeof mount->source))
        mount->source[0] = '\0';
    mount->mount_id = (int)id;
    mount->major = major;
    mount->minor = minor;
    return true;
}

size_t probe_fuse_parse_mounts(const char *text, struct probe_fuse_mount *mounts, size_t max)
{
    size_t count = 0;
    for (const char *line = text; line && *line && count < max;) {
        const char *end = strchr(line, '\n');
        const char *line_end = end ? end : line + strlen(line);
        if (parse_mount_line(line, line_end, &mounts[count]))
            count++;
        line = end ? end + 1 : NULL;
    }
    return count;
}

unsigned probe_fuse_connection(unsigned major, unsigned minor)
{
    return (major << 20) | (minor & 0xfffff); /* the kernel's MKDEV, which fusectl prints with %u */
}

static bool path_is_under(const char *path, const char *mount_point)
{
    size_t n = strlen(mount_point);
    if (n == 1 && mount_point[0] == '/')
        return path[0] == '/';
    return strncmp(path, mount_point, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const struct probe_fuse_mount *probe_fuse_mount_of_path(const struct probe_fuse_mount *mounts, size_t count,
                                                        const char *path)
{
    const struct probe_fuse_mount *best = NULL;
    for (size_t i = 0; path[0] == '/' && i < count; i++)
        if (path_is_under(path, mounts[i].mount_point) &&
            (!best || strlen(mounts[i].mount_point) > strlen(best->mount_point)))
            best = &mounts[i];
    return best;
}

/* ---- one process's view ---------------------------------------------------------------------------------------- */

struct mount_view {
    pid_t pid;
    struct probe_fuse_mount mounts[FUSE_MOUNTS_MAX];
    size_t count;
    bool read;
};

static void read_view(pid_t pid, struct mount_view *view)
{
    view->pid = pid;
    view->count = 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mountinfo", (int)pid);
    char *text = malloc(MOUNTINFO_MAX);
    view->read = text && probe_read_file(path, text, MOUNTINFO_MAX) >= 0;
    if (view->read)
        view->count = probe_fuse_parse_mounts(text, view->mounts, FUSE_MOUNTS_MAX);
    free(text);
}

static const struct probe_fuse_mount *mount_by_id(const struct mount_view *view, int id)
{
    for (size_t i = 0; i < view->count; i++)
        if (view->mounts[i].mount_id == id)
            return &view->mounts[i];
    return NULL;
}

/* fdinfo's "mnt_id:" of fd `number`; 0 when unreadable. */
static int mount_id_of_fd(pid_t pid, long number)
{
    char path[96], text[1024];
    snprintf(path, sizeof path, "/proc/%d/fdinfo/%ld", (int)pid, number);
    if (probe_read_file(path, text, sizeof text) < 0)
        return 0;
    const char *field = strstr(text, "mnt_id:");
    return field ? atoi(field + strlen("mnt_id:")) : 0;
}

/* readlink of /proc/<pid>/<what> into out; false when unreadable. The kernel writes it relative to hangdoc's root:
 * the process's root, when it is not hangdoc's (a chroot), is taken off the front. */
static bool link_of(pid_t pid, const char *what, char *out, size_t size)
{
    char path[96], root[PATH_ARGUMENT_MAX];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    ssize_t n = readlink(path, out, size - 1);
    if (n <= 0)
        return false;
    out[n] = '\0';
    snprintf(path, sizeof path, "/proc/%d/root", (int)pid);
    ssize_t r = readlink(path, root, sizeof root - 1);
    if (r > 1) {
        root[r] = '\0';
        size_t length = (size_t)r;
        if (strncmp(out, root, length) == 0 && (out[length] == '/' || out[length] == '\0'))
            memmove(out, out + length, strlen(out + length) + 1);
        if (!out[0])
            snprintf(out, size, "/");
    }
    return out[0] == '/';
}

/* The system calls whose fd or path argument says which file they are in: arg index of the fd, of the path, of
 * the path's directory fd (-1 for none). */
static const struct call_argument {
    const char *name;
    int fd, path, dirfd;
} call_arguments[] = {
    { "read", 0, -1, -1 },         { "write", 0, -1, -1 },         { "pread64", 0, -1, -1 },
    { "pwrite64", 0, -1, -1 },     { "readv", 0, -1, -1 },         { "writev", 0, -1, -1 },
    { "preadv", 0, -1, -1 },       { "pwritev", 0, -1, -1 },       { "preadv2", 0, -1, -1 },
    { "pwritev2", 0, -1, -1 },     { "fstat", 0, -1, -1 },         { "fsync", 0, -1, -1 },
    { "fdatasync", 0, -1, -1 },    { "ftruncate", 0, -1, -1 },     { "fallocate", 0, -1, -1 },
    { "getdents64", 0, -1, -1 },   { "getdents", 0, -1, -1 },      { "ioctl", 0, -1, -1 },
    { "lseek", 0, -1, -1 },        { "flock", 0, -1, -1 },         { "fcntl", 0, -1, -1 },
    { "fgetxattr", 0, -1, -1 },    { "fsetxattr", 0, -1, -1 },     { "flistxattr", 0, -1, -1 },
    { "fchmod", 0, -1, -1 },       { "fchown", 0, -1, -1 },        { "close", 0, -1, -1 },
    { "copy_file_range", 0, -1, -1 }, { "sendfile", 1, -1, -1 },   { "fstatfs", 0, -1, -1 },
    { "stat", -1, 0, -1 },         { "lstat", -1, 0, -1 },         { "open", -1, 0, -1 },
    { "creat", -1, 0, -1 },        { "access", -1, 0, -1 },        { "readlink", -1, 0, -1 },
    { "mkdir", -1, 0, -1 },        { "rmdir", -1, 0, -1 },         { "unlink", -1, 0, -1 },
    { "rename", -1, 0, -1 },       { "chdir", -1, 0, -1 },         { "truncate", -1, 0, -1 },
    { "chmod", -1, 0, -1 },        { "chown", -1, 0, -1 },         { "lchown", -1, 0, -1 },
    { "statfs", -1, 0, -1 },       { "getxattr", -1, 0, -1 },      { "lgetxattr", -1, 0, -1 },
    { "listxattr", -1, 0, -1 },    { "llistxattr", -1, 0, -1 },    { "setxattr", -1, 0, -1 },
    { "execve", -1, 0, -1 },       { "mknod", -1, 0, -1 },         { "link", -1, 0, -1 },
    { "openat", -1, 1, 0 },        { "openat2", -1, 1, 0 },        { "newfstatat", -1, 1, 0 },
    { "statx", -1, 1, 0 },         { "faccessat", -1, 1, 0 },      { "faccessat2", -1, 1, 0 },
    { "readlinkat", -1, 1, 0 },    { "mkdirat", -1, 1, 0 },        { "unlinkat", -1, 1, 0 },
    { "renameat", -1, 1, 0 },      { "renameat2", -1, 1, 0 },      { "fchmodat", -1, 1, 0 },
    { "fchownat", -1, 1, 0 },      { "utimensat", -1, 1, 0 },      { "mknodat", -1, 1, 0 },
    { "execveat", -1, 1, 0 },      { "linkat", -1, 1, 0 },         { "name_to_handle_at", -1, 1, 0 },
};

static const struct call_argument *argument_of(const char *name)
{
    for (size_t i = 0; name && i < COUNT(call_arguments); i++)
        if (strcmp(call_arguments[i].name, name) == 0)
            return &call_arguments[i];
    return NULL;
}

/* The absolute path a path argument names, into out: the string read from the thread's memory (bounded), joined to
 * its cwd or its directory fd; "." and ".." are not folded (a lexical match is all that is needed). False when it
 * cannot be read or is empty (AT_EMPTY_PATH: the fd itself, which the caller tries). */
static bool path_argument(pid_t pid, const struct hd_syscall *call, const struct call_argument *argument, char *out,
                          size_t size)
{
    char name[PATH_ARGUMENT_MAX];
    if (!probe_read_memory(pid, call->args[argument->path], name, sizeof name - 1)) {
        /* the string may end near the end of its mapping: read less */
        if (!probe_read_memory(pid, call->args[argument->path], name, 256))
            return false;
        name[256] = '\0';
    }
    name[sizeof name - 1] = '\0';
    if (!name[0])
        return false;
    if (name[0] == '/') {
        snprintf(out, size, "%s", name);
        return true;
    }
    char base[PATH_ARGUMENT_MAX];
    long dirfd = argument->dirfd >= 0 ? (long)(int)call->args[argument->dirfd] : AT_FDCWD_VALUE;
    char what[32];
    if (dirfd == AT_FDCWD_VALUE)
        snprintf(what, sizeof what, "cwd");
    else
        snprintf(what, sizeof what, "fd/%ld", dirfd);
    if (!link_of(pid, what, base, sizeof base))
        return false;
    int n = snprintf(out, size, "%s%s%s", base, strcmp(base, "/") == 0 ? "" : "/", name);
    return n > 0 && (size_t)n < size;
}

/* The mount of thread's FUSE call, among its process's FUSE mounts; how it was told into *found_by. */
static const struct probe_fuse_mount *mount_of_call(pid_t pid, const struct hd_thread *thread,
                                                    const struct mount_view *view, const char **found_by)
{
    const struct hd_syscall *call = &thread->syscall;
    const struct call_argument *argument = call->state == HD_SYSCALL_IN ? argument_of(call->name) : NULL;
    if (argument && argument->fd >= 0) {
        const struct probe_fuse_mount *mount = mount_by_id(view, mount_id_of_fd(pid, (long)(int)call->args[argument->fd]));
        if (mount) {
            *found_by = "the file it works on (its fd)";
            return mount;
        }
    }
    if (argument && argument->path >= 0) {
        char path[PATH_ARGUMENT_MAX * 2];
        if (path_argument(pid, call, argument, path, sizeof path)) {
            const struct probe_fuse_mount *mount = probe_fuse_mount_of_path(view->mounts, view->count, path);
            if (mount) {
                *found_by = "the path it names";
                return mount;
            }
        }
        if (argument->dirfd >= 0) {
            const struct probe_fuse_mount *mount = mount_by_id(view, mount_id_of_fd(pid, (long)(int)call->args[argument->dirfd]));
            if (mount) {
                *found_by = "the directory it works in (its fd)";
                return mount;
            }
        }
    }
    if (view->count == 1) {
        *found_by = "the only FUSE mount its process sees";
        return &view->mounts[0];
    }
    return NULL;
}

/* fusectl's count of a connection's requests not yet answered; -1 when unreadable (*why: errno). */
static int read_waiting(unsigned connection, int *why)
{
    char path[96], text[32];
    snprintf(path, sizeof path, "/sys/fs/fuse/connections/%u/waiting", connection);
    ssize_t n = probe_read_file(path, text, sizeof text);
    if (n < 0) {
        *why = (int)-n;
        return -1;
    }
    return atoi(text);
}

/* ---- daemons ---------------------------------------------------------------------------------------------------- */

struct daemon {
    pid_t pid;
    pid_t ppid;
    double start_time_s;
    char comm[HD_COMM_MAX];
    char *cmdline;       /* arguments joined by spaces (owned) */
    bool reads_dev_fuse; /* a thread of it in fuse_dev_do_read: it serves requests */
    struct mount_view *view;
};

struct daemons {
    struct daemon *list;
    size_t count;
    bool outside_looked;
};

static bool holds_dev_fuse_fds(const struct hd_process *process)
{
    for (size_t f = 0; f < process->nfds; f++)
        if (process->fds[f].target && strcmp(process->fds[f].target, "/dev/fuse") == 0)
            return true;
    return false;
}

static bool add_daemon(struct daemons *daemons, const struct daemon *daemon)
{
    struct daemon *grown = realloc(daemons->list, (daemons->count + 1) * sizeof *grown);
    if (!grown)
        return false;
    daemons->list = grown;
    daemons->list[daemons->count++] = *daemon;
    return true;
}

static char *joined_arguments(char *const *argv, size_t argc)
{
    size_t length = 1;
    for (size_t i = 0; i < argc; i++)
        length += strlen(argv[i]) + 1;
    char *joined = malloc(length);
    if (!joined)
        return NULL;
    joined[0] = '\0';
    for (size_t i = 0; i < argc; i++) {
        if (i)
            strcat(joined, " ");
        strcat(joined, argv[i]);
    }
    return joined;
}

static bool snapshot_daemons(const struct hd_snapshot *snapshot, struct daemons *daemons)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        if (!holds_dev_fuse_fds(process))
            continue;
        struct daemon daemon = { .pid = process->pid, .ppid = process->ppid, .start_time_s = process->start_time_s };
        snprintf(daemon.comm, sizeof daemon.comm, "%s", process->comm);
        daemon.cmdline = joined_arguments(process->argv, process->argc);
        for (size_t t = 0; t < process->nthreads; t++) {
            bool awaits;
            daemon.reads_dev_fuse |= probe_fuse_place(process->threads[t].kernel_stack, process->threads[t].wchan,
                                                      &awaits) == PROBE_FUSE_DAEMON_READ;
        }
        if (!daemon.cmdline || !add_daemon(daemons, &daemon)) {
            free(daemon.cmdline);
            return false;
        }
    }
    return true;
}

static bool pid_fd_is_dev_fuse(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *directory = opendir(path);
    if (!directory)
        return false;
    bool found = false;
    for (struct dirent *entry; !found && (entry = readdir(directory));) {
        char link[320], target[32];
        if (entry->d_name[0] == '.')
            continue;
        snprintf(link, sizeof link, "/proc/%d/fd/%s", (int)pid, entry->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        found = n == 9 && memcmp(target, "/dev/fuse", 9) == 0;
    }
    closedir(directory);
    return found;
}

/* A process outside the snapshot that holds /dev/fuse, as a candidate. */
static bool add_outside_candidate(struct daemons *daemons, pid_t pid)
{
    struct daemon daemon = { .pid = pid, .ppid = probe_parent_of(pid) };
    probe_read_comm(pid, daemon.comm, sizeof daemon.comm);
    char path[64], bytes[1024];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    ssize_t n = probe_read_file(path, bytes, sizeof bytes);
    for (ssize_t i = 0; i + 1 < n; i++)
        if (bytes[i] == '\0')
            bytes[i] = ' ';
    daemon.cmdline = strdup(n > 0 ? bytes : "");
    if (daemon.cmdline && add_daemon(daemons, &daemon))
        return true;
    free(daemon.cmdline);
    return false;
}

static bool is_candidate(const struct daemons *daemons, pid_t pid)
{
    for (size_t i = 0; i < daemons->count; i++)
        if (daemons->list[i].pid == pid)
            return true;
    return false;
}

/* Processes outside the snapshot that hold /dev/fuse: a daemon the user started apart from the hung tree. */
static bool outside_daemons(const struct hd_snapshot *snapshot, struct daemons *daemons, double deadline)
{
    daemons->outside_looked = true;
    DIR *proc = opendir("/proc");
    if (!proc)
        return true;
    size_t looked = 0;
    bool ok = true;
    for (struct dirent *entry; ok && (entry = readdir(proc)) && looked < OUTSIDE_PROCESSES_MAX;) {
        if (!isdigit((unsigned char)entry->d_name[0]))
            continue;
        pid_t pid = (pid_t)atoi(entry->d_name);
        if (pid == getpid() || hd_snapshot_find_process(snapshot, pid))
            continue;
        if ((++looked & 255) == 0 && deadline > 0 && probe_monotonic_now() > deadline)
            break;
        if (pid_fd_is_dev_fuse(pid) && !is_candidate(daemons, pid))
            ok = add_outside_candidate(daemons, pid);
    }
    closedir(proc);
    return ok;
}

static void release_daemons(struct daemons *daemons)
{
    for (size_t i = 0; i < daemons->count; i++) {
        free(daemons->list[i].cmdline);
        free(daemons->list[i].view);
    }
    free(daemons->list);
    *daemons = (struct daemons){ 0 };
}

/* How well a candidate that sees the mount is named by it: its command line holds the mount point (sshfs, rclone
 * and libfuse's own examples take it as an argument), its name is the mount's subtype or source. */
static int naming_score(const struct daemon *daemon, const struct probe_fuse_mount *seen)
{
    int score = 0;
    const char *subtype = strchr(seen->fs_type, '.');
    if (daemon->cmdline && seen->mount_point[0] && strstr(daemon->cmdline, seen->mount_point))
        score += 4;
    if ((subtype && strcmp(subtype + 1, daemon->comm) == 0) || strcmp(seen->source, daemon->comm) == 0)
        score += 4;
    if (daemon->reads_dev_fuse)
        score += 2;
    return score;
}

/* The daemon of mount id `mount_id` among the candidates that see it: the one the mount names best; of equals, the
 * one the others were forked from (a client forked from its daemon holds /dev/fuse too). NULL, and *possible
 * (how many see the mount), when it cannot be told. */
static const struct daemon *daemon_of_mount(struct daemons *daemons, int mount_id, const char **found_by,
                                            int *possible)
{
    int best_score = -1, seeing = 0;
    int *scores = calloc(daemons->count ? daemons->count : 1, sizeof *scores);
    if (!scores)
        return NULL;
    for (size_t i = 0; i < daemons->count; i++) {
        struct daemon *daemon = &daemons->list[i];
        scores[i] = -1;
        if (!daemon->view && (daemon->view = malloc(sizeof *daemon->view)))
            read_view(daemon->pid, daemon->view);
        const struct probe_fuse_mount *seen = daemon->view ? mount_by_id(daemon->view, mount_id) : NULL;
        if (!seen)
            continue;
        seeing++;
        scores[i] = naming_score(daemon, seen);
        if (scores[i] > best_score)
            best_score = scores[i];
    }
    const struct daemon *best = NULL;
    int at_best = 0;
    for (size_t i = 0; i < daemons->count; i++) {
        if (scores[i] != best_score || best_score < 0)
            continue;
        bool forked_from_an_equal = false;
        for (size_t j = 0; j < daemons->count; j++)
            forked_from_an_equal |= j != i && scores[j] == best_score && daemons->list[i].ppid == daemons->list[j].pid;
        if (forked_from_an_equal)
            continue;
        best = &daemons->list[i];
        at_best++;
    }
    free(scores);
    *possible = seeing;
    if (!best || at_best > 1)
        return NULL;
    *found_by = seeing == 1 ? "the only process holding /dev/fuse that sees the mount"
              : best_score >= 4 ? "the process holding /dev/fuse that the mount names (its command line or name)"
              : best_score >= 2 ? "the process holding /dev/fuse with a thread reading it"
                                : "the process holding /dev/fuse that the others holding it were forked from";
    return best;
}

/* A daemon of the snapshot with a request waiting on a FUSE mount it sees. */
static void mark_pending(struct hd_snapshot *snapshot, struct daemons *daemons)
{
    for (size_t i = 0; i < daemons->count; i++) {
        struct hd_process *process = hd_snapshot_find_process(snapshot, daemons->list[i].pid);
        struct daemon *daemon = &daemons->list[i];
        if (!process)
            continue;
        if (!daemon->view && (daemon->view = malloc(sizeof *daemon->view)))
            read_view(daemon->pid, daemon->view);
        for (size_t m = 0; daemon->view && m < daemon->view->count; m++) {
            int why = 0;
            const struct probe_fuse_mount *mount = &daemon->view->mounts[m];
            process->fuse_requests_pending |= read_waiting(probe_fuse_connection(mount->major, mount->minor), &why) > 0;
        }
    }
}

/* ---- the snapshot ----------------------------------------------------------------------------------------------- */

static bool set_string(char **field, const char *value)
{
    free(*field);
    *field = value[0] ? strdup(value) : NULL;
    return !value[0] || *field;
}

static bool find_calls(struct hd_snapshot *snapshot, bool *any)
{
    bool ok = true;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        struct mount_view *view = NULL;
        for (size_t t = 0; t < process->nthreads; t++) {
            struct hd_thread *thread = &process->threads[t];
            thread->fuse = (struct hd_fuse_call){ .waiting = -1, .in_call = false };
            if (thread->state != 'S' && thread->state != 'D')
                continue;
            bool awaits;
            enum probe_fuse_place place = probe_fuse_place(thread->kernel_stack, thread->wchan, &awaits);
            thread->fuse.reads_requests = place == PROBE_FUSE_DAEMON_READ;
            if (place != PROBE_FUSE_CALL)
                continue;
            thread->fuse.in_call = true;
            thread->fuse.awaits_answer = awaits;
            *any = true;
            if (!view && (view = calloc(1, sizeof *view)))
                read_view(process->pid, view);
            if (!view) {
                ok = false;
                continue;
            }
            const char *found_by = NULL;
            const struct probe_fuse_mount *mount = mount_of_call(process->pid, thread, view, &found_by);
            if (!mount) {
                hd_snapshot_note(snapshot, HD_NOTE_PROCFS, process->pid, thread->tid,
                                 "thread %d is in a FUSE call whose mount could not be told (%s)", (int)thread->tid,
                                 !view->read ? "its mountinfo is unreadable" : view->count == 0
                                     ? "its mountinfo shows no FUSE mount: gone meanwhile?"
                                     : "neither its fd nor its path names one of its FUSE mounts");
                continue;
            }
            thread->fuse.mount_id = mount->mount_id;
            thread->fuse.connection = probe_fuse_connection(mount->major, mount->minor);
            thread->fuse.found_by = found_by;
            ok &= set_string(&thread->fuse.mount_point, mount->mount_point) &&
                  set_string(&thread->fuse.fs_type, mount->fs_type) && set_string(&thread->fuse.source, mount->source);
        }
        free(view);
    }
    return ok;
}

bool probe_read_fuse(struct hd_snapshot *snapshot, double deadline)
{
    bool any_call = false;
    bool ok = find_calls(snapshot, &any_call);
    struct daemons daemons = { 0 };
    ok &= snapshot_daemons(snapshot, &daemons);
    for (size_t i = 0; i < daemons.count; i++) {
        struct hd_process *process = hd_snapshot_find_process(snapshot, daemons.list[i].pid);
        if (process)
            process->fuse_daemon = true;
    }
    if (!any_call && daemons.count == 0) {
        release_daemons(&daemons);
        return ok;
    }
    int fusectl_error = 0;
    bool noted_fusectl = false;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        for (size_t t = 0; t < process->nthreads; t++) {
            struct hd_fuse_call *call = &process->threads[t].fuse;
            if (!call->in_call || !call->mount_id)
                continue;
            call->waiting = read_waiting(call->connection, &fusectl_error);
            if (call->waiting < 0 && !noted_fusectl) {
                noted_fusectl = true;
                hd_snapshot_note(snapshot, HD_NOTE_KERNEL, process->pid, process->threads[t].tid,
                                 "FUSE connection %u: /sys/fs/fuse/connections/%u/waiting unreadable (%s%s): how many "
                                 "requests wait for the daemon is not known",
                                 call->connection, call->connection, strerror(fusectl_error),
                                 fusectl_error == ENOENT ? "; fusectl is not mounted there, or the mount is gone" : "");
            }
            const char *found_by = NULL;
            int possible = 0;
            const struct daemon *daemon = daemon_of_mount(&daemons, call->mount_id, &found_by, &possible);
            if (!daemon && !daemons.outside_looked) {
                ok &= outside_daemons(snapshot, &daemons, deadline);
                daemon = daemon_of_mount(&daemons, call->mount_id, &found_by, &possible);
            }
            /* a client forked from its daemon holds /dev/fuse too: when the one chosen was forked from a holder
             * outside the snapshot (hangdoc run on the client alone), that parent is a candidate as well */
            for (int depth = 0; daemon && depth < 4; depth++) {
                pid_t parent = daemon->ppid;
                if (parent <= 1 || is_candidate(&daemons, parent) || !pid_fd_is_dev_fuse(parent))
                    break;
                if (!add_outside_candidate(&daemons, parent)) {
                    ok = false;
                    break;
                }
                daemon = daemon_of_mount(&daemons, call->mount_id, &found_by, &possible);
            }
            call->daemons_possible = possible;
            if (daemon) {
                call->daemon_pid = daemon->pid;
                call->daemon_found_by = found_by;
                snprintf(call->daemon_comm, sizeof call->daemon_comm, "%s", daemon->comm);
            } else {
                hd_snapshot_note(snapshot, HD_NOTE_PROCFS, process->pid, process->threads[t].tid,
                                 "FUSE mount %s: %s", call->mount_point ? call->mount_point : "?",
                                 possible ? "several processes holding /dev/fuse see it, and none is named by it: "
                                            "its daemon could not be told"
                                          : "no process holding /dev/fuse sees it: its daemon could not be found");
            }
        }
    }
    mark_pending(snapshot, &daemons);
    release_daemons(&daemons);
    return ok;
}

const char *probe_fuse_why_not_stopped(const struct hd_process *process)
{
    for (size_t t = 0; t < process->nthreads; t++)
        if (process->threads[t].fuse.in_call)
            return "a thread of it is in a FUSE call: a stop would interrupt the request, and the kernel would then "
                   "hold it in D until the daemon answers";
    if (process->fuse_daemon && process->fuse_requests_pending)
        return "a FUSE daemon with requests waiting: stopping it would hold up every process waiting for its mount";
    return NULL;
}
