/* Threads and child processes that come and go as fast as they can, while hangdoc samples.
 * ready <pid> */
#include "fixture.h"

#include <pthread.h>
#include <sys/wait.h>

static void *short_lived(void *unused)
{
    return unused;
}

int main(void)
{
    pid_t self = getpid();
    fixture_ready("ready %d", (int)self);
    for (;;) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, short_lived, NULL) == 0)
            pthread_join(thread, NULL);
        pid_t child = fork();
        if (child == 0)
            _exit(0);
        if (child > 0)
            waitpid(child, NULL, 0);
    }
}
