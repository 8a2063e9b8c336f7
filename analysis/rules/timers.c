/* The timers family (rule.h): timer-only-wakers, a thread asleep without timeout for a long time whose only
 * possible wakers are threads that wake on timers and go back to sleep.
 *
 * The graph counts any thread in a timed wait as able to run, so one housekeeping timer (gRPC's timer_manager, a
 * Qt pool thread on its expiry timer, a pool's handler that sleeps 0.1 s in a loop) makes every ownerless futex of
 * its process look wakeable. A careful engineer asks more: has the sleeper waited long (its blocked-for, not the
 * sampling window), do its possible wakers do anything but wake on their timers, and does anything run or wait on
 * the outside world that could still wake it? When the answers are "yes, no, no", it is likely hung, never
 * certain: the timer thread might do something different the next time it wakes.
 */
#include "rule.h"

#include "buffer.h"
#include "describe.h"
#include "inheritance.h"

#include <stdio.h>
#include <stdlib.h>

/* A timer thread does nothing else when it wakes: at most this much CPU (plus a share of the sampled time). */
#define TIMER_CPU_MAX_S 0.005
#define TIMER_CPU_SHARE_MAX 0.02
/* Timer threads named as evidence of one stuck thread; more are counted. */
#define TIMERS_LISTED_MAX 6

static bool timed_wait(const struct hd_thread *thread)
{
    const struct hd_wait *wait = &thread->wait;
    return wait->kind == HD_WAIT_SLEEP || wait->timeout.kind == HD_TIMEOUT_FINITE ||
           wait->timeout.kind == HD_TIMEOUT_UNREADABLE;
}

/* Did the thread wake during the sampling (and go back into a timed wait, as it is now)? */
static bool woke_while_sampled(const struct report_history *history)
{
    return history->voluntary_switches_delta > 0 || history->syscall_changed;
}

/* Asleep in a timed wait now, as the last sample found it. */
static bool in_a_timed_wait_now(const struct hd_thread *thread)
{
    return thread->state != 'R' && thread->syscall.state == HD_SYSCALL_IN && timed_wait(thread);
}

/* Caught by the last sample on its way through a CPU (woken by its timer, or waiting for a CPU on a busy machine),
 * where only that sample found it in state R, and an earlier one found it in a timed futex wait: a timer thread
 * between two ticks. Two housekeepers that tick every 100 ms are so in about 1 diagnosis in 200 on an idle machine,
 * and more under load; a CI run under load saw it, and the stuck thread beside them was called not hung. */
static bool between_two_timed_waits(const struct report_node *node)
{
    const struct hd_thread *thread = node->thread;
    const struct hd_thread_sample *earlier = node->history.earlier_futex;
    /* R in the last sample alone, or asleep but out of any system call (in user space, between the two) */
    bool on_its_way = (thread->state == 'R' && node->history.samples_in_state_r == 1) ||
                      (thread->state == 'S' && thread->syscall.state == HD_SYSCALL_RUNNING &&
                       node->history.samples_in_state_r == 0);
    return on_its_way && earlier &&
           (earlier->timeout.kind == HD_TIMEOUT_FINITE || earlier->timeout.kind == HD_TIMEOUT_UNREADABLE);
}

/* A thread that merely wakes on a timer and goes back to sleep: in a timed wait now (or between two, as above),
 * hardly any CPU time while sampled, nothing outside the snapshot that could end its wait, and not the main thread
 * of its process (whose timed loop is the program's own, such as a scheduler's main loop). Seen waking while
 * sampled, unless `idle_timers_too`: then also one whose timer did not fire yet, if it is parked in a catalogued
 * runtime's own code (a Qt pool thread on its 30 s expiry timer), not in a task of the program's that sleeps. */
static bool merely_a_timer(const struct report_rule_context *c, const struct report_node *node, bool idle_timers_too)
{
    const struct hd_snapshot *snapshot = c->snapshot;
    const struct hd_thread *thread = node->thread;
    if (node->wake != REPORT_WAKE_TIMER && node->wake != REPORT_WAKE_RUNNING)
        return false;
    /* an earlier sample may have caught it on its way through a CPU: what tells a timer from a worker is its CPU
     * time, and where the samples found it */
    bool asleep_now = in_a_timed_wait_now(thread);
    if (thread->tid == node->process->pid || node->waits_outside || (!asleep_now && !between_two_timed_waits(node)))
        return false;
    if ((double)node->history.cpu_delta_ns / 1e9 > TIMER_CPU_MAX_S + TIMER_CPU_SHARE_MAX * snapshot->sampling_s)
        return false;
    if (woke_while_sampled(&node->history))
        return true;
    return asleep_now && idle_timers_too && report_parked_in_runtime(c->catalogue, node->process, thread) != NULL;
}

