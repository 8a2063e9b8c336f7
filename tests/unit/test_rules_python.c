/* The Python view in the analysis: the GIL as a lock with an owner (analysis/graph.c, analysis/rules/locks.c),
 * spawn-reimport (analysis/rules/python.c), and the user's line and role on every finding (analysis/python_view.c). Each
 * test builds the snapshot hangdoc would have read (snapshot_builder.h) and checks the exact findings. */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include "python_view.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define GIL 0xa5b8a8ull

/* ---- the GIL as a lock ------------------------------------------------------------------------------------------ */

/* Thread 100 holds the GIL and waits for a mutex of thread 101, which waits for the GIL: ctypes' deadlock. */
static struct hd_snapshot *gil_deadlock(void)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    waiting_on_mutex(thread_of(snapshot, 100), LOCK_ADDRESS, 101, 100, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    thread_of(snapshot, 100)->gil = HD_GIL_HOLDS;
    add_python_frame(thread_of(snapshot, 100), "register", "/app/registry.py", 18, true);
    add_python_frame(thread_of(snapshot, 100), "<module>", "/app/registry.py", 26, false);
    waiting_for_gil(thread_of(snapshot, 101), GIL, 100, 100, HD_OWNER_SAME_PROCESS);
    return snapshot;
}

Test(gil, a_thread_that_holds_it_while_it_waits_for_the_waiters_mutex_is_a_lock_cycle)
{
    struct hd_snapshot *snapshot = gil_deadlock();
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 101), REPORT_WAKE_NEVER, "its timed re-asks are not progress");
    cr_assert(has_edge(analysis, 101, 100, REPORT_EDGE_LOCK_OWNER), "the GIL's holder is its owner");
    EXPECT_IDS(analysis, "lock-cycle");
    const struct report_finding *cycle = the_finding(analysis, "lock-cycle");
    cr_assert_eq(cycle->tid, 100);
    cr_assert(has_member(analysis, cycle, 100) && has_member(analysis, cycle, 101));
    cr_assert_eq(count_evidence(cycle, "waiter"), 2u);
    cr_assert_str_eq(evidence_at(cycle, "waiter", 0),
                     "thread 100 'thread100' of process 100 waits for mutex 0x55d2a0c4e040 held by thread 101");
    cr_assert_str_eq(evidence_at(cycle, "waiter", 1),
                     "thread 101 'thread101' of process 100 waits for Python GIL 0xa5b8a8 held by thread 100");
    cr_assert_str_eq(evidence_of(cycle, "python"), "register (/app/registry.py:18)");
    cr_assert_eq(remedies_containing(cycle, "ctypes.CDLL"), 1);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(gil, a_waiter_whose_holder_runs_is_not_hung)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2); /* 100 runs, holding the GIL */
    thread_of(snapshot, 100)->gil = HD_GIL_HOLDS;
    waiting_for_gil(thread_of(snapshot, 101), GIL, 100, 100, HD_OWNER_SAME_PROCESS);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 101), REPORT_WAKE_WAKER);
    cr_assert_eq(count_findings(analysis, "lock-cycle"), 0);
    cr_assert_neq(analysis->verdict.hung, REPORT_HUNG_YES);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(gil, a_child_waiting_for_a_gil_held_by_a_thread_of_its_parent_is_an_inherited_lock)
{
    /* a C library forked while thread 101 of the parent held the GIL: the child's only thread waits for it */
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    in_wait4(thread_of(snapshot, 100), 200);
    add_process(snapshot, 200, 100, HD_ORIGIN_FORKED, 1);
    waiting_for_gil(thread_of(snapshot, 200), GIL, 101, 100, HD_OWNER_OTHER_PROCESS);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 200), REPORT_WAKE_NEVER);
    const struct report_finding *inherited = the_finding(analysis, "inherited-lock");
    cr_assert_eq(inherited->pid, 200);
    cr_assert_str_eq(evidence_of(inherited, "lock"), "Python GIL");
    cr_assert_str_eq(evidence_of(inherited, "owner_tid"), "101");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "fork-inheritance");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- a GIL waiter caught between two waits (analysis/gil.c) ---------------------------------------------------- */

/* The GIL of process `pid` as probe/python.c reads it: [GIL, GIL + 0x100), locked by thread `holder` of process
 * `holder_pid`. */
