/* Seize, interrupt, wait (bounded), detach: stopping a process for its stacks (ptrace_stop.h).
 *
 * Kernel behaviour relied on (ptrace(2), kernel/ptrace.c):
 * - PTRACE_SEIZE attaches without stopping and without sending SIGSTOP; PTRACE_INTERRUPT then traps the thread in
 *   a PTRACE_EVENT_STOP that, unlike a SIGSTOP, leaves nothing behind after PTRACE_DETACH.
 * - A seized thread that was about to take a signal reports a signal-delivery-stop instead: that signal must be
 *   given back at PTRACE_DETACH or it is lost.
 * - When the tracer exits, __ptrace_unlink() clears every pending trap and wakes the tracee: killing hangdoc
 *   leaves no process stopped.
 * - PTRACE_DETACH needs the thread stopped: one that never stopped (stuck in D) stays attached until it stops or
 *   hangdoc exits.
 */
#include "ptrace_stop.h"

#include "access.h"
#include "clock.h"
#include "pid_map.h"
#include "procfs.h"
#include "syscalls.h"
#include "util.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

HD_DEFINE_CLEANUP(DIR, closedir)

#define RELIST_ROUNDS_MAX 16
#define ANCESTORS_MAX 256

/* ---- the registry of seized threads, for signal handlers --------------------------------------------------- */

/* The signal handlers read the registry (probe_stop_release_all), so its slots never move: they lie in chunks
 * allocated as more threads are seized at once and kept for the run, each published only once it is zeroed.
 * How many threads one process may have is the kernel's business (PID_MAX_LIMIT is 4 M), not ours. The look-up
 * from tid to slot is a pid map, used outside handlers only; so is the stack of freed slots. */
#define REGISTRY_CHUNK 4096
#define REGISTRY_CHUNKS_MAX 1024 /* 4 M slots */

struct registry_slot {
    volatile pid_t tid; /* 0: free */
    volatile int signal;
};

static struct registry_slot *volatile registry_chunks[REGISTRY_CHUNKS_MAX];
static volatile sig_atomic_t registry_count; /* slots ever used: the handlers look at these */
static struct probe_pid_map registry_index;  /* tid -> slot */
static size_t *free_slots;
static size_t nfree_slots, free_slots_capacity;

static struct registry_slot *slot_at(size_t slot)
{
    return &registry_chunks[slot / REGISTRY_CHUNK][slot % REGISTRY_CHUNK];
}

/* The slot that holds `tid`, or -1. */
static long registry_find(pid_t tid)
{
    size_t slot;
    return probe_pid_map_get(&registry_index, tid, &slot) ? (long)slot : -1;
}

/* A slot nobody holds: a freed one, or the next one (its chunk allocated first); -1 when memory ran out. */
static long take_free_slot(void)
{
    if (nfree_slots > 0)
        return (long)free_slots[--nfree_slots];
    size_t slot = (size_t)registry_count;
    size_t chunk = slot / REGISTRY_CHUNK;
    if (chunk >= REGISTRY_CHUNKS_MAX)
        return -1;
    if (!registry_chunks[chunk]) {
        struct registry_slot *fresh = calloc(REGISTRY_CHUNK, sizeof *fresh);
        if (!fresh)
            return -1;
        registry_chunks[chunk] = fresh; /* published zeroed: a handler sees free slots until a tid is written */
    }
    registry_count = registry_count + 1;
    return (long)slot;
}

/* Takes a free slot for `tid`; its index, or -1 when memory ran out. */
static long registry_add(pid_t tid)
{
    long slot = take_free_slot();
    if (slot < 0)
        return -1;
    if (!probe_pid_map_put(&registry_index, tid, (size_t)slot)) {
        if (nfree_slots < free_slots_capacity)
            free_slots[nfree_slots++] = (size_t)slot;
        return -1;
    }
    slot_at((size_t)slot)->signal = 0;
    slot_at((size_t)slot)->tid = tid;
    return slot;
}

