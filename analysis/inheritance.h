/* Inheritance forensics over a snapshot: which runtime a stuck wait is inside, which of the parent's threads ran
 * that runtime, which handles the child shares with its parent; and the findings fork-unsafe-runtime and
 * cuda-inherited. Pure over the snapshot, like every rule.
 */
#pragma once

#include "snapshot.h"
#include "analysis.h"
#include "catalogue.h"

#include <stdbool.h>
#include <stddef.h>

/* Where a thread's wait was attributed to a runtime, and how. */
struct report_attribution {
    const struct report_runtime *runtime;
    const struct hd_library *library;
    const char *how; /* static: "a stack frame", "the system call's caller", "the futex's memory" */
    /* For a lock in a library's data that the catalogue tells apart by function (libc's own locks): the row its
     * library matched (runtime is then the one lock's row, or that row when no frame named one), and the function
     * of the waiter's stack that names the lock, or else the program's call into the library (a frame's symbol,
     * owned by the snapshot; NULL when the stack has no named frame there). */
    const struct report_runtime *library_runtime;
    const char *function;
};

/* The runtime the thread waits inside: its innermost stack frame in a catalogued library, else the code that
 * made the system call, else the library whose data holds the futex (for libc's data: which of its locks, by the
 * functions of the stack that take it). False when none is catalogued. */
bool report_attribute_thread(const struct report_catalogue *catalogue, const struct hd_process *process,
                             const struct hd_thread *thread, struct report_attribution *out);
/* The distinct catalogued runtimes of the thread's stack frames, innermost first (libraries every wait passes
 * through left out): at most `max` attributions in `out`; returns how many. */
size_t report_stack_runtimes(const struct report_catalogue *catalogue, const struct hd_process *process,
                             const struct hd_thread *thread, struct report_attribution *out, size_t max);
/* The catalogued runtime the thread is parked in: its innermost frame outside the libraries every wait passes
 * through lies in that runtime's library (a pool thread on the runtime's own timer, not a task of the program's
 * that sleeps); NULL when it is not, or without a stack. */
const struct report_runtime *report_parked_in_runtime(const struct report_catalogue *catalogue,
                                                      const struct hd_process *process,
                                                      const struct hd_thread *thread);
/* Does `thread` run `runtime` (by its name, its stack, or the code its system call came from)? */
bool report_thread_runs(const struct report_catalogue *catalogue, const struct hd_process *process,
                        const struct hd_thread *thread, const struct report_runtime *runtime);
/* How many threads of `process` (as the analysis takes them: report_process_thread) run `runtime`; 0 for no
 * process. */
size_t report_threads_running(const struct report_analysis *analysis, const struct hd_process *process,
                              const struct report_runtime *runtime);

struct report_rule_context;
struct report_finding;

/* Adds the runtime its wait is inside to each inherited-lock and orphaned-wait finding: in the summary, as
 * evidence with the parent's threads that run it and the handles the child shares, and its remedies. Runs after
 * every rule (analysis.c); sets c->failed when memory ran out. */
void report_attribute_lock_findings(struct report_rule_context *c);

/* ---- evidence of a runtime, for the rules that name one (rules/runtimes.c) ---- */

/* "glibc's time-zone lock (in __tz_convert)": the runtime's name and, where the catalogue tells its locks apart by
 * function, the function; written into `out`. */
const char *report_attribution_name(const struct report_attribution *attribution, char *out, size_t size);
/* "libgomp.so.1" for the text: the soname when there is one. */
const char *report_library_name(const struct hd_library *library);
/* The runtime, its library and how the wait was attributed to it; sets finding->runtime. */
void report_runtime_evidence(struct report_rule_context *c, struct report_finding *finding,
                             const struct report_attribution *attribution);
/* The parent's threads that run the runtime (a few as evidence); returns how many there are. */
size_t report_parent_thread_evidence(struct report_rule_context *c, struct report_finding *finding,
                                     const struct hd_process *parent, const struct report_runtime *runtime);
/* Is `fd` a handle of `runtime` that the process shares with its parent (kcmp)? */
bool report_handle_of(const struct report_catalogue *catalogue, const struct hd_fd *fd,
                      const struct report_runtime *runtime);
/* The handles of the runtime the process shares with its parent (a few as evidence); returns how many. */
size_t report_inherited_handle_evidence(struct report_rule_context *c, struct report_finding *finding,
                                        const struct hd_process *process, const struct report_runtime *runtime);
/* The catalogue's remedies for the runtime. */
void report_runtime_remedies(struct report_rule_context *c, struct report_finding *finding,
                             const struct report_runtime *runtime);
