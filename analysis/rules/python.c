/* The Python family (rule.h): spawn-reimport, a spawn child that runs the main module's top level, and
 * pool-starvation, a thread pool (ThreadPoolExecutor, multiprocessing's ThreadPool) whose every worker waits on a
 * result inside its task; and queue-join, a queue.Queue.join() that waits for tasks nobody will mark done.
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

#include "python_view.h"

#include <ctype.h>
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

/* The thread pools whose tasks can wait for tasks of their own pool, and how their frames say so. */
struct pool_kind {
    enum report_thread_role role; /* report_python_role() of its workers */
    const char *worker;         /* in the summary: "ThreadPoolExecutor worker", and its plural */
    const char *workers;
    const char *waits_on;       /* "a future", "a result" */
    const char *wait_file;      /* where the waits are (last components of the file) */
    const char *wait_functions[4]; /* and their functions, NULL-terminated */
    const char *task_file;      /* where the worker calls its task */
    const char *task_function;
    /* a thread each pool of the kind has once (its handler), to count the pools; NULL: not known */
    enum report_thread_role pool_role;
    const char *remedy;
};

static const struct pool_kind pool_kinds[] = {
    {
        .role = REPORT_ROLE_THREAD_POOL_EXECUTOR_WORKER,
        .worker = "ThreadPoolExecutor worker",
        .workers = "ThreadPoolExecutor workers",
        .waits_on = "a future",
        .wait_file = "concurrent/futures/_base.py",
        .wait_functions = { "result", "wait", "as_completed", NULL },
        .task_file = "concurrent/futures/thread.py",
        .task_function = "run",
        .remedy = "Do not wait inside a task for another task of the same pool: submit the inner work to another "
                  "executor, return the inner future instead of its result (or chain it with add_done_callback), or "
                  "give the pool more workers than tasks can nest.",
    },
    {
        /* multiprocessing.pool.ThreadPool: apply(), map() and starmap() wait in ApplyResult.get/wait, imap() in
         * IMapIterator.next; the task is called from worker() */
        .role = REPORT_ROLE_POOL_WORKER,
        .worker = "multiprocessing ThreadPool worker",
        .workers = "multiprocessing ThreadPool workers",
        .waits_on = "a result",
        .wait_file = "multiprocessing/pool.py",
        .wait_functions = { "get", "wait", "next", NULL },
        .task_file = "multiprocessing/pool.py",
        .task_function = "worker",
        .pool_role = REPORT_ROLE_POOL_WORKER_HANDLER,
        .remedy = "Do not wait inside a task for another task of the same pool (apply(), map(), or get() on an "
                  "AsyncResult of it): give the inner work to another pool, have the task return what the caller "
                  "then submits (or use apply_async with a callback), or give the pool more workers than tasks can "
                  "nest.",
    },
};

/* A worker of `kind` inside a task that waits on a result of a pool: its innermost frame of such a wait, or
 * SIZE_MAX. */
static size_t waits_in_a_task(const struct hd_thread *thread, const struct pool_kind *kind)
{
    size_t wait = SIZE_MAX;
    for (size_t f = 0; f < thread->npython_frames; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        if (!report_python_file_is(frame->file, wait == SIZE_MAX ? kind->wait_file : kind->task_file))
            continue;
        if (wait != SIZE_MAX && is_function(frame, kind->task_function))
            return wait;
        for (size_t w = 0; wait == SIZE_MAX && kind->wait_functions[w]; w++)
            if (is_function(frame, kind->wait_functions[w]))
                wait = f;
    }
    return SIZE_MAX;
}

/* The frame of the task that waits: the first frame outside the pool's and the threading module, outer than the
 * wait; SIZE_MAX when there is none. */
static size_t task_frame(const struct hd_thread *thread, size_t wait, const struct pool_kind *kind)
{
    for (size_t f = wait + 1; f < thread->npython_frames; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        if (!report_python_file_is(frame->file, kind->wait_file) &&
            !report_python_file_is(frame->file, kind->task_file) && !report_python_file_is(frame->file, "threading.py"))
            return f;
    }
    return SIZE_MAX;
}

