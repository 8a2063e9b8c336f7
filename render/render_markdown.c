/* The Markdown summary (render_markdown.h): the verdict, the root cause and its fix, the hangs' findings as a table,
 * and the picture (picture.h) as a Mermaid flowchart, for GitHub's job summary and any Markdown viewer.
 */
#include "render_markdown.h"

#include "picture.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Other hangs listed under the root cause; the rest are in the table. */
#define OTHER_HANGS_LISTED_MAX 10

static bool ascii_punctuation(unsigned char c)
{
    return c != '\0' && c < 0x80 && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c);
}

void report_markdown_escaped(struct report_buffer *out, const char *bytes, size_t length)
{
    static const struct {
        char byte;
        const char *entity;
    } entities[] = { { '<', "&lt;" }, { '>', "&gt;" }, { '&', "&amp;" } };
    struct report_buffer plain = { 0 };
    report_buffer_escaped(&plain, bytes, length);
    if (plain.failed)
        out->failed = true;
    for (size_t i = 0; i < plain.length; i++) {
        const char *entity = NULL;
        for (size_t e = 0; e < COUNT(entities); e++)
            if (plain.data[i] == entities[e].byte)
                entity = entities[e].entity;
        if (entity)
            report_buffer_puts(out, entity);
        else if (ascii_punctuation((unsigned char)plain.data[i]))
            report_buffer_printf(out, "\\%c", plain.data[i]);
        else
            report_buffer_append(out, &plain.data[i], 1);
    }
    report_buffer_release(&plain);
}

void report_mermaid_escaped(struct report_buffer *out, const char *bytes, size_t length)
{
    /* what may stay as it is inside a quoted label: none of these starts a tag, an entity, a style or a string */
    static const char harmless[] = "'(),-./_+=?!@*$%~^";
    struct report_buffer plain = { 0 };
    report_buffer_escaped(&plain, bytes, length);
    if (plain.failed)
        out->failed = true;
    for (size_t i = 0; i < plain.length; i++) {
        unsigned char c = (unsigned char)plain.data[i];
        if (ascii_punctuation(c) && !strchr(harmless, c))
            report_buffer_printf(out, "#%u;", (unsigned)c);
        else
            report_buffer_append(out, &plain.data[i], 1);
    }
    report_buffer_release(&plain);
}

static void markdown(struct report_buffer *out, const char *text)
{
    report_markdown_escaped(out, text, strlen(text));
}

static void mermaid(struct report_buffer *out, const char *text)
{
    report_mermaid_escaped(out, text, strlen(text));
}

static const struct report_picture_syntax mermaid_syntax = { .escape = mermaid, .line_break = "<br>" };

/* ---- the words ----------------------------------------------------------------------------------------------- */

/* "thread 4012 'w' of process 4012 'trainer'" */
static void subject(struct report_buffer *out, const struct hd_snapshot *snapshot, pid_t pid, pid_t tid)
{
    const struct hd_thread *thread = hd_snapshot_find_thread(snapshot, tid, NULL);
    const struct hd_process *process = hd_snapshot_find_process(snapshot, pid);
    report_buffer_printf(out, "thread %d '", (int)tid);
    markdown(out, thread ? thread->name : "?");
    report_buffer_printf(out, "' of process %d '", (int)pid);
    markdown(out, process ? process->comm : "?");
    report_buffer_puts(out, "'");
}

/* One hang in one line, as the text report's verdict says it. */
static void hang_line(struct report_buffer *out, const struct hd_snapshot *snapshot,
                      const struct report_analysis *analysis, const struct report_hang *hang)
{
    const struct report_finding *finding = hang->finding >= 0 ? &analysis->findings[hang->finding] : NULL;
    bool likely = finding && finding->confidence != REPORT_CERTAIN;
    report_buffer_printf(out, "%sHUNG (%s): ", likely ? "likely " : "", report_cause_name(hang->cause));
    if (!finding) {
        subject(out, snapshot, hang->pid, hang->tid);
        report_buffer_puts(out, " is asleep forever and nothing that could wake it can run; no rule of the "
                                "catalogue names why");
        return;
    }
    markdown(out, finding->summary);
    report_buffer_printf(out, " \\[`%s`, %s\\]", finding->id, report_confidence_name(finding->confidence));
}

