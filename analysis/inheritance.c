/* Inheritance forensics (inheritance.h): which runtime a wait is inside, and the evidence of it. */
#include "inheritance.h"

#include "finding.h"
#include "rules/rule.h"
#include "util.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVIDENCE_THREADS_MAX 8
#define EVIDENCE_HANDLES_MAX 8

/* Libraries every wait passes through: a frame or a system call there says nothing about whose wait it is. The
 * lock in their data still does (glibc's atexit lock). Abseil's synchronization is the mutex and condition variable
 * under gRPC (and others): a gRPC thread parked on its timer waits in absl's Waiter, called from gRPC's code. */
static const char *const pass_through[] = { "libc.so*",          "libpthread.so*",
                                            "ld-linux*",         "libstdc++.so*",
                                            "libgcc_s.so*",      "libabsl_synchronization.so*",
                                            "libabsl_base.so*" };

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

/* Which of a library's locks the thread waits for, by the functions of the innermost run of its frames in that
 * library that a catalogue row names; otherwise the outermost named frame of that run: the program's call into
 * the library (not __libc_start_main further out). */
static void name_the_lock_by_function(const struct report_catalogue *catalogue, const struct hd_process *process,
                                      const struct hd_thread *thread, struct report_attribution *out)
{
    bool in_run = false;
    for (size_t f = 0; thread->stack.state == HD_STACK_TAKEN && f < thread->stack.nframes; f++) {
        const struct hd_frame *frame = &thread->stack.frames[f];
        if (hd_process_find_library(process, frame->pc) != out->library) {
            if (in_run)
                return;
            continue;
        }
        in_run = true;
        /* a stripped library's static function: the exported one the program called to reach it */
        const char *name = frame->symbol ? frame->symbol : frame->called_as;
        if (!name)
            continue;
        const struct report_runtime *lock = report_catalogue_function(catalogue, name);
        if (lock && lock != out->library_runtime) {
            out->runtime = lock;
            out->function = name;
            out->how = frame->symbol ? "the memory its futex lies in, and the function of its stack that takes that lock"
                                     : "the memory its futex lies in, and the function its stack called to take that "
                                       "lock";
            return;
        }
        out->function = name; /* the outermost one stays: where the program called in */
    }
}

const char *report_attribution_name(const struct report_attribution *attribution, char *out, size_t size)
{
    if (attribution->function)
        snprintf(out, size, "%s, in %s", attribution->runtime->name, attribution->function);
    else
        snprintf(out, size, "%s", attribution->runtime->name);
    return out;
}

const struct report_runtime *report_parked_in_runtime(const struct report_catalogue *catalogue,
                                                      const struct hd_process *process,
                                                      const struct hd_thread *thread)
{
    for (size_t f = 0; thread->stack.state == HD_STACK_TAKEN && f < thread->stack.nframes; f++) {
        const struct hd_library *library = hd_process_find_library(process, thread->stack.frames[f].pc);
        if (library && passes_through(library))
            continue;
        return library ? report_catalogue_library(catalogue, library) : NULL;
    }
    return NULL;
}

