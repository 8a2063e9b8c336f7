/* Python hangs that need the Python view (issue 16), each a real program run by every CPython found at test time
 * (Debian's /usr/bin/python3 and every pyenv 3.10-3.13; the absent ones are skipped, saying so):
 * - a GIL deadlock built with ctypes (scenarios/gil_deadlock.py with libgil_callback.so): a library thread holds a
 *   mutex and calls back into Python, the main thread holds the GIL and calls in for that mutex; hangdoc must see a
 *   lock-cycle through the GIL, with the user's line;
 * - a fork() from C that CPython did not see (scenarios/gil_fork.py): the child waits for a GIL whose holder stayed
 *   in the parent: inherited-lock naming the Python GIL;
 * - a threading.Lock held by a thread when the process forked, acquired in the child (scenarios/python_fork_lock.py):
 *   orphaned-wait naming the child's line;
 * - a spawn child that runs the main script's top level for want of a main guard (scenarios/spawn_reimport.py):
 *   spawn-reimport about the child, naming the script's line;
 * - h5py's global lock held by a parent thread at fork (scenarios/h5py_fork.py, Debian's python only): orphaned-wait
 *   inside HDF5 (h5py), and its healthy look-alike;
 * - thread pools starved by their own tasks (scenarios/pool_starvation.py), Queue.join() waiting for tasks nobody
 *   will mark done (scenarios/queue_join.py) and an asyncio loop blocked in its own coroutine
 *   (scenarios/asyncio_blocked.py), each with its look-alike;
 * - an Event, a Queue or an asyncio future whose setter died of an exception (scenarios/setter_died.py): no-waker,
 *   and its look-alike;
 * - a signal handler that takes the lock the code it interrupted holds (scenarios/signal_handler_lock.py):
 *   signal-reentry, and its look-alike;
 * - a regular expression backtracking for ever while the main thread joins its thread (scenarios/regex_backtrack.py):
 *   spinning in one Python call, and a computation that moves on.
 * Exact ids, subjects, members and evidence, in JSON and in the text.
 */
#include "harness.h"
#include "python_harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READY_TIMEOUT_MS 30000

TestSuite(python_hangs, .fini = fixture_stop_all, .timeout = 300);

static void start_script(struct fixture *fixture, const char *python, const char *script, const char *argument)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/scenarios/%s", getenv("HANGDOC_SOURCE_ROOT"), script);
    cr_log_info("%s %s", python, script);
    fixture_start_command(fixture, python, (const char *[]){ python, path, argument, NULL }, READY_TIMEOUT_MS);
}

/* The ctypes fixtures take the path of their C half, libgil_callback.so. */
static void start_with_library(struct fixture *fixture, const char *python, const char *script)
{
    char library[4096];
    snprintf(library, sizeof library, "%s/libgil_callback.so", getenv("HANGDOC_FIXTURES"));
    start_script(fixture, python, script, library);
}

/* How many values of the finding's evidence `name` (a string, or an array of them when repeated) contain `part`. */
static size_t evidence_containing(json_object *finding, const char *name, const char *part)
{
    json_object *evidence = json_at(finding, "evidence"), *values = NULL;
    if (!evidence || !json_object_object_get_ex(evidence, name, &values))
        return 0;
    if (json_object_is_type(values, json_type_string))
        return strstr(json_object_get_string(values), part) != NULL;
    size_t found = 0;
    for (size_t i = 0; json_object_is_type(values, json_type_array) && i < json_object_array_length(values); i++)
        found += strstr(json_object_get_string(json_object_array_get_idx(values, i)), part) != NULL;
    return found;
}

static bool has_member(json_object *finding, pid_t tid)
{
    json_object *members = json_at(finding, "members");
    for (size_t i = 0; members && i < json_object_array_length(members); i++)
        if (json_int_at(json_object_array_get_idx(members, i), "tid", 0) == tid)
            return true;
    return false;
}

static void text_report(pid_t pid, struct run_result *result)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    hangdoc_run(result, (const char *[]){ "--samples", "3", "--interval", "100ms", pid_text, NULL });
}

/* ---- the GIL deadlock ---------------------------------------------------------------------------------------- */

