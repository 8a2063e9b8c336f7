/* The registry of rules: one line per rule in rules.def, from which the enum of finding ids, the rule functions'
 * declarations (rules/rule.h) and the rows of registry.c are made.
 *
 * A row gives the id's stable name (DESIGN.md's verdict catalogue, the JSON Schema's enum, the man page), the
 * cause it names when it is a hang's root cause, its rank among root causes (from rules.def's RANK lines, an
 * order), how two of its findings are one hang, and the rule function that adds its findings. Rules run in the
 * order of rules.def's lines, which is the order findings are listed in; the verdict prefers root causes by rank.
 * Adding a rule: its function in the rules folder, its line in rules.def (and a RANK line when it names a cause,
 * AFTER lines for the findings it reads), and its tests; tests/unit/test_registry.c fails until the schema and the
 * man page name it too.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum report_finding_id {
#define RULE(NAME, id, function, cause, hang, grouping, cycle, phrase) REPORT_##NAME,
#include "rules.def"
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
    REPORT_CAUSE_FROZEN,         /* an outside party froze its cgroup (docker pause, systemd, Kubernetes) */
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
    const char *name;        /* the stable id: "inherited-lock" */
    enum report_cause cause; /* the cause it names as a root cause; REPORT_CAUSE_NONE: never a root cause */
    bool hang;               /* false only for idle: a healthy wait */
    enum report_hang_grouping grouping;
    bool cycle;                                  /* a finding names a cycle of threads */
    const char *phrase;                          /* the merged chain's words after the subject */
    void (*apply)(struct report_rule_context *); /* adds the findings of this id */
};

/* A rule that reads the findings of an earlier one (rules.def's AFTER lines). */
struct report_rule_order {
    enum report_finding_id rule, earlier;
};

/* The row of `id` (never NULL for a valid id). */
const struct report_rule *report_rule(enum report_finding_id id);
const char *report_finding_id_name(enum report_finding_id id);
/* The id named `name`; false when there is none. */
bool report_finding_id_parse(const char *name, enum report_finding_id *id);
const char *report_cause_name(enum report_cause cause);
/* The preference of `id` among root causes, 1 first (rules.def's RANK lines); 0 when it names none. */
unsigned report_rule_rank(enum report_finding_id id);
/* The root causes, best first, and how many. */
const enum report_finding_id *report_ranked_root_causes(size_t *count);
/* rules.def's AFTER lines, and how many. */
const struct report_rule_order *report_rule_orders(size_t *count);
