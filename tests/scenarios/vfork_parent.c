/* A parent suspended in vfork() (state D) because its child neither execs nor exits.
 * ready <parent pid> <child pid> */
#include "fixture.h"

int main(void)
{
    pid_t parent = getpid();
    pid_t child = vfork();
    if (child < 0)
        return 1;
    if (child == 0) {
        /* The parent is suspended until we exec or exit, so the child announces the position itself. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        fixture_wait_for_state(parent, parent, 'D');
        fixture_ready("ready %d %d", (int)parent, (int)getpid());
        for (;;)
            pause();
    }
    return 0;
}