static void gil_held_by(struct hd_snapshot *snapshot, pid_t pid, pid_t holder, pid_t holder_pid,
                        enum hd_owner_whereabouts whereabouts)
{
    struct hd_python *python = &process_of(snapshot, pid)->python;
    python->read = true;
    python->gil_locked = true;
    python->gil_address = GIL;
    python->gil_size = 0x100;
    python->gil_holder = holder_pid == pid ? holder : 0;
    python->gil_holder_recorded = holder;
    python->gil_lock = (struct hd_lock){ .kind = HD_LOCK_GIL, .object_address = GIL, .owner_tid = holder,
                                         .owner_pid = holder_pid, .owner_whereabouts = whereabouts };
}

/* Every earlier sample saw `thread` in take_gil()'s futex wait; the last caught it on a CPU on its way back to that
 * wait, its thread state neither holding nor waiting for the GIL, as the probe records such a thread. */
static void caught_between_gil_waits(const struct hd_snapshot *snapshot, struct hd_thread *thread, pid_t holder,
                                     pid_t holder_pid, enum hd_owner_whereabouts whereabouts)
{
    waiting_for_gil(thread, GIL, holder, holder_pid, whereabouts);
    earlier_samples(snapshot, thread);
    free(thread->wait.mapping.path);
    thread->wait = (struct hd_wait){ .fd = -1 };
    thread->syscall = (struct hd_syscall){ .state = HD_SYSCALL_RUNNING };
    thread->state = 'R';
    thread->gil = HD_GIL_RELEASED;
    ran(snapshot, thread, 40000, 6, 1); /* it woke every 5 ms to ask for the GIL */
}

Test(gil, a_waiter_caught_between_two_waits_is_taken_to_wait_again)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    waiting_on_mutex(thread_of(snapshot, 100), LOCK_ADDRESS, 101, 100, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    thread_of(snapshot, 100)->gil = HD_GIL_HOLDS;
    add_python_frame(thread_of(snapshot, 100), "register", "/app/registry.py", 18, true);
    gil_held_by(snapshot, 100, 100, 100, HD_OWNER_SAME_PROCESS);
    caught_between_gil_waits(snapshot, thread_of(snapshot, 101), 100, 100, HD_OWNER_SAME_PROCESS);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 101), REPORT_WAKE_NEVER, "taken to be in the wait its earlier samples saw");
    cr_assert(has_edge(analysis, 101, 100, REPORT_EDGE_LOCK_OWNER), "the GIL's holder is its owner");
    EXPECT_IDS(analysis, "lock-cycle");
    cr_assert(has_member(analysis, the_finding(analysis, "lock-cycle"), 101));
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    /* the analysis's copy says so; the snapshot keeps what the last sample read */
    const struct hd_process *process = process_of(snapshot, 100);
    const struct hd_thread *taken = report_process_thread(&analysis->graph, process, 1);
    cr_assert_eq(taken->gil, HD_GIL_WAITS);
    cr_assert_eq(taken->syscall.state, HD_SYSCALL_IN);
    cr_assert_eq(taken->wait.kind, HD_WAIT_FUTEX);
    cr_assert_eq(taken->wait.address, GIL + 0x30);
    cr_assert_eq(taken->wait.lock.kind, HD_LOCK_GIL);
    cr_assert_eq(taken->wait.lock.owner_tid, 100);
    cr_assert_eq(report_graph_thread(&analysis->graph, 101, NULL), taken);
    cr_assert_eq(thread_of(snapshot, 101)->syscall.state, HD_SYSCALL_RUNNING);
    cr_assert_eq(thread_of(snapshot, 101)->gil, HD_GIL_RELEASED);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(gil, a_thread_caught_running_with_the_gil_free_is_not_taken_to_wait)
{
    /* the GIL unlocked when read: a waiter would have taken it, so the thread runs (it may have taken and let go) */
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    waiting_on_mutex(thread_of(snapshot, 100), LOCK_ADDRESS, 101, 100, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    gil_held_by(snapshot, 100, 100, 100, HD_OWNER_SAME_PROCESS);
    process_of(snapshot, 100)->python.gil_locked = false;
    caught_between_gil_waits(snapshot, thread_of(snapshot, 101), 100, 100, HD_OWNER_SAME_PROCESS);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 101), REPORT_WAKE_RUNNING);
    cr_assert_eq(count_findings(analysis, "lock-cycle"), 0);
    cr_assert_neq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_eq(report_graph_thread(&analysis->graph, 101, NULL), thread_of(snapshot, 101), "no copy");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(gil, a_thread_caught_running_after_a_wait_elsewhere_is_not_taken_to_wait)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    waiting_on_mutex(thread_of(snapshot, 100), LOCK_ADDRESS, 101, 100, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    thread_of(snapshot, 100)->gil = HD_GIL_HOLDS;
    gil_held_by(snapshot, 100, 100, 100, HD_OWNER_SAME_PROCESS);
    caught_between_gil_waits(snapshot, thread_of(snapshot, 101), 100, 100, HD_OWNER_SAME_PROCESS);
    struct hd_thread_sample *earlier = earlier_samples(snapshot, thread_of(snapshot, 101));
    for (size_t s = 0; s < thread_of(snapshot, 101)->nearlier; s++)
        earlier[s].wait_address = GIL + 0x100; /* just past the GIL's state: a futex of the program's */
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 101), REPORT_WAKE_RUNNING);
    cr_assert_eq(count_findings(analysis, "lock-cycle"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(gil, a_child_caught_between_waits_for_a_gil_its_parent_holds_is_an_inherited_lock)
{
    /* a C library forked while thread 101 of the parent held the GIL; the last sample caught the child's only
     * thread on its way back to the wait */
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    in_wait4(thread_of(snapshot, 100), 200);
    add_process(snapshot, 200, 100, HD_ORIGIN_FORKED, 1);
    gil_held_by(snapshot, 200, 101, 100, HD_OWNER_OTHER_PROCESS);
    caught_between_gil_waits(snapshot, thread_of(snapshot, 200), 101, 100, HD_OWNER_OTHER_PROCESS);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 200), REPORT_WAKE_NEVER);
    const struct report_finding *inherited = the_finding(analysis, "inherited-lock");
    cr_assert_eq(inherited->pid, 200);
    cr_assert_str_eq(evidence_of(inherited, "owner_tid"), "101");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "fork-inheritance");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- spawn-reimport ------------------------------------------------------------------------------------------- */

