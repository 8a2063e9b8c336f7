/* Healthy: the parent blocks reading a pipe whose writer, its child, is alive and not blocked (it sleeps in a
 * timed loop and could write at any moment).
 * ready <parent pid> <child pid> */
#include "fixture.h"

int main(void)
{
    pid_t self = getpid();
    int results[2];
    if (pipe(results) != 0)
        return 1;
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        fixture_die_with_parent(self);
        prctl(PR_SET_NAME, "writer");
        close(results[0]);
        fixture_wait_for_wchan(self, self, "pipe");
        fixture_ready("ready %d %d", (int)self, (int)getpid());
        for (;;)
            sleep(10);
    }
    close(results[1]);
    close(FIXTURE_READY_FD);
    char buffer[16];
    ssize_t ignored = read(results[0], buffer, sizeof buffer);
    (void)ignored;
    return 0;
}
