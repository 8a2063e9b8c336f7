/* Two threads lock A then B, and B then A: each holds what the other waits for.
 * Built with -DUNOWNED_LOCKS, the locks record no owner (a futex word of 0, 1 or 2, as Rust's std::sync::Mutex,
 * absl::Mutex and many hand-rolled locks are): hangdoc must find the hang without naming a waker it cannot know.
 * ready <pid> <first tid> <second tid> */
#include "fixture.h"

#include <pthread.h>

#ifdef UNOWNED_LOCKS
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>

/* 0: free, 1: taken, 2: taken and waited for */
typedef atomic_int lock_t;
static lock_t lock_a, lock_b;

static void take(lock_t *word)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(word, &expected, 1))
        return;
    while (atomic_exchange(word, 2) != 0)
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

/* both lock words say "waited for": both threads are past the barrier, on their second lock */
static void wait_until_both_wait(void)
{
    while (atomic_load(&lock_a) != 2 || atomic_load(&lock_b) != 2)
        usleep(1000);
}
#else
typedef pthread_mutex_t lock_t;
static lock_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;

static void take(lock_t *mutex)
{
    pthread_mutex_lock(mutex);
}

/* the barrier's own futex wait is over once both sleep on the mutexes; make sure it is the second lock */
static void wait_until_both_wait(void)
{
    usleep(20000);
}
#endif

static pthread_barrier_t both_hold_one;
static volatile pid_t tids[2];

static void *lock_in_order(void *argument)
{
    int which = (int)(long)argument;
    prctl(PR_SET_NAME, which == 0 ? "takes-a-then-b" : "takes-b-then-a");
    tids[which] = fixture_gettid();
    take(which == 0 ? &lock_a : &lock_b);
    pthread_barrier_wait(&both_hold_one);
    take(which == 0 ? &lock_b : &lock_a);
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
    wait_until_both_wait();
    fixture_wait_for_wchan(self, tids[0], "futex");
    fixture_wait_for_wchan(self, tids[1], "futex");
    fixture_ready("ready %d %d %d", (int)self, (int)tids[0], (int)tids[1]);
    pthread_join(threads[0], NULL);
    return 0;
}
