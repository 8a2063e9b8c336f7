/* The ranks of one distributed job in their collectives (collectives.h), when this snapshot shows the job's ranks:
 *   collective-mismatch      the ranks wait in different collectives (rank 1 calls broadcast where the others call
 *                            all_reduce, or skipped one and waits at the barrier after it): none ever completes;
 *   collective-straggler     every rank of the job is here, the others wait in one collective, and a rank is in
 *                            none: they wait for it, and its own diagnosis is the answer;
 *   rank-exited              the job's ranks all run on this host (LOCAL_WORLD_SIZE is WORLD_SIZE), a rank is gone
 *                            and the others wait in a collective for it.
 * A collective's wait is timed (gloo's and NCCL's process-group timeout, 30 minutes by default), and a slow rank
 * is not a hung one: every rule waits for --stuck-after, the ranks asleep in their call that long without progress,
 * and says when the backend's timeout will end the wait with an error. */
#include "rule.h"

#include "buffer.h"
#include "collectives.h"
#include "python_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANKS_LISTED 8

/* In its collective for the threshold: asleep there without progress, by the kernel's clock of its last run. */
static bool waits_for_the_threshold(const struct report_rule_context *c, const struct report_collective *collective)
{
    if (!collective || c->analysis->stuck_after_s <= 0)
        return false;
    const struct report_node *node = &c->analysis->graph.nodes[collective->node];
    const struct hd_thread *thread = node->thread;
    return thread->state != 'R' && !node->history.progressing && thread->blocked_for_known &&
           thread->blocked_for_s >= c->analysis->stuck_after_s;
}

static char *steal_text(struct report_buffer *text)
{
    char *data = text->failed ? NULL : text->data;
    if (!data)
        report_buffer_release(text);
    *text = (struct report_buffer){ 0 };
    return data;
}

/* Every rank in a collective waits in it for the threshold, and at least one is in one. */
static bool ranks_wait_long(const struct report_rule_context *c, const struct report_job_ranks *job)
{
    size_t in = 0;
    for (size_t r = 0; r < job->count; r++) {
        const struct report_collective *collective = job->ranks[r].collective;
        if (collective && !waits_for_the_threshold(c, collective))
            return false;
        in += collective != NULL;
    }
    return in > 0;
}

/* One line per rank: its collective, its call, how long, and the backend's wait with its timeout. */
static void rank_evidence(struct report_rule_context *c, struct report_finding *finding, const struct report_job_rank *rank)
{
    const struct report_collective *collective = rank->collective;
    const struct hd_process *process = rank->process;
    if (!collective) {
        const struct hd_thread *thread =
            rank->main_node == REPORT_NO_NODE ? NULL : c->analysis->graph.nodes[rank->main_node].thread;
        const struct hd_python_frame *line = report_python_place(thread); /* past threading's and queue's frames */
        if (line)
            rule_evidence(c, finding, "rank", "rank %d (process %d): in no collective; its main thread is in %s (%s:%d)",
                          process->job->rank, (int)process->pid, line->function, line->file, line->line);
        else
            rule_evidence(c, finding, "rank", "rank %d (process %d): in no collective", process->job->rank,
                          (int)process->pid);
        return;
    }
    const struct hd_thread *thread = c->analysis->graph.nodes[collective->node].thread;
    struct report_buffer text = { 0 };
    report_buffer_printf(&text, "rank %d (process %d, thread %d): in %s", process->job->rank, (int)process->pid,
                         (int)thread->tid, collective->name);
    if (collective->site_file)
        report_buffer_printf(&text, " called at %s:%d in %s", collective->site_file, collective->site_line,
                             collective->site_function ? collective->site_function : "?");
    if (collective->file)
        report_buffer_printf(&text, " (%s, %s:%d)", collective->function, collective->file, collective->line);
    else if (collective->function)
        report_buffer_printf(&text, " (%s)", collective->function);
    report_buffer_printf(&text, ", asleep %.1f s", thread->blocked_for_s);
    if (collective->backend) {
        const struct hd_thread *backend = c->analysis->graph.nodes[collective->backend_node].thread;
        report_buffer_printf(&text, "; %s's thread %d waits to %s", collective->backend, (int)backend->tid,
                             collective->backend_wait);
        if (collective->backend_timeout_known)
            report_buffer_printf(&text, ", its timeout fires in %.0f s", collective->backend_timeout_s);
    }
    char *value = steal_text(&text);
    rule_evidence(c, finding, "rank", "%s", value ? value : "?");
    free(value);
}

