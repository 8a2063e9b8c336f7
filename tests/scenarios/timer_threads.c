/* A process whose only threads besides the stuck one wake on timers (issue 13): what hangdoc must call likely hung,
 * and the healthy look-alikes it must not.
 *   timer_threads stuck:     the main thread waits on a condition variable nobody will signal; two housekeeping
 *                            threads wake every 100 ms on timed waits of their own and go back to sleep.
 *   timer_threads scheduler: a timer thread sleeps 300 ms and wakes the main thread each time; two idle workers
 *                            wait for tasks that the main thread would hand out (not hung: the main thread runs).
 *   timer_threads sleeper:   the main thread sleeps 200 ms in a loop (the program's own schedule); two idle
 *                            workers wait for tasks (a pool idle between batches: not hung).
 *   timer_threads server:    an acceptor thread waits in accept() on a listening socket, two idle workers wait
 *                            for the connections it would hand them, a housekeeper ticks, the main thread joins
 *                            the acceptor (an idle server: not hung, the outside world can wake it).
 * ready <pid> */
#include "fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;
static pthread_cond_t tick = PTHREAD_COND_INITIALIZER;
static pthread_cond_t tasks = PTHREAD_COND_INITIALIZER;

static void *housekeeper(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "housekeeper");
    pthread_cond_t own = PTHREAD_COND_INITIALIZER;
    for (;;) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_nsec += 100 * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&mutex);
        pthread_cond_timedwait(&own, &mutex, &deadline);
        pthread_mutex_unlock(&mutex);
    }
    return NULL;
}

static void *ticker(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "ticker");
    for (;;) {
        usleep(300 * 1000);
        pthread_mutex_lock(&mutex);
        pthread_cond_signal(&tick);
        pthread_mutex_unlock(&mutex);
    }
    return NULL;
}

static void *worker(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "worker");
    pthread_mutex_lock(&mutex);
    for (;;)
        pthread_cond_wait(&tasks, &mutex);
    return NULL;
}

static void *acceptor(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "acceptor");
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 8) != 0)
        _exit(1);
    for (;;) {
        int connection = accept(listener, NULL, NULL);
        if (connection >= 0)
            close(connection); /* a worker would take it */
    }
    return NULL;
}

static void start(void *(*routine)(void *))
{
    pthread_t thread;
    if (pthread_create(&thread, NULL, routine, NULL) != 0)
        _exit(1);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "stuck";
    if (strcmp(mode, "stuck") == 0) {
        start(housekeeper);
        start(housekeeper);
        fixture_ready("ready %d", (int)getpid());
        pthread_mutex_lock(&mutex);
        for (;;)
            pthread_cond_wait(&never_signalled, &mutex);
    }
    start(worker);
    start(worker);
    if (strcmp(mode, "server") == 0) {
        start(housekeeper);
        pthread_t thread;
        if (pthread_create(&thread, NULL, acceptor, NULL) != 0)
            return 1;
        fixture_ready("ready %d", (int)getpid());
        pthread_join(thread, NULL);
        return 0;
    }
    if (strcmp(mode, "scheduler") == 0) {
        start(ticker);
        fixture_ready("ready %d", (int)getpid());
        pthread_mutex_lock(&mutex);
        for (;;)
            pthread_cond_wait(&tick, &mutex); /* then it would hand out the tasks that are due */
    }
    fixture_ready("ready %d", (int)getpid());
    for (;;)
        usleep(200 * 1000);
}
