/* The user's line of code on each finding (python.h). */
#include "python_view.h"

#include "finding.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frames of the standard library that only carry a wait out: a user who reads "waits in threading.py:320 in wait"
 * learns nothing; the caller of Event.wait() or Queue.get() is the line to show. Matched on the file's last two
 * components, so that every install prefix and version matches. */
static const char *const plumbing_files[] = {
    "threading.py", "queue.py", "multiprocessing/synchronize.py", "multiprocessing/connection.py",
    "multiprocessing/queues.py", "multiprocessing/pool.py", "multiprocessing/popen_fork.py",
    "multiprocessing/process.py", "concurrent/futures/_base.py", "selectors.py", "subprocess.py",
    /* asyncio's event loop: the line that runs it (asyncio.run(main())) is the user's; a task's own await is not on
     * the thread's stack while the loop waits */
    "asyncio/base_events.py", "asyncio/runners.py", "asyncio/events.py", "asyncio/selector_events.py",
    "asyncio/unix_events.py",
    /* torch.distributed's collectives and the logging wrapper around them: the line that called all_reduce is the
     * user's (the collective rules name the call itself) */
    "torch/distributed/distributed_c10d.py", "torch/distributed/c10d_logger.py",
};

static bool is_plumbing(const char *file)
{
    for (size_t i = 0; i < COUNT(plumbing_files); i++)
        if (report_python_file_is(file, plumbing_files[i]))
            return true;
    return false;
}

/* Roles by a function of a library file on the stack, innermost match first: a DataLoader worker's stack also
 * holds the multiprocessing bootstrap, and the worker loop is the more telling. */
static const struct {
    const char *file; /* last components of the file */
    const char *function;
    enum report_thread_role role;
} roles[] = {
    { "torch/utils/data/_utils/worker.py", "_worker_loop", REPORT_ROLE_DATALOADER_WORKER },
    { "torch/utils/data/_utils/pin_memory.py", "_pin_memory_loop", REPORT_ROLE_DATALOADER_PIN_MEMORY },
    { "torch/utils/data/dataloader.py", "_try_get_data", REPORT_ROLE_DATALOADER_MAIN_WAITING },
    { "torch/utils/data/dataloader.py", "_get_data", REPORT_ROLE_DATALOADER_MAIN_WAITING },
    { "multiprocessing/pool.py", "worker", REPORT_ROLE_POOL_WORKER },
    { "multiprocessing/pool.py", "_handle_workers", REPORT_ROLE_POOL_WORKER_HANDLER },
    { "multiprocessing/pool.py", "_handle_tasks", REPORT_ROLE_POOL_TASK_HANDLER },
    { "multiprocessing/pool.py", "_handle_results", REPORT_ROLE_POOL_RESULT_HANDLER },
    { "multiprocessing/queues.py", "_feed", REPORT_ROLE_QUEUE_FEEDER },
    { "multiprocessing/resource_tracker.py", "main", REPORT_ROLE_RESOURCE_TRACKER },
    { "multiprocessing/forkserver.py", "main", REPORT_ROLE_FORKSERVER },
    { "concurrent/futures/thread.py", "_worker", REPORT_ROLE_THREAD_POOL_EXECUTOR_WORKER },
    { "asyncio/base_events.py", "run_forever", REPORT_ROLE_EVENT_LOOP },
    { "concurrent/futures/process.py", "_process_worker", REPORT_ROLE_PROCESS_POOL_EXECUTOR_WORKER },
};