/* A worker of `kind`: a process Pool's worker is the main thread of a process of its own, whose tasks cannot wait
 * for its pool (the pool stays in the parent); a ThreadPool's is a thread beside the pool's owner. */
static bool pool_worker(const struct report_node *node, const struct pool_kind *kind)
{
    return report_python_role(node->thread) == kind->role && node->thread->tid != node->process->pid;
}

#define STARVED_WORKERS_LISTED 8

static bool has_role(const struct report_node *node, enum report_thread_role role)
{
    return role != REPORT_ROLE_NONE && report_python_role(node->thread) == role;
}

/* Does the process run a process Pool (a child whose main thread is a multiprocessing pool worker)? Its handler
 * threads look like a ThreadPool's, so the pools cannot be counted. */
static bool runs_a_process_pool(const struct hd_snapshot *snapshot, const struct hd_process *process)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *child = &snapshot->processes[p];
        const struct hd_thread *main_thread = child->ppid == process->pid ? hd_process_find_thread(child, child->pid)
                                                                          : NULL;
        if (main_thread && report_python_role(main_thread) == REPORT_ROLE_POOL_WORKER)
            return true;
    }
    return false;
}

/* A pool's workers asleep forever inside tasks that wait on results. Idle workers beside them (asleep forever too,
 * waiting for a task) are of another pool, when the process has several: one of the starved pool would have taken
 * the queued task. With one pool, or pools that cannot be counted (a process Pool's handlers beside them), an idle
 * worker says the tasks wait on something else. */
static void starved_pool(struct report_rule_context *c, const struct report_graph_process *process,
                         const struct pool_kind *kind)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t workers = 0, waiting = 0, idle = 0, pools = 0, first = REPORT_NO_NODE;
    for (size_t n = process->first_node; n < process->first_node + process->nnodes; n++) {
        const struct report_node *node = &graph->nodes[n];
        pools += has_role(node, kind->pool_role);
        if (!pool_worker(node, kind))
            continue;
        workers++;
        if (node->wake != REPORT_WAKE_NEVER)
            continue;
        if (waits_in_a_task(node->thread, kind) == SIZE_MAX) {
            idle++;
            continue;
        }
        waiting++;
        if (first == REPORT_NO_NODE)
            first = n;
    }
    if (waiting == 0 || waiting + idle != workers ||
        (idle > 0 && (pools < 2 || runs_a_process_pool(c->snapshot, process->process))))
        return;
    char who[256];
    if (idle == 1)
        snprintf(who, sizeof who,
                 "%zu of the %zu %s of process %d wait (the other one, idle, is of another of its %zu pools: one of "
                 "the starved pool would take the queued task)",
                 waiting, workers, kind->workers, (int)process->process->pid, pools);
    else if (idle > 0)
        snprintf(who, sizeof who,
                 "%zu of the %zu %s of process %d wait (the other %zu, idle, are of others of its %zu pools: one of "
                 "the starved pool would take the queued task)",
                 waiting, workers, kind->workers, (int)process->process->pid, idle, pools);
    else if (workers == 1)
        snprintf(who, sizeof who, "the only %s of process %d waits", kind->worker, (int)process->process->pid);
    else
        snprintf(who, sizeof who, "all %zu %s of process %d wait", workers, kind->workers,
                 (int)process->process->pid);
    struct report_finding *finding =
        rule_finding(c, REPORT_POOL_STARVATION, REPORT_LIKELY, &graph->nodes[first],
                     "%s, inside a task, on %s that only a worker could complete: likely a task waits for a task "
                     "queued behind it in its own full pool",
                     who, kind->waits_on);
    size_t listed = 0;
    for (size_t n = process->first_node; n < process->first_node + process->nnodes && finding; n++) {
        const struct report_node *node = &graph->nodes[n];
        if (!pool_worker(node, kind) || waits_in_a_task(node->thread, kind) == SIZE_MAX)
            continue;
        rule_member(c, finding, n);
        if (listed++ >= STARVED_WORKERS_LISTED)
            continue;
        /* the call the task made (Pool.apply, Future.result), or the innermost wait when no task frame shows */
        size_t wait = waits_in_a_task(node->thread, kind);
        size_t task = task_frame(node->thread, wait, kind);
        size_t call = task != SIZE_MAX ? task - 1 : wait;
        char words[480] = "? (?:0)";
        if (task != SIZE_MAX)
            report_python_frame_words(&node->thread->python_frames[task], words, sizeof words);
        rule_evidence(c, finding, "worker", "thread %d '%s' waits in %s, called from its task %s",
                      (int)node->thread->tid, node->thread->name, node->thread->python_frames[call].function, words);
    }
    if (listed > STARVED_WORKERS_LISTED)
        rule_evidence(c, finding, "worker", "and %zu more workers", listed - STARVED_WORKERS_LISTED);
    /* the idle workers beside them, which the summary puts in another pool: which threads they are */
    listed = 0;
    for (size_t n = process->first_node; n < process->first_node + process->nnodes && finding && idle; n++) {
        const struct report_node *node = &graph->nodes[n];
        if (!pool_worker(node, kind) || waits_in_a_task(node->thread, kind) != SIZE_MAX)
            continue;
        if (listed++ < STARVED_WORKERS_LISTED)
            rule_evidence(c, finding, "idle_worker", "thread %d '%s' is idle, waiting for work: a worker of another "
                          "of the %zu pools of process %d", (int)node->thread->tid, node->thread->name, pools,
                          (int)process->process->pid);
    }
    if (listed > STARVED_WORKERS_LISTED)
        rule_evidence(c, finding, "idle_worker", "and %zu more idle workers", listed - STARVED_WORKERS_LISTED);
    rule_remedy(c, finding, kind->remedy);
}

