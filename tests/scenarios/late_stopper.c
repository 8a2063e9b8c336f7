/* A thread that stops late: it spins under SCHED_IDLE while two SCHED_OTHER spinners share its one CPU, so it
 * runs only now and then and takes a PTRACE_INTERRUPT long after it was asked (longer than hangdoc's leaf wait).
 * Every thread is pinned to the same CPU (the first one this process may use). The main thread sleeps.
 * ready <pid> <tid of the SCHED_IDLE thread>
 */
#include "fixture.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define HOGS 2

static _Atomic pid_t idle_tid;
static volatile unsigned long spins;

static bool pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0; /* 0: the calling thread */
}

static int first_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set))
            return cpu;
    return -1;
}

static int cpu;

static void *hog(void *unused)
{
    if (!pin_to(cpu))
        _exit(3);
    for (;;)
        spins++;
    return unused;
}

static void *idle_spinner(void *unused)
{
    struct sched_param none = { 0 };
    if (!pin_to(cpu) || sched_setscheduler(0, SCHED_IDLE, &none) != 0)
        _exit(3);
    atomic_store(&idle_tid, fixture_gettid());
    for (;;)
        spins++;
    return unused;
}

int main(void)
{
    cpu = first_cpu();
    if (cpu < 0)
        return 1;
    pthread_t thread;
    for (int i = 0; i < HOGS; i++)
        if (pthread_create(&thread, NULL, hog, NULL) != 0)
            return 1;
    if (pthread_create(&thread, NULL, idle_spinner, NULL) != 0)
        return 1;
    while (atomic_load(&idle_tid) == 0)
        usleep(1000);
    fixture_ready("ready %d %d", (int)getpid(), (int)atomic_load(&idle_tid));
    for (;;)
        pause();
}