/* ready <pid> <main tid> <library thread tid> */
static void expect_gil_cycle(const char *python, unsigned minor)
{
    struct fixture fixture;
    start_with_library(&fixture, python, "gil_deadlock.py");
    pid_t pid = fixture.pids[0], main_thread = fixture.pids[1], library_thread = fixture.pids[2];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    expect_python_version(document, pid, &minor);

    cr_assert_eq(status, 1, "a deadlock: exit 1, got %d", status);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "deadlock");
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "lock-cycle");
    cr_assert_eq(json_count_findings(document, "lock-cycle", pid), 1);
    json_object *cycle = json_first_finding(document, "lock-cycle", pid);
    cr_assert_eq(json_int_at(cycle, "tid", 0), main_thread);
    cr_assert(has_member(cycle, main_thread) && has_member(cycle, library_thread));
    cr_assert_eq(evidence_containing(cycle, "waiter", "waits for Python GIL"), 1, "%s", json_object_to_json_string(cycle));
    char line[64];
    snprintf(line, sizeof line, "gil_deadlock.py:%ld)", python_marked_line("gil_deadlock.py", "register"));
    cr_assert_eq(evidence_containing(cycle, "python", line), 1, "%s", json_object_to_json_string(cycle));
    cr_assert_geq(json_count_remedies(cycle, "ctypes.CDLL"), 1);

    expect_gil(document, pid, main_thread, "holds");
    expect_gil(document, pid, library_thread, "waits");
    json_object *waiting = json_thread(json_process(document, pid), library_thread);
    cr_assert_str_eq(json_string_at(waiting, "wait.lock.kind"), "gil");
    cr_assert_eq(json_int_at(waiting, "wait.owner_tid", 0), main_thread);
    cr_assert_str_eq(json_string_at(waiting, "wait.lock.owner_whereabouts"), "same-process");
    expect_python_frame(python_frames_of(document, pid, main_thread), 0, "register", "gil_deadlock.py",
                        python_marked_line("gil_deadlock.py", "register"), minor);
    expect_python_frame(python_frames_of(document, pid, main_thread), 1, "main", "gil_deadlock.py",
                        python_marked_line("gil_deadlock.py", "main"), minor);
    json_object_put(document);

    struct run_result result;
    text_report(pid, &result);
    cr_assert_eq(result.exit_status, 1);
    cr_assert(strstr(result.out, "waits for the Python GIL"), "%s", result.out);
    cr_assert(strstr(result.out, ", holds the GIL"), "%s", result.out);
    cr_assert(strstr(result.out, "py register ("), "the Python frames in the stacks: %s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}

Test(python_hangs, gil_deadlock_of_the_system_python)
{
    python_each_version(0, expect_gil_cycle);
}

Test(python_hangs, gil_deadlock_of_cpython_3_10)
{
    python_each_version(10, expect_gil_cycle);
}

Test(python_hangs, gil_deadlock_of_cpython_3_11)
{
    python_each_version(11, expect_gil_cycle);
}

Test(python_hangs, gil_deadlock_of_cpython_3_12)
{
    python_each_version(12, expect_gil_cycle);
}

Test(python_hangs, gil_deadlock_of_cpython_3_13)
{
    python_each_version(13, expect_gil_cycle);
}

Test(python_hangs, gil_deadlock_of_cpython_3_14)
{
    python_each_version(14, expect_gil_cycle);
}

/* ---- a GIL held across a fork from C ---------------------------------------------------------------------------- */

/* ready <parent pid> <child pid> <the parent's GIL-holding thread> */
static void expect_gil_held_at_fork(const char *python, unsigned minor)
{
    struct fixture fixture;
    start_with_library(&fixture, python, "gil_fork.py");
    pid_t parent = fixture.pids[0], child = fixture.pids[1], holder = fixture.pids[2];
    int status;
    json_object *document = hangdoc_json(parent, &status);
    expect_python_version(document, child, &minor);
    cr_assert_eq(status, 2, "fork inheritance: exit 2, got %d", status);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "fork-inheritance");
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "inherited-lock");
    json_object *inherited = json_first_finding(document, "inherited-lock", child);
    cr_assert_not_null(inherited, "%s", json_object_to_json_string(json_at(document, "findings")));
    cr_assert_eq(json_int_at(inherited, "tid", 0), child);
    cr_assert_str_eq(json_string_at(inherited, "evidence.lock"), "Python GIL");
    char owner[16];
    snprintf(owner, sizeof owner, "%d", (int)parent);
    cr_assert_str_eq(json_string_at(inherited, "evidence.owner_pid"), owner);
    snprintf(owner, sizeof owner, "%d", (int)holder);
    cr_assert_str_eq(json_string_at(inherited, "evidence.owner_tid"), owner);
    cr_assert_geq(json_count_remedies(inherited, "PyOS_AfterFork_Child"), 1);
    char line[64];
    snprintf(line, sizeof line, "gil_fork.py:%ld)", python_marked_line("gil_fork.py", "fork"));
    cr_assert_eq(evidence_containing(inherited, "python", line), 1, "%s", json_object_to_json_string(inherited));
    cr_assert_eq(json_int_at(json_process(document, child), "python.gil_holder_recorded", 0), holder);
    expect_gil(document, child, child, "waits");
    expect_gil(document, parent, holder, "released"); /* its call, and the GIL, ended after the fork */
    cr_assert_eq(json_count_findings(document, "waiting-on-workers", parent), 1);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python_hangs, gil_held_at_fork_of_the_system_python)
{
    python_each_version(0, expect_gil_held_at_fork);
}

Test(python_hangs, gil_held_at_fork_of_cpython_3_10)
{
    python_each_version(10, expect_gil_held_at_fork);
}

Test(python_hangs, gil_held_at_fork_of_cpython_3_11)
{
    python_each_version(11, expect_gil_held_at_fork);
}

Test(python_hangs, gil_held_at_fork_of_cpython_3_12)
{
    python_each_version(12, expect_gil_held_at_fork);
}

Test(python_hangs, gil_held_at_fork_of_cpython_3_13)
{
    python_each_version(13, expect_gil_held_at_fork);
}

Test(python_hangs, gil_held_at_fork_of_cpython_3_14)
{
    python_each_version(14, expect_gil_held_at_fork);
}

/* ---- h5py's global lock held at fork ----------------------------------------------------------------------------- */

/* Debian's python3-h5py: a parent thread inside an h5py call (holding phil) at fork(); the child's read waits for
 * phil for ever. The wait lies in h5py's own extension module, which the catalogue's HDF5 row names by its path, and
 * the child shares the parent's open HDF5 file: orphaned-wait inside HDF5 (h5py), with the HDF5 remedy. */
static void expect_h5py_lock_held_at_fork(const char *python, unsigned minor)
{
    (void)minor;
    struct fixture fixture;
    start_script(&fixture, python, "h5py_fork.py", "hang");
    pid_t parent = fixture.pids[0], child = fixture.pids[1];
    int status;
    json_object *document = hangdoc_json(parent, &status);
    cr_assert_eq(status, 2, "fork inheritance: exit 2, got %d", status);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "orphaned-wait");
    cr_assert_eq(json_int_at(document, "verdict.tid", -1), child);
    json_object *orphaned = json_first_finding(document, "orphaned-wait", child);
    cr_assert_not_null(orphaned);
    cr_assert_eq(json_int_at(orphaned, "tid", 0), child);
    cr_assert_str_eq(json_string_at(orphaned, "evidence.runtime"), "hdf5");
    cr_assert_eq(evidence_containing(orphaned, "runtime_library", "/h5py/"), 1, "%s",
                 json_object_to_json_string(orphaned));
    cr_assert_eq(evidence_containing(orphaned, "inherited_handle", "data.h5"), 1, "%s",
                 json_object_to_json_string(orphaned));
    cr_assert_eq(evidence_containing(orphaned, "python", "h5py_fork.py:"), 1, "%s",
                 json_object_to_json_string(orphaned));
    cr_assert_eq(json_count_remedies(orphaned, "Open HDF5 files inside each worker"), 1);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python_hangs, h5py_lock_held_at_fork_is_an_orphaned_wait_inside_hdf5)
{
    python_each_version(0, expect_h5py_lock_held_at_fork);
}

