/* The Python family (rule.h): spawn-reimport, a spawn child that runs the main module's top level, and
 * pool-starvation, a ThreadPoolExecutor whose every worker waits on a future inside its task.
 *
 * Python's spawn and forkserver start methods start a fresh interpreter, which imports the parent's main module
 * under the name __mp_main__ before it runs the target (multiprocessing/spawn.py, _fixup_main_from_path). A script
 * without the `if __name__ == '__main__':` guard then runs its whole top level again in every child: the child
 * takes the parent's lock file, connects to what the parent serves, starts training, and never reaches its
 * target, while the parent waits for it. The Python stack says so: a `<module>` frame of the main script under
 * _fixup_main_from_path. Importing what the script imports passes through there too (`import torch` at the top
 * takes seconds): while the innermost frames are the import machinery, nothing is said.
 */
#include "rule.h"

#include "../python.h"

#include <stdio.h>
#include <string.h>

static bool is_function(const struct hd_python_frame *frame, const char *function)
{
    const char *name = report_python_bare_name(frame->function);
    return name && strcmp(name, function) == 0;
}

/* The frame of the main module's top level that a spawn child's preparation runs, or SIZE_MAX: the outermost
 * `<module>` frame inside _fixup_main_from_path (or _from_name, for `python -m`). */
static size_t main_module_frame(const struct hd_thread *thread)
{
    for (size_t f = thread->npython_frames; f-- > 0;) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        if (!report_python_file_is(frame->file, "multiprocessing/spawn.py") ||
            !(is_function(frame, "_fixup_main_from_path") || is_function(frame, "_fixup_main_from_name")))
            continue;
        for (size_t inner = f; inner-- > 0;)
            if (thread->python_frames[inner].function && strcmp(thread->python_frames[inner].function, "<module>") == 0)
                return inner;
        return SIZE_MAX;
    }
    return SIZE_MAX;
}

/* Is the innermost frame in the import machinery (an import the top level makes, which is allowed)? */
static bool importing(const struct hd_thread *thread)
{
    const char *file = thread->python_frames[0].file;
    return file && (strstr(file, "importlib._bootstrap") || strstr(file, "importlib/_bootstrap"));
}

void report_rule_spawn_reimport(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < graph->nprocesses; p++) {
        const struct report_graph_process *entry = &graph->processes[p];
        if (entry->nnodes == 0)
            continue;
        /* the main thread: the one that runs the preparation */
        const struct report_node *node = &graph->nodes[entry->first_node];
        const struct hd_thread *thread = node->thread;
        if (thread->tid != entry->process->pid || thread->npython_frames == 0)
            continue;
        size_t top = main_module_frame(thread);
        if (top == SIZE_MAX || importing(thread))
            continue;
        const struct hd_python_frame *module = &thread->python_frames[top];
        const struct hd_python_frame *place = report_python_place(thread);
        struct report_finding *finding = rule_finding(
            c, REPORT_SPAWN_REIMPORT, REPORT_LIKELY, node,
            "process %d, a spawn child, runs the main module's top level (%s) instead of its target: the script "
            "lacks an `if __name__ == '__main__':` guard",
            (int)entry->process->pid, module->file ? module->file : "?");
        rule_evidence(c, finding, "main_module", "%s:%d", module->file ? module->file : "?", module->line);
        if (place && place != module)
            rule_evidence(c, finding, "top_level_waits_in", "%s (%s:%d)", place->function ? place->function : "?",
                          place->file ? place->file : "?", place->line);
        if (entry->process->python_role)
            rule_evidence(c, finding, "python_role", "%s", hd_python_role_name(entry->process->python_role));
        rule_evidence(c, finding, "state", "%s", report_wake_name(node->wake));
        rule_remedy(c, finding,
                    "put the script's top-level work under `if __name__ == '__main__':` (with spawn and forkserver, "
                    "every child imports the main module as __mp_main__ and runs whatever is not guarded)");
        rule_remedy(c, finding,
                    "keep module level to imports, definitions and constants; open files, take locks, connect and "
                    "start work in main()");
    }
}

/* ---- pool-starvation --------------------------------------------------------------------------------------- */

/* A ThreadPoolExecutor's worker inside a task (under _WorkItem.run) that waits on a future: Future.result(), or
 * concurrent.futures.wait() / as_completed(). Its innermost frame of the futures module, or SIZE_MAX. */
