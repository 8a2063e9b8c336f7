/* The merge as text (merge.h): the reports, the job and its ranks (seen, missing), the merged stacks as a prefix tree,
 * the classes the smallest first with each outlier's host, pid and local verdict, and the verdict last, where a
 * terminal leaves it in view. Every string that came from a report is escaped (buffer.h). */
#include "merge_model.h"

#include <stdlib.h>
#include <string.h>

#define RANGES_SHOWN 16   /* ranges of a rank set on one line */
#define MEMBERS_SHOWN 16  /* ranks listed under a class */
#define LAUNCHERS_SHOWN 8 /* hosts with a launcher and no rank */

static void put_escaped(struct report_buffer *out, const char *text)
{
    report_buffer_escaped(out, text ? text : "?", strlen(text ? text : "?"));
}

void report_merge_job_name(const struct report_merge_job *job, struct report_buffer *out)
{
    static const char *const none = "no Slurm job, torchelastic run or master named";
    size_t parts = 0;
    if (job->job_id) {
        report_buffer_printf(out, "Slurm job %s", job->job_id);
        if (job->step_id)
            report_buffer_printf(out, ", step %s", job->step_id);
        parts++;
    }
    if (job->run_id)
        report_buffer_printf(out, "%srun %s", parts++ ? " · " : "", job->run_id);
    if (job->master)
        report_buffer_printf(out, "%smaster %s", parts++ ? " · " : "", job->master);
    if (!parts)
        report_buffer_puts(out, none);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static size_t distinct_hosts(const struct report_merge *merge)
{
    const char **names = malloc((merge->ndocuments + 1) * sizeof *names);
    if (!names)
        return merge->ndocuments;
    for (size_t d = 0; d < merge->ndocuments; d++)
        names[d] = merge->documents[d].host;
    qsort(names, merge->ndocuments, sizeof *names, compare_names);
    size_t distinct = 0;
    for (size_t d = 0; d < merge->ndocuments; d++)
        distinct += d == 0 || strcmp(names[d], names[d - 1]) != 0;
    free(names);
    return distinct;
}

static void render_header(struct report_buffer *out, const struct report_merge *merge)
{
    double first = 0, last = 0;
    for (size_t d = 0; d < merge->ndocuments; d++) {
        double taken = merge->documents[d].taken_at;
        first = d == 0 || taken < first ? taken : first;
        last = d == 0 || taken > last ? taken : last;
    }
    report_buffer_printf(out, "hangdoc merge: %zu report%s from %zu host%s, taken over %.1f s", merge->ndocuments,
                         merge->ndocuments == 1 ? "" : "s", distinct_hosts(merge),
                         distinct_hosts(merge) == 1 ? "" : "s", last - first);
    if (merge->skipped)
        report_buffer_printf(out, "; %zu input%s left out (see the notes)", merge->skipped,
                             merge->skipped == 1 ? "" : "s");
    report_buffer_puts(out, "\n");
}

/* Hosts whose reports show a launcher but no rank: where missing ranks were to run. */
static void render_lonely_launchers(struct report_buffer *out, const struct report_merge *merge)
{
    size_t shown = 0;
    for (size_t d = 0; d < merge->ndocuments; d++) {
        const struct report_merge_document *document = &merge->documents[d];
        if (document->ranks || !document->nlaunchers)
            continue;
        if (shown++ == LAUNCHERS_SHOWN) {
            report_buffer_puts(out, ", …");
            break;
        }
        report_buffer_puts(out, shown == 1 ? "  hosts with a launcher and no rank: " : ", ");
        put_escaped(out, document->host);
        report_buffer_printf(out, " (pid %d)", (int)document->launchers[0]);
    }
    if (shown)
        report_buffer_puts(out, "\n");
}

static void render_ranks(struct report_buffer *out, const struct report_merge *merge,
                         const struct report_merge_job *job)
{
    struct report_buffer name = { 0 };
    report_merge_job_name(job, &name);
    report_buffer_puts(out, "job: ");
    put_escaped(out, name.data);
    report_buffer_release(&name);
    report_buffer_printf(out, "\nranks: %zu seen", job->seen.count);
    if (job->world_size >= 0)
        report_buffer_printf(out, " of WORLD_SIZE %d", job->world_size);
    if (job->rank_variable) {
        report_buffer_puts(out, " (the rank from ");
        put_escaped(out, job->rank_variable);
        report_buffer_puts(out, ")");
    }
    report_buffer_puts(out, ": ");
    report_rank_set_describe(&job->seen, out, RANGES_SHOWN);
    report_buffer_puts(out, "\n");
    if (job->world_size < 0)
        report_buffer_puts(out, "missing: cannot tell, no rank names WORLD_SIZE\n");
    else if (job->missing.count == 0)
        report_buffer_puts(out, "missing: none\n");
    if (job->missing.count) {
        report_buffer_puts(out, "missing: ");
        report_rank_set_describe(&job->missing, out, RANGES_SHOWN);
        report_buffer_puts(out, ": no report shows a process with these ranks\n");
        render_lonely_launchers(out, merge);
    }
}

/* ---- the prefix tree ---- */

static void render_node_line(struct report_buffer *out, const struct report_merge_job *job, size_t node,
                             const char *prefix, bool show_ranks)
{
    report_buffer_puts(out, prefix);
    put_escaped(out, job->nodes[node].label);
    if (show_ranks) {
        report_buffer_puts(out, "  ");
        report_rank_set_describe(&job->nodes[node].ranks, out, RANGES_SHOWN);
    }
    report_buffer_puts(out, "\n");
}

/* A branch: its first frame on `first_prefix`, then the frames its ranks all share at the same indentation (only a
 * fork in the tree indents), then its sub-branches, the smallest first. */
static void render_branch(struct report_buffer *out, const struct report_merge_job *job, size_t node,
                          const char *first_prefix, const char *rest_prefix)
{
    render_node_line(out, job, node, first_prefix, true);
    const struct report_merge_node *at = &job->nodes[node];
    while (at->first_child != REPORT_MERGE_NONE && job->nodes[at->first_child].next_sibling == REPORT_MERGE_NONE &&
           at->ends.count == 0) {
        node = at->first_child;
        render_node_line(out, job, node, rest_prefix, false);
        at = &job->nodes[node];
    }
    if (at->first_child == REPORT_MERGE_NONE)
        return;
    size_t length = strlen(rest_prefix);
    char *first = malloc(length + 8), *rest = malloc(length + 8);
    if (first && rest && at->ends.count) {
        report_buffer_printf(out, "%s├─ (the stack ends here)  ", rest_prefix);
        report_rank_set_describe(&at->ends, out, RANGES_SHOWN);
        report_buffer_puts(out, "\n");
    }
    for (size_t child = at->first_child; first && rest && child != REPORT_MERGE_NONE;
         child = job->nodes[child].next_sibling) {
        bool last = job->nodes[child].next_sibling == REPORT_MERGE_NONE;
        snprintf(first, length + 8, "%s%s", rest_prefix, last ? "└─ " : "├─ ");
        snprintf(rest, length + 8, "%s%s", rest_prefix, last ? "   " : "│  ");
        render_branch(out, job, child, first, rest);
    }
    free(first);
    free(rest);
}

static void render_tree(struct report_buffer *out, const struct report_merge_job *job)
{
    report_buffer_puts(out, "\nstacks of the ranks' main threads, merged, outermost frame first (a frame without "
                            "ranks has those of the one above):\n");
    for (size_t child = job->nodes[0].first_child; child != REPORT_MERGE_NONE; child = job->nodes[child].next_sibling)
        render_branch(out, job, child, "", "");
}

/* ---- collectives ---- */

/* Which ranks are in which call: a line per call, the most ranks first (merge_calls.c); nothing when no rank is in
 * a collective. */
static void render_calls(struct report_buffer *out, const struct report_merge_job *job)
{
    if (job->ncalls == 0)
        return;
    report_buffer_puts(out, "\ncollectives of the ranks (each rank's latest report), the most ranks first:\n");
    for (size_t c = 0; c < job->ncalls; c++) {
        struct report_buffer call = { 0 };
        report_merge_describe_call(&job->calls[c], &call);
        report_buffer_puts(out, "  ");
        put_escaped(out, call.data && !call.failed ? call.data : "?");
        report_buffer_release(&call);
        report_buffer_puts(out, "  ");
        report_rank_set_describe(&job->calls[c].ranks, out, 0);
        report_buffer_puts(out, job->calls[c].timed && !job->calls[c].waited_long ? "  (not yet for --stuck-after)" : "");
        report_buffer_puts(out, "\n");
    }
    if (job->in_no_call.count) {
        report_buffer_puts(out, "  in no collective  ");
        report_rank_set_describe(&job->in_no_call, out, 0);
        report_buffer_puts(out, "\n");
    }
}

/* ---- classes ---- */

static void render_local_verdict(struct report_buffer *out, const struct report_merge_local_verdict *verdict)
{
    static const char *const subjects[] = {
        [REPORT_MERGE_SUBJECT_NONE] = "", [REPORT_MERGE_SUBJECT_RANK] = "the rank's process",
        [REPORT_MERGE_SUBJECT_WORKER] = "worker", [REPORT_MERGE_SUBJECT_PROCESS] = "process",
    };
    if (verdict->spins_in_collective) {
        report_buffer_printf(out, "not hung by itself: it spins in the collective it waits in (its report: HUNG (%s), ",
                             report_cause_name(verdict->cause));
        put_escaped(out, verdict->root_cause ? verdict->root_cause : "?");
        report_buffer_puts(out, ")");
        return;
    }
    if (verdict->hung != REPORT_HUNG_YES) {
        report_buffer_puts(out, verdict->hung == REPORT_HUNG_NO ? "not hung by itself" : "its report could not tell");
        return;
    }
    report_buffer_printf(out, "HUNG (%s): ", report_cause_name(verdict->cause));
    put_escaped(out, verdict->root_cause ? verdict->root_cause : "asleep forever");
    if (verdict->confidence) {
        report_buffer_puts(out, " (");
        put_escaped(out, verdict->confidence);
        report_buffer_puts(out, ")");
    }
    report_buffer_printf(out, " in %s", subjects[verdict->subject]);
    if (verdict->subject != REPORT_MERGE_SUBJECT_RANK)
        report_buffer_printf(out, " %d", (int)verdict->pid);
    if (verdict->summary) {
        report_buffer_puts(out, ": ");
        put_escaped(out, verdict->summary);
    }
}

static void render_member(struct report_buffer *out, const struct report_merge *merge,
                          const struct report_merge_rank *rank)
{
    const struct report_merge_observation *observation = &merge->observations[rank->latest];
    report_buffer_printf(out, "    rank %d on ", rank->rank);
    put_escaped(out, merge->documents[observation->document].host);
    report_buffer_printf(out, ", pid %d: ", (int)observation->pid);
    render_local_verdict(out, &observation->verdict);
    report_buffer_puts(out, "\n");
}

static void render_class(struct report_buffer *out, const struct report_merge *merge,
                         const struct report_merge_job *job, const struct report_merge_class *class)
{
    const struct report_merge_observation *representative =
        &merge->observations[job->ranks[class->representative].latest];
    report_buffer_puts(out, "  ");
    report_rank_set_describe(&class->ranks, out, RANGES_SHOWN);
    report_buffer_puts(out, class->most_common ? " · the most common" : class->outlier ? " · outlier" : "");
    struct report_buffer wait = { 0 };
    report_merge_describe_wait(representative, false, &wait);
    report_buffer_puts(out, " · main thread ");
    put_escaped(out, wait.data);
    report_buffer_release(&wait);
    if (class->unchanged.count) {
        report_buffer_puts(out, " · the same stack in every report: ");
        report_rank_set_describe(&class->unchanged, out, RANGES_SHOWN);
    }
    if (class->changed.count) {
        report_buffer_puts(out, " · stack moved between reports: ");
        report_rank_set_describe(&class->changed, out, RANGES_SHOWN);
    }
    report_buffer_puts(out, "\n");
    bool list = class->outlier || report_merge_hung_by_itself(&representative->verdict) == REPORT_HUNG_YES;
    if (!list) {
        report_buffer_puts(out, "    ");
        render_local_verdict(out, &representative->verdict);
        report_buffer_puts(out, class->ranks.count > 1 ? " (each of them)\n" : "\n");
        return;
    }
    size_t shown = 0;
    for (; shown < class->ranks.count && shown < MEMBERS_SHOWN; shown++)
        render_member(out, merge, &job->ranks[report_merge_rank_index(job, class->ranks.ranks[shown])]);
    if (class->ranks.count > shown)
        report_buffer_printf(out, "    … and %zu more\n", class->ranks.count - shown);
}

static void render_classes(struct report_buffer *out, const struct report_merge *merge,
                           const struct report_merge_job *job)
{
    report_buffer_printf(out, "\n%zu class%s of ranks (the same stack, the same local verdict), the smallest first:\n",
                         job->nclasses, job->nclasses == 1 ? "" : "es");
    for (size_t c = 0; c < job->nclasses; c++)
        render_class(out, merge, job, &job->classes[c]);
}

/* ---- the verdict ---- */

static void render_lines(struct report_buffer *out, const char *label, char *const *lines, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        report_buffer_printf(out, "  %s: ", label);
        put_escaped(out, lines[i]);
        report_buffer_puts(out, "\n");
    }
}