/* The look-alike: a child that opened the file itself waits on a pipe for its parent's next request: not hung. */
static void expect_h5py_child_not_hung(const char *python, unsigned minor)
{
    (void)minor;
    struct fixture fixture;
    start_script(&fixture, python, "h5py_fork.py", "healthy");
    int status;
    json_object *document = hangdoc_json(fixture.pids[0], &status);
    cr_assert_eq(status, 0, "not hung: %s", json_object_to_json_string(json_at(document, "findings")));
    cr_assert_eq(json_count_findings(document, "orphaned-wait", 0), 0);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python_hangs, an_h5py_child_waiting_for_its_next_request_is_not_hung)
{
    python_each_version(0, expect_h5py_child_not_hung);
}

/* h5py 3.16 on python3.14. (Its hang above cannot happen there: h5py 3.16 takes phil around fork() itself, so
 * the fork waits for the holder instead of copying a held lock.) */
Test(python_hangs, an_h5py_child_waiting_for_its_next_request_is_not_hung_of_cpython_3_14)
{
    python_each_version(14, expect_h5py_child_not_hung);
}

/* ---- a lock-order deadlock of Python locks ------------------------------------------------------------------- */

/* ready <pid> <first tid> <second tid>: two threads, each holding one threading.Lock and taking the other; the main
 * thread joins the first. No lock records its owner, so no lock-cycle can be drawn: unowned-lock-cycle, likely,
 * with both threads as members and the line of each one's acquire. */
static void expect_python_lock_order(const char *python, unsigned minor)
{
    struct fixture fixture;
    start_script(&fixture, python, "python_lock_order.py", NULL);
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    expect_python_version(document, pid, &minor);
    cr_assert_eq(status, 1, "hung: exit 1, got %d", status);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "deadlock");
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "unowned-lock-cycle");
    json_object *cycle = json_first_finding(document, "unowned-lock-cycle", pid);
    cr_assert_not_null(cycle, "%s", json_object_to_json_string(json_at(document, "findings")));
    cr_assert_str_eq(json_string_at(cycle, "confidence"), "likely");
    cr_assert_eq(json_object_array_length(json_at(cycle, "members")), 2);
    cr_assert(has_member(cycle, first) && has_member(cycle, second));
    char line[64];
    snprintf(line, sizeof line, "python_lock_order.py:%ld)", python_marked_line("python_lock_order.py", "wanted"));
    cr_assert_eq(evidence_containing(cycle, "waiter", line), 2, "%s", json_object_to_json_string(cycle));
    /* "CPython's threading.Lock at 0x...", or where the interpreter is stripped "...threading.Lock or RLock at" */
    cr_assert_eq(evidence_containing(cycle, "waiter", "CPython's threading.Lock"), 2);
    cr_assert_eq(json_count_findings(document, "wait-cycle", 0), 0, "the join is not a second deadlock");
    cr_assert_eq(json_object_array_length(json_at(document, "verdict.hangs")), 1);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The same deadlock beside a keep-alive main loop (while True: time.sleep(0.5)): the main thread could wake anyone,
 * but once the two have slept longer than --stuck-after and it only sleeps in its loop, it is the same finding,
 * with the sleeper as evidence. */
static void expect_python_lock_order_beside_a_sleeping_main(const char *python, unsigned minor)
{
    struct fixture fixture;
    start_script(&fixture, python, "python_lock_order.py", "sleep");
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "--stuck-after", "1s", pid_text, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "%s", result.err);
    expect_python_version(document, pid, &minor);
    cr_assert_eq(result.exit_status, 1, "hung: exit 1, got %d", result.exit_status);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "unowned-lock-cycle");
    json_object *cycle = json_first_finding(document, "unowned-lock-cycle", pid);
    cr_assert(has_member(cycle, first) && has_member(cycle, second));
    char line[64];
    snprintf(line, sizeof line, "python_lock_order.py:%ld): it has not freed them",
             python_marked_line("python_lock_order.py", "keep-alive"));
    cr_assert_eq(evidence_containing(cycle, "sleeper", line), 1, "%s", json_object_to_json_string(cycle));
    run_result_free(&result);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python_hangs, python_lock_order_deadlock_beside_a_sleeping_main_of_the_system_python)
{
    python_each_version(0, expect_python_lock_order_beside_a_sleeping_main);
}

Test(python_hangs, python_lock_order_deadlock_beside_a_sleeping_main_of_cpython_3_12)
{
    python_each_version(12, expect_python_lock_order_beside_a_sleeping_main);
}

/* The stock pass: what a user's machine shows, no debug files, stripped interpreters (python_harness.h) */
Test(python_hangs, python_lock_order_deadlock_of_the_stock_system_python)
{
    python_each_stock_version(0, expect_python_lock_order);
}

Test(python_hangs, python_lock_order_deadlock_of_a_stripped_cpython_3_12)
{
    python_each_stock_version(12, expect_python_lock_order);
}

Test(python_hangs, python_lock_order_deadlock_of_a_stripped_cpython_3_13)
{
    python_each_stock_version(13, expect_python_lock_order);
}

Test(python_hangs, python_lock_order_deadlock_of_a_stripped_cpython_3_14)
{
    python_each_stock_version(14, expect_python_lock_order);
}

Test(python_hangs, python_lock_order_deadlock_beside_a_sleeping_main_of_a_stripped_cpython_3_13)
{
    python_each_stock_version(13, expect_python_lock_order_beside_a_sleeping_main);
}

Test(python_hangs, python_lock_order_deadlock_beside_a_sleeping_main_of_a_stripped_cpython_3_14)
{
    python_each_stock_version(14, expect_python_lock_order_beside_a_sleeping_main);
}

