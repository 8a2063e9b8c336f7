/* atomics-deadlock (rule.h): JavaScript threads of one process (Node's main thread, its worker_threads) each asleep
 * in Atomics.wait with no timeout, while no JavaScript thread of the process is left to call Atomics.notify.
 *
 * V8 does not sleep on the SharedArrayBuffer's word: Atomics.wait parks its thread on a condition variable of its
 * own (FutexEmulation), so the futex view sees a condition wait that any thread could signal, and the process's
 * native threads (V8's platform workers, libuv's poll and pool threads) look like wakers. They are not: only
 * JavaScript calls Atomics.notify (or terminates a worker), and a JavaScript thread runs JavaScript only when it is
 * not parked. When every one of them is parked without a timeout, none ever will. A JavaScript thread that is idle
 * in its event loop, or parked with a timeout, can still notify: then this rule says nothing. */
#include "rule.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

/* Frames that say a thread runs a V8 isolate: Node's main loop and a worker's, and the entry into JavaScript of any
 * embedder. */
static const char *const javascript_thread_frames[] = {
    "node::NodeMainInstance::Run*", "node::worker::Worker::Run*", "Builtins_JSEntry*",
};
/* The frame of Atomics.wait's sleep (v8/src/execution/futex-emulation.cc) */
static const char *const atomics_wait_frames[] = { "v8::internal::FutexEmulation::Wait*" };

#define FRAMES_SEARCHED 64

static bool has_frame_like(const struct hd_thread *thread, const char *const *patterns, size_t npatterns)
{
    for (size_t f = 0; f < thread->stack.nframes && f < FRAMES_SEARCHED; f++) {
        const char *symbol = thread->stack.frames[f].symbol;
        for (size_t p = 0; symbol && p < npatterns; p++)
            if (fnmatch(patterns[p], symbol, 0) == 0)
                return true;
    }
    return false;
}

static bool runs_javascript(const struct hd_thread *thread)
{
    return thread->stack.state == HD_STACK_TAKEN &&
           has_frame_like(thread, javascript_thread_frames, COUNT(javascript_thread_frames));
}

/* Parked in Atomics.wait for good: in its futex wait without a timeout, and not running. */
static bool parked_in_atomics_wait(const struct hd_thread *thread)
{
    return thread->stack.state == HD_STACK_TAKEN && thread->state != 'R' && thread->wait.kind == HD_WAIT_FUTEX &&
           thread->wait.timeout.kind == HD_TIMEOUT_NONE &&
           has_frame_like(thread, atomics_wait_frames, COUNT(atomics_wait_frames));
}

static const char *thread_role(const struct hd_thread *thread, const struct hd_process *process)
{
    static const char *const worker[] = { "node::worker::Worker::Run*" };
    if (has_frame_like(thread, worker, COUNT(worker)))
        return "a worker thread";
    return thread->tid == process->pid ? "the main thread" : "a JavaScript thread";
}

#define PARKED_LISTED 8

void report_rule_atomics_deadlock(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < graph->nprocesses; p++) {
        const struct report_graph_process *threads = &graph->processes[p];
        size_t javascript = 0, parked = 0, first_parked = REPORT_NO_NODE;
        bool all_read = true;
        for (size_t n = threads->first_node; n < threads->first_node + threads->nnodes && all_read; n++) {
            const struct hd_thread *thread = graph->nodes[n].thread;
            /* a live thread whose stack was not read could be a JavaScript thread free to notify */
            all_read = graph->nodes[n].wake == REPORT_WAKE_EXITED || thread->stack.state == HD_STACK_TAKEN;
            if (graph->nodes[n].wake == REPORT_WAKE_EXITED || !runs_javascript(thread))
                continue;
            javascript++;
            if (!parked_in_atomics_wait(thread))
                break;
            parked++;
            if (first_parked == REPORT_NO_NODE)
                first_parked = n;
        }
        if (!all_read || javascript == 0 || parked != javascript || rule_named_by_a_hang(c->analysis, first_parked))
            continue;
        const struct hd_process *process = threads->process;
        struct report_finding *finding =
            parked == 1
                ? rule_finding(c, REPORT_ATOMICS_DEADLOCK, REPORT_CERTAIN, &graph->nodes[first_parked],
                               "the only JavaScript thread of process %d '%s' waits in Atomics.wait with no timeout, "
                               "and no other is left to call Atomics.notify",
                               (int)process->pid, process->comm)
                : rule_finding(c, REPORT_ATOMICS_DEADLOCK, REPORT_CERTAIN, &graph->nodes[first_parked],
                               "the %zu JavaScript threads of process %d '%s' all wait in Atomics.wait with no "
                               "timeout, and none is left to call Atomics.notify: they wait on each other",
                               parked, (int)process->pid, process->comm);
        size_t listed = 0;
        for (size_t n = threads->first_node; n < threads->first_node + threads->nnodes; n++) {
            const struct hd_thread *thread = graph->nodes[n].thread;
            if (graph->nodes[n].wake == REPORT_WAKE_EXITED || !runs_javascript(thread))
                continue;
            rule_member(c, finding, n);
            if (listed++ >= PARKED_LISTED)
                continue;
            char asleep[48] = "";
            if (thread->blocked_for_known)
                snprintf(asleep, sizeof asleep, ", asleep %.1f s", thread->blocked_for_s);
            rule_evidence(c, finding, "waiter", "thread %d '%s', %s, in Atomics.wait with no timeout%s",
                          (int)thread->tid, thread->name, thread_role(thread, process), asleep);
        }
        rule_evidence(c, finding, "others",
                      "the process's other %zu threads run no JavaScript (V8's platform workers, libuv's threads): "
                      "none calls Atomics.notify",
                      threads->nnodes - parked);
        rule_remedy(c, finding, "Make sure every Atomics.wait has a thread that will notify it after its store: a "
                                "thread must not wait for a word that only a thread waiting on it would set. Give the "
                                "waits a timeout that logs (Atomics.wait(array, index, value, ms) returns "
                                "'timed-out'), or wait with Atomics.waitAsync on the main thread, whose event loop "
                                "then keeps running.");
    }
}
