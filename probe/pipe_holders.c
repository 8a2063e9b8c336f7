/* Who else holds the pipes that threads of the snapshot read (pipe_holders.h). */
#include "pipe_holders.h"

#include "clock.h"
#include "fds.h"
#include "procfs.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Pipes sought at once, holders kept, and how much of the system is searched: a busy host has thousands of
 * processes of tens of fds each, which a readlink apiece reads in tens of milliseconds. */
#define PIPES_SOUGHT_MAX 64
#define HOLDERS_MAX 64
#define PROCESSES_SEARCHED_MAX 65536
#define FDS_SEARCHED_MAX 4096
#define ANCESTORS_MAX 64
#define SEARCH_BUDGET_S 1.0
/* What is left of the deadline for the report after the search */
#define DEADLINE_MARGIN_S 0.5

HD_DEFINE_CLEANUP(DIR, closedir)

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The pipes the snapshot's processes can write to (a write end, one opened both ways, one of unknown mode), sorted;
 * NULL with *complete false when a process's fds were not all read (an unseen write end may be in the tree). */
static uint64_t *writable_in_snapshot(const struct hd_snapshot *snapshot, size_t *count, bool *complete)
{
    size_t total = 0;
    *count = 0;
    *complete = true;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        *complete &= process->fds_complete || process->zombie || process->kernel_thread;
        total += process->nfds;
    }
    uint64_t *inodes = malloc((total + 1) * sizeof *inodes);
    for (size_t p = 0; inodes && p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        for (size_t f = 0; f < process->nfds; f++)
            if (process->fds[f].kind == HD_FD_PIPE && process->fds[f].access_mode != O_RDONLY)
                inodes[(*count)++] = process->fds[f].inode;
    }
    if (inodes)
        qsort(inodes, *count, sizeof *inodes, compare_u64);
    return inodes;
}

/* The pipes read by threads of the snapshot (a read, or a poll or select among whose fds they are) that no process
 * of the snapshot can write to; sorted, at most PIPES_SOUGHT_MAX. */
static size_t pipes_sought(const struct hd_snapshot *snapshot, const uint64_t *writable, size_t nwritable,
                           uint64_t *inodes)
{
    size_t count = 0;
    for (size_t p = 0; p < snapshot->nprocesses && count < PIPES_SOUGHT_MAX; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        for (size_t t = 0; t < process->nthreads && count < PIPES_SOUGHT_MAX; t++) {
            const struct hd_wait *wait = &process->threads[t].wait;
            if (process->threads[t].syscall.state != HD_SYSCALL_IN ||
                (wait->kind != HD_WAIT_READ && wait->kind != HD_WAIT_POLL))
                continue;
            for (unsigned i = 0; i < wait->nfds_known && count < PIPES_SOUGHT_MAX; i++) {
                const struct hd_fd *fd = hd_process_find_fd(process, wait->fds[i]);
                if (!fd || fd->kind != HD_FD_PIPE || fd->access_mode == O_WRONLY ||
                    bsearch(&fd->inode, writable, nwritable, sizeof *writable, compare_u64))
                    continue;
                bool known = false;
                for (size_t k = 0; k < count && !known; k++)
                    known = inodes[k] == fd->inode;
                if (!known)
                    inodes[count++] = fd->inode;
            }
        }
    }
    qsort(inodes, count, sizeof *inodes, compare_u64);
    return count;
}

struct search {
    const uint64_t *inodes;
    size_t ninodes;
    pid_t ancestors[ANCESTORS_MAX]; /* of the tree's roots, above them */
    size_t nancestors;
    struct hd_pipe_holder *holders;
    size_t nholders;
    long ticks_per_second;
    double stop; /* CLOCK_MONOTONIC seconds */
    bool incomplete; /* a process's fds unread, cut at a limit, or the search cut short: a holder may be missing */
    bool cut;        /* by time or the limit of processes */
};

static void read_parent_name(struct hd_pipe_holder *holder)
{
    char path[64], text[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)holder->ppid);
    ssize_t read = holder->ppid > 0 ? probe_read_file(path, text, sizeof text) : -1;
    if (read <= 0)
        return;
    size_t copied = (size_t)read < sizeof holder->parent_comm ? (size_t)read : sizeof holder->parent_comm - 1;
    memcpy(holder->parent_comm, text, copied);
    holder->parent_comm[copied] = '\0';
    holder->parent_comm[strcspn(holder->parent_comm, "\n")] = '\0';
}

/* One fd of process `pid` that is a write end of a pipe sought: kept, with what its process is. */
static void consider_fd(struct search *s, pid_t pid, int dir_fd, const char *name)
{
    char target[64];
    ssize_t length = readlinkat(dir_fd, name, target, sizeof target - 1);
    if (length <= 0)
        return;
    target[length] = '\0';
    enum hd_fd_kind kind;
    uint64_t inode;
    probe_classify_fd_target(target, &kind, &inode);
    if (kind != HD_FD_PIPE || !bsearch(&inode, s->inodes, s->ninodes, sizeof inode, compare_u64))
        return;
    char path[sizeof "/proc//fdinfo/" + 12 + sizeof ((struct dirent *)0)->d_name], text[1024];
    snprintf(path, sizeof path, "/proc/%d/fdinfo/%s", (int)pid, name);
    ssize_t read = probe_read_file(path, text, sizeof text);
    if (read <= 0 || probe_parse_fdinfo_access_mode(text, (size_t)read) == O_RDONLY)
        return; /* closed meanwhile, or another reader */
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    struct probe_stat stat;
    read = probe_read_file(path, text, sizeof text);
    if (read <= 0 || !probe_parse_stat(text, (size_t)read, &stat))
        return; /* gone meanwhile */
    if (s->nholders == HOLDERS_MAX) {
        s->incomplete = true;
        return;
    }
    struct hd_pipe_holder *holder = &s->holders[s->nholders++];
    *holder = (struct hd_pipe_holder){ .inode = inode, .pid = pid, .ppid = stat.ppid, .fd = atoi(name) };
    holder->session = stat.has_group ? stat.session : 0;
    for (size_t a = 0; a < s->nancestors && !holder->parent_above_tree; a++)
        holder->parent_above_tree = s->ancestors[a] == stat.ppid;
    memcpy(holder->comm, stat.comm, sizeof holder->comm);
    if (stat.has_start && s->ticks_per_second > 0)
        holder->start_time_s = (double)stat.start_ticks / (double)s->ticks_per_second;
    read_parent_name(holder);
}

