/* Inheritance forensics over a snapshot: which runtime a stuck wait is inside, which of the parent's threads ran
 * that runtime, which handles the child shares with its parent; and the findings fork-unsafe-runtime and
 * cuda-inherited. Pure over the snapshot, like every rule.
 */
#pragma once

#include "../probe/snapshot.h"
#include "analysis.h"
#include "catalogue.h"

#include <stdbool.h>
#include <stddef.h>

/* Where a thread's wait was attributed to a runtime, and how. */
struct report_attribution {
    const struct report_runtime *runtime;
    const struct hd_library *library;
    const char *how; /* static: "a stack frame", "the system call's caller", "the futex's memory" */
};

/* The runtime the thread waits inside: its innermost stack frame in a catalogued library, else the code that
 * made the system call, else the library whose data holds the futex. False when none is catalogued. */
bool report_attribute_thread(const struct report_catalogue *catalogue, const struct hd_process *process,
                             const struct hd_thread *thread, struct report_attribution *out);
/* Does `thread` run `runtime` (by its name, its stack, or the code its system call came from)? */
bool report_thread_runs(const struct report_catalogue *catalogue, const struct hd_process *process,
                        const struct hd_thread *thread, const struct report_runtime *runtime);

/* Adds the runtime attribution to inherited-lock and orphaned-wait findings, and the findings fork-unsafe-runtime
 * and cuda-inherited. False when memory ran out. */
bool report_analyze_inheritance(const struct hd_snapshot *snapshot, const struct report_catalogue *catalogue,
                                struct report_analysis *analysis);