/* Every worker of a thread pool of a process asleep forever inside a task, waiting on a future or result: one
 * that only a worker could complete, while every worker waits (a task that submits to its own pool and waits for
 * the result, with the pool full). Whether the results are of the same pool no frame says: likely. */
void report_rule_pool_starvation(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < graph->nprocesses && !c->failed; p++)
        for (size_t k = 0; k < COUNT(pool_kinds); k++)
            starved_pool(c, &graph->processes[p], &pool_kinds[k]);
}

/* ---- queue-join ------------------------------------------------------------------------------------------------ */

/* A frame of the standard library's module `file` (lib/pythonX.Y/`file`), not of a namesake elsewhere. */
static bool stdlib_frame(const struct hd_python_frame *frame, const char *file)
{
    if (!report_python_file_is(frame->file, file) || strlen(frame->file) == strlen(file))
        return false;
    const char *slash = frame->file + strlen(frame->file) - strlen(file) - 1, *directory = slash;
    while (directory > frame->file && directory[-1] != '/')
        directory--;
    return slash - directory > 6 && strncmp(directory, "python", 6) == 0 && isdigit((unsigned char)directory[6]);
}

/* The frame of the thread's call into queue.Queue's `function` (join, get) when that is where it waits: its
 * innermost frame outside threading.py (Queue.join waits in Condition.wait); SIZE_MAX otherwise. */
static size_t waits_in_queue(const struct hd_thread *thread, const char *function)
{
    for (size_t f = 0; f < thread->npython_frames; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        if (stdlib_frame(frame, "threading.py"))
            continue;
        return stdlib_frame(frame, "queue.py") && is_function(frame, function) ? f : SIZE_MAX;
    }
    return SIZE_MAX;
}

#define QUEUE_THREADS_LISTED 8

/* Were the process's Python stacks read whole (no note that its interpreter's state could not be read)? A thread
 * whose frames are missing may be the consumer at its task. */
static bool python_read_whole(const struct hd_snapshot *snapshot, const struct hd_process *process)
{
    for (size_t n = 0; n < snapshot->nnotes; n++)
        if (snapshot->notes[n].kind == HD_NOTE_PYTHON && snapshot->notes[n].pid == process->pid)
            return false;
    return true;
}

