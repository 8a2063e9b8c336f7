/* The merge as one JSON document, schema hangdoc.merge/1 (docs/hangdoc.merge-1.schema.json), written as it is
 * walked (json_writer.h). Strings keep their exact values. The prefix tree is a flat list of nodes with their parent,
 * since a stack of hundreds of frames would nest deeper than a dashboard's parser (or the writer) allows. */
#include "json_writer.h"
#include "merge_model.h"

#include <stdlib.h>

static void rank_set_json(struct report_json *json, const char *key, const struct report_rank_set *set)
{
    struct report_buffer folded = { 0 };
    report_rank_set_fold(set, &folded, 0);
    report_json_begin_object(json, key);
    report_json_string(json, "folded", folded.data ? folded.data : "");
    report_json_int(json, "count", (int64_t)set->count);
    report_json_begin_array(json, "ranges");
    size_t cursor = 0;
    int first, last;
    while (report_rank_set_next_range(set, &cursor, &first, &last)) {
        report_json_begin_array(json, NULL);
        report_json_int(json, NULL, first);
        report_json_int(json, NULL, last);
        report_json_end_array(json);
    }
    report_json_end_array(json);
    report_json_end_object(json);
    report_buffer_release(&folded);
}

static void hung_json(struct report_json *json, enum report_hung hung)
{
    if (hung == REPORT_HUNG_UNKNOWN)
        report_json_null(json, "hung");
    else
        report_json_bool(json, "hung", hung == REPORT_HUNG_YES);
}

static void int_or_null(struct report_json *json, const char *key, int value)
{
    if (value >= 0)
        report_json_int(json, key, value);
    else
        report_json_null(json, key);
}

static void local_verdict_json(struct report_json *json, const char *key,
                               const struct report_merge_local_verdict *verdict)
{
    static const char *const subjects[] = {
        [REPORT_MERGE_SUBJECT_NONE] = NULL, [REPORT_MERGE_SUBJECT_RANK] = "rank",
        [REPORT_MERGE_SUBJECT_WORKER] = "worker", [REPORT_MERGE_SUBJECT_PROCESS] = "process",
    };
    report_json_begin_object(json, key);
    hung_json(json, verdict->hung);
    report_json_name(json, "cause", report_cause_name(verdict->cause));
    report_json_string_or_null(json, "root_cause", verdict->root_cause);
    report_json_string_or_null(json, "confidence", verdict->confidence);
    report_json_pid_or_null(json, "pid", verdict->pid);
    report_json_pid_or_null(json, "tid", verdict->tid);
    report_json_string_or_null(json, "subject", subjects[verdict->subject]);
    report_json_string_or_null(json, "summary", verdict->summary);
    report_json_string_or_null(json, "remedy", verdict->remedy);
    report_json_bool(json, "spins_in_collective", verdict->spins_in_collective);
    report_json_end_object(json);
}

static void strings_json(struct report_json *json, const char *key, char *const *lines, size_t count)
{
    report_json_begin_array(json, key);
    for (size_t i = 0; i < count; i++)
        report_json_string(json, NULL, lines[i]);
    report_json_end_array(json);
}

static void verdict_json(struct report_json *json, const struct report_merge *merge,
                         const struct report_merge_verdict *verdict)
{
    static const char *const kinds[REPORT_MERGE_VERDICT_KINDS] = {
        [REPORT_MERGE_RANK_HUNG] = "rank-hung",         [REPORT_MERGE_MISMATCH] = "mismatch",
        [REPORT_MERGE_PROCESS_HUNG] = "process-hung",
        [REPORT_MERGE_MISSING_RANKS] = "missing-ranks", [REPORT_MERGE_OUTLIER] = "outlier",
        [REPORT_MERGE_UNIFORM] = "uniform",             [REPORT_MERGE_NO_RANKS] = "no-ranks",
    };
    static const char *const steps[REPORT_MERGE_STEP_KINDS] = {
        [REPORT_MERGE_STEP_MISMATCH] = "mismatch",
        [REPORT_MERGE_STEP_WAITING] = "waiting",       [REPORT_MERGE_STEP_NEVER_JOINED] = "never-joined",
        [REPORT_MERGE_STEP_DIFFERS] = "differs",       [REPORT_MERGE_STEP_RANK] = "rank",
        [REPORT_MERGE_STEP_MAIN_THREAD] = "main-thread", [REPORT_MERGE_STEP_ROOT_CAUSE] = "root-cause",
        [REPORT_MERGE_STEP_MISSING] = "missing",       [REPORT_MERGE_STEP_PROCESS] = "process",
        [REPORT_MERGE_STEP_NONE_HUNG] = "none-hung",   [REPORT_MERGE_STEP_NO_RANKS] = "no-ranks",
    };
    struct report_buffer line = { 0 };
    report_merge_verdict_line(merge, verdict, &line);
    report_json_begin_object(json, "verdict");
    hung_json(json, verdict->hung);
    report_json_name(json, "cause", report_cause_name(verdict->cause));
    report_json_name(json, "kind", kinds[verdict->kind]);
    report_json_string(json, "text", line.data ? line.data : "");
    report_buffer_release(&line);
    if (verdict->job != REPORT_MERGE_NONE)
        report_json_int(json, "job", (int64_t)verdict->job);
    else
        report_json_null(json, "job");
    if (verdict->culprit != REPORT_MERGE_NONE) {
        const struct report_merge_observation *culprit = &merge->observations[verdict->culprit];
        report_json_begin_object(json, "culprit");
        report_json_int(json, "rank", culprit->rank);
        report_json_string(json, "host", merge->documents[culprit->document].host);
        report_json_string_or_null(json, "boot_id", merge->documents[culprit->document].boot_id);
        report_json_int(json, "pid", culprit->pid);
        report_json_string(json, "source", merge->documents[culprit->document].source);
        local_verdict_json(json, "local_verdict", &culprit->verdict);
        report_json_end_object(json);
    } else {
        report_json_null(json, "culprit");
    }
    report_json_begin_array(json, "chain");
    for (size_t s = 0; s < verdict->nsteps; s++) {
        report_json_begin_object(json, NULL);
        report_json_name(json, "step", steps[verdict->steps[s].kind]);
        report_json_string(json, "text", verdict->steps[s].text);
        rank_set_json(json, "ranks", &verdict->steps[s].ranks);
        report_json_end_object(json);
    }
    report_json_end_array(json);
    strings_json(json, "also", verdict->also, verdict->nalso);
    strings_json(json, "next", verdict->next, verdict->nnext);
    report_json_end_object(json);
}

