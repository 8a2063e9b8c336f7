/* The table of named waits (named_waits.h). */
#include "named_waits.h"

#include "util.h"

#include <fnmatch.h>
#include <stdbool.h>
#include <string.h>

/* In the order of preference: the first row that matches a frame (the innermost it matches) names the wait, so
 * that a DataLoader's wait is told as such and not as the queue get() it is made of. Python rows name the file,
 * so that a user's function called `broadcast` is not taken for the collective; native rows (file NULL) match the
 * names NCCL, MPI and libc export, case folded (ncclAllReduce, MPI_Allreduce). */
static const struct report_named_wait waits[] = {
    /* torch.distributed (distributed_c10d.py), Python frames */
    { "*all_reduce*", "*/torch/distributed/*", "in all_reduce", "all_reduce" },
    { "*all_gather*", "*/torch/distributed/*", "in all_gather", "all_gather" },
    { "*reduce_scatter*", "*/torch/distributed/*", "in reduce_scatter", "reduce_scatter" },
    { "*all_to_all*", "*/torch/distributed/*", "in all_to_all", "all_to_all" },
    { "*broadcast*", "*/torch/distributed/*", "in broadcast", "broadcast" },
    { "*barrier*", "*/torch/distributed/*", "in barrier", "barrier" },
    { "reduce", "*/torch/distributed/*", "in reduce", "reduce" },
    { "gather", "*/torch/distributed/*", "in gather", "gather" },
    { "scatter", "*/torch/distributed/*", "in scatter", "scatter" },
    { "*recv", "*/torch/distributed/*", "in recv", "recv" },
    { "*send", "*/torch/distributed/*", "in send", "send" },
    /* a DataLoader's main process waiting for its workers' next batch (dataloader.py) */
    { "*_get_data", "*/torch/utils/data/dataloader.py", "for a DataLoader batch", NULL },
    { "*_next_data", "*/torch/utils/data/dataloader.py", "for a DataLoader batch", NULL },
    { "*__next__", "*/torch/utils/data/dataloader.py", "for a DataLoader batch", NULL },
    /* the standard library's waits */
    { "*get", "*/multiprocessing/queues.py", "for a multiprocessing queue", NULL },
    { "*join", "*/threading.py", "for a thread to finish", NULL },
    { "*wait", "*/threading.py", "on a threading event or condition", NULL },
    { "*wait", "*/subprocess.py", "for a child process", NULL },
    { "*acquire", "*/threading.py", "for a lock", NULL },
    /* NCCL, MPI, Gloo and Horovod, native frames */
    { "*allreduce*", NULL, "in all_reduce", "all_reduce" },
    { "*all_reduce*", NULL, "in all_reduce", "all_reduce" },
    { "*allgather*", NULL, "in all_gather", "all_gather" },
    { "*all_gather*", NULL, "in all_gather", "all_gather" },
    { "*reducescatter*", NULL, "in reduce_scatter", "reduce_scatter" },
    { "*reduce_scatter*", NULL, "in reduce_scatter", "reduce_scatter" },
    { "*alltoall*", NULL, "in all_to_all", "all_to_all" },
    { "ncclBroadcast", NULL, "in broadcast", "broadcast" },
    { "ncclBcast", NULL, "in broadcast", "broadcast" },
    { "*MPI_Bcast", NULL, "in broadcast", "broadcast" },
    { "*MPI_Barrier", NULL, "in barrier", "barrier" },
    { "*MPI_Ibarrier", NULL, "in barrier", "barrier" },
    { "*MPI_Wait*", NULL, "in MPI_Wait", "MPI_Wait" },
    { "*MPI_Recv", NULL, "in MPI_Recv", "MPI_Recv" },
    { "*MPI_Send", NULL, "in MPI_Send", "MPI_Send" },
    /* libc's waits */
    { "pthread_join", NULL, "for a thread to finish", NULL },
    { "__pthread_clockjoin_ex", NULL, "for a thread to finish", NULL },
    { "wait4", NULL, "for a child process", NULL },
    { "waitpid", NULL, "for a child process", NULL },
    { "__lll_lock_wait*", NULL, "for a mutex", NULL },
    { "*pthread_mutex_*lock", NULL, "for a mutex", NULL },
    { "*pthread_cond_*wait*", NULL, "on a condition variable", NULL },
};

static bool matches(const char *pattern, const char *text)
{
    return pattern && text && fnmatch(pattern, text, FNM_CASEFOLD) == 0;
}

const struct report_named_wait *report_find_named_wait(const char *const *functions, const char *const *files,
                                                      size_t nframes, size_t *frame)
{
    for (size_t w = 0; w < COUNT(waits); w++) {
        bool python_row = waits[w].file != NULL;
        for (size_t f = 0; f < nframes; f++) {
            if (python_row != (files[f] != NULL))
                continue; /* Python rows read Python frames, native rows native ones */
            if (matches(waits[w].function, functions[f]) && (!python_row || matches(waits[w].file, files[f]))) {
                *frame = f;
                return &waits[w];
            }
        }
    }
    return NULL;
}

