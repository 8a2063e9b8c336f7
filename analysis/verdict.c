/* The verdict (analysis.h): one hang per distinct root cause, in the registry's order of preference, each with
 * the chain of processes down to it; threads asleep forever that no rule explains are a hang of their own.
 */
#include "verdict.h"

#include "registry.h"

#include <stdlib.h>
#include <string.h>

struct verdict_context {
    const struct hd_snapshot *snapshot;
    struct report_analysis *analysis;
    bool failed;
};

static bool is_root(pid_t pid, const struct hd_snapshot *snapshot)
{
    for (size_t r = 0; r < snapshot->nroots; r++)
        if (snapshot->roots[r] == pid)
            return true;
    return false;
}

/* From the top process (a root of the snapshot) down to the subject's, at most 64 deep. */
static pid_t *chain_to(struct verdict_context *c, const struct hd_process *process, pid_t subject_pid, size_t *length)
{
    pid_t reversed[65];
    size_t count = 0;
    if (!process) /* a worker that vanished: the chain ends in it, below its parent */
        reversed[count++] = subject_pid;
    const struct hd_process *p = process;
    for (size_t d = 0; !p && d < c->snapshot->ndeparted; d++)
        if (c->snapshot->departed[d].pid == subject_pid)
            p = hd_snapshot_find_process(c->snapshot, c->snapshot->departed[d].ppid);
    for (; p && count < 64; p = hd_snapshot_find_process(c->snapshot, p->ppid)) {
        reversed[count++] = p->pid;
        if (is_root(p->pid, c->snapshot))
            break;
    }
    pid_t *chain = calloc(count ? count : 1, sizeof *chain);
    if (!chain) {
        c->failed = true;
        *length = 0;
        return NULL;
    }
    for (size_t i = 0; i < count; i++)
        chain[i] = reversed[count - 1 - i];
    *length = count;
    return chain;
}

/* The parent of a worker-died finding's worker, a zombie in the tree or one that vanished; 0 when unknown. */
static pid_t worker_parent(const struct hd_snapshot *snapshot, pid_t worker)
{
    const struct hd_process *process = hd_snapshot_find_process(snapshot, worker);
    if (process)
        return process->ppid;
    for (size_t d = 0; d < snapshot->ndeparted; d++)
        if (snapshot->departed[d].pid == worker)
            return snapshot->departed[d].ppid;
    return 0;
}

/* The same process, or processes forked from the same parent. */
static bool same_or_siblings(const struct hd_snapshot *snapshot, const struct report_finding *a,
                             const struct report_finding *b)
{
    if (a->pid == b->pid)
        return true;
    const struct hd_process *pa = hd_snapshot_find_process(snapshot, a->pid);
    const struct hd_process *pb = hd_snapshot_find_process(snapshot, b->pid);
    return pa && pb && pa->ppid == pb->ppid;
}

static bool same_object(const struct hd_snapshot *snapshot, const struct report_finding *a,
                        const struct report_finding *b)
{
    return a->has_object && b->has_object && a->object == b->object && a->object_owner == b->object_owner &&
           same_or_siblings(snapshot, a, b);
}

/* Is the subject of `b` one of the threads `a` names as its members? */
static bool subject_is_member(const struct report_graph *graph, const struct report_finding *a,
                              const struct report_finding *b)
{
    size_t node = report_graph_find(graph, b->tid);
    for (size_t m = 0; node != REPORT_NO_NODE && m < a->nmembers; m++)
        if (a->members[m] == node)
            return true;
    return false;
}

/* Are two root-cause findings one hang? By the registry's grouping of their id (registry.h). */
static bool same_hang(const struct verdict_context *c, const struct report_finding *a,
                      const struct report_finding *b)
{
    const struct hd_snapshot *snapshot = c->snapshot;
    const struct report_rule *rule = report_rule(a->kind);
    /* two findings of different kinds are one hang when they are about the same thread (a spin, and the
     * inherited runtime it spins in), or of the same cause in one process, or when one is about a thread the
     * other names as its member (the cycles a stuck pool's threads form, in the pool's replaced-worker) */
    if (a->kind != b->kind)
        return (a->pid == b->pid && (a->tid == b->tid || rule->cause == report_rule(b->kind)->cause)) ||
               subject_is_member(&c->analysis->graph, a, b) || subject_is_member(&c->analysis->graph, b, a);
    switch (rule->grouping) {
    case REPORT_GROUP_BY_PARENT: {
        pid_t parent = worker_parent(snapshot, a->pid);
        return parent != 0 && parent == worker_parent(snapshot, b->pid);
    }
    case REPORT_GROUP_BY_RUNTIME:
        if (a->pid == b->pid || (a->runtime && a->runtime == b->runtime &&
                                 same_or_siblings(snapshot, a, b)))
            return true;
        return same_object(snapshot, a, b);
    case REPORT_GROUP_BY_OBJECT:
        return same_object(snapshot, a, b);
    case REPORT_GROUP_BY_THREAD:
        return a->tid == b->tid;
    case REPORT_GROUP_BY_MEMBERS:
        for (size_t m = 0; m < a->nmembers; m++)
            for (size_t n = 0; n < b->nmembers; n++)
                if (a->members[m] == b->members[n])
                    return true;
        return a->tid == b->tid;
    case REPORT_GROUP_BY_PROCESS:
        break;
    }
    return a->pid == b->pid;
}

