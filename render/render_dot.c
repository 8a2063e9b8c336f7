/* The wait-for graph in DOT (render_dot.h): the picture (picture.h) spelt for Graphviz.
 *
 * Left to right, as a waiter points at who could wake it: the chain of a hang reads like a sentence. Styles are
 * tables indexed by the picture's marks and edge kinds, so that the legend is drawn from the same rows.
 */
#include "render_dot.h"

#include "picture.h"
#include "util.h"

#include <string.h>

void report_dot_escaped(struct report_buffer *out, const char *bytes, size_t length)
{
    static const struct {
        char byte;
        const char *quoted;
    } quoting[] = { { '\\', "\\\\" }, { '"', "\\\"" }, { '&', "&amp;" } };
    struct report_buffer plain = { 0 };
    report_buffer_escaped(&plain, bytes, length);
    if (plain.failed)
        out->failed = true;
    for (size_t i = 0; i < plain.length; i++) {
        const char *quoted = NULL;
        for (size_t q = 0; q < COUNT(quoting); q++)
            if (plain.data[i] == quoting[q].byte)
                quoted = quoting[q].quoted;
        if (quoted)
            report_buffer_puts(out, quoted);
        else
            report_buffer_append(out, &plain.data[i], 1);
    }
    report_buffer_release(&plain);
}

static void dot_escape(struct report_buffer *out, const char *text)
{
    report_dot_escaped(out, text, strlen(text));
}

static const struct report_picture_syntax dot_syntax = { .escape = dot_escape, .line_break = "\\n" };
/* a cluster's label, left-justified under the graph's title: each line ends in \l */
static const struct report_picture_syntax dot_cluster_syntax = { .escape = dot_escape, .line_break = "\\l" };

/* ---- styles -------------------------------------------------------------------------------------------------- */

static const struct {
    const char *fill, *border, *style, *font;
    const char *penwidth;
} mark_styles[] = {
    [REPORT_PICTURE_ROOT_CAUSE] = { "#ff9e9e", "#b00000", "rounded,filled,bold", "Helvetica-Bold", "3" },
    [REPORT_PICTURE_IN_HANG] = { "#ffd0d0", "#c00000", "rounded,filled,bold", "Helvetica-Bold", "2" },
    [REPORT_PICTURE_FOREVER] = { "#ffeaea", "#c00000", "rounded,filled", "Helvetica", "1.5" },
    [REPORT_PICTURE_KERNEL] = { "#fff0cc", "#b26a00", "rounded,filled", "Helvetica", "1" },
    [REPORT_PICTURE_EXITED] = { "#eeeeee", "#9e9e9e", "rounded,filled,dashed", "Helvetica", "1" },
    [REPORT_PICTURE_WAITS] = { "#ffffff", "#607d8b", "rounded,filled", "Helvetica", "1" },
    [REPORT_PICTURE_RUNS] = { "#e8f5e9", "#2e7d32", "rounded,filled", "Helvetica", "1" },
    [REPORT_PICTURE_PLAIN] = { "#f5f5f5", "#9e9e9e", "filled,dashed", "Helvetica", "1" },
};

static const char *const box_shapes[] = {
    [REPORT_BOX_THREAD] = "box",
    [REPORT_BOX_ANY_THREAD] = "ellipse",
    [REPORT_BOX_LEFT_OUT] = "note",
    [REPORT_BOX_ABSENT_OWNER] = "box",
};

static const struct {
    const char *colour, *style, *arrowhead;
} edge_styles[] = {
    [REPORT_PICTURE_MUTEX] = { "#37474f", "solid", "normal" },
    [REPORT_PICTURE_RWLOCK] = { "#37474f", "solid", "empty" },
    [REPORT_PICTURE_GIL] = { "#7b1fa2", "solid", "normal" },
    [REPORT_PICTURE_JOIN] = { "#00838f", "solid", "diamond" },
    [REPORT_PICTURE_FUTEX] = { "#616161", "dashed", "normal" },
    [REPORT_PICTURE_PIPE] = { "#1565c0", "solid", "vee" },
    [REPORT_PICTURE_SOCKET] = { "#1565c0", "dashed", "vee" },
    [REPORT_PICTURE_CHILD] = { "#2e7d32", "solid", "dot" },
    [REPORT_PICTURE_FILE_LOCK] = { "#8d6e63", "solid", "box" },
    [REPORT_PICTURE_OUT_OF_REACH] = { "#b00000", "dotted", "tee" },
};