static void render_verdict(struct report_buffer *out, const struct report_merge *merge,
                           const struct report_merge_verdict *verdict, const char *title)
{
    struct report_buffer line = { 0 };
    report_merge_verdict_line(merge, verdict, &line);
    report_buffer_printf(out, "\n%s: ", title);
    put_escaped(out, line.data);
    report_buffer_release(&line);
    report_buffer_puts(out, "\n");
    if (verdict->culprit != REPORT_MERGE_NONE) {
        const struct report_merge_observation *culprit = &merge->observations[verdict->culprit];
        const struct report_merge_document *document = &merge->documents[culprit->document];
        report_buffer_printf(out, "  rank %d on ", culprit->rank);
        put_escaped(out, document->host);
        report_buffer_printf(out, ", pid %d (", (int)culprit->pid);
        put_escaped(out, document->source);
        report_buffer_puts(out, ")");
        if (culprit->verdict.summary) {
            report_buffer_puts(out, ": ");
            put_escaped(out, culprit->verdict.summary);
        }
        report_buffer_puts(out, "\n");
    }
    const struct report_merge_local_verdict *local =
        verdict->kind == REPORT_MERGE_RANK_HUNG      ? &merge->observations[verdict->culprit].verdict
        : verdict->kind == REPORT_MERGE_PROCESS_HUNG ? &merge->documents[verdict->document].verdict
                                                     : NULL;
    if (local && local->remedy)
        render_lines(out, "fix", &local->remedy, 1);
    render_lines(out, "also", verdict->also, verdict->nalso);
    render_lines(out, "next", verdict->next, verdict->nnext);
}

