/* "Now" in the scheduler's clock of a given CPU, to turn /proc/<tid>/sched's se.exec_start into "blocked for".
 *
 * se.exec_start is the CPU's rq clock_task, and each CPU has its own: on a virtual machine two CPUs' clocks were
 * seen 220 ms apart. Comparing a thread's exec_start with hangdoc's own is right only when hangdoc's reading was
 * taken on the CPU the thread last ran on. So hangdoc pins itself to that CPU once (sched_setaffinity), reads its
 * own exec_start there next to CLOCK_MONOTONIC, and extrapolates from then on.
 * The task clock leaves out IRQ time and time stolen by a hypervisor, so on a busy VM a duration measured in it
 * reads a few percent short of wall time (seen: 0.78 s for 0.81 s): a lower bound, never an overestimate.
 */
#pragma once

#include <stdbool.h>

struct probe_sched_clock;

struct probe_sched_clock *probe_sched_clock_new(void);
void probe_sched_clock_free(struct probe_sched_clock *clock);

/* The scheduler clock of `cpu`, now, in milliseconds. False when it cannot be had (no /proc/<tid>/sched, or
 * hangdoc may not run on that CPU); `*exact` is false when the reading comes from another CPU. */
bool probe_sched_clock_now_ms(struct probe_sched_clock *clock, int cpu, double *now_ms, bool *exact);
