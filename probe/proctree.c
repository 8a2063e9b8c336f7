/* Tree membership and per-thread reads (proctree.h). */
#include "proctree.h"

#include "access.h"
#include "children.h"
#include "facilities.h"
#include "fds.h"
#include "locks.h"
#include "maps.h"
#include "memory.h"
#include "parallel.h"
#include "pid_map.h"
#include "process_list.h"
#include "pidns.h"
#include "freezer.h"
#include "procfs.h"
#include "schedclock.h"
#include "syscalls.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Bounds on what one process may make us hold. */
#define CMDLINE_MAX_BYTES (128 * 1024)
#define CMDLINE_MAX_ARGS 4096
#define KERNEL_STACK_MAX_BYTES 8192
#define PATH_BUFFER 4096
#define MAPPINGS_MAX 65536
#define FDS_MAX 4096
/* A process with this many threads has their files read by one worker per CPU (parallel.h), and so does a tree
 * of this many processes; fewer are not worth the threads. */
#define PARALLEL_THREADS_MIN 256
#define PARALLEL_PROCESSES_MIN 32

struct probe_tree {
    struct probe_sched_clock *sched_clock;
    long ticks_per_second;
    double deadline;          /* monotonic seconds after which a full read takes only the threads' waits; 0: none */
    double last_call;         /* after which it reads no more of a thread than its stat file; 0: none */
    size_t threads_read;      /* by the last read: what the next membership walk would cost through children files */
};

struct probe_tree *probe_tree_new(void)
{
    struct probe_tree *tree = calloc(1, sizeof *tree);
    if (!tree)
        return NULL;
    tree->sched_clock = probe_sched_clock_new();
    if (!tree->sched_clock) {
        probe_tree_free(tree);
        errno = ENOMEM;
        return NULL;
    }
    tree->ticks_per_second = sysconf(_SC_CLK_TCK);
    if (tree->ticks_per_second <= 0)
        tree->ticks_per_second = 100;
    return tree;
}

void probe_tree_set_deadlines(struct probe_tree *tree, double deadline, double last_call)
{
    tree->deadline = deadline;
    tree->last_call = last_call;
}

void probe_tree_free(struct probe_tree *tree)
{
    if (!tree)
        return;
    probe_sched_clock_free(tree->sched_clock);
    free(tree);
}

/* ---- membership ------------------------------------------------------------------------------------------- */

struct member_list {
    pid_t *pids;
    size_t count;
    size_t cap;
    struct probe_pid_map seen; /* the pids above, for member_contains */
};

static bool member_contains(const struct member_list *members, pid_t pid)
{
    size_t index;
    return probe_pid_map_get(&members->seen, pid, &index);
}

static void member_list_free(struct member_list *members)
{
    free(members->pids);
    probe_pid_map_clear(&members->seen);
}

static bool member_add(struct member_list *members, pid_t pid)
{
    if (!probe_pid_map_put(&members->seen, pid, members->count))
        return false;
    if (members->count == members->cap) {
        size_t cap = members->cap ? members->cap * 2 : 32;
        pid_t *grown = reallocarray(members->pids, cap, sizeof *grown);
        if (!grown)
            return false;
        members->pids = grown;
        members->cap = cap;
    }
    members->pids[members->count++] = pid;
    return true;
}

HD_KEY_COMPARATOR(compare_ppid, pid_t, struct probe_process_link, .ppid)

/* Depth-first from `pid`, children in pid order; `links` is sorted by (ppid, pid). */
static bool add_subtree(struct member_list *members, const struct probe_process_link *links, size_t nlinks, pid_t pid,
                        pid_t exclude, unsigned depth)
{
    if (pid == exclude || member_contains(members, pid))
        return true;
    if (!member_add(members, pid))
        return false;
    if (depth > 4096)
        return true; /* pid loops cannot happen, but a bound costs nothing */
    /* the first link whose ppid is `pid` */
    size_t low = hd_lower_bound(&pid, links, nlinks, sizeof *links, compare_ppid);
    for (size_t i = low; i < nlinks && links[i].ppid == pid; i++)
        if (!add_subtree(members, links, nlinks, links[i].pid, exclude, depth + 1))
            return false;
    return true;
}

/* Depth-first from `pid`, children in pid order, from the children files of each member's threads. */
static bool add_subtree_by_children(struct member_list *members, pid_t pid, pid_t exclude, unsigned depth)
{
    if (pid == exclude || member_contains(members, pid))
        return true;
    if (!member_add(members, pid))
        return false;
    if (depth > 4096)
        return true;
    pid_t *children = NULL;
    size_t count = 0, cap = 0;
    bool ok = probe_read_children(pid, &children, &count, &cap);
    for (size_t i = 0; i < count && ok; i++)
        ok = add_subtree_by_children(members, children[i], exclude, depth + 1);
    free(children);
    return ok;
}

/* How many processes the system has: what the list of every process costs (a directory entry, then libproc2's
 * reads of stat and status, for each). */
static size_t processes_on_system(void)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return SIZE_MAX;
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(proc)))
        count += entry->d_name[0] >= '1' && entry->d_name[0] <= '9';
    closedir(proc);
    return count;
}

/* The threads of the roots, as their stat files count them: before the first read, the least the tree has. */
static size_t threads_of_roots(const pid_t *roots, size_t nroots)
{
    size_t threads = 0;
    for (size_t r = 0; r < nroots; r++) {
        char path[64], text[4096];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)roots[r]);
        ssize_t length = probe_read_file(path, text, sizeof text);
        struct probe_stat stat;
        if (length > 0 && probe_parse_stat(text, (size_t)length, &stat) && stat.has_start)
            threads += (size_t)stat.thread_count;
    }
    return threads;
}