/* The answer for one kind of timer thread, worked out once. */
static bool *timer_bound_now(struct report_rule_context *c, bool idle_timers_too)
{
    const struct report_graph *graph = &c->analysis->graph;
    bool *seeds cleanup_free = calloc(graph->nnodes + 1, sizeof *seeds);
    bool *live cleanup_free = calloc(graph->nnodes + 1, sizeof *live);
    bool *bound cleanup_free = calloc(graph->nnodes + 1, sizeof *bound);
    if (!seeds || !live || !bound) {
        c->failed = true;
        return NULL;
    }
    /* what can still wake someone: a thread that runs or waits on the outside world, or in the kernel; and a
     * waiter that ran lately (blocked for less than the threshold, or for a time unknown): someone woke it, so the
     * wakeups of its process reach somewhere */
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        switch (node->wake) {
        case REPORT_WAKE_RUNNING:
        case REPORT_WAKE_TIMER:
        case REPORT_WAKE_OUTSIDE:
        case REPORT_WAKE_KERNEL:
            seeds[i] = !merely_a_timer(c, node, idle_timers_too);
            break;
        case REPORT_WAKE_WAKER:
            seeds[i] = !node->thread->blocked_for_known || node->thread->blocked_for_s < c->analysis->stuck_after_s;
            break;
        case REPORT_WAKE_NEVER:
        case REPORT_WAKE_EXITED:
            break;
        }
    }
    c->failed |= !report_graph_reach(graph, seeds, live);
    bool any = false;
    for (size_t i = 0; !c->failed && i < graph->nnodes; i++) {
        bound[i] = graph->nodes[i].wake == REPORT_WAKE_WAKER && !live[i] &&
                   rule_asleep_for_the_threshold(c, &graph->nodes[i]);
        any |= bound[i];
    }
    return any ? steal_pointer(&bound) : NULL;
}

const bool *report_timer_bound(struct report_rule_context *c, bool idle_timers_too)
{
    if (c->analysis->stuck_after_s <= 0)
        return NULL;
    if (!c->timer_bound_known[idle_timers_too]) {
        c->timer_bound[idle_timers_too] = timer_bound_now(c, idle_timers_too);
        c->timer_bound_known[idle_timers_too] = true;
    }
    return c->timer_bound[idle_timers_too];
}

/* The timer threads one edge of the stuck thread reaches (those of its OR-set's process, or the one thread). */
static void timers_of_edge(struct report_rule_context *c, struct report_finding *finding,
                           const struct report_edge *edge, size_t waiter, bool idle_timers_too, size_t *listed)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t first = edge->to, count = 1;
    if (edge->target == REPORT_TO_PROCESS) {
        first = graph->processes[edge->to].first_node;
        count = graph->processes[edge->to].nnodes;
    }
    for (size_t i = first; i < first + count; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (i == waiter || !merely_a_timer(c, node, idle_timers_too))
            continue;
        if ((*listed)++ >= TIMERS_LISTED_MAX)
            continue;
        const struct hd_thread *thread = node->thread;
        struct report_buffer wait = { 0 };
        if (in_a_timed_wait_now(thread))
            report_describe_wait(&wait, thread);
        else
            report_buffer_printf(&wait, "futex 0x%llx%s in an earlier sample; the last one caught it %s, between "
                                        "two waits",
                                 (unsigned long long)(node->history.earlier_futex
                                                          ? node->history.earlier_futex->wait_address : 0),
                                 node->history.earlier_futex && node->history.earlier_futex->futex_private
                                     ? " (private)" : "",
                                 thread->state == 'R' ? "on a CPU" : "out of its wait");
        rule_evidence(c, finding, "timer_waker",
                      "thread %d '%s' of process %d waits with a timeout (%s) and woke %llu times in the %.1f s "
                      "sampled, without waking it",
                      (int)thread->tid, thread->name, (int)node->process->pid, wait.data ? wait.data : "",
                      (unsigned long long)node->history.voluntary_switches_delta, c->snapshot->sampling_s);
        report_buffer_release(&wait);
    }
}

void report_timer_evidence(struct report_rule_context *c, struct report_finding *finding, size_t stuck,
                           bool idle_timers_too)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_node *node = &graph->nodes[stuck];
    const struct hd_thread *thread = node->thread;
    if (thread->waited_before_s > 0)
        rule_evidence(c, finding, "blocked_for",
                      "%.1f s without timeout (--stuck-after %.0f s), %.1f s of it before a diagnosis %.0f s ago "
                      "stopped it (the wait ledger kept the clock that stop restarted)",
                      thread->blocked_for_s, c->analysis->stuck_after_s, thread->waited_before_s,
                      c->snapshot->taken_at - thread->earlier_stop_at);
    else
        rule_evidence(c, finding, "blocked_for", "%.1f s without timeout (--stuck-after %.0f s)",
                      thread->blocked_for_s, c->analysis->stuck_after_s);
    size_t listed = 0;
    for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++)
        timers_of_edge(c, finding, &graph->edges[e], stuck, idle_timers_too, &listed);
    if (listed > TIMERS_LISTED_MAX)
        rule_evidence(c, finding, "timer_waker", "and %zu more threads that only wake on timers",
                      listed - TIMERS_LISTED_MAX);
    rule_evidence(c, finding, "could_wake_it", "%s",
                  listed ? "only those timer threads, and threads that are themselves asleep as long: nothing that "
                           "runs or waits on the outside world"
                         : "only threads that are themselves asleep as long: nothing that runs or waits on the "
                           "outside world");
}

