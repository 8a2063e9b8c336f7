/* A thread waiting for the GIL, caught between two of its waits.
 *
 * CPython's take_gil() waits 5 ms at a time and wakes to ask the holder to let go, running for microseconds each
 * time: the last sample may catch such a waiter on a CPU, or preempted in user space on its way back, with its GIL
 * "released" (one report in a dozen did, in a GIL deadlock). The probe reads such a thread again a few times
 * (probe/python.c); the analysis takes one that an earlier sample saw in a futex wait inside the GIL's state, while
 * the GIL is held, to be in that wait again. Pure over the snapshot.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>

/* When `thread` of `process` is such a waiter: true, with `*out` the thread as the analysis takes it (a shallow
 * copy: its wait, system call, state and GIL standing are the earlier sample's wait for the GIL, whose lock is the
 * process's python.gil_lock; every pointer is borrowed from the snapshot). False, `*out` untouched, otherwise. */
bool report_gil_wait_resumed(const struct hd_process *process, const struct hd_thread *thread, struct hd_thread *out);
