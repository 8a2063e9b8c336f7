/* The workers family (rule.h): worker-died, a worker that ended while its parent waits for what it would send,
 * and waiting-on-workers, a thread that only waits for processes that are themselves asleep forever. */
#include "rule.h"

#include "signals.h"

#include "describe.h"

#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

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
        /* a futex that is a mutex, rwlock, join or the GIL waits on that, whatever its owner's state (abandoned-lock
         * covers an owner that is gone), not on a worker: only one with no owner recorded may be what a worker's
         * result thread signals */
        bool waits_for_worker = kind == HD_WAIT_READ || kind == HD_WAIT_WRITE || kind == HD_WAIT_POLL ||
                                (kind == HD_WAIT_FUTEX && node->thread->wait.lock.kind == HD_LOCK_UNKNOWN);
        bool stuck = node->wake == REPORT_WAKE_NEVER ||
                     (node->wake == REPORT_WAKE_TIMER && !node->history.progressing);
        if (waits_for_worker && stuck)
            return node;
    }
    return NULL;
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

static void death_remedy(struct report_rule_context *c, struct report_finding *finding, int signal)
{
    for (size_t r = 0; r < COUNT(death_remedies); r++)
        if (death_remedies[r].signal == signal || death_remedies[r].signal == -1)
            rule_remedy(c, finding, death_remedies[r].remedy);
}

static void waiter_evidence(struct report_rule_context *c, struct report_finding *finding, const struct report_node *waiter)
{
    rule_evidence(c, finding, "waiter", "thread %d '%s' of process %d: %s%s", (int)waiter->thread->tid,
             waiter->thread->name, (int)waiter->process->pid, report_wait_label(waiter->thread),
             waiter->wake == REPORT_WAKE_TIMER ? ", times out and waits again" : ", no timeout");
    rule_member(c, finding, (size_t)(waiter - c->analysis->graph.nodes));
}

/* Could the parent have reaped its children itself? A thread of it in wait4/waitid is reaping (one child, or a
 * particular other one first: a zombie waiting its turn is not abandoned), and a thread that made progress across
 * the samples may have called waitpid between two of them. */
static bool parent_may_reap(const struct report_graph *graph, const struct hd_process *parent)
{
    size_t main_node = report_graph_find(graph, parent->pid);
    if (main_node == REPORT_NO_NODE)
        return true; /* not read: nothing says it could not */
    const struct report_graph_process *threads = &graph->processes[graph->nodes[main_node].process_index];
    for (size_t i = threads->first_node; i < threads->first_node + threads->nnodes; i++) {
        const struct hd_thread *thread = graph->nodes[i].thread;
        if (graph->nodes[i].history.progressing ||
            (thread->syscall.state == HD_SYSCALL_IN && thread->wait.kind == HD_WAIT_CHILD))
            return true;
    }
    return false;
}

static void add_dead_worker(struct report_rule_context *c, const struct hd_process *parent, const struct hd_process *child,
                            const struct report_node *waiter)
{
    /* A timed loop may be a parent that reaps lazily, between two timeouts: only likely, and only for a zombie no
     * sample saw reaped. Asleep for ever, nothing in the parent will ever look. */
    enum report_confidence confidence = waiter->wake == REPORT_WAKE_NEVER ? REPORT_CERTAIN : REPORT_LIKELY;
    char how[96];
    rule_describe_exit(child->exit_status, how, sizeof how);
    struct report_finding *finding = rule_finding_for(
        c, REPORT_WORKER_DIED, confidence, child->pid, child->pid,
        "worker %d '%s' %s and was never reaped, while thread %d '%s' of its parent %d still waits (%s)",
        (int)child->pid, child->comm, how, (int)waiter->thread->tid, waiter->thread->name, (int)parent->pid,
        report_wait_label(waiter->thread));
    rule_evidence(c, finding, "worker_pid", "%d", (int)child->pid);
    rule_evidence(c, finding, "exit", "%s", how);
    rule_evidence(c, finding, "wait_status", "0x%x", (unsigned)child->exit_status);
    waiter_evidence(c, finding, waiter);
    int signal = child->exit_status & 0x7f;
    death_remedy(c, finding, signal == 0x7f ? -2 : signal);
}

