/* Per-CPU scheduler clock calibration (schedclock.h). */
#include "schedclock.h"

#include "procfs.h"

#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

struct calibration {
    bool tried;
    bool known;
    double exec_start_ms;
    double monotonic_ms;
};

struct probe_sched_clock {
    struct calibration cpus[CPU_SETSIZE];
    struct calibration unpinned;
};

struct probe_sched_clock *probe_sched_clock_new(void)
{
    return calloc(1, sizeof(struct probe_sched_clock));
}

void probe_sched_clock_free(struct probe_sched_clock *clock)
{
    free(clock);
}

static double monotonic_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

/* Our own exec_start, fresh. A running task's exec_start is only updated at ticks (seen lagging 20 ms while
 * busy), and sched_yield() returns early when nothing else is runnable; waking from a sleep sets it to "now" on
 * this CPU (set_next_entity()), so sleep for a microsecond first. */
static bool read_own(struct calibration *calibration)
{
    struct timespec nap = { .tv_sec = 0, .tv_nsec = 1000 };
    /* the default timer slack (50 us) would make that microsecond 50 of them, per CPU calibrated */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    nanosleep(&nap, NULL);
    if (slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    char text[8192];
    ssize_t length = probe_read_file("/proc/thread-self/sched", text, sizeof text);
    double after = monotonic_ms();
    struct probe_sched sched;
    calibration->tried = true;
    if (length < 0 || !probe_parse_sched(text, (size_t)length, &sched) || !sched.has_exec_start)
        return false;
    calibration->exec_start_ms = sched.exec_start_ms;
    calibration->monotonic_ms = after;
    calibration->known = true;
    return true;
}

static void calibrate(struct calibration *calibration, int cpu)
{
    cpu_set_t saved, only;
    calibration->tried = true;
    if (sched_getaffinity(0, sizeof saved, &saved) != 0)
        return;
    CPU_ZERO(&only);
    CPU_SET(cpu, &only);
    if (sched_setaffinity(0, sizeof only, &only) != 0)
        return; /* a cpuset that excludes that CPU: the caller falls back to an unpinned reading */
    if (sched_getcpu() == cpu)
        read_own(calibration);
    sched_setaffinity(0, sizeof saved, &saved);
}

static bool extrapolate(const struct calibration *calibration, double *now_ms)
{
    if (!calibration->known)
        return false;
    *now_ms = calibration->exec_start_ms + (monotonic_ms() - calibration->monotonic_ms);
    return true;
}

bool probe_sched_clock_now_ms(struct probe_sched_clock *clock, int cpu, double *now_ms, bool *exact)
{
    if (cpu >= 0 && cpu < CPU_SETSIZE) {
        struct calibration *calibration = &clock->cpus[cpu];
        if (!calibration->tried)
            calibrate(calibration, cpu);
        if (extrapolate(calibration, now_ms)) {
            *exact = true;
            return true;
        }
    }
    if (!clock->unpinned.tried)
        read_own(&clock->unpinned);
    *exact = false;
    return extrapolate(&clock->unpinned, now_ms);
}
