/* The merged verdict (merge_model.h): one answer for the whole job, that follows the chain across machines.
 *
 * In order of what it rests on:
 * 1. a rank hung by itself (its host's report names the root cause): the culprit is such a rank, preferring one
 *    whose stack is not the most common one (the rank the others wait for is the one that is not where they are),
 *    then one of an outlier class, then the smaller class, then the better ranked root cause (the registry's rank),
 *    then the lower rank. The chain: the most common class's wait, the culprit that never joined it, its main
 *    thread's wait, its root cause.
 * 2. the ranks in different collectives (merge_calls.c), none hung by itself for another cause: the odd call's
 *    lowest rank is the culprit; hung once every rank has waited its report's --stuck-after, a suspect before.
 * 3. a report hung in a process that is no rank's (a launcher, a sidecar, a job without rank variables).
 * 4. ranks that WORLD_SIZE names and no report shows: often the answer, but hangdoc cannot tell why from here.
 * 5. an outlier class none of whose ranks is hung by itself: a suspect, not a verdict.
 * 6. every rank alike, none hung by itself: no culprit; what to enable next to see further (the NCCL flight
 *    recorder), since the collective waits for something no report shows.
 * Only 1 to 3 are "hung" (exit 1 or 2); 4 to 6, and 2 before its threshold, are "could not tell" (exit 0).
 */
#include "merge_model.h"

#include <stdlib.h>
#include <string.h>

#define RANKS_SHOWN 8 /* ranges of a rank set in a verdict line */

static bool steal_into(char ***lines, size_t *count, struct report_buffer *text)
{
    char **grown = text->failed ? NULL : realloc(*lines, (*count + 1) * sizeof *grown);
    if (!grown) {
        report_buffer_release(text);
        return false;
    }
    *lines = grown;
    (*lines)[(*count)++] = text->data ? text->data : strdup("");
    *text = (struct report_buffer){ 0 };
    return (*lines)[*count - 1] != NULL;
}

static bool add_step(struct report_merge_verdict *verdict, enum report_merge_step_kind kind,
                     struct report_buffer *text, const struct report_rank_set *ranks)
{
    struct report_merge_step *grown = text->failed ? NULL
                                                   : realloc(verdict->steps, (verdict->nsteps + 1) * sizeof *grown);
    if (!grown) {
        report_buffer_release(text);
        return false;
    }
    verdict->steps = grown;
    struct report_merge_step *step = &verdict->steps[verdict->nsteps++];
    *step = (struct report_merge_step){ .kind = kind, .text = text->data ? text->data : strdup("") };
    *text = (struct report_buffer){ 0 };
    for (size_t r = 0; ranks && step->text && r < ranks->count; r++)
        if (!report_rank_set_add(&step->ranks, ranks->ranks[r]))
            return false;
    return step->text != NULL;
}

void report_merge_describe_wait(const struct report_merge_observation *observation, bool plural,
                                struct report_buffer *out)
{
    if (observation->wait) {
        report_buffer_printf(out, "%s %s", plural ? "wait" : "waits", observation->wait->what);
        return;
    }
    report_buffer_printf(out, "%s in %s", plural ? "are" : "is",
                         observation->nstack ? observation->stack[observation->nstack - 1] : "?");
}

static const char *collective_of(const struct report_merge_observation *observation)
{
    return observation->wait ? observation->wait->collective : NULL;
}

/* The preference of a root cause: the registry's rank of its finding (1 first), then the causes without one. */
static unsigned cause_rank(const struct report_merge_local_verdict *verdict)
{
    enum report_finding_id id;
    if (verdict->root_cause && report_finding_id_parse(verdict->root_cause, &id) && report_rule_rank(id) > 0)
        return report_rule_rank(id);
    return 1000 + (unsigned)verdict->cause;
}

static const struct report_merge_observation *latest_of(const struct report_merge *merge,
                                                        const struct report_merge_job *job, size_t rank_index)
{
    return &merge->observations[job->ranks[rank_index].latest];
}

