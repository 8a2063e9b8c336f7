/* Reading the inputs of `hangdoc merge`: a file, a directory of them, or "-" (standard input), each a stream of one
 * or more JSON documents one after the other (`cat node*.json | hangdoc merge -`), parsed with json-c's
 * incremental tokener and handed to report_merge_add() one at a time, so that memory holds one parsed document at
 * a time, not the whole job's.
 */
#pragma once

#include "merge.h"

#include <stdbool.h>
#include <stdio.h>

/* Reads `path`: "-" is standard input; a directory contributes its files whose names end in ".json", in name
 * order, not descending; anything else is one file. What cannot be read, or is not JSON, becomes a note
 * (report_merge_skip) and the rest goes on. False only when memory ran out. */
bool report_merge_read_path(struct report_merge *merge, const char *path);
/* Every document of `stream`, named `source` in notes. False only when memory ran out. */
bool report_merge_read_stream(struct report_merge *merge, FILE *stream, const char *source);
