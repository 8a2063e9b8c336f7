/* Sampling a tree several times and folding the samples into one snapshot (probe.h). */
#include "probe.h"

#include "clock.h"
#include "fds.h"
#include "filelocks.h"
#include "inherit.h"
#include "job.h"
#include "ledger.h"
#include "libraries.h"
#include "locks.h"
#include "memory.h"
#include "pidns.h"
#include "pipe_holders.h"
#include "origin.h"
#include "pid_map.h"
#include "procfs.h"
#include "proctree.h"
#include "ptrace_stop.h"
#include "python.h"
#include "stacks.h"
#include "symbols.h"
#include "syscalls.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static enum hd_arch build_arch(void)
{
#if defined(__x86_64__)
    return HD_ARCH_X86_64;
#elif defined(__aarch64__)
    return HD_ARCH_AARCH64;
#else
    return HD_ARCH_UNKNOWN;
#endif
}

/* The thread-group id of `pid` (which may name a thread), or -errno. */
static pid_t thread_group_of(pid_t pid)
{
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    if (length < 0)
        return (pid_t)length;
    const char *line = strstr(text, "\nTgid:");
    long tgid;
    if (!line || sscanf(line + 6, "%ld", &tgid) != 1 || tgid <= 0)
        return -ENOENT;
    return (pid_t)tgid;
}

/* probe_check_pid(), and the process `pid` belongs to in *tgid when it is OK: one read of its status. */
static enum probe_pid_problem check_pid_and_group(pid_t pid, pid_t *group)
{
    if (pid <= 0)
        return PROBE_PID_INVALID;
    if (pid == getpid())
        return PROBE_PID_SELF;
    pid_t tgid = thread_group_of(pid);
    *group = tgid;
    if (tgid == -ENOENT || tgid == -ESRCH)
        return PROBE_PID_GONE;
    if (tgid == -EACCES || tgid == -EPERM)
        return PROBE_PID_PERMISSION;
    if (tgid < 0)
        return PROBE_PID_UNREADABLE;
    return tgid == getpid() ? PROBE_PID_SELF : PROBE_PID_OK;
}

enum probe_pid_problem probe_check_pid(pid_t pid)
{
    pid_t tgid;
    return check_pid_and_group(pid, &tgid);
}

const char *probe_pid_problem_text(enum probe_pid_problem problem)
{
    static const char *const texts[] = {
        [PROBE_PID_OK] = "ok",
        [PROBE_PID_INVALID] = "not a process id",
        [PROBE_PID_SELF] = "that is hangdoc itself",
        [PROBE_PID_GONE] = "no such process",
        [PROBE_PID_PERMISSION] = "permission denied reading /proc",
        [PROBE_PID_UNREADABLE] = "could not read /proc",
    };
    return (size_t)problem < COUNT(texts) ? texts[problem] : "unknown problem";
}

static struct hd_snapshot *snapshot_new(const struct probe_options *options)
{
    struct hd_snapshot *snapshot = calloc(1, sizeof *snapshot);
    if (!snapshot)
        return NULL;
    snapshot->arch = build_arch();
    snapshot->samples = options->samples;
    snapshot->interval_ms = options->interval_ms;
    snapshot->ptrace_why_not = options->no_ptrace ? "--no-ptrace: no process was stopped, no native stacks" : NULL;
    struct utsname names;
    if (uname(&names) == 0) {
        snprintf(snapshot->host, sizeof snapshot->host, "%s", names.nodename);
        snprintf(snapshot->kernel, sizeof snapshot->kernel, "%s", names.release);
    }
    /* the host's name can repeat across a cluster's reports (a pod's, a default one): its boot id does not */
    if (probe_read_file("/proc/sys/kernel/random/boot_id", snapshot->boot_id, sizeof snapshot->boot_id) > 0)
        snapshot->boot_id[strcspn(snapshot->boot_id, "\n")] = '\0';
    else
        snapshot->boot_id[0] = '\0';
    return snapshot;
}

