/* glibc does not reset __exit_funcs_lock at fork(): a thread registering atexit handlers in a loop holds it now
 * and then, and a child forked at such a moment hangs in its own atexit() call (pytorch#130610). The parent forks
 * until one child fails to finish within 200 ms.
 * ready <parent pid> <hung child pid> <forks it took> */
#include "fixture.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>

static void handler(void)
{
}

static volatile int keep_registering = 1;

/* Each atexit() call allocates a little: stop once a child hangs, so memory stays bounded. */
static void *register_forever(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "atexit-loop");
    while (keep_registering)
        atexit(handler);
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    pid_t self = getpid();
    pthread_t thread;
    if (pthread_create(&thread, NULL, register_forever, NULL) != 0)
        return 1;
    for (int forks = 1; forks <= 20000; forks++) {
        pid_t child = fork();
        if (child < 0)
            return 1;
        if (child == 0) {
            fixture_die_with_parent(self);
            atexit(handler);
            _exit(0);
        }
        if (!fixture_child_exits_within(child, 200)) {
            keep_registering = 0;
            fixture_wait_for_wchan(child, child, "futex");
            fixture_ready("ready %d %d %d", (int)self, (int)child, forks);
            waitpid(child, NULL, 0);
            return 0;
        }
    }
    return 3; /* never reproduced */
}
