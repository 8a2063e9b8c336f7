/* The busy family of rules (report/rules/busy.c): spinning, a thread that runs in one function in every sample;
 * over hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* ---- spinning ---------------------------------------------------------------------------------------------------- */

/* Thread 1200 running in all of 3 samples over 2 s, using `cpu_s` of CPU, stopped `leaf_samples` times in
 * `function` (leaf_same as given). */
static struct hd_snapshot *spinner(double cpu_s, unsigned leaf_samples, bool leaf_same, const char *function)
{
    struct hd_snapshot *snapshot = new_snapshot(1200);
    snapshot->samples = 3;
    snapshot->sampling_s = 2.0;
    add_process(snapshot, 1200, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *thread = thread_of(snapshot, 1200);
    thread->samples_seen = 3;
    thread->samples_in_state_r = 3;
    thread->progressing = true;
    thread->cpu_delta_ns = (uint64_t)(cpu_s * 1e9);
    thread->leaf_samples = leaf_samples;
    thread->leaf_same = leaf_same;
    thread->leaf_function = function ? strdup(function) : NULL;
    thread->voluntary_switches_delta = leaf_samples; /* each of hangdoc's stops is one */
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
            snapshot->processes[0].threads[0].voluntary_switches_delta = 600;
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
    thread_of(snapshot, 1200)->samples_in_state_r = 2;
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "spinning"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
