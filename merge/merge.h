/* `hangdoc merge`: the JSON reports (hangdoc.report/2) of every host of a distributed job merged into one answer.
 *
 * A hung job of many ranks looks the same on nearly all of them (each waits in the same collective) and different
 * on one: the rank that never joined. Like LLNL's STAT, the merge folds the stacks of every rank's main thread into
 * a prefix tree whose branches carry rank sets ("ranks 0-62,64-127 (126)"), and sorts the ranks into classes of
 * equal stacks, the smallest first; unlike STAT, each rank also brings its host's verdict, so the merged verdict
 * follows the chain across machines: the ranks that wait, the rank they wait for, and its root cause there.
 *
 * Pure over parsed documents: nothing here reads /proc. Input collection (files, directories, streams of
 * concatenated documents) is merge_input.h. Use: new, add every document, finish, render, free.
 */
#pragma once

#include "analysis.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define REPORT_MERGE_SCHEMA "hangdoc.merge/1"

struct report_merge;

/* NULL when memory ran out. */
struct report_merge *report_merge_new(void);
void report_merge_free(struct report_merge *merge);

/* Takes in one document read from `source` (a path, "-"). A document that is not a hangdoc.report/2 report, or
 * holds values of the wrong type, is left out with a note saying why; false only when memory ran out. */
bool report_merge_add(struct report_merge *merge, json_object *document, const char *source);
/* An input that could not be read: a note, and it counts as skipped. False when memory ran out. */
bool report_merge_skip(struct report_merge *merge, const char *source, const char *why);

/* Builds the rank tables, trees, classes and verdicts; call once, after the last add. False when memory ran out. */
bool report_merge_finish(struct report_merge *merge);

/* How many reports were merged, and how many inputs or documents were left out. */
size_t report_merge_documents(const struct report_merge *merge);
size_t report_merge_skipped(const struct report_merge *merge);
/* The merged verdict (after finish): hung and cause, as a single report's verdict gives them, for the exit status. */
enum report_hung report_merge_hung(const struct report_merge *merge);
enum report_cause report_merge_cause(const struct report_merge *merge);

/* The renderers (after finish); false when memory ran out or writing failed. Text: the job and its ranks, the
 * merged stacks, the classes, the verdict last. JSON: one document of schema hangdoc.merge/1
 * (docs/hangdoc.merge-1.schema.json). DOT: the prefix tree, for Graphviz. */
bool report_merge_render_text(const struct report_merge *merge, FILE *out);
bool report_merge_render_json(const struct report_merge *merge, FILE *out);
bool report_merge_render_dot(const struct report_merge *merge, FILE *out);
