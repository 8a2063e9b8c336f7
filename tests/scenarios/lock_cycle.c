/* Two threads lock A then B, and B then A: each holds what the other waits for.
 * ready <pid> <first tid> <second tid> */
#include "fixture.h"

#include <pthread.h>

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;
static volatile pid_t tids[2];

static void *lock_in_order(void *argument)
{
    int which = (int)(long)argument;
    prctl(PR_SET_NAME, which == 0 ? "takes-a-then-b" : "takes-b-then-a");
    tids[which] = fixture_gettid();
    pthread_mutex_lock(which == 0 ? &lock_a : &lock_b);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(which == 0 ? &lock_b : &lock_a);
    return NULL;
}

int main(void)
{
    pid_t self = getpid();
    pthread_barrier_init(&both_hold_one, NULL, 2);
    pthread_t threads[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&threads[i], NULL, lock_in_order, (void *)i) != 0)
            return 1;
    while (!tids[0] || !tids[1])
        usleep(1000);
    fixture_wait_for_wchan(self, tids[0], "futex");
    fixture_wait_for_wchan(self, tids[1], "futex");
    /* the barrier's own futex wait is over once both sleep on the mutexes; make sure it is the second lock */
    usleep(20000);
    fixture_wait_for_wchan(self, tids[0], "futex");
    fixture_wait_for_wchan(self, tids[1], "futex");
    fixture_ready("ready %d %d %d", (int)self, (int)tids[0], (int)tids[1]);
    pthread_join(threads[0], NULL);
    return 0;
}
