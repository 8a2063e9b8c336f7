/* The busy family (rule.h): spinning, a thread that runs in one function in every sample. */
#include "rule.h"

#include "describe.h"
#include "python_view.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A spinning thread takes all the CPU it is given, but on a loaded machine that may be a small share of one: it is
 * R in every sample, so it always wants the CPU. The bar only keeps out a thread that hardly ran at all. */
#define SPINNING_CPU_SHARE_MIN 0.1

/* A thread that blocked in the kernel again and again between samples (fork and wait4 in a loop, small reads)
 * works through system calls: it is caught in R with the same innermost function (the system call's wrapper)
 * because that is where it spends its time, not because it spins. A busy wait blocks nowhere: its voluntary
 * context switches stay flat, but for the one each ptrace stop of hangdoc's own adds. */
static bool works_through_the_kernel(const struct report_history *history)
{
    return history->voluntary_switches_delta > 2 * (uint64_t)history->leaf_samples + 2;
}

/* A loop around sched_yield gives the CPU away each time it gets it: on a machine where other work wants the CPU it
 * runs a few microseconds a turn, so its share is tiny though it never stops spinning. Many involuntary switches
 * alone prove nothing (a nice-19 computation is preempted by every wakeup on a busy machine): the yield call must
 * be where it was stopped, or on its stack. */
#define YIELD_LOOP_SWITCHES_MIN 20

static const char *const yield_functions[] = { "sched_yield", "pthread_yield", "thrd_yield" };

static bool is_a_yield_function(const char *function)
{
    if (!function)
        return false;
    while (*function == '_')
        function++;
    if (strncmp(function, "GI_", 3) == 0)
        function += 3;
    while (*function == '_')
        function++;
    for (size_t i = 0; i < COUNT(yield_functions); i++)
        if (strcmp(function, yield_functions[i]) == 0)
            return true;
    return false;
}

static uint64_t involuntary_switches(const struct report_history *history)
{
    return history->switches_delta > history->voluntary_switches_delta
               ? history->switches_delta - history->voluntary_switches_delta
               : 0;
}

#define YIELD_FRAMES_SEARCHED 4

static bool yields_in_a_loop(const struct report_node *node)
{
    const struct hd_thread *thread = node->thread;
    if (involuntary_switches(&node->history) < YIELD_LOOP_SWITCHES_MIN)
        return false;
    bool yields = is_a_yield_function(node->history.leaf_function);
    for (size_t f = 0; !yields && thread->stack.state == HD_STACK_TAKEN && f < thread->stack.nframes &&
                       f < YIELD_FRAMES_SEARCHED; f++)
        yields = is_a_yield_function(thread->stack.frames[f].symbol);
    return yields;
}

/* Does the edge lead to the spinner alone: to its thread (a lock it owns, a join, the GIL it holds), or to its
 * process when the spinner is the only thread there that may run (a lock that records no owner, an event only it
 * could set)? */
static bool waits_on_the_spinner(const struct report_graph *graph, const struct report_edge *edge, size_t spinner)
{
    if (edge->target == REPORT_TO_THREAD)
        return edge->to == spinner;
    const struct report_graph_process *process = &graph->processes[edge->to];
    return edge->to == graph->nodes[spinner].process_index && process->self_running == 1 &&
           process->runners[0] == spinner;
}

#define WAITERS_LISTED_MAX 8

/* The threads that wait for the spinner and nobody else: stuck in one long call, it holds them up (a main thread
 * that joins a worker in a regular expression's backtracking, the GIL's waiters). Returns how many there are. */
static size_t waiter_evidence(struct report_rule_context *c, struct report_finding *finding, size_t spinner)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t waiters = 0;
    for (size_t n = 0; n < graph->nnodes; n++) {
        const struct report_node *node = &graph->nodes[n];
        /* a GIL waiter's timed wake-ups only ask the holder to let go: no progress of its own */
        bool progressing = node->history.progressing && node->thread->wait.lock.kind != HD_LOCK_GIL;
        if (n == spinner || progressing || node->wake != REPORT_WAKE_WAKER || node->nedges == 0)
            continue;
        bool only_it = true;
        for (size_t e = node->first_edge; e < node->first_edge + node->nedges && only_it; e++)
            only_it = waits_on_the_spinner(graph, &graph->edges[e], spinner);
        if (!only_it)
            continue;
        if (waiters++ < WAITERS_LISTED_MAX) {
            char where[256];
            rule_evidence(c, finding, "waiter", "thread %d '%s' of process %d waits for it (%s)%s",
                          (int)node->thread->tid, node->thread->name, (int)node->process->pid,
                          report_wait_label(node->thread), report_python_where(node->thread, where, sizeof where));
        }
    }
    return waiters;
}

/* Its innermost Python frame stayed where it was over the samples and the looks after them (probe/python.h), and no
 * sample stopped it in the eval loop: one Python call into C that never returns, though the native code under it
 * moves (a regular expression's engine backtracking from function to function). "match (re/__init__.py:166)" into `out`; false when not so. */
