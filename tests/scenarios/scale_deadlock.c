/* A real deadlock hidden at scale: one process of N threads (argv[1], default 2,000): two of them lock the same two
 * mutexes in opposite orders and each holds what the other waits for, started halfway through N - 3 idle threads
 * (each on a condition variable of its own that nobody signals), and the main thread a waker in a timed loop. The
 * cycle is hung whatever the rest does; the idle threads are not.
 * ready <pid> <tid of the first of the cycle> <tid of the second> */
#include "scale.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;
static volatile pid_t cycle_tids[2];

static void *lock_in_order(void *argument)
{
    int which = (int)(long)argument;
    prctl(PR_SET_NAME, which == 0 ? "takes-a-then-b" : "takes-b-then-a");
    pthread_mutex_lock(which == 0 ? &lock_a : &lock_b);
    pthread_barrier_wait(&both_hold_one);
    /* after the barrier the next futex wait is the second lock's: nothing else of this thread waits in between */
    cycle_tids[which] = fixture_gettid();
    pthread_mutex_lock(which == 0 ? &lock_b : &lock_a);
    return NULL;
}

int main(int argc, char **argv)
{
    size_t threads = scale_count_argument(argc, argv, 1, 2000, 3);
    size_t idle_count = threads - 3, before = idle_count / 2;
    pthread_barrier_init(&both_hold_one, NULL, 2);
    struct scale_idle *idle_before = scale_start_idle(before);
    scale_create_thread(lock_in_order, (void *)0L);
    scale_create_thread(lock_in_order, (void *)1L);
    struct scale_idle *idle_after = scale_start_idle(idle_count - before);
    scale_wait_for_idle(idle_before, before);
    scale_wait_for_idle(idle_after, idle_count - before);
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    for (int which = 0; which < 2; which++)
        scale_wait_until_sleeping(getpid(), &cycle_tids[which], SYS_futex, &started);
    fixture_ready("ready %d %d %d", (int)getpid(), (int)cycle_tids[0], (int)cycle_tids[1]);
    scale_be_the_waker();
}