/* An edge of the knot: the colour of the hang, thicker, whatever its kind */
#define KNOT_COLOUR "#c00000"
#define KNOT_PENWIDTH "2.5"

static void box_style(struct report_buffer *out, enum report_picture_mark mark, const char *shape)
{
    report_buffer_printf(out, "shape=%s, style=\"%s\", fillcolor=\"%s\", color=\"%s\", fontname=\"%s\", penwidth=%s",
                         shape, mark_styles[mark].style, mark_styles[mark].fill, mark_styles[mark].border,
                         mark_styles[mark].font, mark_styles[mark].penwidth);
}

static void edge_style(struct report_buffer *out, enum report_picture_edge_kind kind, bool knot)
{
    const char *colour = knot ? KNOT_COLOUR : edge_styles[kind].colour;
    report_buffer_printf(out, "color=\"%s\", fontcolor=\"%s\", style=%s, arrowhead=%s, penwidth=%s", colour, colour,
                         edge_styles[kind].style, edge_styles[kind].arrowhead, knot ? KNOT_PENWIDTH : "1");
}

/* ---- the graph ----------------------------------------------------------------------------------------------- */

/* Node names that no target string can collide with: the kind's prefix and a number. */
static void box_id(struct report_buffer *out, const struct report_picture *picture, size_t index)
{
    const struct report_picture_box *box = &picture->boxes[index];
    pid_t pid = box->process != REPORT_NO_NODE
                    ? picture->analysis->graph.processes[picture->processes[box->process].process].process->pid
                    : 0;
    switch (box->kind) {
    case REPORT_BOX_THREAD:
        report_buffer_printf(out, "t%d", (int)box->tid);
        return;
    case REPORT_BOX_ANY_THREAD:
        report_buffer_printf(out, "any%d", (int)pid);
        return;
    case REPORT_BOX_LEFT_OUT:
        report_buffer_printf(out, "more%d", (int)pid);
        return;
    case REPORT_BOX_ABSENT_OWNER:
        report_buffer_printf(out, "owner%d", (int)box->tid);
        return;
    }
}

static void render_box(struct report_buffer *out, const struct report_picture *picture, size_t index,
                       const char *indent)
{
    const struct report_picture_box *box = &picture->boxes[index];
    report_buffer_puts(out, indent);
    box_id(out, picture, index);
    report_buffer_puts(out, " [label=\"");
    report_picture_box_label(picture, index, &dot_syntax, out);
    report_buffer_puts(out, "\", ");
    box_style(out, box->mark, box_shapes[box->kind]);
    if (box->kind == REPORT_BOX_ABSENT_OWNER)
        report_buffer_printf(out, ", color=\"%s\"", edge_styles[REPORT_PICTURE_OUT_OF_REACH].colour);
    report_buffer_puts(out, "];\n");
}

static void render_process(struct report_buffer *out, const struct report_picture *picture, size_t process)
{
    pid_t pid = picture->analysis->graph.processes[picture->processes[process].process].process->pid;
    report_buffer_printf(out, "  subgraph cluster_%d {\n    label=\"", (int)pid);
    report_picture_process_label(picture, process, &dot_cluster_syntax, out);
    report_buffer_puts(out, "\\l\";\n    style=\"rounded\"; color=\"#90a4ae\"; fontsize=10;\n");
    for (size_t i = 0; i < picture->nboxes; i++)
        if (picture->boxes[i].process == process)
            render_box(out, picture, i, "    ");
    report_buffer_puts(out, "  }\n");
}