static void render_heading(struct report_buffer *out, const struct report_analysis *analysis)
{
    const struct report_verdict *verdict = &analysis->verdict;
    report_buffer_puts(out, "\n## hangdoc: ");
    if (verdict->hung == REPORT_HUNG_YES)
        report_buffer_printf(out, "HUNG (%s)\n\n", report_cause_name(verdict->cause));
    else
        report_buffer_puts(out, verdict->hung == REPORT_HUNG_NO ? "not hung\n\n" : "could not tell\n\n");
}

static void render_chain(struct report_buffer *out, const struct hd_snapshot *snapshot, const pid_t *chain,
                         size_t length)
{
    for (size_t i = 0; i < length; i++) {
        const struct hd_process *process = hd_snapshot_find_process(snapshot, chain[i]);
        report_buffer_printf(out, "%s%d '", i ? " → " : "", (int)chain[i]);
        markdown(out, process ? process->comm : "?");
        report_buffer_puts(out, "'");
    }
}

static void render_verdict(struct report_buffer *out, const struct hd_snapshot *snapshot,
                           const struct report_analysis *analysis)
{
    const struct report_verdict *verdict = &analysis->verdict;
    report_buffer_puts(out, "**Verdict:** ");
    if (verdict->hung == REPORT_HUNG_NO) {
        report_buffer_puts(out, "not hung: every thread runs, waits with a timeout or on the outside, or can be "
                                "woken by one that does\n\n");
        return;
    }
    if (verdict->hung == REPORT_HUNG_UNKNOWN) {
        report_buffer_printf(out, "could not tell: no hang in what could be read, but the waits of %zu sleeping "
                                  "thread%s could not be read\n\n",
                             verdict->unread_waits, verdict->unread_waits == 1 ? "" : "s");
        return;
    }
    hang_line(out, snapshot, analysis, &verdict->hangs[0]);
    if (verdict->nchain > 0) {
        report_buffer_puts(out, "  \n**Chain:** ");
        render_chain(out, snapshot, verdict->chain, verdict->nchain);
    }
    report_buffer_puts(out, "\n\n");
}

/* The root cause, its fix, and the other hangs, each in a line. */
static void render_root_cause(struct report_buffer *out, const struct hd_snapshot *snapshot,
                              const struct report_analysis *analysis)
{
    const struct report_verdict *verdict = &analysis->verdict;
    if (verdict->hung != REPORT_HUNG_YES)
        return;
    if (verdict->root_cause >= 0) {
        const struct report_finding *finding = &analysis->findings[verdict->root_cause];
        report_buffer_printf(out, "**Root cause:** `%s` (%s) in ", finding->id,
                             report_confidence_name(finding->confidence));
        subject(out, snapshot, finding->pid, finding->tid);
        report_buffer_puts(out, "\n\n");
        if (finding->nremedies)
            report_buffer_puts(out, "**Fix:**\n\n");
        for (size_t r = 0; r < finding->nremedies; r++) {
            report_buffer_puts(out, "- ");
            markdown(out, finding->remedies[r]);
            report_buffer_puts(out, "\n");
        }
        if (finding->nremedies)
            report_buffer_puts(out, "\n");
    }
    if (verdict->nhangs > 1)
        report_buffer_printf(out, "**%zu independent hangs**, each with its own root cause:\n\n", verdict->nhangs);
    for (size_t h = 1; h < verdict->nhangs && h <= OTHER_HANGS_LISTED_MAX; h++) {
        report_buffer_printf(out, "%zu. ", h + 1);
        hang_line(out, snapshot, analysis, &verdict->hangs[h]);
        report_buffer_puts(out, "\n");
    }
    if (verdict->nhangs > OTHER_HANGS_LISTED_MAX + 1)
        report_buffer_printf(out, "\n… and %zu more hangs (see the full report)\n",
                             verdict->nhangs - OTHER_HANGS_LISTED_MAX - 1);
    if (verdict->nhangs > 1)
        report_buffer_puts(out, "\n");
}

