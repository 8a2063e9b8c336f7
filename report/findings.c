/* The rules (analysis.h): findings over the wait-for graph, then the verdict.
 *
 * Each rule looks at the graph and the snapshot and adds findings with the ids of DESIGN.md's catalogue. Rules
 * only read; the order of the table is the order findings are listed in.
 */
#include "analysis.h"

#include "catalogue.h"
#include "describe.h"
#include "finding.h"
#include "remedies.h"
#include "inheritance.h"

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

struct context {
    const struct hd_snapshot *snapshot;
    struct report_analysis *analysis;
    bool failed;
};

/* ---- building findings --------------------------------------------------------------------------------------- */

static struct report_finding *add_finding_v(struct context *c, const char *id, enum report_confidence confidence,
                                            pid_t pid, pid_t tid, const char *summary, va_list args)
    __attribute__((format(printf, 6, 0)));
static struct report_finding *add_finding_v(struct context *c, const char *id, enum report_confidence confidence,
                                            pid_t pid, pid_t tid, const char *summary, va_list args)
{
    struct report_finding *finding = report_finding_append(c->analysis, id, confidence, pid, tid, summary, args);
    c->failed |= !finding;
    return finding;
}

/* A finding about the thread of `node`. */
__attribute__((format(printf, 5, 6))) static struct report_finding *
add_finding(struct context *c, const char *id, enum report_confidence confidence, const struct report_node *node,
            const char *summary, ...)
{
    va_list args;
    va_start(args, summary);
    struct report_finding *finding =
        add_finding_v(c, id, confidence, node->process->pid, node->thread->tid, summary, args);
    va_end(args);
    return finding;
}

/* A finding about a process that may have no thread left to point at (one that exited). */
__attribute__((format(printf, 6, 7))) static struct report_finding *
add_finding_for(struct context *c, const char *id, enum report_confidence confidence, pid_t pid, pid_t tid,
                const char *summary, ...)
{
    va_list args;
    va_start(args, summary);
    struct report_finding *finding = add_finding_v(c, id, confidence, pid, tid, summary, args);
    va_end(args);
    return finding;
}

__attribute__((format(printf, 4, 5))) static void evidence(struct context *c, struct report_finding *finding,
                                                           const char *name, const char *value, ...)
{
    if (!finding)
        return;
    va_list args;
    va_start(args, value);
    c->failed |= !report_finding_evidence(finding, name, value, args);
    va_end(args);
}

static void remedy(struct context *c, struct report_finding *finding, const char *text)
{
    c->failed |= finding && !report_finding_remedy(finding, text);
}

static void member(struct context *c, struct report_finding *finding, size_t node)
{
    c->failed |= finding && !report_finding_member(finding, node);
}

/* ---- shared facts -------------------------------------------------------------------------------------------- */

static bool is_ancestor(const struct hd_snapshot *snapshot, pid_t ancestor, const struct hd_process *process)
{
    if (process->ppid == ancestor)
        return true; /* the parent itself may be outside the snapshot */
    const struct hd_process *p = hd_snapshot_find_process(snapshot, process->ppid);
    for (unsigned depth = 0; p && depth < 64; depth++) {
        if (p->pid == ancestor || p->ppid == ancestor)
            return true;
        p = hd_snapshot_find_process(snapshot, p->ppid);
    }
    return false;
}

static const char *thread_name(const struct hd_snapshot *snapshot, pid_t tid)
{
    const struct hd_thread *thread = hd_snapshot_find_thread(snapshot, tid, NULL);
    return thread ? thread->name : "?";
}

static void lock_evidence(struct context *c, struct report_finding *finding, const struct hd_wait *wait)
{
    const struct hd_lock *lock = &wait->lock;
    evidence(c, finding, "address", "0x%" PRIx64, wait->address);
    evidence(c, finding, "lock", "%s%s%s%s", lock->type ? lock->type : "", lock->kind == HD_LOCK_RWLOCK ? " rwlock" : " mutex",
             lock->robust ? ", robust" : "", lock->priority_inheritance ? ", priority-inheritance" : "");
    if (lock->word_read)
        evidence(c, finding, "lock_word", "0x%" PRIx32, lock->word);
    evidence(c, finding, "owner_tid", "%d", (int)lock->owner_tid);
    evidence(c, finding, "owner_whereabouts", "%s", hd_owner_whereabouts_name(lock->owner_whereabouts));
    if (lock->owner_pid)
        evidence(c, finding, "owner_pid", "%d", (int)lock->owner_pid);
    evidence(c, finding, "mapping", "%s%s%s", hd_mapping_kind_name(wait->mapping_kind), wait->mapping.path ? " " : "",
             wait->mapping.path ? wait->mapping.path : "");
}

static const char *lock_noun(const struct hd_lock *lock)
{
    return lock->kind == HD_LOCK_RWLOCK ? "rwlock" : "mutex";
}

static bool waits_on_owned_lock(const struct report_node *node)
{
    const struct hd_wait *wait = &node->thread->wait;
    return node->wake == REPORT_WAKE_NEVER && wait->kind == HD_WAIT_FUTEX &&
           (wait->lock.kind == HD_LOCK_MUTEX || wait->lock.kind == HD_LOCK_RWLOCK) && wait->lock.owner_tid > 0;
}

/* ---- rules --------------------------------------------------------------------------------------------------- */

/* A lock whose owner cannot release it: held at fork() by a thread of an ancestor (inherited-lock), or owned by a
 * thread that no longer exists (abandoned-lock). */