/* A child that died while its parent waits for what it would have sent and does not reap it: a zombie (its exit
 * status is known), or a child that vanished during sampling although its parent could not have reaped it: the
 * kernel did, because the parent ignores SIGCHLD (likely). A child its parent reaped itself vanished normally. */
void report_rule_worker_died(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < c->snapshot->nprocesses; p++) {
        const struct hd_process *child = &c->snapshot->processes[p];
        /* init reaps the orphans the kernel hands it, whenever it gets to them: they were never its workers */
        const struct hd_process *parent = child->ppid > 1 ? hd_snapshot_find_process(c->snapshot, child->ppid) : NULL;
        if (!parent || !report_zombie_throughout(child) || parent_may_reap(graph, parent))
            continue;
        const struct report_node *waiter = stuck_waiter(graph, parent);
        if (!waiter || (waiter->wake != REPORT_WAKE_NEVER && c->snapshot->samples < 2))
            continue;
        add_dead_worker(c, parent, child, waiter);
    }
    for (size_t d = 0; d < c->snapshot->ndeparted; d++) {
        const struct hd_departed *gone = &c->snapshot->departed[d];
        const struct hd_process *parent = gone->ppid > 1 ? hd_snapshot_find_process(c->snapshot, gone->ppid) : NULL;
        if (!parent || !parent->ignores_sigchld || parent_may_reap(graph, parent))
            continue;
        const struct report_node *waiter = stuck_waiter(graph, parent);
        if (!waiter)
            continue;
        struct report_finding *finding = rule_finding_for(
            c, REPORT_WORKER_DIED, REPORT_LIKELY, gone->pid, gone->pid,
            "worker %d '%s' vanished during sampling, while thread %d '%s' of its parent %d kept waiting (%s) "
            "without noticing", (int)gone->pid, gone->comm, (int)waiter->thread->tid, waiter->thread->name,
            (int)parent->pid, report_wait_label(waiter->thread));
        rule_evidence(c, finding, "worker_pid", "%d", (int)gone->pid);
        rule_evidence(c, finding, "exit", "unknown: reaped by the kernel before the last sample, as the parent ignores "
                                     "SIGCHLD");
        waiter_evidence(c, finding, waiter);
        death_remedy(c, finding, -2);
    }
}

/* What a timed wait that times out and waits again costs in a second at most: the wake-ups of a loop, not work */
#define LOOP_CPU_PER_SECOND_NS 5000000ULL

/* A timed wait that every sample found in the same call with the same arguments, having used hardly any CPU: it
 * times out and waits again (tini's sigtimedwait of a second), which counts switches but is no progress. Whether a
 * sample caught it between two waits is chance; this is not. */
static bool loops_in_the_same_call(const struct hd_snapshot *snapshot, const struct report_history *history)
{
    double seconds = snapshot->sampling_s > 1 ? snapshot->sampling_s : 1;
    return !history->syscall_changed && history->samples_seen >= 2 &&
           (double)history->cpu_delta_ns <= (double)LOOP_CPU_PER_SECOND_NS * seconds;
}

/* A thread that waits (for ever, or in a timed loop that never gets anything) on processes that are themselves
 * asleep forever: it points to the root cause, it is not one. */