static void registry_clear_slot(long slot)
{
    struct registry_slot *entry = slot_at((size_t)slot);
    probe_pid_map_remove(&registry_index, entry->tid);
    entry->tid = 0;
    if (nfree_slots == free_slots_capacity) {
        size_t capacity = free_slots_capacity ? 2 * free_slots_capacity : 256;
        size_t *grown = realloc(free_slots, capacity * sizeof *grown);
        if (!grown)
            return; /* the slot stays unused: a few bytes, never a thread left behind */
        free_slots = grown;
        free_slots_capacity = capacity;
    }
    free_slots[nfree_slots++] = (size_t)slot;
}

static void registry_set_signal(pid_t tid, int signal_number)
{
    long slot = registry_find(tid);
    if (slot >= 0)
        slot_at((size_t)slot)->signal = signal_number;
}

static void registry_remove(pid_t tid)
{
    long slot = registry_find(tid);
    if (slot >= 0)
        registry_clear_slot(slot);
}

/* ---- ends that our waits took ------------------------------------------------------------------------------ */

/* A seized thread that ends is reported to us: waitpid(tid) takes the end, and when the thread leads a process of
 * which we are also the parent (`hangdoc run`'s agent diagnosing its command), it reaps that process: its status is
 * kept here for the parent's own bookkeeping (probe_stop_took_end). The last few are enough: a caller asks after
 * each diagnosis. */
#define ENDS_KEPT 64
static pid_t ended_tid[ENDS_KEPT];
static int ended_status[ENDS_KEPT];
static size_t ends_next;

static void keep_end(pid_t tid, int status)
{
    ended_tid[ends_next] = tid;
    ended_status[ends_next] = status;
    ends_next = (ends_next + 1) % ENDS_KEPT;
}

bool probe_stop_took_end(pid_t pid, int *status)
{
    for (size_t i = 0; i < ENDS_KEPT; i++)
        if (ended_tid[i] == pid && pid > 0) {
            *status = ended_status[i];
            ended_tid[i] = 0;
            return true;
        }
    return false;
}

void probe_stop_release_all(void)
{
    int saved = errno;
    for (sig_atomic_t i = 0; i < registry_count; i++) {
        const struct registry_slot *chunk = registry_chunks[(size_t)i / REGISTRY_CHUNK];
        pid_t tid = chunk ? chunk[(size_t)i % REGISTRY_CHUNK].tid : 0;
        if (tid > 0)
            ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)chunk[(size_t)i % REGISTRY_CHUNK].signal);
    }
    errno = saved;
}

/* ---- signal handlers --------------------------------------------------------------------------------------- */

static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
#define NHANDLED COUNT(handled_signals)
static struct sigaction previous_actions[NHANDLED];
static bool installed[NHANDLED];

static void on_fatal_signal(int number)
{
    probe_stop_release_all();
    /* Hand the signal to whoever had it before (the default action ends us, as it would have without hangdoc's
     * stop): it is blocked while this handler runs, and delivered again when it returns. */
    for (size_t i = 0; i < NHANDLED; i++)
        if (handled_signals[i] == number && installed[i]) {
            sigaction(number, &previous_actions[i], NULL);
            installed[i] = false;
        }
    raise(number);
}

void probe_stop_install(void)
{
    struct sigaction action = { .sa_handler = on_fatal_signal };
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < NHANDLED; i++) {
        if (installed[i] || sigaction(handled_signals[i], NULL, &previous_actions[i]) != 0 ||
            previous_actions[i].sa_handler == SIG_IGN)
            continue;
        installed[i] = sigaction(handled_signals[i], &action, NULL) == 0;
    }
}

void probe_stop_uninstall(void)
{
    for (size_t i = 0; i < NHANDLED; i++)
        if (installed[i]) {
            sigaction(handled_signals[i], &previous_actions[i], NULL);
            installed[i] = false;
        }
}

/* ---- facts for explanations -------------------------------------------------------------------------------- */

/* The line after `key` in /proc/<pid>/status (or self), into `value`; false when absent. */
static bool status_field(pid_t pid, const char *key, char *value, size_t size)
{
    char path[64], text[8192];
    if (pid > 0)
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    else
        snprintf(path, sizeof path, "/proc/self/status");
    if (probe_read_file(path, text, sizeof text) < 0)
        return false;
    char pattern[32];
    snprintf(pattern, sizeof pattern, "\n%s:", key);
    const char *line = strstr(text, pattern);
    if (!line)
        return false;
    line += strlen(pattern);
    line += strspn(line, " \t");
    size_t length = strcspn(line, "\n");
    snprintf(value, size, "%.*s", (int)length, line);
    return true;
}

