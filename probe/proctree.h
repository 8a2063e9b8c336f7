/* One sample of a process tree: which processes belong to it, and every field of every thread.
 *
 * The members are found from the top down through the children files (children.h), one per thread of the tree;
 * libproc2 lists every process of the system to find them by parent instead on a kernel without those files, and
 * where that is cheaper (a tree with many times more threads than the system has processes). Each thread is then
 * read from its own files through procfs.h's parsers: one stat file gives what libproc2's per-thread read gave
 * (state, CPU ticks, last CPU, start time, thread count) plus what it mangles (comm) or lacks (flags, exit code),
 * at a third of the system calls (libproc2 also reads statm and stats the task directory for every thread). A
 * tree of many processes, or a process of many threads, is read by one worker per CPU (parallel.h); the result,
 * notes included, is the same as one reader's.
 */
#pragma once

#include "probe.h"
#include "snapshot.h"
#include "syscalls.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct probe_tree;

/* NULL when memory ran out. */
struct probe_tree *probe_tree_new(void);
void probe_tree_free(struct probe_tree *tree);
/* From `deadline` on (monotonic seconds; 0: never), a full read leaves out the kernel stacks, blocked-for times
 * and switch counts of the threads it has not reached yet; from `last_call` on (0: never), their waits too (only
 * their stat file is read). It notes how many. */
void probe_tree_set_deadlines(struct probe_tree *tree, double deadline, double last_call);

enum probe_detail {
    PROBE_DETAIL_DYNAMIC, /* what changes between samples: states, CPU time, switches, system calls */
    PROBE_DETAIL_FULL,    /* all of it, with notes on what could not be read */
};

/* Reads the processes `roots` (thread-group ids) and all their descendants, except `exclude` (hangdoc itself),
 * into `into->processes`, in tree order. Processes that vanish during the read are left out (and noted in a full
 * read). 0, or -errno: -ENOMEM when memory ran out, another when listing every process failed. */
int probe_tree_read(struct probe_tree *tree, const pid_t *roots, size_t nroots, pid_t exclude,
                    enum probe_detail detail, struct hd_snapshot *into);

/* How many threads a read of the tree will meet: as many as the last read did, or before the first, the threads
 * of the roots themselves (the least there can be). */
size_t probe_tree_expected_threads(const struct probe_tree *tree, const pid_t *roots, size_t nroots);

/* probe_list_descendants(), for hangdoc run's supervisor: in probe.h. */
