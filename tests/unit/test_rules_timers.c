/* The timers family of rules (analysis/rules/timers.c): timer-only-wakers (issue 13), a thread asleep without timeout
 * for long whose only wakers wake on timers; over hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- timer-only-wakers --------------------------------------------------------------------------------------- */

/* Process 7000: main thread 7000 asleep without timeout on a futex for `blocked_for_s`; thread 7001 a timer thread
 * (a timed futex wait in each of `samples` samples, woke `wakeups` times while sampled, 1 ms of CPU then);
 * --stuck-after 60 s. */
static struct hd_snapshot *sampled_behind_a_timer(double blocked_for_s, unsigned wakeups, unsigned samples)
{
    struct hd_snapshot *snapshot = new_snapshot(7000);
    set_stuck_after(snapshot, 60);
    snapshot->sampling_s = 1.0;
    snapshot->samples = samples;
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
    if (wakeups > 0)
        ran(snapshot, timer, 1000000, wakeups, 0);
    return snapshot;
}

static struct hd_snapshot *main_thread_behind_a_timer(double blocked_for_s, unsigned wakeups)
{
    return sampled_behind_a_timer(blocked_for_s, wakeups, 2);
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
            timer->cpu_time_ns += 199000000; /* 0.2 s of CPU in 1 s: it does work */
        if (variant == 2) {
            asleep_in(timer, "recvfrom", HD_WAIT_READ, NULL)->timeout =
                (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 100000000 };
            timer->wait.fd = 9; /* not in the process's table: something outside */
            timer->wait.fds[0] = 9;
            timer->wait.nfds_known = 1;
        }
        if (variant == 3) {
            timer->state = 'R'; /* in both samples */
            earlier_samples(snapshot, timer)[0].state = 'R';
        }
        if (variant == 4)
            set_stuck_after(snapshot, 0);
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

/* The last sample caught the timer thread on a CPU, between two ticks (its only sample in state R), and an earlier
 * one found it in its timed futex wait: still merely a timer (a CI run under load saw two housekeepers so). Not
 * when no earlier sample saw a timed wait, when that wait had no timeout, or when two samples found it running. */
Test(timers, a_timer_caught_on_a_cpu_between_two_ticks_is_still_a_timer)
{
    enum { CAUGHT_BETWEEN, NO_EARLIER_WAIT, EARLIER_WAIT_UNTIMED, RUNNING_TWICE, VARIANTS };
    for (int variant = 0; variant < VARIANTS; variant++) {
        /* the 5 earlier samples found it in its timed futex wait at 0x7f0000100080 */
        struct hd_snapshot *snapshot = sampled_behind_a_timer(120, 10, 6);
        struct hd_thread *timer = thread_of(snapshot, 7001);
        timer->state = 'R';
        timer->syscall.state = HD_SYSCALL_RUNNING;
        timer->blocked_for_known = false;
        for (size_t s = 0; s < timer->nearlier; s++) {
            if (variant == NO_EARLIER_WAIT)
                timer->earlier[s].wait_kind = HD_WAIT_SLEEP;
            if (variant == EARLIER_WAIT_UNTIMED)
                timer->earlier[s].timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_NONE };
        }
        if (variant == RUNNING_TWICE) {
            timer->earlier[4].state = 'R';
            timer->earlier[4].syscall.state = HD_SYSCALL_RUNNING;
        }
        struct report_analysis *analysis = analyze(snapshot);
        if (variant == CAUGHT_BETWEEN) {
            const struct report_finding *finding = the_finding(analysis, "timer-only-wakers");
            cr_assert_eq(finding->tid, 7000);
            const char *timer_waker = evidence_of(finding, "timer_waker");
            cr_assert(strstr(timer_waker, "thread 7001 'thread7001'"), "%s", timer_waker);
            cr_assert(strstr(timer_waker, "futex 0x7f0000100080 (private) in an earlier sample; the last one caught "
                                          "it on a CPU, between two waits"),
                      "%s", timer_waker);
            cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
        } else {
            cr_assert_eq(count_findings(analysis, "timer-only-wakers"), 0, "variant %d", variant);
            cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO, "variant %d", variant);
        }
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

/* The main thread of a process in a timed loop is the program's own schedule, not a housekeeping timer: its idle
 * workers are not hung however long they wait (a pool idle between batches). */
Test(timers, idle_workers_of_a_main_thread_in_a_sleep_loop_are_not_hung)
{
    struct hd_snapshot *snapshot = new_snapshot(7100);
    set_stuck_after(snapshot, 60);
    snapshot->sampling_s = 1.0;
    add_process(snapshot, 7100, 1, HD_ORIGIN_EXEC, 3);
    struct hd_thread *main_thread = thread_of(snapshot, 7100);
    in_nanosleep(main_thread);
    ran(snapshot, main_thread, 500000, 5, 0);
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

/* ---- a poll in vain in a forked child (fork-unsafe-runtime) ------------------------------------------------------ */

#define GRPC_CODE 0x7f0000000000ull

enum poll_variant {
    POLL_AS_GRPC,          /* the gRPC case: the child's call polls in vain */
    POLL_WORKED_FIRST,     /* its thread used 5 s of CPU since the fork: not known to have polled since */
    POLL_AWAY_ONCE,        /* one sample caught it away from its futex, between two waits: still one loop */
    POLL_ANOTHER_FUTEX,    /* two samples saw it at another futex: not one loop */
    POLL_SLEEPER_WOKE,     /* the child's other sleeper ran 10 s ago: someone wakes threads there */
    POLL_YOUNG_CHILD,      /* forked 30 s ago, under the threshold */
    POLL_PARENT_IDLE,      /* the parent runs no gRPC thread */
    POLL_SHARED_FUTEX,     /* a futex another process could wake */
    POLL_WORKING_TIMER,    /* the child's timer thread used 50 ms of CPU while sampled */
    POLL_IDLE_GRPC_TIMER,  /* the timer did not fire while sampled, but it is parked in gRPC, through Abseil */
    POLL_IDLE_OTHER_TIMER, /* the timer did not fire while sampled, parked in a library of no catalogued runtime */
};

#define LIBC_CODE 0x7f0000800000ull
#define ABSL_CODE 0x7f0000900000ull
#define OTHER_CODE 0x7f0000a00000ull

/* The timer thread's stack: libc's syscall(), Abseil's Waiter::Wait, then gRPC's timer loop (or another library's
 * code). */
static void park_timer(struct hd_snapshot *snapshot, struct hd_thread *timer, bool in_grpc)
{
    struct hd_process *child = process_of(snapshot, 200);
    add_library(child, LIBC_CODE, LIBC_CODE + 0x100000, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6");
    add_library(child, ABSL_CODE, ABSL_CODE + 0x100000,
                "/usr/lib/x86_64-linux-gnu/libabsl_synchronization.so.20220623.0.0",
                "libabsl_synchronization.so.20220623");
    add_library(child, OTHER_CODE, OTHER_CODE + 0x100000, "/usr/lib/x86_64-linux-gnu/libother.so.1", "libother.so.1");
    const uint64_t pcs[] = { LIBC_CODE + 0x19, ABSL_CODE + 0x7e, in_grpc ? GRPC_CODE + 0x46ce : OTHER_CODE + 0x42 };
    timer->stack.frames = calloc(3, sizeof *timer->stack.frames);
    cr_assert_not_null(timer->stack.frames);
    for (size_t f = 0; f < 3; f++)
        timer->stack.frames[f].pc = pcs[f];
    timer->stack.nframes = 3;
    timer->stack.state = HD_STACK_TAKEN;
}

/* Parent 100 (its main thread in wait4 on the child, thread 101 gRPC's 'grpc_global_tim' in a timed wait); child
 * 200 forked from it 120 s ago, mapping libgrpc: its main thread in a private futex wait with a 200 ms timeout,
 * at the same futex in all 6 samples over 1.25 s, woken 6 times, 0.5 ms of CPU while sampled and 80 ms since the
 * fork, with a frame in libgrpc; its thread 201 gRPC's timer (a timed wait, woke twice); its thread 202 asleep
 * without timeout for 120 s. --stuck-after 60 s. */
static struct hd_snapshot *grpc_child(enum poll_variant variant)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    set_stuck_after(snapshot, 60);
    snapshot->sampling_s = 1.25;
    snapshot->samples = 6;
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    in_wait4(thread_of(snapshot, 100), 200);
    struct hd_thread *grpc_timer = thread_of(snapshot, 101);
    snprintf(grpc_timer->name, HD_COMM_MAX, variant == POLL_PARENT_IDLE ? "worker" : "grpc_global_tim");
    asleep_in_futex(grpc_timer, 0x7f0000300100)->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE,
                                                                               .remaining_ns = 500000000 };
    struct hd_process *child = add_process(snapshot, 200, 100, HD_ORIGIN_FORKED, 3);
    child->age_s = variant == POLL_YOUNG_CHILD ? 30 : 120;
    for (pid_t pid = 100; pid <= 200; pid += 100) {
        struct hd_library *grpc = add_library(process_of(snapshot, pid), GRPC_CODE, GRPC_CODE + 0x100000,
                                              "/usr/lib/x86_64-linux-gnu/libgrpc.so.29.0.0", "libgrpc.so.29");
        grpc->in_parent = true;
    }
    struct hd_thread *poller = thread_of(snapshot, 200);
    struct hd_wait *wait = asleep_in_futex(poller, 0x7f0000400040);
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 200000000 };
    wait->futex_private = variant != POLL_SHARED_FUTEX;
    poller->syscall.program_counter = GRPC_CODE + 0x1234;
    poller->cpu_time_ns = (variant == POLL_WORKED_FIRST ? 5000000000ull : 80000000ull) - 500000;
    ran(snapshot, poller, 500000, 6, 0); /* 0.5 ms while sampled, woken 6 times */
    for (size_t s = 0; s < poller->nearlier; s++)
        poller->earlier[s].syscall.args[5] = 1000 + s; /* its deadline, in its arguments, changed */
    if (variant == POLL_AWAY_ONCE) /* between two waits, in user space */
        poller->earlier[2].syscall.state = HD_SYSCALL_RUNNING;
    if (variant == POLL_ANOTHER_FUTEX)
        poller->earlier[1].wait_address = poller->earlier[3].wait_address = 0x7f0000400100;
    poller->blocked_for_known = true;
    poller->blocked_for_s = 0.1;
    struct hd_thread *timer = thread_of(snapshot, 201);
    snprintf(timer->name, HD_COMM_MAX, "timer_manager");
    asleep_in_futex(timer, 0x7f0000400080)->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE,
                                                                          .remaining_ns = 100000000 };
    if (variant == POLL_IDLE_GRPC_TIMER || variant == POLL_IDLE_OTHER_TIMER)
        park_timer(snapshot, timer, variant == POLL_IDLE_GRPC_TIMER); /* it did not fire while sampled */
    else
        ran(snapshot, timer, variant == POLL_WORKING_TIMER ? 50000000 : 20000, 2, 0);
    struct hd_thread *sleeper = thread_of(snapshot, 202);
    asleep_in_futex(sleeper, 0x7f00004000c0);
    sleeper->blocked_for_known = true;
    sleeper->blocked_for_s = variant == POLL_SLEEPER_WOKE ? 10 : 120;
    return snapshot;
}