const char *probe_stop_globally_refused(void)
{
    return probe_access_yama_scope() >= 3 ? "Yama ptrace_scope is 3: ptrace is disabled on this machine until reboot" : NULL;
}

/* Says exactly why the kernel refused PTRACE_SEIZE with `error`, in the order the kernel checks. */
static void explain_refusal(pid_t pid, int error, char *why, size_t size)
{
    char value[128];
    long tracer = status_field(pid, "TracerPid", value, sizeof value) ? atol(value) : 0;
    if (error == EPERM && tracer > 0 && tracer == getpid()) {
        snprintf(why, size, "already traced by hangdoc itself (pid %ld): it was asked to stop earlier and has not "
                            "stopped yet", tracer);
        return;
    }
    if (error == EPERM && tracer > 0) {
        char comm[64];
        if (!probe_read_comm((pid_t)tracer, comm, sizeof comm))
            snprintf(comm, sizeof comm, "?");
        snprintf(why, size, "already traced by pid %ld (%s): a process has one tracer at most", tracer, comm);
        return;
    }
    if (error != EPERM && error != EACCES) {
        snprintf(why, size, "ptrace refused: %s", strerror(error));
        return;
    }
    probe_access_explain(pid, (uid_t)-1, PROBE_ACCESS_PTRACE, why, size);
}

/* ---- ancestors --------------------------------------------------------------------------------------------- */


bool probe_stop_is_ancestor(pid_t pid)
{
    static pid_t ancestors[ANCESTORS_MAX];
    static size_t nancestors;
    static pid_t computed_for;
    if (computed_for != getpid()) { /* a fork (hangdoc run's diagnosis) has other ancestors */
        computed_for = getpid();
        nancestors = 0;
        for (pid_t p = getppid(); p > 0 && nancestors < ANCESTORS_MAX; p = probe_parent_of(p))
            ancestors[nancestors++] = p;
    }
    for (size_t i = 0; i < nancestors; i++)
        if (ancestors[i] == pid)
            return true;
    return false;
}

/* ---- stopping ---------------------------------------------------------------------------------------------- */

