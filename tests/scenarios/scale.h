/* Many idle threads for the scale scenarios (issue 14): each sleeps on a condition variable of its own that nobody
 * signals, the pattern of every idle thread pool (an ownerless private futex: any other thread of the process
 * could wake it), on a small stack; and waiting until every one of them really sleeps in futex(2). Header-only,
 * for scale_threads.c, scale_tree.c and scale_deadlock.c.
 */
#pragma once

#include "fixture.h"

#include <pthread.h>
#include <stdlib.h>

/* 10,000 threads of glibc's default 8 MiB would reserve 80 GiB of address space; 64 KiB is plenty for a wait. */
#define SCALE_STACK_SIZE (64 * 1024)
/* Thousands of threads on a 2-core machine take seconds to start and settle, more under a sanitizer. */
#define SCALE_POSITION_TIMEOUT_MS 120000
/* How often the waker, the thread that keeps the process alive, wakes up. */
#define SCALE_WAKER_PERIOD_NS (100 * 1000 * 1000)

struct scale_idle {
    pthread_mutex_t mutex;
    pthread_cond_t never_signalled;
    volatile pid_t tid;
};

static void *scale_idle_thread(void *argument)
{
    struct scale_idle *idle = argument;
    prctl(PR_SET_NAME, "idle-worker");
    idle->tid = fixture_gettid();
    pthread_mutex_lock(&idle->mutex);
    for (;;)
        pthread_cond_wait(&idle->never_signalled, &idle->mutex);
    return NULL;
}

/* Starts a detached thread on the small stack. */
static inline void scale_create_thread(void *(*function)(void *), void *argument)
{
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, SCALE_STACK_SIZE);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int error = pthread_create(&thread, &attributes, function, argument);
    pthread_attr_destroy(&attributes);
    if (error != 0) {
        fprintf(stderr, "fixture: pthread_create: %s\n", strerror(error));
        _exit(1);
    }
}

/* Starts `count` idle threads; their records stay allocated for the life of the process. */
static inline struct scale_idle *scale_start_idle(size_t count)
{
    struct scale_idle *idle = calloc(count ? count : 1, sizeof *idle);
    if (!idle)
        _exit(1);
    for (size_t i = 0; i < count; i++) {
        pthread_mutex_init(&idle[i].mutex, NULL);
        pthread_cond_init(&idle[i].never_signalled, NULL);
        scale_create_thread(scale_idle_thread, &idle[i]);
    }
    return idle;
}

/* True when thread tid of pid sleeps (state S) in system call `number`, as /proc/PID/task/TID/syscall shows it
 * (the number first; "running" while it runs). */
static inline bool scale_sleeps_in(pid_t pid, pid_t tid, long number)
{
    char text[1024];
    if (!fixture_read_task_file(pid, tid, "stat", text, sizeof text))
        return false;
    const char *close = strrchr(text, ')');
    if (!close || close[1] != ' ' || close[2] != 'S')
        return false;
    if (!fixture_read_task_file(pid, tid, "syscall", text, sizeof text))
        return false;
    char *end;
    long found = strtol(text, &end, 10);
    return end != text && found == number;
}

/* Waits until thread *tid (0 until the thread has written it) of pid sleeps in system call `number`; exits the
 * fixture when it does not within the position timeout, which the harness reports as "never got into position". */
static inline void scale_wait_until_sleeping(pid_t pid, const volatile pid_t *tid, long number,
                                             const struct timespec *started)
{
    while (!*tid || !scale_sleeps_in(pid, *tid, number)) {
        if (fixture_elapsed_ms(started) > SCALE_POSITION_TIMEOUT_MS) {
            fprintf(stderr, "fixture: thread %d of %d never slept in system call %ld\n", (int)*tid, (int)pid, number);
            _exit(2);
        }
        usleep(1000);
    }
}

/* Waits until every idle thread of this process sleeps in futex(2). A condition variable nobody signals is left
 * only by a signal, so a thread seen there once stays: one pass over the threads is enough. */
static inline void scale_wait_for_idle(const struct scale_idle *idle, size_t count)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    pid_t self = getpid();
    for (size_t i = 0; i < count; i++)
        scale_wait_until_sleeping(self, &idle[i].tid, SYS_futex, &started);
}

/* The live thread of a healthy process (its main thread, which keeps the program's name): it sleeps in a timed
 * loop and could signal any idle thread each time it wakes, so none of them is asleep forever. */
__attribute__((noreturn)) static inline void scale_be_the_waker(void)
{
    const struct timespec period = { .tv_nsec = SCALE_WAKER_PERIOD_NS };
    for (;;)
        nanosleep(&period, NULL);
}

/* A count from argv[index], or `otherwise` when absent; exits on nonsense. */
static inline size_t scale_count_argument(int argc, char **argv, int index, size_t otherwise, size_t at_least)
{
    if (argc <= index)
        return otherwise;
    char *end;
    long value = strtol(argv[index], &end, 10);
    if (*end || end == argv[index] || value < (long)at_least) {
        fprintf(stderr, "fixture: '%s' is not a count of at least %zu\n", argv[index], at_least);
        _exit(64);
    }
    return (size_t)value;
}
