/* The runtimes family (rule.h): fork-unsafe-runtime and cuda-inherited, a forked child asleep forever with a
 * runtime (or a CUDA context) it inherited from its parent. Attribution and its evidence are inheritance.h's. */
#include "rule.h"

#include "inheritance.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* The first thread of the process that is asleep forever, or NULL: a healthy child gets no hang finding. */
static const struct report_node *first_stuck(const struct report_graph *graph, const struct hd_process *process)
{
    const struct report_graph_process *threads = report_graph_process_of(graph, process);
    for (size_t i = threads ? threads->first_node : 0; threads && threads->never && i < threads->first_node + threads->nnodes; i++)
        if (graph->nodes[i].wake == REPORT_WAKE_NEVER)
            return &graph->nodes[i];
    return NULL;
}

/* A stuck thread of the process whose wait is inside `runtime`, else `fallback`. */
static const struct report_node *stuck_inside(struct report_rule_context *c, const struct hd_process *process,
                                              const struct report_runtime *runtime, const struct report_node *fallback,
                                              struct report_attribution *attribution)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_graph_process *threads = report_graph_process_of(graph, process);
    for (size_t i = threads ? threads->first_node : 0; threads && i < threads->first_node + threads->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (node->wake == REPORT_WAKE_NEVER &&
            report_attribute_thread(c->catalogue, process, node->thread, attribution) &&
            (attribution->runtime == runtime || attribution->library_runtime == runtime))
            return node;
    }
    attribution->runtime = NULL;
    return fallback;
}

/* Does the parent have threads of the runtime, or does the child's stuck wait lie inside it? */
static void runtime_finding(struct report_rule_context *c, const struct hd_process *process, const struct hd_process *parent,
                           const struct hd_library *library, const struct report_runtime *runtime,
                           const struct report_node *stuck)
{
    struct report_attribution attribution;
    const struct report_node *subject = stuck_inside(c, process, runtime, stuck, &attribution);
    size_t parent_threads = report_threads_running(c->analysis, parent, runtime);
    bool inside = attribution.runtime != NULL;
    /* Blame fork only on evidence: the stuck wait lies inside the runtime, and the runtime came with fork (the
     * parent runs threads of it, or maps it at the same address). A child stuck elsewhere that merely maps a
     * runtime its parent runs has a hang of its own. */
    if (!inside || (parent_threads == 0 && !library->in_parent))
        return;
    /* the lock the stack names, where the library's row is only the library (libc's own locks) */
    const struct report_runtime *named = attribution.runtime;
    char name[256];
    struct report_finding *finding = rule_finding_for(
        c, REPORT_FORK_UNSAFE_RUNTIME, REPORT_LIKELY, process->pid, subject->thread->tid,
        "forked child %d is asleep for ever inside %s (%s, %s), which its parent %d had loaded%s", (int)process->pid,
        report_library_name(attribution.library), report_attribution_name(&attribution, name, sizeof name),
        report_fork_safety_words(named->safety), (int)process->ppid,
        parent_threads ? " and was running threads of" : "");
    report_runtime_evidence(c, finding, &attribution);
    rule_evidence(c, finding, "library_in_parent", "%s", library->in_parent ? "yes, at the same address" : "no");
    report_parent_thread_evidence(c, finding, parent, runtime);
    report_inherited_handle_evidence(c, finding, process, runtime);
    report_runtime_remedies(c, finding, named);
}

static bool already_listed(const struct report_runtime **seen, size_t count, const struct report_runtime *runtime)
{
    for (size_t i = 0; i < count; i++)
        if (seen[i] == runtime)
            return true;
    return false;
}

static void fork_unsafe_runtimes(struct report_rule_context *c, const struct hd_process *process,
                                      const struct report_node *stuck)
{
    const struct hd_process *parent = hd_snapshot_find_process(c->snapshot, process->ppid);
    const struct report_runtime *seen[32];
    size_t nseen = 0;
    for (size_t l = 0; l < process->nlibraries && nseen < COUNT(seen); l++) {
        const struct hd_library *library = &process->libraries[l];
        const struct report_runtime *runtime = report_catalogue_library(c->catalogue, library);
        if (!runtime || runtime->safety == REPORT_FORK_AWARE || already_listed(seen, nseen, runtime))
            continue;
        seen[nseen++] = runtime;
        runtime_finding(c, process, parent, library, runtime, stuck);
    }
}

