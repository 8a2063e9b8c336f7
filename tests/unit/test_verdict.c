/* The verdict (analysis/verdict.c): hung or not, the cause, one hang per distinct root cause and the chain down to
 * it; waits by design (a signal), knots no rule names, waits that could not be read. Over hand-built snapshots
 * (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <signal.h>

/* ---- waits by design and knots no rule names --------------------------------------------------------------------- */

Test(signal, pause_alone_is_no_hang)
{
    struct hd_snapshot *snapshot = new_snapshot(900);
    add_process(snapshot, 900, 1, HD_ORIGIN_EXEC, 1);
    in_pause(thread_of(snapshot, 900));
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 900), REPORT_WAKE_NEVER);
    cr_assert_eq(analysis->nfindings, 0u);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO, "waiting for a signal is by design");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "none");
    cr_assert_eq(analysis->verdict.root_cause, -1);
    cr_assert(analysis->asleep_forever_exists);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(signal, lone_futex_sleeper_is_named_by_no_waker)
{
    /* a lone thread on a semaphore nobody can post, in a process that was not forked: nobody can ever wake it */
    struct hd_snapshot *snapshot = new_snapshot(910);
    add_process(snapshot, 910, 1, HD_ORIGIN_EXEC, 1);
    asleep_in_futex(thread_of(snapshot, 910), 0x7f0000000040);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 910), REPORT_WAKE_NEVER);
    EXPECT_IDS(analysis, "no-waker");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "no-waker");
    cr_assert_eq(analysis->verdict.tid, 910);
    assert_chain(analysis, (const pid_t[]){ 910 }, 1);
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Thread 921 waits for a mutex of thread 920, which waits for a signal nothing will send: a knot, but no rule of
 * the catalogue says why (pause() is a wait by design, the mutex's owner is alive). */
static void waiting_on_a_pausing_owner(struct hd_snapshot *snapshot, pid_t pid)
{
    add_process(snapshot, pid, 1, HD_ORIGIN_EXEC, 2);
    in_pause(thread_of(snapshot, pid));
    waiting_on_mutex(thread_of(snapshot, pid + 1), LOCK_ADDRESS, pid, pid, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
}

Test(signal, a_knot_no_rule_names_is_an_unexplained_deadlock)
{
    struct hd_snapshot *snapshot = new_snapshot(920);
    waiting_on_a_pausing_owner(snapshot, 920);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 921), REPORT_WAKE_NEVER);
    cr_assert_eq(analysis->nfindings, 0u);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES, "nobody can ever wake thread 921");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.root_cause, -1, "no root-cause finding");
    cr_assert_eq(analysis->verdict.tid, 921);
    assert_chain(analysis, (const pid_t[]){ 920 }, 1);
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- several hangs ----------------------------------------------------------------------------------------------- */

Test(hangs, one_inherited_lock_in_several_workers_is_one_hang)
{
    /* parent 100 (waits for 200, thread 101 holds the lock) and two workers forked while it was held */
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    add_process(snapshot, 300, 100, HD_ORIGIN_FORKED, 1);
    waiting_on_mutex(thread_of(snapshot, 300), LOCK_ADDRESS, 101, 100, HD_OWNER_OTHER_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "inherited-lock"), 2);
    cr_assert_eq(analysis->verdict.nhangs, 1u, "the same lock at the same address: one root cause");
    cr_assert_eq(analysis->verdict.hangs[0].nfindings, 2u);
    cr_assert_str_eq(report_cause_name(analysis->verdict.hangs[0].cause), "fork-inheritance");
    cr_assert_eq(analysis->verdict.tid, 200);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(hangs, independent_hangs_are_reported_each_with_its_root_cause)
{
    /* the inherited lock under 100, and beside it a second tree: 1000 polling for its dead worker 1100 */
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    move_processes(snapshot, parent_polling_a_dead_worker(SIGKILL));
    /* and a third: a knot no rule names */
    add_root(snapshot, 1300);
    waiting_on_a_pausing_owner(snapshot, 1300);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_verdict *verdict = &analysis->verdict;
    cr_assert_eq(verdict->nhangs, 3u);
    cr_assert_str_eq(report_cause_name(verdict->hangs[0].cause), "fork-inheritance");
    cr_assert_eq(verdict->hangs[0].tid, 200);
    cr_assert_str_eq(analysis->findings[verdict->hangs[0].finding].id, "inherited-lock");
    cr_assert_str_eq(report_cause_name(verdict->hangs[1].cause), "worker-died");
    cr_assert_eq(verdict->hangs[1].pid, 1100);
    cr_assert_eq(verdict->hangs[1].nchain, 2u);
    cr_assert_eq(verdict->hangs[1].chain[0], 1000);
    cr_assert_str_eq(report_cause_name(verdict->hangs[2].cause), "deadlock");
    cr_assert_eq(verdict->hangs[2].finding, -1);
    cr_assert_eq(verdict->hangs[2].tid, 1301);
    cr_assert_str_eq(report_cause_name(verdict->cause), "fork-inheritance", "the first hang is the verdict's");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(verdict, waits_that_could_not_be_read_give_could_not_tell)
{
    struct hd_snapshot *snapshot = new_snapshot(1400);
    add_process(snapshot, 1400, 1, HD_ORIGIN_EXEC, 1);
    struct hd_thread *thread = thread_of(snapshot, 1400);
    thread->state = 'S';
    thread->syscall.state = HD_SYSCALL_UNREAD;
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_UNKNOWN);
    cr_assert_eq(analysis->verdict.unread_waits, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