/* The rank the job's verdict is about when one is hung by itself: index into job->ranks, or NONE. */
static size_t choose_culprit(const struct report_merge *merge, const struct report_merge_job *job)
{
    size_t best = REPORT_MERGE_NONE;
    for (size_t r = 0; r < job->nranks; r++) {
        const struct report_merge_observation *candidate = latest_of(merge, job, r);
        if (report_merge_hung_by_itself(&candidate->verdict) != REPORT_HUNG_YES)
            continue;
        if (best == REPORT_MERGE_NONE) {
            best = r;
            continue;
        }
        const struct report_merge_class *x = &job->classes[job->ranks[r].class_id];
        const struct report_merge_class *y = &job->classes[job->ranks[best].class_id];
        size_t common_leaf = job->classes[job->most_common].leaf;
        bool x_apart = x->leaf != common_leaf, y_apart = y->leaf != common_leaf;
        unsigned x_rank = cause_rank(&candidate->verdict), y_rank = cause_rank(&latest_of(merge, job, best)->verdict);
        if (x_apart != y_apart ? x_apart
            : x->outlier != y->outlier ? x->outlier
            : x->ranks.count != y->ranks.count ? x->ranks.count < y->ranks.count
                                               : x_rank < y_rank)
            best = r; /* ranks ascend, so among equals the lower rank stays */
    }
    return best;
}

/* "63 ranks wait in all_reduce", about the most common class. */
static bool step_waiting(const struct report_merge *merge, const struct report_merge_job *job,
                         struct report_merge_verdict *verdict, bool all)
{
    const struct report_merge_class *common = &job->classes[job->most_common];
    struct report_buffer text = { 0 };
    if (common->ranks.count == 1)
        report_buffer_printf(&text, "rank %d ", common->ranks.ranks[0]);
    else
        report_buffer_printf(&text, "%s%zu ranks ", all ? "all " : "", common->ranks.count);
    report_merge_describe_wait(latest_of(merge, job, common->representative), common->ranks.count > 1, &text);
    return add_step(verdict, REPORT_MERGE_STEP_WAITING, &text, &common->ranks);
}

/* The first frame where `observation`'s stack leaves `common`'s: the branch of the tree it takes; NULL when it is
 * the same stack. */
static const char *leaves_at(const struct report_merge_observation *observation,
                             const struct report_merge_observation *common)
{
    for (size_t f = 0; f < observation->nstack; f++)
        if (f >= common->nstack || strcmp(observation->stack[f], common->stack[f]) != 0)
            return observation->stack[f];
    return NULL;
}

/* How the culprit's class stands to the most common one: never joined its collective, waits in another one, or
 * took another branch of the tree. */
static bool step_relation(const struct report_merge *merge, const struct report_merge_job *job,
                          struct report_merge_verdict *verdict, size_t culprit)
{
    const struct report_merge_class *class = &job->classes[job->ranks[culprit].class_id];
    const struct report_merge_observation *common_rank =
        latest_of(merge, job, job->classes[job->most_common].representative);
    const char *common = collective_of(common_rank);
    const char *own = collective_of(latest_of(merge, job, culprit));
    const char *branch = leaves_at(latest_of(merge, job, culprit), common_rank);
    struct report_buffer text = { 0 };
    enum report_merge_step_kind kind = REPORT_MERGE_STEP_DIFFERS;
    report_rank_set_describe(&class->ranks, &text, RANKS_SHOWN);
    if (common && !own) {
        report_buffer_printf(&text, " never joined the %s", common);
        kind = REPORT_MERGE_STEP_NEVER_JOINED;
    } else if (common && strcmp(own, common) != 0) {
        report_buffer_printf(&text, " %s in %s instead", class->ranks.count > 1 ? "wait" : "waits", own);
    } else {
        report_buffer_printf(&text, " took another branch, at %s", branch ? branch : "?");
    }
    return add_step(verdict, kind, &text, &class->ranks);
}

static bool step_main_thread(const struct report_merge *merge, const struct report_merge_job *job,
                             struct report_merge_verdict *verdict, size_t culprit, const char *after)
{
    const struct report_merge_class *class = &job->classes[job->ranks[culprit].class_id];
    struct report_buffer text = { 0 };
    if (class->ranks.count > 1 || verdict->nsteps == 0)
        report_buffer_printf(&text, "rank %d's main thread ", job->ranks[culprit].rank);
    else
        report_buffer_puts(&text, "its main thread ");
    report_merge_describe_wait(latest_of(merge, job, culprit), false, &text);
    if (after)
        report_buffer_puts(&text, after);
    struct report_rank_set one = { .ranks = &job->ranks[culprit].rank, .count = 1 };
    return add_step(verdict, REPORT_MERGE_STEP_MAIN_THREAD, &text, &one);
}