/* When the first backend timeout of the ranks fires, said once: the wait is timed, not forever. */
static void timeout_evidence(struct report_rule_context *c, struct report_finding *finding, const struct report_job_ranks *job)
{
    const struct report_collective *first = NULL;
    for (size_t r = 0; r < job->count; r++) {
        const struct report_collective *collective = job->ranks[r].collective;
        if (collective && collective->backend_timeout_known &&
            (!first || collective->backend_timeout_s < first->backend_timeout_s))
            first = collective;
    }
    if (first)
        rule_evidence(c, finding, "timeout",
                      "%s's timeout fires in %.0f s (%.1f min), first in rank %d: the process group's timeout, after "
                      "which the collective fails with an error on the ranks that wait; until then they hang",
                      first->backend, first->backend_timeout_s, first->backend_timeout_s / 60,
                      first->process->job->rank);
    else
        rule_evidence(c, finding, "timeout",
                      "no backend wait with a timeout was seen: the process group's timeout (30 min by default for "
                      "gloo and NCCL) may end the wait with an error, or nothing will");
}

static void job_evidence(struct report_rule_context *c, struct report_finding *finding, const struct report_job_ranks *job)
{
    const struct hd_job *first = job->job;
    rule_evidence(c, finding, "job", "%zu of %d ranks here (%s)%s%s", job->count, first->world_size,
                  first->rank_variable ? first->rank_variable : "?", first->master ? ", master " : "",
                  first->master ? first->master : "");
    for (size_t r = 0; r < job->count && r < RANKS_LISTED * 2; r++)
        rank_evidence(c, finding, &job->ranks[r]);
    timeout_evidence(c, finding, job);
}

static void add_members(struct report_rule_context *c, struct report_finding *finding, const struct report_job_ranks *job)
{
    for (size_t r = 0; r < job->count; r++)
        if (job->ranks[r].collective)
            rule_member(c, finding, job->ranks[r].collective->node);
}

/* The call the fewest ranks are in (the outlier), the lower rank's among equals... unless that is rank 0's: with
 * two calls of one rank each, the rank that is not the job's first is taken for the one that went astray. */
static const struct report_job_rank *outlier_of(const struct report_job_ranks *job)
{
    const struct report_job_rank *best = NULL;
    size_t best_count = 0;
    for (size_t r = 0; r < job->count; r++) {
        const struct report_collective *own = job->ranks[r].collective;
        if (!own)
            continue;
        size_t count = 0;
        for (size_t o = 0; o < job->count; o++)
            count += job->ranks[o].collective && report_same_call(job->ranks[o].collective, own);
        bool holds_first = job->ranks[0].collective && report_same_call(job->ranks[0].collective, own);
        bool best_holds_first = best && job->ranks[0].collective && report_same_call(job->ranks[0].collective, best->collective);
        if (!best || count < best_count || (count == best_count && best_holds_first && !holds_first)) {
            best = &job->ranks[r];
            best_count = count;
        }
    }
    return best;
}

/* "ranks 0,2 in all_reduce at train.py:41; rank 1 in broadcast at train.py:57", every call once. */
static void describe_calls(const struct report_job_ranks *job, struct report_buffer *out)
{
    for (size_t r = 0; r < job->count; r++) {
        const struct report_collective *own = job->ranks[r].collective;
        bool seen = false;
        for (size_t e = 0; e < r && !seen; e++)
            seen = job->ranks[e].collective && own && report_same_call(job->ranks[e].collective, own);
        if (!own || seen)
            continue;
        if (out->length)
            report_buffer_puts(out, "; ");
        report_describe_ranks_in(job, own, out, RANKS_LISTED, NULL);
        report_buffer_puts(out, " in ");
        report_describe_collective(own, out);
    }
}