/* The children files cost a read per thread of the tree; the list of every process two reads per process of the
 * system, whatever the tree. One process of 10,000 threads (or 1,000 processes of 10) on a machine of a few
 * hundred processes is found for a tenth of the reads through the list. A read costs about the same either way,
 * so the list is taken when the tree has several times more threads than the system has processes. */
#define THREADS_PER_PROCESS_LISTED 8

size_t probe_tree_expected_threads(const struct probe_tree *tree, const pid_t *roots, size_t nroots)
{
    return tree->threads_read ? tree->threads_read : threads_of_roots(roots, nroots);
}

static bool cheaper_to_list_every_process(const struct probe_tree *tree, const pid_t *roots, size_t nroots)
{
    size_t threads = probe_tree_expected_threads(tree, roots, nroots);
    size_t processes = threads >= THREADS_PER_PROCESS_LISTED * 64 ? processes_on_system() : SIZE_MAX;
    return processes != SIZE_MAX && threads > THREADS_PER_PROCESS_LISTED * processes;
}

/* The members from the list of every process: 0, or -errno when it cannot be had (-ENOMEM: memory ran out). */
static int list_members_from_every_process(const pid_t *roots, size_t nroots, pid_t exclude,
                                           struct member_list *members)
{
    struct probe_process_link *links cleanup_free = NULL;
    ssize_t nlinks = probe_list_every_process(&links);
    if (nlinks < 0)
        return (int)nlinks;
    for (size_t r = 0; r < nroots; r++)
        if (!add_subtree(members, links, (size_t)nlinks, roots[r], exclude, 0))
            return -ENOMEM;
    return 0;
}

/* 0, or -errno */
static int list_members(const struct probe_tree *tree, const pid_t *roots, size_t nroots, pid_t exclude,
                        struct member_list *members)
{
    if (!probe_children_files_exist())
        return list_members_from_every_process(roots, nroots, exclude, members);
    /* without libproc2 (-ELIBACC), or short of memory for its list: the children files after all */
    if (cheaper_to_list_every_process(tree, roots, nroots) &&
        list_members_from_every_process(roots, nroots, exclude, members) == 0)
        return 0;
    member_list_free(members);
    *members = (struct member_list){ 0 };
    for (size_t r = 0; r < nroots; r++)
        if (!add_subtree_by_children(members, roots[r], exclude, 0))
            return -ENOMEM;
    return 0;
}

/* A process's parent and state, as its stat file says; false when it is gone. */
static bool read_relative(pid_t pid, struct probe_relative *out)
{
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    struct probe_stat stat;
    if (length < 0 || !probe_parse_stat(text, (size_t)length, &stat))
        return false;
    *out = (struct probe_relative){ .pid = pid, .ppid = stat.ppid, .state = stat.state };
    return true;
}

ssize_t probe_list_descendants(pid_t ancestor, pid_t exclude, struct probe_relative *out, size_t max)
{
    if (probe_children_files_exist()) {
        struct member_list members cleanup_with(member_list_free) = { 0 };
        if (!add_subtree_by_children(&members, ancestor, exclude, 0))
            return -ENOMEM;
        ssize_t count = 0;
        /* members[0] is the ancestor itself; a process gone since the walk is left out */
        for (size_t m = 1; m < members.count && (size_t)count < max; m++)
            count += read_relative(members.pids[m], &out[count]);
        return count;
    }
    struct probe_process_link *links cleanup_free = NULL;
    ssize_t nlinks = probe_list_every_process(&links);
    if (nlinks < 0)
        return nlinks;
    struct member_list members cleanup_with(member_list_free) = { 0 };
    bool ok = add_subtree(&members, links, (size_t)nlinks, ancestor, exclude, 0);
    ssize_t count = ok ? 0 : -ENOMEM;
    /* members[0] is the ancestor itself */
    for (size_t m = 1; ok && m < members.count && (size_t)count < max; m++)
        for (ssize_t i = 0; i < nlinks; i++)
            if (links[i].pid == members.pids[m]) {
                out[count++] = (struct probe_relative){ .pid = links[i].pid, .ppid = links[i].ppid,
                                                        .state = links[i].state };
                break;
            }
    return count;
}

/* ---- one process --------------------------------------------------------------------------------------------- */

static int64_t clock_ns(clockid_t clock)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* How much of a thread a full read still takes, by the clock (probe_tree_set_deadlines). */
enum lateness {
    ON_TIME,   /* everything */
    LATE,      /* past the deadline: what the verdict stands on, the wait (syscall, and the wait channel that tells
                * a restarted wait), not the kernel stack, the blocked-for time or the switch counts */
    TOO_LATE,  /* past the last call: nothing more than the stat file read already (its wait stays unread) */
};

/* A clock read every this many threads: about a millisecond of reading between two */
#define LATENESS_CHECK_THREADS 64

/* One read of the tree. A worker reading some of the processes or threads has a copy of its own (for_each_item):
 * its notes go to a snapshot of its own, put back in order afterwards, and the scheduler clocks, shared, are
 * behind clock_lock. */
