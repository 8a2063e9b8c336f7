/* A process initialises the (fake) CUDA driver, then forks; the child calls into the driver and hangs on the lock
 * that the parent's cuda-EvtHandlr thread held at fork(). The parent forks until a child fails to finish within
 * 200 ms (the thread holds the lock nearly all the time: it takes one fork as a rule).
 * ready <parent pid> <hung child pid> <cuda-EvtHandlr tid> <handle fd> */
#include "fake_cuda.h"
#include "fixture.h"

#include <sys/wait.h>

static bool exits_within(pid_t child, int milliseconds)
{
    for (int waited = 0; waited < milliseconds; waited += 2) {
        if (waitpid(child, NULL, WNOHANG) == child)
            return true;
        usleep(2000);
    }
    return false;
}

int main(void)
{
    pid_t self = getpid();
    if (cuInit(0) != 0)
        return 1;
    for (int forks = 1; forks <= 200; forks++) {
        pid_t child = fork();
        if (child < 0)
            return 1;
        if (child == 0) {
            fixture_die_with_parent(self);
            prctl(PR_SET_NAME, "worker");
            cuCtxSynchronize();
            _exit(0);
        }
        if (!exits_within(child, 200)) {
            fixture_wait_for_wchan(child, child, "futex");
            fixture_ready("ready %d %d %d %d", (int)self, (int)child, (int)fakeCudaEventThread(), fakeCudaHandle());
            waitpid(child, NULL, 0);
            return 0;
        }
    }
    return 3; /* never reproduced */
}