size_t report_stack_runtimes(const struct report_catalogue *catalogue, const struct hd_process *process,
                             const struct hd_thread *thread, struct report_attribution *out, size_t max)
{
    size_t count = 0;
    for (size_t f = 0; thread->stack.state == HD_STACK_TAKEN && f < thread->stack.nframes && count < max; f++) {
        const struct hd_library *library;
        const struct report_runtime *runtime = runtime_of_code(catalogue, process, thread->stack.frames[f].pc, &library);
        bool seen = false;
        for (size_t i = 0; i < count && !seen; i++)
            seen = out[i].runtime == runtime;
        if (runtime && !seen)
            out[count++] = (struct report_attribution){ runtime, library, "a frame of its stack", runtime, NULL };
    }
    return count;
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
    *out = (struct report_attribution){ runtime, library, "the memory its futex lies in", runtime, NULL };
    if (runtime->traits & REPORT_RUNTIME_LIBC_INTERNAL)
        name_the_lock_by_function(catalogue, process, thread, out);
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

size_t report_threads_running(const struct report_analysis *analysis, const struct hd_process *process,
                              const struct report_runtime *runtime)
{
    size_t count = 0;
    for (size_t t = 0; process && t < process->nthreads; t++)
        count += report_thread_runs(analysis->catalogue, process, report_process_thread(&analysis->graph, process, t),
                                    runtime);
    return count;
}

/* "libgomp.so.1" for the text: the soname when there is one */
const char *report_library_name(const struct hd_library *library)
{
    return library->soname ? library->soname : hd_basename(library->path);
}

/* ---- evidence of a runtime -------------------------------------------------------------------------------------- */

void report_runtime_evidence(struct report_rule_context *c, struct report_finding *finding,
                             const struct report_attribution *attribution)
{
    const struct report_runtime *runtime = attribution->runtime;
    if (finding)
        finding->runtime = runtime;
    char name[256];
    rule_evidence(c, finding, "runtime", "%s", runtime->id);
    rule_evidence(c, finding, "runtime_text", "inside %s, %s, %s", report_library_name(attribution->library),
                  report_attribution_name(attribution, name, sizeof name), report_fork_safety_words(runtime->safety));
    if (attribution->function)
        rule_evidence(c, finding, "function", "%s", attribution->function);
    rule_evidence(c, finding, "runtime_library", "%s", attribution->library->path);
    if (attribution->library->build_id)
        rule_evidence(c, finding, "runtime_build_id", "%s", attribution->library->build_id);
    rule_evidence(c, finding, "attributed_by", "%s", attribution->how);
    rule_evidence(c, finding, "runtime_reason", "%s", runtime->reason);
}

/* The parent's threads that run the runtime: evidence that it was alive in the parent at fork(). */
size_t report_parent_thread_evidence(struct report_rule_context *c, struct report_finding *finding,
                                     const struct hd_process *parent, const struct report_runtime *runtime)
{
    size_t found = 0;
    for (size_t t = 0; parent && t < parent->nthreads; t++) {
        const struct hd_thread *thread = report_process_thread(&c->analysis->graph, parent, t);
        if (!report_thread_runs(c->catalogue, parent, thread, runtime))
            continue;
        if (found++ < EVIDENCE_THREADS_MAX)
            rule_evidence(c, finding, "parent_thread", "thread %d '%s' of parent %d runs %s", (int)thread->tid,
                     thread->name, (int)parent->pid, runtime->name);
    }
    return found;
}

bool report_handle_of(const struct report_catalogue *catalogue, const struct hd_fd *fd,
                      const struct report_runtime *runtime)
{
    return fd->inherited_from.pid && report_catalogue_handle(catalogue, fd) == runtime;
}

size_t report_inherited_handle_evidence(struct report_rule_context *c, struct report_finding *finding,
                                        const struct hd_process *process, const struct report_runtime *runtime)
{
    size_t found = 0;
    for (size_t f = 0; f < process->nfds; f++) {
        const struct hd_fd *fd = &process->fds[f];
        if (!report_handle_of(c->catalogue, fd, runtime))
            continue;
        if (found++ < EVIDENCE_HANDLES_MAX)
            rule_evidence(c, finding, "inherited_handle", "fd %d %s (%s) is fd %d of parent %d: the same open file (kcmp)",
                     fd->fd, fd->target, hd_fd_class_name(fd->fd_class), fd->inherited_from.fd,
                     (int)fd->inherited_from.pid);
    }
    return found;
}

void report_runtime_remedies(struct report_rule_context *c, struct report_finding *finding,
                             const struct report_runtime *runtime)
{
    for (size_t r = 0; r < runtime->nremedies; r++)
        rule_remedy(c, finding, runtime->remedies[r]);
}

/* ---- attributing the findings of the lock rules ------------------------------------------------------------------ */

static void append_to_summary(struct report_rule_context *c, struct report_finding *finding,
                              const struct report_attribution *attribution)
{
    char *longer = NULL, name[256];
    if (asprintf(&longer, "%s; inside %s (%s, %s)", finding->summary, report_library_name(attribution->library),
                 report_attribution_name(attribution, name, sizeof name),
                 report_fork_safety_words(attribution->runtime->safety)) < 0) {
        c->failed = true;
        return;
    }
    free(finding->summary);
    finding->summary = longer;
}

void report_attribute_lock_findings(struct report_rule_context *c)
{
    size_t count = c->analysis->nfindings;
    for (size_t f = 0; f < count; f++) {
        struct report_finding *finding = &c->analysis->findings[f];
        if (finding->kind != REPORT_INHERITED_LOCK && finding->kind != REPORT_ORPHANED_WAIT)
            continue;
        const struct hd_process *process;
        const struct hd_thread *thread = report_graph_thread(&c->analysis->graph, finding->tid, &process);
        struct report_attribution attribution;
        if (!thread || !report_attribute_thread(c->catalogue, process, thread, &attribution))
            continue;
        append_to_summary(c, finding, &attribution);
        report_runtime_evidence(c, finding, &attribution);
        const struct hd_process *parent = hd_snapshot_find_process(c->snapshot, process->ppid);
        report_parent_thread_evidence(c, finding, parent, attribution.runtime);
        report_inherited_handle_evidence(c, finding, process, attribution.runtime);
        report_runtime_remedies(c, finding, attribution.runtime);
    }
}

