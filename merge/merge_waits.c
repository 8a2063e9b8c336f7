/* What the merge can say in words (merge_model.h): what each finding id says of its subject in the merged chain,
 * from the registry's phrases. (The waits a main thread's stack shows are analysis's table, named_waits.h.) */
#include "merge_model.h"

#include <string.h>

/* The words of the registry's line for the finding id `id` (rules.def), as the merged chain says it after its
 * subject ("worker 4711", "its thread 12"). */
const char *report_merge_finding_phrase(const char *id)
{
    enum report_finding_id parsed;
    return id && report_finding_id_parse(id, &parsed) ? report_rule(parsed)->phrase : NULL;
}