/* ---- a poll in vain ---- */

/* Samples a poller must have been seen at its futex in: fewer do not show a loop. One more sample may have caught
 * it away, between two waits (on its way back, or taking the GIL back in a Python caller): a CI run saw gRPC's
 * poller so in 1 of 6 samples, and the second diagnosis of the double run said "not hung". */
#define POLL_SAMPLES_MIN 3
#define POLL_SAMPLES_AWAY_MAX 1

/* Every wait of `node` can be ended only by threads of its own process. */
static bool waits_only_within_its_process(const struct report_graph *graph, const struct report_node *node)
{
    for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        size_t process = edge->target == REPORT_TO_PROCESS ? edge->to : graph->nodes[edge->to].process_index;
        if (process != node->process_index)
            return false;
    }
    return !node->waits_outside;
}

/* Could this thread, other than the poller, set what the poller waits for? Not if it is asleep forever, merely
 * wakes on a timer (idle timer threads too), or has slept without timeout for the threshold on something only its
 * own process could end. */
static bool could_set_it(struct report_rule_context *c, const struct report_node *node)
{
    switch (node->wake) {
    case REPORT_WAKE_NEVER:
    case REPORT_WAKE_EXITED:
        return false;
    case REPORT_WAKE_WAKER:
        return !(rule_asleep_for_the_threshold(c, node) &&
                 waits_only_within_its_process(&c->analysis->graph, node));
    case REPORT_WAKE_RUNNING:
    case REPORT_WAKE_TIMER:
    case REPORT_WAKE_OUTSIDE:
    case REPORT_WAKE_KERNEL:
        return !merely_a_timer(c, node, true);
    }
    return true;
}

bool report_polls_in_vain(struct report_rule_context *c, size_t poller)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_node *node = &graph->nodes[poller];
    const struct hd_thread *thread = node->thread;
    const struct hd_wait *wait = &thread->wait;
    /* running: it was seen to change (its timeout's deadline in its arguments) */
    if (c->analysis->stuck_after_s <= 0 ||
        (node->wake != REPORT_WAKE_TIMER && node->wake != REPORT_WAKE_RUNNING) || thread->state == 'R' ||
        thread->syscall.state != HD_SYSCALL_IN || wait->kind != HD_WAIT_FUTEX || !wait->futex_private ||
        wait->timeout.kind != HD_TIMEOUT_FINITE || node->waits_outside)
        return false;
    /* at its futex in every sample but one at most, woke (its timeout) and went back, and did hardly anything in
     * between */
    const struct report_history *history = &node->history;
    unsigned away = history->samples_seen - history->samples_on_this_futex;
    if (history->samples_on_this_futex < POLL_SAMPLES_MIN || history->samples_on_this_futex > history->samples_seen ||
        away > POLL_SAMPLES_AWAY_MAX || history->samples_in_state_r > away || history->voluntary_switches_delta == 0 ||
        (double)history->cpu_delta_ns / 1e9 > TIMER_CPU_MAX_S + TIMER_CPU_SHARE_MAX * c->snapshot->sampling_s)
        return false;
    const struct report_graph_process *process = &graph->processes[node->process_index];
    for (size_t i = process->first_node; i < process->first_node + process->nnodes; i++)
        if (i != poller && could_set_it(c, &graph->nodes[i]))
            return false;
    return true;
}

