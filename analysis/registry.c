/* The registry of rules (registry.h): one row per finding id. */
#include "registry.h"

#include "rules/rule.h"

#include <string.h>

static const struct report_rule rules[REPORT_FINDING_IDS] = {
    [REPORT_INHERITED_LOCK] = { .name = "inherited-lock", .cause = REPORT_CAUSE_FORK_INHERITANCE, .rank = 1,
                                .hang = true, .grouping = REPORT_GROUP_BY_OBJECT,
                                .apply = report_rule_inherited_lock },
    [REPORT_ABANDONED_LOCK] = { .name = "abandoned-lock", .cause = REPORT_CAUSE_DEADLOCK, .rank = 15, .hang = true,
                                .grouping = REPORT_GROUP_BY_OBJECT, .apply = report_rule_abandoned_lock },
    [REPORT_LOCK_CYCLE] = { .name = "lock-cycle", .cause = REPORT_CAUSE_DEADLOCK, .rank = 7, .hang = true,
                            .grouping = REPORT_GROUP_BY_THREAD, .apply = report_rule_lock_cycle },
    [REPORT_UNOWNED_LOCK_CYCLE] = { .name = "unowned-lock-cycle", .cause = REPORT_CAUSE_DEADLOCK, .rank = 9,
                                    .hang = true, .grouping = REPORT_GROUP_BY_MEMBERS,
                                    .apply = report_rule_unowned_lock_cycle },
    [REPORT_FULL_PIPE] = { .name = "full-pipe", .cause = REPORT_CAUSE_DEADLOCK, .rank = 8, .hang = true,
                           .grouping = REPORT_GROUP_BY_MEMBERS, .apply = report_rule_full_pipe },
    [REPORT_WAIT_CYCLE] = { .name = "wait-cycle", .cause = REPORT_CAUSE_DEADLOCK, .rank = 10, .hang = true,
                            .grouping = REPORT_GROUP_BY_MEMBERS, .apply = report_rule_wait_cycle },
    [REPORT_POOL_STARVATION] = { .name = "pool-starvation", .cause = REPORT_CAUSE_DEADLOCK, .rank = 11,
                                 .hang = true, .grouping = REPORT_GROUP_BY_PROCESS,
                                 .apply = report_rule_pool_starvation },
    [REPORT_QUEUE_JOIN] = { .name = "queue-join", .cause = REPORT_CAUSE_DEADLOCK, .rank = 12, .hang = true,
                            .grouping = REPORT_GROUP_BY_PROCESS, .apply = report_rule_queue_join },
    [REPORT_PIPE_HELD_OPEN] = { .name = "pipe-held-open", .cause = REPORT_CAUSE_PIPE_HELD_OPEN, .rank = 13,
                                .hang = true, .grouping = REPORT_GROUP_BY_THREAD,
                                .apply = report_rule_pipe_held_open },
    [REPORT_EVENT_LOOP_BLOCKED] = { .name = "event-loop-blocked", .cause = REPORT_CAUSE_DEADLOCK, .rank = 14,
                                    .hang = true, .grouping = REPORT_GROUP_BY_THREAD,
                                    .apply = report_rule_event_loop_blocked },
    [REPORT_ORPHANED_WAIT] = { .name = "orphaned-wait", .cause = REPORT_CAUSE_FORK_INHERITANCE, .rank = 2,
                               .hang = true, .grouping = REPORT_GROUP_BY_RUNTIME,
                               .apply = report_rule_orphaned_wait },
    [REPORT_WORKER_DIED] = { .name = "worker-died", .cause = REPORT_CAUSE_WORKER_DIED, .rank = 16, .hang = true,
                             .grouping = REPORT_GROUP_BY_PARENT, .apply = report_rule_worker_died },
    [REPORT_UNINTERRUPTIBLE] = { .name = "uninterruptible", .cause = REPORT_CAUSE_KERNEL, .rank = 18, .hang = true,
                                 .grouping = REPORT_GROUP_BY_PROCESS, .apply = report_rule_uninterruptible },
    [REPORT_STOPPED] = { .name = "stopped", .cause = REPORT_CAUSE_STOPPED, .rank = 19, .hang = true,
                         .grouping = REPORT_GROUP_BY_PROCESS, .apply = report_rule_stopped },
    [REPORT_SPINNING] = { .name = "spinning", .cause = REPORT_CAUSE_BUSY_LOOP, .rank = 20, .hang = true,
                          .grouping = REPORT_GROUP_BY_THREAD, .apply = report_rule_spinning },
    [REPORT_REPLACED_WORKER] = { .name = "replaced-worker", .cause = REPORT_CAUSE_WORKER_DIED, .rank = 6,
                                 .hang = true, .grouping = REPORT_GROUP_BY_PROCESS,
                                 .apply = report_rule_replaced_worker },
    [REPORT_TIMER_ONLY_WAKERS] = { .name = "timer-only-wakers", .cause = REPORT_CAUSE_DEADLOCK, .rank = 17,
                                   .hang = true, .grouping = REPORT_GROUP_BY_PROCESS,
                                   .apply = report_rule_timer_only_wakers },
    [REPORT_SPAWN_REIMPORT] = { .name = "spawn-reimport", .cause = REPORT_CAUSE_SPAWN_REIMPORT, .rank = 5,
                                .hang = true, .grouping = REPORT_GROUP_BY_PROCESS,
                                .apply = report_rule_spawn_reimport },
    /* points at the workers' root cause, is none itself */
    [REPORT_WAITING_ON_WORKERS] = { .name = "waiting-on-workers", .cause = REPORT_CAUSE_NONE, .rank = 0,
                                    .hang = true, .grouping = REPORT_GROUP_BY_PROCESS,
                                    .apply = report_rule_waiting_on_workers },
    [REPORT_IDLE] = { .name = "idle", .cause = REPORT_CAUSE_NONE, .rank = 0, .hang = false,
                      .grouping = REPORT_GROUP_BY_PROCESS, .apply = report_rule_idle },
    [REPORT_FORK_UNSAFE_RUNTIME] = { .name = "fork-unsafe-runtime", .cause = REPORT_CAUSE_FORK_INHERITANCE,
                                     .rank = 3, .hang = true, .grouping = REPORT_GROUP_BY_PROCESS,
                                     .apply = report_rule_fork_unsafe_runtime },
    [REPORT_CUDA_INHERITED] = { .name = "cuda-inherited", .cause = REPORT_CAUSE_FORK_INHERITANCE, .rank = 4,
                                .hang = true, .grouping = REPORT_GROUP_BY_PROCESS,
                                .apply = report_rule_cuda_inherited },
};

