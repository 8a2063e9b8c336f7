/* A forked child and an exec'd child of a program that is not position-independent (built with -no-pie: ELF type
 * EXEC, mapped at 0x400000 in every process, like Debian's /usr/bin/python3.11). The executable's load address
 * cannot tell the two apart; auxv's AT_RANDOM bytes can (probe/origin.h).
 *
 * Started without arguments, it first execs itself as "<argv0> parent", so that the exec'd child, "<argv0>
 * execed", starts from a stack of the same size (same argv length, same environment, same file name): with ASLR
 * off (setarch -R) its AT_RANDOM lies at its parent's very address, and only the 16 bytes there differ. The parent
 * forks one child that stays as it is and one that execs the program again; all three sleep in pause().
 * ready <parent> <forked child> <exec'd child>
 */
#include "fixture.h"

#include <fcntl.h>
#include <poll.h>

#define SELF "/proc/self/exe"
#define EXECED_READY_FD 5

static void sleep_forever(void)
{
    for (;;)
        pause();
}

/* The exec'd child: says it runs, then sleeps. PR_SET_PDEATHSIG survives the exec (prctl(2)). */
static void run_execed(void)
{
    if (write(EXECED_READY_FD, "x", 1) != 1)
        _exit(1);
    close(EXECED_READY_FD);
    sleep_forever();
}

static pid_t fork_sleeper(pid_t parent)
{
    pid_t child = fork();
    if (child == 0) {
        fixture_die_with_parent(parent);
        close(FIXTURE_READY_FD);
        sleep_forever();
    }
    return child;
}

static pid_t fork_and_exec(pid_t parent, char *argv0, int *ready_fd)
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        _exit(1);
    pid_t child = fork();
    if (child == 0) {
        fixture_die_with_parent(parent);
        close(FIXTURE_READY_FD);
        /* dup2 clears O_CLOEXEC on a copy, but not when the pipe's end is that fd already */
        if (dup2(pipe_fds[1], EXECED_READY_FD) != EXECED_READY_FD || fcntl(EXECED_READY_FD, F_SETFD, 0) != 0)
            _exit(1);
        execl(SELF, argv0, "execed", (char *)NULL);
        _exit(127);
    }
    close(pipe_fds[1]);
    *ready_fd = pipe_fds[0];
    return child;
}

static bool execed_runs(int ready_fd)
{
    struct pollfd ready = { .fd = ready_fd, .events = POLLIN };
    char byte;
    bool runs = poll(&ready, 1, FIXTURE_POSITION_TIMEOUT_MS) == 1 && read(ready_fd, &byte, 1) == 1;
    close(ready_fd);
    return runs;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        execl(SELF, argv[0], "parent", (char *)NULL); /* "parent" and "execed": the same length */
        return 127;
    }
    if (strcmp(argv[1], "execed") == 0)
        run_execed();
    pid_t self = getpid();
    pid_t forked = fork_sleeper(self);
    int ready_fd;
    pid_t execed = fork_and_exec(self, argv[0], &ready_fd);
    if (forked < 0 || execed < 0 || !execed_runs(ready_fd)) {
        fprintf(stderr, "origin_tree: the children did not start\n");
        return 2;
    }
    fixture_wait_for_state(forked, forked, 'S');
    fixture_wait_for_state(execed, execed, 'S');
    fixture_ready("ready %d %d %d", (int)self, (int)forked, (int)execed);
    sleep_forever();
}