static void rank_json(struct report_json *json, const struct report_merge *merge, const struct report_merge_rank *rank)
{
    const struct report_merge_observation *observation = &merge->observations[rank->latest];
    const struct report_merge_document *document = &merge->documents[observation->document];
    report_json_begin_object(json, NULL);
    report_json_int(json, "rank", rank->rank);
    report_json_string(json, "host", document->host);
    report_json_string_or_null(json, "boot_id", document->boot_id);
    report_json_int(json, "pid", observation->pid);
    int_or_null(json, "local_rank", observation->local_rank);
    int_or_null(json, "group_rank", observation->group_rank);
    report_json_string(json, "source", document->source);
    report_json_double(json, "taken_at", document->taken_at);
    report_json_int(json, "class", (int64_t)rank->class_id);
    report_json_int(json, "leaf", (int64_t)rank->leaf);
    report_json_bool(json, "python", observation->python);
    report_json_int(json, "reports", (int64_t)rank->reports);
    if (rank->unchanged < 0)
        report_json_null(json, "stack_unchanged");
    else
        report_json_bool(json, "stack_unchanged", rank->unchanged == 1);
    report_json_bool(json, "conflict", rank->conflict);
    local_verdict_json(json, "local_verdict", &observation->verdict);
    report_json_begin_array(json, "findings");
    for (size_t f = 0; f < observation->nfindings; f++) {
        const struct report_merge_finding *finding = &observation->findings[f];
        report_json_begin_object(json, NULL);
        report_json_string_or_null(json, "id", finding->id);
        report_json_string_or_null(json, "confidence", finding->confidence);
        report_json_pid_or_null(json, "pid", finding->pid);
        report_json_pid_or_null(json, "tid", finding->tid);
        report_json_string_or_null(json, "summary", finding->summary);
        report_json_end_object(json);
    }
    report_json_end_array(json);
    report_json_end_object(json);
}

static void tree_json(struct report_json *json, const struct report_merge_job *job)
{
    report_json_begin_array(json, "tree");
    for (size_t n = 0; n < job->nnodes; n++) {
        const struct report_merge_node *node = &job->nodes[n];
        report_json_begin_object(json, NULL);
        report_json_int(json, "id", (int64_t)n);
        if (node->parent == REPORT_MERGE_NONE)
            report_json_null(json, "parent");
        else
            report_json_int(json, "parent", (int64_t)node->parent);
        report_json_string_or_null(json, "frame", node->label);
        report_json_int(json, "depth", (int64_t)node->depth);
        rank_set_json(json, "ranks", &node->ranks);
        rank_set_json(json, "ends", &node->ends);
        report_json_end_object(json);
    }
    report_json_end_array(json);
}