static void cuda_inherited(struct report_rule_context *c, const struct hd_process *process, const struct report_node *stuck)
{
    const struct report_runtime *cuda = report_catalogue_with_trait(c->catalogue, REPORT_RUNTIME_GPU_CONTEXT);
    const struct hd_library *library = NULL;
    for (size_t l = 0; cuda && l < process->nlibraries && !library; l++)
        if (report_catalogue_library(c->catalogue, &process->libraries[l]) == cuda)
            library = &process->libraries[l];
    size_t handles = 0;
    for (size_t f = 0; library && f < process->nfds; f++)
        handles += report_handle_of(c->catalogue, &process->fds[f], cuda);
    if (!library || handles == 0)
        return;
    /* inherited handles show that the context came with fork; that the hang is its doing, only a stuck wait
     * inside the driver shows */
    struct report_attribution attribution;
    stuck = stuck_inside(c, process, cuda, NULL, &attribution);
    if (!stuck)
        return;
    struct report_finding *finding = rule_finding_for(c, REPORT_CUDA_INHERITED, REPORT_LIKELY, process->pid, stuck->thread->tid,
                               "forked child %d maps %s and holds %zu GPU handle%s shared with its parent %d (the "
                               "same open files, kcmp): it inherited a CUDA context that does not work after fork()",
                               (int)process->pid, report_library_name(library), handles, handles == 1 ? "" : "s",
                               (int)process->ppid);
    rule_evidence(c, finding, "runtime", "%s", cuda->id);
    rule_evidence(c, finding, "library", "%s", library->path);
    report_inherited_handle_evidence(c, finding, process, cuda);
    for (size_t m = 0; m < process->nmappings; m++)
        if (process->mappings[m].path && fnmatch("/dev/nvidia*", process->mappings[m].path, 0) == 0)
            rule_evidence(c, finding, "device_mapping", "0x%" PRIx64 "-0x%" PRIx64 " %s", process->mappings[m].start,
                     process->mappings[m].end, process->mappings[m].path);
    report_parent_thread_evidence(c, finding, hd_snapshot_find_process(c->snapshot, process->ppid), cuda);
    report_runtime_remedies(c, finding, cuda);
}

/* The forked children that have a thread asleep forever, for each: the rules below look at no other. */
static void each_stuck_forked_child(struct report_rule_context *c,
                                    void (*rule)(struct report_rule_context *, const struct hd_process *,
                                                 const struct report_node *))
{
    for (size_t p = 0; p < c->snapshot->nprocesses && !c->failed; p++) {
        const struct hd_process *process = &c->snapshot->processes[p];
        const struct report_node *stuck = first_stuck(&c->analysis->graph, process);
        if (hd_process_forked(process) && stuck)
            rule(c, process, stuck);
    }
}

/* The spinning finding's evidence, for the finding that explains the spin. */
static void spin_evidence(struct report_rule_context *c, struct report_finding *finding,
                          const struct report_finding *spin)
{
    for (size_t e = 0; e < spin->nevidence; e++) {
        char name[64];
        snprintf(name, sizeof name, "spin_%s", spin->evidence[e].name);
        rule_evidence(c, finding, name, "%s", spin->evidence[e].value);
    }
}

/* A forked child that spins inside a catalogued runtime (not fork-aware) whose threads run in its parent: the
 * runtime's state came with fork() but its threads did not, and the child waits for them by spinning (OpenBLAS's
 * OpenMP build in a forked child: sched_yield in a loop over libgomp's team that exists only in the parent). The
 * runtime named is the innermost one of the stack that the parent runs threads of; the innermost one's remedies
 * are added when it is another (OpenBLAS over GNU OpenMP). */
