/* A process that ends while hangdoc holds it seized, before it stopped: it spins under SCHED_IDLE on one CPU
 * while two SCHED_OTHER spinners of its child share that CPU, so it takes a PTRACE_INTERRUPT late (as in
 * late_stopper.c); the child kills it as soon as it is traced. Run under `hangdoc run`, the end of the command is
 * seen by the wait for its stop.
 * ready <pid> <child pid>
 */
#include "fixture.h"

#include <pthread.h>
#include <sched.h>

#define HOGS 2

static int cpu;
static volatile unsigned long spins;

static bool pin_to(int where)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(where, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0; /* 0: the calling thread */
}

static int first_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &set))
            return i;
    return -1;
}

static void *hog(void *unused)
{
    if (!pin_to(cpu))
        _exit(3);
    for (;;)
        spins++;
    return unused;
}

/* The tracer of `pid` from its status file; 0 when none (or it is gone). */
static long tracer_of(pid_t pid)
{
    char status[4096];
    if (!fixture_read_task_file(pid, pid, "status", status, sizeof status))
        return 0;
    const char *line = strstr(status, "\nTracerPid:");
    return line ? strtol(line + 11, NULL, 10) : 0;
}

int main(void)
{
    cpu = first_cpu();
    if (cpu < 0)
        return 1;
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        fixture_die_with_parent(parent); /* the parent it kills takes it along */
        pthread_t thread;
        for (int i = 0; i < HOGS; i++)
            if (pthread_create(&thread, NULL, hog, NULL) != 0)
                _exit(1);
        while (tracer_of(parent) == 0)
            usleep(200);
        kill(parent, SIGKILL);
        for (;;)
            pause();
    }
    struct sched_param none = { 0 };
    if (!pin_to(cpu) || sched_setscheduler(0, SCHED_IDLE, &none) != 0)
        return 3;
    fixture_ready("ready %d %d", (int)parent, (int)child);
    for (;;)
        spins++;
}
