/* The fork family of rules (analysis/rules/fork.c): orphaned-wait, a forked child asleep where only its parent's
 * threads could have woken it, over hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <string.h>

/* ---- orphaned waits ---------------------------------------------------------------------------------------------- */

#define POOL_ADDRESS 0x7f3a2c000a40ull

/* Parent 400 (thread 400 in wait4 on 500, thread 401 asleep on a private futex) and child 500 asleep at the same
 * address: a thread pool's condition variable copied by fork(). */
static struct hd_snapshot *pool_copied_by_fork(enum hd_origin child_origin)
{
    struct hd_snapshot *snapshot = new_snapshot(400);
    add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 2);
    add_process(snapshot, 500, 400, child_origin, 1);
    in_wait4(thread_of(snapshot, 400), 500);
    asleep_in_futex(thread_of(snapshot, 401), POOL_ADDRESS);
    asleep_in_futex(thread_of(snapshot, 500), POOL_ADDRESS);
    return snapshot;
}

Test(orphaned_wait, forked_child_waits_where_the_parents_pool_waits)
{
    struct hd_snapshot *snapshot = pool_copied_by_fork(HD_ORIGIN_FORKED);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 500), REPORT_WAKE_NEVER);
    cr_assert(has_edge(analysis, 401, 400, REPORT_EDGE_FUTEX));
    cr_assert_not(has_edge(analysis, 500, 401, REPORT_EDGE_FUTEX), "a private futex: another process's threads");

    EXPECT_IDS(analysis, "orphaned-wait,waiting-on-workers");
    const struct report_finding *orphaned = the_finding(analysis, "orphaned-wait");
    cr_assert_eq(orphaned->pid, 500);
    cr_assert_eq(orphaned->tid, 500);
    cr_assert_eq(orphaned->confidence, REPORT_CERTAIN);
    const char *parent_waiter = evidence_of(orphaned, "parent_waiter");
    cr_assert_not_null(parent_waiter);
    cr_assert(strstr(parent_waiter, "thread 401"), "%s", parent_waiter);
    cr_assert(strstr(parent_waiter, "same address"), "%s", parent_waiter);
    cr_assert_str_eq(evidence_of(orphaned, "address"), "0x7f3a2c000a40");

    const struct report_finding *workers = the_finding(analysis, "waiting-on-workers");
    cr_assert_eq(workers->tid, 400);
    cr_assert_eq(workers->nmembers, 1u);
    cr_assert_eq(member_tid(analysis, workers, 0), 500);

    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "fork-inheritance");
    cr_assert_str_eq(root_cause_id(analysis), "orphaned-wait");
    cr_assert_eq(analysis->verdict.pid, 500);
    assert_chain(analysis, (const pid_t[]){ 400, 500 }, 2);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(orphaned_wait, not_for_a_child_that_exec_d)
{
    struct hd_snapshot *snapshot = pool_copied_by_fork(HD_ORIGIN_EXEC);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "orphaned-wait"), 0);
    EXPECT_IDS(analysis, "waiting-on-workers,no-waker");
    /* the exec'd child's thread is still asleep forever, with nothing of its own to wake it: a deadlock of the
     * child's, not an inheritance */
    const struct report_finding *knot = the_finding(analysis, "no-waker");
    cr_assert_eq(knot->pid, 500);
    cr_assert_eq(knot->tid, 500);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "no-waker");
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(orphaned_wait, a_lone_child_thread_on_memory_it_got_at_fork)
{
    struct hd_snapshot *snapshot = new_snapshot(400);
    struct hd_process *parent = add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 1);
    add_process(snapshot, 500, 400, HD_ORIGIN_FORKED, 1);
    in_wait4(thread_of(snapshot, 400), 500);
    asleep_in_futex(thread_of(snapshot, 500), POOL_ADDRESS);
    add_futex_memory(parent, POOL_ADDRESS);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *orphaned = the_finding(analysis, "orphaned-wait");
    cr_assert_null(evidence_of(orphaned, "parent_waiter"));
    cr_assert(strstr(evidence_of(orphaned, "fork_evidence"), "memory the parent maps"));
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "fork-inheritance");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(orphaned_wait, not_when_the_word_lies_in_memory_the_parent_lacks)
{
    /* a malloc arena the child made after fork(): nothing came through fork, it is the child's own deadlock */
    struct hd_snapshot *snapshot = new_snapshot(400);
    add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 1);
    add_process(snapshot, 500, 400, HD_ORIGIN_FORKED, 1);
    in_wait4(thread_of(snapshot, 400), 500);
    asleep_in_futex(thread_of(snapshot, 500), POOL_ADDRESS);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "orphaned-wait"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(orphaned_wait, not_when_the_child_has_threads_of_its_own_that_could_wake_it)
{
    /* every thread of the child asleep forever, on memory it got at fork; but the child's second thread, started
     * after fork() as every other thread of a forked child is, is the one that would wake the first: an ordinary
     * deadlock, whatever the child's origin */
    struct hd_snapshot *snapshot = new_snapshot(400);
    struct hd_process *parent = add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 1);
    add_process(snapshot, 500, 400, HD_ORIGIN_FORKED, 2);
    in_wait4(thread_of(snapshot, 400), 500);
    asleep_in_futex(thread_of(snapshot, 500), POOL_ADDRESS);
    asleep_in_futex(thread_of(snapshot, 501), POOL_ADDRESS + 0x40);
    add_futex_memory(parent, POOL_ADDRESS);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "orphaned-wait"), 0);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
