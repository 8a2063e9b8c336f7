/* The fork family (rule.h): orphaned-wait, a forked child asleep where only its parent's threads could wake it.
 * The runtimes a child inherited are runtimes.c's. */
#include "rule.h"

#include "inheritance.h"

#include <inttypes.h>
#include <stdio.h>

/* The parent's threads named as evidence of one orphaned wait; more are counted. */
#define PARENT_WAITERS_LISTED_MAX 8

/* Does a thread of `parent` sleep on the futex at `address`? */
static bool parent_waits_at(const struct report_graph *graph, const struct hd_process *parent, uint64_t address)
{
    for (size_t t = 0; t < parent->nthreads; t++) {
        const struct hd_wait *wait = &report_process_thread(graph, parent, t)->wait;
        if (wait->kind == HD_WAIT_FUTEX && wait->address == address)
            return true;
    }
    return false;
}

/* What shows that a forked child's wait came through fork(), the strongest first. "Every thread of the child
 * sleeps forever" shows nothing: a child's own threads deadlock as well as any process's. */
enum fork_evidence {
    NO_FORK_EVIDENCE,
    PARENT_WAITS_THERE,    /* threads of the parent sleep at the same address: the pool that would wake it */
    PARENT_RUNS_RUNTIME,   /* the wait is inside a catalogued runtime whose threads run in the parent */
    INHERITED_MEMORY_ALONE, /* the word lies in memory the parent maps too (it came with fork), and the child has
                            * no other thread: every other thread of a forked child started after fork() */
};

static enum fork_evidence fork_evidence(const struct report_rule_context *c, const struct report_node *node,
                                        const struct hd_process *parent, struct report_attribution *attribution)
{
    const struct hd_wait *wait = &node->thread->wait;
    *attribution = (struct report_attribution){ 0 };
    if (!parent)
        return NO_FORK_EVIDENCE;
    if (parent_waits_at(&c->analysis->graph, parent, wait->address))
        return PARENT_WAITS_THERE;
    if (report_attribute_thread(c->catalogue, node->process, node->thread, attribution) &&
        attribution->runtime->safety != REPORT_FORK_AWARE &&
        !(attribution->runtime->traits & REPORT_RUNTIME_LIBC_INTERNAL))
        if (report_threads_running(c->analysis, parent, attribution->runtime) > 0)
            return PARENT_RUNS_RUNTIME;
    const struct hd_mapping *theirs = hd_process_find_mapping(parent, wait->address);
    bool same_mapping = theirs && wait->mapping_kind != HD_MAPPING_UNKNOWN && theirs->start == wait->mapping.start;
    if (same_mapping && c->analysis->graph.processes[node->process_index].nnodes == 1)
        return INHERITED_MEMORY_ALONE;
    return NO_FORK_EVIDENCE;
}

static const char *const fork_evidence_words[] = {
    [NO_FORK_EVIDENCE] = "none",
    [PARENT_WAITS_THERE] = "threads of the parent sleep at the same address",
    [PARENT_RUNS_RUNTIME] = "the wait is inside a runtime whose threads run in the parent",
    [INHERITED_MEMORY_ALONE] = "the word lies in memory the parent maps at the same place (it came with fork), "
                               "and the child has no other thread",
};

/* A forked child asleep forever on a private futex without owner: the threads that would have woken it stayed in
 * the parent (a libgomp team barrier, a thread pool's condition variable). */
void report_rule_orphaned_wait(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        const struct hd_wait *wait = &node->thread->wait;
        if (node->wake != REPORT_WAKE_NEVER || !hd_process_forked(node->process) ||
            wait->kind != HD_WAIT_FUTEX || wait->lock.kind != HD_LOCK_UNKNOWN ||
            wait->mapping_kind == HD_MAPPING_SHARED)
            continue;
        const struct hd_process *parent = hd_snapshot_find_process(c->snapshot, node->process->ppid);
        struct report_attribution attribution;
        enum fork_evidence why = fork_evidence(c, node, parent, &attribution);
        if (why == NO_FORK_EVIDENCE)
            continue;
        /* the summary's second half says what shows that the wait came through fork() */
        char because[256];
        int ppid = (int)node->process->ppid;
        if (why == PARENT_WAITS_THERE)
            snprintf(because, sizeof because, ", where threads of its parent %d wait too: the threads that would "
                                              "wake it exist only in the parent", ppid);
        else if (why == PARENT_RUNS_RUNTIME)
            snprintf(because, sizeof because, " inside %s, whose threads run in its parent %d: fork() copied the "
                                              "runtime's state but not its threads", attribution.runtime->name, ppid);
        else
            snprintf(because, sizeof because, " in memory it got from its parent %d at fork(), and no thread of the "
                                              "child can wake it", ppid);
        struct report_finding *finding = rule_finding(
            c, REPORT_ORPHANED_WAIT, REPORT_CERTAIN, node,
            "thread %d '%s' of forked child %d sleeps forever on private futex 0x%" PRIx64 "%s",
            (int)node->thread->tid, node->thread->name, (int)node->process->pid, wait->address, because);
        rule_evidence(c, finding, "fork_evidence", "%s", fork_evidence_words[why]);
        rule_evidence(c, finding, "address", "0x%" PRIx64, wait->address);
        if (finding) {
            finding->has_object = true;
            finding->object = wait->address;
        }
        rule_evidence(c, finding, "expected", "%" PRIu32, wait->expected);
        rule_evidence(c, finding, "mapping", "%s%s%s", hd_mapping_kind_name(wait->mapping_kind),
                 wait->mapping.path ? " " : "", wait->mapping.path ? wait->mapping.path : "");
        rule_evidence(c, finding, "object", "%s", wait->lock.why_unknown ? wait->lock.why_unknown : "no owner recorded");
        /* the parent's threads asleep at that address, or else in the same mapping (a runtime's pool); a few
         * name the pattern, the rest are counted (a pool of a thousand would bury the finding) */
        size_t listed = 0, more = 0;
        for (size_t t = 0; parent && t < parent->nthreads; t++) {
            const struct hd_thread *their_thread = report_process_thread(&c->analysis->graph, parent, t);
            const struct hd_wait *theirs = &their_thread->wait;
            if (theirs->kind != HD_WAIT_FUTEX)
                continue;
            bool same_mapping = wait->mapping_kind != HD_MAPPING_UNKNOWN && theirs->address >= wait->mapping.start &&
                                theirs->address < wait->mapping.end;
            if ((theirs->address == wait->address || same_mapping) && listed == PARENT_WAITERS_LISTED_MAX) {
                more++;
                continue;
            }
            listed += theirs->address == wait->address || same_mapping;
            if (theirs->address == wait->address)
                rule_evidence(c, finding, "parent_waiter", "thread %d '%s' of parent %d waits at the same address",
                         (int)their_thread->tid, their_thread->name, (int)parent->pid);
            else if (same_mapping)
                rule_evidence(c, finding, "parent_waiter",
                         "thread %d '%s' of parent %d waits on futex 0x%" PRIx64 " in the same mapping",
                         (int)their_thread->tid, their_thread->name, (int)parent->pid, theirs->address);
        }
        if (more)
            rule_evidence(c, finding, "parent_waiter", "and %zu more threads of parent %d wait there", more,
                     (int)parent->pid);
        rule_remedy(c, finding, "The child inherited state whose threads stayed in the parent: start workers with spawn "
                           "or forkserver, or fork before the parent starts those threads (or takes that lock).");
    }
}