static const char remedy_mismatch[] =
    "Every rank must call the same collectives in the same order: look at the outlier's call site (a branch on "
    "the rank, an early exit from a loop, a skipped step after an exception or on uneven data). "
    "TORCH_DISTRIBUTED_DEBUG=DETAIL makes torch.distributed check that the ranks' collectives match (gloo and "
    "NCCL) and fail with both calls named instead of hanging; a shorter timeout in init_process_group() ends the "
    "wait sooner.";

void report_rule_collective_mismatch(struct report_rule_context *c)
{
    for (size_t j = 0; j < c->analysis->njobs; j++) {
        const struct report_job_ranks *job = &c->analysis->jobs[j];
        const struct report_job_rank *outlier = outlier_of(job);
        if (job->count < 2 || !outlier || !ranks_wait_long(c, job))
            continue;
        bool differ = false;
        for (size_t r = 0; r < job->count && !differ; r++)
            differ = job->ranks[r].collective && !report_same_call(job->ranks[r].collective, outlier->collective);
        if (!differ)
            continue;
        struct report_buffer calls = { 0 };
        describe_calls(job, &calls);
        char *words = steal_text(&calls);
        struct report_finding *finding = rule_finding(
            c, REPORT_COLLECTIVE_MISMATCH, REPORT_LIKELY, &c->analysis->graph.nodes[outlier->collective->node],
            "mismatched collectives: %s; the ranks of one job wait in different collectives, which never match, "
            "for %.0f s or more: rank %d's call is the odd one",
            words ? words : "?", c->analysis->stuck_after_s, outlier->process->job->rank);
        free(words);
        add_members(c, finding, job);
        job_evidence(c, finding, job);
        rule_remedy(c, finding, remedy_mismatch);
    }
}

void report_rule_collective_straggler(struct report_rule_context *c)
{
    for (size_t j = 0; j < c->analysis->njobs; j++) {
        const struct report_job_ranks *job = &c->analysis->jobs[j];
        const struct report_job_rank *waiting = NULL, *straggler = NULL;
        bool one_call = true;
        for (size_t r = 0; r < job->count; r++) {
            const struct report_job_rank *rank = &job->ranks[r];
            if (!rank->collective && !straggler)
                straggler = rank;
            else if (rank->collective && !waiting)
                waiting = rank;
            else if (rank->collective)
                one_call = one_call && report_same_call(rank->collective, waiting->collective);
        }
        /* every rank of the job must be here: a rank elsewhere may be the one the others wait for */
        if (!waiting || !straggler || !one_call || (int)job->count != job->job->world_size ||
            straggler->main_node == REPORT_NO_NODE || !ranks_wait_long(c, job))
            continue;
        struct report_buffer text = { 0 };
        size_t nwaiting, nstragglers;
        report_describe_ranks_in(job, waiting->collective, &text, RANKS_LISTED, &nwaiting);
        report_buffer_printf(&text, " %s in ", nwaiting == 1 ? "waits" : "wait");
        report_describe_collective(waiting->collective, &text);
        report_buffer_puts(&text, " for ");
        report_describe_ranks_in(job, NULL, &text, RANKS_LISTED, &nstragglers);
        char *words = steal_text(&text);
        struct report_finding *finding = rule_finding(
            c, REPORT_COLLECTIVE_STRAGGLER, REPORT_LIKELY, &c->analysis->graph.nodes[straggler->main_node],
            "%s, %s in no collective, for %.0f s or more: the job waits for %s, and %s own diagnosis is the answer",
            words ? words : "?", nstragglers == 1 ? "which is" : "which are", c->analysis->stuck_after_s,
            nstragglers == 1 ? "it" : "them", nstragglers == 1 ? "its" : "their");
        free(words);
        add_members(c, finding, job);
        job_evidence(c, finding, job);
        rule_remedy(c, finding, "Look at the rank that is in no collective: what holds it (its data loading, a "
                                "DataLoader worker, a lock, a file system) is the hang; the others only wait for "
                                "it. Its own findings, below, say what.");
    }
}

/* The ranks' launcher: the parent of every rank of `job`, or 0. */
static pid_t common_parent(const struct report_job_ranks *job)
{
    pid_t parent = job->count ? job->ranks[0].process->ppid : 0;
    for (size_t r = 1; r < job->count; r++)
        if (job->ranks[r].process->ppid != parent)
            return 0;
    return parent;
}