static char task_state(pid_t pid, pid_t tid)
{
    char path[96], text[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    if (probe_read_file(path, text, sizeof text) <= 0)
        return 'X';
    const char *close = strrchr(text, ')');
    return close && close[1] == ' ' ? close[2] : '?';
}

HD_KEY_COMPARATOR(compare_pid, pid_t, pid_t, )

static char hinted_state(const struct probe_stop_hint *hint, pid_t pid, pid_t tid)
{
    size_t count = hint ? hint->count : 0;
    size_t at = count ? hd_lower_bound(&tid, hint->tids, count, sizeof *hint->tids, compare_pid) : 0;
    return at < count && hint->tids[at] == tid ? hint->states[at] : task_state(pid, tid);
}

/* What one stop keeps while it lists and seizes: the entries' capacity, and which tids have one already. */
struct stop_work {
    struct probe_stopped_process *stopped;
    const struct probe_stop_hint *hint;
    size_t capacity;
    struct probe_pid_map seen; /* tid -> its entry */
    int first_error;
};

/* A new entry for `tid`; NULL when memory ran out. */
static struct probe_stopped_thread *add_entry(struct stop_work *work, pid_t tid)
{
    struct probe_stopped_process *stopped = work->stopped;
    if (stopped->nthreads == work->capacity) {
        size_t grown_capacity = work->capacity ? 2 * work->capacity : 16;
        struct probe_stopped_thread *grown = reallocarray(stopped->threads, grown_capacity, sizeof *grown);
        if (!grown)
            return NULL;
        stopped->threads = grown;
        work->capacity = grown_capacity;
    }
    if (!probe_pid_map_put(&work->seen, tid, stopped->nthreads))
        return NULL;
    struct probe_stopped_thread *entry = &stopped->threads[stopped->nthreads++];
    memset(entry, 0, sizeof *entry);
    entry->tid = tid;
    return entry;
}

/* Seizes and interrupts one thread; errno-style result (0 when seized). */
static int seize(struct probe_stopped_thread *entry)
{
    /* Still ours from an earlier stop it has not reached yet: PTRACE_SEIZE would say EPERM. Ask again. */
    bool already_ours = registry_find(entry->tid) >= 0;
    if (!already_ours) {
        long slot = registry_add(entry->tid);
        if (slot < 0) {
            snprintf(entry->why_not, sizeof entry->why_not, "out of memory for the list of stopped threads");
            return ENOMEM;
        }
        if (ptrace(PTRACE_SEIZE, entry->tid, NULL, NULL) != 0) {
            int error = errno;
            registry_clear_slot(slot);
            return error;
        }
    }
    entry->seized = true;
    if (ptrace(PTRACE_INTERRUPT, entry->tid, NULL, NULL) != 0 && errno == ESRCH)
        entry->gone = true;
    return 0;
}

/* Takes what waitpid said about a seized thread. */
static void take_status(struct probe_stopped_thread *entry, int status)
{
    if (WIFSTOPPED(status)) {
        entry->stopped = true;
        /* PTRACE_EVENT_STOP is our interrupt or a group stop; event 0 is a signal it was about to take */
        if ((status >> 16) == 0) {
            entry->pending_signal = WSTOPSIG(status);
            registry_set_signal(entry->tid, entry->pending_signal);
        }
    } else if (WIFEXITED(status) || WIFSIGNALED(status)) {
        entry->gone = true;
        registry_remove(entry->tid);
        keep_end(entry->tid, status);
    }
}

static bool waiting_for(const struct probe_stopped_thread *entry)
{
    return entry->seized && !entry->stopped && !entry->gone;
}

/* Waits until every seized thread stopped or exited, or the deadline passed. Polls each thread by its tid:
 * waitpid(-1) could reap a child of hangdoc that is no tracee (hangdoc demo's fixture). */
static void wait_for_stops(struct probe_stopped_process *stopped, double deadline)
{
    long pause_ns = 10000;
    for (;;) {
        size_t waiting = 0;
        for (size_t i = 0; i < stopped->nthreads; i++) {
            struct probe_stopped_thread *entry = &stopped->threads[i];
            if (!waiting_for(entry))
                continue;
            int status;
            pid_t got = waitpid(entry->tid, &status, __WALL | WNOHANG);
            if (got == entry->tid)
                take_status(entry, status);
            else if (got < 0 && errno == ECHILD) {
                entry->gone = true;
                registry_remove(entry->tid);
            }
            waiting += waiting_for(entry);
        }
        if (waiting == 0 || probe_monotonic_now() >= deadline)
            return;
        struct timespec pause = { 0, pause_ns };
        nanosleep(&pause, NULL);
        if (pause_ns < 500000) /* a thread that takes longer is rare: poll finely, the wait is short */
            pause_ns *= 2;
    }
}

/* Lists /proc/<pid>/task into *tids (grown as needed, kept by the caller for the next round); how many, or -1 when
 * the process is gone or memory ran out. */
static ssize_t list_tasks(pid_t pid, pid_t **tids, size_t *capacity)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *directory hd_cleanup(closedir) = opendir(path);
    if (!directory)
        return -1;
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(directory))) {
        long tid = strtol(entry->d_name, NULL, 10);
        if (tid <= 0)
            continue;
        if (count == *capacity) {
            size_t grown_capacity = *capacity ? 2 * *capacity : 256;
            pid_t *grown = reallocarray(*tids, grown_capacity, sizeof *grown);
            if (!grown)
                return -1;
            *tids = grown;
            *capacity = grown_capacity;
        }
        (*tids)[count++] = (pid_t)tid;
    }
    return (ssize_t)count;
}

/* Seizes the threads of `tids` not seen yet; returns how many were newly seized, or -ENOMEM. The first refusal
 * is kept in work->first_error. */