static void rule_unreleasable_locks(struct context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (!waits_on_owned_lock(node))
            continue;
        const struct hd_wait *wait = &node->thread->wait;
        const struct hd_lock *lock = &wait->lock;
        struct report_finding *finding = NULL;
        if (lock->owner_whereabouts == HD_OWNER_GONE) {
            finding = add_finding(c, "abandoned-lock", REPORT_CERTAIN, node,
                                  "thread %d '%s' waits for %s 0x%" PRIx64 " whose owner, thread %d, no longer "
                                  "exists: it exited holding the lock",
                                  (int)node->thread->tid, node->thread->name, lock_noun(lock), lock->object_address,
                                  (int)lock->owner_tid);
            remedy(c, finding, "Unlock on every path out of the critical section, thread exit and cancellation "
                               "included (pthread_cleanup_push), or use a robust mutex and handle EOWNERDEAD.");
        } else if ((lock->owner_whereabouts == HD_OWNER_OTHER_PROCESS || lock->owner_whereabouts == HD_OWNER_OUTSIDE) &&
                   wait->mapping_kind != HD_MAPPING_SHARED) {
            if (is_ancestor(c->snapshot, lock->owner_pid, node->process)) {
                finding = add_finding(c, "inherited-lock", REPORT_CERTAIN, node,
                                      "thread %d '%s' waits for %s 0x%" PRIx64 " held by thread %d '%s' of %s %d at "
                                      "fork(); that thread is not in this process, so nothing here can unlock it",
                                      (int)node->thread->tid, node->thread->name, lock_noun(lock),
                                      lock->object_address, (int)lock->owner_tid,
                                      thread_name(c->snapshot, lock->owner_tid),
                                      node->process->ppid == lock->owner_pid ? "parent" : "ancestor",
                                      (int)lock->owner_pid);
                remedy(c, finding, "Do not fork() while other threads may hold locks: fork before any thread "
                                   "starts, exec at once in the child (posix_spawn), or create the workers with "
                                   "spawn or forkserver instead of fork.");
            } else {
                finding = add_finding(c, "abandoned-lock", REPORT_LIKELY, node,
                                      "thread %d '%s' waits for %s 0x%" PRIx64 " whose recorded owner, tid %d, is now "
                                      "a thread of unrelated process %d: the owner exited and its tid was reused",
                                      (int)node->thread->tid, node->thread->name, lock_noun(lock),
                                      lock->object_address, (int)lock->owner_tid, (int)lock->owner_pid);
                remedy(c, finding, "Unlock on every path out of the critical section, thread exit included.");
            }
        }
        if (finding)
            lock_evidence(c, finding, wait);
    }
}

/* The owner edge of a node (each waiter has at most one), or REPORT_NO_NODE. */
static size_t owner_of(const struct report_graph *graph, size_t node)
{
    const struct report_node *n = &graph->nodes[node];
    for (size_t e = n->first_edge; e < n->first_edge + n->nedges; e++)
        if (graph->edges[e].kind == REPORT_EDGE_LOCK_OWNER)
            return graph->edges[e].to;
    return REPORT_NO_NODE;
}

static void report_lock_cycle(struct context *c, size_t start, size_t length)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_node *first = &graph->nodes[start];
    struct report_finding *finding =
        length == 1 ? add_finding(c, "lock-cycle", REPORT_CERTAIN, first,
                                  "thread %d '%s' waits for a %s it holds itself: a non-recursive lock taken "
                                  "twice", (int)first->thread->tid, first->thread->name,
                                  lock_noun(&first->thread->wait.lock))
                    : add_finding(c, "lock-cycle", REPORT_CERTAIN, first,
                                  "%zu threads wait on locks owned by each other", length);
    size_t node = start;
    do {
        const struct report_node *n = &graph->nodes[node];
        const struct hd_lock *lock = &n->thread->wait.lock;
        member(c, finding, node);
        evidence(c, finding, "waiter", "thread %d '%s' of process %d waits for %s 0x%" PRIx64 " held by thread %d",
                 (int)n->thread->tid, n->thread->name, (int)n->process->pid, lock_noun(lock),
                 lock->object_address, (int)lock->owner_tid);
        node = owner_of(graph, node);
    } while (node != start);
    remedy(c, finding, length == 1 ? "Do not lock a mutex the thread already holds (or make it recursive, "
                                     "PTHREAD_MUTEX_RECURSIVE, if re-entry is intended)."
                                   : "Take the locks in one global order everywhere (or use "
                                     "pthread_mutex_trylock and back off), so that no two threads can each "
                                     "hold what the other waits for.");
}

/* Threads that wait on locks owned by each other: jstack's "Found one deadlock". One finding per cycle, on the
 * member that comes first in the snapshot, in that order. Each waiter has at most one owner, so the owner edges
 * form paths that end in a thread or in one cycle: one walk per path, each node visited once. */
static void rule_lock_cycles(struct context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t *walk = calloc(graph->nnodes + 1, sizeof *walk); /* 0: not seen; else 1 + the start of its walk */
    size_t *starts = calloc(graph->nnodes + 1, sizeof *starts);
    size_t *lengths = calloc(graph->nnodes + 1, sizeof *lengths);
    if (!walk || !starts || !lengths) {
        c->failed = true;
        goto done;
    }
    for (size_t start = 0; start < graph->nnodes; start++) {
        if (walk[start] || !waits_on_owned_lock(&graph->nodes[start]))
            continue;
        size_t node = start;
        while (node != REPORT_NO_NODE && !walk[node] && waits_on_owned_lock(&graph->nodes[node])) {
            walk[node] = start + 1;
            node = owner_of(graph, node);
        }
        if (node == REPORT_NO_NODE || walk[node] != start + 1)
            continue; /* the path ended, or ran into an earlier walk */
        /* a cycle through `node`: its smallest member names it */
        size_t smallest = node, length = 0, n = node;
        do {
            smallest = n < smallest ? n : smallest;
            length++;
            n = owner_of(graph, n);
        } while (n != node);
        starts[smallest] = 1;
        lengths[smallest] = length;
    }
    for (size_t i = 0; i < graph->nnodes && !c->failed; i++)
        if (starts[i])
            report_lock_cycle(c, i, lengths[i]);
done:
    free(walk);
    free(starts);
    free(lengths);
}

/* Does a thread of `parent` sleep on the futex at `address`? */
/* The parent's threads named as evidence of one orphaned wait; more are counted. */
#define PARENT_WAITERS_LISTED_MAX 8

static bool parent_waits_at(const struct hd_process *parent, uint64_t address)
{
    for (size_t t = 0; t < parent->nthreads; t++) {
        const struct hd_wait *wait = &parent->threads[t].wait;
        if (wait->kind == HD_WAIT_FUTEX && wait->address == address)
            return true;
    }
    return false;
}

static bool every_thread_asleep_forever(const struct report_graph *graph, const struct report_node *node)
{
    const struct report_graph_process *process = &graph->processes[node->process_index];
    return process->never == process->nnodes;
}

/* A forked child asleep forever on a private futex without owner: the threads that would have woken it stayed in
 * the parent (a libgomp team barrier, a thread pool's condition variable). */
