/* A child that exited with status 3 and that its parent never reaps (state Z).
 * ready <parent pid> <zombie pid> */
#include "fixture.h"

#include <sys/wait.h>

int main(void)
{
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0)
        _exit(3);
    siginfo_t info;
    /* WNOWAIT: wait until it has exited, but leave it a zombie */
    if (waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) != 0)
        return 1;
    fixture_ready("ready %d %d", (int)getpid(), (int)child);
    for (;;)
        pause();
}