/* ---- the table ----------------------------------------------------------------------------------------------- */

/* The hang (1-based) each finding belongs to, 0 for none; NULL when memory ran out. */
static size_t *hang_of_findings(const struct report_analysis *analysis)
{
    size_t *hang_of = calloc(analysis->nfindings + 1, sizeof *hang_of);
    for (size_t h = 0; hang_of && h < analysis->verdict.nhangs; h++)
        for (size_t i = 0; i < analysis->verdict.hangs[h].nfindings; i++)
            if (!hang_of[analysis->verdict.hangs[h].findings[i]])
                hang_of[analysis->verdict.hangs[h].findings[i]] = h + 1;
    return hang_of;
}

static void render_table(struct report_buffer *out, const struct hd_snapshot *snapshot,
                         const struct report_analysis *analysis)
{
    size_t *hang_of = hang_of_findings(analysis);
    if (!hang_of) {
        out->failed = true;
        return;
    }
    size_t rows = 0, left = 0;
    for (size_t f = 0; f < analysis->nfindings; f++) {
        const struct report_finding *finding = &analysis->findings[f];
        if (!finding->hang)
            continue;
        if (rows == REPORT_MARKDOWN_ROWS_MAX) {
            left++;
            continue;
        }
        if (rows++ == 0)
            report_buffer_puts(out, "| hang | finding | confidence | subject |\n|---|---|---|---|\n");
        const struct report_hang *hang = hang_of[f] ? &analysis->verdict.hangs[hang_of[f] - 1] : NULL;
        if (hang)
            report_buffer_printf(out, "| %zu%s | ", hang_of[f],
                                 hang->root_cause && hang->finding == (long)f ? " (root cause)" : "");
        else
            report_buffer_puts(out, "| | ");
        report_buffer_printf(out, "`%s` | %s | ", finding->id, report_confidence_name(finding->confidence));
        subject(out, snapshot, finding->pid, finding->tid);
        report_buffer_puts(out, " |\n");
    }
    free(hang_of);
    if (left)
        report_buffer_printf(out, "\n… and %zu more finding%s (see the full report)\n", left, left == 1 ? "" : "s");
    if (rows)
        report_buffer_puts(out, "\n");
}

/* ---- the graph ----------------------------------------------------------------------------------------------- */

static const struct {
    const char *name;  /* the class */
    const char *style; /* its classDef */
    const char *words; /* for the legend */
} mark_classes[] = {
    [REPORT_PICTURE_ROOT_CAUSE] = { "root", "fill:#ff9e9e,stroke:#b00000,stroke-width:3px,font-weight:bold",
                                    "red and bold: the root cause" },
    [REPORT_PICTURE_IN_HANG] = { "inhang", "fill:#ffd0d0,stroke:#c00000,stroke-width:2px,font-weight:bold",
                                 "pink and bold: in a hang" },
    [REPORT_PICTURE_FOREVER] = { "forever", "fill:#ffeaea,stroke:#c00000", "red border: asleep forever" },
    [REPORT_PICTURE_KERNEL] = { "kernel", "fill:#fff0cc,stroke:#b26a00", "orange: in the kernel or stopped" },
    [REPORT_PICTURE_EXITED] = { "exited", "fill:#eeeeee,stroke:#9e9e9e,stroke-dasharray:4", "grey: exited" },
    [REPORT_PICTURE_WAITS] = { "waits", "fill:#ffffff,stroke:#607d8b", "white: can be woken" },
    [REPORT_PICTURE_RUNS] = { "runs", "fill:#e8f5e9,stroke:#2e7d32", "green: may run by itself" },
    [REPORT_PICTURE_PLAIN] = { "plain", "fill:#f5f5f5,stroke:#9e9e9e,stroke-dasharray:4", NULL },
};

