/* The wake-up family (rule.h): no-waker, a thread asleep forever on a futex that records no owner (a condition
 * variable, a semaphore, a Python Event or Queue), or an asyncio event loop idle in its selector for good, when no
 * thread that could wake it can run, and no other rule has said why. The wait-for graph already calls such a knot
 * a deadlock (DESIGN.md: "a single-threaded process sleeping on a private futex with no timeout is the simplest
 * knot"); this rule names it, with the threads that could have woken it and what each waits for instead, and the
 * lock it holds that one of them needs.
 */
#include "rule.h"

#include "describe.h"
#include "python_view.h"
#include "signals.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The threads named as evidence of one finding; more are counted. */
#define THREADS_LISTED_MAX 8

/* What a thread waits in, by the functions on its native stack (exported names, which stripped libraries keep, or
 * the name a caller called a static function by):
 * row by row, so that a row that names the wait more precisely wins over one matched further in (C++'s
 * condition_variable waits in pthread_cond_wait). */
static const struct {
    const char *pattern;
    const char *object;
} wake_up_waits[] = {
    { "std::condition_variable::wait*", "a C++ std::condition_variable" },
    { "std::_V2::condition_variable_any::wait*", "a C++ std::condition_variable_any" },
    { "std::sync::*Condvar*::wait*", "a Rust std::sync::Condvar" },
    { "g_cond_wait*", "a GLib GCond" },
    { "g_async_queue_pop*", "a GLib GAsyncQueue" },
    { "pthread_cond_wait*", "a condition variable (pthread_cond_wait)" },
    { "__pthread_cond_wait*", "a condition variable (pthread_cond_wait)" },
    { "sem_wait*", "a semaphore (sem_wait)" },
    { "__new_sem_wait*", "a semaphore (sem_wait)" },
    { "pthread_barrier_wait*", "a barrier (pthread_barrier_wait)" },
    { "__lll_lock_wait*", "a glibc internal lock (__lll_lock_wait)" },
};

/* What a thread waits in: "in" and "the selector of asyncio's event loop (EpollSelector.select)" for a loop in its
 * selector; "in" and "Python's Event.wait (threading.py)", the library call the program's own line made, for a
 * thread with a Python stack; "waiting for" and the lock, for a lock with a recorded owner; else "on" and the
 * native stack's row, or the futex itself. The words are written into `out`; *preposition is static. */
static const char *waited_in(const struct hd_thread *thread, char *out, size_t size, const char **preposition)
{
    const struct hd_python_frame *place = report_python_place(thread);
    *preposition = "in";
    if (thread->npython_frames > 0 && thread->wait.kind == HD_WAIT_POLL &&
        report_python_role(thread) == REPORT_ROLE_EVENT_LOOP) {
        const char *function = thread->python_frames[0].function;
        snprintf(out, size, "the selector of asyncio's event loop (%s)", function ? function : "?");
        return out;
    }
    if (place && place > thread->python_frames) {
        const struct hd_python_frame *call = place - 1;
        const char *slash = call->file ? strrchr(call->file, '/') : NULL;
        snprintf(out, size, "Python's %s (%s)", call->function ? call->function : "?",
                 slash ? slash + 1 : call->file ? call->file : "?");
        return out;
    }
    const struct hd_lock *lock = &thread->wait.lock;
    if (thread->wait.kind == HD_WAIT_FUTEX && lock->kind != HD_LOCK_UNKNOWN && lock->owner_tid > 0) {
        *preposition = "waiting for";
        snprintf(out, size, "the %s 0x%" PRIx64 " that thread %d holds", report_lock_noun(lock), lock->object_address,
                 (int)lock->owner_tid);
        return out;
    }
    *preposition = "on";
    for (size_t r = 0; thread->stack.state == HD_STACK_TAKEN && r < COUNT(wake_up_waits); r++)
        for (size_t f = 0; f < thread->stack.nframes; f++) {
            /* a stripped library's static function is named by what its caller called (glibc 2.43's sem_wait) */
            const struct hd_frame *frame = &thread->stack.frames[f];
            const char *symbol = frame->symbol ? frame->symbol : frame->called_as;
            if (symbol && fnmatch(wake_up_waits[r].pattern, symbol, 0) == 0) {
                snprintf(out, size, "%s", wake_up_waits[r].object);
                return out;
            }
        }
    snprintf(out, size, "%s",
             thread->wait.kind == HD_WAIT_FUTEX ? "a futex that records no owner" : report_wait_label(thread));
    return out;
}

