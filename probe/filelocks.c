/* File locks and their holders (filelocks.h). */
#include "filelocks.h"

#include "procfs.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define LOCKS_READ_MAX (1u << 20) /* a machine with more locks than 1 MiB of lines gets the first ones */

struct file_lock {
    const char *type; /* static: "flock", "posix", "ofd" */
    pid_t pid;
    unsigned major, minor;
    uint64_t inode;
};

/* One line of /proc/locks: "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF". Blocked waiters ("1: -> FLOCK ...")
 * and locks without an owning process are not holders. */
static bool parse_lock(const char *line, struct file_lock *out)
{
    char kind[16], mode[16], access[16];
    int pid;
    unsigned major, minor;
    uint64_t inode;
    const char *colon = strchr(line, ':');
    if (!colon || strncmp(colon + 1, " ->", 3) == 0 || strstr(line, "->"))
        return false;
    if (sscanf(colon + 1, " %15s %15s %15s %d %x:%x:%" SCNu64, kind, mode, access, &pid, &major, &minor, &inode) !=
        7 || pid <= 0)
        return false;
    static const struct {
        const char *name, *type;
    } kinds[] = { { "FLOCK", "flock" }, { "POSIX", "posix" }, { "OFDLCK", "ofd" } };
    for (size_t k = 0; k < COUNT(kinds); k++)
        if (strcmp(kind, kinds[k].name) == 0) {
            *out = (struct file_lock){ kinds[k].type, (pid_t)pid, major, minor, inode };
            return true;
        }
    return false;
}

static bool any_file_lock_wait(const struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        for (size_t t = 0; t < snapshot->processes[p].nthreads; t++) {
            const struct hd_thread *thread = &snapshot->processes[p].threads[t];
            if (thread->syscall.state == HD_SYSCALL_IN && thread->wait.kind == HD_WAIT_LOCK && thread->wait.fd >= 0)
                return true;
        }
    return false;
}

/* The holder of a lock on the file of fd `fd` of `process` other than the waiter's own process, or else its own
 * (two open files of one file in one process: it waits for itself); 0 when none is listed. */
static const struct file_lock *holder_of(const struct file_lock *locks, size_t count, const struct hd_process *process,
                                         int fd)
{
    char path[64];
    struct stat status;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)process->pid, fd);
    if (stat(path, &status) != 0)
        return NULL;
    const struct file_lock *own = NULL;
    for (size_t i = 0; i < count; i++) {
        const struct file_lock *lock = &locks[i];
        if (lock->inode != (uint64_t)status.st_ino || lock->major != major(status.st_dev) ||
            lock->minor != minor(status.st_dev))
            continue;
        if (lock->pid != process->pid)
            return lock;
        own = lock;
    }
    return own;
}

void probe_resolve_file_locks(struct hd_snapshot *snapshot)
{
    if (!any_file_lock_wait(snapshot))
        return;
    char *text = malloc(LOCKS_READ_MAX);
    ssize_t length = text ? probe_read_file("/proc/locks", text, LOCKS_READ_MAX) : -1;
    struct file_lock *locks = NULL;
    size_t count = 0, capacity = 0;
    for (char *line = length > 0 ? text : NULL, *end; line && *line; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        if (end)
            *end = '\0';
        struct file_lock lock;
        if (!parse_lock(line, &lock))
            continue;
        struct file_lock *grown = hd_grow(locks, &capacity, count, sizeof *grown);
        if (!grown)
            break;
        locks = grown;
        locks[count++] = lock;
    }
    for (size_t p = 0; p < snapshot->nprocesses && count; p++) {
        struct hd_process *process = &snapshot->processes[p];
        for (size_t t = 0; t < process->nthreads; t++) {
            struct hd_wait *wait = &process->threads[t].wait;
            if (process->threads[t].syscall.state != HD_SYSCALL_IN || wait->kind != HD_WAIT_LOCK || wait->fd < 0)
                continue;
            const struct file_lock *holder = holder_of(locks, count, process, wait->fd);
            if (holder)
                wait->lock = (struct hd_lock){ .kind = HD_LOCK_FILE, .type = holder->type, .owner_tid = holder->pid,
                                               .owner_pid = holder->pid, .owner_whereabouts = HD_OWNER_UNKNOWN };
        }
    }
    free(locks);
    free(text);
}
