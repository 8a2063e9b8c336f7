/* A loop split among threads (parallel.h). */
#include "parallel.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

struct range {
    void (*work)(void *context, size_t worker, size_t begin, size_t end);
    void *context;
    size_t worker;
    size_t begin;
    size_t end;
};

static void *run_range(void *argument)
{
    const struct range *range = argument;
    range->work(range->context, range->worker, range->begin, range->end);
    return NULL;
}

size_t probe_parallel_workers(size_t count, size_t threshold)
{
    if (count < threshold)
        return 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        return 1;
    return (size_t)cpus < PROBE_PARALLEL_WORKERS_MAX ? (size_t)cpus : PROBE_PARALLEL_WORKERS_MAX;
}

void probe_parallel_for(size_t count, size_t workers, void (*work)(void *context, size_t worker, size_t begin,
                                                                  size_t end),
                        void *context)
{
    if (workers < 1)
        workers = 1;
    if (workers > PROBE_PARALLEL_WORKERS_MAX)
        workers = PROBE_PARALLEL_WORKERS_MAX;
    struct range ranges[PROBE_PARALLEL_WORKERS_MAX];
    pthread_t threads[PROBE_PARALLEL_WORKERS_MAX];
    bool started[PROBE_PARALLEL_WORKERS_MAX] = { false };
    for (size_t w = 0; w < workers; w++)
        ranges[w] = (struct range){ .work = work, .context = context, .worker = w,
                                    .begin = count * w / workers, .end = count * (w + 1) / workers };
    /* the new threads inherit this mask: no signal handler ever runs on them */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    for (size_t w = 1; w < workers; w++)
        started[w] = pthread_create(&threads[w], NULL, run_range, &ranges[w]) == 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    run_range(&ranges[0]);
    for (size_t w = 1; w < workers; w++) {
        if (started[w])
            pthread_join(threads[w], NULL);
        else
            run_range(&ranges[w]);
    }
}