static bool out_of_time(struct search *s)
{
    if (probe_monotonic_now() <= s->stop)
        return false;
    s->cut = s->incomplete = true;
    return true;
}

static void search_process(struct search *s, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    int dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *fds = dir_fd >= 0 ? fdopendir(dir_fd) : NULL;
    if (!fds) {
        /* gone meanwhile is no loss; another user's fds, unread, may hold the pipe */
        s->incomplete |= errno != ENOENT && errno != ESRCH;
        if (dir_fd >= 0)
            close(dir_fd);
        return;
    }
    struct dirent *entry;
    size_t n = 0;
    while ((entry = readdir(fds))) {
        if (++n > FDS_SEARCHED_MAX || ((n & 255) == 0 && out_of_time(s))) {
            s->incomplete = true;
            break;
        }
        if (entry->d_name[0] != '.')
            consider_fd(s, pid, dirfd(fds), entry->d_name);
    }
    closedir(fds);
}

/* The processes above the tree's roots, up to init: where a subreaper that adopts orphans of the tree lives. */
static void read_ancestors(struct search *s, const struct hd_snapshot *snapshot)
{
    for (size_t r = 0; r < snapshot->nroots; r++) {
        const struct hd_process *root = hd_snapshot_find_process(snapshot, snapshot->roots[r]);
        pid_t pid = root ? root->ppid : 0;
        while (pid > 1 && s->nancestors < ANCESTORS_MAX) {
            s->ancestors[s->nancestors++] = pid;
            char path[64], text[1024];
            snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
            struct probe_stat stat;
            ssize_t read = probe_read_file(path, text, sizeof text);
            if (read <= 0 || !probe_parse_stat(text, (size_t)read, &stat))
                break;
            pid = stat.ppid;
        }
    }
}

static int compare_holders(const void *a, const void *b)
{
    const struct hd_pipe_holder *x = a, *y = b;
    if (x->inode != y->inode)
        return x->inode < y->inode ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

bool probe_find_outside_pipe_holders(struct hd_snapshot *snapshot, double deadline)
{
    size_t nwritable;
    bool tree_complete;
    uint64_t *writable = writable_in_snapshot(snapshot, &nwritable, &tree_complete);
    if (!writable)
        return false;
    uint64_t inodes[PIPES_SOUGHT_MAX];
    /* where a process of the tree has fds unread, its write end of the pipe may be among them: nothing is sought */
    struct search s = { .inodes = inodes, .ninodes = tree_complete ? pipes_sought(snapshot, writable, nwritable, inodes)
                                                                   : 0 };
    free(writable);
    if (s.ninodes == 0)
        return true;
    s.holders = calloc(HOLDERS_MAX, sizeof *s.holders);
    DIR *proc hd_cleanup(closedir) = opendir("/proc");
    if (!s.holders || !proc) {
        bool memory = s.holders != NULL;
        free(s.holders);
        return memory; /* no /proc to search is no failure */
    }
    s.ticks_per_second = sysconf(_SC_CLK_TCK);
    read_ancestors(&s, snapshot);
    double started = probe_monotonic_now();
    s.stop = started + SEARCH_BUDGET_S;
    if (deadline > 0 && deadline - DEADLINE_MARGIN_S < s.stop)
        s.stop = deadline - DEADLINE_MARGIN_S;
    pid_t self = getpid();
    struct dirent *entry;
    size_t searched = 0;
    while (!s.cut && (entry = readdir(proc))) {
        char *end;
        long pid = strtol(entry->d_name, &end, 10);
        if (*end != '\0' || pid <= 0 || pid == self || hd_snapshot_find_process(snapshot, (pid_t)pid))
            continue;
        if (++searched > PROCESSES_SEARCHED_MAX) {
            s.cut = s.incomplete = true;
            break;
        }
        if (!out_of_time(&s))
            search_process(&s, (pid_t)pid);
    }
    if (s.cut)
        hd_snapshot_note(snapshot, HD_NOTE_DEADLINE, 0, 0,
                         "the search of the system for the write ends of %zu pipes that threads read stopped after "
                         "%.1f s and %zu processes: a holder may have been missed",
                         s.ninodes, probe_monotonic_now() - started, searched);
    qsort(s.holders, s.nholders, sizeof *s.holders, compare_holders);
    snapshot->outside_pipe_holders = s.holders;
    snapshot->noutside_pipe_holders = s.nholders;
    snapshot->outside_pipe_holders_complete = !s.incomplete;
    return true;
}
