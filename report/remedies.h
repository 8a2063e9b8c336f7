/* Remedies that depend on what was found around a finding: the process is Python, the lock lies in libc's own
 * memory, the child maps GNU OpenMP. Each is added only where it applies (analysis.h's findings keep the
 * remedies every instance of their id shares). */
#pragma once

#include "analysis.h"

/* Appends the specific remedies to the findings. False when memory ran out. */
bool report_add_specific_remedies(const struct hd_snapshot *snapshot, struct report_analysis *analysis);

/* Is `process` a Python interpreter: comm or executable python*, or libpython mapped (an embedding program)? */
bool report_is_python(const struct hd_process *process);