/* Asleep forever on a futex that records no owner: it waits to be woken, by anyone who can reach the word. */
static bool waits_for_a_wake_up(const struct report_node *node)
{
    const struct hd_wait *wait = &node->thread->wait;
    return node->wake == REPORT_WAKE_NEVER && node->thread->syscall.state == HD_SYSCALL_IN &&
           wait->kind == HD_WAIT_FUTEX && wait->lock.kind == HD_LOCK_UNKNOWN &&
           !(wait->operation && strcmp(wait->operation, "futex_waitv") == 0);
}

/* An asyncio event loop asleep forever in its selector: no callback of its runs (a wait inside one is
 * event-loop-blocked's), no timer of its is due (the selector's timeout would be finite), and nothing that could
 * make one of its files ready can run. Every task it has awaits something nobody will complete; the tasks' own
 * waits are not on the thread's stack (a suspended coroutine is no frame). */
static bool loop_idle_for_good(const struct report_node *node)
{
    const struct hd_thread *thread = node->thread;
    return node->wake == REPORT_WAKE_NEVER && thread->syscall.state == HD_SYSCALL_IN &&
           thread->wait.kind == HD_WAIT_POLL && !report_waits_for_a_signal_by_design(node) &&
           thread->npython_frames > 0 &&
           report_python_file_is(thread->python_frames[0].file, "selectors.py") &&
           report_python_role(thread) == REPORT_ROLE_EVENT_LOOP;
}

/* Per process: is a hang finding about it already (its subject is, or a root cause names one of its threads as a
 * member), as the verdict counts a knot explained (verdict.c)? Then that finding says why, and this rule leaves the
 * process alone; waiting-on-workers names its workers without explaining them. NULL when memory ran out. */
static bool *explained_processes(const struct report_analysis *analysis)
{
    const struct report_graph *graph = &analysis->graph;
    bool *explained = calloc(graph->nprocesses + 1, sizeof *explained);
    for (size_t f = 0; explained && f < analysis->nfindings; f++) {
        const struct report_finding *finding = &analysis->findings[f];
        if (!finding->hang)
            continue;
        size_t subject = report_graph_find(graph, finding->tid);
        if (subject != REPORT_NO_NODE && graph->nodes[subject].process->pid == finding->pid)
            explained[graph->nodes[subject].process_index] = true;
        for (size_t p = 0; subject == REPORT_NO_NODE && p < graph->nprocesses; p++)
            explained[p] |= graph->processes[p].process->pid == finding->pid;
        for (size_t m = 0; report_rule_rank(finding->kind) && m < finding->nmembers; m++)
            explained[graph->nodes[finding->members[m]].process_index] = true;
    }
    return explained;
}

/* Per node: a thread that waits for a mutex or rwlock the node's thread owns (the first such), or REPORT_NO_NODE;
 * NULL when memory ran out. Found through each waiter's recorded owner, so that a pool of thousands costs n log n. */
static size_t *lock_waiters(const struct report_graph *graph)
{
    size_t *waiter = malloc((graph->nnodes + 1) * sizeof *waiter);
    for (size_t n = 0; waiter && n < graph->nnodes; n++)
        waiter[n] = REPORT_NO_NODE;
    for (size_t n = 0; waiter && n < graph->nnodes; n++) {
        if (!rule_waits_on_owned_lock(&graph->nodes[n]))
            continue;
        size_t owner = report_graph_find(graph, graph->nodes[n].thread->wait.lock.owner_tid);
        if (owner != REPORT_NO_NODE && owner != n && waiter[owner] == REPORT_NO_NODE)
            waiter[owner] = n;
    }
    return waiter;
}