static void spinning_in_an_inherited_runtime(struct report_rule_context *c, size_t spin_index)
{
    const struct hd_process *process;
    pid_t tid = c->analysis->findings[spin_index].tid;
    const struct hd_thread *thread = report_graph_thread(&c->analysis->graph, tid, &process);
    if (!thread || !hd_process_forked(process))
        return;
    const struct hd_process *parent = hd_snapshot_find_process(c->snapshot, process->ppid);
    struct report_attribution runtimes[8];
    size_t count = report_stack_runtimes(c->catalogue, process, thread, runtimes, COUNT(runtimes));
    for (size_t r = 0; parent && r < count; r++) {
        const struct report_runtime *runtime = runtimes[r].runtime;
        size_t parent_threads =
            runtime->safety != REPORT_FORK_AWARE ? report_threads_running(c->analysis, parent, runtime) : 0;
        if (parent_threads == 0)
            continue;
        runtimes[r].how = "a frame of its spinning stack";
        struct report_finding *finding = rule_finding_for(
            c, REPORT_FORK_UNSAFE_RUNTIME, REPORT_LIKELY, process->pid, thread->tid,
            "forked child %d spins inside %s (%s, %s), whose threads run in its parent %d: fork() copied the "
            "runtime's state but not its threads, and thread %d '%s' waits for them in %s",
            (int)process->pid, report_library_name(runtimes[r].library), runtime->name,
            report_fork_safety_words(runtime->safety), (int)process->ppid, (int)thread->tid, thread->name,
            thread->leaf_function ? thread->leaf_function : "a loop");
        report_runtime_evidence(c, finding, &runtimes[r]);
        /* after the new finding: adding it may have moved the findings */
        spin_evidence(c, finding, &c->analysis->findings[spin_index]);
        if (r > 0)
            rule_evidence(c, finding, "called_through", "%s (%s), the innermost runtime of its stack",
                          report_library_name(runtimes[0].library), runtimes[0].runtime->name);
        report_parent_thread_evidence(c, finding, parent, runtime);
        report_inherited_handle_evidence(c, finding, process, runtime);
        report_runtime_remedies(c, finding, runtime);
        if (r > 0)
            report_runtime_remedies(c, finding, runtimes[0].runtime);
        return;
    }
}

static bool has_finding(const struct report_analysis *analysis, enum report_finding_id id, pid_t pid)
{
    for (size_t f = 0; f < analysis->nfindings; f++)
        if (analysis->findings[f].kind == id && analysis->findings[f].pid == pid)
            return true;
    return false;
}

/* A forked child whose thread has slept without timeout for long inside a catalogued runtime (not fork-aware) whose
 * threads run in its parent, where only timer threads could wake it, counting those whose timer did not fire while
 * sampled (a Qt pool thread on its 30 s expiry timer): QThreadPool::waitForDone() in a child, for a runnable that
 * runs in the parent. The fork is the evidence the timers alone are not. */
static void asleep_behind_timers_in_an_inherited_runtime(struct report_rule_context *c, const bool *bound)
{
    for (size_t p = 0; p < c->snapshot->nprocesses && !c->failed; p++) {
        const struct hd_process *process = &c->snapshot->processes[p];
        if (!hd_process_forked(process))
            continue;
        /* the cheap test first: a scan of the findings only for a child with a thread behind timers */
        size_t stuck = report_timer_bound_subject(c, process, bound);
        const struct hd_process *parent = hd_snapshot_find_process(c->snapshot, process->ppid);
        struct report_attribution attribution;
        if (stuck == REPORT_NO_NODE || !parent || has_finding(c->analysis, REPORT_FORK_UNSAFE_RUNTIME, process->pid))
            continue;
        const struct hd_thread *thread = c->analysis->graph.nodes[stuck].thread;
        if (!report_attribute_thread(c->catalogue, process, thread, &attribution) ||
            attribution.runtime->safety == REPORT_FORK_AWARE ||
            (attribution.runtime->traits & REPORT_RUNTIME_LIBC_INTERNAL))
            continue;
        size_t parent_threads = report_threads_running(c->analysis, parent, attribution.runtime);
        if (parent_threads == 0)
            continue;
        struct report_finding *finding = rule_finding_for(
            c, REPORT_FORK_UNSAFE_RUNTIME, REPORT_LIKELY, process->pid, thread->tid,
            "thread %d '%s' of forked child %d has been asleep %.0f s inside %s (%s, %s), whose threads run in its "
            "parent %d, and only timer threads could wake it: fork() copied the runtime's state but not its threads",
            (int)thread->tid, thread->name, (int)process->pid, thread->blocked_for_s,
            report_library_name(attribution.library), attribution.runtime->name,
            report_fork_safety_words(attribution.runtime->safety), (int)process->ppid);
        report_runtime_evidence(c, finding, &attribution);
        report_timer_evidence(c, finding, stuck, true);
        report_parent_thread_evidence(c, finding, parent, attribution.runtime);
        report_inherited_handle_evidence(c, finding, process, attribution.runtime);
        report_runtime_remedies(c, finding, attribution.runtime);
    }
}

/* A thread of a forked child that has done next to nothing since the fork: at most this much CPU, plus this share
 * of the child's age (a call that polls every 200 ms costs about 0.05 %). */
