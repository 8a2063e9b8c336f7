/* A thread holds a mutex while the process forks; the child locks it and sleeps forever: fork() copied the mutex
 * locked, and its owner, a thread of the parent, does not exist in the child.
 * ready <parent pid> <holder tid> <child pid> */
#include "fixture.h"

#include <pthread.h>
#include <sys/wait.h>

static pthread_mutex_t dataset_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t lock_taken;
static volatile pid_t holder_tid;

static void *holder(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "holder");
    holder_tid = fixture_gettid();
    pthread_mutex_lock(&dataset_lock);
    pthread_barrier_wait(&lock_taken);
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    pid_t self = getpid();
    pthread_t thread;
    pthread_barrier_init(&lock_taken, NULL, 2);
    if (pthread_create(&thread, NULL, holder, NULL) != 0)
        return 1;
    pthread_barrier_wait(&lock_taken);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        fixture_die_with_parent(self);
        prctl(PR_SET_NAME, "locker");
        pthread_mutex_lock(&dataset_lock);
        _exit(0);
    }
    fixture_wait_for_wchan(child, child, "futex");
    fixture_ready("ready %d %d %d", (int)self, (int)holder_tid, (int)child);
    waitpid(child, NULL, 0);
    return 0;
}
