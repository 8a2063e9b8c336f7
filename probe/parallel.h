/* Splitting a loop over many threads' /proc files among the CPUs.
 *
 * Reading a thread's files is a few system calls that the kernel answers on the caller's CPU (the task's stat,
 * sched and stack files are formatted on demand): 10,000 threads cost about half a second on one CPU, and a hung
 * target leaves the other CPUs idle. The work is cut into contiguous ranges, one per worker, so that what a
 * worker produces can be put back in order (the notes of a serial run come in thread order, and so must these).
 * Workers run with every signal blocked: the signal handlers that let go of stopped threads must run on the
 * thread that stopped them (the tracer), the caller.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PROBE_PARALLEL_WORKERS_MAX 4

/* Calls work(context, worker, begin, end) for `workers` contiguous ranges that cover [0, count) in order, worker
 * 0 on the calling thread, the others each on a thread of its own, and returns when all are done. A worker that
 * cannot be started has its range done by the caller. */
void probe_parallel_for(size_t count, size_t workers, void (*work)(void *context, size_t worker, size_t begin,
                                                                  size_t end),
                        void *context);

/* How many workers a loop of `count` items is worth: 1 below `threshold` items, else one per online CPU (at most
 * PROBE_PARALLEL_WORKERS_MAX). */
size_t probe_parallel_workers(size_t count, size_t threshold);
