/* The registry of rules (registry.h): one row per finding id. */
#include "registry.h"

#include "rules/rule.h"
#include "util.h"

#include <string.h>

static const struct report_rule rules[REPORT_FINDING_IDS] = {
#define RULE(NAME, id, function, cause_, hang_, grouping_, cycle_, phrase_)                                           \
    [REPORT_##NAME] = { .name = id, .cause = REPORT_CAUSE_##cause_, .hang = hang_,                                  \
                        .grouping = REPORT_GROUP_##grouping_, .cycle = cycle_, .phrase = phrase_, .apply = function },
#include "rules.def"
};

static const enum report_finding_id ranked[] = {
#define RANK(NAME) REPORT_##NAME,
#include "rules.def"
};

static const struct report_rule_order orders[] = {
#define AFTER(NAME, EARLIER) { REPORT_##NAME, REPORT_##EARLIER },
#include "rules.def"
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
        [REPORT_CAUSE_FROZEN] = "frozen",
        [REPORT_CAUSE_UNKNOWN] = "unknown",
    };
    return names[cause];
}

unsigned report_rule_rank(enum report_finding_id id)
{
    for (size_t i = 0; i < COUNT(ranked); i++)
        if (ranked[i] == id)
            return (unsigned)i + 1;
    return 0;
}

const enum report_finding_id *report_ranked_root_causes(size_t *count)
{
    *count = COUNT(ranked);
    return ranked;
}

const struct report_rule_order *report_rule_orders(size_t *count)
{
    *count = COUNT(orders);
    return orders;
}
