/* A thread asleep forever on a wake-up that no thread is left to send.
 * By default the main thread holds mutex `held` while it waits on a condition variable (with another mutex, the
 * one pthread_cond_wait releases); the thread that was to signal it takes `held` first, and waits for it forever.
 * ready <pid> <signaller tid>
 * Built with -DPOSTER_RETURNED: the main thread waits in sem_wait() for the post of the only other thread, which
 * returned early on an error path without posting; the main thread is then the process's only thread.
 * ready <pid> */
#include "fixture.h"

#include <pthread.h>
#include <semaphore.h>

#ifdef POSTER_RETURNED
static sem_t done;

static void *poster(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "poster");
    int failed = 1; /* an error path: it returns before the post */
    if (failed)
        return NULL;
    sem_post(&done);
    return NULL;
}
#else
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER, guard = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static bool may_go;
static volatile pid_t signaller_tid;

static void *signaller(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "signaller");
    signaller_tid = fixture_gettid();
    pthread_mutex_lock(&held); /* the main thread holds it across its wait: forever */
    pthread_mutex_lock(&guard);
    may_go = true;
    pthread_cond_signal(&go);
    pthread_mutex_unlock(&guard);
    pthread_mutex_unlock(&held);
    return NULL;
}
#endif

/* A child announces once the threads sleep where the scenario says (SIGCHLD ignored: no zombie stays). */
static void announce_when_in_position(pid_t self, pid_t other)
{
    signal(SIGCHLD, SIG_IGN);
    if (fork() != 0)
        return;
    fixture_die_with_parent(self);
    fixture_wait_for_wchan(self, self, "futex");
    if (other) {
        fixture_wait_for_wchan(self, other, "futex");
        fixture_ready("ready %d %d", (int)self, (int)other);
    } else {
        fixture_ready("ready %d", (int)self);
    }
    _exit(0);
}

int main(void)
{
    pid_t self = getpid();
    pthread_t thread;
#ifdef POSTER_RETURNED
    sem_init(&done, 0, 0);
    if (pthread_create(&thread, NULL, poster, NULL) != 0)
        return 1;
    pthread_join(thread, NULL);
    announce_when_in_position(self, 0);
    close(FIXTURE_READY_FD);
    sem_wait(&done);
#else
    pthread_mutex_lock(&held);
    if (pthread_create(&thread, NULL, signaller, NULL) != 0)
        return 1;
    while (!signaller_tid)
        usleep(1000);
    announce_when_in_position(self, signaller_tid);
    close(FIXTURE_READY_FD);
    pthread_mutex_lock(&guard);
    while (!may_go)
        pthread_cond_wait(&go, &guard);
    pthread_mutex_unlock(&guard);
#endif
    return 0;
}
