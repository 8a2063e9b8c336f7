/* The busy family of rules (analysis/rules/busy.c): spinning, a thread that runs in one function in every sample;
 * over hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* ---- spinning ---------------------------------------------------------------------------------------------------- */

/* Thread 1200 running in all of 3 samples over 2 s, using `cpu_s` of CPU, stopped in the last `leaf_samples` of
 * them: in `function` each time when `leaf_same`, else in a different function each time. */
static struct hd_snapshot *spinner(double cpu_s, unsigned leaf_samples, bool leaf_same, const char *function)
{
    static const char *const moving_on[] = { "compute_a", "compute_b", "compute_c" };
    struct hd_snapshot *snapshot = new_snapshot(1200);
    snapshot->samples = 3;
    snapshot->sampling_s = 2.0;
    add_process(snapshot, 1200, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *thread = thread_of(snapshot, 1200);
    struct hd_thread_sample *earlier = earlier_samples(snapshot, thread); /* R, as the thread */
    cr_assert_leq(leaf_samples, 3u);
    for (unsigned s = 3 - leaf_samples; s < 3; s++) {
        const char *name = leaf_same ? function : moving_on[s];
        char **leaf = s < 2 ? &earlier[s].leaf_function : &thread->leaf_function;
        *leaf = name ? strdup(name) : NULL;
    }
    ran(snapshot, thread, (uint64_t)(cpu_s * 1e9), leaf_samples, 0); /* each of hangdoc's stops is one switch */
    return snapshot;
}

Test(spinning, same_function_whole_cpu_every_sample)
{
    struct hd_snapshot *snapshot = spinner(1.96, 3, true, "spin_until_ready");
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "spinning");
    const struct report_finding *spinning = the_finding(analysis, "spinning");
    cr_assert_eq(spinning->tid, 1200);
    cr_assert_eq(spinning->confidence, REPORT_LIKELY, "a long computation looks the same: never certain");
    cr_assert_str_eq(evidence_of(spinning, "function"), "spin_until_ready");
    cr_assert_str_eq(evidence_of(spinning, "cpu_share"), "98%");
    cr_assert_str_eq(evidence_of(spinning, "samples"), "R in 3 of 3; the same function in 3");
    cr_assert(strstr(spinning->summary, "or one long computation"), "%s", spinning->summary);
    cr_assert_str_eq(evidence_of(spinning, "cpu_s"), "1.960 of 2.000 s it was not held stopped");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "busy-loop");
    cr_assert_str_eq(root_cause_id(analysis), "spinning");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(spinning, not_when_the_function_changes_or_is_unknown)
{
    const struct {
        double cpu_s;
        unsigned leaf_samples;
        bool leaf_same;
        const char *function;
        const char *why;
    } cases[] = {
        { 1.96, 3, false, NULL, "different functions: a computation moving on" },
        { 1.96, 0, false, NULL, "no stacks (--no-ptrace, or another user)" },
        { 1.96, 1, true, "f", "one stack proves nothing about staying" },
        { 0.10, 3, true, "f", "5 % of a CPU: it hardly ran" },
        { 1.96, 3, true, "__libc_fork", "it blocked in the kernel hundreds of times: fork and wait in a loop" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hd_snapshot *snapshot =
            spinner(cases[i].cpu_s, cases[i].leaf_samples, cases[i].leaf_same, cases[i].function);
        if (cases[i].function && strcmp(cases[i].function, "__libc_fork") == 0)
            snapshot->processes[0].threads[0].voluntary_switches += 600;
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "spinning"), 0, "%s", cases[i].why);
        cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO, "%s", cases[i].why);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

Test(spinning, time_held_stopped_by_hangdoc_does_not_count)
{
    /* 0.3 s of CPU in 2 s is 15 %; but the process was held stopped for 0.5 s of them: 20 % of 1.5 s */
    struct hd_snapshot *snapshot = spinner(0.3, 3, true, "f");
    snapshot->processes[0].stopped_for_s = 0.5;
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *spinning = the_finding(analysis, "spinning");
    cr_assert_str_eq(evidence_of(spinning, "cpu_share"), "20%");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(spinning, not_when_it_slept_in_one_sample)
{
    struct hd_snapshot *snapshot = spinner(1.96, 3, true, "f");
    earlier_samples(snapshot, thread_of(snapshot, 1200))[0].state = 'S';
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "spinning"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A loop around sched_yield on a loaded machine: 3 ms of CPU in 2 s, but it gave the CPU away 265 times (11 us a
 * turn). It spins; the load only leaves it little CPU. */
Test(spinning, a_yield_loop_that_other_work_leaves_little_cpu)
{
    struct hd_snapshot *snapshot = spinner(0.003, 3, true, "__sched_yield");
    struct hd_thread *thread = thread_of(snapshot, 1200);
    thread->involuntary_switches += 265;
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *spinning = the_finding(analysis, "spinning");
    cr_assert_eq(spinning->tid, 1200);
    cr_assert_str_eq(evidence_of(spinning, "cpu_share"), "0%");
    cr_assert(strstr(evidence_of(spinning, "yields"), "gave the CPU away 265 times, after 11 us"), "%s",
              evidence_of(spinning, "yields"));
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Stopped in the yield call itself in every sample, it is a yield loop even when its turns cost more (a real run
 * under load: 80 ms of CPU in 236 turns, 339 us each, 4 % of a CPU); in another function, the same figures are not. */
Test(spinning, stopped_in_sched_yield_every_time_after_many_turns)
{
    const struct {
        const char *function;
        size_t findings;
    } cases[] = { { "__sched_yield", 1 }, { "__GI___sched_yield", 1 }, { "thrd_yield", 1 }, { "compute", 0 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hd_snapshot *snapshot = spinner(0.080, 3, true, cases[i].function);
        struct hd_thread *thread = thread_of(snapshot, 1200);
        thread->involuntary_switches += 236;
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "spinning"), cases[i].findings, "%s", cases[i].function);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

/* A yield call among the innermost frames counts as well as the leaf: a loop around the generic syscall() wrapper
 * called from thrd_yield. */
Test(spinning, a_yield_call_under_the_leaf_counts)
{
    struct hd_snapshot *snapshot = spinner(0.080, 3, true, "syscall");
    struct hd_thread *thread = thread_of(snapshot, 1200);
    thread->involuntary_switches += 236;
    add_native_frame(thread, "syscall");
    add_native_frame(thread, "thrd_yield");
    add_native_frame(thread, "wait_for_team");
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "spinning"), 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* The same little CPU without a yield call is a thread the load starves (preempted at the scheduler's slices, by
 * every wakeup, or not run at all): it hardly ran, and sampling cannot call that a spin. */
Test(spinning, not_a_starved_thread_preempted_at_the_schedulers_slices)
{
    const struct {
        double cpu_s;
        uint64_t involuntary;
        const char *why;
    } cases[] = {
        { 0.003, 2, "two preemptions: starved, not yielding" },
        { 0.060, 30, "2 ms a turn: the scheduler's slices" },
        { 0.0001, 19, "under 20 turns proves no loop" },
        { 0.002, 300, "a nice-19 computation preempted by every wakeup: many short turns, but no yield call" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hd_snapshot *snapshot = spinner(cases[i].cpu_s, 3, true, "compute");
        struct hd_thread *thread = thread_of(snapshot, 1200);
        thread->involuntary_switches += cases[i].involuntary;
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "spinning"), 0, "%s", cases[i].why);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}