/* "worker 4711 waits for a mutex its parent held at fork": the finding's phrase, said of its subject. */
static bool step_root_cause(struct report_merge_verdict *verdict, const struct report_merge_local_verdict *local,
                            enum report_merge_step_kind kind, const char *subject_prefix, int rank)
{
    struct report_buffer subject = { 0 }, text = { 0 };
    if (subject_prefix)
        report_buffer_puts(&subject, subject_prefix);
    else if (local->subject == REPORT_MERGE_SUBJECT_WORKER)
        report_buffer_printf(&subject, "worker %d", (int)local->pid);
    else if (local->subject == REPORT_MERGE_SUBJECT_RANK)
        report_buffer_printf(&subject, "its thread %d", (int)local->tid);
    else
        report_buffer_printf(&subject, "process %d", (int)local->pid);
    const char *phrase = report_merge_finding_phrase(local->root_cause);
    const char *who = subject.data ? subject.data : "?";
    if (phrase)
        report_buffer_printf(&text, "%s %s", who, phrase);
    else if (local->root_cause)
        report_buffer_printf(&text, "%s: %s", who, local->root_cause);
    else
        report_buffer_printf(&text, "%s is asleep forever", who);
    report_buffer_release(&subject);
    struct report_rank_set one = { .ranks = &rank, .count = rank >= 0 };
    return add_step(verdict, kind, &text, &one);
}

static bool step_missing(const struct report_merge_job *job, struct report_merge_verdict *verdict)
{
    struct report_buffer text = { 0 };
    report_rank_set_describe(&job->missing, &text, RANKS_SHOWN);
    report_buffer_printf(&text, " of WORLD_SIZE %d never reported: no report shows %s", job->world_size,
                         job->missing.count > 1 ? "their processes" : "its process");
    return add_step(verdict, REPORT_MERGE_STEP_MISSING, &text, &job->missing);
}

static bool add_line(char ***lines, size_t *count, const char *line)
{
    struct report_buffer text = { 0 };
    report_buffer_puts(&text, line);
    return steal_into(lines, count, &text);
}

/* Facts beside the chain: other ranks hung by themselves, missing ranks the chain does not name. */
static bool add_also(const struct report_merge *merge, const struct report_merge_job *job,
                     struct report_merge_verdict *verdict, size_t culprit_class)
{
    struct report_rank_set others = { 0 };
    bool ok = true;
    for (size_t r = 0; ok && r < job->nranks; r++)
        if (report_merge_hung_by_itself(&latest_of(merge, job, r)->verdict) == REPORT_HUNG_YES &&
            job->ranks[r].class_id != culprit_class)
            ok = report_rank_set_add(&others, job->ranks[r].rank);
    struct report_buffer text = { 0 };
    if (ok && others.count) {
        report_rank_set_describe(&others, &text, RANKS_SHOWN);
        report_buffer_printf(&text, " %s hung by %s too (see %s class)", others.count > 1 ? "are" : "is",
                             others.count > 1 ? "themselves" : "itself", others.count > 1 ? "their" : "its");
        ok = steal_into(&verdict->also, &verdict->nalso, &text);
    }
    report_rank_set_release(&others);
    struct report_rank_set differing = { 0 };
    for (size_t c = 0; ok && verdict->kind == REPORT_MERGE_MISSING_RANKS && c < job->nclasses; c++)
        for (size_t r = 0; ok && job->classes[c].outlier && r < job->classes[c].ranks.count; r++)
            ok = report_rank_set_add(&differing, job->classes[c].ranks.ranks[r]);
    if (ok && differing.count) {
        report_rank_set_describe(&differing, &text, RANKS_SHOWN);
        report_buffer_printf(&text, " %s from the others (see the classes)",
                             differing.count > 1 ? "differ" : "differs");
        ok = steal_into(&verdict->also, &verdict->nalso, &text);
    }
    report_rank_set_release(&differing);
    if (ok && job->missing.count && verdict->kind != REPORT_MERGE_MISSING_RANKS) {
        report_rank_set_describe(&job->missing, &text, RANKS_SHOWN);
        report_buffer_printf(&text, " of WORLD_SIZE %d never reported", job->world_size);
        ok = steal_into(&verdict->also, &verdict->nalso, &text);
    }
    return ok;
}

