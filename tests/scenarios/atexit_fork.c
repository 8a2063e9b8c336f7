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

static void register_one(void)
{
    atexit(handler);
}

int main(void)
{
    pthread_t thread;
    if (pthread_create(&thread, NULL, register_forever, NULL) != 0)
        return 1;
    int forks;
    pid_t child = fixture_fork_until_one_hangs(register_one, 20000, &forks);
    keep_registering = 0;
    if (child < 0)
        return 3; /* never reproduced */
    fixture_ready("ready %d %d %d", (int)getpid(), (int)child, forks);
    waitpid(child, NULL, 0);
    return 0;
}
