/* A process that ends while hangdoc holds it seized, before it stopped: it spins under SCHED_IDLE on one CPU
 * while two SCHED_OTHER spinners of its child share that CPU, so it takes a PTRACE_INTERRUPT late (as in
 * late_stopper.c); the child kills it as soon as it is traced. Run under `hangdoc run`, the end of the command is
 * seen by the wait for its stop.
 * ready <pid> <child pid>
 */
#include "fixture.h"
#include "starve.h"

#define HOGS 2

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
    int cpu = starve_first_cpu();
    if (cpu < 0)
        return 1;
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        fixture_die_with_parent(parent); /* the parent it kills takes it along */
        if (!starve_start_hogs(cpu, HOGS))
            _exit(1);
        while (tracer_of(parent) == 0)
            usleep(200);
        kill(parent, SIGKILL);
        for (;;)
            pause();
    }
    if (!starve_become_idle(cpu))
        return 3;
    fixture_ready("ready %d %d", (int)parent, (int)child);
    starve_spin();
}