struct read_context {
    struct probe_tree *tree;
    enum probe_detail detail;
    struct hd_snapshot *snapshot;
    struct hd_snapshot *notes;    /* where NOTE writes: `snapshot`, or a worker's own */
    pthread_mutex_t *clock_lock;  /* NULL when alone */
    struct probe_clocks clocks;
    double boot_seconds; /* since boot, now: a process's age is this less its start */
    size_t threads_since_clock;
    enum lateness lateness;      /* of a full read, looked at every LATENESS_CHECK_THREADS threads */
    size_t details_skipped;      /* threads read without kernel stack, sched and status: the deadline had passed */
    size_t threads_unread;       /* threads of which only the stat file was read: the last call had passed */
    bool sched_clock_inexact;    /* some "blocked for" came from another CPU's clock */
    bool failed;                 /* memory ran out */
};

static bool full(const struct read_context *c)
{
    return c->detail == PROBE_DETAIL_FULL;
}

/* Notes only in the full read, so that a sample taken five times is noted once. */
#define NOTE(c, kind, pid, tid, ...)                                                                                 \
    do {                                                                                                             \
        if (full(c))                                                                                                 \
            hd_snapshot_note((c)->notes, (kind), (pid), (tid), __VA_ARGS__);                                         \
    } while (0)

/* Why a /proc file of `process` could not be read, into `buffer`; `kind` says which checks guard it (access.h). */
static const char *why_unreadable(const struct hd_process *process, int error, enum probe_access_kind kind,
                                  char *buffer, size_t size)
{
    switch (error) {
    case EACCES:
    case EPERM: {
        char why[256];
        probe_access_explain(process->pid, process->uid, kind, why, sizeof why);
        snprintf(buffer, size, "permission denied (%s)", why);
        return buffer;
    }
    case ENOENT:
    case ESRCH:
        return "the task is gone";
    default:
        return strerror(error);
    }
}

static enum hd_arch arch_of_executable(pid_t pid, enum hd_arch fallback)
{
    char path[64], header[20];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    if (probe_read_file(path, header, sizeof header) < (ssize_t)sizeof header - 1)
        return fallback;
    if (memcmp(header, "\177ELF", 4) != 0 || header[4] != 2 /* ELFCLASS64 */)
        return HD_ARCH_UNKNOWN; /* a 32-bit program: its system call numbers are another table's */
    unsigned machine = (unsigned char)header[18] | (unsigned)(unsigned char)header[19] << 8;
    switch (machine) {
    case 62: /* EM_X86_64 */
        return HD_ARCH_X86_64;
    case 183: /* EM_AARCH64 */
        return HD_ARCH_AARCH64;
    default:
        return HD_ARCH_UNKNOWN;
    }
}

static void read_cmdline(struct read_context *c, struct hd_process *process)
{
    char why[320];
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)process->pid);
    /* most command lines fit the usual buffer; a longer one is read again, up to the bound */
    char usual[4096], *bytes = usual;
    ssize_t length = probe_read_file(path, usual, sizeof usual);
    if (length == (ssize_t)sizeof usual - 1) {
        bytes = malloc(CMDLINE_MAX_BYTES);
        if (!bytes)
            return;
        length = probe_read_file(path, bytes, CMDLINE_MAX_BYTES);
    }
    if (length < 0)
        NOTE(c, HD_NOTE_PROCFS, process->pid, 0, "cmdline: %s",
             why_unreadable(process, (int)-length, PROBE_ACCESS_PTRACE, why, sizeof why));
    else if (!probe_parse_cmdline(bytes, (size_t)length, CMDLINE_MAX_ARGS, &process->argv, &process->argc,
                                  &process->cmdline_truncated))
        NOTE(c, HD_NOTE_PROCFS, process->pid, 0, "cmdline: out of memory");
    if (length == CMDLINE_MAX_BYTES - 1)
        process->cmdline_truncated = true;
    if (bytes != usual)
        free(bytes);
}

static void read_exe(struct read_context *c, struct hd_process *process)
{
    char why[320];
    char path[64], target[PATH_BUFFER];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)process->pid);
    ssize_t length = readlink(path, target, sizeof target - 1);
    if (length < 0) {
        process->exe_errno = errno;
        /* kernel threads and zombies have no executable: ENOENT there is the normal answer */
        if (!process->kernel_thread && !process->zombie)
            NOTE(c, HD_NOTE_PROCFS, process->pid, 0, "exe: %s",
                 why_unreadable(process, process->exe_errno, PROBE_ACCESS_PTRACE, why, sizeof why));
        return;
    }
    target[length] = '\0';
    process->exe = strdup(target);
}

static void read_maps_and_fds(struct read_context *c, struct hd_process *process)
{
    char why[320];
    if (process->kernel_thread || process->zombie)
        return;
    bool truncated;
    int error = probe_read_maps(process->pid, MAPPINGS_MAX, &process->mappings, &process->nmappings, &truncated);
    if (error)
        NOTE(c, HD_NOTE_PROCFS, process->pid, 0, "maps: %s",
             why_unreadable(process, -error, PROBE_ACCESS_PTRACE, why, sizeof why));
    else if (truncated)
        NOTE(c, HD_NOTE_PROCFS, process->pid, 0, "maps: more than %d mappings, the rest not read", MAPPINGS_MAX);
    error = probe_read_fds(process->pid, FDS_MAX, &process->fds, &process->nfds, &truncated);
    process->fds_complete = !error && !truncated;
    if (error)
        NOTE(c, HD_NOTE_PROCFS, process->pid, 0, "fds: %s",
             why_unreadable(process, -error, PROBE_ACCESS_OWNER_FILE, why, sizeof why));
    else if (truncated)
        NOTE(c, HD_NOTE_PROCFS, process->pid, 0, "fds: more than %d open files, the rest not read", FDS_MAX);
}

