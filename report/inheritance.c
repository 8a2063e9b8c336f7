/* Inheritance forensics (inheritance.h). */
#include "inheritance.h"

#include "finding.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))
#define EVIDENCE_THREADS_MAX 8
#define EVIDENCE_HANDLES_MAX 8

/* Libraries every wait passes through: a frame or a system call there says nothing about whose wait it is. The
 * lock in their data still does (glibc's atexit lock). */
static const char *const pass_through[] = { "libc.so*", "libpthread.so*", "ld-linux*", "libstdc++.so*",
                                            "libgcc_s.so*" };

static bool passes_through(const struct hd_library *library)
{
    const char *name = library->soname ? library->soname : hd_basename(library->path);
    for (size_t i = 0; i < COUNT(pass_through); i++)
        if (fnmatch(pass_through[i], name, 0) == 0)
            return true;
    return false;
}

/* The catalogued runtime of the library that holds code address `pc`, unless the library only passes through. */
static const struct report_runtime *runtime_of_code(const struct report_catalogue *catalogue,
                                                    const struct hd_process *process, uint64_t pc,
                                                    const struct hd_library **library)
{
    *library = pc ? hd_process_find_library(process, pc) : NULL;
    if (!*library || passes_through(*library))
        return NULL;
    return report_catalogue_library(catalogue, *library);
}

static bool attribute_by_code(const struct report_catalogue *catalogue, const struct hd_process *process,
                              const struct hd_thread *thread, struct report_attribution *out)
{
    const struct hd_library *library;
    for (size_t f = 0; f < thread->stack.nframes; f++) {
        const struct report_runtime *runtime = runtime_of_code(catalogue, process, thread->stack.frames[f].pc, &library);
        if (runtime) {
            *out = (struct report_attribution){ runtime, library, "a frame of its stack" };
            return true;
        }
    }
    if (thread->syscall.state == HD_SYSCALL_IN) {
        const struct report_runtime *runtime =
            runtime_of_code(catalogue, process, thread->syscall.program_counter, &library);
        if (runtime) {
            *out = (struct report_attribution){ runtime, library, "the code that made its system call" };
            return true;
        }
    }
    return false;
}

bool report_attribute_thread(const struct report_catalogue *catalogue, const struct hd_process *process,
                             const struct hd_thread *thread, struct report_attribution *out)
{
    *out = (struct report_attribution){ 0 };
    if (attribute_by_code(catalogue, process, thread, out))
        return true;
    const struct hd_wait *wait = &thread->wait;
    if (wait->kind != HD_WAIT_FUTEX)
        return false;
    uint64_t address = wait->lock.object_address ? wait->lock.object_address : wait->address;
    const struct hd_library *library = hd_process_library_of_data(process, address);
    const struct report_runtime *runtime = library ? report_catalogue_library(catalogue, library) : NULL;
    if (!runtime)
        return false;
    *out = (struct report_attribution){ runtime, library, "the memory its futex lies in" };
    return true;
}

bool report_thread_runs(const struct report_catalogue *catalogue, const struct hd_process *process,
                        const struct hd_thread *thread, const struct report_runtime *runtime)
{
    if (report_catalogue_thread(catalogue, thread->name) == runtime)
        return true;
    struct report_attribution attribution;
    return attribute_by_code(catalogue, process, thread, &attribution) && attribution.runtime == runtime;
}

/* ---- building findings ------------------------------------------------------------------------------------------ */

struct context {
    const struct hd_snapshot *snapshot;
    const struct report_catalogue *catalogue;
    struct report_analysis *analysis;
    bool failed;
};

/* Returns the index of the new finding, or (size_t)-1. Indexes stay valid when the array grows. */
__attribute__((format(printf, 6, 7))) static size_t add_finding(struct context *c, const char *id,
                                                                enum report_confidence confidence, pid_t pid,
                                                                pid_t tid, const char *summary, ...)
{
    va_list args;
    va_start(args, summary);
    struct report_finding *finding = report_finding_append(c->analysis, id, confidence, pid, tid, summary, args);
    va_end(args);
    c->failed |= !finding;
    return finding ? c->analysis->nfindings - 1 : (size_t)-1;
}

__attribute__((format(printf, 4, 5))) static void evidence(struct context *c, size_t index, const char *name,
                                                           const char *value, ...)
{
    if (index == (size_t)-1)
        return;
    va_list args;
    va_start(args, value);
    c->failed |= !report_finding_evidence(&c->analysis->findings[index], name, value, args);
    va_end(args);
}

static void remedy(struct context *c, size_t index, const char *text)
{
    c->failed |= index != (size_t)-1 && !report_finding_remedy(&c->analysis->findings[index], text);
}