static struct report_hang *add_hang(struct verdict_context *c, enum report_cause cause, long finding, bool root,
                                    pid_t pid, pid_t tid)
{
    struct report_verdict *verdict = &c->analysis->verdict;
    struct report_hang *grown = hd_grow(verdict->hangs, &verdict->hangs_capacity, verdict->nhangs, sizeof *grown);
    if (!grown) {
        c->failed = true;
        return NULL;
    }
    verdict->hangs = grown;
    struct report_hang *hang = &verdict->hangs[verdict->nhangs++];
    *hang = (struct report_hang){ .cause = cause, .finding = finding, .root_cause = root, .pid = pid, .tid = tid };
    return hang;
}

static void hang_member(struct verdict_context *c, struct report_hang *hang, size_t finding)
{
    size_t *grown = hang ? hd_grow(hang->findings, &hang->findings_capacity, hang->nfindings, sizeof *grown) : NULL;
    if (!grown) {
        c->failed = true;
        return;
    }
    hang->findings = grown;
    hang->findings[hang->nfindings++] = finding;
}

/* One hang per distinct root cause, in the registry's order of preference. A finding joins the first hang one of
 * whose findings it is the same hang as. */
static void collect_root_causes(struct verdict_context *c)
{
    struct report_analysis *a = c->analysis;
    size_t nranked;
    const enum report_finding_id *ranked = report_ranked_root_causes(&nranked);
    for (size_t r = 0; r < nranked; r++)
        for (size_t f = 0; f < a->nfindings && !c->failed; f++) {
            const struct report_finding *finding = &a->findings[f];
            if (finding->kind != ranked[r])
                continue;
            struct report_hang *hang = NULL;
            for (size_t h = 0; h < a->verdict.nhangs && !hang; h++)
                for (size_t m = 0; m < a->verdict.hangs[h].nfindings && !hang; m++)
                    if (same_hang(c, &a->findings[a->verdict.hangs[h].findings[m]], finding))
                        hang = &a->verdict.hangs[h];
            if (!hang)
                hang = add_hang(c, report_rule(finding->kind)->cause, (long)f, true, finding->pid, finding->tid);
            hang_member(c, hang, f);
        }
}

static bool knotted(const struct report_node *node)
{
    /* pause(), sigsuspend() and a loop on a self-pipe that SIGTERM's handler writes wait for a signal by design: a
     * daemon's main thread, not a knot */
    return node->wake == REPORT_WAKE_NEVER && !report_waits_for_a_signal_by_design(node);
}

/* A FUSE client (a thread in a FUSE call) that waits only for the threads of daemons a finding explains: the
 * daemon's hang is its hang too (a lock cycle among the daemon's workers leaves every client of the mount waiting). */
static bool fuse_client_of_explained(const struct report_graph *graph, const struct report_node *node,
                                     const bool *explained)
{
    if (!node->thread->fuse.in_call || node->nedges == 0)
        return false;
    for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        size_t process = edge->target == REPORT_TO_PROCESS ? edge->to : graph->nodes[edge->to].process_index;
        if (edge->kind != REPORT_EDGE_FUSE || !explained[process])
            return false;
    }
    return true;
}

/* Threads asleep forever in a process that no finding is about: nobody who could wake them can run, but no rule
 * of the catalogue says why (a lone thread on a semaphore, a condition variable nobody will signal). That is a
 * deadlock in the wait-for graph's sense (DESIGN.md): hung, cause "deadlock", no root-cause finding. A process is
 * explained by a hang finding about it, or by a root-cause finding that names one of its threads as a member (the
 * parent left waiting for a dead worker); waiting-on-workers does not count for its members, the workers it
 * points at, which may hang unexplained. */