/* Does an edge of `node` before edge `e` point where `e` does? A loop's fds that its own process holds are an edge
 * each, all to that process. */
static bool reached_before(const struct report_graph *graph, const struct report_node *node, size_t e)
{
    for (size_t before = node->first_edge; before < e; before++)
        if (graph->edges[before].target == graph->edges[e].target && graph->edges[before].to == graph->edges[e].to)
            return true;
    return false;
}

/* The threads that could have woken `sleeper` (its futex's edges: the other threads of each process that can
 * reach the word), each asleep forever or gone, as evidence of `finding`; how many there are (only that, with no
 * finding). */
static size_t possible_wakers(struct report_rule_context *c, struct report_finding *finding, size_t sleeper)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_node *node = &graph->nodes[sleeper];
    size_t count = 0;
    for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        if (reached_before(graph, node, e))
            continue;
        size_t first = edge->to, last = edge->to + 1;
        if (edge->target == REPORT_TO_PROCESS) {
            first = graph->processes[edge->to].first_node;
            last = first + graph->processes[edge->to].nnodes;
        }
        for (size_t n = first; n < last; n++) {
            if (n == sleeper)
                continue;
            const struct hd_thread *thread = graph->nodes[n].thread;
            if (count++ >= THREADS_LISTED_MAX || !finding)
                continue;
            if (graph->nodes[n].wake == REPORT_WAKE_EXITED) {
                rule_evidence(c, finding, "waker", "thread %d '%s' of process %d could wake it, but has exited",
                              (int)thread->tid, thread->name, (int)graph->nodes[n].process->pid);
                continue;
            }
            char what[256], where[512];
            const char *preposition;
            waited_in(thread, what, sizeof what, &preposition);
            rule_evidence(c, finding, "waker", "thread %d '%s' of process %d could wake it, but is asleep forever "
                          "itself, %s %s%s", (int)thread->tid, thread->name, (int)graph->nodes[n].process->pid,
                          preposition, what, report_python_where(thread, where, sizeof where));
        }
    }
    if (!finding)
        return count;
    if (count > THREADS_LISTED_MAX)
        rule_evidence(c, finding, "waker", "and %zu more threads, each asleep forever", count - THREADS_LISTED_MAX);
    if (count == 0)
        rule_evidence(c, finding, "waker", "none: no other thread could (it is the only thread of process %d, and "
                      "nothing another process holds or shares can end its wait)", (int)node->process->pid);
    return count;
}

/* The sleeper the finding is about: one holding a lock another thread waits for (its waker, most likely), else
 * the main thread, else the first. */
static size_t subject_of(const struct report_graph *graph, const size_t *lock_waiter, const size_t *sleepers,
                         size_t count)
{
    for (size_t s = 0; s < count; s++)
        if (lock_waiter[sleepers[s]] != REPORT_NO_NODE)
            return sleepers[s];
    for (size_t s = 0; s < count; s++)
        if (graph->nodes[sleepers[s]].thread->tid == graph->nodes[sleepers[s]].process->pid)
            return sleepers[s];
    return sleepers[0];
}

/* Does the program's own line of `thread` call `function` of the standard library's `file` ("threading.py")? */
static bool python_calls(const struct hd_thread *thread, const char *file, const char *function)
{
    const struct hd_python_frame *place = report_python_place(thread);
    if (!place || place == thread->python_frames)
        return false;
    const struct hd_python_frame *call = place - 1;
    const char *name = report_python_bare_name(call->function);
    return report_python_file_is(call->file, file) && name && strcmp(name, function) == 0;
}

/* The signals a Python handler may end the wait of `node` with: CPython runs signal handlers in the main thread,
 * and a lock acquire there returns to run them, so a handler that sets what the thread waits for (a service's
 * stop.set() on SIGTERM) ends its wait; the graph cannot tell whether this one does. Those a program catches to be
 * told what to do (signals.h) when the node is such a wait, else 0. */