Test(python_hangs, python_lock_order_deadlock_of_the_system_python)
{
    python_each_version(0, expect_python_lock_order);
}

Test(python_hangs, python_lock_order_deadlock_of_cpython_3_10)
{
    python_each_version(10, expect_python_lock_order);
}

Test(python_hangs, python_lock_order_deadlock_of_cpython_3_12)
{
    python_each_version(12, expect_python_lock_order);
}

Test(python_hangs, python_lock_order_deadlock_of_cpython_3_13)
{
    python_each_version(13, expect_python_lock_order);
}

Test(python_hangs, python_lock_order_deadlock_of_cpython_3_14)
{
    python_each_version(14, expect_python_lock_order);
}

/* ---- a thread pool starved by its own tasks --------------------------------------------------------------------- */

/* ready <pid> <first worker> <second worker>: both workers of a thread pool inside tasks that wait on inner tasks of
 * the same pool; pool-starvation, likely, with both workers as members, the call each task made and its line, the
 * workers' `role`, and `idle` workers of another pool beside them; the root cause, and no wait-cycle through the
 * pool's own plumbing (a ThreadPool's handler polls a pipe that the thread waiting for the map could write). */
static void expect_starved_pool(const char *python, unsigned minor, const char *mode, const char *call,
                                const char *marker, const char *role, size_t idle)
{
    struct fixture fixture;
    start_script(&fixture, python, "pool_starvation.py", mode);
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    expect_python_version(document, pid, &minor);
    cr_assert_eq(status, 1, "hung: exit 1, got %d", status);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "pool-starvation", "%s",
                     json_object_to_json_string(json_at(document, "findings")));
    cr_assert_eq(json_count_findings(document, "wait-cycle", 0), 0, "%s",
                 json_object_to_json_string(json_at(document, "findings")));
    json_object *starved = json_first_finding(document, "pool-starvation", pid);
    cr_assert_not_null(starved, "%s", json_object_to_json_string(json_at(document, "findings")));
    cr_assert_str_eq(json_string_at(starved, "confidence"), "likely");
    cr_assert_str_eq(json_string_at(starved, "evidence.role"), role);
    cr_assert(has_member(starved, first) && has_member(starved, second));
    cr_assert_eq(json_object_array_length(json_at(starved, "members")), 2);
    char line[96];
    snprintf(line, sizeof line, "waits in %s, called from its task outer (pool_starvation.py:%ld)",
             python_function_name(call, minor), python_marked_line("pool_starvation.py", marker));
    cr_assert_eq(evidence_containing(starved, "worker", line), 2, "%s", json_object_to_json_string(starved));
    snprintf(line, sizeof line, "' is idle, waiting for work: a worker of another of the 2 pools of process %d",
             (int)pid);
    cr_assert_eq(evidence_containing(starved, "idle_worker", line), idle, "%s", json_object_to_json_string(starved));
    cr_assert_eq(evidence_containing(starved, "idle_worker", ""), idle, "%s", json_object_to_json_string(starved));
    json_object_put(document);
    fixture_stop(&fixture);
}

static void expect_pool_starvation(const char *python, unsigned minor)
{
    expect_starved_pool(python, minor, "starve", "Future.result", "result", "ThreadPoolExecutor worker", 0);
}

static void expect_threadpool_starvation(const char *python, unsigned minor)
{
    /* beside the idle worker of the program's other ThreadPool */
    expect_starved_pool(python, minor, "threadpool", "Pool.apply", "apply", "multiprocessing pool worker", 1);
}

Test(python_hangs, pool_starvation_of_the_system_python)
{
    python_each_version(0, expect_pool_starvation);
}

Test(python_hangs, pool_starvation_of_cpython_3_10)
{
    python_each_version(10, expect_pool_starvation);
}

/* 3.14 (issue 26): its ThreadPoolExecutor waits were "deadlock, no rule names why" without a Python view */
Test(python_hangs, pool_starvation_of_cpython_3_14)
{
    python_each_version(14, expect_pool_starvation);
}

Test(python_hangs, threadpool_starvation_of_the_system_python)
{
    python_each_version(0, expect_threadpool_starvation);
}

Test(python_hangs, threadpool_starvation_of_cpython_3_13)
{
    python_each_version(13, expect_threadpool_starvation);
}

Test(python_hangs, threadpool_starvation_of_cpython_3_14)
{
    python_each_version(14, expect_threadpool_starvation);
}

/* A look-alike, `script` `mode` run by Debian's python: not hung, and no `id` finding. */
static void expect_look_alike(const char *script, const char *mode, const char *id)
{
    struct fixture fixture;
    start_script(&fixture, "/usr/bin/python3", script, mode);
    int status;
    json_object *document = hangdoc_json(fixture.pids[0], &status);
    cr_assert_eq(status, 0, "not hung: %s", json_object_to_json_string(json_at(document, "findings")));
    cr_assert_eq(json_count_findings(document, id, 0), 0);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The look-alikes: the tasks wait on results of another pool whose worker runs: not hung, no finding. */
static void expect_no_starvation(const char *mode)
{
    expect_look_alike("pool_starvation.py", mode, "pool-starvation");
}

Test(python_hangs, tasks_waiting_on_another_pools_running_task_are_not_starvation)
{
    expect_no_starvation("other-pool");
}

Test(python_hangs, threadpool_tasks_applying_to_another_running_pool_are_not_starvation)
{
    expect_no_starvation("threadpool-other-pool");
}

/* ---- Queue.join() for tasks nobody will mark done ------------------------------------------------------------- */

/* Starts `script` `mode` with `python` and diagnoses its first process, which must be hung (exit 1) with
 * `root_cause` as the root cause, in the Python view of 3.`*minor` (any, set from the report, when 0). Returns the
 * report, with the first `root_cause` finding about that process in *finding. */
static json_object *diagnose_hung_script(struct fixture *fixture, const char *python, unsigned *minor,
                                         const char *script, const char *mode, const char *root_cause,
                                         json_object **finding)
{
    start_script(fixture, python, script, mode);
    pid_t pid = fixture->pids[0];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    expect_python_version(document, pid, minor);
    cr_assert_eq(status, 1, "hung: exit 1, got %d: %s", status,
                 json_object_to_json_string(json_at(document, "findings")));
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), root_cause);
    *finding = json_first_finding(document, root_cause, pid);
    cr_assert_not_null(*finding);
    return document;
}