/* The signals its POSIX timers deliver: a wait for one of them is a timed wait (unreadable: none known) */
static void read_timers(struct hd_process *process)
{
    char path[64], text[8192];
    snprintf(path, sizeof path, "/proc/%d/timers", (int)process->pid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    if (length < 0)
        return;
    probe_parse_timers(text, (size_t)length, &process->timer_signals);
    process->timers_known = true;
}

/* The command line of `pid` (a tracer: often outside the tree) as one line, arguments joined by spaces; NULL when
 * unreadable or empty. Raw bytes, escaped at output. */
static char *read_joined_cmdline(pid_t pid)
{
    char path[64], bytes[256];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    ssize_t length = probe_read_file(path, bytes, sizeof bytes);
    if (length <= 0)
        return NULL;
    while (length > 0 && bytes[length - 1] == '\0')
        length--;
    for (ssize_t i = 0; i < length; i++)
        if (bytes[i] == '\0')
            bytes[i] = ' ';
    return length > 0 ? strndup(bytes, (size_t)length) : NULL;
}

/* The signal that stopped a process in T: the kernel keeps a group stop's signal for the whole process, so only
 * /proc/<pid>/stat shows it in its exit_code field, and a thread's own stat shows 0. */
static void read_stop_signal(struct hd_process *process)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)process->pid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    struct probe_stat stat;
    if (length > 0 && probe_parse_stat(text, (size_t)length, &stat) && stat.has_exit_code && stat.state == 'T')
        process->exit_status = stat.exit_code;
}

static void read_process_files(struct read_context *c, struct hd_process *process)
{
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)process->pid);
    struct probe_status status;
    ssize_t length = probe_read_file(path, text, sizeof text);
    if (length >= 0 && probe_parse_status(text, (size_t)length, &status)) {
        process->tracer_pid = status.tracer_pid;
        /* the tracer's name, so that a report can say "traced by 4242 'gdb'": the tracer is often outside the tree */
        if (status.tracer_pid > 0) {
            probe_read_comm(status.tracer_pid, process->tracer_comm, sizeof process->tracer_comm);
            process->tracer_cmdline = read_joined_cmdline(status.tracer_pid);
        }
        process->ignores_sigchld = status.has_signals_ignored && (status.signals_ignored >> (SIGCHLD - 1)) & 1;
        process->signal_dispositions_known = status.has_signals_caught && status.has_signals_ignored;
        process->signals_caught = status.signals_caught;
        process->signals_ignored = status.signals_ignored;
        if (status.has_euid)
            process->uid = status.euid;
        if (status.nspid_levels > 1) {
            char pid_text[16];
            snprintf(pid_text, sizeof pid_text, "%d", (int)process->pid);
            process->ns_pid = status.nspid_innermost;
            process->pid_namespace = probe_pid_namespace_of(pid_text);
        }
    }
    if (!full(c))
        return;
    read_timers(process);
    char freezer_unknown[PROBE_CGROUP_PATH_MAX + 160];
    probe_read_freezer(process, freezer_unknown, sizeof freezer_unknown);
    if (freezer_unknown[0])
        hd_snapshot_note(c->snapshot, HD_NOTE_PROCFS, process->pid, 0, "cgroup freezer: %s", freezer_unknown);
    if (process->state == 'T')
        read_stop_signal(process);
    read_cmdline(c, process);
    read_exe(c, process);
    read_maps_and_fds(c, process);
    process->arch = process->kernel_thread ? c->snapshot->arch : arch_of_executable(process->pid, c->snapshot->arch);
}

/* ---- one thread ---------------------------------------------------------------------------------------------- */