static void rule_orphaned_waits(struct context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        const struct hd_wait *wait = &node->thread->wait;
        if (node->wake != REPORT_WAKE_NEVER || node->process->origin != HD_ORIGIN_FORKED ||
            wait->kind != HD_WAIT_FUTEX || wait->lock.kind != HD_LOCK_UNKNOWN ||
            wait->mapping_kind == HD_MAPPING_SHARED)
            continue;
        const struct hd_process *parent = hd_snapshot_find_process(c->snapshot, node->process->ppid);
        bool parent_too = parent && parent_waits_at(parent, wait->address);
        if (!parent_too && !every_thread_asleep_forever(graph, node))
            continue;
        struct report_finding *finding = add_finding(
            c, "orphaned-wait", REPORT_CERTAIN, node,
            parent_too ? "thread %d '%s' of forked child %d sleeps forever on private futex 0x%" PRIx64 ", where "
                         "threads of its parent %d wait too: the threads that would wake it exist only in the parent"
                       : "thread %d '%s' of forked child %d sleeps forever on private futex 0x%" PRIx64 " and no "
                         "thread of the child can wake it (parent %d)",
            (int)node->thread->tid, node->thread->name, (int)node->process->pid, wait->address,
            (int)node->process->ppid);
        evidence(c, finding, "address", "0x%" PRIx64, wait->address);
        evidence(c, finding, "expected", "%" PRIu32, wait->expected);
        evidence(c, finding, "mapping", "%s%s%s", hd_mapping_kind_name(wait->mapping_kind),
                 wait->mapping.path ? " " : "", wait->mapping.path ? wait->mapping.path : "");
        evidence(c, finding, "object", "%s", wait->lock.why_unknown ? wait->lock.why_unknown : "no owner recorded");
        /* the parent's threads asleep at that address, or else in the same mapping (a runtime's pool); a few
         * name the pattern, the rest are counted (a pool of a thousand would bury the finding) */
        size_t listed = 0, more = 0;
        for (size_t t = 0; parent && t < parent->nthreads; t++) {
            const struct hd_wait *theirs = &parent->threads[t].wait;
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
                evidence(c, finding, "parent_waiter", "thread %d '%s' of parent %d waits at the same address",
                         (int)parent->threads[t].tid, parent->threads[t].name, (int)parent->pid);
            else if (same_mapping)
                evidence(c, finding, "parent_waiter",
                         "thread %d '%s' of parent %d waits on futex 0x%" PRIx64 " in the same mapping",
                         (int)parent->threads[t].tid, parent->threads[t].name, (int)parent->pid, theirs->address);
        }
        if (more)
            evidence(c, finding, "parent_waiter", "and %zu more threads of parent %d wait there", more,
                     (int)parent->pid);
        remedy(c, finding, "The child inherited state whose threads stayed in the parent: start workers with spawn "
                           "or forkserver, or fork before the parent starts those threads (or takes that lock).");
    }
}

static const char *edge_words(enum report_edge_kind kind)
{
    static const char *const words[] = {
        [REPORT_EDGE_LOCK_OWNER] = "the lock's owner", [REPORT_EDGE_JOIN] = "the thread it joins",
        [REPORT_EDGE_FUTEX] = "a futex",               [REPORT_EDGE_PIPE] = "a pipe",
        [REPORT_EDGE_SOCKET] = "a socket",             [REPORT_EDGE_CHILD] = "wait4",
    };
    return words[kind];
}

/* A thread that waits (for ever, or in a timed loop that never gets anything) on processes that are themselves
 * asleep forever: it points to the root cause, it is not one. */
static void rule_waiting_on_workers(struct context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        bool stuck = node->wake == REPORT_WAKE_NEVER || (node->wake == REPORT_WAKE_TIMER && !node->thread->progressing &&
                                                         node->thread->wait.kind != HD_WAIT_SLEEP);
        if (!stuck)
            continue;
        bool any_edge = false, all_hung = true, other_process = false;
        enum report_edge_kind through = REPORT_EDGE_CHILD;
        const struct report_edge *edges = &graph->edges[node->first_edge];
        for (size_t e = 0; e < node->nedges && all_hung; e++) {
            const struct report_edge *edge = &edges[e];
            any_edge = true;
            /* a thread of its own process that only waits to be woken (by this very thread, as like as not: the
             * queue feeder of a Python parent) runs nothing by itself */
            all_hung &= !report_edge_reaches_live(graph, edge, i, true);
            size_t target_process = edge->target == REPORT_TO_PROCESS ? edge->to : graph->nodes[edge->to].process_index;
            if (target_process != node->process_index &&
                (edge->kind == REPORT_EDGE_PIPE || edge->kind == REPORT_EDGE_SOCKET || edge->kind == REPORT_EDGE_CHILD)) {
                other_process = true;
                through = edge->kind;
            }
        }
        if (!any_edge || !all_hung || !other_process)
            continue;
        struct report_finding *finding = add_finding(
            c, "waiting-on-workers", REPORT_CERTAIN, node,
            "thread %d '%s' of process %d waits through %s on processes that are themselves asleep forever",
            (int)node->thread->tid, node->thread->name, (int)node->process->pid, edge_words(through));
        char pids[256] = "";
        size_t used = 0;
        for (size_t e = 0; e < node->nedges; e++) {
            size_t first = report_edge_first(graph, &edges[e], i);
            if (first == REPORT_NO_NODE)
                continue;
            const struct hd_process *worker = graph->nodes[first].process;
            if (worker == node->process)
                continue;
            bool listed = false;
            for (size_t m = 0; finding && m < finding->nmembers && !listed; m++)
                listed = graph->nodes[finding->members[m]].process == worker;
            if (listed)
                continue;
            member(c, finding, first);
            if (used < sizeof pids - 16)
                used += (size_t)snprintf(pids + used, sizeof pids - used, "%s%d", used ? ", " : "", (int)worker->pid);
        }
        evidence(c, finding, "workers", "%s", pids);
        evidence(c, finding, "timed_loop", "%s", node->wake == REPORT_WAKE_TIMER ? "yes: it times out and waits again" : "no");
        remedy(c, finding, "Look at the workers' findings: this process only waits for them.");
    }
}

