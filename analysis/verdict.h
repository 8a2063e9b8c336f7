/* The verdict over the findings of every rule (verdict.c): the hangs, their root causes and chains. */
#pragma once

#include "analysis.h"

#include <stdbool.h>

/* Fills analysis->verdict and analysis->named_by_hang; false when memory ran out. */
bool report_decide(const struct hd_snapshot *snapshot, struct report_analysis *analysis);