static const char flight_recorder[] =
    "enable the NCCL flight recorder for the next run: TORCH_NCCL_TRACE_BUFFER_SIZE=2000 and "
    "TORCH_NCCL_DUMP_ON_TIMEOUT=1 make every rank dump the collectives it entered, by sequence number, when the "
    "watchdog times out, so the rank that is behind shows (NCCL_DEBUG=INFO adds NCCL's own log)";
static const char over_time[] =
    "take the reports again in a minute and merge them all together: stacks that did not move are stuck, "
    "ones that moved are only slow";

static bool decide_rank_hung(const struct report_merge *merge, const struct report_merge_job *job,
                             struct report_merge_verdict *verdict, size_t culprit)
{
    const struct report_merge_observation *observation = latest_of(merge, job, culprit);
    size_t class_id = job->ranks[culprit].class_id;
    *verdict = (struct report_merge_verdict){ .hung = REPORT_HUNG_YES, .cause = observation->verdict.cause,
                                              .kind = REPORT_MERGE_RANK_HUNG, .culprit = job->ranks[culprit].latest,
                                              .document = observation->document };
    bool ok = true;
    if (class_id != job->most_common)
        ok = step_waiting(merge, job, verdict, false) && step_relation(merge, job, verdict, culprit);
    ok = ok && step_main_thread(merge, job, verdict, culprit, NULL) &&
         step_root_cause(verdict, &observation->verdict, REPORT_MERGE_STEP_ROOT_CAUSE, NULL, observation->rank) &&
         add_also(merge, job, verdict, class_id);
    if (ok) {
        struct report_buffer text = { 0 };
        const struct report_merge_document *document = &merge->documents[observation->document];
        report_buffer_printf(&text, "the evidence is in the report of %s, %s", document->host, document->source);
        ok = steal_into(&verdict->next, &verdict->nnext, &text);
    }
    return ok;
}

/* What the suspect's reports over time say: a stack that moved runs (slowly, or in a loop); one that stayed did not
 * (STAT's view over time). With one report, how to find out. */
static bool say_over_time(struct report_merge_verdict *verdict, const struct report_merge_rank *suspect)
{
    if (suspect->unchanged < 0)
        return add_line(&verdict->next, &verdict->nnext, over_time);
    struct report_buffer text = { 0 };
    if (suspect->unchanged == 0)
        report_buffer_printf(&text, "rank %d's stack moved between its %zu reports: it runs, slowly or in a loop, "
                                    "while the others wait", suspect->rank, suspect->reports);
    else
        report_buffer_printf(&text, "rank %d's stack is the same in its %zu reports", suspect->rank,
                             suspect->reports);
    return steal_into(&verdict->also, &verdict->nalso, &text);
}

/* The lowest rank of the smallest outlier class whose stack is not the most common one's, else of the smallest
 * outlier class (the same stack, another local verdict); NONE when there is no outlier. */
static size_t choose_suspect(const struct report_merge_job *job)
{
    size_t same_stack = REPORT_MERGE_NONE;
    for (size_t c = 0; c < job->nclasses; c++) {
        const struct report_merge_class *class = &job->classes[c];
        if (!class->outlier)
            continue;
        if (class->leaf != job->classes[job->most_common].leaf)
            return class->representative;
        if (same_stack == REPORT_MERGE_NONE)
            same_stack = class->representative;
    }
    return same_stack;
}

