/* The last line of defence of --timeout: a thread that ends hangdoc when the deadline's own handler could not.
 *
 * SIGALRM normally ends an overlong run (cmd/main.c). But a step can block with every signal of hangdoc masked:
 * libunwind holds its cache lock with all signals blocked while it opens and reads a module's file, and an open()
 * on a hung NFS or FUSE mount never returns. Then only another thread can act: this one exits the whole process,
 * and the kernel lets go of every thread hangdoc had stopped (PTRACE_SEIZE'd tracees are detached and resumed
 * when their tracer exits), so a target is never left stopped behind a stuck hangdoc.
 */
#pragma once

#include <stdbool.h>

/* How long after the deadline the watchdog waits for SIGALRM's handler to do its job. */
#define HANGDOC_WATCHDOG_GRACE_MS 2000

/* Starts the watchdog for a run bounded by `timeout_ms` (0: no bound, nothing started). False when the thread
 * could not be created: the run goes on with SIGALRM alone. */
bool hangdoc_watchdog_start(unsigned timeout_ms);
