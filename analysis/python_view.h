/* The Python view in the analysis: each finding about a thread that runs Python names the user's line of code.
 *
 * Pure over the snapshot: the frames come from probe/python.h. A finding about a thread with a Python stack gets
 * the evidence `python` ("__getitem__ (/data/dataset.py:42)", the innermost frame) and its summary ends with the
 * place ("in Python: __getitem__ at dataset.py:42"), so that the first line a user reads points into their code.
 */
#pragma once

#include "analysis.h"

#include <stdbool.h>

/* False only when memory ran out. */
bool report_python_lines(const struct hd_snapshot *snapshot, struct report_analysis *analysis);

/* What a Python thread is to the libraries that started it, from the functions on its stack. Rules compare these,
 * never the words. */
enum report_thread_role {
    REPORT_ROLE_NONE, /* no frame says */
    REPORT_ROLE_DATALOADER_WORKER,
    REPORT_ROLE_DATALOADER_PIN_MEMORY,
    REPORT_ROLE_DATALOADER_MAIN_WAITING,
    REPORT_ROLE_POOL_WORKER,          /* multiprocessing.Pool's or ThreadPool's */
    REPORT_ROLE_POOL_WORKER_HANDLER,  /* a multiprocessing pool's handler threads */
    REPORT_ROLE_POOL_TASK_HANDLER,
    REPORT_ROLE_POOL_RESULT_HANDLER,
    REPORT_ROLE_QUEUE_FEEDER,
    REPORT_ROLE_RESOURCE_TRACKER,
    REPORT_ROLE_FORKSERVER,
    REPORT_ROLE_THREAD_POOL_EXECUTOR_WORKER,
    REPORT_ROLE_EVENT_LOOP,
    REPORT_ROLE_PROCESS_POOL_EXECUTOR_WORKER,
    REPORT_ROLES /* how many */
};
enum report_thread_role report_python_role(const struct hd_thread *thread);
/* The words for a role in the reports: "DataLoader worker", "multiprocessing pool worker", …; NULL for none. */
const char *report_thread_role_name(enum report_thread_role role);
/* A thread of a Python pool's machinery: a worker of a multiprocessing pool or ThreadPoolExecutor, or a
 * multiprocessing pool's handler. */
bool report_role_is_pool_machinery(enum report_thread_role role);

/* A library's message pump: a thread whose every Python frame is in that library's files, inside its receiver
 * loop (execnet's, the channel between a pytest-xdist worker and its controller). It waits on the outside, so it
 * may run at any time, but when it wakes it runs that library's code and the callbacks its known users register
 * (pytest-xdist's worker hands its commands to the main thread through one): it can free a waiter there (a worker
 * waiting for its next test), never a lock of the program's. Its row of the table of pumps, or NULL when `thread`
 * is no pump (also while it runs a callback of the program's). */
struct report_pump;
const struct report_pump *report_python_pump(const struct hd_thread *thread);
/* Could `pump` free `waiter` when it wakes: is the waiter's innermost frame that is not the standard library's
 * plumbing around a wait (report_python_place) in the pump's library or one whose callbacks it runs? */
bool report_pump_may_free(const struct report_pump *pump, const struct hd_thread *waiter);
/* The pump's library, for the reports: "execnet". */
const char *report_pump_library(const struct report_pump *pump);

/* Does `file` end with the path components `suffix` ("multiprocessing/pool.py" matches every install prefix)? */
bool report_python_file_is(const char *file, const char *suffix);
/* A function's own name, without the class a qualified name carries ("Pool._handle_workers": "_handle_workers"). */
const char *report_python_bare_name(const char *function);

/* The innermost frame of a Python thread that is the user's code rather than the standard library's threading or
 * multiprocessing machinery around a wait, or the innermost one when every frame is library code; NULL for a
 * thread without a Python stack. */
const struct hd_python_frame *report_python_place(const struct hd_thread *thread);
/* "function (file.py:12)" for `frame`, the file by its last component; "?" for what the frame lacks. */
void report_python_frame_words(const struct hd_python_frame *frame, char *out, size_t size);
/* ", in Python at consume (worker.py:12)", the place of report_python_place(), for a thread with a Python stack;
 * "" otherwise. Written into `out`, which it returns. */
const char *report_python_where(const struct hd_thread *thread, char *out, size_t size);
/* Is `symbol` (NULL: no) CPython's eval loop, whose every call runs Python frames up to an entry frame? */
bool report_runs_eval_loop(const char *symbol);
