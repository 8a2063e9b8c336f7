/* A thread that stops late: it spins under SCHED_IDLE while two SCHED_OTHER spinners share its one CPU, so it
 * runs only now and then and takes a PTRACE_INTERRUPT long after it was asked (longer than hangdoc's leaf wait).
 * Every thread is pinned to the same CPU (the first one this process may use). The main thread sleeps.
 * ready <pid> <tid of the SCHED_IDLE thread>
 */
#include "fixture.h"
#include "starve.h"

#include <stdatomic.h>

#define HOGS 2

static _Atomic pid_t idle_tid;
static int cpu;

static void *idle_spinner(void *unused)
{
    if (!starve_become_idle(cpu))
        _exit(3);
    atomic_store(&idle_tid, fixture_gettid());
    starve_spin();
    return unused;
}

int main(void)
{
    cpu = starve_first_cpu();
    if (cpu < 0 || !starve_start_hogs(cpu, HOGS))
        return 1;
    pthread_t thread;
    if (pthread_create(&thread, NULL, idle_spinner, NULL) != 0)
        return 1;
    while (atomic_load(&idle_tid) == 0)
        usleep(1000);
    fixture_ready("ready %d %d", (int)getpid(), (int)atomic_load(&idle_tid));
    for (;;)
        pause();
}