void report_poll_evidence(struct report_rule_context *c, struct report_finding *finding, size_t poller)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_node *node = &graph->nodes[poller];
    const struct hd_thread *thread = node->thread;
    rule_evidence(c, finding, "polls",
                  "futex 0x%llx (private) with a timeout: at it in %u of %u samples over %.1f s, it woke %llu "
                  "times only to wait there again, with %.1f ms of CPU",
                  (unsigned long long)thread->wait.address, node->history.samples_on_this_futex,
                  node->history.samples_seen, c->snapshot->sampling_s,
                  (unsigned long long)node->history.voluntary_switches_delta,
                  (double)node->history.cpu_delta_ns / 1e6);
    const struct report_graph_process *process = &graph->processes[node->process_index];
    size_t listed = 0;
    for (size_t i = process->first_node; i < process->first_node + process->nnodes; i++) {
        const struct report_node *other = &graph->nodes[i];
        if (i == poller || other->wake == REPORT_WAKE_NEVER || other->wake == REPORT_WAKE_EXITED ||
            listed++ >= TIMERS_LISTED_MAX)
            continue;
        if (other->wake == REPORT_WAKE_WAKER)
            rule_evidence(c, finding, "asleep", "thread %d '%s' has been asleep %.1f s without timeout",
                          (int)other->thread->tid, other->thread->name, other->thread->blocked_for_s);
        else
            rule_evidence(c, finding, "timer_waker", "thread %d '%s' waits with a timeout and woke %llu time%s in "
                          "the %.1f s sampled, doing nothing else",
                          (int)other->thread->tid, other->thread->name,
                          (unsigned long long)other->history.voluntary_switches_delta,
                          other->history.voluntary_switches_delta == 1 ? "" : "s", c->snapshot->sampling_s);
    }
    rule_evidence(c, finding, "could_wake_it",
                  "nothing of its process that runs or waits on the outside world: no thread there could set what "
                  "it waits for, and it is a private futex, which no other process can wake");
}

/* Does the node wait for threads of its own process (a futex of its own, a thread it joins)? A thread that waits
 * for other processes (wait4 on a child, a pipe from a worker) waits on their hang, not one of its own. */
static bool waits_within_its_process(const struct report_graph *graph, size_t node)
{
    const struct report_node *n = &graph->nodes[node];
    for (size_t e = n->first_edge; e < n->first_edge + n->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        if ((edge->target == REPORT_TO_PROCESS && edge->to == n->process_index) ||
            (edge->target == REPORT_TO_THREAD && graph->nodes[edge->to].process_index == n->process_index))
            return true;
    }
    return false;
}

/* The subject of a process's stuck threads: its main thread if it is one of them, else the one asleep longest;
 * only threads that wait within the process count. */
static size_t subject_of(const struct report_graph *graph, const struct report_graph_process *process,
                         const bool *bound)
{
    size_t subject = REPORT_NO_NODE;
    for (size_t i = process->first_node; i < process->first_node + process->nnodes; i++) {
        if (!bound[i] || !waits_within_its_process(graph, i))
            continue;
        if (graph->nodes[i].thread->tid == process->process->pid)
            return i;
        if (subject == REPORT_NO_NODE || graph->nodes[i].thread->blocked_for_s > graph->nodes[subject].thread->blocked_for_s)
            subject = i;
    }
    return subject;
}

size_t report_timer_bound_subject(const struct report_rule_context *c, const struct hd_process *process,
                                  const bool *bound)
{
    const struct report_graph_process *threads = report_graph_process_of(&c->analysis->graph, process);
    return bound && threads ? subject_of(&c->analysis->graph, threads, bound) : REPORT_NO_NODE;
}

/* One finding per process with threads that only timers could wake: about its main thread when that is one of
 * them, with the others as members. */
void report_rule_timer_only_wakers(struct report_rule_context *c)
{
    const bool *bound = report_timer_bound(c, false);
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; bound && p < graph->nprocesses && !c->failed; p++) {
        const struct report_graph_process *process = &graph->processes[p];
        size_t subject = subject_of(graph, process, bound);
        if (subject == REPORT_NO_NODE)
            continue;
        const struct report_node *node = &graph->nodes[subject];
        struct report_buffer wait = { 0 };
        report_describe_wait(&wait, node->thread);
        size_t others = 0;
        for (size_t i = process->first_node; i < process->first_node + process->nnodes; i++)
            others += bound[i] && i != subject;
        struct report_finding *finding = rule_finding(
            c, REPORT_TIMER_ONLY_WAKERS, REPORT_LIKELY, node,
            "thread %d '%s' of process %d has been asleep %.0f s without timeout (%s), and the only threads that "
            "could wake it wake on timers and go back to sleep%s: likely hung",
            (int)node->thread->tid, node->thread->name, (int)process->process->pid, node->thread->blocked_for_s,
            wait.data ? wait.data : "", others ? ", as do the other threads asleep as long" : "");
        report_buffer_release(&wait);
        report_timer_evidence(c, finding, subject, false);
        for (size_t i = process->first_node; i < process->first_node + process->nnodes; i++)
            if (bound[i])
                rule_member(c, finding, i);
        rule_remedy(c, finding, "Diagnose again in a while: a thread still asleep in the same wait, with the same "
                                "timer threads ticking, is hung; one whose wait ended was only slow.");
        rule_remedy(c, finding, "Find who was to wake it (the thread that signals this condition variable, the "
                                "callback that completes this call): it is gone, never started, or waits for this "
                                "thread. In a forked child, it may have stayed in the parent.");
    }
}