void report_rule_waiting_on_workers(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    /* a thread of a cycle already named waits on the others of the cycle, not on workers that hang apart */
    bool *in_cycle = report_cycle_members(c->analysis);
    if (!in_cycle) {
        c->failed = true;
        return;
    }
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (in_cycle[i])
            continue;
        bool stuck = node->wake == REPORT_WAKE_NEVER ||
                     (node->wake == REPORT_WAKE_TIMER && node->thread->wait.kind != HD_WAIT_SLEEP &&
                      (!node->history.progressing || loops_in_the_same_call(c->snapshot, &node->history)));
        if (!stuck)
            continue;
        bool any_edge = false, all_hung = true, other_process = false;
        enum report_edge_kind through = REPORT_EDGE_CHILD;
        /* a graph without an edge has no array: no address into it */
        const struct report_edge *edges = node->nedges ? &graph->edges[node->first_edge] : NULL;
        for (size_t e = 0; e < node->nedges && all_hung; e++) {
            const struct report_edge *edge = &edges[e];
            any_edge = true;
            /* a thread of its own process that only waits to be woken (by this very thread, as like as not: the
             * queue feeder of a Python parent) runs nothing by itself */
            all_hung &= !report_edge_reaches_live(graph, edge, i, true);
            size_t target_process = edge->target == REPORT_TO_PROCESS ? edge->to : graph->nodes[edge->to].process_index;
            if (target_process != node->process_index &&
                (edge->kind == REPORT_EDGE_PIPE || edge->kind == REPORT_EDGE_SOCKET || edge->kind == REPORT_EDGE_CHILD ||
                 edge->kind == REPORT_EDGE_SIGNAL || edge->kind == REPORT_EDGE_PTY)) {
                other_process = true;
                /* a child's exit names the tie better than the pipes beside it */
                if (through != REPORT_EDGE_SIGNAL)
                    through = edge->kind;
            }
        }
        if (!any_edge || !all_hung || !other_process)
            continue;
        struct report_finding *finding = rule_finding(
            c, REPORT_WAITING_ON_WORKERS, REPORT_CERTAIN, node,
            "thread %d '%s' of process %d waits through %s on processes that are themselves asleep forever",
            (int)node->thread->tid, node->thread->name, (int)node->process->pid, rule_edge_words(through));
        char pids[256] = "";
        size_t used = 0;
        for (size_t e = 0; e < node->nedges; e++) {
            size_t first = report_edge_first(graph, &edges[e], i);
            if (first == REPORT_NO_NODE)
                continue;
            const struct hd_process *worker = graph->nodes[first].process;
            /* a relay (Python's forkserver) waits on its parent only for requests: its workers are its children */
            if (worker == node->process || (edges[e].kind != REPORT_EDGE_SIGNAL &&
                                             node->process->python_role == HD_PYTHON_ROLE_FORKSERVER &&
                                             worker->pid == node->process->ppid))
                continue;
            bool listed = false;
            for (size_t m = 0; finding && m < finding->nmembers && !listed; m++)
                listed = graph->nodes[finding->members[m]].process == worker;
            if (listed)
                continue;
            rule_member(c, finding, first);
            if (used < sizeof pids - 16)
                used += (size_t)snprintf(pids + used, sizeof pids - used, "%s%d", used ? ", " : "", (int)worker->pid);
        }
        rule_evidence(c, finding, "workers", "%s", pids);
        rule_evidence(c, finding, "timed_loop", "%s", node->wake == REPORT_WAKE_TIMER ? "yes: it times out and waits again" : "no");
        rule_remedy(c, finding, "Look at the workers' findings: this process only waits for them.");
    }
    free(in_cycle);
}

/* ---- replaced-worker ------------------------------------------------------------------------------------------- */

/* A pool starts its workers one right after the other: one started this much later than a sibling was started
 * later, as a replacement. */
#define REPLACED_AFTER_S 0.5

/* Is every thread of the process idle: asleep, neither on a CPU nor in the kernel (a pool's worker waiting for its
 * next task)? */
static bool all_idle(const struct report_graph *graph, const struct hd_process *process)
{
    const struct report_graph_process *threads = report_graph_process_of(graph, process);
    if (!threads || threads->nnodes == 0)
        return false;
    for (size_t i = threads->first_node; i < threads->first_node + threads->nnodes; i++) {
        enum report_wake wake = graph->nodes[i].wake;
        if (wake == REPORT_WAKE_RUNNING || wake == REPORT_WAKE_KERNEL || wake == REPORT_WAKE_EXITED ||
            graph->nodes[i].thread->syscall.state != HD_SYSCALL_IN)
            return false;
    }
    return true;
}

/* The thread of `process` that waits for its workers for a long time: its main thread if it sleeps without
 * timeout and is asleep forever or only timer threads could wake it, else any such thread. */
static size_t long_waiter(const struct report_rule_context *c, const struct hd_process *process, const bool *bound)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_graph_process *threads = report_graph_process_of(graph, process);
    size_t found = REPORT_NO_NODE;
    for (size_t i = threads ? threads->first_node : 0; threads && i < threads->first_node + threads->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        bool stuck = (node->wake == REPORT_WAKE_NEVER || (bound && bound[i])) && node->blocked_without_timeout &&
                     node->thread->blocked_for_known && node->thread->wait.kind == HD_WAIT_FUTEX;
        if (!stuck)
            continue;
        if (node->thread->tid == process->pid)
            return i;
        if (found == REPORT_NO_NODE)
            found = i;
    }
    return found;
}

