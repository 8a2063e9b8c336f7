/* The registry of rules: one row per finding id, the one place that says what a finding is.
 *
 * A row gives the id's stable name (DESIGN.md's verdict catalogue, the JSON Schema's enum, the man page), the
 * cause it names when it is a hang's root cause, its rank among root causes, how two of its findings are one
 * hang, and the rule function that adds its findings. Rules run in the order of the enum, which is the order
 * findings are listed in; the verdict prefers root causes by rank. Adding a rule: a value here, a row in
 * registry.c, its function in the rules folder (rules/rule.h), and its tests; tests/unit/test_registry.c fails
 * until the schema and the man page name it too.
 */
#pragma once

#include <stdbool.h>

enum report_finding_id {
    REPORT_INHERITED_LOCK,
    REPORT_ABANDONED_LOCK,
    REPORT_LOCK_CYCLE,
    REPORT_UNOWNED_LOCK_CYCLE, /* before wait-cycle, which leaves its members alone */
    REPORT_FULL_PIPE,
    REPORT_POOL_STARVATION,    /* before wait-cycle, which leaves a starved pool's process alone */
    REPORT_WAIT_CYCLE,
    REPORT_QUEUE_JOIN,
    REPORT_PIPE_HELD_OPEN,
    REPORT_EVENT_LOOP_BLOCKED,
    REPORT_ORPHANED_WAIT,
    REPORT_WORKER_DIED,
    REPORT_UNINTERRUPTIBLE,
    REPORT_STOPPED,
    REPORT_SPINNING,
    REPORT_REPLACED_WORKER,
    REPORT_TIMER_ONLY_WAKERS,
    REPORT_SPAWN_REIMPORT,
    REPORT_WAITING_ON_WORKERS,
    REPORT_IDLE,
    REPORT_FORK_UNSAFE_RUNTIME,
    REPORT_CUDA_INHERITED,
    REPORT_FINDING_IDS /* how many */
};

/* What a hang comes from: the verdict's `cause`. */
enum report_cause {
    REPORT_CAUSE_NONE, /* not hung; also "this id names no cause" in the registry */
    REPORT_CAUSE_FORK_INHERITANCE,
    REPORT_CAUSE_DEADLOCK,
    REPORT_CAUSE_KERNEL,
    REPORT_CAUSE_BUSY_LOOP,
    REPORT_CAUSE_STOPPED,
    REPORT_CAUSE_WORKER_DIED,
    REPORT_CAUSE_SPAWN_REIMPORT, /* a spawn child runs the main module's top level: a missing main guard */
    REPORT_CAUSE_PIPE_HELD_OPEN, /* a pipe read to its end stays open in a process left behind */
    REPORT_CAUSE_UNKNOWN,
    REPORT_CAUSES /* how many */
};

/* When two findings of one id are one hang (the verdict's hangs[]); findings of different ids are one hang when
 * they are about the same process and name the same cause (an orphaned wait and the runtime it sleeps in). */
enum report_hang_grouping {
    REPORT_GROUP_BY_PROCESS, /* the same process */
    REPORT_GROUP_BY_THREAD,  /* the same thread (a cycle is named after its first member, a busy loop is one) */
    REPORT_GROUP_BY_OBJECT,  /* the same lock address and owner, in one process or in siblings: fork keeps
                              * addresses, so every worker forked while a lock was held shows it at one address */
    REPORT_GROUP_BY_RUNTIME, /* as BY_OBJECT, and also the same process, or siblings asleep in one runtime (each
                              * worker's own OpenMP team lies at its own address) */
    REPORT_GROUP_BY_PARENT,  /* the workers one parent lost: the parent waits for them, whichever died first */
    REPORT_GROUP_BY_MEMBERS, /* a thread in common: two writers of one cycle, two views of one knot */
};

struct report_rule_context;

struct report_rule {
    const char *name;          /* the stable id: "inherited-lock" */
    enum report_cause cause;   /* the cause it names as a root cause; REPORT_CAUSE_NONE: never a root cause */
    unsigned rank;             /* preference among root causes, 1 first; 0 for the others */
    bool hang;                 /* false only for idle: a healthy wait */
    enum report_hang_grouping grouping;
    void (*apply)(struct report_rule_context *); /* adds the findings of this id */
};

/* The row of `id` (never NULL for a valid id). */
const struct report_rule *report_rule(enum report_finding_id id);
const char *report_finding_id_name(enum report_finding_id id);
/* The id named `name`; false when there is none. */
bool report_finding_id_parse(const char *name, enum report_finding_id *id);
const char *report_cause_name(enum report_cause cause);