static const struct {
    const char *arrow; /* solid, or dotted for "any of them" and "never" */
    const char *colour;
} edge_styles[] = {
    [REPORT_PICTURE_MUTEX] = { "-->", "#37474f" },     [REPORT_PICTURE_RWLOCK] = { "-->", "#37474f" },
    [REPORT_PICTURE_GIL] = { "-->", "#7b1fa2" },       [REPORT_PICTURE_JOIN] = { "-->", "#00838f" },
    [REPORT_PICTURE_FUTEX] = { "-.->", "#616161" },    [REPORT_PICTURE_PIPE] = { "-->", "#1565c0" },
    [REPORT_PICTURE_SOCKET] = { "-.->", "#1565c0" },   [REPORT_PICTURE_CHILD] = { "-->", "#2e7d32" },
    [REPORT_PICTURE_FILE_LOCK] = { "-->", "#8d6e63" }, [REPORT_PICTURE_OUT_OF_REACH] = { "-.->", "#b00000" },
};

#define KNOT_ARROW "==>"
#define KNOT_STYLE "stroke:#c00000,stroke-width:3px"

static void box_id(struct report_buffer *out, const struct report_picture *picture, size_t index)
{
    static const char *const prefixes[] = {
        [REPORT_BOX_THREAD] = "t", [REPORT_BOX_ANY_THREAD] = "any", [REPORT_BOX_LEFT_OUT] = "more",
        [REPORT_BOX_ABSENT_OWNER] = "owner",
    };
    const struct report_picture_box *box = &picture->boxes[index];
    bool by_thread = box->kind == REPORT_BOX_THREAD || box->kind == REPORT_BOX_ABSENT_OWNER;
    pid_t id = by_thread ? box->tid
                         : picture->analysis->graph.processes[picture->processes[box->process].process].process->pid;
    report_buffer_printf(out, "%s%d", prefixes[box->kind], (int)id);
}

static void render_box(struct report_buffer *out, const struct report_picture *picture, size_t index,
                       const char *indent)
{
    report_buffer_puts(out, indent);
    box_id(out, picture, index);
    bool any = picture->boxes[index].kind == REPORT_BOX_ANY_THREAD;
    report_buffer_puts(out, any ? "([\"" : "[\"");
    report_picture_box_label(picture, index, &mermaid_syntax, out);
    report_buffer_puts(out, any ? "\"])\n" : "\"]\n");
}

static void render_processes(struct report_buffer *out, const struct report_picture *picture)
{
    for (size_t p = 0; p < picture->nprocesses; p++) {
        pid_t pid = picture->analysis->graph.processes[picture->processes[p].process].process->pid;
        report_buffer_printf(out, "  subgraph p%d[\"", (int)pid);
        report_picture_process_label(picture, p, &mermaid_syntax, out);
        report_buffer_puts(out, "\"]\n");
        for (size_t i = 0; i < picture->nboxes; i++)
            if (picture->boxes[i].process == p)
                render_box(out, picture, i, "    ");
        report_buffer_puts(out, "  end\n");
    }
    for (size_t i = 0; i < picture->nboxes; i++)
        if (picture->boxes[i].process == REPORT_NO_NODE)
            render_box(out, picture, i, "  ");
}

/* Links are styled by their number, in the order they are written. */
static void render_edges(struct report_buffer *out, const struct report_picture *picture)
{
    for (size_t e = 0; e < picture->nedges; e++) {
        const struct report_picture_edge *edge = &picture->edges[e];
        report_buffer_puts(out, "  ");
        box_id(out, picture, edge->from);
        report_buffer_printf(out, " %s|\"", edge->knot ? KNOT_ARROW : edge_styles[edge->kind].arrow);
        report_picture_edge_label(edge, out);
        report_buffer_puts(out, "\"| ");
        box_id(out, picture, edge->to);
        report_buffer_puts(out, "\n");
    }
    for (size_t e = 0; e < picture->nedges; e++) {
        const struct report_picture_edge *edge = &picture->edges[e];
        if (edge->knot)
            report_buffer_printf(out, "  linkStyle %zu %s\n", e, KNOT_STYLE);
        else
            report_buffer_printf(out, "  linkStyle %zu stroke:%s\n", e, edge_styles[edge->kind].colour);
    }
}

