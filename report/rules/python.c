/* The Python family (rule.h): spawn-reimport, a spawn child that runs the main module's top level.
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