static void collect_unexplained_knots(struct verdict_context *c)
{
    struct report_analysis *a = c->analysis;
    bool *explained = calloc(a->graph.nprocesses + 1, sizeof *explained);
    if (!explained) {
        c->failed = true;
        return;
    }
    for (size_t f = 0; f < a->nfindings; f++) {
        const struct report_finding *finding = &a->findings[f];
        if (!finding->hang)
            continue;
        const struct hd_process *subject = hd_snapshot_find_process(c->snapshot, finding->pid);
        const struct report_graph_process *process = subject ? report_graph_process_of(&a->graph, subject) : NULL;
        if (process)
            explained[process - a->graph.processes] = true;
        for (size_t m = 0; report_rule_rank(finding->kind) && m < finding->nmembers; m++)
            explained[a->graph.nodes[finding->members[m]].process_index] = true;
    }
    for (size_t i = 0; i < a->graph.nnodes && !c->failed; i++) {
        const struct report_node *node = &a->graph.nodes[i];
        if (!knotted(node) || explained[node->process_index] || fuse_client_of_explained(&a->graph, node, explained))
            continue;
        explained[node->process_index] = true;
        add_hang(c, REPORT_CAUSE_DEADLOCK, -1, false, node->process->pid, node->thread->tid);
    }
    free(explained);
}

/* Threads asleep (not running, not in D) whose system call could not be read: their wait is unknown. */
static size_t unread_waits(const struct report_graph *graph)
{
    size_t count = 0;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct hd_thread *thread = graph->nodes[i].thread;
        count += thread->syscall.state == HD_SYSCALL_UNREAD && thread->state == 'S' &&
                 !graph->nodes[i].history.progressing;
    }
    return count;
}

/* Which threads a hang finding names, once, for the renderers' "is this thread worth a line" question. */
static void mark_named(struct verdict_context *c)
{
    struct report_analysis *a = c->analysis;
    a->named_by_hang = calloc(a->graph.nnodes + 1, sizeof *a->named_by_hang);
    if (!a->named_by_hang) {
        c->failed = true;
        return;
    }
    for (size_t f = 0; f < a->nfindings; f++) {
        const struct report_finding *finding = &a->findings[f];
        if (!finding->hang)
            continue;
        size_t subject = report_graph_find(&a->graph, finding->tid);
        if (subject != REPORT_NO_NODE)
            a->named_by_hang[subject] = true;
        for (size_t m = 0; m < finding->nmembers; m++)
            a->named_by_hang[finding->members[m]] = true;
    }
}

bool report_decide(const struct hd_snapshot *snapshot, struct report_analysis *a)
{
    struct verdict_context c = { .snapshot = snapshot, .analysis = a };
    struct report_verdict *verdict = &a->verdict;
    *verdict = (struct report_verdict){ .hung = REPORT_HUNG_NO, .cause = REPORT_CAUSE_NONE, .root_cause = -1 };
    for (size_t i = 0; i < a->graph.nnodes; i++)
        a->asleep_forever_exists |= a->graph.nodes[i].wake == REPORT_WAKE_NEVER;
    collect_root_causes(&c);
    collect_unexplained_knots(&c);
    /* only waiting-on-workers: the workers hang for a reason no rule names, and they wait for a signal */
    for (size_t f = 0; f < a->nfindings && verdict->nhangs == 0 && !c.failed; f++)
        if (a->findings[f].hang)
            hang_member(&c, add_hang(&c, REPORT_CAUSE_UNKNOWN, (long)f, false, a->findings[f].pid, a->findings[f].tid),
                        f);
    for (size_t h = 0; h < verdict->nhangs && !c.failed; h++) {
        struct report_hang *hang = &verdict->hangs[h];
        hang->chain = chain_to(&c, hd_snapshot_find_process(snapshot, hang->pid), hang->pid, &hang->nchain);
    }
    verdict->unread_waits = unread_waits(&a->graph);
    mark_named(&c);
    if (c.failed)
        return false;
    if (verdict->nhangs == 0) {
        if (verdict->unread_waits > 0) {
            verdict->hung = REPORT_HUNG_UNKNOWN;
            verdict->cause = REPORT_CAUSE_UNKNOWN;
        }
        return true;
    }
    const struct report_hang *first = &verdict->hangs[0];
    verdict->hung = REPORT_HUNG_YES;
    verdict->cause = first->cause;
    verdict->root_cause = first->root_cause ? first->finding : -1;
    verdict->pid = first->pid;
    verdict->tid = first->tid;
    verdict->chain = first->chain;
    verdict->nchain = first->nchain;
    return true;
}
