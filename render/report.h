/* Rendering a snapshot: the text a person reads and the JSON document a dashboard parses.
 *
 * Pure over the snapshot: nothing here reads /proc or touches a process. Every string that came from a target is
 * escaped (buffer.h) on its way out. The pictures of the wait-for graph are render_dot.h (Graphviz) and
 * render_markdown.h (a Markdown summary with a Mermaid graph).
 */
#pragma once

#include "snapshot.h"
#include "analysis.h"

#include <stdbool.h>
#include <stdio.h>

#define REPORT_JSON_SCHEMA "hangdoc.report/2"

struct report_text_options {
    bool verbose;   /* every thread, with its kernel stack; otherwise healthy threads are summarised and only
                     * threads in D show their kernel stack */
    bool colour;    /* ANSI colours (the caller decides: a terminal, NO_COLOR, --color) */
    unsigned width; /* wrap lines at this many columns; 0: never */
    bool recap;     /* end with the verdict again and the root cause's fix (the demo, whose report scrolls) */
};

/* False when memory ran out or writing failed. */
bool report_render_text(const struct hd_snapshot *snapshot, const struct report_analysis *analysis,
                        const struct report_text_options *options, FILE *out);
bool report_render_json(const struct hd_snapshot *snapshot, const struct report_analysis *analysis, FILE *out);