static const char *const role_names[REPORT_ROLES] = {
    [REPORT_ROLE_NONE] = NULL,
    [REPORT_ROLE_DATALOADER_WORKER] = "DataLoader worker",
    [REPORT_ROLE_DATALOADER_PIN_MEMORY] = "DataLoader pin-memory thread",
    [REPORT_ROLE_DATALOADER_MAIN_WAITING] = "DataLoader main, waiting for a batch",
    [REPORT_ROLE_POOL_WORKER] = "multiprocessing pool worker",
    [REPORT_ROLE_POOL_WORKER_HANDLER] = "multiprocessing pool's worker handler",
    [REPORT_ROLE_POOL_TASK_HANDLER] = "multiprocessing pool's task handler",
    [REPORT_ROLE_POOL_RESULT_HANDLER] = "multiprocessing pool's result handler",
    [REPORT_ROLE_QUEUE_FEEDER] = "multiprocessing queue feeder thread",
    [REPORT_ROLE_RESOURCE_TRACKER] = "multiprocessing resource tracker",
    [REPORT_ROLE_FORKSERVER] = "multiprocessing forkserver",
    [REPORT_ROLE_THREAD_POOL_EXECUTOR_WORKER] = "ThreadPoolExecutor worker",
    [REPORT_ROLE_EVENT_LOOP] = "asyncio event loop",
    [REPORT_ROLE_PROCESS_POOL_EXECUTOR_WORKER] = "ProcessPoolExecutor worker",
};

const char *report_thread_role_name(enum report_thread_role role)
{
    return (unsigned)role < REPORT_ROLES ? role_names[role] : NULL;
}

/* Message pumps by their loop's function. A pump's frames are all under `directory`; the waiters it may free wait
 * in `serves` (its own library, and the users that hand it a callback). */
#define PUMP_SERVES_MAX 3
struct report_pump {
    const char *library;   /* its name in the reports */
    const char *directory; /* as it appears in the files' paths */
    const char *file;      /* last components of the loop's file */
    const char *function;
    const char *serves[PUMP_SERVES_MAX];
};

static const struct report_pump pumps[] = {
    /* pytest-xdist 3.6 on: the worker's commands reach its main thread through a callback (TestQueue) */
    { "execnet", "execnet/", "execnet/gateway_base.py", "_thread_receiver", { "execnet/", "xdist/" } },
};

/* Is `file` under the directory `directory` ("execnet/"), wherever the library is installed? */
static bool file_in_directory(const char *file, const char *directory)
{
    const char *at = file ? strstr(file, directory) : NULL;
    return at && (at == file || at[-1] == '/');
}

bool report_pump_may_free(const struct report_pump *pump, const struct hd_thread *waiter)
{
    const struct hd_python_frame *place = report_python_place(waiter);
    for (size_t s = 0; place && s < PUMP_SERVES_MAX && pump->serves[s]; s++)
        if (file_in_directory(place->file, pump->serves[s]))
            return true;
    return false;
}

const char *report_pump_library(const struct report_pump *pump)
{
    return pump->library;
}

const struct report_pump *report_python_pump(const struct hd_thread *thread)
{
    if (!thread || thread->npython_frames == 0)
        return NULL;
    for (size_t p = 0; p < COUNT(pumps); p++) {
        bool loop = false, all_in_library = true;
        for (size_t f = 0; f < thread->npython_frames && all_in_library; f++) {
            const struct hd_python_frame *frame = &thread->python_frames[f];
            all_in_library = file_in_directory(frame->file, pumps[p].directory);
            loop |= report_python_file_is(frame->file, pumps[p].file) && frame->function &&
                    strcmp(report_python_bare_name(frame->function), pumps[p].function) == 0;
        }
        if (loop && all_in_library)
            return &pumps[p];
    }
    return NULL;
}

bool report_role_is_pool_machinery(enum report_thread_role role)
{
    switch (role) {
    case REPORT_ROLE_POOL_WORKER:
    case REPORT_ROLE_POOL_WORKER_HANDLER:
    case REPORT_ROLE_POOL_TASK_HANDLER:
    case REPORT_ROLE_POOL_RESULT_HANDLER:
    case REPORT_ROLE_THREAD_POOL_EXECUTOR_WORKER:
        return true;
    case REPORT_ROLE_NONE:
    case REPORT_ROLE_DATALOADER_WORKER:
    case REPORT_ROLE_DATALOADER_PIN_MEMORY:
    case REPORT_ROLE_DATALOADER_MAIN_WAITING:
    case REPORT_ROLE_QUEUE_FEEDER:
    case REPORT_ROLE_RESOURCE_TRACKER:
    case REPORT_ROLE_FORKSERVER:
    case REPORT_ROLE_EVENT_LOOP:
    case REPORT_ROLE_PROCESS_POOL_EXECUTOR_WORKER:
    case REPORT_ROLES:
        break;
    }
    return false;
}