/* Healthy waits: blocked without a timeout, and a thread that can run may wake it. */
static void rule_idle(struct context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (node->wake != REPORT_WAKE_WAKER || !node->blocked_without_timeout)
            continue;
        /* name a waker that can run by itself if there is one, else one that can be woken */
        size_t chosen = REPORT_NO_NODE;
        enum report_edge_kind through = REPORT_EDGE_FUTEX;
        for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
            size_t waker = report_edge_waker(graph, &graph->edges[e], i);
            if (waker == REPORT_NO_NODE)
                continue;
            if (chosen == REPORT_NO_NODE ||
                (graph->nodes[chosen].wake == REPORT_WAKE_WAKER && graph->nodes[waker].wake != REPORT_WAKE_WAKER)) {
                chosen = waker;
                through = graph->edges[e].kind;
            }
        }
        if (chosen == REPORT_NO_NODE)
            continue;
        const struct report_node *waker = &graph->nodes[chosen];
        struct report_finding *finding = add_finding(
            c, "idle", REPORT_INFORMATIONAL, node,
            "thread %d '%s' waits through %s; thread %d '%s' of process %d can wake it (%s): not hung",
            (int)node->thread->tid, node->thread->name, edge_words(through), (int)waker->thread->tid,
            waker->thread->name, (int)waker->process->pid, report_wake_name(waker->wake));
        member(c, finding, chosen);
    }
}

/* What a thread in D waits for, from its kernel stack or wait channel: the first pattern found wins. */
static const struct kernel_wait {
    const char *pattern;
    const char *what;
    const char *remedy;
} kernel_waits[] = {
    { "vfork", "vfork(): the parent waits until its child execs or exits",
      "The child of vfork() must exec or _exit at once; see what the child does (it neither execs nor exits)." },
    /* without root there is no kernel stack; a task in D inside kernel_clone() is a vfork() parent */
    { "kernel_clone", "vfork(): the parent waits until its child execs or exits",
      "The child of vfork() must exec or _exit at once; see what the child does (it neither execs nor exits)." },
    { "uvm_", "NVIDIA unified memory (nvidia-uvm)",
      "Check the GPU (nvidia-smi; dmesg for Xid errors): a task stuck in the driver often ends only with a GPU reset." },
    { "nvidia", "the NVIDIA driver",
      "Check the GPU (nvidia-smi; dmesg for Xid errors): a task stuck in the driver often ends only with a GPU reset." },
    { "nv_", "the NVIDIA driver",
      "Check the GPU (nvidia-smi; dmesg for Xid errors): a task stuck in the driver often ends only with a GPU reset." },
    { "nfs", "NFS", "Check the NFS server and the network to it; a hard mount waits for the server for ever." },
    { "rpc_", "an RPC (NFS)", "Check the NFS server and the network to it; a hard mount waits for the server for ever." },
    { "fuse_", "a FUSE filesystem", "The FUSE daemon does not answer: look at it (or abort the connection in "
                                    "/sys/fs/fuse/connections)." },
    { "refrigerator", "the cgroup freezer", "The task's cgroup is frozen: thaw it (cgroup.freeze 0)." },
    { "freezer", "the cgroup freezer", "The task's cgroup is frozen: thaw it (cgroup.freeze 0)." },
    { "io_schedule", "block I/O", "The storage does not complete I/O: check the disk and dmesg." },
    { "folio_wait", "block I/O (a page being read or written)", "The storage does not complete I/O: check the disk "
                                                                "and dmesg." },
    { "blk_", "block I/O", "The storage does not complete I/O: check the disk and dmesg." },
    { "rwsem", "a kernel lock (a read-write semaphore such as the mmap lock)",
      "Another task holds the kernel lock: look for other threads in D." },
    { "mutex_lock", "a kernel mutex", "Another task holds the kernel lock: look for other threads in D." },
};

static const struct kernel_wait *kernel_wait_of(const struct hd_thread *thread)
{
    for (size_t i = 0; i < COUNT(kernel_waits); i++)
        if ((thread->kernel_stack && strstr(thread->kernel_stack, kernel_waits[i].pattern)) ||
            strstr(thread->wchan, kernel_waits[i].pattern))
            return &kernel_waits[i];
    return NULL;
}

/* The first lines of a kernel stack, one evidence line each. */
static void kernel_stack_evidence(struct context *c, struct report_finding *finding, const char *stack)
{
    const char *line;
    size_t length;
    for (int lines = 0; lines < 4 && report_next_line(&stack, &line, &length); lines++)
        evidence(c, finding, "kernel_stack", "%.*s", (int)length, line);
}

/* In D in every sample: only the kernel can release it. Named after what the kernel stack or wchan shows. */
static void rule_uninterruptible(struct context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        const struct hd_thread *thread = node->thread;
        if (thread->state != 'D' || thread->samples_in_state_d != thread->samples_seen)
            continue;
        const struct kernel_wait *wait = kernel_wait_of(thread);
        struct report_finding *finding = add_finding(
            c, "uninterruptible", REPORT_LIKELY, node,
            "thread %d '%s' of process %d is in uninterruptible sleep (D) in every sample, in %s",
            (int)thread->tid, thread->name, (int)node->process->pid, wait ? wait->what : "the kernel");
        if (thread->wchan[0])
            evidence(c, finding, "wchan", "%s", thread->wchan);
        evidence(c, finding, "samples_in_d", "%u of %u", thread->samples_in_state_d, thread->samples_seen);
        if (thread->blocked_for_known)
            evidence(c, finding, "blocked_for_s", "%.1f", thread->blocked_for_s);
        kernel_stack_evidence(c, finding, thread->kernel_stack);
        if (wait && strstr(wait->what, "vfork"))
            for (size_t p = 0; p < c->snapshot->nprocesses; p++)
                if (c->snapshot->processes[p].ppid == node->process->pid)
                    evidence(c, finding, "vfork_child", "%d", (int)c->snapshot->processes[p].pid);
        remedy(c, finding, wait ? wait->remedy : "Read the kernel stack (as root: /proc/<tid>/stack): only the "
                                                 "kernel can release this wait; a signal cannot interrupt it.");
    }
}