/* Takes each named pid's process once, noting those that name a thread or nothing. */
static bool resolve_roots(const struct probe_options *options, struct hd_snapshot *snapshot)
{
    snapshot->roots = calloc(options->npids ? options->npids : 1, sizeof *snapshot->roots);
    if (!snapshot->roots)
        return false;
    for (size_t i = 0; i < options->npids; i++) {
        pid_t pid = options->pids[i];
        pid_t tgid;
        enum probe_pid_problem problem = check_pid_and_group(pid, &tgid);
        if (problem != PROBE_PID_OK) {
            hd_snapshot_note(snapshot, HD_NOTE_TARGET, pid, 0, "pid %d: %s", (int)pid, probe_pid_problem_text(problem));
            continue;
        }
        if (tgid != pid)
            hd_snapshot_note(snapshot, HD_NOTE_TARGET, tgid, pid,
                             "pid %d is a thread of process %d: diagnosing the process", (int)pid, (int)tgid);
        bool seen = false;
        for (size_t r = 0; r < snapshot->nroots; r++)
            seen |= snapshot->roots[r] == tgid;
        if (!seen)
            snapshot->roots[snapshot->nroots++] = tgid;
    }
    return true;
}

static double realtime_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void sleep_ms(unsigned milliseconds)
{
    struct timespec left = { .tv_sec = milliseconds / 1000, .tv_nsec = (long)(milliseconds % 1000) * 1000000 };
    while (nanosleep(&left, &left) < 0 && errno == EINTR)
        ;
}

static bool same_syscall(const struct hd_syscall *a, const struct hd_syscall *b)
{
    /* A thread that is "running" twice did not stay in one call, but it ran: CPU time says so. */
    return a->state == b->state && a->nr == b->nr && memcmp(a->args, b->args, sizeof a->args) == 0;
}

struct thread_history {
    bool seen;
    struct hd_thread first;
    struct hd_thread last;
};

static void compare_appearance(struct hd_thread *summary, struct thread_history *history,
                               const struct hd_thread *seen)
{
    if (history->seen) {
        const struct hd_thread *before = &history->last;
        /* switch counts only where both reads have them: a last sample cut short by the deadline has not */
        bool switches_known = seen->switches_known && before->switches_known;
        if (seen->cpu_time_ns != before->cpu_time_ns ||
            (switches_known && (seen->voluntary_switches != before->voluntary_switches ||
                                seen->involuntary_switches != before->involuntary_switches)))
            summary->progressing = true;
        /* an unread system call (the last sample's, cut short by the deadline) is no change */
        bool syscalls_read = seen->syscall.state != HD_SYSCALL_UNREAD && before->syscall.state != HD_SYSCALL_UNREAD;
        if (syscalls_read && !same_syscall(&seen->syscall, &before->syscall)) {
            summary->syscall_changed = true;
            summary->progressing = true;
        }
    } else {
        history->first = *seen;
        history->seen = true;
    }
    history->last = *seen;
}

/* In a futex wait at the address of `last`'s futex wait. An earlier sample reads no wait channel, so a wait that a
 * stop (an earlier diagnosis's) made the kernel resume through restart_syscall is not decoded there: its argument
 * registers are still the futex call's (syscalls.c), the address first. */
static bool on_the_same_futex(const struct hd_thread *thread, const struct hd_thread *last)
{
    if (thread->syscall.state != HD_SYSCALL_IN || last->syscall.state != HD_SYSCALL_IN ||
        last->wait.kind != HD_WAIT_FUTEX)
        return false;
    if (thread->wait.kind == HD_WAIT_FUTEX)
        return thread->wait.address == last->wait.address;
    return probe_syscall_is_restart(&thread->syscall) && thread->syscall.args[0] == last->wait.address;
}

/* What waking up and going back to sleep costs at most: a futex wake, the return to user space, the new call. A
 * loaded machine stretches the time it takes, not the CPU it uses. */
#define WAKE_UP_CPU_NS 2000000ULL
#define WAKE_UP_VOLUNTARY_SWITCHES 2

/* Was `thread` (an earlier sample of `last`) in the last sample's call with the same arguments, or on its way
 * there: on a CPU, between two calls, or resuming it through restart_syscall (which keeps a futex's address)? */