/* ready <pid> <consumer tid>...: the main thread waits in Queue.join(); queue-join, likely, about it, with the
 * consumers still there (waiting in Queue.get()) as members and evidence, or none left. */
static void expect_queue_join(const char *python, unsigned minor, const char *mode, size_t consumers)
{
    struct fixture fixture;
    json_object *finding;
    json_object *document = diagnose_hung_script(&fixture, python, &minor, "queue_join.py", mode, "queue-join",
                                                 &finding);
    pid_t pid = fixture.pids[0];
    cr_assert_eq(json_int_at(finding, "tid", 0), pid, "about the main thread");
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    cr_assert_eq(json_object_array_length(json_at(finding, "members")), 1 + consumers);
    char line[128];
    snprintf(line, sizeof line, "thread %d 'python", (int)pid);
    cr_assert_eq(evidence_containing(finding, "joiner", line), 1, "%s", json_object_to_json_string(finding));
    snprintf(line, sizeof line, "waits in %s, called from <module> (queue_join.py:%ld)",
             python_function_name("Queue.join", minor), python_marked_line("queue_join.py", "join"));
    cr_assert_eq(evidence_containing(finding, "joiner", line), 1, "%s", json_object_to_json_string(finding));
    for (size_t k = 0; k < consumers; k++) {
        cr_assert(has_member(finding, fixture.pids[1 + k]));
        snprintf(line, sizeof line, "thread %d '", (int)fixture.pids[1 + k]);
        cr_assert_eq(evidence_containing(finding, "consumer", line), 1, "%s", json_object_to_json_string(finding));
    }
    snprintf(line, sizeof line, "waits in %s, called from consume (queue_join.py:",
             python_function_name("Queue.get", minor));
    cr_assert_eq(evidence_containing(finding, "consumer", line), consumers, "%s", json_object_to_json_string(finding));
    json_object_put(document);
    fixture_stop(&fixture);
}

static void expect_lost_task_done(const char *python, unsigned minor)
{
    expect_queue_join(python, minor, "lost-task-done", 2);
}

static void expect_consumer_died(const char *python, unsigned minor)
{
    expect_queue_join(python, minor, "consumer-died", 0);
}

Test(python_hangs, queue_join_after_a_lost_task_done_of_the_system_python)
{
    python_each_version(0, expect_lost_task_done);
}

Test(python_hangs, queue_join_after_a_lost_task_done_of_cpython_3_13)
{
    python_each_version(13, expect_lost_task_done);
}

Test(python_hangs, queue_join_after_a_lost_task_done_of_cpython_3_14)
{
    python_each_version(14, expect_lost_task_done);
}

Test(python_hangs, queue_join_after_its_consumer_died_of_the_system_python)
{
    python_each_version(0, expect_consumer_died);
}

Test(python_hangs, queue_join_after_its_consumer_died_of_cpython_3_14)
{
    python_each_version(14, expect_consumer_died);
}

/* ---- a wake-up the thread that was to send it never will -------------------------------------------------------- */

/* What a no-waker finding says the thread waits in: `before`, the function `qualified` as 3.`minor` names it, then
 * `after`. */
struct waits_in {
    const char *before, *qualified, *after;
};

/* ready <pid>: the main thread, the only one left, waits in Event.wait() or Queue.get() for a worker that died of an
 * exception, or its asyncio loop idles for a future a task that raised never set: no-waker, certain, about it,
 * naming what it waits in, the line marked `where`, and that nothing is left to wake it. */
static void expect_setter_died(const char *python, unsigned minor, const char *mode, struct waits_in words,
                               const char *where)
{
    struct fixture fixture;
    json_object *finding;
    json_object *document = diagnose_hung_script(&fixture, python, &minor, "setter_died.py", mode, "no-waker",
                                                 &finding);
    pid_t pid = fixture.pids[0];
    expect_only_findings(document, (const char *const[]){ "no-waker", NULL });
    cr_assert_eq(json_int_at(finding, "tid", 0), pid, "about the main thread");
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    char expected[512];
    snprintf(expected, sizeof expected, "%s%s%s", words.before, python_function_name(words.qualified, minor),
             words.after);
    cr_assert_str_eq(json_string_at(finding, "evidence.waits_in"), expected);
    snprintf(expected, sizeof expected, "setter_died.py:%ld)", python_marked_line("setter_died.py", where));
    const char *line = json_string_at(finding, "evidence.python");
    cr_assert(line && strstr(line, "<module> (") == line && strstr(line, expected), "%s", line ? line : "none");
    snprintf(expected, sizeof expected, "none: no other thread could (it is the only thread of process %d, and "
             "nothing another process holds or shares can end its wait)", (int)pid);
    cr_assert_str_eq(json_string_at(finding, "evidence.waker"), expected);
    json_object_put(document);
    fixture_stop(&fixture);
}

static void expect_event_setter_died(const char *python, unsigned minor)
{
    expect_setter_died(python, minor, "event", (struct waits_in){ "Python's ", "Event.wait", " (threading.py)" },
                       "wait");
}

static void expect_queue_producer_died(const char *python, unsigned minor)
{
    expect_setter_died(python, minor, "queue", (struct waits_in){ "Python's ", "Queue.get", " (queue.py)" }, "get");
}

static void expect_future_setter_died(const char *python, unsigned minor)
{
    expect_setter_died(python, minor, "asyncio",
                       (struct waits_in){ "the selector of asyncio's event loop (", "EpollSelector.select", ")" },
                       "run");
}

