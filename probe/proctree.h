/* One sample of a process tree: which processes belong to it (libproc2), and every field of every thread.
 *
 * libproc2 enumerates processes and threads and gives the fields it reads faithfully (ppid, uid, state, wchan,
 * thread count, start time); the files it does not cover, or covers lossily, are read through procfs.h.
 */
#pragma once

#include "snapshot.h"
#include "syscalls.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct probe_tree;

/* NULL when libproc2 cannot be set up (errno says why). */
struct probe_tree *probe_tree_new(void);
void probe_tree_free(struct probe_tree *tree);

enum probe_detail {
    PROBE_DETAIL_DYNAMIC, /* what changes between samples: states, CPU time, switches, system calls */
    PROBE_DETAIL_FULL,    /* all of it, with notes on what could not be read */
};

/* Reads the processes `roots` (thread-group ids) and all their descendants, except `exclude` (hangdoc itself),
 * into `into->processes`, in tree order. Processes that vanish during the read are left out (and noted in a full
 * read). False only when libproc2 failed or memory ran out. */
bool probe_tree_read(struct probe_tree *tree, const pid_t *roots, size_t nroots, pid_t exclude,
                     enum probe_detail detail, struct hd_snapshot *into);

/* A process of a tree as the listing saw it. */
struct probe_relative {
    pid_t pid;
    pid_t ppid;
    char state;
};

/* The descendants of `ancestor` right now, each parent before its children, without `exclude` and what descends
 * from it; at most `max`. Returns how many, or -errno. */
ssize_t probe_list_descendants(pid_t ancestor, pid_t exclude, struct probe_relative *out, size_t max);
