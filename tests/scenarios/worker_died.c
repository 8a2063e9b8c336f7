/* A worker that dies while its parent waits for its result, and is never reaped: the parent holds both ends of
 * the result pipe (as a multiprocessing queue does), so no EOF ever tells it, and it polls in a loop with a
 * timeout (default: the worker is killed by SIGKILL, as the OOM killer does) or reads with none
 * (-DBLOCKING_READ: the worker crashes with SIGSEGV).
 * -DVANISH: the parent ignores SIGCHLD, so the kernel reaps the worker at once, and the worker lives on for
 * VANISH_AFTER_MS after the ready line: a diagnosis that starts at once sees it in its first samples, not later.
 * ready <parent pid> <worker pid> */
#include "fixture.h"

#include <poll.h>
#include <sys/wait.h>

#define VANISH_AFTER_MS 400

static void die(void)
{
    prctl(PR_SET_NAME, "worker");
#ifdef VANISH
    usleep(VANISH_AFTER_MS * 1000);
#endif
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
#ifdef VANISH
    signal(SIGCHLD, SIG_IGN); /* no zombie: the kernel reaps the worker */
#endif
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
#ifndef VANISH
    siginfo_t info;
    /* WNOWAIT: wait until it has died, but leave it a zombie, as a parent that never reaps does */
    if (waitid(P_PID, (id_t)worker, &info, WEXITED | WNOWAIT) != 0)
        return 1;
#endif
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
