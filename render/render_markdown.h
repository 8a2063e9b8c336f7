/* A Markdown summary of a report, for a CI job's page (`hangdoc run --summary "$GITHUB_STEP_SUMMARY"`): the verdict,
 * the root cause and its fix, a table of the hangs' findings, and the wait-for graph as a Mermaid flowchart.
 *
 * Pure over the snapshot and its analysis (picture.h chooses what the graph draws). The summary begins with a blank
 * line and a heading, so that several appended to one file (one per diagnosis) read as sections. Every target
 * string is escaped as in the text report (buffer.h), then for where it goes: Markdown text or a Mermaid label.
 */
#pragma once

#include "snapshot.h"
#include "analysis.h"
#include "buffer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* GitHub draws a Mermaid graph of a few dozen boxes well, and refuses large ones: the graph keeps to these. */
#define REPORT_MERMAID_BOXES_MAX 40
#define REPORT_MERMAID_EDGES_MAX 80
/* Rows of the findings table; the others are counted in a line under it. */
#define REPORT_MARKDOWN_ROWS_MAX 25

/* False when memory ran out or writing failed. */
bool report_render_markdown(const struct hd_snapshot *snapshot, const struct report_analysis *analysis, FILE *out);

/* The summary of a diagnosis that did not happen (hangdoc run's, killed at its deadline): a heading and `why`. */
bool report_render_markdown_unfinished(const char *why, FILE *out);

/* Appends untrusted bytes as Markdown text (CommonMark, GitHub's tables): escaped as report_buffer_escaped() does,
 * then '<', '>' and '&' as HTML entities and every other ASCII punctuation character after a backslash, so that
 * nothing in them makes a tag, a link, emphasis, a mention or a table cell. */
void report_markdown_escaped(struct report_buffer *out, const char *bytes, size_t length);

/* Appends untrusted bytes for the inside of a Mermaid "quoted label": escaped as report_buffer_escaped() does, then
 * every ASCII punctuation character but a harmless few as Mermaid's #NN; entity, so that nothing in them ends the
 * label, opens a tag or a Markdown string, or reads as an entity or a style. */
void report_mermaid_escaped(struct report_buffer *out, const char *bytes, size_t length);