/* Without a rank hung by itself: missing ranks, else an outlier class, else every rank alike. */
static bool decide_unproven(const struct report_merge *merge, const struct report_merge_job *job,
                            struct report_merge_verdict *verdict)
{
    const struct report_merge_observation *common =
        latest_of(merge, job, job->classes[job->most_common].representative);
    *verdict = (struct report_merge_verdict){ .hung = REPORT_HUNG_UNKNOWN, .cause = REPORT_CAUSE_UNKNOWN,
                                              .culprit = REPORT_MERGE_NONE, .document = REPORT_MERGE_NONE };
    bool ok = step_waiting(merge, job, verdict, job->nclasses == 1);
    size_t suspect = choose_suspect(job);
    if (job->missing.count) {
        verdict->kind = REPORT_MERGE_MISSING_RANKS;
        ok = ok && step_missing(job, verdict) &&
             add_line(&verdict->next, &verdict->nnext, "find out what became of the missing ranks: their hosts' "
                      "reports may be missing from this merge, or their processes died or never started (the "
                      "launcher's log; dmesg for the OOM killer)");
    } else if (suspect != REPORT_MERGE_NONE) {
        verdict->kind = REPORT_MERGE_OUTLIER;
        verdict->culprit = job->ranks[suspect].latest;
        verdict->document = merge->observations[verdict->culprit].document;
        ok = ok && step_relation(merge, job, verdict, suspect) &&
             step_main_thread(merge, job, verdict, suspect, ", and its host's report finds no hang there") &&
             say_over_time(verdict, &job->ranks[suspect]);
    } else {
        verdict->kind = REPORT_MERGE_UNIFORM;
        bool any_unknown = false;
        for (size_t r = 0; r < job->nranks; r++)
            any_unknown |= latest_of(merge, job, r)->verdict.hung == REPORT_HUNG_UNKNOWN;
        if (!collective_of(common) && !any_unknown) {
            verdict->hung = REPORT_HUNG_NO;
            verdict->cause = REPORT_CAUSE_NONE;
        }
        struct report_buffer text = { 0 };
        report_buffer_puts(&text, "no rank is hung by itself: the ranks wait for something no report shows (the "
                                  "network, a rank of another job, the communicator)");
        ok = ok && (!collective_of(common) || (add_step(verdict, REPORT_MERGE_STEP_NONE_HUNG, &text, NULL) &&
                                               add_line(&verdict->next, &verdict->nnext, flight_recorder)));
        report_buffer_release(&text);
        if (ok && job->nranks && job->ranks[0].unchanged == -1)
            ok = add_line(&verdict->next, &verdict->nnext, over_time);
    }
    return ok && add_also(merge, job, verdict, REPORT_MERGE_NONE);
}

static const char mismatch_next[] =
    "run with TORCH_DISTRIBUTED_DEBUG=DETAIL next time: torch.distributed then checks that the ranks' collectives "
    "match and fails at once with both calls named, instead of waiting for the timeout";

/* The index into job->ranks of rank `rank`; NONE when the table has none. */
static size_t rank_index(const struct report_merge_job *job, int rank)
{
    for (size_t r = 0; r < job->nranks; r++)
        if (job->ranks[r].rank == rank)
            return r;
    return REPORT_MERGE_NONE;
}

/* The ranks wait in different calls (merge_calls.c): "mismatched collectives: ranks 0,2-3 (3) in all_reduce at
 * train.py:41; rank 1 in broadcast at train.py:57". The odd call is the one the fewest ranks are in (the table's
 * last), its lowest rank the culprit. Hung when every rank in a call has waited its report's --stuck-after, else a
 * suspect. */