static void thread_path(char *path, size_t size, pid_t pid, pid_t tid, const char *file)
{
    snprintf(path, size, "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
}

static void copy_bounded(char *destination, size_t size, const char *source)
{
    size_t length = strnlen(source, size - 1);
    memcpy(destination, source, length);
    destination[length] = '\0';
}

/* The kernel's wait channel: a function name, or "0" when the task runs (or we may not see it). Named as ps(1)
 * names it: without the leading '.' and underscores ("__do_sys_pause" is "do_sys_pause"). */
static void set_wchan(struct hd_thread *thread, const char *name, size_t length)
{
    name += length > 0 && name[0] == '.';
    while (*name == '_')
        name++;
    char bounded[HD_WCHAN_MAX];
    snprintf(bounded, sizeof bounded, "%.*s", (int)strcspn(name, "+ \n"), name);
    copy_bounded(thread->wchan, sizeof thread->wchan, bounded);
}

static void read_thread_wchan(pid_t pid, struct hd_thread *thread)
{
    char path[96], text[HD_WCHAN_MAX];
    thread_path(path, sizeof path, pid, thread->tid, "wchan");
    ssize_t length = probe_read_file(path, text, sizeof text);
    if (length <= 0 || strcmp(text, "0") == 0)
        return;
    set_wchan(thread, text, (size_t)length);
}

/* The wait channel is the first frame of the kernel stack, when that was read: both skip the scheduler's own
 * functions the same way (kernel/stacktrace.c's stack_trace_consume_entry_nosched(), and x86's __get_wchan() is
 * stack_trace_save_tsk() of one entry since Linux 5.16), and a running task has none (get_wchan() says 0). One
 * file fewer per thread, where reading both costs the most (as root). "[<0>] futex_wait_queue+0x63/0x90". */
static void take_thread_wchan(pid_t pid, struct hd_thread *thread)
{
    if (thread->state == 'R')
        return;
    const char *stack = thread->kernel_stack;
    const char *line_end = stack ? strchr(stack, '\n') : NULL;
    const char *frame = line_end ? strstr(stack, "] ") : NULL;
    if (frame && frame + 2 < line_end)
        set_wchan(thread, frame + 2, (size_t)(line_end - frame - 2));
    else
        read_thread_wchan(pid, thread);
}

/* The scheduler clock of `cpu` now (schedclock.h), which calibrates each CPU the first time it is asked. */
static bool scheduler_now_ms(struct read_context *c, int cpu, double *now_ms, bool *exact)
{
    if (c->clock_lock)
        pthread_mutex_lock(c->clock_lock);
    bool known = probe_sched_clock_now_ms(c->tree->sched_clock, cpu, now_ms, exact);
    if (c->clock_lock)
        pthread_mutex_unlock(c->clock_lock);
    return known;
}

static void read_thread_sched(struct read_context *c, pid_t pid, struct hd_thread *thread)
{
    char path[96], text[8192];
    thread_path(path, sizeof path, pid, thread->tid, "sched");
    ssize_t length = probe_read_file(path, text, sizeof text);
    struct probe_sched sched;
    if (length < 0 || !probe_parse_sched(text, (size_t)length, &sched))
        return; /* the caller notes once per snapshot that the kernel lacks the file */
    if (sched.has_runtime)
        thread->cpu_time_ns = (uint64_t)(sched.sum_exec_runtime_ms * 1e6);
    if (sched.has_switches) {
        thread->voluntary_switches = sched.voluntary_switches;
        thread->involuntary_switches = sched.involuntary_switches;
        thread->switches_known = true;
    }
    /* While a task sleeps its exec_start stays at the moment it last ran (the kernel updates it in update_curr()):
     * compare it with the clock of the CPU it ran on, now (schedclock.h). Only the full read needs it. */
    double now_ms;
    bool exact;
    if (full(c) && sched.has_exec_start && thread->state != 'R' &&
        scheduler_now_ms(c, thread->last_cpu, &now_ms, &exact)) {
        double blocked_ms = now_ms - sched.exec_start_ms;
        thread->last_ran_ms = sched.exec_start_ms;
        thread->blocked_for_known = true;
        thread->blocked_for_s = blocked_ms > 0 ? blocked_ms / 1000 : 0;
        c->sched_clock_inexact |= !exact;
    }
}

/* A thread's own status file; false when it could not be read or parsed. */
static bool read_thread_status(pid_t pid, const struct hd_thread *thread, struct probe_status *status)
{
    char path[96], text[4096];
    thread_path(path, sizeof path, pid, thread->tid, "status");
    ssize_t length = probe_read_file(path, text, sizeof text);
    return length >= 0 && probe_parse_status(text, (size_t)length, status);
}

/* A thread's id in its process's own PID namespace (pidns.h): read only for a process that lives in another. */
static void read_thread_ns_tid(pid_t pid, struct hd_thread *thread)
{
    struct probe_status status;
    if (read_thread_status(pid, thread, &status) && status.nspid_levels > 1)
        thread->ns_tid = status.nspid_innermost;
}

static void read_thread_switches_from_status(pid_t pid, struct hd_thread *thread)
{
    struct probe_status status;
    if (read_thread_status(pid, thread, &status) && status.has_switches) {
        thread->voluntary_switches = status.voluntary_switches;
        thread->involuntary_switches = status.involuntary_switches;
        thread->switches_known = true;
    }
}

/* pause(2) waits with the thread's own mask: the signals it blocks cannot end the wait */
static void read_thread_signal_mask(pid_t pid, struct hd_thread *thread)
{
    struct probe_status status;
    if (read_thread_status(pid, thread, &status) && status.has_signals_blocked) {
        thread->wait.signal_set = status.signals_blocked;
        thread->wait.signal_set_kind = HD_SIGNAL_SET_BLOCKED;
    }
}

static void read_thread_syscall(struct read_context *c, const struct hd_process *process, struct hd_thread *thread)
{
    char why[320];
    char path[96], text[512];
    thread_path(path, sizeof path, process->pid, thread->tid, "syscall");
    ssize_t length = probe_read_file(path, text, sizeof text);
    /* a kernel without the files: note_kernel_gaps() says so once; the registers may tell the call (stacks.c) */
    if (length == -ENOENT && !probe_facilities()->syscall_files)
        return;
    if (length < 0) {
        if (!process->kernel_thread)
            NOTE(c, HD_NOTE_PROCFS, process->pid, thread->tid, "syscall: %s",
                 why_unreadable(process, (int)-length, PROBE_ACCESS_OWNER_FILE, why, sizeof why));
        /* Gone since its stat was read: it ran to its end, which wakes whoever waited for it to (a parent in
         * wait4, a joiner). Left asleep with its wait unread, it would make the verdict "could not tell"; taken
         * as exited, a parent's wait4 on it would look like a wait on the dead. */
        if (length == -ENOENT || length == -ESRCH)
            thread->ended_during_read = true;
        return;
    }
    if (!probe_parse_syscall(text, (size_t)length, &thread->syscall)) {
        NOTE(c, HD_NOTE_PROCFS, process->pid, thread->tid, "syscall: unexpected contents");
        return;
    }
    if (thread->syscall.state != HD_SYSCALL_IN)
        return;
    thread->syscall.name = probe_syscall_name(process->arch, thread->syscall.nr);
    pid_t pid = process->pid;
    probe_decode_wait(&thread->syscall, thread->wchan, full(c) ? probe_read_memory_of : NULL, &pid, &c->clocks,
                      &thread->wait);
    if (full(c) && thread->wait.kind == HD_WAIT_SIGNAL && thread->wait.signal_set_kind == HD_SIGNAL_SET_UNKNOWN &&
        thread->wait.operation && strcmp(thread->wait.operation, "pause") == 0)
        read_thread_signal_mask(process->pid, thread);
    if (full(c))
        probe_read_wait_fds(pid, &thread->syscall, &thread->wait);
}

/* Unreadable without root: note_kernel_gaps() says so once per snapshot, not once per thread. Kept at its own
 * length: a few hundred bytes, where the buffer is 8 KiB (10,000 threads would hold 80 MiB). */
static void read_thread_kernel_stack(pid_t pid, struct hd_thread *thread)
{
    char path[96], text[KERNEL_STACK_MAX_BYTES];
    thread_path(path, sizeof path, pid, thread->tid, "stack");
    ssize_t length = probe_read_file(path, text, sizeof text);
    if (length > 0)
        thread->kernel_stack = strndup(text, (size_t)length);
}

/* What a full read leaves out when time runs short, in two steps. Past the deadline, the details of one thread
 * (its kernel stack, the dearest file as root; its blocked-for time and switch counts): the wait it is in, which
 * the verdict stands on, is still read. Past the last call, a thread's wait too: the read then ends in moments,
 * and those threads' waits are unknown (the verdict says it cannot tell rather than guess). An earlier sample is
 * only taken when there is time for it, so it is always read whole. */
static enum lateness lateness(struct read_context *c)
{
    if (!full(c) || c->tree->deadline <= 0)
        return ON_TIME;
    if (c->lateness != TOO_LATE && c->threads_since_clock++ % LATENESS_CHECK_THREADS == 0) {
        double now = (double)clock_ns(CLOCK_MONOTONIC) / 1e9;
        if (c->tree->last_call > 0 && now >= c->tree->last_call)
            c->lateness = TOO_LATE;
        else if (now >= c->tree->deadline)
            c->lateness = LATE;
    }
    return c->lateness;
}

static void read_thread_files(struct read_context *c, const struct hd_process *process, struct hd_thread *thread)
{
    enum lateness late = lateness(c);
    if (late == TOO_LATE) {
        c->threads_unread++;
        return;
    }
    if (late == LATE)
        c->details_skipped++;
    /* Only the last sample's wait is reported (the earlier ones are compared by state, system call and CPU
     * time), so only a full read needs the wait channel, and the kernel stack before it. */
    if (full(c) && late == ON_TIME)
        read_thread_kernel_stack(process->pid, thread);
    if (full(c))
        take_thread_wchan(process->pid, thread);
    if (full(c) && process->ns_pid)
        read_thread_ns_tid(process->pid, thread);
    if (late == ON_TIME) {
        read_thread_sched(c, process->pid, thread);
        if (!thread->switches_known)
            read_thread_switches_from_status(process->pid, thread);
    }
    read_thread_syscall(c, process, thread);
}

/* ---- assembling processes from their threads' stat files --------------------------------------------------- */

/* One thread from its stat file; false when it is gone. */
static bool read_thread_stat(struct read_context *c, pid_t pid, struct hd_thread *thread, struct probe_stat *stat)
{
    char path[96], text[4096];
    thread_path(path, sizeof path, pid, thread->tid, "stat");
    ssize_t length = probe_read_file(path, text, sizeof text);
    if (length < 0 || !probe_parse_stat(text, (size_t)length, stat))
        return false;
    uint64_t nanoseconds_per_tick = 1000000000ULL / (uint64_t)c->tree->ticks_per_second;
    thread->state = stat->state;
    memcpy(thread->name, stat->comm, sizeof thread->name);
    thread->cpu_time_ns = stat->has_times ? stat->cpu_ticks * nanoseconds_per_tick : 0;
    thread->last_cpu = stat->processor;
    return true;
}

static void fill_process_from_leader(struct read_context *c, struct hd_process *process, const struct probe_stat *stat)
{
    process->ppid = stat->ppid;
    if (stat->has_group)
        process->session = stat->session;
    process->state = stat->state;
    process->zombie = stat->state == 'Z';
    memcpy(process->comm, stat->comm, sizeof process->comm);
    process->kernel_thread = stat->flags & PROBE_PF_KTHREAD;
    if (stat->has_exit_code)
        process->exit_status = stat->exit_code;
    if (stat->has_start) {
        process->thread_count = stat->thread_count;
        process->start_time_s = (double)stat->start_ticks / (double)c->tree->ticks_per_second;
        double age = c->boot_seconds - process->start_time_s;
        process->age_s = age > 0 ? age : 0;
    }
}

/* ---- many at once ------------------------------------------------------------------------------------------- */

/* The workers of one loop (parallel.h): each has a copy of the read's context, with notes of its own, put back in
 * the loop's order afterwards, and counters added up; the scheduler clocks they share are behind one lock. */
struct shared_loop {
    void (*each)(struct read_context *c, void *items, size_t index);
    void *items;
    struct read_context workers[PROBE_PARALLEL_WORKERS_MAX];
    struct hd_snapshot notes[PROBE_PARALLEL_WORKERS_MAX];
};

static void run_range(void *context, size_t worker, size_t begin, size_t end)
{
    struct shared_loop *loop = context;
    for (size_t i = begin; i < end; i++)
        loop->each(&loop->workers[worker], loop->items, i);
}

/* Moves the notes of `from` to the end of `to`'s. */
static void take_notes(struct hd_snapshot *to, struct hd_snapshot *from)
{
    for (size_t n = 0; n < from->nnotes; n++) {
        struct hd_note *note = &from->notes[n];
        hd_snapshot_note(to, note->kind, note->pid, note->tid, "%s", note->text);
        free(note->text);
    }
    free(from->notes);
    from->notes = NULL;
    from->nnotes = 0;
    from->notes_capacity = 0;
}

/* each(c, items, i) for every i below `count`, in order; split among one worker per CPU when there are at least
 * `threshold` of them and `c` is not a worker already. */
static void for_each_item(struct read_context *c, size_t count, size_t threshold,
                          void (*each)(struct read_context *c, void *items, size_t index), void *items)
{
    size_t workers = c->clock_lock ? 1 : probe_parallel_workers(count, threshold);
    struct shared_loop *loop = workers > 1 ? calloc(1, sizeof *loop) : NULL;
    if (!loop) {
        for (size_t i = 0; i < count; i++)
            each(c, items, i);
        return;
    }
    pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
    *loop = (struct shared_loop){ .each = each, .items = items };
    for (size_t w = 0; w < workers; w++) {
        loop->workers[w] = *c;
        loop->workers[w].notes = &loop->notes[w];
        loop->workers[w].clock_lock = &clock_lock;
        /* what a worker counts is added to the read's own after */
        loop->workers[w].details_skipped = 0;
        loop->workers[w].threads_unread = 0;
        loop->workers[w].sched_clock_inexact = false;
        loop->workers[w].failed = false;
    }
    probe_parallel_for(count, workers, run_range, loop);
    for (size_t w = 0; w < workers; w++) {
        const struct read_context *done = &loop->workers[w];
        take_notes(c->notes, &loop->notes[w]);
        c->details_skipped += done->details_skipped;
        c->threads_unread += done->threads_unread;
        if (done->lateness > c->lateness)
            c->lateness = done->lateness;
        c->sched_clock_inexact |= done->sched_clock_inexact;
        c->failed |= done->failed;
    }
    free(loop);
    pthread_mutex_destroy(&clock_lock);
}

/* ---- the stat files: which threads there are ----------------------------------------------------------------- */

/* A process's threads as listed, each read from its stat file into its slot; one gone since keeps tid 0. */
struct stat_reads {
    pid_t pid;
    const pid_t *tids;
    struct hd_thread *threads;
    struct probe_stat leader; /* the stat of the thread `pid`, when read (its slot's tid says so) */
};

static void read_one_stat(struct read_context *c, void *items, size_t t)
{
    struct stat_reads *reads = items;
    struct hd_thread *thread = &reads->threads[t];
    *thread = (struct hd_thread){ .tid = reads->tids[t], .wait = { .kind = HD_WAIT_NONE, .fd = -1 } };
    struct probe_stat stat;
    if (!read_thread_stat(c, reads->pid, thread, &stat))
        thread->tid = 0; /* ended since the listing */
    else if (thread->tid == reads->pid)
        reads->leader = stat;
}

/* Reads process `pid` and the stat file of each of its threads into *out (pid 0 when it is gone by now: noted);
 * false when memory ran out. */
static bool collect_process(struct read_context *c, pid_t pid, struct hd_process *out)
{
    struct hd_process process = { .pid = pid, .state = '?', .arch = c->snapshot->arch };
    *out = (struct hd_process){ 0 };
    pid_t *tids cleanup_free = NULL;
    size_t ntids;
    if (!probe_list_threads(pid, &tids, &ntids))
        return false;
    process.threads = calloc(ntids ? ntids : 1, sizeof *process.threads);
    if (!process.threads)
        return false;
    struct stat_reads reads = { .pid = pid, .tids = tids, .threads = process.threads };
    for_each_item(c, ntids, PARALLEL_THREADS_MIN, read_one_stat, &reads);
    bool leader_seen = false;
    for (size_t t = 0; t < ntids; t++) {
        if (process.threads[t].tid == 0)
            continue;
        leader_seen |= process.threads[t].tid == pid;
        process.threads[process.nthreads++] = process.threads[t];
    }
    if (!leader_seen) {
        free(process.threads);
        NOTE(c, HD_NOTE_DEPARTED, pid, 0, "process %d exited during the scan", (int)pid);
        return true;
    }
    fill_process_from_leader(c, &process, &reads.leader);
    *out = process;
    return true;
}

struct member_reads {
    const pid_t *pids;
    struct hd_process *processes;
};

static void collect_one_process(struct read_context *c, void *items, size_t m)
{
    struct member_reads *reads = items;
    if (!collect_process(c, reads->pids[m], &reads->processes[m]))
        c->failed = true;
}

/* ---- the other files --------------------------------------------------------------------------------------- */

struct thread_reads {
    const struct hd_process *process;
};

static void read_one_thread(struct read_context *c, void *items, size_t t)
{
    const struct thread_reads *reads = items;
    read_thread_files(c, reads->process, &reads->process->threads[t]);
}

static void read_one_process(struct read_context *c, void *items, size_t p)
{
    struct hd_process *process = &((struct hd_process *)items)[p];
    read_process_files(c, process);
    struct thread_reads reads = { .process = process };
    for_each_item(c, process->nthreads, PARALLEL_THREADS_MIN, read_one_thread, &reads);
    if (full(c))
        probe_read_locks(process);
}

static void note_kernel_gaps(struct read_context *c)
{
    if (!full(c))
        return;
    bool any_stack = false, any_blocked_for = false, any_sleeping = false;
    for (size_t p = 0; p < c->snapshot->nprocesses; p++) {
        const struct hd_process *process = &c->snapshot->processes[p];
        for (size_t t = 0; t < process->nthreads; t++) {
            any_stack |= process->threads[t].kernel_stack != NULL;
            any_blocked_for |= process->threads[t].blocked_for_known;
            any_sleeping |= process->threads[t].state != 'R';
        }
    }
    size_t nthreads = 0;
    for (size_t p = 0; p < c->snapshot->nprocesses; p++)
        nthreads += c->snapshot->processes[p].nthreads;
    if (c->details_skipped > 0)
        hd_snapshot_note(c->snapshot, HD_NOTE_DEADLINE, 0, 0,
                         "--timeout near: kernel stacks, blocked-for times and context switches of %zu of %zu "
                         "threads not read",
                         c->details_skipped, nthreads);
    if (c->threads_unread > 0)
        hd_snapshot_note(c->snapshot, HD_NOTE_DEADLINE, 0, 0,
                         "--timeout near: the waits of %zu of %zu threads not read (only their state): the verdict "
                         "cannot count on them",
                         c->threads_unread, nthreads);
    if (c->details_skipped == 0 && c->threads_unread == 0 && !any_stack && c->snapshot->nprocesses > 0)
        hd_snapshot_note(c->snapshot, HD_NOTE_KERNEL, 0, 0,
                         "kernel stacks: /proc/<tid>/stack is not readable (it needs root)");
    if (c->sched_clock_inexact)
        hd_snapshot_note(c->snapshot, HD_NOTE_KERNEL, 0, 0,
                         "blocked-for times: hangdoc may not run on every CPU (cpuset), so some come from another "
                         "CPU's scheduler clock and may be off by the difference between the clocks");
    const struct probe_facilities *facilities = probe_facilities();
    if (!facilities->syscall_files && c->snapshot->nprocesses > 0)
        hd_snapshot_note(c->snapshot, HD_NOTE_KERNEL, 0, 0,
                         "system calls: this kernel has no /proc/<tid>/syscall (built without "
                         "CONFIG_HAVE_ARCH_TRACEHOOK, or a sandbox such as gVisor): a thread's wait is read from its "
                         "registers while it is stopped for its stack, else only its state and wait channel tell it");
    if (!facilities->cross_memory_attach && c->snapshot->nprocesses > 0)
        hd_snapshot_note(c->snapshot, HD_NOTE_KERNEL, 0, 0, "%s",
                         facilities->proc_mem
                             ? "target memory: process_vm_readv() is not available (a kernel built without "
                               "CONFIG_CROSS_MEMORY_ATTACH, or a sandbox): it is read through /proc/<pid>/mem"
                             : "target memory: neither process_vm_readv() nor /proc/<pid>/mem is available here: "
                               "lock owners, joined threads, Python stacks and fork origins are not read");
    if (!any_blocked_for && any_sleeping)
        hd_snapshot_note(c->snapshot, HD_NOTE_KERNEL, 0, 0,
                         "blocked-for times: /proc/<tid>/sched is missing (kernel built without "
                         "CONFIG_SCHED_DEBUG) or unreadable");
}

int probe_tree_read(struct probe_tree *tree, const pid_t *roots, size_t nroots, pid_t exclude,
                    enum probe_detail detail, struct hd_snapshot *into)
{
    struct member_list members cleanup_with(member_list_free) = { 0 };
    int listed = list_members(tree, roots, nroots, exclude, &members);
    if (listed != 0)
        return listed;
    struct read_context c = {
        .tree = tree, .detail = detail, .snapshot = into, .notes = into,
        .clocks = { .monotonic_ns = clock_ns(CLOCK_MONOTONIC), .realtime_ns = clock_ns(CLOCK_REALTIME) },
        .boot_seconds = (double)clock_ns(CLOCK_BOOTTIME) / 1e9,
    };
    size_t first_new = into->nprocesses;
    /* every member's slot at once, read by one worker per CPU when there are many (a tree of 1,000 processes) */
    struct hd_process *room = reallocarray(into->processes, first_new + members.count + 1, sizeof *room);
    if (!room)
        return -ENOMEM;
    into->processes = room;
    struct member_reads reads = { .pids = members.pids, .processes = room + first_new };
    for_each_item(&c, members.count, PARALLEL_PROCESSES_MIN, collect_one_process, &reads);
    for (size_t m = 0; m < members.count; m++)
        if (reads.processes[m].pid != 0)
            into->processes[into->nprocesses++] = reads.processes[m];
    /* The other files, read right after the stat files so that all describe the same moment. */
    for_each_item(&c, into->nprocesses - first_new, PARALLEL_PROCESSES_MIN, read_one_process,
                  into->processes + first_new);
    note_kernel_gaps(&c);
    tree->threads_read = 0;
    for (size_t p = first_new; p < into->nprocesses; p++)
        tree->threads_read += into->processes[p].nthreads;
    return c.failed ? -ENOMEM : 0;
}