static bool on_the_way_to_the_same_call(const struct hd_thread *thread, const struct hd_thread *last)
{
    switch (thread->syscall.state) {
    case HD_SYSCALL_RUNNING:
    case HD_SYSCALL_NONE:
        return true;
    case HD_SYSCALL_IN:
        if (same_syscall(&thread->syscall, &last->syscall))
            return true;
        return probe_syscall_is_restart(&thread->syscall) && last->wait.kind == HD_WAIT_FUTEX &&
               thread->syscall.args[0] == last->syscall.args[0];
    case HD_SYSCALL_UNREAD:
        return false;
    }
    return false;
}

/* A thread caught on a CPU (or between calls) on its way back into the very wait the last sample found it in: an
 * earlier diagnosis's stop ended its wait, and a loaded machine let it run again only a moment ago; or a spurious
 * wake-up. It changed calls and counted a switch, but made no progress: nothing but the way back into the same call
 * with the same arguments, and no more CPU than a wake-up takes. Without this, a deadlocked thread seen so in the
 * second of two diagnoses counts as running, a possible waker of its partners. */
static bool only_back_into_the_same_wait(pid_t pid, const struct hd_thread *summary, struct hd_snapshot **samples,
                                         size_t nsamples, const struct thread_history *history)
{
    if (summary->syscall.state != HD_SYSCALL_IN || summary->state == 'R' || !history->first.switches_known ||
        !summary->switches_known || summary->cpu_time_ns - history->first.cpu_time_ns > WAKE_UP_CPU_NS ||
        summary->voluntary_switches - history->first.voluntary_switches > WAKE_UP_VOLUNTARY_SWITCHES)
        return false;
    bool away = false;
    for (size_t s = 0; s < nsamples; s++) {
        const struct hd_process *then = hd_snapshot_find_process(samples[s], pid);
        const struct hd_thread *thread = then ? hd_process_find_thread(then, summary->tid) : NULL;
        if (!thread)
            continue;
        if (!on_the_way_to_the_same_call(thread, summary))
            return false;
        away |= thread->state == 'R' || thread->syscall.state != HD_SYSCALL_IN || !same_syscall(&thread->syscall,
                                                                                                  &summary->syscall);
    }
    return away;
}

static void fold_samples(struct hd_snapshot *final, struct hd_snapshot **samples, size_t nsamples)
{
    for (size_t p = 0; p < final->nprocesses; p++) {
        struct hd_process *process = &final->processes[p];
        for (size_t t = 0; t < process->nthreads; t++) {
            struct hd_thread *summary = &process->threads[t];
            struct thread_history history = { 0 };
            unsigned seen = 0, in_d = 0, in_r = 0, on_this_futex = 0;
            for (size_t s = 0; s < nsamples; s++) {
                const struct hd_process *then = hd_snapshot_find_process(samples[s], process->pid);
                const struct hd_thread *thread = then ? hd_process_find_thread(then, summary->tid) : NULL;
                if (!thread)
                    continue;
                compare_appearance(summary, &history, thread);
                seen++;
                in_d += thread->state == 'D';
                in_r += thread->state == 'R';
                on_this_futex += on_the_same_futex(thread, summary);
            }
            compare_appearance(summary, &history, summary);
            if (summary->progressing && only_back_into_the_same_wait(process->pid, summary, samples, nsamples, &history))
                summary->progressing = false;
            summary->samples_seen = seen + 1;
            summary->samples_on_this_futex = on_this_futex + on_the_same_futex(summary, summary);
            summary->samples_in_state_d = in_d + (summary->state == 'D');
            summary->samples_in_state_r = in_r + (summary->state == 'R');
            summary->cpu_delta_ns = summary->cpu_time_ns - history.first.cpu_time_ns;
            if (summary->switches_known && history.first.switches_known) {
                summary->switches_delta = summary->voluntary_switches + summary->involuntary_switches -
                                          history.first.voluntary_switches - history.first.involuntary_switches;
                summary->voluntary_switches_delta = summary->voluntary_switches - history.first.voluntary_switches;
            }
        }
    }
}

