/* One thread that waits on a pipe only its own process writes, without a timeout (issue 40, "timers only the
 * process knows"):
 *   self_timer heartbeat  setitimer(ITIMER_REAL) every 5 s, whose SIGALRM handler writes the pipe: healthy, and
 *                         between two ticks nothing in /proc shows the timer
 *   self_timer alarm      alarm(60), then pause(): the old way to sleep, healthy too
 *   self_timer deaf       the same poll, with no handler and no timer: nothing will ever write the pipe (hung)
 * ready <pid> */
#include "fixture.h"

#include <poll.h>
#include <sys/time.h>

static int pipe_fds[2];

static void on_alarm(int signal_number)
{
    (void)signal_number;
    char tick = 't';
    if (write(pipe_fds[1], &tick, 1) < 0)
        _exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 64;
    const char *mode = argv[1];
    if (pipe(pipe_fds) != 0)
        return 1;
    pid_t self = getpid();
    if (strcmp(mode, "alarm") == 0) {
        signal(SIGALRM, on_alarm);
        alarm(60);
        fixture_ready("ready %d", (int)self);
        for (;;)
            pause();
    }
    if (strcmp(mode, "heartbeat") == 0) {
        signal(SIGALRM, on_alarm);
        struct itimerval every = { { 5, 0 }, { 5, 0 } };
        setitimer(ITIMER_REAL, &every, NULL);
    } else if (strcmp(mode, "deaf") != 0) {
        return 64;
    }
    bool announced = false;
    for (;;) {
        struct pollfd readable = { pipe_fds[0], POLLIN, 0 };
        if (!announced) {
            fixture_ready("ready %d", (int)self);
            announced = true;
        }
        if (poll(&readable, 1, -1) > 0) {
            char ticks[64];
            if (read(pipe_fds[0], ticks, sizeof ticks) < 0)
                return 1;
        }
    }
}
