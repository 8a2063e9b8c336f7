/* musl, linked statically: two threads in a lock-order deadlock on musl's own pthread mutexes, whose lock word is
 * the second int of the mutex and holds the owner's tid only for error-checking, recursive and robust mutexes.
 *   normal       PTHREAD_MUTEX_NORMAL: the lock word says "taken" (EBUSY) and records no owner
 *   errorcheck   PTHREAD_MUTEX_ERRORCHECK: the lock word is the owner's tid
 *   fed          the look-alike: a consumer waits on a condition that a producer signals every second, under a
 *                normal mutex (not hung)
 * ready <pid> <first tid> <second tid> */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t lock_a, lock_b;
static pthread_barrier_t both_hold_one;
static volatile pid_t tids[2];

static void *lock_in_order(void *argument)
{
    int which = (int)(long)argument;
    prctl(PR_SET_NAME, which == 0 ? "takes-a-then-b" : "takes-b-then-a");
    tids[which] = (pid_t)syscall(SYS_gettid);
    pthread_mutex_lock(which == 0 ? &lock_a : &lock_b);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(which == 0 ? &lock_b : &lock_a);
    return NULL;
}

/* musl's mutex: the second int is the lock word, the third the waiter count (src/internal/pthread_impl.h) */
static int waiters(pthread_mutex_t *mutex)
{
    return __atomic_load_n(&((volatile int *)mutex)[2], __ATOMIC_SEQ_CST);
}

/* the ready line (fixture.h's protocol, written without it: musl-gcc builds against musl's headers alone) */
static bool ready(void)
{
    char line[64];
    int length = snprintf(line, sizeof line, "ready %d %d %d\n", (int)getpid(), (int)tids[0], (int)tids[1]);
    bool written = write(3, line, (size_t)length) == length;
    close(3);
    return written;
}

static pthread_cond_t fed = PTHREAD_COND_INITIALIZER;
static int items;

static void *consume(void *argument)
{
    (void)argument;
    prctl(PR_SET_NAME, "consumer");
    tids[0] = (pid_t)syscall(SYS_gettid);
    for (;;) {
        pthread_mutex_lock(&lock_a);
        while (items == 0)
            pthread_cond_wait(&fed, &lock_a);
        items--;
        pthread_mutex_unlock(&lock_a);
    }
    return NULL;
}

static void *produce(void *argument)
{
    (void)argument;
    prctl(PR_SET_NAME, "producer");
    tids[1] = (pid_t)syscall(SYS_gettid);
    for (;;) {
        sleep(1);
        pthread_mutex_lock(&lock_a);
        items++;
        pthread_cond_signal(&fed);
        pthread_mutex_unlock(&lock_a);
    }
    return NULL;
}

static int feed_every_second(void)
{
    pthread_mutex_init(&lock_a, NULL);
    pthread_t threads[2];
    if (pthread_create(&threads[0], NULL, consume, NULL) != 0 || pthread_create(&threads[1], NULL, produce, NULL))
        return 1;
    while (!tids[0] || !tids[1])
        usleep(1000);
    usleep(100000);
    if (!ready())
        return 1;
    pthread_join(threads[0], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "fed") == 0)
        return feed_every_second();
    int type = argc > 1 && strcmp(argv[1], "errorcheck") == 0 ? PTHREAD_MUTEX_ERRORCHECK : PTHREAD_MUTEX_NORMAL;
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, type);
    pthread_mutex_init(&lock_a, &attributes);
    pthread_mutex_init(&lock_b, &attributes);
    pthread_barrier_init(&both_hold_one, NULL, 2);
    pthread_t threads[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&threads[i], NULL, lock_in_order, (void *)i) != 0)
            return 1;
    /* both in position when each lock counts its waiter, and the waiters have slept for a while */
    for (int waited = 0; waiters(&lock_a) != 1 || waiters(&lock_b) != 1; waited++) {
        if (waited > 10000)
            return 1;
        usleep(1000);
    }
    usleep(100000);
    if (!ready())
        return 1;
    pthread_join(threads[0], NULL);
    return 0;
}