Test(python_hangs, event_whose_setter_died_of_the_system_python)
{
    python_each_version(0, expect_event_setter_died);
}

Test(python_hangs, event_whose_setter_died_of_cpython_3_13)
{
    python_each_version(13, expect_event_setter_died);
}

Test(python_hangs, event_whose_setter_died_of_cpython_3_14)
{
    python_each_version(14, expect_event_setter_died);
}

Test(python_hangs, queue_whose_producer_died_of_the_system_python)
{
    python_each_version(0, expect_queue_producer_died);
}

Test(python_hangs, queue_whose_producer_died_of_cpython_3_14)
{
    python_each_version(14, expect_queue_producer_died);
}

Test(python_hangs, future_whose_setter_died_of_the_system_python)
{
    python_each_version(0, expect_future_setter_died);
}

Test(python_hangs, future_whose_setter_died_of_cpython_3_13)
{
    python_each_version(13, expect_future_setter_died);
}

Test(python_hangs, future_whose_setter_died_of_cpython_3_14)
{
    python_each_version(14, expect_future_setter_died);
}

/* The look-alike: the worker is still at its job (a sleep loop): slow, not hung, no no-waker. */
Test(python_hangs, event_whose_setter_still_works_is_not_hung)
{
    expect_look_alike("setter_died.py", "alive", "no-waker");
}

/* ready <pid> <consumer tid>: the main thread joins a consumer that waits in Queue.get() for the sentinel the main
 * thread never put: no-waker about the main thread, the consumer its member, named as a sleeper with its line. */
static void expect_join_without_sentinel(const char *python, unsigned minor)
{
    struct fixture fixture;
    json_object *finding;
    json_object *document = diagnose_hung_script(&fixture, python, &minor, "setter_died.py", "join", "no-waker",
                                                 &finding);
    pid_t pid = fixture.pids[0], consumer = fixture.pids[1];
    cr_assert_eq(json_int_at(finding, "tid", 0), pid, "about the main thread");
    cr_assert(has_member(finding, consumer));
    char expected[512];
    snprintf(expected, sizeof expected, "Python's %s (threading.py)", python_function_name("Thread.join", minor));
    cr_assert_str_eq(json_string_at(finding, "evidence.waits_in"), expected);
    snprintf(expected, sizeof expected, "thread %d '", (int)consumer);
    const char *sleeper = json_string_at(finding, "evidence.sleeper");
    cr_assert(sleeper && strncmp(sleeper, expected, strlen(expected)) == 0, "%s", sleeper ? sleeper : "none");
    snprintf(expected, sizeof expected, "' sleeps forever too, in Python's %s (queue.py), in Python at "
             "consume_until_the_sentinel (setter_died.py:%ld)", python_function_name("Queue.get", minor),
             python_marked_line("setter_died.py", "consume"));
    cr_assert(strstr(sleeper, expected), "%s", sleeper);
    cr_assert_eq(evidence_containing(finding, "python", "setter_died.py:"), 1);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python_hangs, join_of_a_consumer_never_sent_its_sentinel_of_the_system_python)
{
    python_each_version(0, expect_join_without_sentinel);
}

Test(python_hangs, join_of_a_consumer_never_sent_its_sentinel_of_cpython_3_13)
{
    python_each_version(13, expect_join_without_sentinel);
}

Test(python_hangs, join_of_a_consumer_never_sent_its_sentinel_of_cpython_3_14)
{
    python_each_version(14, expect_join_without_sentinel);
}

/* signal.signal(SIGTERM, lambda *_: stop.set()); stop.wait(): a service waiting to be stopped looks like a hang, and
 * a Python handler runs in the main thread: no-waker, only likely, saying which signal the process catches. */