/* Stopped in every sample: by a signal (it runs again on SIGCONT) or by a tracer. One finding per process. */
static void rule_stopped(struct context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct hd_process *reported = NULL;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        char state = node->thread->state;
        if ((state != 'T' && state != 't') || node->thread->progressing || node->process == reported)
            continue;
        reported = node->process;
        pid_t tracer = node->process->tracer_pid;
        struct report_finding *finding =
            tracer ? add_finding(c, "stopped", REPORT_CERTAIN, node,
                                 "process %d '%s' is held stopped by its tracer, process %d", (int)node->process->pid,
                                 node->process->comm, (int)tracer)
                   : add_finding(c, "stopped", REPORT_CERTAIN, node,
                                 "process %d '%s' is stopped by a signal (SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU): it "
                                 "runs again only on SIGCONT",
                                 (int)node->process->pid, node->process->comm);
        evidence(c, finding, "state", "%c", state);
        if (tracer)
            evidence(c, finding, "tracer_pid", "%d", (int)tracer);
        char command[64];
        snprintf(command, sizeof command, "kill -CONT %d", (int)node->process->pid);
        remedy(c, finding, tracer ? "Detach the tracer (quit the debugger or strace that holds it)." : command);
    }
}

/* ---- dead workers ---------------------------------------------------------------------------------------- */

/* A thread of `process` that waits for what a worker would deliver (a pipe, a socket, poll, a futex a result
 * thread signals), for ever or in a timed loop that gets nothing across samples. Not wait4: it would have reaped
 * a zombie, so one in wait4 waits for another child. */
static const struct report_node *stuck_waiter(const struct report_graph *graph, const struct hd_process *process)
{
    const struct report_graph_process *threads = report_graph_process_of(graph, process);
    for (size_t i = threads ? threads->first_node : 0; threads && i < threads->first_node + threads->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (node->thread->syscall.state != HD_SYSCALL_IN)
            continue;
        enum hd_wait_kind kind = node->thread->wait.kind;
        bool waits_for_worker = kind == HD_WAIT_READ || kind == HD_WAIT_WRITE || kind == HD_WAIT_POLL ||
                                kind == HD_WAIT_FUTEX;
        bool stuck = node->wake == REPORT_WAKE_NEVER ||
                     (node->wake == REPORT_WAKE_TIMER && !node->thread->progressing);
        if (waits_for_worker && stuck)
            return node;
    }
    return NULL;
}

/* How a worker ended, from its wait status, in words ("killed by SIGKILL", "exited with status 3"). */
static void describe_exit(int status, char *out, size_t size)
{
    int signal = status & 0x7f;
    if (signal == 0)
        snprintf(out, size, "exited with status %d", (status >> 8) & 0xff);
    else if (signal != 0x7f)
        snprintf(out, size, "killed by SIG%s (%d)%s", sigabbrev_np(signal) ? sigabbrev_np(signal) : "?", signal,
                 status & 0x80 ? ", core dumped" : "");
    else
        snprintf(out, size, "stopped (wait status 0x%x)", (unsigned)status);
}

/* What to do about a worker that died, by how it died: the first row whose signal matches (0: any). */
static const struct death_remedy {
    int signal; /* 0: exited normally, -1: any way */
    const char *remedy;
} death_remedies[] = {
    { SIGKILL, "SIGKILL is what the kernel's OOM killer sends: look for it (dmesg | grep -i 'killed process', "
               "or the cgroup's memory.events) and give the workers less to hold (fewer workers, smaller batches "
               "or prefetch) or the job more memory." },
    { SIGSEGV, "The worker crashed: get its core dump (coredumpctl, or ulimit -c unlimited) or run the work in the "
               "parent (PyTorch: num_workers=0) to see where." },
    { SIGBUS, "SIGBUS in a worker is often shared memory running out (/dev/shm full in a container: raise "
              "--shm-size) or a file truncated under a mapping." },
    { SIGABRT, "The worker aborted: its stderr has the assertion or the library's message." },
    { 0, "The worker exited by itself: its stderr says why." },
    { -1, "The parent must notice a dead worker: reap it (waitpid, SIGCHLD, a pidfd in the poll set) and close its "
          "own copy of the worker's pipe ends so that EOF arrives, or wait with a timeout and check that the "
          "workers are alive." },
};

static void death_remedy(struct context *c, struct report_finding *finding, int signal)
{
    for (size_t r = 0; r < COUNT(death_remedies); r++)
        if (death_remedies[r].signal == signal || death_remedies[r].signal == -1)
            remedy(c, finding, death_remedies[r].remedy);
}

static void waiter_evidence(struct context *c, struct report_finding *finding, const struct report_node *waiter)
{
    evidence(c, finding, "waiter", "thread %d '%s' of process %d: %s%s", (int)waiter->thread->tid,
             waiter->thread->name, (int)waiter->process->pid, report_wait_label(waiter->thread),
             waiter->wake == REPORT_WAKE_TIMER ? ", times out and waits again" : ", no timeout");
    member(c, finding, (size_t)(waiter - c->analysis->graph.nodes));
}

/* Could the parent have reaped its children itself? A thread of it in wait4/waitid is reaping (one child, or a
 * particular other one first: a zombie waiting its turn is not abandoned), and a thread that made progress across
 * the samples may have called waitpid between two of them. */
static bool parent_may_reap(const struct hd_process *parent)
{
    for (size_t t = 0; t < parent->nthreads; t++) {
        const struct hd_thread *thread = &parent->threads[t];
        if (thread->progressing ||
            (thread->syscall.state == HD_SYSCALL_IN && thread->wait.kind == HD_WAIT_CHILD))
            return true;
    }
    return false;
}

static void add_dead_worker(struct context *c, const struct hd_process *parent, const struct hd_process *child,
                            const struct report_node *waiter)
{
    /* A timed loop may be a parent that reaps lazily, between two timeouts: only likely, and only for a zombie no
     * sample saw reaped. Asleep for ever, nothing in the parent will ever look. */
    enum report_confidence confidence = waiter->wake == REPORT_WAKE_NEVER ? REPORT_CERTAIN : REPORT_LIKELY;
    char how[96];
    describe_exit(child->exit_status, how, sizeof how);
    struct report_finding *finding = add_finding_for(
        c, "worker-died", confidence, child->pid, child->pid,
        "worker %d '%s' %s and was never reaped, while thread %d '%s' of its parent %d still waits (%s)",
        (int)child->pid, child->comm, how, (int)waiter->thread->tid, waiter->thread->name, (int)parent->pid,
        report_wait_label(waiter->thread));
    evidence(c, finding, "worker_pid", "%d", (int)child->pid);
    evidence(c, finding, "exit", "%s", how);
    evidence(c, finding, "wait_status", "0x%x", (unsigned)child->exit_status);
    waiter_evidence(c, finding, waiter);
    int signal = child->exit_status & 0x7f;
    death_remedy(c, finding, signal == 0x7f ? -2 : signal);
}