Test(timers, a_forked_child_polling_in_vain_inside_its_parents_grpc_is_fork_unsafe_runtime)
{
    struct hd_snapshot *snapshot = grpc_child(POLL_AS_GRPC);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "fork-unsafe-runtime");
    cr_assert_eq(finding->pid, 200);
    cr_assert_eq(finding->tid, 200);
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert_str_eq(evidence_of(finding, "runtime"), "grpc");
    cr_assert(strstr(evidence_of(finding, "polls"), "at it in 6 of 6 samples over 1.2 s, it woke 6 times"), "%s",
              evidence_of(finding, "polls"));
    cr_assert(strstr(evidence_of(finding, "since_fork"), "forked 120.0 s ago"), "%s",
              evidence_of(finding, "since_fork"));
    cr_assert(strstr(evidence_of(finding, "parent_thread"), "thread 101 'grpc_global_tim'"));
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_eq(analysis->verdict.cause, REPORT_CAUSE_FORK_INHERITANCE);
    cr_assert_eq(analysis->verdict.tid, 200);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* gRPC's timer_manager need not fire while sampled: parked in gRPC's own code (Abseil's wait passes through), it is a
 * timer of the runtime all the same. */
/* A sample may catch the poller away from its futex, between two waits: once in six is still one loop, and the
 * evidence says so. */
Test(timers, a_poller_caught_away_from_its_futex_once_still_polls_in_vain)
{
    struct hd_snapshot *snapshot = grpc_child(POLL_AWAY_ONCE);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "fork-unsafe-runtime");
    cr_assert(strstr(evidence_of(finding, "polls"), "at it in 5 of 6 samples over 1.2 s"), "%s",
              evidence_of(finding, "polls"));
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(timers, an_idle_grpc_timer_parked_through_abseil_keeps_the_poll_in_vain)
{
    struct hd_snapshot *snapshot = grpc_child(POLL_IDLE_GRPC_TIMER);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(the_finding(analysis, "fork-unsafe-runtime")->tid, 200);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(timers, a_poll_not_shown_to_be_in_vain_since_the_fork_is_not_blamed_on_it)
{
    static const struct {
        enum poll_variant variant;
        const char *why;
    } cases[] = {
        { POLL_WORKED_FIRST, "worked first" },      { POLL_ANOTHER_FUTEX, "another futex twice" },
        { POLL_SLEEPER_WOKE, "a sleeper ran lately" }, { POLL_YOUNG_CHILD, "forked under the threshold ago" },
        { POLL_PARENT_IDLE, "no gRPC thread in the parent" }, { POLL_SHARED_FUTEX, "a shared futex" },
        { POLL_WORKING_TIMER, "a timer thread that works" },
        { POLL_IDLE_OTHER_TIMER, "a timer that did not fire, in no catalogued runtime's code" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hd_snapshot *snapshot = grpc_child(cases[i].variant);
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "fork-unsafe-runtime"), 0, "%s", cases[i].why);
        cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO, "%s", cases[i].why);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}
