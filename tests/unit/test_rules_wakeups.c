/* The wake-up family (analysis/rules/wakeups.c): no-waker, a thread asleep forever on a futex that records no owner
 * when no thread that could wake it can run and no other finding is about its process. Each test builds the
 * snapshot hangdoc would have read (snapshot_builder.h) and checks the exact findings and evidence. */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include "signals.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONDITION 0x55d2a0c4e088ull

/* Thread 100 waits in pthread_cond_wait while it holds the mutex at LOCK_ADDRESS that thread 101 waits for. */
static struct hd_snapshot *condition_wait_holding_a_mutex(void)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    asleep_in_futex(thread_of(snapshot, 100), CONDITION);
    add_native_frame(thread_of(snapshot, 100), "__futex_abstimed_wait_common");
    add_native_frame(thread_of(snapshot, 100), "pthread_cond_wait");
    add_native_frame(thread_of(snapshot, 100), "main");
    waiting_on_mutex(thread_of(snapshot, 101), LOCK_ADDRESS, 100, 100, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    return snapshot;
}

Test(no_waker, a_condition_wait_holding_the_mutex_its_waker_needs)
{
    struct hd_snapshot *snapshot = condition_wait_holding_a_mutex();
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 100), REPORT_WAKE_NEVER);
    EXPECT_IDS(analysis, "no-waker");
    const struct report_finding *finding = the_finding(analysis, "no-waker");
    cr_assert_eq(finding->tid, 100);
    cr_assert_eq(finding->confidence, REPORT_CERTAIN);
    cr_assert(has_member(analysis, finding, 100) && has_member(analysis, finding, 101));
    cr_assert_str_eq(evidence_of(finding, "address"), "0x55d2a0c4e088");
    cr_assert_str_eq(evidence_of(finding, "waits_in"), "a condition variable (pthread_cond_wait)");
    cr_assert_str_eq(evidence_of(finding, "held_lock"),
                     "thread 100 'thread100' holds the mutex 0x55d2a0c4e040 that thread 101 'thread101' waits for");
    cr_assert_str_eq(evidence_of(finding, "waker"),
                     "thread 101 'thread101' of process 100 could wake it, but is asleep forever itself, waiting for "
                     "the mutex 0x55d2a0c4e040 that thread 100 holds");
    cr_assert_eq(remedies_containing(finding, "release it before the wait"), 1);
    cr_assert_eq(remedies_containing(finding, "In Python"), 0, "no Python stack");
    cr_assert_str_eq(root_cause_id(analysis), "no-waker");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, a_cpp_condition_variable_is_named_before_the_pthread_call_inside_it)
{
    struct hd_snapshot *snapshot = condition_wait_holding_a_mutex();
    struct hd_thread *sleeper = thread_of(snapshot, 100);
    free(sleeper->stack.frames[2].symbol);
    sleeper->stack.frames[2].symbol = strdup("std::condition_variable::wait(std::unique_lock<std::mutex>&)");
    add_native_frame(sleeper, "main");
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_str_eq(evidence_of(the_finding(analysis, "no-waker"), "waits_in"), "a C++ std::condition_variable");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, not_while_a_thread_that_could_wake_it_runs)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2); /* thread 101 runs */
    asleep_in_futex(thread_of(snapshot, 100), CONDITION);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 100), REPORT_WAKE_WAKER);
    cr_assert_eq(count_findings(analysis, "no-waker"), 0);
    cr_assert_neq(analysis->verdict.hung, REPORT_HUNG_YES);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, not_for_a_wait_with_a_timeout)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 1);
    struct hd_wait *wait = asleep_in_futex(thread_of(snapshot, 100), CONDITION);
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 400000000 };
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 100), REPORT_WAKE_TIMER);
    cr_assert_eq(count_findings(analysis, "no-waker"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, not_in_a_process_another_finding_is_about)
{
    /* threads 101 and 102 in a lock cycle; thread 100 waits on a condition only they could signal: the cycle is the
     * cause, and the condition wait follows from it */
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 3);
    asleep_in_futex(thread_of(snapshot, 100), CONDITION);
    waiting_on_mutex(thread_of(snapshot, 101), LOCK_ADDRESS, 102, 100, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 102), LOCK_ADDRESS + 0x40, 101, 100, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 100), REPORT_WAKE_NEVER);
    EXPECT_IDS(analysis, "lock-cycle");
    cr_assert_str_eq(root_cause_id(analysis), "lock-cycle");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, a_pool_with_nothing_left_to_wake_it_is_one_finding_about_its_main_thread)
{
    /* main thread 200 and twelve workers, each asleep on a futex of its own that records no owner */
    struct hd_snapshot *snapshot = new_snapshot(200);
    add_process(snapshot, 200, 1, HD_ORIGIN_EXEC, 13);
    for (pid_t tid = 201; tid <= 212; tid++)
        asleep_in_futex(thread_of(snapshot, tid), CONDITION + 0x100 * (uint64_t)(tid - 200));
    asleep_in_futex(thread_of(snapshot, 200), CONDITION);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "no-waker");
    const struct report_finding *finding = the_finding(analysis, "no-waker");
    cr_assert_eq(finding->tid, 200, "about the main thread");
    cr_assert_eq(finding->nmembers, 13u);
    cr_assert_str_eq(evidence_of(finding, "waits_in"), "a futex that records no owner", "no stack");
    size_t sleepers = 0, wakers = 0;
    for (size_t e = 0; e < finding->nevidence; e++) {
        sleepers += strcmp(finding->evidence[e].name, "sleeper") == 0;
        wakers += strcmp(finding->evidence[e].name, "waker") == 0;
    }
    cr_assert_eq(sleepers, 9u, "eight named, the rest counted");
    cr_assert_eq(wakers, 9u, "eight named, the rest counted");
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Process 300, Python, whose only thread waits in Event.wait() at train.py:12; it catches `caught`. */
static struct hd_snapshot *lone_python_thread_in_event_wait(uint64_t caught)
{
    struct hd_snapshot *snapshot = new_snapshot(300);
    struct hd_process *process = add_process(snapshot, 300, 1, HD_ORIGIN_EXEC, 1);
    process->python.read = true;
    process->signal_dispositions_known = true;
    process->signals_caught = caught;
    struct hd_thread *main_thread = thread_of(snapshot, 300);
    asleep_in_futex(main_thread, CONDITION);
    add_python_frame(main_thread, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
    add_python_frame(main_thread, "Event.wait", "/usr/lib/python3.11/threading.py", 622, false);
    add_python_frame(main_thread, "<module>", "/app/train.py", 12, true);
    return snapshot;
}

Test(no_waker, a_lone_python_thread_in_event_wait)
{
    /* the interpreter's own SIGINT handler is no sign of a service waiting to be stopped */
    struct hd_snapshot *snapshot = lone_python_thread_in_event_wait(REPORT_SIGNAL_BIT(SIGINT));
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "no-waker");
    const struct report_finding *finding = the_finding(analysis, "no-waker");
    cr_assert_str_eq(evidence_of(finding, "waits_in"), "Python's Event.wait (threading.py)");
    cr_assert_str_eq(evidence_of(finding, "python"), "<module> (/app/train.py:12)");
    cr_assert_str_eq(evidence_of(finding, "waker"), "none: no other thread could (it is the only thread of process "
                                                   "300, and nothing another process holds or shares can end its "
                                                   "wait)");
    cr_assert_eq(remedies_containing(finding, "threading.excepthook"), 1);
    cr_assert_eq(finding->confidence, REPORT_CERTAIN);
    cr_assert_null(evidence_of(finding, "signal_handler"));
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, a_python_main_thread_whose_process_catches_sigterm_is_only_likely)
{
    /* signal.signal(SIGTERM, lambda *_: stop.set()); stop.wait(): a service waiting to be stopped, or a hang */
    struct hd_snapshot *snapshot =
        lone_python_thread_in_event_wait(REPORT_SIGNAL_BIT(SIGINT) | REPORT_SIGNAL_BIT(SIGTERM));
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "no-waker");
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert_str_eq(evidence_of(finding, "signal_handler"),
                     "process 300 catches SIGTERM: a Python handler runs in the main thread and ends this wait if it "
                     "sets what the thread waits for (a service waiting to be stopped is not hung); whether it does, "
                     "no snapshot says");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* asyncio.run(main()) of process 400 whose loop waits in its selector on its own self-pipe (a socket pair) alone,
 * in a Python process catching `caught`. */
