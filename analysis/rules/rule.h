/* What every rule function has at hand: the snapshot, the analysis it adds findings to, and the helpers that add
 * them. Each rule is one function of the registry (registry.h) in a file of its family in this folder; rules
 * only read the graph and the snapshot, and add findings.
 */
#pragma once

#include "analysis.h"
#include "catalogue.h"
#include "registry.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>

struct report_rule_context {
    const struct hd_snapshot *snapshot;
    const struct report_catalogue *catalogue;
    struct report_analysis *analysis;
    bool failed; /* memory ran out: report_analyze() gives up */
    /* report_timer_bound()'s answers, by idle_timers_too: worked out once for the rules that ask (timers.c) */
    bool *timer_bound[2];
    bool timer_bound_known[2];
};

/* A finding about the thread of `node`, its summary formatted like printf. The pointer stays valid until the next
 * finding is added; NULL (and c->failed) when memory ran out, which every helper below accepts. */
struct report_finding *rule_finding(struct report_rule_context *c, enum report_finding_id id,
                                    enum report_confidence confidence, const struct report_node *node,
                                    const char *summary, ...) __attribute__((format(printf, 5, 6)));
/* A finding about a process that may have no thread left to point at (one that exited). */
struct report_finding *rule_finding_for(struct report_rule_context *c, enum report_finding_id id,
                                        enum report_confidence confidence, pid_t pid, pid_t tid,
                                        const char *summary, ...) __attribute__((format(printf, 6, 7)));
void rule_evidence(struct report_rule_context *c, struct report_finding *finding, const char *name,
                   const char *value, ...) __attribute__((format(printf, 4, 5)));
void rule_remedy(struct report_rule_context *c, struct report_finding *finding, const char *text);
void rule_member(struct report_rule_context *c, struct report_finding *finding, size_t node);

/* ---- facts several families share ---- */

/* Is `ancestor` the parent of `process`, or a parent of its parent...? The parent itself may be outside. */
bool rule_is_ancestor(const struct hd_snapshot *snapshot, pid_t ancestor, const struct hd_process *process);
/* The name of thread `tid` of the snapshot, or "?". */
const char *rule_thread_name(const struct report_rule_context *c, pid_t tid);
/* Asleep without timeout for at least the --stuck-after threshold, by the kernel's clock of its last run (its
 * blocked-for, not the sampling window). */
bool rule_asleep_for_the_threshold(const struct report_rule_context *c, const struct report_node *node);
/* Is the thread of `node` the subject or a member of a hang finding made so far? */
bool rule_named_by_a_hang(const struct report_analysis *analysis, size_t node);
/* Asleep forever on a mutex or rwlock with an owner recorded. */
bool rule_waits_on_owned_lock(const struct report_node *node);
/* How a child ended, from its wait status, in words ("killed by SIGKILL (9)", "exited with status 3"). */
void rule_describe_exit(int status, char *out, size_t size);
/* The words for what an edge waits through: "the lock's owner", "a pipe", "wait4". */
const char *rule_edge_words(enum report_edge_kind kind);

/* ---- the rules: one function each, declared from rules.def ---- */

#define RULE(NAME, id, function, cause, hang, grouping, cycle, phrase) void function(struct report_rule_context *c);
#include "rules.def"

/* ---- what the families share with each other ---- */

/* Per node (pipes.c): a member of a finding that names its cycle (a rule whose rules.def line says `cycle`); NULL
 * when memory ran out. The caller frees it. */
bool *report_cycle_members(const struct report_analysis *analysis);
/* Per node (timers.c): asleep without timeout for at least the analysis's stuck_after_s, and nothing but
 * threads that merely wake on timers could wake it; `idle_timers_too` counts timer threads not seen to wake while sampled
 * as such too (the fork rules, which have other evidence). NULL when there is none, the rule is off, or memory ran out
 * (c->failed). Worked out once per analysis and kept in the context, which report_analyze() releases. */
const bool *report_timer_bound(struct report_rule_context *c, bool idle_timers_too);
/* The thread of `process` a finding about its timer-bound threads is about: its main thread if bound, else the one
 * asleep longest; REPORT_NO_NODE when none is. */
size_t report_timer_bound_subject(const struct report_rule_context *c, const struct hd_process *process,
                                  const bool *bound);
/* Node `poller` polls a futex in vain: a private futex wait with a timeout at the same address in every sample
 * (at least 3), waking only to wait there again with hardly any CPU, while no other thread of its process could
 * set what it waits for (each is asleep forever, merely wakes on a timer, or has slept without timeout for the
 * threshold on something only its process could end). How long it has polled no clock says: the caller needs
 * other evidence of that before it calls the process hung. */
bool report_polls_in_vain(struct report_rule_context *c, size_t poller);
/* Its futex, how often it woke while sampled, and the other threads of its process. */
void report_poll_evidence(struct report_rule_context *c, struct report_finding *finding, size_t poller);
/* How long node `stuck` has slept, the timer threads that could wake it and how often they woke meanwhile. */
void report_timer_evidence(struct report_rule_context *c, struct report_finding *finding, size_t stuck,
                           bool idle_timers_too);
/* workers.c, with the timer rule's help */
void report_rule_replaced_worker(struct report_rule_context *c);
