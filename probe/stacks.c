/* Stop, unwind, let go, then name: native stacks for a snapshot (stacks.h). */
#include "stacks.h"

#include "call_target.h"
#include "clock.h"
#include "fuse.h"
#include "maps.h"
#include "pid_map.h"
#include "ptrace_stop.h"
#include "symbols.h"
#include "unwind.h"
#include "util.h"

#include <stdio.h>
#include <sys/user.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A thread that takes longer than this to stop is in an uninterruptible sleep (or the machine is very busy). */
#define STOP_WAIT_MS 250
#define LEAF_STOP_WAIT_MS 100
#define LEAF_MAPPINGS_MAX 65536
/* How soon a thread that stopped late is let go while hangdoc waits between samples. */
#define LINGER_POLL_MS 5
/* While a process is stopped, the deadline is looked at every this many threads unwound (a clock read costs
 * less than one unwind, but not nothing). */
#define DEADLINE_CHECK_THREADS 32
/* What stopping and letting go one thread costs, unwinding aside: PTRACE_SEIZE, PTRACE_INTERRUPT, the wait for its
 * stop and the detach, about 20 us each on a small machine (taken high). A process whose threads cannot all be
 * stopped and let go before the deadline is not stopped at all: letting go of 10,000 threads after the deadline
 * could take the run past --timeout. */
#define STOP_SECONDS_PER_THREAD 40e-6

struct stopped_time {
    pid_t pid;
    double seconds;
};

struct probe_stacks {
    struct probe_symbols *symbols;
    struct stopped_time *times;
    size_t ntimes;
    size_t capacity;
    struct probe_pid_map time_of; /* pid -> its entry in times */
    size_t processes_stopped;
    size_t processes_refused;
    double deadline; /* of probe_stacks_take: monotonic seconds, 0 for none */
    struct probe_stacks_skipped skipped;
};

struct probe_stacks *probe_stacks_new(bool debug_files)
{
    struct probe_stacks *stacks cleanup_free = calloc(1, sizeof *stacks);
    if (!stacks)
        return NULL;
    stacks->symbols = probe_symbols_new();
    if (!stacks->symbols)
        return NULL;
    probe_symbols_use_debug_files(stacks->symbols, debug_files);
    probe_stop_install();
    return steal_pointer(&stacks);
}

struct probe_symbols *probe_stacks_symbols(struct probe_stacks *stacks)
{
    return stacks->symbols;
}

void probe_stacks_free(struct probe_stacks *stacks)
{
    if (!stacks)
        return;
    probe_stop_retry_lingering();
    probe_stop_uninstall();
    probe_symbols_free(stacks->symbols);
    free(stacks->times);
    probe_pid_map_clear(&stacks->time_of);
    free(stacks);
}

static void add_stopped_time(struct probe_stacks *stacks, pid_t pid, double seconds)
{
    size_t known;
    if (probe_pid_map_get(&stacks->time_of, pid, &known)) {
        stacks->times[known].seconds += seconds;
        return;
    }
    if (!probe_pid_map_put(&stacks->time_of, pid, stacks->ntimes))
        return;
    if (stacks->ntimes == stacks->capacity) {
        size_t capacity = stacks->capacity ? 2 * stacks->capacity : 64;
        struct stopped_time *grown = realloc(stacks->times, capacity * sizeof *grown);
        if (!grown) {
            probe_pid_map_remove(&stacks->time_of, pid);
            return;
        }
        stacks->times = grown;
        stacks->capacity = capacity;
    }
    stacks->times[stacks->ntimes++] = (struct stopped_time){ pid, seconds };
}

/* ---- threads that stop late --------------------------------------------------------------------------------- */

void probe_stacks_settle(struct probe_stacks *stacks)
{
    (void)stacks; /* the registry of seized threads is ptrace_stop's */
    probe_stop_retry_lingering();
}

