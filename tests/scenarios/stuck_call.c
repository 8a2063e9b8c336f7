/* One endless call (issue 40, "stuck in one call"): a worker thread loops in one function without a system call (a
 * convergence test that never converges), while the main thread joins it.
 *   stuck_call          that loop
 *   stuck_call moving   the look-alike: the worker computes as long without a system call, but moves through four
 *                       functions, 40 ms of the clock in each (read through the vDSO), round and round
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

/* Four phases of a computation that moves on: each spins on its own arithmetic until its 40 ms are up. */
static double phase_until(const struct timespec *start, long ms)
{
    return (double)start->tv_sec * 1e3 + (double)start->tv_nsec / 1e6 + (double)ms;
}

static double now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

#define PHASE(name, expression)                                                                                      \
    __attribute__((noinline)) static void name(double until)                                                        \
    {                                                                                                                \
        while (now_ms() < until)                                                                                     \
            for (int i = 0; i < 1000; i++)                                                                           \
                estimate = (expression);                                                                             \
    }
PHASE(add_up, estimate + 1.0)
PHASE(halve, estimate / 2.0 + 1.0)
PHASE(square, estimate * estimate / (estimate + 1.0))
PHASE(root, (estimate + 2.0 / estimate) / 2.0)

static void move_on(void)
{
    void (*const phases[])(double) = { add_up, halve, square, root };
    for (;;)
        for (size_t p = 0; p < sizeof phases / sizeof *phases; p++) {
            struct timespec start;
            clock_gettime(CLOCK_MONOTONIC, &start);
            phases[p](phase_until(&start, 40));
        }
}

static bool moving;

static void *solve(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "solver");
    worker_tid = fixture_gettid();
    if (moving)
        move_on();
    converge();
    return NULL;
}

int main(int argc, char **argv)
{
    moving = argc > 1 && strcmp(argv[1], "moving") == 0;
    pthread_t solver;
    if (pthread_create(&solver, NULL, solve, NULL) != 0)
        return 1;
    while (!worker_tid)
        usleep(1000);
    fixture_ready("ready %d %d", (int)getpid(), (int)worker_tid);
    pthread_join(solver, NULL);
    return 0;
}