/* "libgomp.so.1" for the text: the soname when there is one */
static const char *library_name(const struct hd_library *library)
{
    return library->soname ? library->soname : hd_basename(library->path);
}

/* ---- evidence of a runtime -------------------------------------------------------------------------------------- */

static void runtime_evidence(struct context *c, size_t index, const struct report_attribution *attribution)
{
    const struct report_runtime *runtime = attribution->runtime;
    evidence(c, index, "runtime", "%s", runtime->id);
    evidence(c, index, "runtime_text", "inside %s, %s, %s", library_name(attribution->library), runtime->name,
             report_fork_safety_words(runtime->safety));
    evidence(c, index, "runtime_library", "%s", attribution->library->path);
    if (attribution->library->build_id)
        evidence(c, index, "runtime_build_id", "%s", attribution->library->build_id);
    evidence(c, index, "attributed_by", "%s", attribution->how);
    evidence(c, index, "runtime_reason", "%s", runtime->reason);
}

/* The parent's threads that run the runtime: evidence that it was alive in the parent at fork(). */
static size_t parent_thread_evidence(struct context *c, size_t index, const struct hd_process *parent,
                                     const struct report_runtime *runtime)
{
    size_t found = 0;
    for (size_t t = 0; parent && t < parent->nthreads; t++) {
        const struct hd_thread *thread = &parent->threads[t];
        if (!report_thread_runs(c->catalogue, parent, thread, runtime))
            continue;
        if (found++ < EVIDENCE_THREADS_MAX)
            evidence(c, index, "parent_thread", "thread %d '%s' of parent %d runs %s", (int)thread->tid,
                     thread->name, (int)parent->pid, runtime->name);
    }
    return found;
}

static bool handle_of(const struct report_catalogue *catalogue, const struct hd_fd *fd,
                      const struct report_runtime *runtime)
{
    return fd->inherited_from.pid && report_catalogue_handle(catalogue, fd) == runtime;
}

static size_t inherited_handle_evidence(struct context *c, size_t index, const struct hd_process *process,
                                        const struct report_runtime *runtime)
{
    size_t found = 0;
    for (size_t f = 0; f < process->nfds; f++) {
        const struct hd_fd *fd = &process->fds[f];
        if (!handle_of(c->catalogue, fd, runtime))
            continue;
        if (found++ < EVIDENCE_HANDLES_MAX)
            evidence(c, index, "inherited_handle", "fd %d %s (%s) is fd %d of parent %d: the same open file (kcmp)",
                     fd->fd, fd->target, hd_fd_class_name(fd->fd_class), fd->inherited_from.fd,
                     (int)fd->inherited_from.pid);
    }
    return found;
}

static void runtime_remedies(struct context *c, size_t index, const struct report_runtime *runtime)
{
    for (size_t r = 0; r < runtime->nremedies; r++)
        remedy(c, index, runtime->remedies[r]);
}

/* ---- attributing the findings of the lock rules ------------------------------------------------------------------ */

static void append_to_summary(struct context *c, size_t index, const struct report_attribution *attribution)
{
    struct report_finding *finding = &c->analysis->findings[index];
    char *longer = NULL;
    if (asprintf(&longer, "%s; inside %s (%s, %s)", finding->summary, library_name(attribution->library),
                 attribution->runtime->name, report_fork_safety_words(attribution->runtime->safety)) < 0) {
        c->failed = true;
        return;
    }
    free(finding->summary);
    finding->summary = longer;
}

static void attribute_lock_findings(struct context *c)
{
    size_t count = c->analysis->nfindings;
    for (size_t f = 0; f < count; f++) {
        const struct report_finding *finding = &c->analysis->findings[f];
        if (strcmp(finding->id, "inherited-lock") != 0 && strcmp(finding->id, "orphaned-wait") != 0)
            continue;
        struct hd_process *process;
        const struct hd_thread *thread = hd_snapshot_find_thread(c->snapshot, finding->tid, &process);
        struct report_attribution attribution;
        if (!thread || !report_attribute_thread(c->catalogue, process, thread, &attribution))
            continue;
        append_to_summary(c, f, &attribution);
        runtime_evidence(c, f, &attribution);
        const struct hd_process *parent = hd_snapshot_find_process(c->snapshot, process->ppid);
        parent_thread_evidence(c, f, parent, attribution.runtime);
        inherited_handle_evidence(c, f, process, attribution.runtime);
        runtime_remedies(c, f, attribution.runtime);
    }
}

/* ---- fork-unsafe-runtime and cuda-inherited ---------------------------------------------------------------------- */

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
static const struct report_node *stuck_inside(struct context *c, const struct hd_process *process,
                                              const struct report_runtime *runtime, const struct report_node *fallback,
                                              struct report_attribution *attribution)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_graph_process *threads = report_graph_process_of(graph, process);
    for (size_t i = threads ? threads->first_node : 0; threads && i < threads->first_node + threads->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (node->wake == REPORT_WAKE_NEVER &&
            report_attribute_thread(c->catalogue, process, node->thread, attribution) &&
            attribution->runtime == runtime)
            return node;
    }
    attribution->runtime = NULL;
    return fallback;
}

