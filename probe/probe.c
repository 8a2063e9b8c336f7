/* Sampling a tree several times and folding the samples into one snapshot (probe.h). */
#include "probe.h"

#include "clock.h"
#include "fds.h"
#include "filelocks.h"
#include "fuse.h"
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
#include "golang.h"
#include "jvm.h"
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

/* Two more looks 100 ms apart at the Python frames of threads that ran in every sample: a call that never returns
 * stays in one frame over 200 ms as well as over the samples. */
#define PYTHON_LOOKS_AGAIN 2
#define PYTHON_LOOK_INTERVAL_MS 100

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

/* What an earlier sample saw of `thread`, copied as it was (leaf name included: the sample is freed after). */
static bool copy_sample(const struct hd_thread *thread, struct hd_thread_sample *out)
{
    *out = hd_thread_as_sample(thread);
    out->restart = probe_syscall_is_restart(&thread->syscall);
    out->leaf_function = thread->leaf_function ? strdup(thread->leaf_function) : NULL;
    out->leaf_module = thread->leaf_module ? strdup(thread->leaf_module) : NULL;
    return (!thread->leaf_function || out->leaf_function) && (!thread->leaf_module || out->leaf_module);
}

/* Gives every thread and process of the last sample what each earlier sample saw of it, oldest first: the raw
 * history the analysis folds (analysis/samples.h). False when memory ran out. */
static bool attach_samples(struct hd_snapshot *final, struct hd_snapshot **samples, size_t nsamples)
{
    if (nsamples == 0)
        return true;
    for (size_t p = 0; p < final->nprocesses; p++) {
        struct hd_process *process = &final->processes[p];
        process->earlier = calloc(nsamples, sizeof *process->earlier);
        if (!process->earlier)
            return false;
        process->nearlier = nsamples;
        for (size_t t = 0; t < process->nthreads; t++) {
            struct hd_thread *thread = &process->threads[t];
            thread->earlier = calloc(nsamples, sizeof *thread->earlier);
            if (!thread->earlier)
                return false;
            thread->nearlier = nsamples;
        }
        for (size_t s = 0; s < nsamples; s++) {
            const struct hd_process *then = hd_snapshot_find_process(samples[s], process->pid);
            if (!then)
                continue;
            process->earlier[s] = (struct hd_process_sample){ .present = true, .zombie = then->zombie };
            for (size_t t = 0; t < process->nthreads; t++) {
                const struct hd_thread *thread = hd_process_find_thread(then, process->threads[t].tid);
                if (thread && !copy_sample(thread, &process->threads[t].earlier[s]))
                    return false;
            }
        }
    }
    return true;
}

/* The function a thread in state R ran at when the last sample stopped it: its stack's innermost frame. */
static void name_final_leaves(struct hd_snapshot *final)
{
    for (size_t p = 0; p < final->nprocesses; p++)
        for (size_t t = 0; t < final->processes[p].nthreads; t++) {
            struct hd_thread *thread = &final->processes[p].threads[t];
            bool stopped_running =
                thread->state == 'R' && thread->stack.state == HD_STACK_TAKEN && thread->stack.nframes > 0;
            probe_symbols_set_leaf(thread, stopped_running ? &thread->stack.frames[0] : NULL);
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
        if (s == 0) /* which goroutines of a Go program stay in one wait from here to the last sample */
            probe_go_first_look(earlier[s]);
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
    /* before the stacks: a FUSE client is never stopped (a stop would turn its wait into one in D) */
    if (!probe_read_fuse(final, options->deadline))
        return -ENOMEM;
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
    if (!attach_samples(final, earlier, nearlier))
        result = -ENOMEM;
    /* Python after the waits (a futex in the GIL's state), the native stacks, which stopped each process, and the
     * origins (a forked child's thread states hold its parent's ids); before the owners are placed: a GIL waiter's
     * owner is the holder its interpreter records */
    if (!options->no_python && !probe_read_python(final, options->deadline))
        result = -ENOMEM;
    /* a thread that ran in every sample: does its innermost Python frame stay where it is (one endless call)? */
    if (!options->no_python &&
        !probe_look_again_at_python_spinners(final, PYTHON_LOOKS_AGAIN, PYTHON_LOOK_INTERVAL_MS, options->deadline))
        result = -ENOMEM;
    if (!probe_read_goroutines(final, nearlier ? earlier[0] : NULL, stacks ? probe_stacks_symbols(stacks) : NULL))
        result = -ENOMEM;
    if (!probe_read_jvms(final))
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
    note_departures(final, earlier, nearlier);
    if (stacks) {
        name_final_leaves(final);
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