bool report_python_file_is(const char *file, const char *suffix)
{
    size_t length = file ? strlen(file) : 0, n = strlen(suffix);
    return length >= n && strcmp(file + length - n, suffix) == 0 && (length == n || file[length - n - 1] == '/');
}

/* The function's own name: qualified names (3.11 on) carry their class ("Pool._handle_workers"). */
const char *report_python_bare_name(const char *function)
{
    const char *dot = function ? strrchr(function, '.') : NULL;
    return dot ? dot + 1 : function;
}

enum report_thread_role report_python_role(const struct hd_thread *thread)
{
    for (size_t f = 0; thread && f < thread->npython_frames; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        const char *name = report_python_bare_name(frame->function);
        for (size_t r = 0; name && r < COUNT(roles); r++)
            if (strcmp(name, roles[r].function) == 0 && report_python_file_is(frame->file, roles[r].file))
                return roles[r].role;
    }
    return REPORT_ROLE_NONE;
}

const struct hd_python_frame *report_python_place(const struct hd_thread *thread)
{
    if (!thread || thread->npython_frames == 0)
        return NULL;
    for (size_t f = 0; f < thread->npython_frames; f++)
        if (!is_plumbing(thread->python_frames[f].file))
            return &thread->python_frames[f];
    return &thread->python_frames[0];
}

bool report_python_lines(const struct hd_snapshot *snapshot, struct report_analysis *analysis)
{
    for (size_t f = 0; f < analysis->nfindings; f++) {
        struct report_finding *finding = &analysis->findings[f];
        if (finding->tid <= 0)
            continue;
        const struct hd_python_frame *place =
            report_python_place(hd_snapshot_find_thread(snapshot, finding->tid, NULL));
        if (!place)
            continue;
        const char *function = place->function ? place->function : "?";
        const char *file = place->file ? place->file : "?";
        char line[16] = "";
        if (place->line > 0)
            snprintf(line, sizeof line, ":%d", place->line);
        if (!report_finding_add_evidence(finding, "python", "%s (%s%s)", function, file, line))
            return false;
        const char *role = report_thread_role_name(report_python_role(hd_snapshot_find_thread(snapshot, finding->tid,
                                                                                                NULL)));
        if (role && !report_finding_add_evidence(finding, "role", "%s", role))
            return false;
        char *summary = NULL;
        if (asprintf(&summary, "%s; in Python: %s at %s%s", finding->summary, function, hd_basename(file), line) < 0)
            return false;
        free(finding->summary);
        finding->summary = summary;
    }
    return true;
}

void report_python_frame_words(const struct hd_python_frame *frame, char *out, size_t size)
{
    snprintf(out, size, "%s (%s:%d)", frame->function ? frame->function : "?",
             frame->file ? hd_basename(frame->file) : "?", frame->line);
}

const char *report_python_where(const struct hd_thread *thread, char *out, size_t size)
{
    const struct hd_python_frame *place = report_python_place(thread);
    char words[480];
    out[0] = '\0';
    if (place) {
        report_python_frame_words(place, words, sizeof words);
        snprintf(out, size, ", in Python at %s", words);
    }
    return out;
}

bool report_runs_eval_loop(const char *symbol)
{
    static const char *const eval_loops[] = { "_PyEval_EvalFrameDefault", "_PyEval_EvalFrame", "PyEval_EvalFrameEx" };
    for (size_t i = 0; symbol && i < COUNT(eval_loops); i++)
        if (strcmp(symbol, eval_loops[i]) == 0)
            return true;
    return false;
}
