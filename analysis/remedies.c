/* Specific remedies (remedies.h): a table of (finding ids, fact about the finding's process, remedy). */
#include "remedies.h"

#include "finding.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- facts ----------------------------------------------------------------------------------------------------- */

struct subject {
    const struct hd_snapshot *snapshot;
    const struct report_finding *finding;
    const struct hd_process *process; /* the finding's; NULL when it exited */
    const struct hd_thread *thread;
};

/* A Python child forked by fork() itself (os.fork, the fork start method), not by the forkserver. */
static bool python_forked(const struct subject *s)
{
    return s->process && hd_process_is_python(s->process) && s->process->origin != HD_ORIGIN_FORKSERVER;
}

/* The minor version of CPython 3 the process runs, as its Python view read it; 0 when unknown. */
static unsigned python_minor(const struct hd_process *process)
{
    unsigned major = 0, minor = 0;
    if (!process->python.read || sscanf(process->python.version, "%u.%u", &major, &minor) != 2 || major != 3)
        return 0;
    return minor;
}

/* A fork child of a Python that warns about forking a multi-threaded process (3.12 and later). */
static bool python_forked_warned(const struct subject *s)
{
    return python_forked(s) && python_minor(s->process) >= 12;
}

/* A dead worker's parent is the one that must change how it waits. */
static bool python_parent(const struct subject *s)
{
    pid_t parent_pid = s->process ? s->process->ppid : 0;
    for (size_t d = 0; !parent_pid && d < s->snapshot->ndeparted; d++)
        if (s->snapshot->departed[d].pid == s->finding->pid)
            parent_pid = s->snapshot->departed[d].ppid;
    const struct hd_process *parent = hd_snapshot_find_process(s->snapshot, parent_pid);
    return parent && hd_process_is_python(parent);
}

/* The writer of a full pipe is a multiprocessing worker (forked, spawned or from the forkserver): the queue's
 * feeder thread of a process its parent joins before taking what it put. */
static bool multiprocessing_writer(const struct subject *s)
{
    return s->process && hd_process_is_python(s->process) &&
           (s->process->python_role == HD_PYTHON_ROLE_FORK_CHILD ||
            s->process->python_role == HD_PYTHON_ROLE_SPAWN_CHILD ||
            s->process->python_role == HD_PYTHON_ROLE_FORKSERVER_CHILD);
}

/* The writer is some other program (or a plain python -c) that a Python parent started and waits for. */
static bool subprocess_writer(const struct subject *s)
{
    const struct hd_process *parent = s->process ? hd_snapshot_find_process(s->snapshot, s->process->ppid) : NULL;
    return parent && hd_process_is_python(parent) && !multiprocessing_writer(s);
}

/* ---- the table ----------------------------------------------------------------------------------------------- */

_Static_assert(REPORT_FINDING_IDS <= 32, "the sets of ids below are 32-bit masks");
#define ID(id) (1u << (id))
#define FORK_FINDINGS (ID(REPORT_INHERITED_LOCK) | ID(REPORT_ORPHANED_WAIT) | ID(REPORT_FORK_UNSAFE_RUNTIME) | \
                       ID(REPORT_CUDA_INHERITED))

static const struct specific_remedy {
    unsigned ids; /* the finding ids it may follow, ID(REPORT_...) | ... */
    bool (*applies)(const struct subject *);
    const char *remedy;
} specific_remedies[] = {
    { FORK_FINDINGS, python_forked,
      "Python: create the workers with spawn instead of fork. In the script that starts the job, first thing under "
      "the main guard, before any DataLoader, Pool or CUDA work: if __name__ == '__main__': "
      "torch.multiprocessing.set_start_method('spawn', force=True) (plain Python: multiprocessing."
      "set_start_method('spawn', force=True)); or for one DataLoader only: DataLoader(..., "
      "multiprocessing_context='spawn')." },
    { FORK_FINDINGS, python_forked,
      "Not from Jupyter or IPython: there set_start_method fails with 'context has already been set', and even "
      "with force=True spawned workers cannot import classes defined in the notebook; move the Dataset and the "
      "training loop into a .py module and run it as a script, or use 'forkserver'." },
    { FORK_FINDINGS, python_forked,
      "Under spawn (and forkserver) the Dataset, collate_fn, worker_init_fn and all they hold are pickled to every "
      "worker: no lambdas or local functions, no open files, locks, sockets or database handles, no unpicklable "
      "models; open such things lazily in each worker (worker_init_fn, or on first use in __getitem__)." },
    { FORK_FINDINGS, python_forked,
      "Under spawn every worker imports the main module again: whatever runs outside if __name__ == '__main__': "
      "(training, CUDA initialisation, creating the DataLoader) runs again in every worker; keep the module's top "
      "level to imports and definitions." },
    { FORK_FINDINGS, python_forked_warned,
      "Python 3.12 and later warn of this very hang when they fork: \"DeprecationWarning: This process is "
      "multi-threaded, use of fork() may lead to deadlocks in the child.\" The warning is about the thread that "
      "held the lock or ran the pool here; silencing it does not help." },
    { ID(REPORT_FULL_PIPE), multiprocessing_writer,
      "Python multiprocessing.Queue: a process that put items on a queue does not exit until they are all in the "
      "pipe, so join() it only after taking everything it put (q.get() until its sentinel, then join()), or call "
      "q.cancel_join_thread() in it if losing what is left is fine. The same hang under spawn: changing the start "
      "method does not help." },
    { ID(REPORT_FULL_PIPE), subprocess_writer,
      "Python subprocess with stdout=PIPE or stderr=PIPE: call communicate() (it reads both while it waits) "
      "instead of wait(), or read the pipes before waiting; subprocess.run(..., capture_output=True) does it "
      "for you." },
    { ID(REPORT_WORKER_DIED), python_parent,
      "Python: multiprocessing.Pool never notices a worker killed in the middle of a task and waits forever; "
      "concurrent.futures.ProcessPoolExecutor raises BrokenProcessPool instead. A PyTorch DataLoader checks its "
      "workers itself; DataLoader(timeout=seconds) bounds the wait for each batch." },
};

bool report_add_specific_remedies(const struct hd_snapshot *snapshot, struct report_analysis *analysis)
{
    for (size_t f = 0; f < analysis->nfindings; f++) {
        struct report_finding *finding = &analysis->findings[f];
        const struct hd_process *process = NULL;
        const struct hd_thread *thread = report_graph_thread(&analysis->graph, finding->tid, &process);
        struct subject subject = { .snapshot = snapshot, .finding = finding, .process = process, .thread = thread };
        for (size_t r = 0; r < COUNT(specific_remedies); r++)
            if ((specific_remedies[r].ids & ID(finding->kind)) && specific_remedies[r].applies(&subject) &&
                !report_finding_remedy(finding, specific_remedies[r].remedy))
                return false;
    }
    return true;
}