/* A pool whose worker was killed (the OOM killer, a signal) and replaced: the pool starts a new worker, the task
 * the dead one held never returns, and the thread that waits for its result (multiprocessing's AsyncResult.get)
 * waits for ever while every worker sits idle. What shows it: a worker younger than that wait among siblings older
 * than it. The subject is the waiting thread, not an idle worker. */
void report_rule_replaced_worker(struct report_rule_context *c)
{
    const struct hd_snapshot *snapshot = c->snapshot;
    const struct report_graph *graph = &c->analysis->graph;
    const bool *bound = report_timer_bound(c, false);
    for (size_t p = 0; p < snapshot->nprocesses && !c->failed; p++) {
        const struct hd_process *parent = &snapshot->processes[p];
        size_t waiter = long_waiter(c, parent, bound);
        if (waiter == REPORT_NO_NODE)
            continue;
        double waited = graph->nodes[waiter].thread->blocked_for_s;
        const struct hd_process *young = NULL, *old = NULL;
        size_t workers = 0;
        bool idle = true;
        for (size_t w = 0; w < snapshot->nprocesses && idle; w++) {
            const struct hd_process *worker = &snapshot->processes[w];
            if (worker->ppid != parent->pid || worker == parent)
                continue;
            workers++;
            idle = all_idle(graph, worker);
            if (!young || worker->age_s < young->age_s)
                young = worker;
            if (!old || worker->age_s > old->age_s)
                old = worker;
        }
        if (!idle || workers < 2 || old->age_s - young->age_s < REPLACED_AFTER_S)
            continue;
        const struct report_node *node = &graph->nodes[waiter];
        /* whether it started after the wait began: the wait's clock restarts when a debugger (or an earlier
         * diagnosis) stopped the thread, so this is said only where the clock shows it */
        char when[96] = "";
        if (young->age_s < waited - 0.1)
            snprintf(when, sizeof when, ", %.1f s after that wait began", waited - young->age_s);
        struct report_finding *finding = rule_finding(
            c, REPORT_REPLACED_WORKER, REPORT_LIKELY, node,
            "thread %d '%s' of process %d waits without timeout while its %zu workers sit idle, and worker %d "
            "started %.1f s after its oldest sibling%s: it replaced a worker that ended, and what that worker held "
            "for the waiting thread will never come",
            (int)node->thread->tid, node->thread->name, (int)parent->pid, workers, (int)young->pid,
            old->age_s - young->age_s, when);
        rule_evidence(c, finding, "waited", "%.1f s without timeout", waited);
        rule_evidence(c, finding, "young_worker", "process %d, started %.1f s ago%s", (int)young->pid, young->age_s,
                      when);
        rule_evidence(c, finding, "older_worker", "process %d, started %.1f s ago", (int)old->pid, old->age_s);
        if (bound && bound[waiter])
            report_timer_evidence(c, finding, waiter, false);
        /* the pool's own threads and its workers are this hang, whatever cycles they form meanwhile */
        const struct report_graph_process *threads = report_graph_process_of(graph, parent);
        for (size_t i = threads->first_node; i < threads->first_node + threads->nnodes; i++)
            rule_member(c, finding, i);
        for (size_t w = 0; w < snapshot->nprocesses; w++) {
            const struct report_graph_process *worker = report_graph_process_of(graph, &snapshot->processes[w]);
            if (snapshot->processes[w].ppid == parent->pid && worker)
                for (size_t i = worker->first_node; i < worker->first_node + worker->nnodes; i++)
                    rule_member(c, finding, i);
        }
        rule_remedy(c, finding, "Find why the worker ended: the kernel's OOM killer sends SIGKILL and says so "
                                "(dmesg | grep -i 'killed process', journalctl -k, or the cgroup's memory.events); "
                                "a crash leaves a core dump (coredumpctl).");
        rule_remedy(c, finding, "multiprocessing.Pool does not notice a lost task: use "
                                "concurrent.futures.ProcessPoolExecutor (it raises BrokenProcessPool), or wait with "
                                "a timeout (AsyncResult.get(timeout=...)) and retry.");
        rule_remedy(c, finding, "Give the workers less to hold (fewer workers, smaller chunks, maxtasksperchild) or "
                                "the job more memory.");
    }
}
