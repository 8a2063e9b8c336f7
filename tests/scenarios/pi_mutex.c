/* A priority-inheritance mutex held by one thread (which then waits for a signal) and wanted by another of the
 * same process: the waiter sleeps in FUTEX_LOCK_PI and the lock word holds the owner's tid.
 * (Inherited through fork() a PI mutex does not hang: the kernel refuses FUTEX_LOCK_PI with EPERM when the
 * owner is a thread of another process, and glibc aborts.)
 * ready <pid> <holder tid> */
#include "fixture.h"

#include <pthread.h>

static pthread_mutex_t lock;
static pthread_barrier_t lock_taken;
static volatile pid_t holder_tid;

static pid_t self;

/* Takes the lock, and once the main thread sleeps on it (a PI waiter sleeps in the rt_mutex code) says so and
 * waits for a signal: the fixture is in position with no process or thread of its own coming or going, which a
 * diagnosis could catch on its way out. */
static void *holder(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "pi-holder");
    holder_tid = fixture_gettid();
    pthread_mutex_lock(&lock);
    pthread_barrier_wait(&lock_taken);
    fixture_wait_for_wchan(self, self, "rt_mutex");
    fixture_ready("ready %d %d", (int)self, (int)holder_tid);
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    self = getpid();
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_setprotocol(&attributes, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&lock, &attributes);
    pthread_barrier_init(&lock_taken, NULL, 2);
    pthread_t thread;
    if (pthread_create(&thread, NULL, holder, NULL) != 0)
        return 1;
    pthread_barrier_wait(&lock_taken);
    prctl(PR_SET_NAME, "pi-waiter");
    pthread_mutex_lock(&lock);
    return 0;
}