/* Does the parent have threads of the runtime, or does the child's stuck wait lie inside it? */
static void runtime_finding(struct context *c, const struct hd_process *process, const struct hd_process *parent,
                           const struct hd_library *library, const struct report_runtime *runtime,
                           const struct report_node *stuck)
{
    struct report_attribution attribution;
    const struct report_node *subject = stuck_inside(c, process, runtime, stuck, &attribution);
    size_t parent_threads = 0;
    for (size_t t = 0; parent && t < parent->nthreads; t++)
        parent_threads += report_thread_runs(c->catalogue, parent, &parent->threads[t], runtime);
    bool inside = attribution.runtime != NULL;
    if (!inside && parent_threads == 0)
        return; /* loaded, but neither running threads in the parent nor where the child waits */
    if (!inside)
        attribution = (struct report_attribution){ runtime, library, "the child maps it, its parent runs it" };
    size_t index = add_finding(
        c, "fork-unsafe-runtime", REPORT_LIKELY, process->pid, subject->thread->tid,
        "forked child %d is asleep for ever %s %s (%s, %s), which its parent %d had loaded%s", (int)process->pid,
        inside ? "inside" : "while it maps",
        library_name(attribution.library), runtime->name, report_fork_safety_words(runtime->safety),
        (int)process->ppid, parent_threads ? " and was running threads of" : "");
    runtime_evidence(c, index, &attribution);
    evidence(c, index, "library_in_parent", "%s", library->in_parent ? "yes, at the same address" : "no");
    parent_thread_evidence(c, index, parent, runtime);
    inherited_handle_evidence(c, index, process, runtime);
    runtime_remedies(c, index, runtime);
}

static bool already_listed(const struct report_runtime **seen, size_t count, const struct report_runtime *runtime)
{
    for (size_t i = 0; i < count; i++)
        if (seen[i] == runtime)
            return true;
    return false;
}

static void rule_fork_unsafe_runtimes(struct context *c, const struct hd_process *process,
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

static void rule_cuda_inherited(struct context *c, const struct hd_process *process, const struct report_node *stuck)
{
    const struct report_runtime *cuda = report_catalogue_find(c->catalogue, "cuda");
    const struct hd_library *library = NULL;
    for (size_t l = 0; cuda && l < process->nlibraries && !library; l++)
        if (report_catalogue_library(c->catalogue, &process->libraries[l]) == cuda)
            library = &process->libraries[l];
    size_t handles = 0;
    for (size_t f = 0; library && f < process->nfds; f++)
        handles += handle_of(c->catalogue, &process->fds[f], cuda);
    if (!library || handles == 0)
        return;
    size_t index = add_finding(c, "cuda-inherited", REPORT_LIKELY, process->pid, stuck->thread->tid,
                               "forked child %d maps %s and holds %zu GPU handle%s shared with its parent %d (the "
                               "same open files, kcmp): it inherited a CUDA context that does not work after fork()",
                               (int)process->pid, library_name(library), handles, handles == 1 ? "" : "s",
                               (int)process->ppid);
    evidence(c, index, "runtime", "%s", cuda->id);
    evidence(c, index, "library", "%s", library->path);
    inherited_handle_evidence(c, index, process, cuda);
    for (size_t m = 0; m < process->nmappings; m++)
        if (process->mappings[m].path && fnmatch("/dev/nvidia*", process->mappings[m].path, 0) == 0)
            evidence(c, index, "device_mapping", "0x%" PRIx64 "-0x%" PRIx64 " %s", process->mappings[m].start,
                     process->mappings[m].end, process->mappings[m].path);
    parent_thread_evidence(c, index, hd_snapshot_find_process(c->snapshot, process->ppid), cuda);
    runtime_remedies(c, index, cuda);
}

bool report_analyze_inheritance(const struct hd_snapshot *snapshot, const struct report_catalogue *catalogue,
                                struct report_analysis *analysis)
{
    struct context c = { .snapshot = snapshot, .catalogue = catalogue, .analysis = analysis };
    attribute_lock_findings(&c);
    for (size_t p = 0; p < snapshot->nprocesses && !c.failed; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        const struct report_node *stuck = first_stuck(&analysis->graph, process);
        if (process->origin != HD_ORIGIN_FORKED || !stuck)
            continue;
        rule_fork_unsafe_runtimes(&c, process, stuck);
        rule_cuda_inherited(&c, process, stuck);
    }
    return !c.failed;
}