const struct report_rule *report_rule(enum report_finding_id id)
{
    return &rules[id];
}

const char *report_finding_id_name(enum report_finding_id id)
{
    return rules[id].name;
}

bool report_finding_id_parse(const char *name, enum report_finding_id *id)
{
    for (int i = 0; i < REPORT_FINDING_IDS; i++)
        if (strcmp(rules[i].name, name) == 0) {
            *id = (enum report_finding_id)i;
            return true;
        }
    return false;
}

const char *report_cause_name(enum report_cause cause)
{
    static const char *const names[REPORT_CAUSES] = {
        [REPORT_CAUSE_NONE] = "none",
        [REPORT_CAUSE_FORK_INHERITANCE] = "fork-inheritance",
        [REPORT_CAUSE_DEADLOCK] = "deadlock",
        [REPORT_CAUSE_KERNEL] = "kernel",
        [REPORT_CAUSE_BUSY_LOOP] = "busy-loop",
        [REPORT_CAUSE_STOPPED] = "stopped",
        [REPORT_CAUSE_WORKER_DIED] = "worker-died",
        [REPORT_CAUSE_SPAWN_REIMPORT] = "spawn-reimport",
        [REPORT_CAUSE_PIPE_HELD_OPEN] = "pipe-held-open",
        [REPORT_CAUSE_UNKNOWN] = "unknown",
    };
    return names[cause];
}
