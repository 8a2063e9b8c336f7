/* A busy multi-threaded target for the ptrace safety tests: threads that spin, threads that sleep 1 ms at a time
 * (their system calls get interrupted by PTRACE_INTERRUPT and must restart), a condition variable with a timeout,
 * and a main thread that sleeps in a loop, so that progress shows in CPU time and in context switches.
 * Built with -DEXIT_AFTER_MS=N it exits after N ms: a target that ends while it is being sampled.
 * ready <pid>
 */
#include "fixture.h"

#include <pthread.h>
#include <stdatomic.h>

#define SPINNERS 4
#define SLEEPERS 2

static _Atomic unsigned long progress;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;

static void *spin(void *unused)
{
    for (;;)
        atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
    return unused;
}

static void *sleep_often(void *unused)
{
    for (;;) {
        struct timespec pause = { 0, 1000000 };
        nanosleep(&pause, NULL);
        atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
    }
    return unused;
}

static void *wait_with_timeout(void *unused)
{
    pthread_mutex_lock(&mutex);
    for (;;) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_nsec += 2000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&never_signalled, &mutex, &deadline);
        atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
    }
    return unused;
}

int main(void)
{
    pthread_t thread;
    for (int i = 0; i < SPINNERS; i++)
        if (pthread_create(&thread, NULL, spin, NULL) != 0)
            return 1;
    for (int i = 0; i < SLEEPERS; i++)
        if (pthread_create(&thread, NULL, sleep_often, NULL) != 0)
            return 1;
    if (pthread_create(&thread, NULL, wait_with_timeout, NULL) != 0)
        return 1;
    fixture_ready("ready %d", (int)getpid());
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    for (;;) {
        struct timespec pause = { 0, 1000000 };
        nanosleep(&pause, NULL);
#ifdef EXIT_AFTER_MS
        if (fixture_elapsed_ms(&started) >= EXIT_AFTER_MS)
            exit(0);
#endif
    }
}