static void render_edges(struct report_buffer *out, const struct report_picture *picture)
{
    for (size_t e = 0; e < picture->nedges; e++) {
        const struct report_picture_edge *edge = &picture->edges[e];
        report_buffer_puts(out, "  ");
        box_id(out, picture, edge->from);
        report_buffer_puts(out, " -> ");
        box_id(out, picture, edge->to);
        report_buffer_puts(out, " [label=\"");
        report_picture_edge_label(edge, out);
        report_buffer_puts(out, "\", ");
        edge_style(out, edge->kind, edge->knot);
        report_buffer_puts(out, "];\n");
    }
}

/* What each colour and line means, for what this picture uses. */
static void render_legend(struct report_buffer *out, const struct report_picture *picture)
{
    report_buffer_puts(out, "  subgraph cluster_legend {\n    label=\"legend\"; style=\"rounded,dashed\"; "
                            "color=\"#b0bec5\"; fontsize=9;\n    node [fontsize=9];\n");
    for (size_t m = 0; m < REPORT_PICTURE_PLAIN; m++)
        if (picture->marks_used[m]) {
            report_buffer_printf(out, "    legend_mark%zu [label=\"%s\", ", m,
                                 report_picture_mark_name((enum report_picture_mark)m));
            box_style(out, (enum report_picture_mark)m, "box");
            report_buffer_puts(out, "];\n");
        }
    /* each kind used, then the knot's colour: one row past the last kind */
    for (size_t k = 0; k <= REPORT_PICTURE_EDGE_KINDS; k++) {
        bool knot = k == REPORT_PICTURE_EDGE_KINDS;
        if (knot ? !picture->knot_used : !picture->kinds_used[k])
            continue;
        enum report_picture_edge_kind kind = knot ? REPORT_PICTURE_MUTEX : (enum report_picture_edge_kind)k;
        report_buffer_printf(out, "    legend_from%zu [label=\"\", shape=point, width=0.05];\n"
                                  "    legend_to%zu [label=\"\", shape=point, width=0.05];\n"
                                  "    legend_from%zu -> legend_to%zu [label=\"%s\", ",
                             k, k, k, k, knot ? "edge of the knot" : report_picture_edge_kind_name(kind));
        edge_style(out, kind, knot);
        report_buffer_puts(out, "];\n");
    }
    report_buffer_puts(out, "  }\n");
}

static void render_graph(struct report_buffer *out, const struct report_picture *picture)
{
    report_buffer_puts(out, "digraph hangdoc {\n  graph [rankdir=LR, newrank=true, fontname=\"Helvetica\", "
                            "fontsize=12, labelloc=t, labeljust=l, label=\"hangdoc: ");
    report_picture_title(picture, &dot_syntax, out);
    struct report_buffer left_out = { 0 };
    report_picture_left_out(picture, &left_out);
    if (left_out.length)
        report_buffer_printf(out, "\\l%s", left_out.data);
    out->failed |= left_out.failed;
    report_buffer_release(&left_out);
    report_buffer_puts(out, "\\l\"];\n  node [fontname=\"Helvetica\", fontsize=10];\n"
                            "  edge [fontname=\"Helvetica\", fontsize=9];\n");
    for (size_t p = 0; p < picture->nprocesses; p++)
        render_process(out, picture, p);
    for (size_t i = 0; i < picture->nboxes; i++)
        if (picture->boxes[i].process == REPORT_NO_NODE)
            render_box(out, picture, i, "  ");
    render_edges(out, picture);
    render_legend(out, picture);
    report_buffer_puts(out, "}\n");
}

bool report_render_dot(const struct hd_snapshot *snapshot, const struct report_analysis *analysis, FILE *out)
{
    static const struct report_picture_limits limits = { .boxes = REPORT_DOT_BOXES_MAX,
                                                         .edges = REPORT_DOT_EDGES_MAX };
    struct report_picture *picture = report_picture_new(snapshot, analysis, &limits);
    if (!picture)
        return false;
    struct report_buffer dot = { 0 };
    render_graph(&dot, picture);
    report_picture_free(picture);
    bool ok = !dot.failed && fwrite(dot.data, 1, dot.length, out) == dot.length && fflush(out) == 0;
    report_buffer_release(&dot);
    return ok;
}