static int seize_new(struct stop_work *work, const pid_t *tids, size_t ntids)
{
    int seized = 0;
    for (size_t i = 0; i < ntids; i++) {
        size_t known;
        if (probe_pid_map_get(&work->seen, tids[i], &known))
            continue;
        struct probe_stopped_thread *entry = add_entry(work, tids[i]);
        if (!entry)
            return -ENOMEM;
        char state = hinted_state(work->hint, work->stopped->pid, tids[i]);
        if (state == 'D') {
            snprintf(entry->why_not, sizeof entry->why_not,
                     "in uninterruptible sleep (D): not stopped, its kernel stack shows where it is");
            continue;
        }
        if (state == 'Z' || state == 'X') {
            entry->gone = true;
            continue;
        }
        int error = seize(entry);
        if (error == 0) {
            seized++;
            continue;
        }
        if (error == ENOMEM)
            return -ENOMEM;
        if (error == ESRCH)
            entry->gone = true;
        else if (!entry->why_not[0])
            explain_refusal(tids[i], error, entry->why_not, sizeof entry->why_not);
        if (!work->first_error)
            work->first_error = error;
    }
    return seized;
}

static void note_unstopped(struct probe_stopped_process *stopped, unsigned wait_ms)
{
    for (size_t i = 0; i < stopped->nthreads; i++) {
        struct probe_stopped_thread *entry = &stopped->threads[i];
        if (waiting_for(entry))
            snprintf(entry->why_not, sizeof entry->why_not,
                     "did not stop within %u ms (state %c, probably an uninterruptible sleep): user stack not "
                     "taken, its kernel stack shows where it is", wait_ms, task_state(stopped->pid, entry->tid));
    }
}

static enum probe_stop_result conclude(struct probe_stopped_process *stopped, int first_error, char *why,
                                       size_t why_size)
{
    for (size_t i = 0; i < stopped->nthreads; i++)
        if (stopped->threads[i].stopped)
            return PROBE_STOP_OK;
    bool all_gone = true;
    for (size_t i = 0; i < stopped->nthreads; i++)
        all_gone &= stopped->threads[i].gone;
    if (all_gone || first_error == ESRCH) {
        snprintf(why, why_size, "the process exited before it could be stopped");
        return PROBE_STOP_GONE;
    }
    const char *thread_reason = NULL;
    for (size_t i = 0; i < stopped->nthreads && !thread_reason; i++)
        if (stopped->threads[i].why_not[0])
            thread_reason = stopped->threads[i].why_not;
    if (first_error)
        explain_refusal(stopped->pid, first_error, why, why_size);
    else
        snprintf(why, why_size, "%s", thread_reason ? thread_reason : "no thread stopped in time");
    return PROBE_STOP_REFUSED;
}

enum probe_stop_result probe_stop_process(pid_t pid, unsigned wait_ms, const struct probe_stop_hint *hint,
                                          struct probe_stopped_process *out, char *why, size_t why_size)
{
    *out = (struct probe_stopped_process){ .pid = pid, .stopped_at = probe_monotonic_now() };
    struct stop_work work = { .stopped = out, .hint = hint };
    pid_t *tids = NULL;
    size_t tids_capacity = 0;
    double deadline = out->stopped_at + wait_ms / 1000.0;
    bool out_of_memory = false;
    /* A thread running while its siblings are being stopped can create another: list again until no new one
     * appears (once all are stopped, none can). */
    for (int round = 0; round < RELIST_ROUNDS_MAX; round++) {
        ssize_t ntids = list_tasks(pid, &tids, &tids_capacity);
        if (ntids < 0) {
            work.first_error = work.first_error ? work.first_error : ESRCH;
            break;
        }
        int seized = seize_new(&work, tids, (size_t)ntids);
        if (seized < 0) {
            out_of_memory = true;
            break;
        }
        if (seized == 0)
            break;
        wait_for_stops(out, deadline);
    }
    free(tids);
    probe_pid_map_clear(&work.seen);
    if (out_of_memory) {
        /* every thread seized so far is let go (or, not stopped yet, left to probe_stop_retry_lingering) */
        wait_for_stops(out, deadline);
        probe_stop_release(out);
        snprintf(why, why_size, "out of memory");
        return PROBE_STOP_NO_MEMORY;
    }
    note_unstopped(out, wait_ms);
    return conclude(out, work.first_error, why, why_size);
}