/* A child that died while its parent waits for what it would have sent and does not reap it: a zombie (its exit
 * status is known), or a child that vanished during sampling although its parent could not have reaped it: the
 * kernel did, because the parent ignores SIGCHLD (likely). A child its parent reaped itself vanished normally. */
static void rule_worker_died(struct context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < c->snapshot->nprocesses; p++) {
        const struct hd_process *child = &c->snapshot->processes[p];
        /* init reaps the orphans the kernel hands it, whenever it gets to them: they were never its workers */
        const struct hd_process *parent = child->ppid > 1 ? hd_snapshot_find_process(c->snapshot, child->ppid) : NULL;
        if (!parent || !child->zombie_throughout || parent_may_reap(parent))
            continue;
        const struct report_node *waiter = stuck_waiter(graph, parent);
        if (!waiter || (waiter->wake != REPORT_WAKE_NEVER && c->snapshot->samples < 2))
            continue;
        add_dead_worker(c, parent, child, waiter);
    }
    for (size_t d = 0; d < c->snapshot->ndeparted; d++) {
        const struct hd_departed *gone = &c->snapshot->departed[d];
        const struct hd_process *parent = gone->ppid > 1 ? hd_snapshot_find_process(c->snapshot, gone->ppid) : NULL;
        if (!parent || !parent->ignores_sigchld || parent_may_reap(parent))
            continue;
        const struct report_node *waiter = stuck_waiter(graph, parent);
        if (!waiter)
            continue;
        struct report_finding *finding = add_finding_for(
            c, "worker-died", REPORT_LIKELY, gone->pid, gone->pid,
            "worker %d '%s' vanished during sampling, while thread %d '%s' of its parent %d kept waiting (%s) "
            "without noticing", (int)gone->pid, gone->comm, (int)waiter->thread->tid, waiter->thread->name,
            (int)parent->pid, report_wait_label(waiter->thread));
        evidence(c, finding, "worker_pid", "%d", (int)gone->pid);
        evidence(c, finding, "exit", "unknown: reaped by the kernel before the last sample, as the parent ignores "
                                     "SIGCHLD");
        waiter_evidence(c, finding, waiter);
        death_remedy(c, finding, -2);
    }
}

/* ---- busy loops ---------------------------------------------------------------------------------------------- */

/* A spinning thread takes all the CPU it is given, but on a loaded machine that may be a small share of one: it is
 * R in every sample, so it always wants the CPU. The bar only keeps out a thread that hardly ran at all. */
#define SPINNING_CPU_SHARE_MIN 0.1

/* Running in every sample, using about a CPU, stopped in the same function each time: a busy wait or livelock,
 * or a long computation that stays in one function. Sampling cannot tell those apart: likely, never certain. */
/* A thread that blocked in the kernel again and again between samples (fork and wait4 in a loop, small reads)
 * works through system calls: it is caught in R with the same innermost function (the system call's wrapper)
 * because that is where it spends its time, not because it spins. A busy wait blocks nowhere: its voluntary
 * context switches stay flat, but for the one each ptrace stop of hangdoc's own adds. */
static bool works_through_the_kernel(const struct hd_thread *thread)
{
    return thread->voluntary_switches_delta > 2 * (uint64_t)thread->leaf_samples + 2;
}

static void rule_spinning(struct context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        const struct hd_thread *thread = node->thread;
        if (thread->samples_seen < 2 || thread->samples_in_state_r != thread->samples_seen ||
            thread->leaf_samples < 2 || !thread->leaf_same || !thread->leaf_function)
            continue;
        /* while hangdoc held the process stopped to take its stacks, it could not run */
        double running_s = c->snapshot->sampling_s - node->process->stopped_for_s;
        if (running_s < c->snapshot->sampling_s / 2)
            running_s = c->snapshot->sampling_s / 2;
        if (running_s <= 0)
            continue;
        double share = (double)thread->cpu_delta_ns / (running_s * 1e9);
        if (share < SPINNING_CPU_SHARE_MIN || works_through_the_kernel(thread))
            continue;
        struct report_finding *finding = add_finding(
            c, "spinning", REPORT_LIKELY, node,
            "thread %d '%s' of process %d was running in every sample (%.0f%% of a CPU) and in %s each time it "
            "was stopped: a busy wait or livelock, or one long computation",
            (int)thread->tid, thread->name, (int)node->process->pid, share * 100, thread->leaf_function);
        evidence(c, finding, "function", "%s", thread->leaf_function);
        evidence(c, finding, "cpu_share", "%.0f%%", share * 100);
        evidence(c, finding, "cpu_s", "%.3f of %.3f s it was not held stopped", (double)thread->cpu_delta_ns / 1e9,
                 running_s);
        evidence(c, finding, "samples", "R in %u of %u; the same function in %u", thread->samples_in_state_r,
                 thread->samples_seen, thread->leaf_samples);
        remedy(c, finding, "Sample longer (hangdoc --samples 10 --interval 1s PID): a computation moves on to "
                           "other functions, a busy wait stays where it is.");
        remedy(c, finding, "If it polls a flag or a lock in a loop, block instead (a condition variable, a futex, "
                           "or sched_yield with a back-off) and check that whoever should set the flag is alive.");
    }
}

static const struct rule {
    const char *name;
    void (*apply)(struct context *);
} rules[] = {
    { "unreleasable locks", rule_unreleasable_locks },
    { "lock cycles", rule_lock_cycles },
    { "orphaned waits", rule_orphaned_waits },
    { "worker died", rule_worker_died },
    { "uninterruptible", rule_uninterruptible },
    { "stopped", rule_stopped },
    { "spinning", rule_spinning },
    { "waiting on workers", rule_waiting_on_workers },
    { "idle", rule_idle },
};

/* ---- the verdict --------------------------------------------------------------------------------------------- */

/* The findings that can be a root cause, in the order one is preferred over another, with the cause they name. */
static const struct root_cause {
    const char *id;
    const char *cause;
} root_causes[] = {
    { "inherited-lock", "fork-inheritance" },
    { "orphaned-wait", "fork-inheritance" },
    { "fork-unsafe-runtime", "fork-inheritance" },
    { "cuda-inherited", "fork-inheritance" },
    { "lock-cycle", "deadlock" },
    { "abandoned-lock", "deadlock" },
    { "worker-died", "worker-died" },
    { "uninterruptible", "kernel" },
    { "stopped", "stopped" },
    { "spinning", "busy-loop" },
};

