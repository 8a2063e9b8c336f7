/* The wait-for graph for Graphviz (`hangdoc --dot PID | dot -Tsvg > hang.svg`): one cluster per process, a box per
 * thread that matters, edges styled by what they wait on, the root cause and the knot in red, and a legend.
 *
 * Pure over the snapshot and its analysis (picture.h chooses what is drawn). Every target string is escaped as in
 * the text report (buffer.h), then quoted for DOT.
 */
#pragma once

#include "snapshot.h"
#include "analysis.h"
#include "buffer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* At most this many boxes of threads and this many edges: beyond that a picture is no longer read, and dot slows. */
#define REPORT_DOT_BOXES_MAX 150
#define REPORT_DOT_EDGES_MAX 400

/* False when memory ran out or writing failed. */
bool report_render_dot(const struct hd_snapshot *snapshot, const struct report_analysis *analysis, FILE *out);

/* Appends untrusted bytes for the inside of a DOT double-quoted string: escaped as report_buffer_escaped() does,
 * then every backslash doubled (DOT reads \n, \l, \N... in labels), '"' as \", and '&' as &amp; (Graphviz reads
 * HTML entities in labels: "&#x202E;" would otherwise draw the very override the escaping took out). */
void report_dot_escaped(struct report_buffer *out, const char *bytes, size_t length);