/* One evidence line for a thread in Queue.join or Queue.get: the call, and the program's frame that made it. */
static void queue_evidence(struct report_rule_context *c, struct report_finding *finding, const char *name,
                           const struct hd_thread *thread, size_t call)
{
    char words[480] = "? (?:0)";
    if (call + 1 < thread->npython_frames)
        report_python_frame_words(&thread->python_frames[call + 1], words, sizeof words);
    rule_evidence(c, finding, name, "thread %d '%s' waits in %s, called from %s", (int)thread->tid, thread->name,
                  thread->python_frames[call].function, words);
}

/* A thread asleep forever in queue.Queue.join(), while every other Python thread of its process is asleep forever
 * in Queue.get() or gone: join() waits until each task taken is marked done, and the queue is empty (its
 * consumers wait for more), so a get() had no task_done() (a task that raised or returned early), or the consumers
 * are gone (an exception ends a thread). A thread in Python code elsewhere may be the consumer still at its task:
 * then nothing is said. Whether the consumers serve the queue joined no frame says: likely. */
void report_rule_queue_join(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < graph->nprocesses && !c->failed; p++) {
        const struct report_graph_process *process = &graph->processes[p];
        size_t joiners = 0, consumers = 0, first = REPORT_NO_NODE;
        bool elsewhere = false;
        for (size_t n = process->first_node; n < process->first_node + process->nnodes; n++) {
            const struct report_node *node = &graph->nodes[n];
            if (node->thread->npython_frames == 0)
                continue; /* no Python of its own: a library's thread, no consumer */
            bool never = node->wake == REPORT_WAKE_NEVER;
            if (never && waits_in_queue(node->thread, "join") != SIZE_MAX) {
                joiners++;
                first = first == REPORT_NO_NODE ? n : first;
            } else if (never && waits_in_queue(node->thread, "get") != SIZE_MAX) {
                consumers++;
            } else {
                elsewhere = true;
            }
        }
        if (joiners == 0 || elsewhere || !python_read_whole(c->snapshot, process->process))
            continue;
        const struct report_node *subject = &graph->nodes[first];
        char others[64] = "the other Python thread";
        if (consumers > 1)
            snprintf(others, sizeof others, "the %zu other Python threads", consumers);
        struct report_finding *finding =
            consumers > 0
                ? rule_finding(c, REPORT_QUEUE_JOIN, REPORT_LIKELY, subject,
                               "thread %d '%s' waits in Queue.join() for tasks that nobody will mark done: %s of "
                               "process %d wait%s in Queue.get() for more (their queue is empty), so a task was taken "
                               "without task_done() (one that raised or returned early)",
                               (int)subject->thread->tid, subject->thread->name, others, (int)process->process->pid,
                               consumers == 1 ? "s" : "")
                : rule_finding(c, REPORT_QUEUE_JOIN, REPORT_LIKELY, subject,
                               "thread %d '%s' waits in Queue.join() for tasks that nobody will mark done: no other "
                               "Python thread of process %d is left to take them, so its consumers ended without "
                               "task_done() (an exception in a task ends its thread) or never started",
                               (int)subject->thread->tid, subject->thread->name, (int)process->process->pid);
        size_t listed = 0;
        for (size_t n = process->first_node; n < process->first_node + process->nnodes && finding; n++) {
            const struct hd_thread *thread = graph->nodes[n].thread;
            size_t join = waits_in_queue(thread, "join"), get = waits_in_queue(thread, "get");
            if (join == SIZE_MAX && get == SIZE_MAX)
                continue;
            rule_member(c, finding, n);
            if (listed++ < QUEUE_THREADS_LISTED)
                queue_evidence(c, finding, join != SIZE_MAX ? "joiner" : "consumer", thread,
                               join != SIZE_MAX ? join : get);
        }
        if (listed > QUEUE_THREADS_LISTED)
            rule_evidence(c, finding, "consumer", "and %zu more threads", listed - QUEUE_THREADS_LISTED);
        rule_remedy(c, finding, "Call task_done() once for every get(), in a finally: block, so that a task that "
                                "raises or returns early still counts; catch what a task raises inside the consumer's "
                                "loop, so that one failure does not end the thread.");
        rule_remedy(c, finding, "Where a consumer may still die, wait with a deadline of your own instead of join() "
                                "(poll unfinished_tasks, or join a sentinel-stopped consumer thread with a timeout).");
    }
}

