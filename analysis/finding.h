/* Growing a finding: the one way a rule appends a finding, its evidence, remedies and members to an analysis,
 * shared by every rule module (findings.c, inheritance.c, remedies.c).
 *
 * Each returns false (or NULL) only when memory ran out; whatever was appended stays releasable by
 * report_analysis_free(), so a rule that fails just stops and lets report_analyze() give up.
 */
#pragma once

#include "analysis.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Appends a finding about thread `tid` of process `pid`, its summary formatted like vprintf. The pointer stays
 * valid until the next finding is appended (the array grows). Its name and whether it is a hang come from the
 * registry. */
struct report_finding *report_finding_append(struct report_analysis *analysis, enum report_finding_id id,
                                             enum report_confidence confidence, pid_t pid, pid_t tid,
                                             const char *summary, va_list args)
    __attribute__((format(printf, 6, 0)));

/* Appends the evidence `name`, its value formatted like vprintf (target strings are escaped by the renderers). */
bool report_finding_evidence(struct report_finding *finding, const char *name, const char *value, va_list args)
    __attribute__((format(printf, 3, 0)));

/* The same, formatted like printf: for the passes after the rules, which have no rule context. */
bool report_finding_add_evidence(struct report_finding *finding, const char *name, const char *value, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends a remedy, unless the finding already has that very text (two rules may propose the same fix). */
bool report_finding_remedy(struct report_finding *finding, const char *text);

/* Adds graph node `node` to the finding's members, unless it is one already. */
bool report_finding_member(struct report_finding *finding, size_t node);