static bool stays_in_one_python_frame(const struct hd_thread *thread, char *out, size_t size)
{
    if (thread->python_looks < 3 || !thread->python_leaf_same || thread->npython_frames == 0)
        return false;
    /* a sample stopped in the eval loop itself: Python code runs there, maybe a hot line of a loop that moves on */
    if (report_runs_eval_loop(thread->leaf_function))
        return false;
    for (size_t s = 0; s < thread->nearlier; s++)
        if (report_runs_eval_loop(thread->earlier[s].leaf_function))
            return false;
    const struct hd_python_frame *frame = &thread->python_frames[0];
    snprintf(out, size, "%s (%s:%d)", frame->function, hd_basename(frame->file), frame->line);
    return true;
}

/* Running in every sample, using about a CPU, stopped in the same function each time, or staying in one Python
 * frame: a busy wait or livelock, or a long computation that stays in one place. Sampling cannot tell those apart:
 * likely, never certain. */
void report_rule_spinning(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        const struct hd_thread *thread = node->thread;
        const struct report_history *history = &node->history;
        char python_place[512];
        bool native_place = history->leaf_samples >= 2 && history->leaf_same && history->leaf_function;
        bool python_stays = stays_in_one_python_frame(thread, python_place, sizeof python_place);
        bool python = !native_place && python_stays; /* the Python frame is the only place that stayed */
        if (history->samples_seen < 2 || history->samples_in_state_r != history->samples_seen ||
            (!native_place && !python))
            continue;
        /* stopped in the eval loop each time: Python code runs, and its own frames say whether it moves on */
        if (native_place && report_runs_eval_loop(history->leaf_function) && thread->python_looks >= 3 && !python_stays &&
            !thread->python_leaf_same)
            continue;
        /* while hangdoc held the process stopped to take its stacks, it could not run */
        double running_s = c->snapshot->sampling_s - node->process->stopped_for_s;
        if (running_s < c->snapshot->sampling_s / 2)
            running_s = c->snapshot->sampling_s / 2;
        if (running_s <= 0)
            continue;
        double share = (double)history->cpu_delta_ns / (running_s * 1e9);
        bool yielding = yields_in_a_loop(node);
        if ((share < SPINNING_CPU_SHARE_MIN && !yielding) || works_through_the_kernel(history))
            continue;
        struct report_finding *finding =
            python ? rule_finding(c, REPORT_SPINNING, REPORT_LIKELY, node,
                                  "thread %d '%s' of process %d was running in every sample (%.0f%% of a CPU) and "
                                  "in one Python call each time it was looked at, %s: a call that never returns "
                                  "(a regular expression backtracking, a loop in C holding the GIL), or one long "
                                  "computation",
                                  (int)thread->tid, thread->name, (int)node->process->pid, share * 100, python_place)
                   : rule_finding(c, REPORT_SPINNING, REPORT_LIKELY, node,
                                  "thread %d '%s' of process %d was running in every sample (%.0f%% of a CPU) and "
                                  "in %s each time it was stopped: a busy wait or livelock, or one long computation",
                                  (int)thread->tid, thread->name, (int)node->process->pid, share * 100,
                                  history->leaf_function);
        if (python_stays)
            rule_evidence(c, finding, "python_frame", "%s, in %u of %u looks (the samples' last and %u after it)",
                          python_place, thread->python_looks, thread->python_looks, thread->python_looks - 1);
        if (python && history->leaf_function)
            rule_evidence(c, finding, "native_leaf", "%s, and elsewhere in other samples", history->leaf_function);
        if (!python)
            rule_evidence(c, finding, "function", "%s", history->leaf_function);
        rule_evidence(c, finding, "cpu_share", "%.0f%%", share * 100);
        rule_evidence(c, finding, "cpu_s", "%.3f of %.3f s it was not held stopped", (double)history->cpu_delta_ns / 1e9,
                 running_s);
        if (python)
            rule_evidence(c, finding, "samples", "R in %u of %u", history->samples_in_state_r, history->samples_seen);
        else
            rule_evidence(c, finding, "samples", "R in %u of %u; the same function in %u",
                          history->samples_in_state_r, history->samples_seen, history->leaf_samples);
        /* no system call in any sample: one long call in user space; how long, against --stuck-after */
        double stuck_after_s = c->analysis->stuck_after_s;
        if (thread->syscall.state == HD_SYSCALL_RUNNING && stuck_after_s > 0)
            rule_evidence(c, finding, "cpu_time_s", "%.1f in all, %s --stuck-after %.0f s",
                          (double)thread->cpu_time_ns / 1e9,
                          (double)thread->cpu_time_ns / 1e9 >= stuck_after_s ? "past" : "within", stuck_after_s);
        if (waiter_evidence(c, finding, i) > WAITERS_LISTED_MAX)
            rule_evidence(c, finding, "waiter", "and more");
        if (yielding)
            rule_evidence(c, finding, "yields",
                          "it gave the CPU away %llu times, after %.0f us of CPU a turn on average: a loop that "
                          "yields, to which other work on this machine leaves little CPU",
                          (unsigned long long)involuntary_switches(history),
                          (double)history->cpu_delta_ns / 1e3 / (double)involuntary_switches(history));
        rule_remedy(c, finding, "Sample longer (hangdoc --samples 10 --interval 1s PID): a computation moves on to "
                           "other functions, a busy wait stays where it is.");
        rule_remedy(c, finding, "If it polls a flag or a lock in a loop, block instead (a condition variable, a futex, "
                           "or sched_yield with a back-off) and check that whoever should set the flag is alive.");
    }
}
