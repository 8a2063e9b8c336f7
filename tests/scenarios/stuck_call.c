/* One endless call (issue 40, "stuck in one call"): a worker thread loops in one function without a system call (a
 * convergence test that never converges), while the main thread joins it.
 * ready <pid> <worker tid> */
#include "fixture.h"

#include <pthread.h>

/* global: gcc 16 warns of a local volatile that is only ever written */
volatile double estimate = 1.0;
static volatile pid_t worker_tid;

/* Newton's iteration for the square root of 2, with a tolerance no step can get under (a sign slip: < 0) */
__attribute__((noinline)) static void converge(void)
{
    for (;;) {
        double next = (estimate + 2.0 / estimate) / 2.0;
        double step = next > estimate ? next - estimate : estimate - next;
        if (step < 0.0)
            return;
        estimate = next;
    }
}

static void *solve(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "solver");
    worker_tid = fixture_gettid();
    converge();
    return NULL;
}

int main(void)
{
    pthread_t solver;
    if (pthread_create(&solver, NULL, solve, NULL) != 0)
        return 1;
    while (!worker_tid)
        usleep(1000);
    fixture_ready("ready %d %d", (int)getpid(), (int)worker_tid);
    pthread_join(solver, NULL);
    return 0;
}
