/* Which collective each process is in (torch.distributed's all_reduce, NCCL's, MPI's), from its threads' frames,
 * with the call site in the user's code and what the backend waits for underneath (gloo's receive from a peer,
 * with the timeout the process group gave it). Worked out once per analysis, after the graph, for the collective
 * rules (rules/collectives.c) and the renderers (a rank's "collective:" line, its JSON `collective`). */
#pragma once

#include "analysis.h"
#include "buffer.h"

#include <stdbool.h>
#include <stddef.h>

struct report_collective {
    const struct hd_process *process;
    size_t node;      /* the thread in the call: the process's main thread where it is in one, else the first */
    const char *name; /* "all_reduce", "broadcast", "barrier": the collective named_waits.h names */
    /* the frame of the call: torch.distributed's Python function and its line, or a native function (file NULL) */
    const char *function;
    const char *file;
    int line;
    /* the caller outside the library (the user's line that called it): NULL when none was read */
    const char *site_function;
    const char *site_file;
    int site_line;
    /* the backend's own wait on its peers, by another thread of the process (gloo's worker): NULL when none seen */
    const char *backend;      /* "gloo" */
    const char *backend_wait; /* "receive from a peer" */
    size_t backend_node;
    bool backend_timeout_known; /* its wait has a timeout: the process group's, which ends the collective with an
                                 * error when it fires */
    double backend_timeout_s;   /* how long from the snapshot until it fires */
};

/* Into `analysis`: the collectives of the snapshot's processes, one per process in one, in snapshot order, and
 * the snapshot's rank processes grouped by job (below), each once per analysis, after the graph. False when memory
 * ran out. Strings are the snapshot's. */
bool report_find_collectives(const struct hd_snapshot *snapshot, struct report_analysis *analysis);
void report_release_collectives(struct report_analysis *analysis);

/* The collective of `process`, or NULL. */
const struct report_collective *report_process_collective(const struct report_analysis *analysis,
                                                          const struct hd_process *process);

/* "all_reduce at train.py:41" (the site's file without its directories, or the call's when no site was read). */
void report_describe_collective(const struct report_collective *collective, struct report_buffer *out);

/* ---- the ranks of a job, for the collective rules and the renderers ---- */

/* One rank process of a job and its collective (NULL: in none). */
struct report_job_rank {
    const struct hd_process *process;
    const struct report_collective *collective;
    size_t main_node; /* its main thread's node; REPORT_NO_NODE when it has none */
};

/* The ranks of one job that the snapshot shows, in ascending rank. A job is the ranks with the same world size and
 * the same MASTER_ADDR:MASTER_PORT, else torchelastic run, else Slurm job (and step): analysis->jobs, every live
 * rank process of the snapshot. */
struct report_job_ranks {
    const struct hd_job *job; /* its first rank's */
    struct report_job_rank *ranks;
    size_t count;
};

/* Are two collectives the same call: the same collective from the same call site. */
bool report_same_call(const struct report_collective *a, const struct report_collective *b);
/* "ranks 0,2" / "rank 1": the ranks of `job` in the same call as `like` (NULL: in none), at most `listed` of them
 * and ",…" after; `*count` (when not NULL) gets how many there are. */
void report_describe_ranks_in(const struct report_job_ranks *job, const struct report_collective *like,
                              struct report_buffer *out, size_t listed, size_t *count);