static void class_json(struct report_json *json, const struct report_merge *merge, const struct report_merge_job *job,
                       size_t index)
{
    const struct report_merge_class *class = &job->classes[index];
    const struct report_merge_observation *representative =
        &merge->observations[job->ranks[class->representative].latest];
    report_json_begin_object(json, NULL);
    report_json_int(json, "id", (int64_t)index);
    rank_set_json(json, "ranks", &class->ranks);
    report_json_bool(json, "most_common", class->most_common);
    report_json_bool(json, "outlier", class->outlier);
    report_json_int(json, "leaf", (int64_t)class->leaf);
    report_json_begin_array(json, "stack");
    for (size_t f = 0; f < representative->nstack; f++)
        report_json_string(json, NULL, representative->stack[f]);
    report_json_end_array(json);
    report_json_begin_object(json, "wait");
    struct report_buffer what = { 0 };
    report_merge_describe_wait(representative, false, &what);
    report_json_string(json, "text", what.data ? what.data : "");
    report_buffer_release(&what);
    report_json_string_or_null(json, "collective", representative->wait ? representative->wait->collective : NULL);
    report_json_end_object(json);
    local_verdict_json(json, "local_verdict", &representative->verdict);
    rank_set_json(json, "unchanged", &class->unchanged);
    rank_set_json(json, "changed", &class->changed);
    report_json_end_object(json);
}

/* The table of the job's collectives: each call (collective and call site) with its ranks. */
static void calls_json(struct report_json *json, const struct report_merge_job *job)
{
    report_json_begin_array(json, "collectives");
    for (size_t c = 0; c < job->ncalls; c++) {
        report_json_begin_object(json, NULL);
        report_json_string(json, "name", job->calls[c].name);
        report_json_string_or_null(json, "site", job->calls[c].site);
        rank_set_json(json, "ranks", &job->calls[c].ranks);
        report_json_bool(json, "timed", job->calls[c].timed);
        report_json_bool(json, "waited_long", job->calls[c].waited_long);
        report_json_end_object(json);
    }
    report_json_end_array(json);
    rank_set_json(json, "in_no_collective", &job->in_no_call);
}

static void job_json(struct report_json *json, const struct report_merge *merge, const struct report_merge_job *job)
{
    report_json_begin_object(json, NULL);
    report_json_string_or_null(json, "job_id", job->job_id);
    report_json_string_or_null(json, "step_id", job->step_id);
    report_json_string_or_null(json, "run_id", job->run_id);
    report_json_string_or_null(json, "master", job->master);
    report_json_string_or_null(json, "rank_variable", job->rank_variable);
    int_or_null(json, "world_size", job->world_size);
    rank_set_json(json, "seen", &job->seen);
    rank_set_json(json, "missing", &job->missing);
    report_json_begin_array(json, "ranks");
    for (size_t r = 0; r < job->nranks; r++)
        rank_json(json, merge, &job->ranks[r]);
    report_json_end_array(json);
    tree_json(json, job);
    calls_json(json, job);
    report_json_begin_array(json, "classes");
    for (size_t c = 0; c < job->nclasses; c++)
        class_json(json, merge, job, c);
    report_json_end_array(json);
    verdict_json(json, merge, &job->verdict);
    report_json_end_object(json);
}

static void inputs_json(struct report_json *json, const struct report_merge *merge)
{
    report_json_begin_array(json, "reports");
    for (size_t d = 0; d < merge->ndocuments; d++) {
        const struct report_merge_document *document = &merge->documents[d];
        report_json_begin_object(json, NULL);
        report_json_string(json, "source", document->source);
        report_json_string(json, "host", document->host);
        report_json_string_or_null(json, "boot_id", document->boot_id);
        report_json_double(json, "taken_at", document->taken_at);
        report_json_int(json, "ranks", (int64_t)document->ranks);
        report_json_begin_array(json, "launchers");
        for (size_t l = 0; l < document->nlaunchers; l++)
            report_json_int(json, NULL, document->launchers[l]);
        report_json_end_array(json);
        local_verdict_json(json, "verdict", &document->verdict);
        report_json_bool(json, "hang_in_rank", document->hang_in_rank);
        report_json_end_object(json);
    }
    report_json_end_array(json);
    report_json_int(json, "skipped", (int64_t)merge->skipped);
}

bool report_merge_render_json(const struct report_merge *merge, FILE *out)
{
    struct report_json *json = malloc(sizeof *json);
    if (!json)
        return false;
    report_json_start(json, out, true);
    report_json_begin_object(json, NULL);
    report_json_name(json, "schema", REPORT_MERGE_SCHEMA);
    report_json_name(json, "hangdoc_version", HANGDOC_VERSION);
    inputs_json(json, merge);
    report_json_begin_array(json, "jobs");
    for (size_t j = 0; j < merge->njobs; j++)
        job_json(json, merge, &merge->jobs[j]);
    report_json_end_array(json);
    report_json_begin_array(json, "notes");
    for (size_t n = 0; n < merge->nnotes; n++) {
        report_json_begin_object(json, NULL);
        report_json_string_or_null(json, "source", merge->notes[n].source);
        report_json_string(json, "text", merge->notes[n].text);
        report_json_end_object(json);
    }
    report_json_end_array(json);
    if (merge->final)
        verdict_json(json, merge, merge->final);
    else
        report_json_null(json, "verdict");
    report_json_end_object(json);
    bool ok = report_json_finish(json);
    free(json);
    return ok;
}