void probe_stacks_pause(struct probe_stacks *stacks, unsigned milliseconds)
{
    (void)stacks;
    double end = probe_monotonic_now() + milliseconds / 1000.0;
    for (;;) {
        size_t lingering = probe_stop_retry_lingering();
        double left = end - probe_monotonic_now();
        if (left <= 0)
            return;
        /* nothing seized: one sleep; an interrupted sleep just goes round again */
        if (lingering && left > LINGER_POLL_MS / 1000.0)
            left = LINGER_POLL_MS / 1000.0;
        struct timespec pause = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
        nanosleep(&pause, NULL);
    }
}

/* Why a process is not even asked to stop, or NULL. */
static const char *never_stopped(const struct hd_process *process)
{
    if (process->kernel_thread)
        return "a kernel thread has no user stack";
    if (process->zombie)
        return "a zombie has no stack";
    if (process->pid == getpid())
        return "hangdoc does not stop itself";
    if (probe_stop_is_ancestor(process->pid))
        return "hangdoc never stops its own ancestors";
    /* a frozen task does not stop for ptrace until it is thawed: waiting for its stop would wait for the thaw */
    if (process->frozen)
        return "its cgroup is frozen: hangdoc does not stop a frozen process";
    return NULL;
}

static void fail_stack(struct hd_thread *thread, enum hd_stack_state state, const char *why)
{
    hd_stack_release(&thread->stack);
    thread->stack.state = state;
    thread->stack.why_not = why ? strdup(why) : NULL;
}

/* ---- the final sample: whole stacks ------------------------------------------------------------------------ */

static void take_process_unstoppable(struct hd_process *process)
{
    const char *skip = never_stopped(process);
    for (size_t t = 0; t < process->nthreads; t++)
        fail_stack(&process->threads[t], HD_STACK_NOT_TAKEN, skip);
}

struct unwound {
    pid_t tid;
    bool taken;
    bool deadline_passed; /* not unwound: the deadline came while its process was stopped */
    bool truncated;
    const char *why; /* static */
    char why_not[PROBE_STOP_WHY_MAX];
    size_t npcs;
    uint64_t pcs[PROBE_UNWIND_DEPTH_MAX];
    int signals[PROBE_UNWIND_DEPTH_MAX]; /* unwind.h: the signal trampolines' signals */
    bool syscall_read; /* for a thread whose syscall file was unreadable: from its registers */
    struct hd_syscall syscall;
};

static bool deadline_passed(const struct probe_stacks *stacks)
{
    return stacks->deadline > 0 && probe_monotonic_now() >= stacks->deadline;
}

/* Whether stopping all of `process` and letting it go again would end after the deadline. */
static bool too_late_to_stop(const struct probe_stacks *stacks, const struct hd_process *process)
{
    return stacks->deadline > 0 &&
           probe_monotonic_now() + STOP_SECONDS_PER_THREAD * (double)process->nthreads >= stacks->deadline;
}

/* While the process is stopped: only registers and memory, nothing slower. Once the deadline passes, the
 * threads not unwound yet are let go with the rest (one process of 10,000 threads takes seconds). */
static void unwind_stopped(struct probe_stacks *stacks, const struct hd_process *process,
                           const struct probe_stopped_process *stopped, struct unwound *out)
{
    struct probe_unwinder *unwinder =
        probe_unwind_begin(process->pid, process->mappings, process->nmappings, stacks->symbols);
    bool late = false;
    for (size_t i = 0; i < stopped->nthreads; i++) {
        const struct probe_stopped_thread *entry = &stopped->threads[i];
        struct unwound *result = &out[i];
        result->tid = entry->tid;
        if (!late && i % DEADLINE_CHECK_THREADS == DEADLINE_CHECK_THREADS - 1)
            late = deadline_passed(stacks);
        if (late) {
            result->deadline_passed = true;
            snprintf(result->why_not, sizeof result->why_not, "--timeout near: not unwound");
            continue;
        }
        if (!entry->stopped) {
            snprintf(result->why_not, sizeof result->why_not, "%s",
                     entry->gone ? "the thread exited while the process was being stopped" : entry->why_not);
            continue;
        }
        if (!unwinder) {
            snprintf(result->why_not, sizeof result->why_not, "out of memory for the unwinder");
            continue;
        }
        result->taken = probe_unwind_thread(unwinder, entry->tid, result->pcs, result->signals, PROBE_UNWIND_DEPTH_MAX,
                                            &result->npcs, &result->truncated, &result->why);
        if (!result->taken)
            snprintf(result->why_not, sizeof result->why_not, "%s", result->why);
        /* the system call its file did not give (hangdoc may attach but not open the owner's 0400 files) */
        const struct hd_thread *thread = hd_process_find_thread(process, entry->tid);
        if (thread && thread->syscall.state == HD_SYSCALL_UNREAD)
            result->syscall_read = probe_stop_read_syscall(entry->tid, &result->syscall);
    }
    probe_unwind_end(unwinder);
}