static size_t waits_on_a_future_in_a_task(const struct hd_thread *thread)
{
    size_t wait = SIZE_MAX;
    bool in_task = false;
    for (size_t f = 0; f < thread->npython_frames; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        if (wait == SIZE_MAX && report_python_file_is(frame->file, "concurrent/futures/_base.py") &&
            (is_function(frame, "result") || is_function(frame, "wait") || is_function(frame, "as_completed")))
            wait = f;
        else if (wait != SIZE_MAX && report_python_file_is(frame->file, "concurrent/futures/thread.py") &&
                 is_function(frame, "run"))
            in_task = true;
    }
    return in_task ? wait : SIZE_MAX;
}

/* The frame of the task that waits: the first frame outside the futures and threading modules, outer than the
 * wait. */
static const struct hd_python_frame *task_frame(const struct hd_thread *thread, size_t wait)
{
    for (size_t f = wait + 1; f < thread->npython_frames; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        if (!report_python_file_is(frame->file, "concurrent/futures/_base.py") &&
            !report_python_file_is(frame->file, "concurrent/futures/thread.py") &&
            !report_python_file_is(frame->file, "threading.py"))
            return frame;
    }
    return NULL;
}

#define STARVED_WORKERS_LISTED 8

/* Every ThreadPoolExecutor worker of a process asleep forever inside a task, waiting on a future: a future that
 * only a worker could complete, while every worker waits (a task that submits to its own pool and waits for the
 * result, with the pool full). Whether the futures are of the same pool no frame says: likely. */
void report_rule_pool_starvation(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < graph->nprocesses && !c->failed; p++) {
        const struct report_graph_process *process = &graph->processes[p];
        size_t workers = 0, waiting = 0, first = REPORT_NO_NODE;
        for (size_t n = process->first_node; n < process->first_node + process->nnodes; n++) {
            const struct report_node *node = &graph->nodes[n];
            const char *role = report_python_role(node->thread);
            if (!role || strcmp(role, "ThreadPoolExecutor worker") != 0)
                continue;
            workers++;
            if (node->wake == REPORT_WAKE_NEVER && waits_on_a_future_in_a_task(node->thread) != SIZE_MAX) {
                waiting++;
                if (first == REPORT_NO_NODE)
                    first = n;
            }
        }
        if (workers == 0 || waiting != workers)
            continue;
        char who[96];
        if (workers == 1)
            snprintf(who, sizeof who, "the only ThreadPoolExecutor worker of process %d waits",
                     (int)graph->nodes[first].process->pid);
        else
            snprintf(who, sizeof who, "all %zu ThreadPoolExecutor workers of process %d wait", workers,
                     (int)graph->nodes[first].process->pid);
        struct report_finding *finding = rule_finding(
            c, REPORT_POOL_STARVATION, REPORT_LIKELY, &graph->nodes[first],
            "%s, inside a task, on a future that only a worker could complete: likely a task waits for a task "
            "queued behind it in its own full pool", who);
        size_t listed = 0;
        for (size_t n = process->first_node; n < process->first_node + process->nnodes && finding; n++) {
            const struct report_node *node = &graph->nodes[n];
            const char *role = report_python_role(node->thread);
            if (!role || strcmp(role, "ThreadPoolExecutor worker") != 0)
                continue;
            rule_member(c, finding, n);
            if (listed++ >= STARVED_WORKERS_LISTED)
                continue;
            size_t wait = waits_on_a_future_in_a_task(node->thread);
            const struct hd_python_frame *task = task_frame(node->thread, wait);
            char words[480] = "? (?:0)";
            if (task)
                report_python_frame_words(task, words, sizeof words);
            rule_evidence(c, finding, "worker", "thread %d '%s' waits in %s, called from its task %s",
                          (int)node->thread->tid, node->thread->name, node->thread->python_frames[wait].function,
                          words);
        }
        if (listed > STARVED_WORKERS_LISTED)
            rule_evidence(c, finding, "worker", "and %zu more workers", listed - STARVED_WORKERS_LISTED);
        rule_remedy(c, finding, "Do not wait inside a task for another task of the same pool: submit the inner work "
                                "to another executor, return the inner future instead of its result (or chain it "
                                "with add_done_callback), or give the pool more workers than tasks can nest.");
    }
}
