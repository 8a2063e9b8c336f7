/* Healthy: a thread pool idle on a condition variable, with a live producer (it sleeps in a timed loop and could
 * signal at any moment); the main thread joins the workers.
 * ready <pid> <worker tid> <worker tid> <producer tid> */
#include "fixture.h"

#include <pthread.h>

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
static int work_items;
static volatile pid_t tids[3];

static void *worker(void *argument)
{
    tids[(long)argument] = fixture_gettid();
    prctl(PR_SET_NAME, "pool-worker");
    pthread_mutex_lock(&queue_lock);
    for (;;) {
        while (work_items == 0)
            pthread_cond_wait(&work_ready, &queue_lock);
        work_items--;
    }
    return NULL;
}

static void *producer(void *unused)
{
    (void)unused;
    tids[2] = fixture_gettid();
    prctl(PR_SET_NAME, "producer");
    for (;;)
        sleep(10); /* would add work and signal work_ready */
    return NULL;
}

int main(void)
{
    pid_t self = getpid();
    pthread_t threads[3];
    for (long i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, worker, (void *)i);
    pthread_create(&threads[2], NULL, producer, NULL);
    while (!tids[0] || !tids[1] || !tids[2])
        usleep(1000);
    signal(SIGCHLD, SIG_IGN);
    pid_t watcher = fork();
    if (watcher == 0) {
        fixture_die_with_parent(self);
        fixture_wait_for_wchan(self, tids[0], "futex");
        fixture_wait_for_wchan(self, tids[1], "futex");
        fixture_wait_for_wchan(self, self, "futex");
        fixture_ready("ready %d %d %d %d", (int)self, (int)tids[0], (int)tids[1], (int)tids[2]);
        _exit(0);
    }
    close(FIXTURE_READY_FD);
    pthread_join(threads[0], NULL);
    return 0;
}
