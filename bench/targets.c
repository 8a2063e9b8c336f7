/* Benchmark targets: processes whose threads sleep forever, so that every tool sees the same stacks.
 *   targets threads N       one process with N threads (the main thread included), all blocked
 *   targets tree P T        P processes (this one and P-1 children) with T threads each
 *   targets condvars N      one process with N threads, each waiting on a condition variable of its own (an ownerless
 *                           private futex: the idle thread pool's pattern, the worst case of the wait-for graph)
 *   targets condtree P T    P processes with T threads each, every thread on its own condition variable
 * Prints "ready <pid>..." (every process of the target) on stdout once all threads sleep; dies with its parent's
 * stdin (the bench script holds it open) or on SIGTERM.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t never_released = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void *blocked_worker(void *unused)
{
    pthread_mutex_lock(&never_released);
    return unused;
}

/* Nobody ever signals it: each thread sleeps on the futex of its own condition variable, which has no owner. */
__attribute__((noinline)) static void *condvar_worker(void *unused)
{
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&mutex);
    for (;;)
        pthread_cond_wait(&never_signalled, &mutex);
    return unused;
}

static void *(*worker)(void *) = blocked_worker;

__attribute__((noinline)) static void start_threads(int count)
{
    /* small stacks: 10,000 threads of 8 MiB each would reserve 80 GiB */
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    for (int i = 1; i < count; i++) {
        pthread_t thread;
        if (pthread_create(&thread, &attributes, worker, NULL) != 0)
            exit(1);
    }
    pthread_attr_destroy(&attributes);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 64;
    bool tree = strcmp(argv[1], "tree") == 0 || strcmp(argv[1], "condtree") == 0;
    if (strncmp(argv[1], "cond", 4) == 0)
        worker = condvar_worker;
    if (tree && argc < 4)
        return 64;
    int processes = tree ? atoi(argv[2]) : 1;
    int threads = tree ? atoi(argv[3]) : atoi(argv[2]);
    pthread_mutex_lock(&never_released);
    pid_t top = getpid();
    int ready[2];
    if (pipe(ready) != 0)
        return 1;
    printf("ready %d", (int)top);
    fflush(stdout);
    for (int p = 1; p < processes; p++) {
        pid_t child = fork();
        if (child == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            start_threads(threads);
            if (write(ready[1], "x", 1) != 1)
                _exit(1);
            for (;;)
                pause();
        }
        printf(" %d", (int)child);
    }
    start_threads(threads);
    for (int p = 1; p < processes; p++) {
        char byte;
        if (read(ready[0], &byte, 1) != 1)
            return 1;
    }
    usleep(200000 + (useconds_t)threads * processes * 20); /* every thread asleep in its futex */
    printf("\n");
    fflush(stdout);
    for (;;)
        pause();
}