static void name_frames(struct probe_stacks *stacks, const struct hd_process *process, const struct unwound *unwound,
                        struct hd_thread *thread)
{
    hd_stack_release(&thread->stack);
    if (!unwound->taken) {
        fail_stack(thread, HD_STACK_FAILED, unwound->why_not[0] ? unwound->why_not : "not stopped");
        return;
    }
    struct hd_stack *stack = &thread->stack;
    stack->state = HD_STACK_TAKEN;
    stack->truncated = unwound->truncated;
    stack->why_not = unwound->why ? strdup(unwound->why) : NULL;
    stack->frames = calloc(unwound->npcs ? unwound->npcs : 1, sizeof *stack->frames);
    if (!stack->frames) {
        fail_stack(thread, HD_STACK_FAILED, "out of memory");
        return;
    }
    for (size_t f = 0; f < unwound->npcs; f++) {
        stack->frames[f].pc = unwound->pcs[f];
        stack->frames[f].signal_frame = unwound->signals[f] != 0;
        stack->frames[f].signal_number = unwound->signals[f] > 0 ? unwound->signals[f] : 0;
        stack->nframes++;
        if (!probe_symbols_resolve(stacks->symbols, process->pid, process->mappings, process->nmappings,
                                   &stack->frames[f]))
            break;
    }
    /* a frame no symbol names, called from another file: what that caller called, the library's exported entry
     * (the next frame's pc is its return address minus one). Calls inside one file are left alone: they name no
     * entry, and a stripped interpreter's stack is made of them, each a few memory reads. */
    for (size_t f = 0; f + 1 < stack->nframes; f++) {
        const struct hd_frame *frame = &stack->frames[f], *caller = &stack->frames[f + 1];
        if (!frame->symbol && frame->module && caller->module && strcmp(frame->module, caller->module) != 0)
            stack->frames[f].called_as = probe_call_target_name(stacks->symbols, process->pid, process->mappings,
                                                                process->nmappings, caller->pc + 1);
    }
}

/* All the pcs of the process, searched for at once before they are named one by one (symbols.h). */
static void search_names_ahead(struct probe_stacks *stacks, const struct hd_process *process,
                               const struct unwound *unwound, size_t nunwound)
{
    size_t total = 0;
    for (size_t u = 0; u < nunwound; u++)
        total += unwound[u].taken ? unwound[u].npcs : 0;
    uint64_t *pcs = malloc((total ? total : 1) * sizeof *pcs);
    if (!pcs)
        return; /* each is then looked up alone */
    size_t count = 0;
    for (size_t u = 0; u < nunwound; u++)
        for (size_t f = 0; unwound[u].taken && f < unwound[u].npcs; f++)
            pcs[count++] = unwound[u].pcs[f];
    probe_symbols_prepare(stacks->symbols, process->pid, process->mappings, process->nmappings, pcs, count);
    free(pcs);
}

static int compare_unwound(const void *a, const void *b)
{
    pid_t x = ((const struct unwound *)a)->tid, y = ((const struct unwound *)b)->tid;
    return (x > y) - (x < y);
}

/* Sorted by tid, as the process's threads are: each thread finds its own by a binary search. */
static const struct unwound *unwound_of(const struct unwound *unwound, size_t nunwound, pid_t tid)
{
    struct unwound key = { .tid = tid };
    return nunwound ? bsearch(&key, unwound, nunwound, sizeof *unwound, compare_unwound) : NULL;
}