/* A spawn child's preparation, outermost last, under whatever the test put innermost. */
static void spawn_preparation(struct hd_thread *thread)
{
    add_python_frame(thread, "_run_code", "/usr/lib/python3.11/runpy.py", 88, false);
    add_python_frame(thread, "_run_module_code", "/usr/lib/python3.11/runpy.py", 98, false);
    add_python_frame(thread, "run_path", "/usr/lib/python3.11/runpy.py", 291, false);
    add_python_frame(thread, "_fixup_main_from_path", "/usr/lib/python3.11/multiprocessing/spawn.py", 287, false);
    add_python_frame(thread, "prepare", "/usr/lib/python3.11/multiprocessing/spawn.py", 242, false);
    add_python_frame(thread, "_main", "/usr/lib/python3.11/multiprocessing/spawn.py", 131, false);
    add_python_frame(thread, "spawn_main", "/usr/lib/python3.11/multiprocessing/spawn.py", 120, false);
    add_python_frame(thread, "<module>", "<string>", 1, true);
}

static struct hd_snapshot *spawn_child(void)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 1);
    in_wait4(thread_of(snapshot, 100), 200);
    struct hd_process *child = add_process(snapshot, 200, 100, HD_ORIGIN_SPAWN, 1);
    child->python_role = HD_PYTHON_ROLE_SPAWN_CHILD;
    asleep_in(thread_of(snapshot, 200), "flock", HD_WAIT_LOCK, "flock");
    return snapshot;
}

