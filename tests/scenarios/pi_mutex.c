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

static void *holder(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "pi-holder");
    holder_tid = fixture_gettid();
    pthread_mutex_lock(&lock);
    pthread_barrier_wait(&lock_taken);
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    pid_t self = getpid();
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_setprotocol(&attributes, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&lock, &attributes);
    pthread_barrier_init(&lock_taken, NULL, 2);
    pthread_t thread;
    if (pthread_create(&thread, NULL, holder, NULL) != 0)
        return 1;
    pthread_barrier_wait(&lock_taken);
    signal(SIGCHLD, SIG_IGN);
    pid_t watcher = fork();
    if (watcher == 0) {
        fixture_die_with_parent(self);
        fixture_wait_for_wchan(self, self, "rt_mutex"); /* a PI waiter sleeps in the rt_mutex code */
        fixture_ready("ready %d %d", (int)self, (int)holder_tid);
        _exit(0);
    }
    close(FIXTURE_READY_FD);
    prctl(PR_SET_NAME, "pi-waiter");
    pthread_mutex_lock(&lock);
    return 0;
}