static void name_process_frames(struct probe_stacks *stacks, struct hd_process *process, struct unwound *unwound,
                                size_t nunwound)
{
    qsort(unwound, nunwound, sizeof *unwound, compare_unwound);
    search_names_ahead(stacks, process, unwound, nunwound);
    size_t late = 0;
    for (size_t t = 0; t < process->nthreads; t++) {
        struct hd_thread *thread = &process->threads[t];
        const struct unwound *mine = unwound_of(unwound, nunwound, thread->tid);
        if (mine && mine->deadline_passed) {
            fail_stack(thread, HD_STACK_NOT_TAKEN, mine->why_not);
            late++;
        } else if (mine) {
            name_frames(stacks, process, mine, thread);
            if (mine->syscall_read) {
                thread->syscall = mine->syscall;
                thread->syscall_from_registers = true;
            }
        } else {
            fail_stack(thread, HD_STACK_FAILED, "the thread was gone when the process was stopped");
        }
    }
    if (late > 0) {
        stacks->skipped.threads += late;
        stacks->skipped.threads_of_process = process->pid;
        stacks->skipped.threads_in_process = process->nthreads;
    }
}

/* For a process whose threads are unwound without stopping it (a core's, or one a stop would harm): one result a
 * thread (*unwound, the caller's to free) and an unwinder; NULL, and every stack failed, when memory ran out. */
static struct probe_unwinder *begin_without_stop(struct probe_stacks *stacks, struct hd_process *process,
                                                 struct unwound **unwound)
{
    *unwound = calloc(process->nthreads ? process->nthreads : 1, sizeof **unwound);
    struct probe_unwinder *unwinder =
        *unwound ? probe_unwind_begin(process->pid, process->mappings, process->nmappings, stacks->symbols) : NULL;
    if (!unwinder)
        for (size_t t = 0; t < process->nthreads; t++)
            fail_stack(&process->threads[t], HD_STACK_FAILED, "out of memory for the unwinder");
    return unwinder;
}

/* The registers the kernel saved when a thread entered its system call, as a stop would give them: the stack and
 * instruction pointers, the call's number and arguments; the other registers read 0. Enough for DWARF unwinding
 * from a libc wrapper, which finds its frames from the stack pointer. */
static bool registers_of_call(const struct hd_thread *thread, struct user_regs_struct *registers)
{
    const struct hd_syscall *call = &thread->syscall;
    if (call->state != HD_SYSCALL_IN || !call->stack_pointer || !call->program_counter)
        return false;
    *registers = (struct user_regs_struct){ 0 };
#if defined(__x86_64__)
    registers->rsp = call->stack_pointer;
    registers->rip = call->program_counter;
    registers->orig_rax = (unsigned long long)call->nr;
    registers->rdi = call->args[0];
    registers->rsi = call->args[1];
    registers->rdx = call->args[2];
    registers->r10 = call->args[3];
    registers->r8 = call->args[4];
    registers->r9 = call->args[5];
    return true;
#else
    return false;
#endif
}

/* A process that must not be stopped (fuse.h says why): the stacks of its threads blocked in system calls, unwound
 * from the registers their calls saved (/proc's syscall file) and its memory, which a blocked thread does not
 * change; a running thread's stack is not taken. */
