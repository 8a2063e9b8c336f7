/* The idle family of rules (analysis/rules/idle.c): idle, a healthy wait that a thread which can run may end; over
 * hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>

/* ---- idle -------------------------------------------------------------------------------------------------------- */

Test(idle, worker_on_a_futex_another_thread_can_signal)
{
    struct hd_snapshot *snapshot = new_snapshot(600);
    add_process(snapshot, 600, 1, HD_ORIGIN_EXEC, 2);
    in_nanosleep(thread_of(snapshot, 600));
    asleep_in_futex(thread_of(snapshot, 601), 0x7f0000000040);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 600), REPORT_WAKE_TIMER);
    cr_assert_eq(wake_of(analysis, 601), REPORT_WAKE_WAKER);
    cr_assert(has_edge(analysis, 601, 600, REPORT_EDGE_FUTEX));
    cr_assert(analysis->graph.nodes[report_graph_find(&analysis->graph, 601)].blocked_without_timeout);
    cr_assert_not(analysis->graph.nodes[report_graph_find(&analysis->graph, 600)].blocked_without_timeout);

    EXPECT_IDS(analysis, "idle");
    const struct report_finding *idle = the_finding(analysis, "idle");
    cr_assert_eq(idle->pid, 600);
    cr_assert_eq(idle->tid, 601);
    cr_assert_not(idle->hang);
    cr_assert_eq(idle->confidence, REPORT_INFORMATIONAL);
    cr_assert_eq(idle->nmembers, 1u);
    cr_assert_eq(member_tid(analysis, idle, 0), 600);

    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO, "no hang: hangdoc exits EXIT_NO_HANG");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "none");
    cr_assert_eq(analysis->verdict.root_cause, -1);
    cr_assert_eq(analysis->verdict.nchain, 0u);
    cr_assert_not(analysis->asleep_forever_exists);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(join, joiner_of_a_running_thread_can_be_woken)
{
    struct hd_snapshot *snapshot = new_snapshot(1100);
    add_process(snapshot, 1100, 1, HD_ORIGIN_EXEC, 2);
    struct hd_wait *wait = joining(thread_of(snapshot, 1100), 0x7f0000001000, 1101, 1100);
    wait->futex_private = false;
    wait->expected = 1101;
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 1100, 1101, REPORT_EDGE_JOIN));
    cr_assert_eq(analysis->graph.nedges, 1u);
    cr_assert_eq(wake_of(analysis, 1100), REPORT_WAKE_WAKER);
    EXPECT_IDS(analysis, "idle");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
