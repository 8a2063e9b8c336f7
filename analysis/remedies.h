/* Remedies that depend on the finding's process rather than on a runtime: a table of (finding ids, a fact about
 * the process, remedy), today the Python start-method and Pool advice for Python processes. The remedies of a
 * runtime (GNU OpenMP, glibc's atexit lock, CUDA, ...) come from its catalogue row (catalogue.h), and those every
 * finding of an id shares from its rule (rules/). */
#pragma once

#include "analysis.h"

/* Appends the specific remedies to the findings. False when memory ran out. */
bool report_add_specific_remedies(const struct hd_snapshot *snapshot, struct report_analysis *analysis);