static void take_process_unstopped(struct probe_stacks *stacks, struct hd_snapshot *snapshot, struct hd_process *process,
                                   const char *why)
{
    struct unwound *unwound cleanup_free = NULL;
    struct probe_unwinder *unwinder = begin_without_stop(stacks, process, &unwound);
    if (!unwinder)
        return;
    size_t read = 0;
    for (size_t t = 0; t < process->nthreads; t++) {
        struct unwound *result = &unwound[t];
        result->tid = process->threads[t].tid;
        struct user_regs_struct registers;
        if (!registers_of_call(&process->threads[t], &registers)) {
            snprintf(result->why_not, sizeof result->why_not, "not stopped (%s), and not blocked in a system call",
                     why);
            continue;
        }
        result->taken = probe_unwind_registers(unwinder, &registers, sizeof registers, result->pcs, result->signals,
                                               PROBE_UNWIND_DEPTH_MAX, &result->npcs, &result->truncated,
                                               &result->why);
        if (!result->taken)
            snprintf(result->why_not, sizeof result->why_not, "%s", result->why);
        read += result->taken;
    }
    probe_unwind_end(unwinder);
    name_process_frames(stacks, process, unwound, process->nthreads);
    for (size_t t = 0; t < process->nthreads; t++) {
        struct hd_thread *thread = &process->threads[t];
        if (thread->stack.state == HD_STACK_TAKEN)
            thread->stack.unstopped = true;
        else if (!unwound[t].taken && unwound[t].why_not[0])
            fail_stack(thread, HD_STACK_NOT_TAKEN, unwound[t].why_not);
    }
    hd_snapshot_note(snapshot, HD_NOTE_STACKS, process->pid, 0,
                     "not stopped for its stacks: %s; the stacks of %zu of its %zu threads were read without stopping "
                     "it, from the registers their system calls saved",
                     why, read, process->nthreads);
}

static void take_process(struct probe_stacks *stacks, struct hd_snapshot *snapshot, struct hd_process *process)
{
    if (never_stopped(process)) {
        take_process_unstoppable(process);
        return;
    }
    const char *fuse = probe_fuse_why_not_stopped(process);
    if (fuse) {
        take_process_unstopped(stacks, snapshot, process, fuse);
        return;
    }
    /* the states just read (threads are sorted by tid): no second look at /proc for each thread */
    pid_t *tids = calloc(process->nthreads ? process->nthreads : 1, sizeof *tids);
    char *states = calloc(process->nthreads ? process->nthreads : 1, 1);
    for (size_t t = 0; tids && states && t < process->nthreads; t++) {
        tids[t] = process->threads[t].tid;
        states[t] = process->threads[t].state;
    }
    struct probe_stop_hint hint = { tids, states, tids && states ? process->nthreads : 0 };
    struct probe_stopped_process stopped;
    char why[PROBE_STOP_WHY_MAX * 2];
    enum probe_stop_result result = probe_stop_process(process->pid, STOP_WAIT_MS, &hint, &stopped, why, sizeof why);
    free(tids);
    free(states);
    struct unwound *unwound = NULL;
    if (result == PROBE_STOP_OK) {
        unwound = calloc(stopped.nthreads, sizeof *unwound);
        if (unwound)
            unwind_stopped(stacks, process, &stopped, unwound);
        else
            snprintf(why, sizeof why, "out of memory");
    }
    size_t nunwound = stopped.nthreads;
    double seconds = probe_stop_release(&stopped);
    if (result != PROBE_STOP_NO_MEMORY)
        add_stopped_time(stacks, process->pid, seconds);
    if (!unwound) {
        if (result == PROBE_STOP_REFUSED)
            stacks->processes_refused++;
        hd_snapshot_note(snapshot, HD_NOTE_STACKS, process->pid, 0, "native stacks not taken: %s", why);
        for (size_t t = 0; t < process->nthreads; t++)
            fail_stack(&process->threads[t], HD_STACK_FAILED, why);
        return;
    }
    stacks->processes_stopped++;
    name_process_frames(stacks, process, unwound, nunwound);
    free(unwound);
}

void probe_stacks_take_offline(struct probe_stacks *stacks, struct hd_process *process, const void *const *registers,
                               size_t size)
{
    struct unwound *unwound cleanup_free = NULL;
    struct probe_unwinder *unwinder = begin_without_stop(stacks, process, &unwound);
    if (!unwinder)
        return;
    probe_unwind_offline(unwinder);
    for (size_t t = 0; t < process->nthreads; t++) {
        struct unwound *result = &unwound[t];
        result->tid = process->threads[t].tid;
        result->taken = probe_unwind_registers(unwinder, registers[t], size, result->pcs, result->signals,
                                               PROBE_UNWIND_DEPTH_MAX,
                                               &result->npcs, &result->truncated, &result->why);
        if (!result->taken)
            snprintf(result->why_not, sizeof result->why_not, "%s", result->why);
    }
    probe_unwind_end(unwinder);
    name_process_frames(stacks, process, unwound, process->nthreads);
}