/* The cause a root-cause id names; "" for the others. */
static const char *cause_of(const char *id)
{
    for (size_t r = 0; r < COUNT(root_causes); r++)
        if (strcmp(root_causes[r].id, id) == 0)
            return root_causes[r].cause;
    return "";
}

static pid_t *chain_to(struct context *c, const struct hd_process *process, pid_t subject_pid, size_t *length)
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
        bool root = false;
        for (size_t r = 0; r < c->snapshot->nroots; r++)
            root |= c->snapshot->roots[r] == p->pid;
        if (root)
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

static const char *evidence_value(const struct report_finding *finding, const char *name)
{
    for (size_t e = 0; e < finding->nevidence; e++)
        if (strcmp(finding->evidence[e].name, name) == 0)
            return finding->evidence[e].value;
    return NULL;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Two root-cause findings are one hang when they name the same object: the same lock or futex address with the
 * same owner, in processes forked from the same parent (fork keeps addresses, so every worker forked while a
 * lock was held shows it at the same address). Without an address: the same thread (cycles, busy loops) or the
 * same process. */
static const char *cause_of(const char *id);

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

static bool same_hang(const struct hd_snapshot *snapshot, const struct report_finding *a,
                      const struct report_finding *b)
{
    /* the workers one parent lost are one hang: the parent waiting for them, whichever died first */
    if (strcmp(a->id, "worker-died") == 0 && strcmp(b->id, "worker-died") == 0) {
        pid_t parent = worker_parent(snapshot, a->pid);
        return parent != 0 && parent == worker_parent(snapshot, b->pid);
    }
    /* Findings of one cause about the same process are one hang seen from two sides: the orphaned wait of a
     * forked child and the fork-unsafe runtime it sleeps in (fork-unsafe-runtime, cuda-inherited). */
    if (strcmp(a->id, b->id) != 0)
        return a->pid == b->pid && strcmp(cause_of(a->id), cause_of(b->id)) == 0;
    if (strcmp(a->id, "orphaned-wait") == 0) {
        /* the threads of one forked child asleep together, or siblings stuck inside the same runtime they all
         * inherited (each worker's own OpenMP team lies at its own address) */
        const struct hd_process *pa = hd_snapshot_find_process(snapshot, a->pid);
        const struct hd_process *pb = hd_snapshot_find_process(snapshot, b->pid);
        const char *runtime = evidence_value(a, "runtime");
        if (a->pid == b->pid || (runtime && same_text(runtime, evidence_value(b, "runtime")) && pa && pb &&
                                 pa->ppid == pb->ppid))
            return true;
    }
    const char *address = evidence_value(a, "address");
    if (address) {
        const struct hd_process *pa = hd_snapshot_find_process(snapshot, a->pid);
        const struct hd_process *pb = hd_snapshot_find_process(snapshot, b->pid);
        return same_text(address, evidence_value(b, "address")) &&
               same_text(evidence_value(a, "owner_pid"), evidence_value(b, "owner_pid")) &&
               (a->pid == b->pid || (pa && pb && pa->ppid == pb->ppid));
    }
    if (strcmp(a->id, "lock-cycle") == 0 || strcmp(a->id, "spinning") == 0)
        return a->tid == b->tid;
    return a->pid == b->pid;
}

static struct report_hang *add_hang(struct context *c, const char *cause, long finding, bool root, pid_t pid,
                                    pid_t tid)
{
    struct report_verdict *verdict = &c->analysis->verdict;
    struct report_hang *grown = reallocarray(verdict->hangs, verdict->nhangs + 1, sizeof *grown);
    if (!grown) {
        c->failed = true;
        return NULL;
    }
    verdict->hangs = grown;
    struct report_hang *hang = &verdict->hangs[verdict->nhangs++];
    *hang = (struct report_hang){ .cause = cause, .finding = finding, .root_cause = root, .pid = pid, .tid = tid };
    return hang;
}

static void hang_member(struct context *c, struct report_hang *hang, size_t finding)
{
    size_t *grown = hang ? reallocarray(hang->findings, hang->nfindings + 1, sizeof *grown) : NULL;
    if (!grown) {
        c->failed = true;
        return;
    }
    hang->findings = grown;
    hang->findings[hang->nfindings++] = finding;
}

/* One hang per distinct root cause, in the catalogue's order of preference. */
static void collect_root_causes(struct context *c)
{
    struct report_analysis *a = c->analysis;
    for (size_t r = 0; r < COUNT(root_causes); r++)
        for (size_t f = 0; f < a->nfindings && !c->failed; f++) {
            const struct report_finding *finding = &a->findings[f];
            if (strcmp(finding->id, root_causes[r].id) != 0)
                continue;
            struct report_hang *hang = NULL;
            for (size_t h = 0; h < a->verdict.nhangs && !hang; h++)
                for (size_t m = 0; m < a->verdict.hangs[h].nfindings && !hang; m++)
                    if (same_hang(c->snapshot, &a->findings[a->verdict.hangs[h].findings[m]], finding))
                        hang = &a->verdict.hangs[h];
            if (!hang)
                hang = add_hang(c, root_causes[r].cause, (long)f, true, finding->pid, finding->tid);
            hang_member(c, hang, f);
        }
}

static bool knotted(const struct report_node *node)
{
    /* pause() and sigsuspend() wait for a signal by design: a daemon's main thread, not a knot */
    return node->wake == REPORT_WAKE_NEVER && node->thread->wait.kind != HD_WAIT_SIGNAL;
}

static bool is_root_cause_id(const char *id)
{
    for (size_t r = 0; r < COUNT(root_causes); r++)
        if (strcmp(root_causes[r].id, id) == 0)
            return true;
    return false;
}

/* Threads asleep forever in a process that no finding is about: nobody who could wake them can run, but no rule
 * of the catalogue says why (a lone thread on a semaphore, a condition variable nobody will signal). That is a
 * deadlock in the wait-for graph's sense (DESIGN.md): hung, cause "deadlock", no root-cause finding. A process is
 * explained by a hang finding about it, or by a root-cause finding that names one of its threads as a member (the
 * parent left waiting for a dead worker); waiting-on-workers does not count for its members, the workers it
 * points at, which may hang unexplained. */
static void collect_unexplained_knots(struct context *c)
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
        for (size_t m = 0; is_root_cause_id(finding->id) && m < finding->nmembers; m++)
            explained[a->graph.nodes[finding->members[m]].process_index] = true;
    }
    for (size_t i = 0; i < a->graph.nnodes && !c->failed; i++) {
        const struct report_node *node = &a->graph.nodes[i];
        if (!knotted(node) || explained[node->process_index])
            continue;
        explained[node->process_index] = true;
        add_hang(c, "deadlock", -1, false, node->process->pid, node->thread->tid);
    }
    free(explained);
}

