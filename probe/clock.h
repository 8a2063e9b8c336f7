/* The clock of hangdoc's deadlines (probe_options.deadline, --timeout) and of its own durations: CLOCK_MONOTONIC,
 * in seconds. Async-signal-safe (clock_gettime is), for the deadline's handler. */
#pragma once

double probe_monotonic_now(void);