/* A process whose turn came too near the deadline: not stopped at all. */
static void skip_process(struct probe_stacks *stacks, struct hd_process *process)
{
    if (never_stopped(process)) {
        take_process_unstoppable(process);
        return;
    }
    for (size_t t = 0; t < process->nthreads; t++)
        fail_stack(&process->threads[t], HD_STACK_NOT_TAKEN, "--timeout near: its process was not stopped");
    stacks->skipped.processes++;
}

struct probe_stacks_skipped probe_stacks_take(struct probe_stacks *stacks, struct hd_snapshot *snapshot,
                                              double deadline)
{
    stacks->deadline = deadline;
    stacks->skipped = (struct probe_stacks_skipped){ 0 };
    probe_stop_retry_lingering();
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        if (too_late_to_stop(stacks, process))
            skip_process(stacks, process);
        else
            take_process(stacks, snapshot, process);
    }
    probe_stop_retry_lingering();
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        stacks->skipped.stoppable += !never_stopped(&snapshot->processes[p]);
    return stacks->skipped;
}

/* ---- the other samples: the leaf of running threads -------------------------------------------------------- */

static bool read_pc_alone(struct probe_stacks *stacks, pid_t pid, pid_t tid, uint64_t *pc)
{
    struct probe_stopped_process stopped;
    char why[PROBE_STOP_WHY_MAX * 2];
    enum probe_stop_result result = probe_stop_thread(pid, tid, LEAF_STOP_WAIT_MS, &stopped, why, sizeof why);
    uint64_t sp;
    bool read = result == PROBE_STOP_OK && probe_stop_read_registers(tid, NULL, 0, pc, &sp);
    double seconds = probe_stop_release(&stopped);
    if (result == PROBE_STOP_OK)
        add_stopped_time(stacks, pid, seconds);
    return read;
}

static void sample_process_leaves(struct probe_stacks *stacks, struct hd_process *process)
{
    struct hd_mapping *mappings = NULL;
    size_t nmappings = 0;
    bool maps_read = false, truncated = false;
    for (size_t t = 0; t < process->nthreads; t++) {
        struct hd_thread *thread = &process->threads[t];
        uint64_t pc;
        if (thread->state != 'R' || !read_pc_alone(stacks, process->pid, thread->tid, &pc))
            continue;
        if (!maps_read) {
            maps_read = true;
            if (probe_read_maps(process->pid, LEAF_MAPPINGS_MAX, &mappings, &nmappings, &truncated) != 0)
                nmappings = 0;
        }
        struct hd_frame frame = { .pc = pc };
        probe_symbols_resolve(stacks->symbols, process->pid, mappings, nmappings, &frame);
        probe_symbols_set_leaf(thread, &frame);
        free(frame.module);
        free(frame.symbol);
    }
    for (size_t m = 0; m < nmappings; m++)
        free(mappings[m].path);
    free(mappings);
}

void probe_stacks_sample_leaves(struct probe_stacks *stacks, struct hd_snapshot *sample)
{
    probe_stop_retry_lingering();
    for (size_t p = 0; p < sample->nprocesses; p++) {
        struct hd_process *process = &sample->processes[p];
        bool running = false;
        for (size_t t = 0; t < process->nthreads; t++)
            running |= process->threads[t].state == 'R';
        if (running && !never_stopped(process))
            sample_process_leaves(stacks, process);
    }
}

void probe_stacks_account(const struct probe_stacks *stacks, struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        size_t known;
        if (probe_pid_map_get(&stacks->time_of, snapshot->processes[p].pid, &known))
            snapshot->processes[p].stopped_for_s = stacks->times[known].seconds;
    }
    snapshot->ptrace_used = stacks->processes_stopped > 0;
    if (snapshot->ptrace_used)
        snapshot->ptrace_why_not = NULL;
    else if (stacks->processes_refused > 0)
        snapshot->ptrace_why_not = "the kernel refused to let hangdoc stop the processes (the notes say why)";
    else
        snapshot->ptrace_why_not = "no process could be stopped (the notes say why)";
}
