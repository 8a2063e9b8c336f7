/* A healthy process: the main thread sleeps in poll() with a 5000 ms timeout, again and again; a ticker thread
 * polls with 20 ms and wakes all the time (progress by context switches).
 * ready <pid> <ticker tid> */
#include "fixture.h"

#include <poll.h>
#include <pthread.h>

static volatile pid_t ticker_tid;

static void *ticker(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "ticker");
    ticker_tid = fixture_gettid();
    for (;;)
        poll(NULL, 0, 20);
    return NULL;
}

int main(void)
{
    pid_t self = getpid();
    pthread_t thread;
    if (pthread_create(&thread, NULL, ticker, NULL) != 0)
        return 1;
    while (!ticker_tid)
        usleep(1000);
    prctl(PR_SET_NAME, "poller");
    /* the position is reached once the main thread sleeps in poll: a child watches for it and announces it
     * (SIGCHLD ignored: it is reaped by the kernel, no zombie stays in the tree) */
    signal(SIGCHLD, SIG_IGN);
    pid_t child = fork();
    if (child == 0) {
        fixture_die_with_parent(self);
        fixture_wait_for_wchan(self, self, "poll");
        fixture_ready("ready %d %d", (int)self, (int)ticker_tid);
        _exit(0);
    }
    close(FIXTURE_READY_FD);
    for (;;)
        poll(NULL, 0, 5000);
}
