/* What the report's unit tests assert about an analysis (analysis/analysis.h): the findings by id, their subjects,
 * members, evidence and remedies, the graph's wake decisions and edges, the verdict's chain. Each check that can
 * fail fails the test with what it found; the lookups return NULL for "none" and leave the asserting to the test.
 */
#pragma once

#include "analysis.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define NO_NODE ((size_t)-1)

/* ---- findings ---- */

size_t count_findings(const struct report_analysis *analysis, const char *id);
/* The only finding `id`: fails the test unless there is exactly one. */
const struct report_finding *the_finding(const struct report_analysis *analysis, const char *id);
/* The first finding `id`, or NULL. */
const struct report_finding *first_finding(const struct report_analysis *analysis, const char *id);
/* The findings' ids in order, "a,b,c", into `out`. */
void finding_ids(const struct report_analysis *analysis, char *out, size_t cap);
/* The findings' ids are exactly `text` ("a,b,c"; "" for none). */
#define EXPECT_IDS(analysis, text)                                                                                 \
    do {                                                                                                          \
        char ids_[512];                                                                                           \
        finding_ids(analysis, ids_, sizeof ids_);                                                                 \
        cr_assert_str_eq(ids_, text);                                                                             \
    } while (0)
/* The value of evidence `name`, or NULL (also for a NULL finding). */
const char *evidence_of(const struct report_finding *finding, const char *name);
/* How many values of evidence `name` the finding has (a name given once per waiter, worker, step...). */
size_t count_evidence(const struct report_finding *finding, const char *name);
/* The value of the `i`th evidence `name` (from 0, in the order the rule gave them), or NULL. */
const char *evidence_at(const struct report_finding *finding, const char *name, size_t i);
/* How many remedies contain `part`. */
size_t remedies_containing(const struct report_finding *finding, const char *part);
/* The tid of member `i` of the finding (fails the test when there is none). */
pid_t member_tid(const struct report_analysis *analysis, const struct report_finding *finding, size_t i);
bool has_member(const struct report_analysis *analysis, const struct report_finding *finding, pid_t tid);

/* ---- the graph ---- */

enum report_wake wake_of(const struct report_analysis *analysis, pid_t tid);
/* An edge of `kind` from thread `from` that reaches thread `to`: to it alone, or to its process as an OR-set. */
bool has_edge(const struct report_analysis *analysis, pid_t from, pid_t to, enum report_edge_kind kind);
/* Every edge is in range, none a thread's to itself, and each lock-owner edge goes from a futex waiter to the
 * thread its lock names as owner. */
void assert_owner_edges_point_to_owners(const struct report_analysis *analysis);

/* ---- the verdict ---- */

/* The verdict's chain is exactly `chain`. */
void assert_chain(const struct report_analysis *analysis, const pid_t *chain, size_t length);
/* The id of the verdict's root-cause finding, NULL when it has none. */
const char *root_cause_id(const struct report_analysis *analysis);
