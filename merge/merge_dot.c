/* The merged stacks as a Graphviz graph (merge.h): STAT's picture, one box per frame, each edge labelled with the
 * ranks that take it; the frames only outlier classes reach are filled.
 * `hangdoc merge --dot reports | dot -Tsvg > tree.svg`
 *
 * A frame's name came from a report: it goes through report_dot_escaped() (render_dot.h), as the single report's
 * graph's strings do: escaped as for the text, then quoted for DOT, so that a label can say nothing but itself. */
#include "merge_model.h"
#include "render_dot.h"

#include <string.h>

#define RANGES_SHOWN 8

static void put_dot_string(struct report_buffer *out, const char *text)
{
    report_buffer_puts(out, "\"");
    report_dot_escaped(out, text, strlen(text));
    report_buffer_puts(out, "\"");
}

/* Is `node` on the paths of outlier classes only? The most common class's ranks share one path, so one of them
 * tells whether it passes here. */
static bool outliers_only(const struct report_merge_job *job, size_t node)
{
    if (job->most_common == REPORT_MERGE_NONE || job->nclasses < 2)
        return false;
    return !report_rank_set_contains(&job->nodes[node].ranks, job->classes[job->most_common].ranks.ranks[0]);
}

static void render_job(struct report_buffer *out, const struct report_merge_job *job, size_t index, bool clustered)
{
    if (clustered) {
        struct report_buffer name = { 0 };
        report_merge_job_name(job, &name);
        report_buffer_printf(out, "  subgraph cluster_%zu {\n    label=", index);
        put_dot_string(out, name.data ? name.data : "");
        report_buffer_puts(out, ";\n");
        report_buffer_release(&name);
    }
    for (size_t n = 0; n < job->nnodes; n++) {
        const struct report_merge_node *node = &job->nodes[n];
        struct report_buffer label = { 0 };
        if (node->label)
            report_buffer_puts(&label, node->label);
        else
            report_buffer_printf(&label, "%zu rank%s", node->ranks.count, node->ranks.count == 1 ? "" : "s");
        report_buffer_printf(out, "    j%zun%zu [label=", index, n);
        put_dot_string(out, label.data ? label.data : "");
        report_buffer_release(&label);
        if (n == 0)
            report_buffer_puts(out, ", shape=ellipse");
        else if (outliers_only(job, n))
            report_buffer_puts(out, ", style=filled, fillcolor=\"#f4cccc\"");
        report_buffer_puts(out, "];\n");
        if (node->parent == REPORT_MERGE_NONE)
            continue;
        struct report_buffer ranks = { 0 };
        report_rank_set_fold(&node->ranks, &ranks, RANGES_SHOWN);
        report_buffer_printf(&ranks, " (%zu)", node->ranks.count);
        report_buffer_printf(out, "    j%zun%zu -> j%zun%zu [label=", index, node->parent, index, n);
        put_dot_string(out, ranks.data ? ranks.data : "");
        report_buffer_release(&ranks);
        report_buffer_puts(out, "];\n");
    }
    if (clustered)
        report_buffer_puts(out, "  }\n");
}

bool report_merge_render_dot(const struct report_merge *merge, FILE *out)
{
    struct report_buffer text = { 0 };
    report_buffer_puts(&text, "digraph hangdoc_merge {\n"
                              "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
                              "  edge [fontname=\"monospace\", fontsize=9];\n");
    for (size_t j = 0; j < merge->njobs; j++)
        render_job(&text, &merge->jobs[j], j, merge->njobs > 1);
    report_buffer_puts(&text, "}\n");
    bool ok = !text.failed && fwrite(text.data, 1, text.length, out) == text.length && fflush(out) == 0;
    report_buffer_release(&text);
    return ok;
}
