/* The timers family of rules (report/rules/timers.c): timer-only-wakers (issue 13), a thread asleep without timeout
 * for long whose only wakers wake on timers; over hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <string.h>

/* ---- timer-only-wakers --------------------------------------------------------------------------------------- */

/* Process 7000: main thread 7000 asleep without timeout on a futex for `blocked_for_s`; thread 7001 a timer thread
 * (a timed futex wait, woke `wakeups` times while sampled, 1 ms of CPU); --stuck-after 60 s. */
static struct hd_snapshot *main_thread_behind_a_timer(double blocked_for_s, unsigned wakeups)
{
    struct hd_snapshot *snapshot = new_snapshot(7000);
    snapshot->stuck_after_s = 60;
    snapshot->sampling_s = 1.0;
    add_process(snapshot, 7000, 1, HD_ORIGIN_EXEC, 2);
    struct hd_thread *main_thread = thread_of(snapshot, 7000);
    asleep_in_futex(main_thread, 0x7f0000100040);
    main_thread->blocked_for_known = true;
    main_thread->blocked_for_s = blocked_for_s;
    struct hd_thread *timer = thread_of(snapshot, 7001);
    asleep_in_futex(timer, 0x7f0000100080)->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE,
                                                                          .remaining_ns = 100000000 };
    timer->blocked_for_known = true;
    timer->blocked_for_s = 0.05;
    timer->voluntary_switches_delta = wakeups;
    timer->progressing = wakeups > 0;
    timer->cpu_delta_ns = 1000000;
    return snapshot;
}

Test(timers, asleep_longer_than_the_threshold_behind_a_timer_is_likely_hung)
{
    struct hd_snapshot *snapshot = main_thread_behind_a_timer(60.5, 10);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "timer-only-wakers");
    cr_assert_eq(finding->tid, 7000);
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert(strstr(evidence_of(finding, "timer_waker"), "thread 7001 'thread7001'"), "%s",
              evidence_of(finding, "timer_waker"));
    cr_assert(strstr(evidence_of(finding, "timer_waker"), "woke 10 times in the 1.0 s sampled"));
    cr_assert_str_eq(root_cause_id(analysis), "timer-only-wakers");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(timers, just_under_the_threshold_is_not_hung)
{
    struct hd_snapshot *snapshot = main_thread_behind_a_timer(59.5, 10);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "timer-only-wakers"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* What keeps it "not hung": a timer not seen to fire (it may do anything when it does), a timer thread that does
 * more than wake (CPU), one that waits on the outside world, a thread that runs, the rule off (threshold 0), and a
 * waker that ran lately (the main thread of a scheduler woken by its timer). */
Test(timers, a_timer_that_did_not_fire_or_that_works_keeps_it_not_hung)
{
    for (int variant = 0; variant < 6; variant++) {
        struct hd_snapshot *snapshot = main_thread_behind_a_timer(120, variant == 0 ? 0 : 10);
        struct hd_thread *timer = thread_of(snapshot, 7001);
        if (variant == 1)
            timer->cpu_delta_ns = 200000000; /* 0.2 s of CPU in 1 s: it does work */
        if (variant == 2) {
            asleep_in(timer, "recvfrom", HD_WAIT_READ, NULL)->timeout =
                (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 100000000 };
            timer->wait.fd = 9; /* not in the process's table: something outside */
            timer->wait.fds[0] = 9;
            timer->wait.nfds_known = 1;
        }
        if (variant == 3) {
            timer->state = 'R';
            timer->samples_in_state_r = 2;
        }
        if (variant == 4)
            snapshot->stuck_after_s = 0;
        if (variant == 5) {
            /* a third thread, asleep without timeout as the main one but woken 0.3 s ago: wakeups reach this
             * process (a copy of the main thread: it owns nothing a second free could find) */
            struct hd_thread *third = add_thread(snapshot, 7000, 7002);
            *third = *thread_of(snapshot, 7000);
            third->tid = 7002;
            third->blocked_for_s = 0.3;
        }
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "timer-only-wakers"), 0, "variant %d", variant);
        cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO, "variant %d", variant);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

/* The main thread of a process in a timed loop is the program's own schedule, not a housekeeping timer: its idle
 * workers are not hung however long they wait (a pool idle between batches). */
Test(timers, idle_workers_of_a_main_thread_in_a_sleep_loop_are_not_hung)
{
    struct hd_snapshot *snapshot = new_snapshot(7100);
    snapshot->stuck_after_s = 60;
    snapshot->sampling_s = 1.0;
    add_process(snapshot, 7100, 1, HD_ORIGIN_EXEC, 3);
    struct hd_thread *main_thread = thread_of(snapshot, 7100);
    in_nanosleep(main_thread);
    main_thread->voluntary_switches_delta = 5;
    for (pid_t tid = 7101; tid <= 7102; tid++) {
        struct hd_thread *worker = thread_of(snapshot, tid);
        asleep_in_futex(worker, 0x7f0000200000 + 0x40 * (uint64_t)tid);
        worker->blocked_for_known = true;
        worker->blocked_for_s = 3600;
    }
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "timer-only-wakers"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
