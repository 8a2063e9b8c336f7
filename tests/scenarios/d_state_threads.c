/* A multi-threaded process with one thread in uninterruptible sleep that no signal and no ptrace stop can end: the
 * thread called vfork(), and its child neither execs nor exits. The other threads go on: one waits on a condition
 * variable forever, one sleeps a millisecond at a time. hangdoc must take the stacks it can, say why not the D
 * thread's, and never wait for a stop that cannot come.
 * ready <pid> <the D thread> <vfork child> <the waiter> <the ticker> */
#include "fixture.h"

#include <pthread.h>
#include <stdatomic.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;
static _Atomic pid_t waiter_tid, ticker_tid;

static void *wait_forever(void *unused)
{
    waiter_tid = fixture_gettid();
    pthread_mutex_lock(&mutex);
    for (;;)
        pthread_cond_wait(&never_signalled, &mutex);
    return unused;
}

static void *tick(void *unused)
{
    ticker_tid = fixture_gettid();
    for (;;) {
        struct timespec pause = { 0, 1000000 };
        nanosleep(&pause, NULL);
    }
    return unused;
}

static void *vfork_and_stay(void *unused)
{
    pid_t self = getpid(), thread = fixture_gettid();
    pid_t child = vfork();
    if (child == 0) {
        /* this thread is suspended until the child execs or exits: the child announces the position */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        fixture_wait_for_state(self, thread, 'D');
        fixture_wait_for_wchan(self, waiter_tid, "futex");
        fixture_ready("ready %d %d %d %d %d", (int)self, (int)thread, (int)getpid(), (int)waiter_tid,
                      (int)ticker_tid);
        for (;;)
            pause();
    }
    return unused;
}

int main(void)
{
    pthread_t waiter, ticker, vforker;
    pthread_create(&waiter, NULL, wait_forever, NULL);
    pthread_create(&ticker, NULL, tick, NULL);
    while (!waiter_tid || !ticker_tid)
        usleep(1000);
    pthread_create(&vforker, NULL, vfork_and_stay, NULL);
    pthread_join(vforker, NULL);
    return 0;
}