static struct hd_snapshot *asyncio_loop_on_its_self_pipe(uint64_t caught)
{
    struct hd_snapshot *snapshot = new_snapshot(400);
    struct hd_process *process = add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 1);
    process->python.read = true;
    process->signal_dispositions_known = true;
    process->signals_caught = caught;
    add_fd(process, 3, HD_FD_ANON, 0, 0);
    add_fd(process, 4, HD_FD_SOCKET, 9001, 2);
    add_fd(process, 5, HD_FD_SOCKET, 9002, 2);
    add_socket_pair(snapshot, 9001, 9002);
    struct hd_thread *loop = thread_of(snapshot, 400);
    struct hd_wait *wait = asleep_in(loop, "epoll_wait", HD_WAIT_POLL, "epoll_wait");
    wait->fd = 3;
    wait->fds[0] = 4;
    wait->nfds_known = 1;
    add_python_frame(loop, "EpollSelector.select", "/usr/lib/python3.11/selectors.py", 468, false);
    add_python_frame(loop, "BaseEventLoop._run_once", "/usr/lib/python3.11/asyncio/base_events.py", 1898, false);
    add_python_frame(loop, "BaseEventLoop.run_forever", "/usr/lib/python3.11/asyncio/base_events.py", 607, false);
    add_python_frame(loop, "Runner.run", "/usr/lib/python3.11/asyncio/runners.py", 118, false);
    add_python_frame(loop, "<module>", "/app/serve.py", 30, true);
    return snapshot;
}

