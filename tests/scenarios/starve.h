/* Starving a thread of CPU so that it takes a PTRACE_INTERRUPT late: every thread pinned to one CPU (the first
 * this process may use), SCHED_OTHER threads spinning on it, and the thread to starve under SCHED_IDLE, which
 * runs only now and then while they do. Header-only, for the fixtures that stop late (late_stopper.c,
 * late_ender.c).
 */
#pragma once

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

static volatile unsigned long starve_spins;

/* Pins the calling thread to `cpu`. */
static inline bool starve_pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0; /* 0: the calling thread */
}

/* The first CPU this process may run on; -1 when that cannot be read. */
static inline int starve_first_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set))
            return cpu;
    return -1;
}

static void *starve_hog(void *cpu)
{
    if (!starve_pin_to((int)(intptr_t)cpu))
        _exit(3);
    for (;;)
        starve_spins++;
    return NULL;
}

/* Starts `count` SCHED_OTHER threads spinning on `cpu`; false when one could not be started. */
static inline bool starve_start_hogs(int cpu, int count)
{
    pthread_t thread;
    for (int i = 0; i < count; i++)
        if (pthread_create(&thread, NULL, starve_hog, (void *)(intptr_t)cpu) != 0)
            return false;
    return true;
}

/* The calling thread joins `cpu` under SCHED_IDLE: from now on it runs only when the hogs let it. */
static inline bool starve_become_idle(int cpu)
{
    struct sched_param none = { 0 };
    return starve_pin_to(cpu) && sched_setscheduler(0, SCHED_IDLE, &none) == 0;
}

/* Spins for ever (the starved thread's work). */
static inline _Noreturn void starve_spin(void)
{
    for (;;)
        starve_spins++;
}