/* Each thread's last futex wait in an earlier sample (snapshot.h: earlier_futex). */
static void note_earlier_futex_waits(struct hd_snapshot *final, struct hd_snapshot **samples, size_t nsamples)
{
    for (size_t p = 0; p < final->nprocesses; p++) {
        struct hd_process *process = &final->processes[p];
        for (size_t s = nsamples; s-- > 0;) {
            const struct hd_process *then = hd_snapshot_find_process(samples[s], process->pid);
            for (size_t t = 0; then && t < process->nthreads; t++) {
                struct hd_thread *summary = &process->threads[t];
                const struct hd_thread *thread = hd_process_find_thread(then, summary->tid);
                if (summary->earlier_futex.address || !thread || thread->syscall.state != HD_SYSCALL_IN ||
                    thread->wait.kind != HD_WAIT_FUTEX)
                    continue;
                summary->earlier_futex.address = thread->wait.address;
                summary->earlier_futex.operation = thread->wait.operation;
                summary->earlier_futex.expected = thread->wait.expected;
                summary->earlier_futex.futex_private = thread->wait.futex_private;
                summary->earlier_futex.timeout = thread->wait.timeout;
            }
        }
    }
}

/* How far apart two stops in one unnamed function may lie: a stripped library's static spin loop (OpenBLAS's,
 * waiting inside an OpenMP region) is caught at a different instruction each time, all within a few hundred
 * bytes; a computation moves through functions kilobytes apart. */
#define UNNAMED_LEAF_SPAN 4096

/* Two leaves in the same place: the same function, or, where no symbol names them ("module+0xoffset"), the same
 * module within UNNAMED_LEAF_SPAN bytes. */
static bool same_leaf(const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return true;
    const char *plus_a = strrchr(a, '+'), *plus_b = strrchr(b, '+');
    if (!plus_a || !plus_b || plus_a - a != plus_b - b || strncmp(a, b, (size_t)(plus_a - a)) != 0 ||
        strncmp(plus_a, "+0x", 3) != 0 || strncmp(plus_b, "+0x", 3) != 0)
        return false;
    char *end_a, *end_b;
    unsigned long long offset_a = strtoull(plus_a + 3, &end_a, 16), offset_b = strtoull(plus_b + 3, &end_b, 16);
    if (*end_a || *end_b)
        return false;
    return (offset_a > offset_b ? offset_a - offset_b : offset_b - offset_a) <= UNNAMED_LEAF_SPAN;
}

/* The function each thread in state R ran at each sample that stopped it: the earlier samples' leaves, and the
 * innermost frame of the final stack. */
static void fold_leaves(struct hd_snapshot *final, struct hd_snapshot **samples, size_t nsamples)
{
    for (size_t p = 0; p < final->nprocesses; p++) {
        struct hd_process *process = &final->processes[p];
        for (size_t t = 0; t < process->nthreads; t++) {
            struct hd_thread *summary = &process->threads[t];
            const char *names[PROBE_SAMPLES_MAX + 1];
            size_t count = 0;
            for (size_t s = 0; s < nsamples && count < PROBE_SAMPLES_MAX; s++) {
                const struct hd_process *then = hd_snapshot_find_process(samples[s], process->pid);
                const struct hd_thread *thread = then ? hd_process_find_thread(then, summary->tid) : NULL;
                if (thread && thread->leaf_function)
                    names[count++] = thread->leaf_function;
            }
            char *final_leaf = NULL;
            if (summary->state == 'R' && summary->stack.state == HD_STACK_TAKEN && summary->stack.nframes > 0)
                final_leaf = probe_symbols_frame_name(&summary->stack.frames[0]);
            if (final_leaf)
                names[count++] = final_leaf;
            summary->leaf_samples = (unsigned)count;
            summary->leaf_same = count > 0;
            for (size_t i = 1; i < count; i++)
                summary->leaf_same &= same_leaf(names[i], names[0]);
            free(summary->leaf_function);
            /* when they differ, the last one seen */
            summary->leaf_function = count ? strdup(names[count - 1]) : NULL;
            free(final_leaf);
        }
    }
}

/* A zombie of the last sample that every earlier sample also saw as a zombie: nobody reaped it in all that time. */
static void mark_lasting_zombies(struct hd_snapshot *final, struct hd_snapshot **samples, size_t nsamples)
{
    for (size_t p = 0; p < final->nprocesses; p++) {
        struct hd_process *process = &final->processes[p];
        process->zombie_throughout = process->zombie;
        for (size_t s = 0; s < nsamples && process->zombie_throughout; s++) {
            const struct hd_process *then = hd_snapshot_find_process(samples[s], process->pid);
            process->zombie_throughout = then && then->zombie;
        }
    }
}

