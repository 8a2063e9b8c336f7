/* A thread exits while holding a mutex; the main thread then waits for it forever.
 * ready <pid> <tid of the thread that exited> */
#include "fixture.h"

#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t quitter_tid;

static void *quit_holding_it(void *unused)
{
    (void)unused;
    quitter_tid = fixture_gettid();
    pthread_mutex_lock(&lock);
    return NULL; /* exits with the lock held */
}

int main(void)
{
    pid_t self = getpid();
    pthread_t thread;
    if (pthread_create(&thread, NULL, quit_holding_it, NULL) != 0)
        return 1;
    pthread_join(thread, NULL);
    /* a watcher announces once the main thread sleeps on the lock (SIGCHLD ignored: no zombie stays) */
    signal(SIGCHLD, SIG_IGN);
    pid_t watcher = fork();
    if (watcher == 0) {
        fixture_die_with_parent(self);
        fixture_wait_for_wchan(self, self, "futex");
        fixture_ready("ready %d %d", (int)self, (int)quitter_tid);
        _exit(0);
    }
    close(FIXTURE_READY_FD);
    pthread_mutex_lock(&lock);
    return 0;
}