#define POLLER_CPU_MAX_S 0.05
#define POLLER_CPU_SHARE_MAX 0.02

/* A forked child whose thread polls a futex in vain (timers.c) inside a catalogued runtime (not fork-aware) whose
 * threads run in its parent, and has done next to nothing since the fork, which was at least the threshold ago: a
 * gRPC call on the parent's channel in the child, whose completion queue waits, 200 ms at a time, for a poller
 * that stayed in the parent. No clock tells how long a poll has lasted; that the thread has used almost no CPU
 * since the fork does. A child that worked first and then got stuck this way is missed, never a busy one blamed. */
static void polling_in_vain_in_an_inherited_runtime(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < graph->nprocesses && !c->failed; p++) {
        const struct report_graph_process *threads = &graph->processes[p];
        const struct hd_process *process = threads->process;
        const struct hd_process *parent = hd_snapshot_find_process(c->snapshot, process->ppid);
        if (!hd_process_forked(process) || !parent || process->age_s < c->analysis->stuck_after_s ||
            has_finding(c->analysis, REPORT_FORK_UNSAFE_RUNTIME, process->pid))
            continue;
        for (size_t i = threads->first_node; i < threads->first_node + threads->nnodes; i++) {
            const struct hd_thread *thread = graph->nodes[i].thread;
            struct report_attribution attribution;
            if ((double)thread->cpu_time_ns / 1e9 > POLLER_CPU_MAX_S + POLLER_CPU_SHARE_MAX * process->age_s ||
                !report_polls_in_vain(c, i) || !report_attribute_thread(c->catalogue, process, thread, &attribution) ||
                attribution.runtime->safety == REPORT_FORK_AWARE ||
                (attribution.runtime->traits & REPORT_RUNTIME_LIBC_INTERNAL) ||
                report_threads_running(c->analysis, parent, attribution.runtime) == 0)
                continue;
            struct report_finding *finding = rule_finding_for(
                c, REPORT_FORK_UNSAFE_RUNTIME, REPORT_LIKELY, process->pid, thread->tid,
                "thread %d '%s' of forked child %d polls in vain inside %s (%s, %s), whose threads run in its parent "
                "%d: it wakes on its timeout only to wait again, nothing in the child could end its wait, and it "
                "has used %.0f ms of CPU in the %.0f s since the fork: fork() copied the runtime's state but not "
                "its threads",
                (int)thread->tid, thread->name, (int)process->pid, report_library_name(attribution.library),
                attribution.runtime->name, report_fork_safety_words(attribution.runtime->safety), (int)process->ppid,
                (double)thread->cpu_time_ns / 1e6, process->age_s);
            report_runtime_evidence(c, finding, &attribution);
            report_poll_evidence(c, finding, i);
            rule_evidence(c, finding, "since_fork", "forked %.1f s ago (--stuck-after %.0f s); thread %d has used "
                          "%.1f ms of CPU since",
                          process->age_s, c->analysis->stuck_after_s, (int)thread->tid,
                          (double)thread->cpu_time_ns / 1e6);
            report_parent_thread_evidence(c, finding, parent, attribution.runtime);
            report_inherited_handle_evidence(c, finding, process, attribution.runtime);
            report_runtime_remedies(c, finding, attribution.runtime);
            break;
        }
    }
}

/* A forked child asleep forever inside a catalogued runtime that is not fork-aware and that came with fork: its
 * parent runs threads of it, or maps it at the same address. Or a forked child spinning inside one whose threads
 * run in its parent (the spinning rule ran before: the registry's order), or asleep for long in one where only
 * timer threads could wake it, or polling in vain in one since the fork. */
void report_rule_fork_unsafe_runtime(struct report_rule_context *c)
{
    each_stuck_forked_child(c, fork_unsafe_runtimes);
    const bool *bound = report_timer_bound(c, true);
    if (bound)
        asleep_behind_timers_in_an_inherited_runtime(c, bound);
    polling_in_vain_in_an_inherited_runtime(c);
    size_t count = c->analysis->nfindings;
    for (size_t f = 0; f < count && !c->failed; f++)
        if (c->analysis->findings[f].kind == REPORT_SPINNING)
            spinning_in_an_inherited_runtime(c, f);
}

/* A forked child asleep forever that maps CUDA's driver and holds GPU handles it shares with its parent. */
void report_rule_cuda_inherited(struct report_rule_context *c)
{
    each_stuck_forked_child(c, cuda_inherited);
}