/* Threads and processes that earlier samples saw and the last one did not, each noted once. */
static void note_departures(struct hd_snapshot *final, struct hd_snapshot **samples, size_t nsamples)
{
    struct probe_pid_map processes_noted = { 0 }, threads_noted = { 0 };
    for (size_t s = 0; s < nsamples; s++)
        for (size_t p = 0; p < samples[s]->nprocesses; p++) {
            const struct hd_process *then = &samples[s]->processes[p];
            const struct hd_process *now = hd_snapshot_find_process(final, then->pid);
            if (!now) {
                if (probe_pid_map_add(&processes_noted, then->pid, 0, NULL)) {
                    hd_snapshot_note(final, HD_NOTE_DEPARTED, then->pid, 0,
                                     "process %d exited during sampling", (int)then->pid);
                    hd_snapshot_add_departed(final, then);
                }
                continue;
            }
            for (size_t t = 0; t < then->nthreads; t++) {
                pid_t tid = then->threads[t].tid;
                if (!hd_process_find_thread(now, tid) && probe_pid_map_add(&threads_noted, tid, 0, NULL))
                    hd_snapshot_note(final, HD_NOTE_DEPARTED, then->pid, tid,
                                     "thread %d exited during sampling", (int)tid);
            }
        }
    probe_pid_map_clear(&processes_noted);
    probe_pid_map_clear(&threads_noted);
}

/* The stack taker, unless --no-ptrace or ptrace is off on this machine (ptrace_why_not then says so). */
static struct probe_stacks *start_stacks(const struct probe_options *options, struct hd_snapshot *final)
{
    if (options->no_ptrace || (final->ptrace_why_not = probe_stop_globally_refused()))
        return NULL;
    struct probe_stacks *stacks = probe_stacks_new(!options->no_debug_files);
    if (!stacks)
        final->ptrace_why_not = "out of memory";
    return stacks;
}

/* What a sample costs per thread before one was timed: reading 10,000 threads' stat, sched and syscall files takes
 * about 0.3 s on a small machine (a guess on the high side, to leave the last sample its time). */
#define SAMPLE_SECONDS_PER_THREAD 40e-6

/* Whether an earlier sample still fits before the deadline: it, the interval, and the last (full) sample, which
 * reads more per thread (take it as twice a sample), must all be done by then; the rest of the time is the
 * report's. Before the first sample, its cost is guessed from the threads the tree has at least. */
static bool time_for_a_sample(const struct probe_options *options, const struct probe_tree *tree,
                              const struct hd_snapshot *final, double last_read_s)
{
    if (options->deadline <= 0)
        return true;
    if (last_read_s == 0)
        last_read_s = SAMPLE_SECONDS_PER_THREAD * (double)probe_tree_expected_threads(tree, final->roots,
                                                                                       final->nroots);
    return probe_monotonic_now() + options->interval_ms / 1000.0 + 3 * last_read_s <= options->deadline;
}

/* The interval, cut short by the deadline: the last sample must come before it. */
static unsigned interval_before_deadline(const struct probe_options *options)
{
    if (options->deadline <= 0)
        return options->interval_ms;
    double left_ms = (options->deadline - probe_monotonic_now()) * 1000;
    return left_ms <= 0 ? 0 : left_ms < options->interval_ms ? (unsigned)left_ms : options->interval_ms;
}

/* Every sample but the last, `interval_ms` apart, with the leaf function of each running thread; as many of
 * `count` as the deadline leaves time for (*taken says how many). */
static int read_earlier_samples(struct probe_tree *tree, const struct probe_options *options,
                                const struct hd_snapshot *final, struct probe_stacks *stacks,
                                struct hd_snapshot **earlier, unsigned count, unsigned *taken)
{
    double last_read_s = 0;
    for (unsigned s = 0; s < count && time_for_a_sample(options, tree, final, last_read_s); s++) {
        earlier[s] = snapshot_new(options);
        if (!earlier[s])
            return -ENOMEM;
        *taken = s + 1;
        double started = probe_monotonic_now();
        if (stacks) /* a thread that stopped late since: let go, so that its state is its own */
            probe_stacks_settle(stacks);
        int read = probe_tree_read(tree, final->roots, final->nroots, getpid(), PROBE_DETAIL_DYNAMIC, earlier[s]);
        if (read != 0)
            return read;
        if (!hd_snapshot_index_build(earlier[s]))
            return -ENOMEM;
        if (stacks)
            probe_stacks_sample_leaves(stacks, earlier[s]);
        last_read_s = probe_monotonic_now() - started;
        unsigned interval_ms = interval_before_deadline(options);
        if (stacks)
            probe_stacks_pause(stacks, interval_ms);
        else
            sleep_ms(interval_ms);
    }
    return 0;
}