Test(no_waker, an_asyncio_loop_idle_in_its_selector_with_nothing_to_wake_it)
{
    /* its task awaits a future nobody sets; SIGINT's handler (the interpreter's own) could write the self-pipe */
    struct hd_snapshot *snapshot = asyncio_loop_on_its_self_pipe(REPORT_SIGNAL_BIT(SIGINT));
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 400), REPORT_WAKE_NEVER, "only the loop itself holds its self-pipe");
    EXPECT_IDS(analysis, "no-waker");
    const struct report_finding *finding = the_finding(analysis, "no-waker");
    cr_assert_eq(finding->tid, 400);
    cr_assert_str_eq(evidence_of(finding, "waits_in"), "the selector of asyncio's event loop (EpollSelector.select)");
    cr_assert_null(evidence_of(finding, "address"), "no futex");
    cr_assert_str_eq(evidence_of(finding, "python"), "<module> (/app/serve.py:30)");
    cr_assert_eq(remedies_containing(finding, "asyncio.all_tasks()"), 1);
    cr_assert_eq(remedies_containing(finding, "threading.excepthook"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, not_for_an_asyncio_loop_that_waits_for_sigterm_by_design)
{
    /* loop.add_signal_handler(SIGTERM, stop.set); await stop.wait(): a service waiting to be stopped */
    struct hd_snapshot *snapshot = asyncio_loop_on_its_self_pipe(REPORT_SIGNAL_BIT(SIGINT) | REPORT_SIGNAL_BIT(SIGTERM));
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 400), REPORT_WAKE_NEVER, "nothing in the snapshot sends SIGTERM");
    cr_assert(report_waits_for_a_signal_by_design(&analysis->graph.nodes[0]));
    cr_assert_eq(analysis->nfindings, 0u);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO, "a wait for a signal by design, as pause() is");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, not_for_a_c_loop_on_its_self_pipe_that_sigint_ends)
{
    /* a C program's loop that polls the pipe its SIGINT handler writes: Ctrl-C is how it is meant to end */
    struct hd_snapshot *snapshot = new_snapshot(500);
    struct hd_process *process = add_process(snapshot, 500, 1, HD_ORIGIN_EXEC, 1);
    process->signal_dispositions_known = true;
    process->signals_caught = REPORT_SIGNAL_BIT(SIGINT);
    add_fd(process, 3, HD_FD_PIPE, 7001, 0);
    add_fd(process, 4, HD_FD_PIPE, 7001, 1);
    polling(thread_of(snapshot, 500), 3, 0)->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_NONE };
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_NEVER);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, each_thread_that_could_wake_a_loop_is_named_once)
{
    /* the loop polls both ends of its self-pipe (an edge each, to its own process); its other thread waits in
     * pause() for a signal (by design, and no cycle: it waits on nobody) */
    struct hd_snapshot *snapshot = asyncio_loop_on_its_self_pipe(REPORT_SIGNAL_BIT(SIGINT));
    struct hd_thread *loop = thread_of(snapshot, 400);
    loop->wait.fds[1] = 5;
    loop->wait.nfds_known = 2;
    in_pause(add_thread(snapshot, 400, 401));
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "no-waker");
    const struct report_finding *finding = the_finding(analysis, "no-waker");
    cr_assert_eq(finding->tid, 400, "about the loop, the main thread");
    cr_assert_eq(count_evidence(finding, "waker"), 1u);
    cr_assert_str_eq(evidence_of(finding, "waker"), "thread 401 'thread401' of process 400 could wake it, but is "
                                                   "asleep forever itself, on pause");
    cr_assert_null(evidence_of(finding, "sleeper"), "pause() is no wait for a wake-up");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, a_python_join_of_a_consumer_waiting_for_its_sentinel)
{
    /* main thread 600 joins 601, which waits in Queue.get() for the None only 600 would have put */
    struct hd_snapshot *snapshot = new_snapshot(600);
    add_process(snapshot, 600, 1, HD_ORIGIN_EXEC, 2);
    struct hd_thread *joiner = thread_of(snapshot, 600), *consumer = thread_of(snapshot, 601);
    asleep_in_futex(joiner, CONDITION);
    add_python_frame(joiner, "Thread._wait_for_tstate_lock", "/usr/lib/python3.11/threading.py", 1132, false);
    add_python_frame(joiner, "Thread.join", "/usr/lib/python3.11/threading.py", 1112, false);
    add_python_frame(joiner, "<module>", "/app/etl.py", 40, true);
    asleep_in_futex(consumer, CONDITION + 0x100);
    add_python_frame(consumer, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
    add_python_frame(consumer, "Queue.get", "/usr/lib/python3.11/queue.py", 171, false);
    add_python_frame(consumer, "consume", "/app/etl.py", 12, false);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "no-waker");
    const struct report_finding *finding = the_finding(analysis, "no-waker");
    cr_assert_eq(finding->tid, 600);
    cr_assert_str_eq(evidence_of(finding, "waits_in"), "Python's Thread.join (threading.py)");
    cr_assert_str_eq(evidence_of(finding, "sleeper"), "thread 601 'thread601' sleeps forever too, in Python's "
                                                     "Queue.get (queue.py), in Python at consume (etl.py:12)");
    cr_assert_eq(remedies_containing(finding, "tell it to stop before join()"), 1);
    cr_assert_eq(remedies_containing(finding, "threading.excepthook"), 0, "the joined thread did not die");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(no_waker, a_stripped_librarys_wait_is_named_by_what_its_caller_called)
{
    /* glibc 2.43: the frame in sem_wait's static helper has no symbol; main's call instruction called sem_wait */
    struct hd_snapshot *snapshot = new_snapshot(700);
    add_process(snapshot, 700, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *thread = thread_of(snapshot, 700);
    asleep_in_futex(thread, CONDITION);
    add_native_frame(thread, "__futex_abstimed_wait_common");
    add_native_frame(thread, "main");
    free(thread->stack.frames[0].symbol);
    thread->stack.frames[0].symbol = NULL;
    thread->stack.frames[0].called_as = strdup("sem_wait");
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_str_eq(evidence_of(the_finding(analysis, "no-waker"), "waits_in"), "a semaphore (sem_wait)");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