/* Threads asleep (not running, not in D) whose system call could not be read: their wait is unknown. */
static size_t unread_waits(const struct report_graph *graph)
{
    size_t count = 0;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct hd_thread *thread = graph->nodes[i].thread;
        count += thread->syscall.state == HD_SYSCALL_UNREAD && thread->state == 'S' && !thread->progressing;
    }
    return count;
}

/* Which threads a hang finding names, once, for the renderers' "is this thread worth a line" question. */
static void mark_named(struct context *c)
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

static void decide(struct context *c)
{
    struct report_analysis *a = c->analysis;
    struct report_verdict *verdict = &a->verdict;
    *verdict = (struct report_verdict){ .hung = REPORT_HUNG_NO, .cause = "none", .root_cause = -1 };
    for (size_t i = 0; i < a->graph.nnodes; i++)
        a->asleep_forever_exists |= a->graph.nodes[i].wake == REPORT_WAKE_NEVER;
    collect_root_causes(c);
    collect_unexplained_knots(c);
    /* only waiting-on-workers: the workers hang for a reason no rule names, and they wait for a signal */
    for (size_t f = 0; f < a->nfindings && verdict->nhangs == 0 && !c->failed; f++)
        if (a->findings[f].hang)
            hang_member(c, add_hang(c, "unknown", (long)f, false, a->findings[f].pid, a->findings[f].tid), f);
    for (size_t h = 0; h < verdict->nhangs && !c->failed; h++) {
        struct report_hang *hang = &verdict->hangs[h];
        hang->chain = chain_to(c, hd_snapshot_find_process(c->snapshot, hang->pid), hang->pid, &hang->nchain);
    }
    verdict->unread_waits = unread_waits(&a->graph);
    if (c->failed)
        return;
    if (verdict->nhangs == 0) {
        if (verdict->unread_waits > 0) {
            verdict->hung = REPORT_HUNG_UNKNOWN;
            verdict->cause = "unknown";
        }
        return;
    }
    const struct report_hang *first = &verdict->hangs[0];
    verdict->hung = REPORT_HUNG_YES;
    verdict->cause = first->cause;
    verdict->root_cause = first->root_cause ? first->finding : -1;
    verdict->pid = first->pid;
    verdict->tid = first->tid;
    verdict->chain = first->chain;
    verdict->nchain = first->nchain;
}

struct report_analysis *report_analyze(const struct hd_snapshot *snapshot)
{
    const struct report_catalogue *catalogue = report_catalogue_builtin();
    return catalogue ? report_analyze_with(snapshot, catalogue) : NULL;
}

struct report_analysis *report_analyze_with(const struct hd_snapshot *snapshot,
                                            const struct report_catalogue *catalogue)
{
    struct report_analysis *analysis = calloc(1, sizeof *analysis);
    if (!analysis)
        return NULL;
    analysis->catalogue = catalogue;
    if (!report_build_graph(snapshot, &analysis->graph)) {
        free(analysis);
        return NULL;
    }
    struct context c = { .snapshot = snapshot, .analysis = analysis };
    for (size_t r = 0; r < COUNT(rules) && !c.failed; r++)
        rules[r].apply(&c);
    c.failed = c.failed || !report_analyze_inheritance(snapshot, catalogue, analysis);
    if (!c.failed)
        c.failed = !report_add_specific_remedies(snapshot, analysis);
    if (!c.failed)
        decide(&c);
    if (!c.failed)
        mark_named(&c);
    if (c.failed) {
        report_analysis_free(analysis);
        return NULL;
    }
    return analysis;
}

void report_analysis_free(struct report_analysis *analysis)
{
    if (!analysis)
        return;
    for (size_t f = 0; f < analysis->nfindings; f++) {
        struct report_finding *finding = &analysis->findings[f];
        free(finding->summary);
        for (size_t e = 0; e < finding->nevidence; e++) {
            free(finding->evidence[e].name);
            free(finding->evidence[e].value);
        }
        free(finding->evidence);
        for (size_t r = 0; r < finding->nremedies; r++)
            free(finding->remedies[r]);
        free(finding->remedies);
        free(finding->members);
    }
    free(analysis->findings);
    for (size_t h = 0; h < analysis->verdict.nhangs; h++) {
        free(analysis->verdict.hangs[h].chain);
        free(analysis->verdict.hangs[h].findings);
    }
    free(analysis->verdict.hangs);
    free(analysis->named_by_hang);
    report_graph_release(&analysis->graph);
    free(analysis);
}

const char *report_confidence_name(enum report_confidence confidence)
{
    static const char *const names[] = {
        [REPORT_CERTAIN] = "certain", [REPORT_LIKELY] = "likely", [REPORT_POSSIBLE] = "possible",
        [REPORT_INFORMATIONAL] = "informational",
    };
    return names[confidence];
}

const char *report_wake_name(enum report_wake wake)
{
    static const char *const names[] = {
        [REPORT_WAKE_RUNNING] = "running",          [REPORT_WAKE_TIMER] = "timed wait",
        [REPORT_WAKE_OUTSIDE] = "waits on the outside", [REPORT_WAKE_KERNEL] = "in the kernel",
        [REPORT_WAKE_WAKER] = "can be woken",       [REPORT_WAKE_NEVER] = "asleep forever",
        [REPORT_WAKE_EXITED] = "exited",
    };
    return names[wake];
}

const char *report_edge_kind_name(enum report_edge_kind kind)
{
    static const char *const names[] = {
        [REPORT_EDGE_LOCK_OWNER] = "lock-owner", [REPORT_EDGE_JOIN] = "join", [REPORT_EDGE_FUTEX] = "futex",
        [REPORT_EDGE_PIPE] = "pipe",             [REPORT_EDGE_SOCKET] = "socket", [REPORT_EDGE_CHILD] = "child",
    };
    return names[kind];
}