/* Says in the notes what the deadline left out. */
static void note_deadline_cuts(struct hd_snapshot *final, unsigned samples_wanted, unsigned samples_taken,
                               const struct probe_stacks_skipped *skipped)
{
    if (samples_taken < samples_wanted)
        hd_snapshot_note(final, HD_NOTE_DEADLINE, 0, 0,
                         "--timeout near: took %u of %u samples", samples_taken, samples_wanted);
    if (skipped->processes > 0)
        hd_snapshot_note(final, HD_NOTE_DEADLINE, 0, 0,
                         "--timeout near: native stacks of %zu of %zu processes not taken",
                         skipped->processes, skipped->stoppable);
    if (skipped->threads > 0)
        hd_snapshot_note(final, HD_NOTE_DEADLINE, skipped->threads_of_process, 0,
                         "--timeout near: native stacks of %zu of %zu threads of process %d not taken",
                         skipped->threads, skipped->threads_in_process, (int)skipped->threads_of_process);
}

/* The waits of the threads whose system call came from their registers while stopped (stacks.c): their syscall
 * files were unreadable (CAP_SYS_PTRACE without CAP_DAC_READ_SEARCH attaches but does not open the owner's 0400
 * files), so the last sample could not decode them. One note per process says where they came from. */
static void decode_waits_from_registers(struct hd_snapshot *final)
{
    struct timespec monotonic, realtime;
    clock_gettime(CLOCK_MONOTONIC, &monotonic);
    clock_gettime(CLOCK_REALTIME, &realtime);
    const struct probe_clocks clocks = {
        .monotonic_ns = (int64_t)monotonic.tv_sec * 1000000000 + monotonic.tv_nsec,
        .realtime_ns = (int64_t)realtime.tv_sec * 1000000000 + realtime.tv_nsec,
    };
    for (size_t p = 0; p < final->nprocesses; p++) {
        struct hd_process *process = &final->processes[p];
        size_t decoded = 0;
        for (size_t t = 0; t < process->nthreads; t++) {
            struct hd_thread *thread = &process->threads[t];
            if (!thread->syscall_from_registers)
                continue;
            decoded++;
            if (thread->syscall.state != HD_SYSCALL_IN)
                continue;
            thread->syscall.name = probe_syscall_name(process->arch, thread->syscall.nr);
            pid_t pid = process->pid;
            probe_decode_wait(&thread->syscall, thread->wchan, probe_read_memory_of, &pid, &clocks, &thread->wait);
            probe_read_wait_fds(pid, &thread->syscall, &thread->wait);
        }
        if (decoded > 0) {
            probe_read_locks(process); /* the mutexes and condition variables at their futexes, as the sample does */
            hd_snapshot_note(final, HD_NOTE_PROCFS, process->pid, 0,
                             "the system calls of %zu thread%s were read from their registers while stopped for "
                             "their stacks: their syscall files are unreadable",
                             decoded, decoded == 1 ? "" : "s");
        }
    }
}

/* The last sample, read whole, with the native stacks: what the report stands on. */
static int read_final_sample(struct probe_tree *tree, const struct probe_options *options,
                             struct hd_snapshot *final, struct probe_stacks *stacks,
                             struct probe_stacks_skipped *skipped)
{
    if (stacks)
        probe_stacks_settle(stacks);
    int read = probe_tree_read(tree, final->roots, final->nroots, getpid(), PROBE_DETAIL_FULL, final);
    if (read != 0)
        return read;
    probe_ledger_apply(final, options->ledger_dir);
    if (stacks) {
        *skipped = probe_stacks_take(stacks, final, options->deadline);
        decode_waits_from_registers(final);
    }
    return hd_snapshot_index_build(final) ? 0 : -ENOMEM;
}

