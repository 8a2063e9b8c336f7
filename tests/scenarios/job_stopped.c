/* Job control on a real terminal: a session (a shell's shape) on a pty, whose background job reads the terminal
 * and is stopped by the kernel with SIGTTIN, while the session leader waits for it in waitpid() (issue 40).
 *   job_stopped ttin   the background job reads the terminal: SIGTTIN
 *   job_stopped tstp   the job stops itself as Ctrl-Z would (raise(SIGTSTP))
 *   job_stopped continued  the look-alike: the job stops so, and is continued (as bg does); it then works on
 * ready <session leader pid> <job pid> */
#include "fixture.h"

#include <fcntl.h>
#include <pty.h>
#include <sys/ioctl.h>

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "ttin") != 0 && strcmp(argv[1], "tstp") != 0 &&
                      strcmp(argv[1], "continued") != 0))
        return 64;
    bool ttin = strcmp(argv[1], "ttin") == 0, continued = strcmp(argv[1], "continued") == 0;
    int master, slave;
    if (openpty(&master, &slave, NULL, NULL, NULL) != 0)
        return 1;
    pid_t fixture = getpid();
    int job_pipe[2];
    if (pipe(job_pipe) != 0)
        return 1;
    pid_t leader = fork();
    if (leader < 0)
        return 1;
    if (leader == 0) {
        fixture_die_with_parent(fixture);
        close(FIXTURE_READY_FD);
        close(master);
        /* the "shell": a session of its own, the pty its terminal, its own group in the foreground */
        if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) != 0 || tcsetpgrp(slave, getpgrp()) != 0)
            _exit(2);
        prctl(PR_SET_NAME, "session");
        pid_t shell = getpid();
        pid_t job = fork();
        if (job == 0) {
            fixture_die_with_parent(shell);
            setpgid(0, 0); /* a background job: not the terminal's foreground group */
            prctl(PR_SET_NAME, "job");
            if (ttin) {
                char byte;
                if (read(slave, &byte, 1) < 0) /* SIGTTIN stops it here */
                    _exit(3);
            } else {
                raise(SIGTSTP);
            }
            while (continued) {
                struct timespec tick = { 0, 50 * 1000 * 1000 };
                nanosleep(&tick, NULL); /* working on, with a timeout */
            }
            _exit(0);
        }
        setpgid(job, job);
        if (write(job_pipe[1], &job, sizeof job) != sizeof job)
            _exit(1);
        int status;
        waitpid(job, &status, 0); /* the leader waits for the job to end, not for its stop */
        _exit(0);
    }
    pid_t job = 0;
    if (read(job_pipe[0], &job, sizeof job) != sizeof job)
        return 1;
    fixture_wait_for_state(job, job, 'T');
    if (continued) {
        kill(job, SIGCONT);
        fixture_wait_for_state(job, job, 'S');
    }
    fixture_ready("ready %d %d", (int)leader, (int)job);
    for (;;)
        pause();
}
