/* What every scenario fixture shares: announcing "in position" to the harness, dying with the test, and waiting
 * until a thread really sleeps where the scenario says.
 *
 * Protocol: the harness passes a pipe as fd 3 (HANGDOC_READY_FD). A fixture writes one line, "ready PID...", when
 * every process and thread of the scenario is in position; the pids it lists are the ones the test asserts on.
 * Header-only so that each fixture stays one self-contained .c file.
 */
#pragma once

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FIXTURE_READY_FD 3
#define FIXTURE_POSITION_TIMEOUT_MS 10000

static inline pid_t fixture_gettid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* Every process of a fixture dies with its parent, so a crashed test leaves nothing behind. */
static inline void fixture_die_with_parent(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
}

__attribute__((format(printf, 1, 2))) static inline void fixture_ready(const char *format, ...)
{
    char line[512];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (length < 0 || length >= (int)sizeof line - 1)
        _exit(1);
    line[length++] = '\n';
    if (write(FIXTURE_READY_FD, line, (size_t)length) != length)
        _exit(1);
    close(FIXTURE_READY_FD);
}

static inline long fixture_elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* Reads /proc/<pid>/task/<tid>/<file> into buffer; false when it cannot. */
static inline bool fixture_read_task_file(pid_t pid, pid_t tid, const char *file, char *buffer, size_t size)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
    FILE *stream = fopen(path, "re");
    if (!stream)
        return false;
    size_t got = fread(buffer, 1, size - 1, stream);
    fclose(stream);
    buffer[got] = '\0';
    return true;
}

/* Waits until thread tid of pid sleeps with a wait channel containing `wchan_part`; exits the fixture on
 * timeout, which the harness reports as "never got into position". */
static inline void fixture_wait_for_wchan(pid_t pid, pid_t tid, const char *wchan_part)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    char wchan[128];
    while (fixture_elapsed_ms(&started) < FIXTURE_POSITION_TIMEOUT_MS) {
        if (fixture_read_task_file(pid, tid, "wchan", wchan, sizeof wchan) && strstr(wchan, wchan_part))
            return;
        usleep(5000);
    }
    fprintf(stderr, "fixture: thread %d never slept in %s\n", (int)tid, wchan_part);
    _exit(2);
}

/* Waits until the state letter of thread tid of pid is `state`. */
static inline void fixture_wait_for_state(pid_t pid, pid_t tid, char state)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    char stat[1024];
    while (fixture_elapsed_ms(&started) < FIXTURE_POSITION_TIMEOUT_MS) {
        if (fixture_read_task_file(pid, tid, "stat", stat, sizeof stat)) {
            const char *close = strrchr(stat, ')');
            if (close && close[1] == ' ' && close[2] == state)
                return;
        }
        usleep(5000);
    }
    fprintf(stderr, "fixture: thread %d never reached state %c\n", (int)tid, state);
    _exit(2);
}

/* Reaps `child` if it exits within `milliseconds`; true when it did. A fixture that forks until a child hangs uses
 * it to tell a child that got through from one that is stuck. */
static inline bool fixture_child_exits_within(pid_t child, int milliseconds)
{
    for (int waited = 0; waited < milliseconds; waited += 2) {
        if (waitpid(child, NULL, WNOHANG) == child)
            return true;
        usleep(2000);
    }
    return false;
}

/* Forks children that each run `in_child` and exit, up to `max_forks` of them, until one does not exit within
 * 200 ms: the race of a fixture whose parent has a thread that takes a lock of libc's now and then. Returns that
 * child once it sleeps on a futex, with how many forks it took in `*forks`; -1 when none hung. */
static inline pid_t fixture_fork_until_one_hangs(void (*in_child)(void), int max_forks, int *forks)
{
    pid_t self = getpid();
    for (*forks = 1; *forks <= max_forks; (*forks)++) {
        pid_t child = fork();
        if (child < 0)
            return -1;
        if (child == 0) {
            fixture_die_with_parent(self);
            in_child();
            _exit(0);
        }
        if (!fixture_child_exits_within(child, 200)) {
            fixture_wait_for_wchan(child, child, "futex");
            return child;
        }
    }
    return -1;
}