static void render_notes(struct report_buffer *out, const struct report_merge *merge)
{
    if (!merge->nnotes)
        return;
    report_buffer_puts(out, "\nnotes:\n");
    for (size_t n = 0; n < merge->nnotes; n++) {
        report_buffer_puts(out, "  ");
        if (merge->notes[n].source) {
            put_escaped(out, merge->notes[n].source);
            report_buffer_puts(out, ": ");
        }
        put_escaped(out, merge->notes[n].text);
        report_buffer_puts(out, "\n");
    }
}

bool report_merge_render_text(const struct report_merge *merge, FILE *out)
{
    struct report_buffer text = { 0 };
    render_header(&text, merge);
    for (size_t j = 0; j < merge->njobs; j++) {
        const struct report_merge_job *job = &merge->jobs[j];
        if (merge->njobs > 1)
            report_buffer_printf(&text, "\n== job %zu of %zu ==\n", j + 1, merge->njobs);
        render_ranks(&text, merge, job);
        render_tree(&text, job);
        render_calls(&text, job);
        render_classes(&text, merge, job);
        if (merge->njobs > 1)
            render_verdict(&text, merge, &job->verdict, "job verdict");
    }
    render_notes(&text, merge);
    if (merge->final)
        render_verdict(&text, merge, merge->final, "verdict");
    bool ok = !text.failed && (!text.length || fwrite(text.data, 1, text.length, out) == text.length) &&
              fflush(out) == 0;
    report_buffer_release(&text);
    return ok;
}