Test(python_hangs, a_service_waiting_for_sigterm_in_event_wait_is_only_likely)
{
    struct fixture fixture;
    unsigned minor = 0;
    json_object *finding;
    json_object *document = diagnose_hung_script(&fixture, SYSTEM_PYTHON, &minor, "setter_died.py", "service",
                                                 "no-waker", &finding);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    char expected[256];
    snprintf(expected, sizeof expected, "process %d catches SIGTERM: ", (int)fixture.pids[0]);
    const char *handler = json_string_at(finding, "evidence.signal_handler");
    cr_assert(handler && strncmp(handler, expected, strlen(expected)) == 0, "%s", handler ? handler : "none");
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The asyncio look-alike: the loop waits for SIGTERM, whose handler (loop.add_signal_handler) writes its self-pipe
 * and sets what the task awaits: a service waiting to be stopped, as in pause(); not hung. */
Test(python_hangs, asyncio_service_waiting_for_sigterm_is_not_hung)
{
    expect_look_alike("setter_died.py", "stop-signal", "no-waker");
}

/* The look-alike: the consumer is still at its task (a sleep loop): slow, not hung, no queue-join. */
Test(python_hangs, queue_join_while_the_consumer_works_is_not_hung)
{
    expect_look_alike("queue_join.py", "working", "queue-join");
}

/* ---- an asyncio event loop blocked in its own coroutine ---------------------------------------------------------- */

/* ready <pid>: the loop's (main) thread waits in Future.result() for a coroutine it was to run itself;
 * event-loop-blocked, likely, about it, naming the call and the coroutine's line. */
static void expect_event_loop_blocked(const char *python, unsigned minor)
{
    struct fixture fixture;
    start_script(&fixture, python, "asyncio_blocked.py", "self");
    pid_t pid = fixture.pids[0];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    expect_python_version(document, pid, &minor);
    cr_assert_eq(status, 1, "hung: exit 1, got %d: %s", status,
                 json_object_to_json_string(json_at(document, "findings")));
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "event-loop-blocked");
    json_object *finding = json_first_finding(document, "event-loop-blocked", pid);
    cr_assert_not_null(finding);
    cr_assert_eq(json_int_at(finding, "tid", 0), pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    /* the call, at its line of the standard library's _base.py, from the coroutine's line */
    const char *call = json_string_at(finding, "evidence.call");
    cr_assert_not_null(call, "%s", json_object_to_json_string(finding));
    const char *at = strstr(call, " (_base.py:");
    long library_line = at ? strtol(at + strlen(" (_base.py:"), NULL, 10) : 0;
    char expected[160];
    snprintf(expected, sizeof expected, "%s (_base.py:%ld), called from main (asyncio_blocked.py:%ld)",
             python_function_name("Future.result", minor), library_line,
             python_marked_line("asyncio_blocked.py", "result"));
    cr_assert_str_eq(call, expected);
    cr_assert_eq(evidence_containing(finding, "loop", "the call runs under "), 1, "%s",
                 json_object_to_json_string(finding));
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python_hangs, event_loop_blocked_in_its_own_coroutine_of_the_system_python)
{
    python_each_version(0, expect_event_loop_blocked);
}

Test(python_hangs, event_loop_blocked_in_its_own_coroutine_of_cpython_3_13)
{
    python_each_version(13, expect_event_loop_blocked);
}

Test(python_hangs, event_loop_blocked_in_its_own_coroutine_of_cpython_3_14)
{
    python_each_version(14, expect_event_loop_blocked);
}

/* The look-alike: the same call on a loop another thread runs, whose coroutine sleeps: not hung. */
Test(python_hangs, a_coroutine_waiting_on_another_loops_sleeping_coroutine_is_not_hung)
{
    expect_look_alike("asyncio_blocked.py", "other-loop", "event-loop-blocked");
}

/* ---- a Python lock held at fork ---------------------------------------------------------------------------------- */

/* ready <parent pid> <child pid> */
static void expect_python_lock_held_at_fork(const char *python, unsigned minor)
{
    struct fixture fixture;
    start_script(&fixture, python, "python_fork_lock.py", NULL);
    pid_t parent = fixture.pids[0], child = fixture.pids[1];
    int status;
    json_object *document = hangdoc_json(parent, &status);
    expect_python_version(document, child, &minor);
    cr_assert_eq(status, 2, "fork inheritance: exit 2, got %d", status);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "orphaned-wait");
    json_object *orphaned = json_first_finding(document, "orphaned-wait", child);
    cr_assert_not_null(orphaned);
    cr_assert_eq(json_int_at(orphaned, "tid", 0), child);
    char line[64];
    snprintf(line, sizeof line, "python_fork_lock.py:%ld)", python_marked_line("python_fork_lock.py", "acquire"));
    cr_assert_eq(evidence_containing(orphaned, "python", line), 1, "%s", json_object_to_json_string(orphaned));
    expect_python_frame(python_frames_of(document, child, child), 0, "<module>", "python_fork_lock.py",
                        python_marked_line("python_fork_lock.py", "acquire"), minor);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python_hangs, python_lock_held_at_fork_of_the_system_python)
{
    python_each_version(0, expect_python_lock_held_at_fork);
}

Test(python_hangs, python_lock_held_at_fork_of_cpython_3_10)
{
    python_each_version(10, expect_python_lock_held_at_fork);
}

Test(python_hangs, python_lock_held_at_fork_of_cpython_3_11)
{
    python_each_version(11, expect_python_lock_held_at_fork);
}

Test(python_hangs, python_lock_held_at_fork_of_cpython_3_12)
{
    python_each_version(12, expect_python_lock_held_at_fork);
}

Test(python_hangs, python_lock_held_at_fork_of_cpython_3_13)
{
    python_each_version(13, expect_python_lock_held_at_fork);
}

Test(python_hangs, python_lock_held_at_fork_of_cpython_3_14)
{
    python_each_version(14, expect_python_lock_held_at_fork);
}

/* ---- the spawn child without a main guard ---------------------------------------------------------------------- */

/* ready <parent pid> <child pid> */
static void expect_spawn_reimport(const char *python, unsigned minor)
{
    char directory[] = "/tmp/hangdoc-spawn-XXXXXX", lock[64];
    cr_assert_not_null(mkdtemp(directory));
    snprintf(lock, sizeof lock, "%s/instance.lock", directory);
    struct fixture fixture;
    start_script(&fixture, python, "spawn_reimport.py", lock);
    pid_t parent = fixture.pids[0], child = fixture.pids[1];
    int status;
    json_object *document = hangdoc_json(parent, &status);
    expect_python_version(document, child, &minor);

    cr_assert_eq(status, 1, "exit 1, got %d", status);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "spawn-reimport");
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "spawn-reimport");
    cr_assert_eq(json_count_findings(document, "spawn-reimport", 0), 1, "only the child");
    json_object *finding = json_first_finding(document, "spawn-reimport", child);
    cr_assert_not_null(finding);
    cr_assert_eq(json_int_at(finding, "tid", 0), child);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    char line[64];
    snprintf(line, sizeof line, "spawn_reimport.py:%ld", python_marked_line("spawn_reimport.py", "flock"));
    cr_assert_eq(evidence_containing(finding, "main_module", line), 1, "%s", json_object_to_json_string(finding));
    cr_assert_geq(json_count_remedies(finding, "if __name__ == '__main__':"), 1);
    expect_python_frame(python_frames_of(document, child, child), 0, "<module>", "spawn_reimport.py",
                        python_marked_line("spawn_reimport.py", "flock"), minor);
    /* the child waits for the lock file its parent holds (/proc/locks), the parent in join() for the child */
    json_object *waiting = json_thread(json_process(document, child), child);
    cr_assert_str_eq(json_string_at(waiting, "wait.kind"), "file-lock");
    cr_assert_str_eq(json_string_at(waiting, "wait.lock.kind"), "file");
    cr_assert_eq(json_int_at(waiting, "wait.lock.owner_pid", 0), parent, "%s",
                 json_object_to_json_string(json_at(waiting, "wait")));
    json_object *cycle = json_first_finding(document, "wait-cycle", 0);
    cr_assert_not_null(cycle, "the parent's wait4 and the child's file lock: %s",
                       json_object_to_json_string(json_at(document, "findings")));
    cr_assert(has_member(cycle, parent) && has_member(cycle, child));
    json_object_put(document);
    fixture_stop(&fixture);
    unlink(lock);
    rmdir(directory);
}