static void render_classes(struct report_buffer *out, const struct report_picture *picture)
{
    for (size_t m = 0; m < COUNT(mark_classes); m++) {
        if (!picture->marks_used[m])
            continue;
        report_buffer_printf(out, "  classDef %s %s\n  class ", mark_classes[m].name, mark_classes[m].style);
        const char *separator = "";
        for (size_t i = 0; i < picture->nboxes; i++)
            if (picture->boxes[i].mark == m) {
                report_buffer_puts(out, separator);
                box_id(out, picture, i);
                separator = ",";
            }
        report_buffer_printf(out, " %s\n", mark_classes[m].name);
    }
}

/* The words under the graph: what the colours mean, and what was left out. */
static void render_legend(struct report_buffer *out, const struct report_picture *picture)
{
    report_buffer_puts(out, "Arrows point from a waiting thread to whoever could wake it");
    if (picture->knot_used)
        report_buffer_puts(out, "; thick red ones are the knot: nothing at their end can run");
    const char *separator = ". Boxes: ";
    for (size_t m = 0; m < COUNT(mark_classes); m++)
        if (picture->marks_used[m] && mark_classes[m].words) {
            report_buffer_printf(out, "%s%s", separator, mark_classes[m].words);
            separator = "; ";
        }
    report_buffer_puts(out, ".");
    struct report_buffer left_out = { 0 };
    report_picture_left_out(picture, &left_out);
    if (left_out.length)
        report_buffer_printf(out, " The graph is bounded: %s.", left_out.data);
    out->failed |= left_out.failed;
    report_buffer_release(&left_out);
    report_buffer_puts(out, "\n\n");
}

static void render_graph(struct report_buffer *out, const struct report_picture *picture)
{
    report_buffer_puts(out, "```mermaid\nflowchart LR\n");
    render_processes(out, picture);
    render_edges(out, picture);
    render_classes(out, picture);
    report_buffer_puts(out, "```\n\n");
    render_legend(out, picture);
}

static void render_footer(struct report_buffer *out, const struct hd_snapshot *snapshot)
{
    size_t threads = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        threads += snapshot->processes[p].nthreads;
    report_buffer_printf(out, "<sub>hangdoc %s · %zu process%s, %zu thread%s, %u sample%s over %.1f s",
                         HANGDOC_VERSION, snapshot->nprocesses, snapshot->nprocesses == 1 ? "" : "es", threads,
                         threads == 1 ? "" : "s", snapshot->samples, snapshot->samples == 1 ? "" : "s",
                         snapshot->sampling_s);
    if (snapshot->host[0]) {
        report_buffer_puts(out, " on ");
        markdown(out, snapshot->host);
    }
    report_buffer_puts(out, "</sub>\n");
}

bool report_render_markdown(const struct hd_snapshot *snapshot, const struct report_analysis *analysis, FILE *out)
{
    static const struct report_picture_limits limits = { .boxes = REPORT_MERMAID_BOXES_MAX,
                                                         .edges = REPORT_MERMAID_EDGES_MAX };
    struct report_picture *picture = report_picture_new(snapshot, analysis, &limits);
    if (!picture)
        return false;
    struct report_buffer text = { 0 };
    render_heading(&text, analysis);
    render_verdict(&text, snapshot, analysis);
    render_root_cause(&text, snapshot, analysis);
    render_table(&text, snapshot, analysis);
    render_graph(&text, picture);
    render_footer(&text, snapshot);
    report_picture_free(picture);
    bool ok = !text.failed && fwrite(text.data, 1, text.length, out) == text.length && fflush(out) == 0;
    report_buffer_release(&text);
    return ok;
}

bool report_render_markdown_unfinished(const char *why, FILE *out)
{
    struct report_buffer text = { 0 };
    report_buffer_puts(&text, "\n## hangdoc: could not tell\n\n**Verdict:** could not tell: no diagnosis: ");
    markdown(&text, why);
    report_buffer_puts(&text, "\n\n");
    bool ok = !text.failed && fwrite(text.data, 1, text.length, out) == text.length && fflush(out) == 0;
    report_buffer_release(&text);
    return ok;
}
