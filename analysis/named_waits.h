/* The waits a thread's stack names in words: the collectives of torch.distributed, NCCL, MPI and Gloo, a
 * DataLoader batch, a queue, a join. One table, read by the analysis (a rank's collective, collectives.h) and by
 * `hangdoc merge` (a main thread's wait in each rank's report), so that a new collective is one row. */
#pragma once

#include <stddef.h>

struct report_named_wait {
    const char *function;   /* fnmatch(3) pattern, case folded, over a frame's function */
    const char *file;       /* the same over a Python frame's file; NULL: a native frame's */
    const char *what;       /* after "wait"/"waits": "in all_reduce", "for a DataLoader batch" */
    const char *collective; /* the collective's name when the wait is one; NULL otherwise */
};

/* The innermost known wait of a stack given innermost first as functions and files (a Python frame's file, NULL
 * for a native frame); NULL when none. `*frame` gets its index there. */
const struct report_named_wait *report_find_named_wait(const char *const *functions, const char *const *files,
                                                       size_t nframes, size_t *frame);
