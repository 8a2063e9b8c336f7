/* A child stopped by SIGSTOP (state T); its parent waits for it.
 * ready <stopped child pid> */
#include "fixture.h"

#include <sys/wait.h>

int main(void)
{
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        fixture_die_with_parent(parent);
        prctl(PR_SET_NAME, "stopped");
        raise(SIGSTOP);
        for (;;)
            pause();
    }
    int status;
    if (waitpid(child, &status, WUNTRACED) != child || !WIFSTOPPED(status))
        return 1;
    fixture_ready("ready %d", (int)child);
    for (;;)
        pause();
}
