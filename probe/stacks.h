/* Native stacks for a snapshot: stop each process for a moment, unwind every thread, name the frames.
 *
 * The stacks belong to the last, full sample: one process at a time is stopped (ptrace_stop.h), its threads'
 * pcs are unwound (unwind.h) while it is stopped, and it is let go before the pcs are named (symbols.h), so that
 * a process stays stopped only as long as the unwinding takes. Every other sample gets the cheaper leaf: only
 * threads in state R are stopped, one at a time, for their pc. A process that cannot be stopped keeps its /proc
 * data, and its threads say why their stack is missing.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <sys/types.h>

struct probe_stacks;

/* NULL when memory ran out. Installs the detach-on-signal handlers until probe_stacks_free(). `debug_files`: name
 * frames from separate debug files too (symbols.h). */
struct probe_stacks *probe_stacks_new(bool debug_files);
/* Releases whatever is still attached and restores the signal handlers. */
void probe_stacks_free(struct probe_stacks *stacks);
/* The symbol tables the stacks were named by (borrowed): other readers of the same processes' code (Go's goroutine
 * stacks) name theirs with them, not with a second copy of each file's table. */
struct probe_symbols *probe_stacks_symbols(struct probe_stacks *stacks);

/* A thread asked to stop that did not stop in time (starved, or in D) stops later, by itself: these detach every
 * such thread that has stopped since, so that no thread of a target stays stopped between samples and no sample
 * reads hangdoc's own stop as a thread's state. settle looks once (before each sample); pause sleeps
 * `milliseconds` and lets each one go within a few milliseconds of its stop. */
void probe_stacks_settle(struct probe_stacks *stacks);
void probe_stacks_pause(struct probe_stacks *stacks, unsigned milliseconds);
/* The stacks of a process read from a core (core_snapshot.h): each thread of `process` unwound from
 * `registers[t]` (its NT_PRSTATUS registers, `size` bytes, in the order of process->threads), its memory read
 * through probe_memory_offline, its frames named from the files the core's mappings name. */
void probe_stacks_take_offline(struct probe_stacks *stacks, struct hd_process *process, const void *const *registers,
                               size_t size);

/* What a deadline left out of probe_stacks_take. */
struct probe_stacks_skipped {
    size_t processes;          /* never stopped: their turn came after the deadline */
    size_t stoppable;          /* of how many processes that hangdoc would stop (not kernel threads, zombies, ...) */
    size_t threads;            /* left un-unwound in a process stopped when the deadline came */
    pid_t threads_of_process;  /* that process (the last such), and how many threads it has */
    size_t threads_in_process;
};

/* Takes the native stack of every thread of `snapshot` (a full sample: mappings read), one process after the
 * other until `deadline` (monotonic seconds; 0: none): the processes after it are not stopped, the threads of
 * the process stopped when it came are not unwound; their stacks are HD_STACK_NOT_TAKEN, why_not says so. */
struct probe_stacks_skipped probe_stacks_take(struct probe_stacks *stacks, struct hd_snapshot *snapshot,
                                              double deadline);
/* Names the function each thread in state R of `sample` is running (thread->leaf_function, and leaf_module where no symbol names it). */
void probe_stacks_sample_leaves(struct probe_stacks *stacks, struct hd_snapshot *sample);
/* Writes how long each process of `snapshot` was stopped over the run into its stopped_for_s, and sets
 * ptrace_used / ptrace_why_not. */
void probe_stacks_account(const struct probe_stacks *stacks, struct hd_snapshot *snapshot);
