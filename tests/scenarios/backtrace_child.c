/* A target whose native stacks are known, like elfutils' tests/backtrace-child.c: each thread blocks at the end of
 * a chain of noinline functions, and the stack test asserts their names in order (built with -O2, and stripped).
 * ready <pid> <tid blocked in pause()> <tid blocked in read()> <tid blocked on a mutex>
 *   main:   main -> bt_main_wait -> pthread_join
 *   pause:  bt_pause_start -> bt_pause_outer -> bt_pause_middle -> bt_pause_inner -> pause
 *   read:   bt_read_start -> bt_read_outer -> bt_read_inner -> read
 *   mutex:  bt_lock_start -> bt_lock_outer -> bt_lock_inner -> pthread_mutex_lock (held by main)
 * The functions are global (no static-function clones such as .isra.0 renamed by the optimiser) and each does work
 * after its call, so that no call becomes a tail call and every frame stays on the stack.
 */
#include "fixture.h"

#include <pthread.h>
#include <stdatomic.h>

#define NOINLINE __attribute__((noinline, noclone, used))

void bt_pause_inner(void);
void bt_pause_middle(void);
void bt_pause_outer(void);
void bt_read_inner(void);
void bt_read_outer(void);
void bt_lock_inner(void);
void bt_lock_outer(void);
void *bt_pause_start(void *unused);
void *bt_read_start(void *unused);
void *bt_lock_start(void *unused);
void bt_main_wait(pthread_t thread);

volatile int bt_sink;
static int blocking_pipe[2];
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static _Atomic pid_t tids[3];

NOINLINE void bt_pause_inner(void)
{
    pause();
    bt_sink++;
}

NOINLINE void bt_pause_middle(void)
{
    bt_pause_inner();
    bt_sink++;
}

NOINLINE void bt_pause_outer(void)
{
    bt_pause_middle();
    bt_sink++;
}

NOINLINE void bt_read_inner(void)
{
    char byte;
    bt_sink += (int)read(blocking_pipe[0], &byte, 1);
    bt_sink++;
}

NOINLINE void bt_read_outer(void)
{
    bt_read_inner();
    bt_sink++;
}

NOINLINE void bt_lock_inner(void)
{
    pthread_mutex_lock(&held);
    bt_sink++;
    pthread_mutex_unlock(&held);
}

NOINLINE void bt_lock_outer(void)
{
    bt_lock_inner();
    bt_sink++;
}

NOINLINE void *bt_pause_start(void *unused)
{
    tids[0] = fixture_gettid();
    bt_pause_outer();
    bt_sink++;
    return unused;
}

NOINLINE void *bt_read_start(void *unused)
{
    tids[1] = fixture_gettid();
    bt_read_outer();
    bt_sink++;
    return unused;
}

NOINLINE void *bt_lock_start(void *unused)
{
    tids[2] = fixture_gettid();
    bt_lock_outer();
    bt_sink++;
    return unused;
}

NOINLINE void bt_main_wait(pthread_t thread)
{
    pthread_join(thread, NULL);
    bt_sink++;
}

/* Until the thread sleeps inside a system call (state S, /proc/.../syscall names a number, not "running"). */
static void wait_until_asleep(pid_t pid, pid_t tid)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    char syscall_line[256];
    while (fixture_elapsed_ms(&started) < FIXTURE_POSITION_TIMEOUT_MS) {
        fixture_wait_for_state(pid, tid, 'S');
        if (fixture_read_task_file(pid, tid, "syscall", syscall_line, sizeof syscall_line) &&
            syscall_line[0] >= '0' && syscall_line[0] <= '9')
            return;
        usleep(2000);
    }
    _exit(2);
}

/* Announces the ready line once every thread, main included, sleeps where the chains say, then exits. */
static void *announce(void *unused)
{
    pid_t self = getpid();
    for (int i = 0; i < 3; i++) {
        while (!tids[i])
            usleep(1000);
        wait_until_asleep(self, tids[i]);
    }
    wait_until_asleep(self, self);
    fixture_ready("ready %d %d %d %d", (int)self, (int)tids[0], (int)tids[1], (int)tids[2]);
    return unused;
}

int main(void)
{
    if (pipe(blocking_pipe) != 0)
        return 1;
    pthread_mutex_lock(&held);
    pthread_t threads[3], announcer;
    void *(*starts[3])(void *) = { bt_pause_start, bt_read_start, bt_lock_start };
    for (int i = 0; i < 3; i++)
        if (pthread_create(&threads[i], NULL, starts[i], NULL) != 0)
            return 1;
    if (pthread_create(&announcer, NULL, announce, NULL) != 0 || pthread_detach(announcer) != 0)
        return 1;
    bt_main_wait(threads[0]);
    return 0;
}
