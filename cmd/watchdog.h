/* The hard backstops of --timeout: SIGALRM, and a thread for when SIGALRM's handler cannot run.
 *
 * The deadline is normally kept softly: the probe stops taking new things before it (probe.h) and the report is
 * made from what was read. These two are for a step that does not come back. SIGALRM's handler lets go of every
 * stopped thread and exits 70 ("gave up"). But a step can block with every signal of hangdoc masked: libunwind
 * holds its cache lock with all signals blocked while it opens and reads a module's file, and an open() on a hung
 * NFS or FUSE mount never returns. Then only another thread can act: the watchdog exits the whole process, and
 * the kernel lets go of every thread hangdoc had stopped (PTRACE_SEIZE'd tracees are detached and resumed when
 * their tracer exits), so a target is never left stopped behind a stuck hangdoc.
 */
#pragma once

#include <stdbool.h>

/* How long after the deadline the watchdog waits for SIGALRM's handler to do its job. */
#define HANGDOC_WATCHDOG_GRACE_MS 2000

/* Monotonic seconds now, the clock every deadline is in. */
double hangdoc_monotonic_now(void);

/* Arms SIGALRM for `deadline` (monotonic seconds; 0: none), rounded up to whole seconds. */
void hangdoc_alarm_arm(double deadline);

/* Starts the watchdog for `deadline` (0: nothing started); it acts HANGDOC_WATCHDOG_GRACE_MS later. False when the
 * thread could not be created: the run goes on with SIGALRM alone. */
bool hangdoc_watchdog_start(double deadline);

/* Moves whichever backstop is armed to `deadline` when that is later: once the snapshot is read and every target
 * let go, what is left (analysis, rendering) must not be cut off by a deadline meant for the probe. */
void hangdoc_backstops_postpone(double deadline);