Test(spawn_reimport, a_spawn_child_in_the_main_scripts_top_level)
{
    struct hd_snapshot *snapshot = spawn_child();
    struct hd_thread *thread = thread_of(snapshot, 200);
    add_python_frame(thread, "<module>", "/app/train.py", 14, false);
    spawn_preparation(thread);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "spawn-reimport");
    cr_assert_eq(finding->pid, 200);
    cr_assert_eq(finding->tid, 200);
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert_str_eq(evidence_of(finding, "main_module"), "/app/train.py:14");
    cr_assert_str_eq(evidence_of(finding, "python_role"), "spawn-child");
    cr_assert_eq(remedies_containing(finding, "if __name__ == '__main__':"), 1);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "spawn-reimport");
    cr_assert_str_eq(root_cause_id(analysis), "spawn-reimport");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(spawn_reimport, names_the_line_the_top_level_waits_in)
{
    struct hd_snapshot *snapshot = spawn_child();
    struct hd_thread *thread = thread_of(snapshot, 200);
    add_python_frame(thread, "connect", "/app/service.py", 40, false);
    add_python_frame(thread, "<module>", "/app/train.py", 9, false);
    spawn_preparation(thread);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "spawn-reimport");
    cr_assert_str_eq(evidence_of(finding, "main_module"), "/app/train.py:9");
    cr_assert_str_eq(evidence_of(finding, "top_level_waits_in"), "connect (/app/service.py:40)");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(spawn_reimport, not_while_the_top_level_imports)
{
    struct hd_snapshot *snapshot = spawn_child();
    struct hd_thread *thread = thread_of(snapshot, 200);
    add_python_frame(thread, "_find_and_load", "<frozen importlib._bootstrap>", 1178, false);
    add_python_frame(thread, "<module>", "/app/train.py", 3, false);
    spawn_preparation(thread);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "spawn-reimport"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(spawn_reimport, not_for_a_child_that_runs_its_target)
{
    struct hd_snapshot *snapshot = spawn_child();
    struct hd_thread *thread = thread_of(snapshot, 200);
    add_python_frame(thread, "work", "/app/train.py", 30, false);
    add_python_frame(thread, "BaseProcess.run", "/usr/lib/python3.11/multiprocessing/process.py", 108, false);
    add_python_frame(thread, "BaseProcess._bootstrap", "/usr/lib/python3.11/multiprocessing/process.py", 314, false);
    add_python_frame(thread, "_main", "/usr/lib/python3.11/multiprocessing/spawn.py", 133, false);
    add_python_frame(thread, "spawn_main", "/usr/lib/python3.11/multiprocessing/spawn.py", 120, false);
    add_python_frame(thread, "<module>", "<string>", 1, true);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "spawn-reimport"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- the user's line and the role ------------------------------------------------------------------------------ */

Test(python_place, skips_the_standard_librarys_waiting_machinery)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *thread = thread_of(snapshot, 100);
    add_python_frame(thread, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
    add_python_frame(thread, "Queue.get", "/usr/lib/python3.11/queue.py", 171, false);
    add_python_frame(thread, "next_batch", "/app/loader.py", 42, false);
    add_python_frame(thread, "<module>", "/app/loader.py", 60, true);
    const struct hd_python_frame *place = report_python_place(thread);
    cr_assert_str_eq(place->function, "next_batch");
    cr_assert_eq(place->line, 42);
    hd_snapshot_free(snapshot);
}

/* asyncio's event loop waiting in its selector: the user's line is the one that runs the loop (a task's await is not
 * on the thread's stack while the loop waits), and the thread's role is the event loop. */
Test(python_place, an_asyncio_loop_is_placed_at_the_line_that_runs_it)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *thread = thread_of(snapshot, 100);
    add_python_frame(thread, "EpollSelector.select", "/usr/lib/python3.11/selectors.py", 468, false);
    add_python_frame(thread, "BaseEventLoop._run_once", "/usr/lib/python3.11/asyncio/base_events.py", 1884, false);
    add_python_frame(thread, "BaseEventLoop.run_forever", "/usr/lib/python3.11/asyncio/base_events.py", 607, false);
    add_python_frame(thread, "BaseEventLoop.run_until_complete", "/usr/lib/python3.11/asyncio/base_events.py", 640,
                     false);
    add_python_frame(thread, "Runner.run", "/usr/lib/python3.11/asyncio/runners.py", 118, false);
    add_python_frame(thread, "run", "/usr/lib/python3.11/asyncio/runners.py", 190, false);
    add_python_frame(thread, "<module>", "/app/service.py", 31, true);
    const struct hd_python_frame *place = report_python_place(thread);
    cr_assert_str_eq(place->file, "/app/service.py");
    cr_assert_eq(place->line, 31);
    cr_assert_eq(report_python_role(thread), REPORT_ROLE_EVENT_LOOP);
    cr_assert_str_eq(report_thread_role_name(REPORT_ROLE_EVENT_LOOP), "asyncio event loop");
    hd_snapshot_free(snapshot);
}

Test(python_place, the_innermost_frame_when_all_is_library_code)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *thread = thread_of(snapshot, 100);
    add_python_frame(thread, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
    add_python_frame(thread, "Thread._bootstrap", "/usr/lib/python3.11/threading.py", 995, true);
    cr_assert_eq(report_python_place(thread)->line, 320);
    cr_assert_null(report_python_place(NULL));
    hd_snapshot_free(snapshot);
}

Test(python_role, from_the_functions_on_the_stack)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 3);
    struct hd_thread *worker = thread_of(snapshot, 100);
    add_python_frame(worker, "__getitem__", "/app/dataset.py", 42, false);
    add_python_frame(worker, "_worker_loop", "/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py",
                     302, false);
    add_python_frame(worker, "BaseProcess.run", "/usr/lib/python3.11/multiprocessing/process.py", 108, true);
    cr_assert_eq(report_python_role(worker), REPORT_ROLE_DATALOADER_WORKER);
    cr_assert_str_eq(report_thread_role_name(REPORT_ROLE_DATALOADER_WORKER), "DataLoader worker");
    struct hd_thread *handler = thread_of(snapshot, 101);
    add_python_frame(handler, "Pool._handle_workers", "/usr/lib/python3.11/multiprocessing/pool.py", 522, true);
    cr_assert_eq(report_python_role(handler), REPORT_ROLE_POOL_WORKER_HANDLER);
    cr_assert(report_role_is_pool_machinery(REPORT_ROLE_POOL_WORKER_HANDLER));
    cr_assert_not(report_role_is_pool_machinery(REPORT_ROLE_DATALOADER_WORKER));
    /* a user's own file of the same name is not the library's */
    struct hd_thread *other = thread_of(snapshot, 102);
    add_python_frame(other, "worker", "/app/mypool.py", 5, true);
    cr_assert_eq(report_python_role(other), REPORT_ROLE_NONE);
    cr_assert_null(report_thread_role_name(REPORT_ROLE_NONE));
    hd_snapshot_free(snapshot);
}