/* Everything that is worked out from the samples once they are all read. */
static int conclude(struct hd_snapshot *final, struct hd_snapshot **earlier, unsigned nearlier,
                    struct probe_stacks *stacks, const struct probe_options *options)
{
    int result = 0;
    final->pid_namespace = probe_pid_namespace_of("self");
    final->initial_pid_namespace = final->pid_namespace == PROBE_INITIAL_PID_NAMESPACE;
    probe_mark_origins(final);
    note_earlier_futex_waits(final, earlier, nearlier);
    /* Python after the waits (a futex in the GIL's state), the native stacks, which stopped each process, and the
     * origins (a forked child's thread states hold its parent's ids); before the owners are placed: a GIL waiter's
     * owner is the holder its interpreter records */
    if (!options->no_python && !probe_read_python(final, options->deadline))
        result = -ENOMEM;
    probe_translate_namespaced_ids(final);
    probe_resolve_file_locks(final);
    probe_resolve_owners(final);
    struct probe_unix_socket_table unix_sockets;
    int error = probe_read_unix_sockets(&unix_sockets);
    if (error)
        hd_snapshot_note(final, HD_NOTE_SOCKETS, 0, 0, "unix socket peers and names: sock_diag refused: %s",
                         strerror(-error));
    if (!probe_unix_socket_peers(&unix_sockets, &final->unix_peers, &final->nunix_peers))
        result = -ENOMEM;
    probe_refine_origins(final);
    /* after the origins: a child the rank forked is its worker, one a wrapper exec'd is the rank itself */
    if (!probe_label_jobs(final))
        result = -ENOMEM;
    probe_classify_fds(final, &unix_sockets);
    probe_unix_socket_table_release(&unix_sockets);
    probe_prove_inherited_fds(final);
    if (!probe_find_outside_pipe_holders(final, options->deadline))
        result = -ENOMEM;
    if (!probe_read_libraries(final))
        result = -ENOMEM;
    fold_samples(final, earlier, nearlier);
    note_departures(final, earlier, nearlier);
    mark_lasting_zombies(final, earlier, nearlier);
    if (stacks) {
        fold_leaves(final, earlier, nearlier);
        probe_stacks_account(stacks, final);
    }
    if (final->nprocesses == 0)
        result = -ESRCH;
    return result;
}

int probe_snapshot(const struct probe_options *options, struct hd_snapshot **out)
{
    *out = NULL;
    struct hd_snapshot *final = snapshot_new(options);
    if (!final || !resolve_roots(options, final)) {
        hd_snapshot_free(final);
        return -ENOMEM;
    }
    *out = final;
    if (final->nroots == 0)
        return -ESRCH;
    struct probe_tree *tree = probe_tree_new();
    if (!tree)
        return -ENOMEM;
    probe_tree_set_deadlines(tree, options->deadline, options->last_call);

    unsigned nsamples = options->samples ? options->samples : 1;
    if (nsamples > PROBE_SAMPLES_MAX)
        nsamples = PROBE_SAMPLES_MAX;
    struct probe_stacks *stacks = start_stacks(options, final);
    struct hd_snapshot **earlier = calloc(nsamples, sizeof *earlier);
    unsigned nearlier = 0;
    struct probe_stacks_skipped skipped = { 0 };
    double started = probe_monotonic_now();
    int result = earlier ? read_earlier_samples(tree, options, final, stacks, earlier, nsamples - 1, &nearlier)
                         : -ENOMEM;
    if (result == 0)
        result = read_final_sample(tree, options, final, stacks, &skipped);
    final->sampling_s = probe_monotonic_now() - started;
    final->taken_at = realtime_now();
    final->samples = nearlier + 1;
    if (result == 0) {
        note_deadline_cuts(final, nsamples, nearlier + 1, &skipped);
        result = conclude(final, earlier, nearlier, stacks, options);
    }
    for (unsigned s = 0; earlier && s < nearlier; s++)
        hd_snapshot_free(earlier[s]);
    free(earlier);
    probe_tree_free(tree);
    probe_stacks_free(stacks);
    /* once every thread is let go and asleep again, its wait as it now looks */
    if (result == 0)
        probe_ledger_record(final, options->ledger_dir);
    return result;
}

void probe_release_stopped(void)
{
    probe_stop_release_all();
}
