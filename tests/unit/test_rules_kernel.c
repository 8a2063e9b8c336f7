/* The kernel family of rules (analysis/rules/kernel.c): uninterruptible, a thread in D in every sample, and stopped,
 * a process held by a signal or a tracer; over hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- uninterruptible and stopped --------------------------------------------------------------------------------- */

Test(uninterruptible, d_in_every_sample_is_named_from_the_kernel_stack)
{
    struct hd_snapshot *snapshot = new_snapshot(1400);
    add_process(snapshot, 1400, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *thread = thread_of(snapshot, 1400);
    thread->state = 'D';
    thread->syscall.state = HD_SYSCALL_IN;
    thread->syscall.name = "read";
    snprintf(thread->wchan, sizeof thread->wchan, "rpc_wait_bit_killable");
    thread->kernel_stack = strdup("[<0>] rpc_wait_bit_killable+0x1e/0xa0\n[<0>] nfs4_do_open+0x1/0x2\n");
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "uninterruptible");
    cr_assert_eq(finding->tid, 1400);
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert(strstr(finding->summary, "in NFS"), "%s", finding->summary);
    cr_assert_str_eq(evidence_of(finding, "wchan"), "rpc_wait_bit_killable");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "kernel");
    cr_assert_str_eq(root_cause_id(analysis), "uninterruptible");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(uninterruptible, d_in_one_sample_only_is_not_reported)
{
    struct hd_snapshot *snapshot = new_snapshot(1410);
    add_process(snapshot, 1410, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *thread = thread_of(snapshot, 1410);
    thread->state = 'D';
    thread->syscall.state = HD_SYSCALL_IN;
    earlier_samples(snapshot, thread)[0].state = 'S'; /* D in 1 of 2: it was out of D before */
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "uninterruptible"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(stopped, by_a_tracer_and_by_a_signal)
{
    struct hd_snapshot *snapshot = new_snapshot(1500);
    struct hd_process *traced = add_process(snapshot, 1500, 1, HD_ORIGIN_EXEC, 2);
    traced->tracer_pid = 777;
    traced->threads[0].state = 't';
    traced->threads[1].state = 't';
    struct hd_process *stopped = add_process(snapshot, 1600, 1500, HD_ORIGIN_EXEC, 1);
    stopped->threads[0].state = 'T';
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "stopped"), 2, "one per process");
    const struct report_finding *first = first_finding(analysis, "stopped");
    cr_assert_not_null(first);
    cr_assert_eq(first->pid, 1500);
    cr_assert_str_eq(evidence_of(first, "state"), "t", "a tracing stop");
    cr_assert_str_eq(evidence_of(first, "tracer_pid"), "777");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "stopped");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