enum probe_stop_result probe_stop_thread(pid_t pid, pid_t tid, unsigned wait_ms, struct probe_stopped_process *out,
                                         char *why, size_t why_size)
{
    *out = (struct probe_stopped_process){ .pid = pid, .stopped_at = probe_monotonic_now() };
    struct stop_work work = { .stopped = out };
    int seized = seize_new(&work, &tid, 1);
    probe_pid_map_clear(&work.seen);
    if (seized < 0) {
        probe_stop_release(out);
        snprintf(why, why_size, "out of memory");
        return PROBE_STOP_NO_MEMORY;
    }
    wait_for_stops(out, out->stopped_at + wait_ms / 1000.0);
    note_unstopped(out, wait_ms);
    return conclude(out, work.first_error, why, why_size);
}

double probe_stop_release(struct probe_stopped_process *stopped)
{
    for (size_t i = 0; i < stopped->nthreads; i++) {
        struct probe_stopped_thread *entry = &stopped->threads[i];
        if (!entry->seized || entry->gone)
            continue;
        if (entry->stopped) {
            if (ptrace(PTRACE_DETACH, entry->tid, NULL, (void *)(long)entry->pending_signal) == 0 ||
                errno == ESRCH) /* ESRCH on a stopped tracee: it was killed meanwhile */
                registry_remove(entry->tid);
        }
        /* not stopped: stays in the registry, probe_stop_retry_lingering() or our exit releases it */
    }
    bool any_seized = false;
    for (size_t i = 0; i < stopped->nthreads; i++)
        any_seized |= stopped->threads[i].seized;
    double stopped_for = any_seized ? probe_monotonic_now() - stopped->stopped_at : 0;
    free(stopped->threads);
    stopped->threads = NULL;
    stopped->nthreads = 0;
    return stopped_for;
}

bool probe_stop_reported_elsewhere(pid_t tid, int status)
{
    long slot = tid > 0 ? registry_find(tid) : -1;
    if (slot < 0)
        return false;
    if (WIFSTOPPED(status)) {
        int pending = (status >> 16) == 0 ? WSTOPSIG(status) : 0;
        ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)pending);
    }
    registry_clear_slot(slot);
    return true;
}

size_t probe_stop_retry_lingering(void)
{
    size_t lingering = 0;
    /* nothing seized (the usual case, checked every few milliseconds between samples): no walk over the slots */
    for (sig_atomic_t i = 0; registry_index.map.count > 0 && i < registry_count; i++) {
        pid_t tid = slot_at((size_t)i)->tid;
        if (tid <= 0)
            continue;
        int status;
        pid_t got = waitpid(tid, &status, __WALL | WNOHANG);
        if (got == tid && WIFSTOPPED(status)) {
            int pending = (status >> 16) == 0 ? WSTOPSIG(status) : 0;
            ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)pending);
            registry_clear_slot(i);
        } else if ((got == tid) || (got < 0 && errno == ECHILD)) {
            registry_clear_slot(i);
            if (got == tid)
                keep_end(tid, status);
        } else {
            lingering++;
        }
    }
    return lingering;
}

bool probe_stop_read_registers(pid_t tid, void *registers, size_t size, uint64_t *pc, uint64_t *sp)
{
    struct user_regs_struct regs;
    struct iovec vector = { .iov_base = &regs, .iov_len = sizeof regs };
    if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_PRSTATUS, &vector) != 0)
        return false;
#if defined(__x86_64__)
    *pc = regs.rip;
    *sp = regs.rsp;
#elif defined(__aarch64__)
    *pc = regs.pc;
    *sp = regs.sp;
#else
    *pc = *sp = 0;
#endif
    if (registers)
        memcpy(registers, &regs, size < sizeof regs ? size : sizeof regs);
    return true;
}

bool probe_stop_read_syscall(pid_t tid, struct hd_syscall *out)
{
#if defined(__x86_64__)
    struct user_regs_struct regs;
    uint64_t pc, sp;
    return probe_stop_read_registers(tid, &regs, sizeof regs, &pc, &sp) &&
           probe_syscall_from_registers(&regs, sizeof regs, out);
#else
    (void)tid;
    (void)out;
    return false;
#endif
}