Test(python_hangs, spawn_reimport_of_the_system_python)
{
    python_each_version(0, expect_spawn_reimport);
}

Test(python_hangs, spawn_reimport_of_cpython_3_10)
{
    python_each_version(10, expect_spawn_reimport);
}

Test(python_hangs, spawn_reimport_of_cpython_3_11)
{
    python_each_version(11, expect_spawn_reimport);
}

Test(python_hangs, spawn_reimport_of_cpython_3_12)
{
    python_each_version(12, expect_spawn_reimport);
}

Test(python_hangs, spawn_reimport_of_cpython_3_13)
{
    python_each_version(13, expect_spawn_reimport);
}

Test(python_hangs, spawn_reimport_of_cpython_3_14)
{
    python_each_version(14, expect_spawn_reimport);
}

/* ---- a Python signal handler that waits for the lock the code it interrupted holds ------------------------------ */

/* ready <pid>: SIGALRM's handler, run once in the main thread while it sleeps holding a threading.Lock, takes the
 * lock: signal-reentry (certain) about the main thread, naming the handler's line and the interrupted line, the
 * function of CPython that ran the handler, and the signal it catches; no no-waker. */
static void expect_python_handler_reentry(const char *python, unsigned minor)
{
    struct fixture fixture;
    json_object *finding;
    json_object *document = diagnose_hung_script(&fixture, python, &minor, "signal_handler_lock.py", "lock",
                                                 "signal-reentry", &finding);
    pid_t pid = fixture.pids[0];
    expect_only_findings(document, (const char *const[]){ "signal-reentry", NULL });
    cr_assert_eq(json_int_at(finding, "tid", 0), pid, "about the main thread");
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    char expected[256];
    snprintf(expected, sizeof expected, "on_alarm at signal_handler_lock.py:%ld",
             python_marked_line("signal_handler_lock.py", "handler-lock"));
    cr_assert_str_eq(json_string_at(finding, "evidence.handler"), expected);
    snprintf(expected, sizeof expected, "<module> at signal_handler_lock.py:%ld",
             python_marked_line("signal_handler_lock.py", "main-sleep"));
    cr_assert_str_eq(json_string_at(finding, "evidence.interrupted"), expected);
    cr_assert_str_eq(json_string_at(finding, "evidence.caught"), "SIGALRM");
    const char *run_by = json_string_at(finding, "evidence.run_by");
    cr_assert(run_by && (strstr(run_by, "CheckSignals") || strstr(run_by, "_Py_HandlePending")),
              "a CPython function that runs the handlers: %s", run_by ? run_by : "none");
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python_hangs, a_python_handler_taking_the_lock_it_interrupted_of_the_system_python)
{
    python_each_version(0, expect_python_handler_reentry);
}

Test(python_hangs, a_python_handler_taking_the_lock_it_interrupted_of_cpython_3_10_to_3_13)
{
    for (unsigned minor = 10; minor <= 13; minor++)
        python_each_version(minor, expect_python_handler_reentry);
}

/* Not of the development suite's 3.14: its interpreter, built with LTO, inlines the functions that run the
 * handlers into frames no symbol names, so the native stack cannot tell the handler from the interrupted code
 * (no-waker names the wait instead). */

/* The look-alike: the handler only counts the alarm; the main loop goes on holding and releasing the lock. */
Test(python_hangs, a_python_handler_that_only_sets_a_flag_is_not_hung)
{
    expect_look_alike("signal_handler_lock.py", "flag", "signal-reentry");
}

/* ---- one Python call that never returns ------------------------------------------------------------------------- */

/* ready <pid> <worker tid>: the worker backtracks in re.match() for ever, holding the GIL, while the main thread joins
 * it: spinning (likely) about the worker, naming the Python frame it stays in (re's match) over the samples and the
 * looks after them, and the main thread as the one it holds up. */
static void expect_regex_backtrack(const char *python, unsigned minor)
{
    struct fixture fixture;
    json_object *finding;
    json_object *document = diagnose_hung_script(&fixture, python, &minor, "regex_backtrack.py", "regex", "spinning",
                                                 &finding);
    pid_t pid = fixture.pids[0], worker = fixture.pids[1];
    cr_assert_gt(worker, 0, "the worker ran for 0.3 s");
    cr_assert_eq(json_int_at(finding, "tid", 0), worker, "about the worker");
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    const char *frame = json_string_at(finding, "evidence.python_frame");
    cr_assert(frame && strncmp(frame, "match (", 7) == 0 && strstr(frame, "in 3 of 3 looks"), "%s",
              frame ? frame : "none");
    char waiter[64];
    snprintf(waiter, sizeof waiter, "thread %d '", (int)pid);
    const char *named = json_string_at(finding, "evidence.waiter");
    cr_assert(named && strncmp(named, waiter, strlen(waiter)) == 0, "the main thread waits: %s", named ? named : "none");
    json_object *thread = json_thread(json_process(document, pid), worker);
    cr_assert_eq(json_int_at(thread, "python_looks", 0), 3);
    cr_assert(json_bool_at(thread, "python_leaf_same"));
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python_hangs, a_regex_backtracking_for_ever_of_the_system_python)
{
    python_each_version(0, expect_regex_backtrack);
}

Test(python_hangs, a_regex_backtracking_for_ever_of_cpython_3_10_to_3_13)
{
    for (unsigned minor = 10; minor <= 13; minor++)
        python_each_version(minor, expect_regex_backtrack);
}

Test(python_hangs, a_regex_backtracking_for_ever_of_cpython_3_14)
{
    python_each_version(14, expect_regex_backtrack);
}

/* The look-alike: as long a computation in Python, call after call of one function: the samples stop it in the eval
 * loop, so it is not one endless call; not hung. */
Test(python_hangs, a_computation_in_python_that_moves_on_is_not_hung)
{
    expect_look_alike("regex_backtrack.py", "moving", "spinning");
}
