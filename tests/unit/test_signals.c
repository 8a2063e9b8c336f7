/* Signals in the wait-for graph (analysis/signals.c, analysis/graph.c): who can end a wait in pause, rt_sigsuspend,
 * rt_sigtimedwait, on a signalfd or on a signal handler's self-pipe. timeout(1), dumb-init, a shell's trap and
 * Python's forkserver wait so for their children's exits; over hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include "signals.h"

#include <criterion/criterion.h>
#include <signal.h>

#define BIT(signal) REPORT_SIGNAL_BIT(signal)

/* A wrapper 500 (timeout(1)'s shape: rt_sigsuspend with SIGCHLD unblocked and caught) and its child 510, which runs
 * unless `child_asleep`. */
static struct hd_snapshot *wrapper_and_child(bool child_asleep)
{
    struct hd_snapshot *snapshot = new_snapshot(500);
    struct hd_process *wrapper = add_process(snapshot, 500, 1, HD_ORIGIN_EXEC, 1);
    struct hd_wait *wait = asleep_in(thread_of(snapshot, 500), "rt_sigsuspend", HD_WAIT_SIGNAL, "rt_sigsuspend");
    wait->signal_set_kind = HD_SIGNAL_SET_BLOCKED;
    wait->signal_set = 0; /* timeout(1) blocks nothing while it waits */
    wrapper->signal_dispositions_known = true;
    wrapper->signals_caught = BIT(SIGCHLD) | BIT(SIGTERM);
    wrapper->timers_known = true;
    add_process(snapshot, 510, 500, HD_ORIGIN_EXEC, 1);
    if (child_asleep)
        asleep_in_futex(thread_of(snapshot, 510), 0x7f0000001000);
    return snapshot;
}

Test(signals, sigchld_caught_from_a_running_child_can_end_the_wait)
{
    struct hd_snapshot *snapshot = wrapper_and_child(false);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 500, 510, REPORT_EDGE_SIGNAL));
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_WAKER);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    size_t node = report_graph_find(&analysis->graph, 500);
    cr_assert(analysis->graph.nodes[node].wake_signals & BIT(SIGCHLD));
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(signals, a_child_asleep_forever_sends_no_sigchld)
{
    struct hd_snapshot *snapshot = wrapper_and_child(true);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 500, 510, REPORT_EDGE_SIGNAL));
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_NEVER);
    cr_assert_eq(wake_of(analysis, 510), REPORT_WAKE_NEVER);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(signals, sigchld_blocked_during_the_wait_cannot_end_it)
{
    struct hd_snapshot *snapshot = wrapper_and_child(false);
    thread_of(snapshot, 500)->wait.signal_set = BIT(SIGCHLD);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_not(has_edge(analysis, 500, 510, REPORT_EDGE_SIGNAL));
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_NEVER);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* SIG_DFL or SIG_IGN: no handler runs, so pause and sigsuspend go on sleeping */
Test(signals, sigchld_not_caught_cannot_end_a_pause)
{
    struct hd_snapshot *snapshot = wrapper_and_child(false);
    struct hd_process *wrapper = process_of(snapshot, 500);
    wrapper->signals_caught = BIT(SIGTERM);
    wrapper->signals_ignored = BIT(SIGCHLD);
    wrapper->ignores_sigchld = true;
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_not(has_edge(analysis, 500, 510, REPORT_EDGE_SIGNAL));
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_NEVER);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* rt_sigtimedwait takes the signals of its set whatever their disposition (dumb-init's sigwait) */
Test(signals, sigtimedwait_for_sigchld_waits_on_the_children)
{
    struct hd_snapshot *snapshot = wrapper_and_child(false);
    struct hd_process *wrapper = process_of(snapshot, 500);
    wrapper->signals_caught = 0;
    struct hd_wait *wait = &thread_of(snapshot, 500)->wait;
    wait->operation = "rt_sigtimedwait";
    wait->signal_set_kind = HD_SIGNAL_SET_WANTED;
    wait->signal_set = BIT(SIGCHLD) | BIT(SIGTERM);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 500, 510, REPORT_EDGE_SIGNAL));
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_WAKER);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A POSIX timer of the process that delivers a signal the wait takes makes it a timed wait (timeout's SIGALRM) */
Test(signals, a_timer_whose_signal_ends_the_wait_makes_it_timed)
{
    struct hd_snapshot *snapshot = wrapper_and_child(true);
    process_of(snapshot, 500)->signals_caught |= BIT(SIGALRM);
    process_of(snapshot, 500)->timer_signals = BIT(SIGALRM);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_TIMER);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(signals, a_timer_whose_signal_is_blocked_does_not)
{
    struct hd_snapshot *snapshot = wrapper_and_child(true);
    process_of(snapshot, 500)->signals_caught |= BIT(SIGALRM);
    process_of(snapshot, 500)->timer_signals = BIT(SIGALRM);
    thread_of(snapshot, 500)->wait.signal_set = BIT(SIGALRM);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_NEVER);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* alarm(2) and setitimer(ITIMER_REAL) send SIGALRM and are in no /proc file: a wait that a caught SIGALRM ends may
 * end on such a timer (a heartbeat's self-pipe, alarm() then pause()), so it is a timed wait, never asleep forever */
Test(signals, a_caught_sigalrm_makes_the_wait_timed_though_no_timer_is_seen)
{
    struct hd_snapshot *snapshot = wrapper_and_child(true);
    process_of(snapshot, 500)->signals_caught = BIT(SIGALRM);
    process_of(snapshot, 500)->timer_signals = 0;
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_TIMER);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* SIGVTALRM and SIGPROF count CPU time the process spends: asleep forever, it spends none */
Test(signals, a_caught_cpu_time_timer_signal_does_not)
{
    struct hd_snapshot *snapshot = wrapper_and_child(true);
    process_of(snapshot, 500)->signals_caught = BIT(SIGVTALRM) | BIT(SIGPROF);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_NEVER);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A zombie child has sent its SIGCHLD already: no edge to it */
Test(signals, a_zombie_child_is_no_sender)
{
    struct hd_snapshot *snapshot = wrapper_and_child(false);
    struct hd_process *child = process_of(snapshot, 510);
    child->zombie = true;
    child->state = 'Z';
    thread_of(snapshot, 510)->state = 'Z';
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_not(has_edge(analysis, 500, 510, REPORT_EDGE_SIGNAL));
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A self-pipe: a poll on a pipe only the process itself writes (its SIGCHLD handler does), Python's
 * signal.set_wakeup_fd and the forkserver's loop */
Test(signals, a_self_pipe_of_a_process_that_catches_sigchld_waits_on_its_children)
{
    struct hd_snapshot *snapshot = wrapper_and_child(false);
    struct hd_process *wrapper = process_of(snapshot, 500);
    add_fd(wrapper, 5, HD_FD_PIPE, 9001, 0 /* O_RDONLY */);
    add_fd(wrapper, 6, HD_FD_PIPE, 9001, 1 /* O_WRONLY */);
    polling(thread_of(snapshot, 500), 5, 0);
    struct hd_wait *wait = &thread_of(snapshot, 500)->wait;
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_NONE };
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 500, 510, REPORT_EDGE_SIGNAL));
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_WAKER);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(signals, names)
{
    char names[128];
    report_signal_names(BIT(SIGCHLD) | BIT(SIGALRM), names, sizeof names);
    cr_assert_str_eq(names, "SIGALRM, SIGCHLD");
    report_signal_names(0, names, sizeof names);
    cr_assert_str_eq(names, "");
    report_signal_names(BIT(40), names, sizeof names);
    cr_assert_str_eq(names, "signal 40");
}
