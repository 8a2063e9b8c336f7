/* A worker orphaned by its parent: the middle process forks a grandchild and exits, so the grandchild's parent is
 * the nearest subreaper (hangdoc run) and no longer in the command's own tree. The command itself waits forever.
 * ready <command pid> <orphaned grandchild pid> */
#include "fixture.h"

#include <sys/wait.h>

int main(void)
{
    pid_t self = getpid();
    int handoff[2];
    if (pipe(handoff) != 0)
        return 1;
    pid_t middle = fork();
    if (middle < 0)
        return 1;
    if (middle == 0) {
        pid_t grandchild = fork();
        if (grandchild == 0) {
            prctl(PR_SET_NAME, "orphan");
            for (;;)
                pause();
        }
        ssize_t ignored = write(handoff[1], &grandchild, sizeof grandchild);
        (void)ignored;
        _exit(0); /* leaves the grandchild to the subreaper */
    }
    pid_t grandchild = 0;
    if (read(handoff[0], &grandchild, sizeof grandchild) != sizeof grandchild)
        return 1;
    waitpid(middle, NULL, 0);
    /* in position once the grandchild has been handed on */
    for (int tries = 0; tries < 1000; tries++) {
        char stat[1024];
        if (fixture_read_task_file(grandchild, grandchild, "stat", stat, sizeof stat)) {
            const char *close = strrchr(stat, ')');
            int ppid = 0;
            if (close && sscanf(close + 4, "%d", &ppid) == 1 && ppid != middle)
                break;
        }
        usleep(5000);
    }
    fixture_ready("ready %d %d", (int)self, (int)grandchild);
    for (;;)
        pause();
}
