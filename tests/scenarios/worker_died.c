/* A worker that dies while its parent waits for its result, and is never reaped: the parent holds both ends of
 * the result pipe (as a multiprocessing queue does), so no EOF ever tells it, and it polls in a loop with a
 * timeout (default: the worker is killed by SIGKILL, as the OOM killer does) or reads with none
 * (-DBLOCKING_READ: the worker crashes with SIGSEGV).
 * ready <parent pid> <worker pid> */
#include "fixture.h"

#include <poll.h>
#include <sys/wait.h>

static void die(void)
{
    prctl(PR_SET_NAME, "worker");
#ifdef BLOCKING_READ
    prctl(PR_SET_DUMPABLE, 0); /* no core file */
    signal(SIGSEGV, SIG_DFL);  /* not a sanitizer's handler */
    raise(SIGSEGV);
#else
    raise(SIGKILL);
#endif
    _exit(1);
}

int main(void)
{
    pid_t self = getpid();
    int results[2];
    if (pipe(results) != 0)
        return 1;
    pid_t worker = fork();
    if (worker < 0)
        return 1;
    if (worker == 0) {
        fixture_die_with_parent(self);
        die();
    }
    siginfo_t info;
    /* WNOWAIT: wait until it has died, but leave it a zombie, as a parent that never reaps does */
    if (waitid(P_PID, (id_t)worker, &info, WEXITED | WNOWAIT) != 0)
        return 1;
    fixture_ready("ready %d %d", (int)self, (int)worker);
    char result[64];
    for (;;) {
#ifdef BLOCKING_READ
        if (read(results[0], result, sizeof result) > 0)
            return 0;
#else
        struct pollfd fd = { .fd = results[0], .events = POLLIN };
        /* a long timeout, so that the few seconds of a test never see it expire */
        if (poll(&fd, 1, 30000) > 0 && read(results[0], result, sizeof result) > 0)
            return 0;
#endif
    }
}
