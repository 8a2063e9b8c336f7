/* Healthy at scale: a tree of P processes (argv[1], default 1,000: this one and P - 1 children) of T threads each
 * (argv[2], default 10). In every process T - 1 threads are idle, each on a condition variable of its own that
 * nobody signals; a child's main thread reads a pipe whose only writer is the parent, and the parent's main thread
 * is a waker in a timed loop: it could write to the pipe, or signal any of its idle threads, at any moment.
 * ready <parent pid> (once every thread of the tree is in position; the test counts the tree in /proc) */
#include "scale.h"

#include <errno.h>
#include <fcntl.h>

/* A child: its idle threads, a byte on `ready` once they sleep, then a read of `hold` that only the parent could
 * end. */
__attribute__((noreturn)) static void child(pid_t parent, size_t threads, int hold, int ready)
{
    fixture_die_with_parent(parent);
    prctl(PR_SET_NAME, "tree-worker");
    struct scale_idle *idle = scale_start_idle(threads - 1);
    scale_wait_for_idle(idle, threads - 1);
    if (write(ready, "x", 1) != 1)
        _exit(1);
    close(ready);
    char byte;
    ssize_t got;
    while ((got = read(hold, &byte, 1)) < 0 && errno == EINTR)
        ;
    _exit(got == 0 ? 0 : 1); /* the parent is gone */
}

/* Waits for a byte from each of the `children` (each one's idle threads sleep), then for every child's main thread
 * to sleep in read(2). */
static void wait_for_children(const pid_t *children, size_t count, int ready)
{
    for (size_t received = 0; received < count;) {
        char bytes[256];
        size_t want = count - received < sizeof bytes ? count - received : sizeof bytes;
        ssize_t got = read(ready, bytes, want);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            fprintf(stderr, "fixture: a child died before it was in position\n");
            _exit(2);
        }
        received += (size_t)got;
    }
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    for (size_t i = 0; i < count; i++)
        scale_wait_until_sleeping(children[i], &children[i], SYS_read, &started);
}

int main(int argc, char **argv)
{
    size_t processes = scale_count_argument(argc, argv, 1, 1000, 1);
    size_t threads = scale_count_argument(argc, argv, 2, 10, 1);
    pid_t self = getpid();
    int hold[2], ready[2];
    if (pipe2(hold, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0)
        return 1;
    pid_t *children = calloc(processes, sizeof *children);
    if (!children)
        return 1;
    for (size_t i = 0; i + 1 < processes; i++) {
        pid_t forked = fork();
        if (forked < 0) {
            perror("fixture: fork");
            return 1;
        }
        if (forked == 0) {
            /* nothing of the harness's or the parent's but the two pipe ends it uses: a child that held the write
             * end of the pipe it reads would be a writer of its own */
            close(FIXTURE_READY_FD);
            close(hold[1]);
            close(ready[0]);
            child(self, threads, hold[0], ready[1]);
        }
        children[i] = forked;
    }
    close(hold[0]);
    close(ready[1]);
    struct scale_idle *idle = scale_start_idle(threads - 1);
    wait_for_children(children, processes - 1, ready[0]);
    close(ready[0]);
    scale_wait_for_idle(idle, threads - 1);
    fixture_ready("ready %d", (int)self);
    scale_be_the_waker(); /* holding hold[1] open: it never writes, but could */
}
