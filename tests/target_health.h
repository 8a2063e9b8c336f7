/* A target's health as seen from outside, through /proc: whether any of its threads is stopped (state t or T) or
 * traced (TracerPid), and how much it has run. What the ptrace safety tests (test_stacks.c) and the kill-at-random
 * stress program (stress/kill_at_random.c) check once hangdoc has let a target go, or was killed holding it.
 *
 * Plain C, no Criterion: each caller decides what a finding means. A thread that exits while it is read is skipped,
 * never an error; a process that is gone makes the readers return false.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One thread as /proc/<pid>/task/<tid>/status shows it. */
struct target_thread {
    pid_t tid;
    char state;   /* the State: letter; 't' is a tracing stop, 'T' a job-control stop */
    pid_t tracer; /* TracerPid: 0 when nobody traces it */
};

bool target_thread_is_stopped(const struct target_thread *thread);

/* Calls `visit` for each thread of `pid` whose status could be read. `*unparsed` (when not NULL) counts statuses
 * that were read but lacked the State: or TracerPid: line. False when the process is gone. */
bool target_health_each_thread(pid_t pid, void (*visit)(const struct target_thread *thread, void *context),
                               void *context, size_t *unparsed);

/* One look at every thread: how many are stopped and traced, and the first of each, for a message. */
struct target_health {
    size_t threads;
    size_t stopped;
    size_t traced;
    size_t unparsed; /* statuses without the State: or TracerPid: line (none on any kernel seen so far) */
    struct target_thread first_stopped;
    struct target_thread first_traced;
};

/* False when the process is gone. */
bool target_health_look(pid_t pid, struct target_health *health);

/* How much a process has run: both figures grow while it runs, even when its threads only sleep and wake. */
struct target_activity {
    unsigned long long cpu_ticks;          /* user + system time of all its threads, in clock ticks */
    unsigned long long voluntary_switches; /* of its main thread */
};

/* False when the process is gone. */
bool target_health_activity(pid_t pid, struct target_activity *activity);
