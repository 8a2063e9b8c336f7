/* The lock family of rules (analysis/rules/locks.c): inherited-lock, abandoned-lock and lock-cycle, over waits on
 * locks with an owner. Each test builds the snapshot hangdoc would have read (snapshot_builder.h) and checks the
 * exact findings, their subjects and members, the graph's edges and the verdict. */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <string.h>

/* ---- inherited and abandoned locks ------------------------------------------------------------------------------- */

Test(inherited_lock, mutex_held_at_fork_by_a_parent_thread)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);

    cr_assert_eq(analysis->graph.nnodes, 3u);
    cr_assert_eq(wake_of(analysis, 100), REPORT_WAKE_NEVER);
    cr_assert_eq(wake_of(analysis, 101), REPORT_WAKE_NEVER);
    cr_assert_eq(wake_of(analysis, 200), REPORT_WAKE_NEVER);
    cr_assert(has_edge(analysis, 100, 200, REPORT_EDGE_CHILD));
    cr_assert_not(has_edge(analysis, 200, 101, REPORT_EDGE_LOCK_OWNER), "the parent's thread cannot unlock the copy");

    EXPECT_IDS(analysis, "inherited-lock,waiting-on-workers");
    const struct report_finding *inherited = the_finding(analysis, "inherited-lock");
    cr_assert_eq(inherited->pid, 200);
    cr_assert_eq(inherited->tid, 200);
    cr_assert_eq(inherited->confidence, REPORT_CERTAIN);
    cr_assert(inherited->hang);
    cr_assert_str_eq(evidence_of(inherited, "owner_tid"), "101");
    cr_assert_str_eq(evidence_of(inherited, "owner_pid"), "100");
    cr_assert_str_eq(evidence_of(inherited, "owner_whereabouts"), "other-process");
    cr_assert_str_eq(evidence_of(inherited, "address"), "0x55d2a0c4e040");
    cr_assert(inherited->nremedies >= 1);

    const struct report_finding *workers = the_finding(analysis, "waiting-on-workers");
    cr_assert_eq(workers->pid, 100);
    cr_assert_eq(workers->tid, 100);
    cr_assert_eq(workers->nmembers, 1u);
    cr_assert_eq(member_tid(analysis, workers, 0), 200);
    cr_assert_str_eq(evidence_of(workers, "workers"), "200");

    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "fork-inheritance");
    cr_assert_str_eq(root_cause_id(analysis), "inherited-lock");
    cr_assert_eq(analysis->verdict.pid, 200);
    cr_assert_eq(analysis->verdict.tid, 200);
    assert_chain(analysis, (const pid_t[]){ 100, 200 }, 2);
    cr_assert(analysis->asleep_forever_exists);
    assert_owner_edges_point_to_owners(analysis);

    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(inherited_lock, owner_outside_the_snapshot_is_still_the_parent)
{
    /* only the child is probed: its parent 100 lies outside the snapshot */
    struct hd_snapshot *snapshot = new_snapshot(200);
    add_process(snapshot, 200, 100, HD_ORIGIN_FORKED, 1);
    waiting_on_mutex(thread_of(snapshot, 200), LOCK_ADDRESS, 101, 100, HD_OWNER_OUTSIDE, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "inherited-lock");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "fork-inheritance");
    assert_chain(analysis, (const pid_t[]){ 200 }, 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(inherited_lock, not_for_a_shared_lock_the_owner_can_reach)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_SHARED);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 200, 101, REPORT_EDGE_LOCK_OWNER), "the owner maps the same memory");
    cr_assert_eq(count_findings(analysis, "inherited-lock"), 0);
    cr_assert_eq(count_findings(analysis, "abandoned-lock"), 0);
    assert_owner_edges_point_to_owners(analysis);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(inherited_lock, shared_lock_with_a_running_owner_is_no_hang)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_SHARED);
    struct hd_thread *owner = thread_of(snapshot, 101);
    owner->state = 'R';
    owner->syscall = (struct hd_syscall){ .state = HD_SYSCALL_RUNNING };
    owner->wait = (struct hd_wait){ .kind = HD_WAIT_NONE, .fd = -1 };
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 101), REPORT_WAKE_RUNNING);
    cr_assert_eq(wake_of(analysis, 200), REPORT_WAKE_WAKER);
    cr_assert_eq(wake_of(analysis, 100), REPORT_WAKE_WAKER);
    cr_assert_eq(count_findings(analysis, "inherited-lock"), 0);
    cr_assert_eq(count_findings(analysis, "waiting-on-workers"), 0);
    for (size_t f = 0; f < analysis->nfindings; f++)
        cr_assert_str_eq(analysis->findings[f].id, "idle");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "none");
    cr_assert_eq(analysis->verdict.root_cause, -1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(abandoned_lock, owner_gone)
{
    struct hd_snapshot *snapshot = new_snapshot(300);
    add_process(snapshot, 300, 1, HD_ORIGIN_EXEC, 1);
    waiting_on_mutex(thread_of(snapshot, 300), LOCK_ADDRESS, 399, 0, HD_OWNER_GONE, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "abandoned-lock");
    const struct report_finding *finding = the_finding(analysis, "abandoned-lock");
    cr_assert_eq(finding->confidence, REPORT_CERTAIN);
    cr_assert_eq(finding->pid, 300);
    cr_assert_eq(finding->tid, 300);
    cr_assert_str_eq(evidence_of(finding, "owner_tid"), "399");
    cr_assert_str_eq(evidence_of(finding, "owner_whereabouts"), "gone");
    cr_assert_null(evidence_of(finding, "owner_pid"), "no owner process to name");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "abandoned-lock");
    assert_chain(analysis, (const pid_t[]){ 300 }, 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(abandoned_lock, owner_tid_reused_by_an_unrelated_process)
{
    struct hd_snapshot *snapshot = new_snapshot(300);
    add_process(snapshot, 300, 1, HD_ORIGIN_EXEC, 1);
    add_process(snapshot, 310, 300, HD_ORIGIN_EXEC, 1);
    add_process(snapshot, 320, 300, HD_ORIGIN_EXEC, 1);
    /* 310's lock names thread 320 of its sibling: not an ancestor, so not inherited */
    waiting_on_mutex(thread_of(snapshot, 310), LOCK_ADDRESS, 320, 320, HD_OWNER_OTHER_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    in_nanosleep(thread_of(snapshot, 300));
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "inherited-lock"), 0);
    const struct report_finding *finding = the_finding(analysis, "abandoned-lock");
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert_eq(finding->tid, 310);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    assert_chain(analysis, (const pid_t[]){ 300, 310 }, 2);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- lock cycles ------------------------------------------------------------------------------------------------- */

Test(lock_cycle, two_threads_own_what_the_other_waits_for)
{
    struct hd_snapshot *snapshot = new_snapshot(301);
    add_process(snapshot, 301, 1, HD_ORIGIN_EXEC, 3);
    waiting_on_mutex(thread_of(snapshot, 301), 0x1000, 302, 301, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 302), 0x2000, 301, 301, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 303), 0x2000, 301, 301, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);

    cr_assert_eq(analysis->graph.nedges, 3u);
    cr_assert(has_edge(analysis, 301, 302, REPORT_EDGE_LOCK_OWNER));
    cr_assert(has_edge(analysis, 302, 301, REPORT_EDGE_LOCK_OWNER));
    cr_assert(has_edge(analysis, 303, 301, REPORT_EDGE_LOCK_OWNER));
    assert_owner_edges_point_to_owners(analysis);
    for (pid_t tid = 301; tid <= 303; tid++)
        cr_assert_eq(wake_of(analysis, tid), REPORT_WAKE_NEVER, "thread %d", (int)tid);

    EXPECT_IDS(analysis, "lock-cycle");
    const struct report_finding *cycle = the_finding(analysis, "lock-cycle");
    cr_assert_eq(cycle->pid, 301);
    cr_assert_eq(cycle->tid, 301);
    cr_assert_eq(cycle->confidence, REPORT_CERTAIN);
    cr_assert_eq(cycle->nmembers, 2u);
    cr_assert(has_member(analysis, cycle, 301));
    cr_assert(has_member(analysis, cycle, 302));
    cr_assert_not(has_member(analysis, cycle, 303), "303 waits on the cycle but is not in it");
    cr_assert_eq(count_evidence(cycle, "waiter"), 2u);
    cr_assert_str_eq(evidence_at(cycle, "waiter", 0),
                     "thread 301 'thread301' of process 301 waits for mutex 0x1000 held by thread 302");
    cr_assert_str_eq(evidence_at(cycle, "waiter", 1),
                     "thread 302 'thread302' of process 301 waits for mutex 0x2000 held by thread 301");

    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "lock-cycle");
    cr_assert_eq(analysis->verdict.tid, 301);
    assert_chain(analysis, (const pid_t[]){ 301 }, 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(lock_cycle, three_threads_listed_once_whichever_comes_first)
{
    struct hd_snapshot *snapshot = new_snapshot(400);
    add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 4);
    /* 400 runs; 401 -> 403 -> 402 -> 401 */
    waiting_on_mutex(thread_of(snapshot, 401), 0x1000, 403, 400, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 403), 0x3000, 402, 400, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 402), 0x2000, 401, 400, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 400), REPORT_WAKE_RUNNING);
    const struct report_finding *cycle = the_finding(analysis, "lock-cycle");
    cr_assert_eq(cycle->tid, 401);
    cr_assert_eq(cycle->nmembers, 3u);
    cr_assert_eq(member_tid(analysis, cycle, 0), 401);
    cr_assert_eq(member_tid(analysis, cycle, 1), 403);
    cr_assert_eq(member_tid(analysis, cycle, 2), 402);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(lock_cycle, owner_that_runs_breaks_no_cycle)
{
    struct hd_snapshot *snapshot = new_snapshot(301);
    add_process(snapshot, 301, 1, HD_ORIGIN_EXEC, 2);
    waiting_on_mutex(thread_of(snapshot, 302), 0x2000, 301, 301, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 302), REPORT_WAKE_WAKER);
    EXPECT_IDS(analysis, "idle");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(lock_cycle, thread_waiting_on_a_mutex_it_owns_itself)
{
    /* A thread that locks a normal mutex it already holds sleeps forever on a lock it owns itself: a one-thread
     * lock-cycle, a certain deadlock. */
    struct hd_snapshot *snapshot = new_snapshot(1200);
    add_process(snapshot, 1200, 1, HD_ORIGIN_EXEC, 1);
    waiting_on_mutex(thread_of(snapshot, 1200), 0x1000, 1200, 1200, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 1200), REPORT_WAKE_NEVER);
    cr_expect_eq(analysis->verdict.hung, REPORT_HUNG_YES, "hung %d", (int)analysis->verdict.hung);
    cr_expect_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_expect_geq(analysis->verdict.root_cause, 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- unowned-lock-cycle ---------------------------------------------------------------------------------------- */

/* Process 3000: threads 3001 and 3002 asleep on two different futexes with no owner recorded, each inside
 * `taker` (a lock's slow path; CPython's called by the Lock object's acquire), with Python frames in `file` when
 * given; the main thread 3000 joins 3001. */
static struct hd_snapshot *two_takers(const char *taker, const char *file, uint64_t second_lock)
{
    struct hd_snapshot *snapshot = new_snapshot(3000);
    add_process(snapshot, 3000, 1, HD_ORIGIN_EXEC, 3);
    joining(thread_of(snapshot, 3000), 0x7f0000005000, 3001, 3000);
    const uint64_t locks[] = { 0x55d2a0c61000, second_lock };
    for (pid_t tid = 3001; tid <= 3002; tid++) {
        struct hd_thread *thread = thread_of(snapshot, tid);
        asleep_in_futex(thread, locks[tid - 3001]);
        add_native_frame(thread, "syscall");
        add_native_frame(thread, taker);
        if (strcmp(taker, "PyThread_acquire_lock_timed") == 0)
            add_native_frame(thread, "lock_PyThread_acquire_lock.lto_priv.0");
        add_native_frame(thread, "start_thread");
        if (file)
            add_python_frame(thread, "take", file, 18 + (tid - 3001), false);
    }
    return snapshot;
}

Test(unowned_lock_cycle, two_rust_mutexes_taken_in_opposite_orders)
{
    struct hd_snapshot *snapshot =
        two_takers("<std::sys::sync::mutex::futex::Mutex>::lock_contended", NULL, 0x55d2a0c61100);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "unowned-lock-cycle");
    const struct report_finding *cycle = the_finding(analysis, "unowned-lock-cycle");
    cr_assert_eq(cycle->confidence, REPORT_LIKELY, "which thread holds which lock no word says");
    cr_assert_eq(cycle->tid, 3001);
    cr_assert_eq(cycle->nmembers, 2u);
    cr_assert_eq(count_evidence(cycle, "waiter"), 2u);
    cr_assert_str_eq(evidence_at(cycle, "waiter", 0), "thread 3001 'thread3001' takes Rust's std::sync::Mutex at "
                                                       "0x55d2a0c61000");
    cr_assert_str_eq(evidence_at(cycle, "waiter", 1), "thread 3002 'thread3002' takes Rust's std::sync::Mutex at "
                                                       "0x55d2a0c61100");
    cr_assert_null(evidence_of(cycle, "sleeper"), "asleep forever: no thread beside them only sleeps in a loop");
    cr_assert_str_eq(evidence_of(cycle, "others"), "the process's other 1 threads sleep on futexes too (a join, a "
                                                   "condition), waiting to be woken: none can free a lock");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "unowned-lock-cycle");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(unowned_lock_cycle, python_locks_name_the_users_lines)
{
    struct hd_snapshot *snapshot = two_takers("PyThread_acquire_lock_timed", "/srv/app/jobs.py", 0x55d2a0c61100);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *cycle = the_finding(analysis, "unowned-lock-cycle");
    size_t lines = 0;
    for (size_t e = 0; e < cycle->nevidence; e++)
        lines += strcmp(cycle->evidence[e].name, "waiter") == 0 &&
                 (strstr(cycle->evidence[e].value, "takes CPython's threading.Lock at 0x55d2a0c61000, in Python at "
                                                   "take (jobs.py:18)") ||
                  strstr(cycle->evidence[e].value, "at 0x55d2a0c61100, in Python at take (jobs.py:19)"));
    cr_assert_eq(lines, 2u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* What is not a lock-order deadlock of locks with no owner: the same figures with one piece changed. */
Test(unowned_lock_cycle, not_for_waits_of_another_kind)
{
    const struct {
        const char *taker, *file;
        uint64_t second_lock;
        const char *why;
    } cases[] = {
        { "PyThread_acquire_lock_timed", "/usr/lib/python3.11/threading.py", 0x55d2a0c61100,
          "threading's waits (Condition, Event, join) take a lock too" },
        { "PyThread_acquire_lock_timed", NULL, 0x55d2a0c61100, "without the Python stack, it may be such a wait" },
        { "<std::sys::sync::mutex::futex::Mutex>::lock_contended", NULL, 0x55d2a0c61000,
          "both wait on one lock: whoever holds it is not in a cycle with them" },
        { "__new_sem_wait_slow64", NULL, 0x55d2a0c61100, "a semaphore is no lock" },
        { "<parking_lot::raw_mutex::RawMutex>::lock_slow", NULL, 0x55d2a0c61100,
          "parking_lot's waiters park on words of their own: two taking it from one place may take one lock" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hd_snapshot *snapshot = two_takers(cases[i].taker, cases[i].file, cases[i].second_lock);
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "unowned-lock-cycle"), 0, "%s", cases[i].why);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

Test(unowned_lock_cycle, not_while_a_thread_that_could_release_them_runs)
{
    struct hd_snapshot *snapshot =
        two_takers("<std::sys::sync::mutex::futex::Mutex>::lock_contended", NULL, 0x55d2a0c61100);
    struct hd_thread *main_thread = thread_of(snapshot, 3000);
    main_thread->state = 'R';
    main_thread->syscall.state = HD_SYSCALL_RUNNING;
    main_thread->wait.kind = HD_WAIT_NONE;
    ran(snapshot, main_thread, 400000000, 0, 30);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "unowned-lock-cycle"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* The keep-alive main loop of a Python program (while True: time.sleep(1)) could wake anyone, so the takers are
 * not asleep forever; once they have slept for the threshold and the main thread only sleeps in its loop, it is
 * the same deadlock, with the sleeper as evidence. A main loop that works, or takers asleep for less than the
 * threshold, are not. */
static struct hd_snapshot *takers_beside_a_sleeping_main(double blocked_s, double main_cpu_s)
{
    struct hd_snapshot *snapshot = two_takers("PyThread_acquire_lock_timed", "/srv/app/jobs.py", 0x55d2a0c61100);
    set_stuck_after(snapshot, 60);
    snapshot->sampling_s = 1.0;
    snapshot->samples = 3;
    for (pid_t tid = 3001; tid <= 3002; tid++) {
        struct hd_thread *taker = thread_of(snapshot, tid);
        taker->blocked_for_known = true;
        taker->blocked_for_s = blocked_s;
    }
    struct hd_thread *main_thread = thread_of(snapshot, 3000);
    in_nanosleep(main_thread);
    ran(snapshot, main_thread, (uint64_t)(main_cpu_s * 1e9), 1, 0); /* woke once, and slept again */
    add_python_frame(main_thread, "<module>", "/srv/app/jobs.py", 40, true);
    return snapshot;
}

Test(unowned_lock_cycle, beside_a_main_thread_that_only_sleeps_in_a_loop)
{
    struct hd_snapshot *snapshot = takers_beside_a_sleeping_main(75, 0.0002);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *cycle = the_finding(analysis, "unowned-lock-cycle");
    cr_assert_eq(cycle->nmembers, 2u);
    cr_assert_eq(count_evidence(cycle, "sleeper"), 1u);
    cr_assert_str_eq(evidence_of(cycle, "sleeper"),
                     "thread 3000 'thread3000' only sleeps in a loop (nanosleep, 0.000 s of CPU in 1.0 s sampled), in "
                     "Python at <module> (jobs.py:40): it has not freed them");
    cr_assert_str_eq(evidence_at(cycle, "waiter", 0), "thread 3001 'thread3001' takes CPython's threading.Lock at "
                                                       "0x55d2a0c61000, asleep 75.0 s, in Python at take (jobs.py:18)");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    const struct {
        double blocked_s, main_cpu_s;
        const char *why;
    } cases[] = {
        { 30, 0.0002, "asleep for less than the threshold" },
        { 75, 0.4, "a main loop that works between its sleeps may free them" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snapshot = takers_beside_a_sleeping_main(cases[i].blocked_s, cases[i].main_cpu_s);
        analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "unowned-lock-cycle"), 0, "%s", cases[i].why);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

/* A pytest-xdist worker: beside the test's threads, execnet's receiver reads the channel from the controller (a
 * pipe whose other end is outside the snapshot). It may run at any time, but it runs execnet's code only: the test's
 * deadlocked locks are asleep forever beside it, and it is named as evidence. The worker's main thread waiting for
 * its next test (in execnet's Channel.receive) is woken by it: no hang. */
#define EXECNET_FILE "/usr/lib/python3/dist-packages/execnet/gateway_base.py"

static struct hd_thread *add_channel_receiver(struct hd_snapshot *snapshot, pid_t tid, const char *callback_file)
{
    struct hd_thread *receiver = add_thread(snapshot, 3000, tid);
    add_fd(process_of(snapshot, 3000), 3, HD_FD_PIPE, 7171, 0);
    reading(receiver, 3);
    if (callback_file)
        add_python_frame(receiver, "on_message", callback_file, 7, false);
    add_python_frame(receiver, "Popen2IO.read", EXECNET_FILE, 400, false);
    add_python_frame(receiver, "Message.from_io", EXECNET_FILE, 455, false);
    add_python_frame(receiver, "BaseGateway._thread_receiver", EXECNET_FILE, 1091, false);
    add_python_frame(receiver, "WorkerPool._perform_spawn", EXECNET_FILE, 220, true);
    return receiver;
}

Test(unowned_lock_cycle, beside_the_channel_receiver_of_a_pytest_xdist_worker)
{
    struct hd_snapshot *snapshot = two_takers("PyThread_acquire_lock_timed", "/srv/app/test_jobs.py", 0x55d2a0c61100);
    add_channel_receiver(snapshot, 3003, NULL);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *cycle = the_finding(analysis, "unowned-lock-cycle");
    cr_assert_eq(cycle->nmembers, 2u);
    cr_assert_eq(count_evidence(cycle, "waiter"), 2u);
    cr_assert_null(evidence_of(cycle, "sleeper"), "asleep forever: the pump is no loop sleeper");
    cr_assert_str_eq(evidence_of(cycle, "pump"),
                     "thread 3003 'thread3003' is the message pump of execnet (the channel of a pytest-xdist worker, "
                     "or like it): it runs that library's code only, and has not freed them");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(root_cause_id(analysis), "unowned-lock-cycle");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    /* the receiver inside a callback of the program's runs the program's code: it could free them */
    snapshot = two_takers("PyThread_acquire_lock_timed", "/srv/app/test_jobs.py", 0x55d2a0c61100);
    add_channel_receiver(snapshot, 3003, "/srv/app/conftest.py");
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "unowned-lock-cycle"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* An idle pytest-xdist worker: its main thread (3000) waits without timeout on a lock with no owner, in the Python
 * frames `frames` (innermost first, `nframes` of them; the last its entry), beside execnet's receiver (3001). */
struct python_frame_row {
    const char *function, *file;
    int line;
};

static void expect_an_idle_worker_not_hung(const struct python_frame_row *frames, size_t nframes)
{
    struct hd_snapshot *snapshot = new_snapshot(3000);
    add_process(snapshot, 3000, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *main_thread = thread_of(snapshot, 3000);
    asleep_in_futex(main_thread, 0x55d2a0c61000);
    add_native_frame(main_thread, "syscall");
    add_native_frame(main_thread, "PyThread_acquire_lock_timed");
    for (size_t f = 0; f < nframes; f++)
        add_python_frame(main_thread, frames[f].function, frames[f].file, frames[f].line, f + 1 == nframes);
    add_channel_receiver(snapshot, 3001, NULL);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    const struct report_node *main_node = &analysis->graph.nodes[report_graph_find(&analysis->graph, 3000)];
    cr_assert_eq(main_node->wake, REPORT_WAKE_WAKER, "woken by the receiver: not asleep forever");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* pytest-xdist 3.6 on: the main thread waits on an Event of xdist's TestQueue, which the command callback the
 * receiver runs sets. */
Test(unowned_lock_cycle, an_idle_pytest_xdist_worker_is_woken_through_the_command_callback)
{
    const struct python_frame_row frames[] = {
        { "Condition.wait", "/usr/lib/python3.13/threading.py", 359 },
        { "Event.wait", "/usr/lib/python3.13/threading.py", 659 },
        { "TestQueue.get", "/venv/lib/python3.13/site-packages/xdist/remote.py", 89 },
        { "WorkerInteractor.pytest_runtestloop", "/venv/lib/python3.13/site-packages/xdist/remote.py", 206 },
    };
    expect_an_idle_worker_not_hung(frames, sizeof frames / sizeof frames[0]);
}

/* Before 3.6: the main thread waits in execnet's Channel.receive. */
Test(unowned_lock_cycle, an_idle_pytest_xdist_worker_is_woken_by_its_channel)
{
    const struct python_frame_row frames[] = {
        { "Condition.wait", "/usr/lib/python3.11/threading.py", 320 },
        { "Queue.get", "/usr/lib/python3.11/queue.py", 171 },
        { "Channel.receive", EXECNET_FILE, 780 },
        { "WorkerInteractor.pytest_runtestloop", "/usr/lib/python3/dist-packages/xdist/remote.py", 95 },
    };
    expect_an_idle_worker_not_hung(frames, sizeof frames / sizeof frames[0]);
}

/* PyThread_acquire_lock_timed serves more than the Lock objects: a SimpleQueue's get(), the io and import locks.
 * Consumers of two SimpleQueues beside a main loop that feeds them are no deadlock. */
Test(unowned_lock_cycle, not_for_cpython_locks_other_than_lock_objects)
{
    struct hd_snapshot *snapshot = two_takers("PyThread_acquire_lock_timed", "/srv/app/jobs.py", 0x55d2a0c61100);
    for (pid_t tid = 3001; tid <= 3002; tid++) {
        struct hd_frame *caller = &thread_of(snapshot, tid)->stack.frames[2];
        free(caller->symbol);
        caller->symbol = strdup("_queue_SimpleQueue_get_impl");
    }
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "unowned-lock-cycle"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A stripped interpreter names no static function: the Lock's acquire is an unnamed frame of the interpreter
 * itself, right above the exported PyThread_acquire_lock_timed. The finding stands, and says less (issue 25). */
Test(unowned_lock_cycle, a_stripped_interpreter_still_shows_the_python_lock_order_deadlock)
{
    struct hd_snapshot *snapshot = two_takers("PyThread_acquire_lock_timed", "/srv/app/jobs.py", 0x55d2a0c61100);
    for (pid_t tid = 3001; tid <= 3002; tid++) {
        struct hd_frame *caller = &thread_of(snapshot, tid)->stack.frames[2];
        free(caller->symbol);
        caller->symbol = NULL; /* module+0xoffset: no symbol covers it */
    }
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *cycle = the_finding(analysis, "unowned-lock-cycle");
    cr_assert_str_eq(evidence_at(cycle, "waiter", 0),
                     "thread 3001 'thread3001' takes CPython's threading.Lock or RLock at 0x55d2a0c61000, in Python at "
                     "take (jobs.py:18)");
    cr_assert_str_eq(root_cause_id(analysis), "unowned-lock-cycle");
    report_analysis_free(analysis);
    /* an unnamed caller in another file is not the interpreter's own */
    for (pid_t tid = 3001; tid <= 3002; tid++) {
        struct hd_frame *caller = &thread_of(snapshot, tid)->stack.frames[2];
        free(caller->module);
        caller->module = strdup("/srv/app/_native.so");
    }
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "unowned-lock-cycle"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* CPython 3.14 parks each waiter on a semaphore of its own, and the probe reads from the parking lot which lock
 * object it parks on: two threads taking two Lock objects from one shared line are two locks; the same object is
 * one. No native frame is needed. */
Test(unowned_lock_cycle, parked_lock_objects_tell_two_locks_apart_at_one_line)
{
    struct hd_snapshot *snapshot = two_takers("_PySemaphore_Wait", "/srv/app/jobs.py", 0x7f0000003400);
    const uint64_t objects[] = { 0x7f29c6bf8f50, 0x7f29c6bfb890 };
    for (pid_t tid = 3001; tid <= 3002; tid++) {
        struct hd_thread *thread = thread_of(snapshot, tid);
        thread->python_frames[0].line = 24; /* one line: `with lock:` in a function both call */
        free(thread->stack.frames[1].symbol);
        thread->stack.frames[1].symbol = strdup("PyEvent_WaitTimed"); /* what frames say must not matter */
        thread->wait.python_lock = objects[tid - 3001];
        thread->wait.python_lock_type = "threading.Lock";
    }
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *cycle = the_finding(analysis, "unowned-lock-cycle");
    cr_assert_eq(count_evidence(cycle, "waiter"), 2u);
    cr_assert_str_eq(evidence_at(cycle, "waiter", 0), "thread 3001 'thread3001' takes CPython's threading.Lock at "
                                                       "0x7f29c6bf8f50, in Python at take (jobs.py:24)");
    cr_assert_str_eq(evidence_at(cycle, "waiter", 1), "thread 3002 'thread3002' takes CPython's threading.Lock at "
                                                       "0x7f29c6bfb890, in Python at take (jobs.py:24)");
    report_analysis_free(analysis);
    thread_of(snapshot, 3002)->wait.python_lock = objects[0];
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "unowned-lock-cycle"), 0, "one lock taken twice is no lock order");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Debian's 3.14 is built with link-time optimisation: between the exported semaphore wait and the user's line only
 * unnamed functions of the interpreter remain. That is a Lock's acquire; a named caller of another kind
 * (PyEvent_WaitTimed, a join) or an unnamed function of another module (SimpleQueue.get, from _queue) is not. */
Test(unowned_lock_cycle, an_lto_interpreter_parks_on_its_semaphore)
{
    struct hd_snapshot *snapshot = two_takers("_PySemaphore_Wait", "/srv/app/jobs.py", 0x7f0000003400);
    for (pid_t tid = 3001; tid <= 3002; tid++) {
        struct hd_thread *thread = thread_of(snapshot, tid);
        for (size_t f = 0; f < thread->stack.nframes; f++)
            if (thread->stack.frames[f].symbol && strcmp(thread->stack.frames[f].symbol, "_PySemaphore_Wait") == 0) {
                free(thread->stack.frames[f + 1].symbol);
                thread->stack.frames[f + 1].symbol = NULL;
                free(thread->stack.frames[f + 1].module);
                thread->stack.frames[f + 1].module = strdup(thread->stack.frames[f].module);
            }
    }
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *cycle = the_finding(analysis, "unowned-lock-cycle");
    cr_assert_str_eq(evidence_at(cycle, "waiter", 0),
                     "thread 3001 'thread3001' takes CPython's threading.Lock or RLock at 0x55d2a0c61000, in Python at "
                     "take (jobs.py:18)");
    report_analysis_free(analysis);
    for (pid_t tid = 3001; tid <= 3002; tid++) {
        struct hd_frame *caller = &thread_of(snapshot, tid)->stack.frames[2];
        free(caller->module);
        caller->module = strdup("/usr/lib/python3.14/lib-dynload/_queue.cpython-314-x86_64-linux-gnu.so");
    }
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "unowned-lock-cycle"), 0, "SimpleQueue.get parks from _queue");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A thread that sleeps once, long (time.sleep(3600) before it frees a lock used as a signal), is no loop; nor is
 * one seen in a single sample. And a thread that waits on a pipe may be woken, or be the hang's own reason (a dead
 * worker's pipe), which another rule names better. */
Test(unowned_lock_cycle, not_beside_a_long_sleep_or_a_thread_stuck_on_something_else)
{
    for (int variant = 0; variant < 3; variant++) {
        struct hd_snapshot *snapshot = takers_beside_a_sleeping_main(75, 0.0002);
        struct hd_thread *main_thread = thread_of(snapshot, 3000);
        if (variant == 0)
            main_thread->voluntary_switches--; /* it never woke */
        else if (variant == 1)
            for (size_t s = 0; s < main_thread->nearlier; s++)
                main_thread->earlier[s].present = false; /* only the last sample saw it */
        else {
            /* the main thread reads a pipe: what it waits for is not a lock */
            add_fd(process_of(snapshot, 3000), 5, HD_FD_PIPE, 7070, 0);
            reading(main_thread, 5);
            add_python_frame(main_thread, "<module>", "/srv/app/jobs.py", 41, true);
        }
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "unowned-lock-cycle"), 0, "variant %d", variant);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}