void report_rule_rank_exited(struct report_rule_context *c)
{
    for (size_t j = 0; j < c->analysis->njobs; j++) {
        const struct report_job_ranks *job = &c->analysis->jobs[j];
        const struct hd_job *first = job->job;
        /* only where the job says every rank runs on this host, and the snapshot holds the ranks' launcher (a
         * diagnosis of one rank's pid sees no other rank, and says nothing of them): a rank elsewhere, or outside
         * the tree diagnosed, is not missing */
        pid_t launcher = common_parent(job);
        if (first->world_size <= 0 || first->local_world_size != first->world_size ||
            (int)job->count >= first->world_size || launcher <= 0 ||
            !hd_snapshot_find_process(c->snapshot, launcher) || !ranks_wait_long(c, job))
            continue;
        const struct report_job_rank *waiting = NULL;
        for (size_t r = 0; r < job->count && !waiting; r++)
            if (job->ranks[r].collective)
                waiting = &job->ranks[r];
        struct report_buffer missing = { 0 };
        size_t nmissing = 0;
        /* bounded by what is said, not by WORLD_SIZE, which the target's environment sets */
        for (int rank = 0, r = 0; rank < first->world_size && nmissing <= RANKS_LISTED; rank++) {
            while ((size_t)r < job->count && job->ranks[r].process->job->rank < rank)
                r++;
            if ((size_t)r < job->count && job->ranks[r].process->job->rank == rank)
                continue;
            if (nmissing < RANKS_LISTED)
                report_buffer_printf(&missing, "%s%d", nmissing ? "," : "", rank);
            else if (nmissing == RANKS_LISTED)
                report_buffer_puts(&missing, ",…");
            nmissing++;
        }
        char *gone = steal_text(&missing);
        /* the rank's own process, when it has not been reaped: a zombie child of the ranks' launcher */
        const struct hd_process *zombie = NULL;
        for (size_t p = 0; launcher > 0 && p < c->snapshot->nprocesses && !zombie; p++)
            if (c->snapshot->processes[p].zombie && c->snapshot->processes[p].ppid == launcher)
                zombie = &c->snapshot->processes[p];
        struct report_buffer text = { 0 };
        size_t nwaiting;
        report_describe_ranks_in(job, waiting->collective, &text, RANKS_LISTED, &nwaiting);
        report_buffer_puts(&text, nwaiting == 1 ? " waits in " : " wait in ");
        report_describe_collective(waiting->collective, &text);
        char *words = steal_text(&text);
        /* the subject: the rank's zombie, else the first rank that waits for it */
        const struct hd_thread *subject = c->analysis->graph.nodes[waiting->collective->node].thread;
        pid_t pid = zombie ? zombie->pid : waiting->process->pid, tid = zombie ? zombie->pid : subject->tid;
        struct report_finding *finding = rule_finding_for(
            c, REPORT_RANK_EXITED, REPORT_LIKELY, pid, tid,
            "%s %s of %d %s gone from this host, where every rank of the job runs (LOCAL_WORLD_SIZE=%d), and %s for "
            "%.0f s or more: the rank exited and they wait for it",
            nmissing == 1 ? "rank" : "ranks", gone ? gone : "?", first->world_size, nmissing == 1 ? "is" : "are",
            first->local_world_size, words ? words : "?", c->analysis->stuck_after_s);
        free(words);
        if (zombie) {
            char how[96];
            rule_describe_exit(zombie->exit_status, how, sizeof how);
            rule_evidence(c, finding, "exited",
                          "process %d, a child of the ranks' launcher %d, %s and was not reaped: likely rank %s",
                          (int)zombie->pid, (int)launcher, how, gone ? gone : "?");
        }
        free(gone);
        add_members(c, finding, job);
        job_evidence(c, finding, job);
        rule_remedy(c, finding, "Find out why the rank exited (its log, its exit status, the kernel's OOM killer in "
                                "dmesg). A launcher that ends the job when a rank exits (torchrun, srun "
                                "--kill-on-bad-exit) keeps the others from waiting until the timeout; with gloo a "
                                "rank's sockets still open in a process it forked keep its peers from being told.");
    }
}