static bool decide_mismatch(const struct report_merge *merge, const struct report_merge_job *job,
                            struct report_merge_verdict *verdict)
{
    const struct report_merge_call_row *odd = &job->calls[job->ncalls - 1];
    size_t culprit = rank_index(job, odd->ranks.ranks[0]);
    bool waited = true, timed = true;
    for (size_t c = 0; c < job->ncalls; c++) {
        waited = waited && job->calls[c].waited_long;
        timed = timed && job->calls[c].timed;
    }
    const struct report_merge_observation *observation = latest_of(merge, job, culprit);
    *verdict = (struct report_merge_verdict){ .hung = waited ? REPORT_HUNG_YES : REPORT_HUNG_UNKNOWN,
                                              .cause = waited ? REPORT_CAUSE_DEADLOCK : REPORT_CAUSE_UNKNOWN,
                                              .kind = REPORT_MERGE_MISMATCH, .culprit = job->ranks[culprit].latest,
                                              .document = observation->document };
    struct report_buffer text = { 0 };
    report_buffer_puts(&text, "mismatched collectives: ");
    for (size_t c = 0; c < job->ncalls; c++) {
        if (c)
            report_buffer_puts(&text, "; ");
        report_rank_set_describe(&job->calls[c].ranks, &text, RANKS_SHOWN);
        report_buffer_puts(&text, " in ");
        report_merge_describe_call(&job->calls[c], &text);
    }
    if (job->in_no_call.count) {
        report_buffer_puts(&text, "; ");
        report_rank_set_describe(&job->in_no_call, &text, RANKS_SHOWN);
        report_buffer_puts(&text, " in none");
    }
    if (!timed)
        report_buffer_puts(&text, " (how long they have waited there not every report says: a suspect, not a "
                                  "verdict)");
    else if (!waited)
        report_buffer_puts(&text, " (not yet for --stuck-after in every rank: a suspect, not a verdict)");
    bool ok = add_step(verdict, REPORT_MERGE_STEP_MISMATCH, &text, NULL);
    report_rank_set_describe(&odd->ranks, &text, RANKS_SHOWN);
    report_buffer_printf(&text, " %s the odd call: the fewest ranks are in it", odd->ranks.count > 1 ? "make" : "makes");
    ok = ok && add_step(verdict, REPORT_MERGE_STEP_DIFFERS, &text, &odd->ranks) &&
         step_main_thread(merge, job, verdict, culprit, NULL) &&
         add_also(merge, job, verdict, job->ranks[culprit].class_id) && say_over_time(verdict, &job->ranks[culprit]);
    if (ok) {
        const struct report_merge_document *document = &merge->documents[observation->document];
        report_buffer_printf(&text, "rank %d's call site is where its code left the others' path; its report is "
                                    "%s's, %s", job->ranks[culprit].rank, document->host, document->source);
        ok = steal_into(&verdict->next, &verdict->nnext, &text) &&
             add_line(&verdict->next, &verdict->nnext, mismatch_next);
    }
    return ok;
}

/* Is the job's verdict the table of its calls: two calls or more, and no rank hung by itself for another cause
 * than the mismatch its own report saw. */
static bool mismatched(const struct report_merge *merge, const struct report_merge_job *job, size_t culprit)
{
    if (job->ncalls < 2)
        return false;
    const char *root = culprit == REPORT_MERGE_NONE ? NULL : latest_of(merge, job, culprit)->verdict.root_cause;
    return culprit == REPORT_MERGE_NONE ||
           (root && strcmp(root, report_finding_id_name(REPORT_COLLECTIVE_MISMATCH)) == 0);
}

static bool decide_job(const struct report_merge *merge, struct report_merge_job *job)
{
    size_t culprit = choose_culprit(merge, job);
    bool ok = mismatched(merge, job, culprit)    ? decide_mismatch(merge, job, &job->verdict)
              : culprit != REPORT_MERGE_NONE ? decide_rank_hung(merge, job, &job->verdict, culprit)
                                             : decide_unproven(merge, job, &job->verdict);
    job->verdict.job = (size_t)(job - merge->jobs);
    return ok;
}

/* A report hung in a process that is no rank's, the best ranked such hang; NONE when there is none. */
static size_t process_hang(const struct report_merge *merge)
{
    size_t best = REPORT_MERGE_NONE;
    for (size_t d = 0; d < merge->ndocuments; d++) {
        const struct report_merge_document *document = &merge->documents[d];
        if (document->verdict.hung != REPORT_HUNG_YES || document->hang_in_rank)
            continue;
        if (best == REPORT_MERGE_NONE || cause_rank(&document->verdict) < cause_rank(&merge->documents[best].verdict))
            best = d;
    }
    return best;
}

static bool decide_process_hung(const struct report_merge *merge, struct report_merge_verdict *verdict, size_t index)
{
    const struct report_merge_document *document = &merge->documents[index];
    *verdict = (struct report_merge_verdict){ .hung = REPORT_HUNG_YES, .cause = document->verdict.cause,
                                              .kind = REPORT_MERGE_PROCESS_HUNG, .job = REPORT_MERGE_NONE,
                                              .culprit = REPORT_MERGE_NONE, .document = index };
    struct report_buffer subject = { 0 };
    report_buffer_printf(&subject, "process %d '%s' on %s", (int)document->verdict.pid,
                         document->comm ? document->comm : "?", document->host);
    bool ok = !subject.failed && step_root_cause(verdict, &document->verdict, REPORT_MERGE_STEP_PROCESS,
                                                 subject.data, -1);
    report_buffer_release(&subject);
    return ok;
}