Test(python_role, every_role_has_its_words)
{
    for (int role = REPORT_ROLE_NONE + 1; role < REPORT_ROLES; role++)
        cr_assert_not_null(report_thread_role_name((enum report_thread_role)role), "role %d has words", role);
}

Test(python_role, is_evidence_on_the_finding)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    struct hd_thread *worker = thread_of(snapshot, 200);
    add_python_frame(worker, "__getitem__", "/app/dataset.py", 42, false);
    add_python_frame(worker, "_worker_loop", "/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py",
                     302, false);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *inherited = the_finding(analysis, "inherited-lock");
    cr_assert_str_eq(evidence_of(inherited, "python"), "__getitem__ (/app/dataset.py:42)");
    cr_assert_str_eq(evidence_of(inherited, "role"), "DataLoader worker");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- pool-starvation ----------------------------------------------------------------------------------------- */

#define FUTURES "/usr/lib/python3.11/concurrent/futures/"

/* A ThreadPoolExecutor worker asleep on a futex: inside its task `task` (app.py:`line`) waiting in Future.result()
 * when `in_task`, else idle, waiting for work in _worker. */
static void pool_worker(struct hd_thread *thread, uint64_t futex, bool in_task, const char *task, int line)
{
    asleep_in_futex(thread, futex);
    if (in_task) {
        add_python_frame(thread, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
        add_python_frame(thread, "Future.result", FUTURES "_base.py", 451, false);
        add_python_frame(thread, task, "/srv/app/app.py", line, false);
        add_python_frame(thread, "_WorkItem.run", FUTURES "thread.py", 58, false);
    }
    add_python_frame(thread, "_worker", FUTURES "thread.py", in_task ? 83 : 81, false);
    add_python_frame(thread, "Thread.run", "/usr/lib/python3.11/threading.py", 975, true);
}

/* Process 4000: the main thread waits on a future; workers 4001 and 4002, in tasks or idle as given. */
static struct hd_snapshot *pool(bool first_in_task, bool second_in_task)
{
    struct hd_snapshot *snapshot = new_snapshot(4000);
    add_process(snapshot, 4000, 1, HD_ORIGIN_EXEC, 3);
    struct hd_thread *main_thread = thread_of(snapshot, 4000);
    asleep_in_futex(main_thread, 0x7f1000001000);
    add_python_frame(main_thread, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
    add_python_frame(main_thread, "Future.result", FUTURES "_base.py", 451, false);
    add_python_frame(main_thread, "<module>", "/srv/app/app.py", 30, true);
    pool_worker(thread_of(snapshot, 4001), 0x7f1000002000, first_in_task, "fetch_all", 12);
    pool_worker(thread_of(snapshot, 4002), 0x7f1000003000, second_in_task, "fetch_all", 12);
    return snapshot;
}

Test(pool_starvation, every_worker_waits_on_a_future_inside_its_task)
{
    struct hd_snapshot *snapshot = pool(true, true);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "pool-starvation");
    const struct report_finding *starved = the_finding(analysis, "pool-starvation");
    cr_assert_eq(starved->confidence, REPORT_LIKELY);
    cr_assert_eq(starved->tid, 4001);
    cr_assert_eq(starved->nmembers, 2u);
    cr_assert_str_eq(evidence_of(starved, "role"), "ThreadPoolExecutor worker");
    cr_assert_eq(count_evidence(starved, "worker"), 2u);
    cr_assert_str_eq(evidence_at(starved, "worker", 0),
                     "thread 4001 'thread4001' waits in Future.result, called from its task fetch_all (app.py:12)");
    cr_assert_str_eq(evidence_at(starved, "worker", 1),
                     "thread 4002 'thread4002' waits in Future.result, called from its task fetch_all (app.py:12)");
    cr_assert_null(evidence_of(starved, "idle_worker"), "all of them wait");
    cr_assert_str_eq(root_cause_id(analysis), "pool-starvation");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A worker that is idle, waiting for work, could run the inner task: whatever hangs, it is not starvation. */
Test(pool_starvation, not_while_a_worker_waits_for_work)
{
    struct hd_snapshot *snapshot = pool(true, false);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "pool-starvation"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- pool-starvation in multiprocessing's ThreadPool ------------------------------------------------------------- */

#define MP_POOL "/usr/lib/python3.11/multiprocessing/pool.py"

/* A ThreadPool worker asleep on a futex: inside its task `task` (app.py:40) that called Pool.apply on a pool, when
 * `in_task`; else idle, waiting for work in worker() (SimpleQueue.get is C: no frame of its own). */
static void threadpool_worker(struct hd_thread *thread, uint64_t futex, bool in_task)
{
    asleep_in_futex(thread, futex);
    if (in_task) {
        add_python_frame(thread, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
        add_python_frame(thread, "Event.wait", "/usr/lib/python3.11/threading.py", 622, false);
        add_python_frame(thread, "ApplyResult.wait", MP_POOL, 762, false);
        add_python_frame(thread, "ApplyResult.get", MP_POOL, 765, false);
        add_python_frame(thread, "Pool.apply", MP_POOL, 357, false);
        add_python_frame(thread, "resize", "/srv/app/app.py", 40, false);
    }
    add_python_frame(thread, "worker", MP_POOL, in_task ? 125 : 114, false);
    add_python_frame(thread, "Thread.run", "/usr/lib/python3.11/threading.py", 975, true);
}

static void threadpool_handler(struct hd_thread *thread, uint64_t futex)
{
    asleep_in_futex(thread, futex);
    add_python_frame(thread, "Pool._handle_workers", MP_POOL, 522, false);
    add_python_frame(thread, "Thread.run", "/usr/lib/python3.11/threading.py", 975, true);
}

/* Process 5000: the main thread waits in Pool.map; workers 5001 and 5002 of one pool (in tasks, or the second
 * idle), and its worker handler 5003; with `second_pool`, an idle worker 5004 of another pool and its handler
 * 5005. */
static struct hd_snapshot *threadpools(bool second_in_task, bool second_pool)
{
    struct hd_snapshot *snapshot = new_snapshot(5000);
    add_process(snapshot, 5000, 1, HD_ORIGIN_EXEC, second_pool ? 6 : 4);
    struct hd_thread *main_thread = thread_of(snapshot, 5000);
    asleep_in_futex(main_thread, 0x7f2000001000);
    add_python_frame(main_thread, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
    add_python_frame(main_thread, "Pool.map", MP_POOL, 367, false);
    add_python_frame(main_thread, "<module>", "/srv/app/app.py", 60, true);
    threadpool_worker(thread_of(snapshot, 5001), 0x7f2000002000, true);
    threadpool_worker(thread_of(snapshot, 5002), 0x7f2000003000, second_in_task);
    threadpool_handler(thread_of(snapshot, 5003), 0x7f2000004000);
    if (second_pool) {
        threadpool_worker(thread_of(snapshot, 5004), 0x7f2000005000, false);
        threadpool_handler(thread_of(snapshot, 5005), 0x7f2000006000);
    }
    return snapshot;
}

Test(pool_starvation, every_threadpool_worker_waits_in_apply_inside_its_task)
{
    struct hd_snapshot *snapshot = threadpools(true, false);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "pool-starvation");
    const struct report_finding *starved = the_finding(analysis, "pool-starvation");
    cr_assert_eq(starved->tid, 5001);
    cr_assert_eq(starved->nmembers, 2u);
    cr_assert_str_eq(evidence_of(starved, "role"), "multiprocessing pool worker");
    cr_assert_eq(count_evidence(starved, "worker"), 2u);
    cr_assert_str_eq(evidence_at(starved, "worker", 0),
                     "thread 5001 'thread5001' waits in Pool.apply, called from its task resize (app.py:40)");
    cr_assert_str_eq(evidence_at(starved, "worker", 1),
                     "thread 5002 'thread5002' waits in Pool.apply, called from its task resize (app.py:40)");
    cr_assert_null(evidence_of(starved, "idle_worker"), "all of them wait");
    cr_assert_str_eq(root_cause_id(analysis), "pool-starvation");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* An idle worker beside them: of the same pool when the process has one (the tasks wait on something else), of
 * another when it has two (one of the starved pool would have taken the queued task). */
Test(pool_starvation, an_idle_threadpool_worker_is_another_pools_only_beside_a_second_pool)
{
    struct hd_snapshot *snapshot = threadpools(false, false);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "pool-starvation"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    snapshot = threadpools(true, true);
    analysis = analyze(snapshot);
    const struct report_finding *starved = the_finding(analysis, "pool-starvation");
    cr_assert_eq(starved->nmembers, 2u, "the waiting workers only");
    cr_assert_eq(count_evidence(starved, "worker"), 2u);
    cr_assert_eq(count_evidence(starved, "idle_worker"), 1u);
    cr_assert_str_eq(evidence_of(starved, "idle_worker"),
                     "thread 5004 'thread5004' is idle, waiting for work: a worker of another of the 2 pools of "
                     "process 5000");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A process Pool's worker is the main thread of its own process: its task cannot wait for its pool, which stays in
 * the parent. */
Test(pool_starvation, not_for_a_process_pools_worker)
{
    struct hd_snapshot *snapshot = new_snapshot(5100);
    add_process(snapshot, 5100, 1, HD_ORIGIN_FORKED, 1);
    threadpool_worker(thread_of(snapshot, 5100), 0x7f2000007000, true);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "pool-starvation"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- queue-join -------------------------------------------------------------------------------------------------- */

#define STDLIB "/usr/lib/python3.11/"

/* Process 6000: the main thread asleep in Queue.join() (its queue.py at `queue_py`); thread 6001 as `consumer`
 * says: in Queue.get(), in a task of its own (a sleep in Python code), or gone. */
enum consumer { IN_GET, AT_A_TASK, GONE };

static struct hd_snapshot *joined_queue(const char *queue_py, enum consumer consumer)
{
    struct hd_snapshot *snapshot = new_snapshot(6000);
    add_process(snapshot, 6000, 1, HD_ORIGIN_EXEC, consumer == GONE ? 1 : 2);
    struct hd_thread *main_thread = thread_of(snapshot, 6000);
    asleep_in_futex(main_thread, 0x7f3000001000);
    add_python_frame(main_thread, "Condition.wait", STDLIB "threading.py", 320, false);
    add_python_frame(main_thread, "Queue.join", queue_py, 90, false);
    add_python_frame(main_thread, "<module>", "/srv/app/crawl.py", 71, true);
    if (consumer == GONE)
        return snapshot;
    struct hd_thread *worker = thread_of(snapshot, 6001);
    asleep_in_futex(worker, 0x7f3000002000);
    add_python_frame(worker, "Condition.wait", STDLIB "threading.py", 320, false);
    add_python_frame(worker, consumer == IN_GET ? "Queue.get" : "Event.wait",
                     consumer == IN_GET ? queue_py : STDLIB "threading.py", 171, false);
    add_python_frame(worker, "consume", "/srv/app/crawl.py", 24, false);
    add_python_frame(worker, "Thread.run", STDLIB "threading.py", 975, true);
    return snapshot;
}

Test(queue_join, a_join_whose_consumers_wait_in_get_lost_a_task_done)
{
    struct hd_snapshot *snapshot = joined_queue(STDLIB "queue.py", IN_GET);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "queue-join");
    const struct report_finding *finding = the_finding(analysis, "queue-join");
    cr_assert_eq(finding->tid, 6000);
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert_eq(finding->nmembers, 2u);
    cr_assert_eq(count_evidence(finding, "joiner"), 1u);
    cr_assert_str_eq(evidence_of(finding, "joiner"),
                     "thread 6000 'thread6000' waits in Queue.join, called from <module> (crawl.py:71)");
    cr_assert_eq(count_evidence(finding, "consumer"), 1u);
    cr_assert_str_eq(evidence_of(finding, "consumer"),
                     "thread 6001 'thread6001' waits in Queue.get, called from consume (crawl.py:24)");
    cr_assert_str_eq(root_cause_id(analysis), "queue-join");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(queue_join, a_join_left_alone_lost_its_consumers)
{
    struct hd_snapshot *snapshot = joined_queue("/root/.pyenv/versions/3.13.0/lib/python3.13/queue.py", GONE);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "queue-join");
    cr_assert_eq(finding->nmembers, 1u);
    cr_assert_str_eq(evidence_of(finding, "joiner"),
                     "thread 6000 'thread6000' waits in Queue.join, called from <module> (crawl.py:71)");
    cr_assert_eq(count_evidence(finding, "consumer"), 0u, "no consumer is left: %s", evidence_of(finding, "consumer"));
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Not when a Python thread is elsewhere (the consumer still at its task, stuck on something a rule may name), nor
 * for a queue.py that is not the standard library's. */
Test(queue_join, not_beside_a_thread_elsewhere_nor_for_a_namesake)
{
    struct hd_snapshot *snapshot = joined_queue(STDLIB "queue.py", AT_A_TASK);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "queue-join"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    snapshot = joined_queue("/srv/app/vendor/queue.py", IN_GET);
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "queue-join"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- event-loop-blocked ---------------------------------------------------------------------------------------- */

#define ASYNCIO "/usr/lib/python3.11/asyncio/"

/* Process 8000, one thread: an asyncio loop whose callback (the coroutine `main`, app.py:41) called
 * Future.result(); asleep forever when `alone`, else beside a thread that runs (another loop's). With
 * `in_selector`, the loop waits in its own selector instead (idle, between callbacks). */
static struct hd_snapshot *asyncio_loop(bool alone, bool in_selector)
{
    struct hd_snapshot *snapshot = new_snapshot(8000);
    add_process(snapshot, 8000, 1, HD_ORIGIN_EXEC, alone ? 1 : 2);
    struct hd_thread *loop = thread_of(snapshot, 8000);
    asleep_in_futex(loop, 0x7f4000001000);
    if (in_selector) {
        add_python_frame(loop, "EpollSelector.select", "/usr/lib/python3.11/selectors.py", 468, false);
        add_python_frame(loop, "BaseEventLoop._run_once", ASYNCIO "base_events.py", 1898, false);
    } else {
        add_python_frame(loop, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
        add_python_frame(loop, "Future.result", "/usr/lib/python3.11/concurrent/futures/_base.py", 451, false);
        add_python_frame(loop, "main", "/srv/app/app.py", 41, false);
        add_python_frame(loop, "Handle._run", ASYNCIO "events.py", 80, false);
        add_python_frame(loop, "BaseEventLoop._run_once", ASYNCIO "base_events.py", 1922, false);
    }
    add_python_frame(loop, "BaseEventLoop.run_forever", ASYNCIO "base_events.py", 607, false);
    add_python_frame(loop, "<module>", "/srv/app/app.py", 50, true);
    if (!alone) {
        struct hd_thread *other = thread_of(snapshot, 8001);
        other->state = 'R';
        other->syscall.state = HD_SYSCALL_RUNNING;
        ran(snapshot, other, 300000000, 0, 12);
    }
    return snapshot;
}

Test(event_loop_blocked, a_loop_asleep_forever_in_a_call_its_coroutine_made)
{
    struct hd_snapshot *snapshot = asyncio_loop(true, false);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "event-loop-blocked");
    const struct report_finding *finding = the_finding(analysis, "event-loop-blocked");
    cr_assert_eq(finding->tid, 8000);
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert_str_eq(evidence_of(finding, "call"),
                     "Future.result (_base.py:451), called from main (app.py:41)");
    cr_assert_str_eq(evidence_of(finding, "loop"),
                     "the call runs under Handle._run (events.py:80): a callback or a coroutine's step that the loop "
                     "runs, not the loop's own wait in its selector");
    cr_assert_str_eq(root_cause_id(analysis), "event-loop-blocked");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Not while another thread runs (it may yet answer), nor for a loop idle in its selector. */
Test(event_loop_blocked, not_while_a_thread_runs_nor_for_a_loop_in_its_selector)
{
    for (int variant = 0; variant < 2; variant++) {
        struct hd_snapshot *snapshot = asyncio_loop(variant == 1, variant == 1);
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "event-loop-blocked"), 0, "variant %d", variant);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}
