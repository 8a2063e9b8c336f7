/* A thread holds a lock while the process forks; the child takes it and sleeps forever: fork() copied the lock
 * held, and its owner, a thread of the parent, does not exist in the child.
 * Built once per lock variant (meson.build): LOCK_VARIANT 0 normal mutex, 1 robust mutex, 2 priority-inheritance
 * mutex, 3 rwlock held for writing. With PARENT_READS_PIPE the parent then waits on a pipe from the child instead
 * of in waitpid().
 * ready <parent pid> <holder tid> <child pid> */
#include "fixture.h"

#include <pthread.h>
#include <sys/wait.h>

#ifndef LOCK_VARIANT
#define LOCK_VARIANT 0
#endif

static pthread_mutex_t dataset_lock;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t lock_taken;
static volatile pid_t holder_tid;

static void init_lock(void)
{
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    if (LOCK_VARIANT == 1)
        pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
    if (LOCK_VARIANT == 2)
        pthread_mutexattr_setprotocol(&attributes, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&dataset_lock, &attributes);
}

static void take_lock(void)
{
    if (LOCK_VARIANT == 3)
        pthread_rwlock_wrlock(&table_lock);
    else
        pthread_mutex_lock(&dataset_lock);
}

static void *holder(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "holder");
    holder_tid = fixture_gettid();
    take_lock();
    pthread_barrier_wait(&lock_taken);
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    pid_t self = getpid();
    init_lock();
    pthread_t thread;
    pthread_barrier_init(&lock_taken, NULL, 2);
    if (pthread_create(&thread, NULL, holder, NULL) != 0)
        return 1;
    pthread_barrier_wait(&lock_taken);
    int results[2];
    if (pipe(results) != 0)
        return 1;
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        fixture_die_with_parent(self);
        prctl(PR_SET_NAME, "locker");
        close(results[0]);
        take_lock();
        ssize_t ignored = write(results[1], "done", 4);
        (void)ignored;
        _exit(0);
    }
    close(results[1]);
    fixture_wait_for_wchan(child, child, "futex");
    fixture_ready("ready %d %d %d", (int)self, (int)holder_tid, (int)child);
#ifdef PARENT_READS_PIPE
    char answer[4];
    ssize_t ignored = read(results[0], answer, sizeof answer);
    (void)ignored;
#endif
    waitpid(child, NULL, 0);
    return 0;
}
