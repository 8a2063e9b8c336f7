/* The merge's life (merge.h): made empty, filled by report_merge_add (merge_extract.c), finished into rank tables,
 * trees and verdicts (merge_tree.c, merge_verdict.c), rendered (merge_text.c, merge_json.c, merge_dot.c), freed. */
#include "merge_model.h"

#include <stdlib.h>

struct report_merge *report_merge_new(void)
{
    return calloc(1, sizeof(struct report_merge));
}

static void release_local_verdict(struct report_merge_local_verdict *verdict)
{
    free(verdict->root_cause);
    free(verdict->confidence);
    free(verdict->summary);
    free(verdict->remedy);
}

static void release_observation(struct report_merge_observation *observation)
{
    for (size_t f = 0; f < observation->nstack; f++)
        free(observation->stack[f]);
    free(observation->stack);
    release_local_verdict(&observation->verdict);
    for (size_t f = 0; f < observation->nfindings; f++) {
        free(observation->findings[f].id);
        free(observation->findings[f].confidence);
        free(observation->findings[f].summary);
    }
    free(observation->findings);
    free(observation->call.name);
    free(observation->call.site);
}

static void release_document(struct report_merge_document *document)
{
    free(document->source);
    free(document->host);
    free(document->boot_id);
    free(document->comm);
    free(document->launchers);
    release_local_verdict(&document->verdict);
}

static void release_lines(char **lines, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(lines[i]);
    free(lines);
}

static void release_verdict(struct report_merge_verdict *verdict)
{
    for (size_t s = 0; s < verdict->nsteps; s++) {
        free(verdict->steps[s].text);
        report_rank_set_release(&verdict->steps[s].ranks);
    }
    free(verdict->steps);
    release_lines(verdict->also, verdict->nalso);
    release_lines(verdict->next, verdict->nnext);
}

static void release_job(struct report_merge_job *job)
{
    free(job->job_id);
    free(job->step_id);
    free(job->run_id);
    free(job->master);
    free(job->rank_variable);
    free(job->ranks);
    report_rank_set_release(&job->seen);
    report_rank_set_release(&job->missing);
    for (size_t n = 0; n < job->nnodes; n++) {
        report_rank_set_release(&job->nodes[n].ranks);
        report_rank_set_release(&job->nodes[n].ends);
    }
    free(job->nodes);
    for (size_t c = 0; c < job->nclasses; c++) {
        report_rank_set_release(&job->classes[c].ranks);
        report_rank_set_release(&job->classes[c].unchanged);
        report_rank_set_release(&job->classes[c].changed);
    }
    free(job->classes);
    for (size_t c = 0; c < job->ncalls; c++)
        report_rank_set_release(&job->calls[c].ranks);
    free(job->calls);
    report_rank_set_release(&job->in_no_call);
    release_verdict(&job->verdict);
}

void report_merge_free(struct report_merge *merge)
{
    if (!merge)
        return;
    for (size_t d = 0; d < merge->ndocuments; d++)
        release_document(&merge->documents[d]);
    free(merge->documents);
    for (size_t o = 0; o < merge->nobservations; o++)
        release_observation(&merge->observations[o]);
    free(merge->observations);
    free(merge->order);
    for (size_t j = 0; j < merge->njobs; j++)
        release_job(&merge->jobs[j]);
    free(merge->jobs);
    for (size_t n = 0; n < merge->nnotes; n++) {
        free(merge->notes[n].source);
        free(merge->notes[n].text);
    }
    free(merge->notes);
    release_verdict(&merge->verdict);
    free(merge);
}

bool report_merge_finish(struct report_merge *merge)
{
    if (merge->finished)
        return true;
    merge->finished = true;
    return report_merge_build_jobs(merge) && report_merge_decide(merge);
}

size_t report_merge_documents(const struct report_merge *merge)
{
    return merge->ndocuments;
}

size_t report_merge_skipped(const struct report_merge *merge)
{
    return merge->skipped;
}

enum report_hung report_merge_hung(const struct report_merge *merge)
{
    return merge->final ? merge->final->hung : REPORT_HUNG_UNKNOWN;
}

enum report_cause report_merge_cause(const struct report_merge *merge)
{
    return merge->final ? merge->final->cause : REPORT_CAUSE_UNKNOWN;
}