static uint64_t python_handler_signals(const struct report_node *node)
{
    const struct hd_thread *thread = node->thread;
    if (thread->tid != node->process->pid || thread->npython_frames == 0 || thread->wait.kind != HD_WAIT_FUTEX)
        return 0;
    return report_signals_by_design(node->process, report_signals_caught(node->process));
}

static void no_waker_finding(struct report_rule_context *c, const size_t *lock_waiter, const size_t *sleepers,
                             size_t count)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t subject = subject_of(graph, lock_waiter, sleepers, count);
    const struct report_node *node = &graph->nodes[subject];
    const struct hd_thread *thread = node->thread;
    size_t holder_waiter = lock_waiter[subject];
    char object[256], at[32] = "";
    const char *preposition;
    waited_in(thread, object, sizeof object, &preposition);
    if (thread->wait.kind == HD_WAIT_FUTEX)
        snprintf(at, sizeof at, " at 0x%" PRIx64, thread->wait.address);
    uint64_t handled = python_handler_signals(node);
    enum report_confidence confidence = handled ? REPORT_LIKELY : REPORT_CERTAIN;
    struct report_finding *finding;
    if (holder_waiter != REPORT_NO_NODE) {
        const struct hd_thread *waiter = graph->nodes[holder_waiter].thread;
        finding = rule_finding(c, REPORT_NO_WAKER, confidence, node,
                               "thread %d '%s' of process %d sleeps forever %s %s%s while it holds the %s 0x%" PRIx64
                               " that thread %d '%s' waits for, and no thread that could wake it can run: it waits "
                               "for a wake-up while holding a lock its waker needs",
                               (int)thread->tid, thread->name, (int)node->process->pid, preposition, object, at,
                               report_lock_noun(&waiter->wait.lock), waiter->wait.lock.object_address,
                               (int)waiter->tid, waiter->name);
    } else if (loop_idle_for_good(node)) {
        finding = rule_finding(c, REPORT_NO_WAKER, confidence, node,
                               "the asyncio event loop of thread %d '%s' (process %d) waits in its selector with no "
                               "timer due, and nothing that could make one of its files ready can run: every task "
                               "it runs awaits something nobody will complete (a future or event never set, a queue "
                               "never fed)",
                               (int)thread->tid, thread->name, (int)node->process->pid);
    } else if (possible_wakers(c, NULL, subject) == 0) {
        finding = rule_finding(c, REPORT_NO_WAKER, confidence, node,
                               "thread %d '%s', the only thread of process %d, sleeps forever %s %s%s: nothing is "
                               "left to wake it (the thread that was to, exited or never started, or woke it before "
                               "it waited)",
                               (int)thread->tid, thread->name, (int)node->process->pid, preposition, object, at);
    } else {
        finding = rule_finding(c, REPORT_NO_WAKER, confidence, node,
                               "thread %d '%s' of process %d sleeps forever %s %s%s, and every thread that could "
                               "wake it is asleep forever too: nothing is left to wake it",
                               (int)thread->tid, thread->name, (int)node->process->pid, preposition, object, at);
    }
    if (!finding)
        return;
    if (thread->wait.kind == HD_WAIT_FUTEX) {
        finding->has_object = true;
        finding->object = thread->wait.address;
        rule_evidence(c, finding, "address", "0x%" PRIx64, thread->wait.address);
    }
    rule_evidence(c, finding, "waits_in", "%s", object);
    if (handled) {
        char names[256];
        report_signal_names(handled, names, sizeof names);
        rule_evidence(c, finding, "signal_handler", "process %d catches %s: a Python handler runs in the main thread "
                      "and ends this wait if it sets what the thread waits for (a service waiting to be stopped "
                      "is not hung); whether it does, no snapshot says", (int)node->process->pid, names);
    }
    size_t others = 0, held = 0;
    for (size_t s = 0; s < count; s++) {
        const struct hd_thread *sleeper = graph->nodes[sleepers[s]].thread;
        rule_member(c, finding, sleepers[s]);
        if (lock_waiter[sleepers[s]] != REPORT_NO_NODE) {
            const struct hd_thread *waiter = graph->nodes[lock_waiter[sleepers[s]]].thread;
            rule_member(c, finding, lock_waiter[sleepers[s]]);
            if (held++ < THREADS_LISTED_MAX)
                rule_evidence(c, finding, "held_lock", "thread %d '%s' holds the %s 0x%" PRIx64 " that thread %d '%s' "
                              "waits for", (int)sleeper->tid, sleeper->name, report_lock_noun(&waiter->wait.lock),
                              waiter->wait.lock.object_address, (int)waiter->tid, waiter->name);
        }
        if (sleepers[s] == subject || others++ >= THREADS_LISTED_MAX)
            continue;
        char other[256], where[512];
        const char *other_preposition;
        waited_in(sleeper, other, sizeof other, &other_preposition);
        rule_evidence(c, finding, "sleeper", "thread %d '%s' sleeps forever too, %s %s%s", (int)sleeper->tid,
                      sleeper->name, other_preposition, other, report_python_where(sleeper, where, sizeof where));
    }
    if (held > THREADS_LISTED_MAX)
        rule_evidence(c, finding, "held_lock", "and %zu more locks that sleepers hold and other threads wait for",
                      held - THREADS_LISTED_MAX);
    if (others > THREADS_LISTED_MAX)
        rule_evidence(c, finding, "sleeper", "and %zu more threads asleep forever, waiting to be woken",
                      others - THREADS_LISTED_MAX);
    possible_wakers(c, finding, subject);
    bool loop = loop_idle_for_good(node);
    if (holder_waiter != REPORT_NO_NODE)
        rule_remedy(c, finding, "Do not wait for a wake-up while holding a lock that the thread which should wake "
                                "you needs: release it before the wait. pthread_cond_wait(cond, mutex) releases only "
                                "the mutex it is given; signal under that mutex and no other.");
    if (python_calls(thread, "threading.py", "join"))
        rule_remedy(c, finding, "The thread it joins is asleep forever itself (see sleeper): tell it to stop before "
                                "join() (the sentinel its queue.get() loop waits for, an event it checks), or join "
                                "with a timeout and say which thread did not end.");
    else if (loop)
        rule_remedy(c, finding, "Bound what the tasks await (async with asyncio.timeout(...), asyncio.wait_for) and "
                                "find the task that waits: a suspended coroutine is on no thread's stack, but "
                                "asyncio.all_tasks() with task.print_stack() shows where each one awaits (from a "
                                "handler of loop.add_signal_handler); python -X dev warns of tasks destroyed pending "
                                "and exceptions never retrieved.");
    else if (thread->npython_frames > 0)
        rule_remedy(c, finding, "In Python an exception ends a thread with only a traceback on stderr "
                                "(threading.excepthook): look for it from the thread that should have set the event "
                                "or put the item. Wait with a timeout (event.wait(timeout), queue.get(timeout=...)) "
                                "and check that the producer is alive (thread.is_alive()).");
    if (!loop)
        rule_remedy(c, finding, "Make sure something will wake the wait: the thread that was to signal, post or set "
                                "may have exited (an exception, an early return on an error path) or signalled "
                                "before the wait began. Wait in a loop on a condition checked under the lock, and "
                                "give long waits a timeout that logs.");
}

void report_rule_no_waker(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t *sleepers cleanup_free = calloc(graph->nnodes + 1, sizeof *sleepers);
    size_t *lock_waiter cleanup_free = lock_waiters(graph);
    bool *explained cleanup_free = explained_processes(c->analysis);
    if (!sleepers || !lock_waiter || !explained) {
        c->failed = true;
        return;
    }
    for (size_t p = 0; p < graph->nprocesses && !c->failed; p++) {
        const struct report_graph_process *process = &graph->processes[p];
        size_t count = 0;
        for (size_t n = process->first_node; n < process->first_node + process->nnodes; n++)
            if (waits_for_a_wake_up(&graph->nodes[n]) || loop_idle_for_good(&graph->nodes[n]))
                sleepers[count++] = n;
        if (count > 0 && !explained[p])
            no_waker_finding(c, lock_waiter, sleepers, count);
    }
}