static bool decide_no_ranks(const struct report_merge *merge, struct report_merge_verdict *verdict)
{
    *verdict = (struct report_merge_verdict){ .hung = REPORT_HUNG_NO, .cause = REPORT_CAUSE_NONE,
                                              .kind = REPORT_MERGE_NO_RANKS, .job = REPORT_MERGE_NONE,
                                              .culprit = REPORT_MERGE_NONE, .document = REPORT_MERGE_NONE };
    for (size_t d = 0; d < merge->ndocuments; d++)
        if (merge->documents[d].verdict.hung == REPORT_HUNG_UNKNOWN) {
            verdict->hung = REPORT_HUNG_UNKNOWN;
            verdict->cause = REPORT_CAUSE_UNKNOWN;
        }
    struct report_buffer text = { 0 };
    report_buffer_printf(&text, "no process of the %zu report%s names a rank (RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, "
                         "PMI_RANK or SLURM_PROCID in its environment)", merge->ndocuments,
                         merge->ndocuments == 1 ? "" : "s");
    return add_step(verdict, REPORT_MERGE_STEP_NO_RANKS, &text, NULL);
}

bool report_merge_decide(struct report_merge *merge)
{
    const struct report_merge_verdict *best = NULL;
    for (size_t j = 0; j < merge->njobs; j++) {
        struct report_merge_job *job = &merge->jobs[j];
        if (!decide_job(merge, job))
            return false;
        /* the job with the strongest kind of verdict, and among hung ones the better ranked root cause */
        if (!best || job->verdict.kind < best->kind ||
            (job->verdict.kind == best->kind && best->kind == REPORT_MERGE_RANK_HUNG &&
             cause_rank(&merge->observations[job->verdict.culprit].verdict) <
                 cause_rank(&merge->observations[best->culprit].verdict)))
            best = &job->verdict;
    }
    merge->final = best;
    if (best && (best->kind == REPORT_MERGE_RANK_HUNG ||
                 (best->kind == REPORT_MERGE_MISMATCH && best->hung == REPORT_HUNG_YES)))
        return true;
    size_t hung_process = process_hang(merge);
    if (hung_process != REPORT_MERGE_NONE) {
        merge->final = &merge->verdict;
        return decide_process_hung(merge, &merge->verdict, hung_process);
    }
    if (best)
        return true;
    merge->final = &merge->verdict;
    return decide_no_ranks(merge, &merge->verdict);
}

void report_merge_verdict_line(const struct report_merge *merge, const struct report_merge_verdict *verdict,
                               struct report_buffer *out)
{
    static const char *const status[] = {
        [REPORT_HUNG_NO] = "not hung", [REPORT_HUNG_YES] = "HUNG", [REPORT_HUNG_UNKNOWN] = "could not tell",
    };
    report_buffer_puts(out, status[verdict->hung]);
    if (verdict->hung == REPORT_HUNG_YES)
        report_buffer_printf(out, " (%s)", report_cause_name(verdict->cause));
    /* each step is what the one before waits for, except the remark that no rank is hung by itself */
    for (size_t s = 0; s < verdict->nsteps; s++) {
        const char *joint = s == 0 ? ": " : verdict->steps[s].kind == REPORT_MERGE_STEP_NONE_HUNG ? "; " : " ← ";
        report_buffer_printf(out, "%s%s", joint, verdict->steps[s].text);
    }
    const struct report_merge_local_verdict *local =
        verdict->culprit != REPORT_MERGE_NONE && verdict->kind == REPORT_MERGE_RANK_HUNG
            ? &merge->observations[verdict->culprit].verdict
        : verdict->kind == REPORT_MERGE_PROCESS_HUNG ? &merge->documents[verdict->document].verdict
                                                     : NULL;
    if (local && local->root_cause)
        report_buffer_printf(out, " [%s, %s]", local->root_cause, local->confidence ? local->confidence : "?");
    else if (verdict->kind == REPORT_MERGE_MISMATCH && verdict->hung == REPORT_HUNG_YES)
        report_buffer_printf(out, " [%s, likely]", report_finding_id_name(REPORT_COLLECTIVE_MISMATCH));
}
