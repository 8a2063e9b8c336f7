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
    const char *role;
} roles[] = {
    { "torch/utils/data/_utils/worker.py", "_worker_loop", "DataLoader worker" },
    { "torch/utils/data/_utils/pin_memory.py", "_pin_memory_loop", "DataLoader pin-memory thread" },
    { "torch/utils/data/dataloader.py", "_try_get_data", "DataLoader main, waiting for a batch" },
    { "torch/utils/data/dataloader.py", "_get_data", "DataLoader main, waiting for a batch" },
    { "multiprocessing/pool.py", "worker", "multiprocessing pool worker" },
    { "multiprocessing/pool.py", "_handle_workers", "multiprocessing pool's worker handler" },
    { "multiprocessing/pool.py", "_handle_tasks", "multiprocessing pool's task handler" },
    { "multiprocessing/pool.py", "_handle_results", "multiprocessing pool's result handler" },
    { "multiprocessing/queues.py", "_feed", "multiprocessing queue feeder thread" },
    { "multiprocessing/resource_tracker.py", "main", "multiprocessing resource tracker" },
    { "multiprocessing/forkserver.py", "main", "multiprocessing forkserver" },
    { "concurrent/futures/thread.py", "_worker", "ThreadPoolExecutor worker" },
    { "asyncio/base_events.py", "run_forever", "asyncio event loop" },
    { "concurrent/futures/process.py", "_process_worker", "ProcessPoolExecutor worker" },
};

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

const char *report_python_role(const struct hd_thread *thread)
{
    for (size_t f = 0; thread && f < thread->npython_frames; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        const char *name = report_python_bare_name(frame->function);
        for (size_t r = 0; name && r < COUNT(roles); r++)
            if (strcmp(name, roles[r].function) == 0 && report_python_file_is(frame->file, roles[r].file))
                return roles[r].role;
    }
    return NULL;
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
        const char *role = report_python_role(hd_snapshot_find_thread(snapshot, finding->tid, NULL));
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