/* ---- event-loop-blocked ---------------------------------------------------------------------------------------- */

/* A file of the standard library (lib/pythonX.Y/...), not of a package installed beside it. */
static bool standard_library(const char *file)
{
    const char *lib = file ? strstr(file, "/lib/python") : NULL;
    return lib && isdigit((unsigned char)lib[11]) && strchr(lib + 11, '/') && !strstr(lib, "-packages/");
}

/* The frame of asyncio's Handle._run (a callback or a task's step, run by the loop), or SIZE_MAX. */
static size_t loop_callback_frame(const struct hd_thread *thread)
{
    for (size_t f = 0; f < thread->npython_frames; f++)
        if (report_python_file_is(thread->python_frames[f].file, "asyncio/events.py") &&
            is_function(&thread->python_frames[f], "_run"))
            return f;
    return SIZE_MAX;
}

/* The innermost frame of the program's own code inside the callback (a coroutine's), or SIZE_MAX: where the
 * blocking call was made. */
static size_t program_frame(const struct hd_thread *thread, size_t callback)
{
    for (size_t f = 0; f < callback; f++)
        if (!standard_library(thread->python_frames[f].file))
            return f;
    return SIZE_MAX;
}

/* The thread of an asyncio event loop asleep forever inside one of the loop's callbacks (a coroutine's step): the
 * loop waits only in its selector, so a wait under Handle._run is a synchronous call that blocks the whole loop.
 * No task, callback or I/O of that loop runs until it returns; when it is asleep forever, what it waits for never
 * comes, most often because that was itself to run on this loop (run_coroutine_threadsafe(coro, loop).result() from
 * the loop's own thread). The hang is certain; why it waits, likely. */
void report_rule_event_loop_blocked(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t n = 0; n < graph->nnodes && !c->failed; n++) {
        const struct report_node *node = &graph->nodes[n];
        const struct hd_thread *thread = node->thread;
        if (node->wake != REPORT_WAKE_NEVER || thread->npython_frames == 0)
            continue;
        size_t callback = loop_callback_frame(thread);
        if (report_python_role(thread) != REPORT_ROLE_EVENT_LOOP || callback == SIZE_MAX || callback == 0)
            continue;
        size_t caller = program_frame(thread, callback);
        /* the call the program made (Future.result), from its frame (a coroutine); the innermost frame if none */
        size_t made = caller != SIZE_MAX && caller > 0 ? caller - 1 : 0;
        char call[480], where[480] = "? (?:0)";
        report_python_frame_words(&thread->python_frames[made], call, sizeof call);
        if (caller != SIZE_MAX)
            report_python_frame_words(&thread->python_frames[caller], where, sizeof where);
        struct report_finding *finding = rule_finding(
            c, REPORT_EVENT_LOOP_BLOCKED, REPORT_LIKELY, node,
            "the asyncio event loop of thread %d '%s' (process %d) is blocked for ever in a synchronous call, %s "
            "from %s, made in a callback it runs: no task, callback or I/O of this loop can run, so what the call "
            "waits for never comes if this loop was to run it (a coroutine given to run_coroutine_threadsafe, a "
            "future set from call_soon_threadsafe)",
            (int)thread->tid, thread->name, (int)node->process->pid, thread->python_frames[made].function, where);
        rule_evidence(c, finding, "call", "%s, called from %s", call, where);
        char loop[480];
        report_python_frame_words(&thread->python_frames[callback], loop, sizeof loop);
        rule_evidence(c, finding, "loop", "the call runs under %s: a callback or a coroutine's step that the loop "
                                          "runs, not the loop's own wait in its selector", loop);
        rule_remedy(c, finding, "Never block the loop's thread: await the work (await the coroutine itself, or await "
                                "asyncio.wrap_future(future)); run a blocking call in a thread with await "
                                "asyncio.to_thread(f) or loop.run_in_executor(None, f). "
                                "run_coroutine_threadsafe(...).result() is for threads other than the loop's.");
    }
}
