/* The collective family of rules (analysis/rules/collectives.c): collective-mismatch, collective-straggler and
 * rank-exited, over hand-built snapshots of a job's ranks (snapshot_builder.h); the real thing, torch.distributed
 * on gloo, is tests/test_collectives.c. */
#include "analysis_checks.h"
#include "collectives.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define C10D "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"
#define TRAIN "/job/train.py"
#define LAUNCHER 10
#define MASTER "10.0.0.1:29500"

/* Rank `rank` of `world` (every rank on this host), process `pid`, a child of the launcher, whose main thread has
 * slept `asleep_s` in a futex wait; in `collective` called from train.py:`line` (NULL: in its own code). */
static struct hd_process *rank_in(struct hd_snapshot *snapshot, pid_t pid, int rank, int world,
                                  const char *collective, int line, double asleep_s)
{
    struct hd_process *process = add_process(snapshot, pid, LAUNCHER, HD_ORIGIN_EXEC, 1);
    struct hd_job *job = calloc(1, sizeof *job);
    cr_assert_not_null(job);
    *job = (struct hd_job){ .role = HD_JOB_RANK, .rank = rank, .world_size = world, .local_rank = rank,
                            .local_world_size = world, .group_rank = -1, .node_id = -1, .rank_variable = "RANK",
                            .rank_pid = pid, .master = strdup(MASTER) };
    process->job = job;
    struct hd_thread *thread = thread_of(snapshot, pid);
    asleep_in_futex(thread, 0x7f0000001000 + (uint64_t)pid * 0x100);
    thread->blocked_for_known = true;
    thread->blocked_for_s = asleep_s;
    if (collective)
        add_python_frame(thread, collective, C10D, 1541, false);
    else
        add_python_frame(thread, "load_batch", "/job/data.py", 12, false);
    add_python_frame(thread, "train_step", TRAIN, line, false);
    add_python_frame(thread, "<module>", TRAIN, 90, true);
    return process;
}

/* A gloo worker thread of the rank's process in its receive from a peer, `timeout_s` left of its wait. */
static void gloo_receive(struct hd_snapshot *snapshot, pid_t pid, pid_t tid, double timeout_s)
{
    struct hd_thread *thread = add_thread(snapshot, pid, tid);
    struct hd_wait *wait = asleep_in_futex(thread, 0x7f0000009000 + (uint64_t)tid * 0x100);
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .absolute = true,
                                         .remaining_ns = (int64_t)(timeout_s * 1e9) };
    add_native_frame(thread, "__futex_abstimed_wait_common");
    add_native_frame(thread, "gloo::transport::tcp::UnboundBuffer::waitRecv(int*, std::chrono::duration<long>)");
    add_native_frame(thread, "c10d::ProcessGroupGloo::runLoop(int)");
}

static struct hd_snapshot *job_with_launcher(void)
{
    struct hd_snapshot *snapshot = new_snapshot(LAUNCHER);
    add_process(snapshot, LAUNCHER, 1, HD_ORIGIN_EXEC, 1);
    in_wait4(thread_of(snapshot, LAUNCHER), 100);
    return snapshot;
}

Test(collectives, ranks_in_different_collectives_name_the_odd_one)
{
    struct hd_snapshot *snapshot = job_with_launcher();
    rank_in(snapshot, 100, 0, 3, "all_reduce", 41, 120);
    rank_in(snapshot, 200, 1, 3, "broadcast", 57, 120);
    rank_in(snapshot, 300, 2, 3, "all_reduce", 41, 120);
    gloo_receive(snapshot, 100, 105, 1680);
    set_stuck_after(snapshot, 60);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "collective-mismatch");
    cr_assert_eq(finding->pid, 200);
    cr_assert_eq(finding->tid, 200);
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert(strstr(finding->summary,
                     "mismatched collectives: ranks 0,2 in all_reduce at train.py:41; rank 1 in broadcast at train.py:57"),
              "%s", finding->summary);
    cr_assert(has_member(analysis, finding, 100) && has_member(analysis, finding, 200) &&
              has_member(analysis, finding, 300));
    cr_assert_eq(count_evidence(finding, "rank"), 3u);
    cr_assert(strstr(evidence_at(finding, "rank", 0), "gloo's thread 105 waits to receive from a peer, its timeout "
                                                      "fires in 1680 s"), "%s", evidence_at(finding, "rank", 0));
    cr_assert(strstr(evidence_of(finding, "timeout"), "gloo's timeout fires in 1680 s (28.0 min), first in rank 0"));
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "collective-mismatch");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* The same collective from two lines is two calls: one rank's all_reduce is not the others'. */
Test(collectives, one_collective_from_two_call_sites_is_a_mismatch)
{
    struct hd_snapshot *snapshot = job_with_launcher();
    rank_in(snapshot, 100, 0, 2, "all_reduce", 41, 120);
    rank_in(snapshot, 200, 1, 2, "all_reduce", 63, 120);
    set_stuck_after(snapshot, 60);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "collective-mismatch");
    cr_assert_eq(finding->pid, 200, "of two calls of one rank each, the one that is not rank 0's");
    cr_assert(strstr(finding->summary, "rank 0 in all_reduce at train.py:41; rank 1 in all_reduce at train.py:63"));
    cr_assert(strstr(evidence_of(finding, "timeout"), "no backend wait with a timeout was seen"));
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(collectives, ranks_in_the_same_call_are_no_mismatch)
{
    struct hd_snapshot *snapshot = job_with_launcher();
    rank_in(snapshot, 100, 0, 2, "all_reduce", 41, 120);
    rank_in(snapshot, 200, 1, 2, "all_reduce", 41, 120);
    set_stuck_after(snapshot, 60);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "collective-mismatch"), 0u);
    cr_assert_eq(count_findings(analysis, "collective-straggler"), 0u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A collective's wait is timed: before --stuck-after (or with the threshold off) a mismatch is no finding yet. */
Test(collectives, a_mismatch_younger_than_the_threshold_is_no_finding)
{
    for (int off = 0; off < 2; off++) {
        struct hd_snapshot *snapshot = job_with_launcher();
        rank_in(snapshot, 100, 0, 2, "all_reduce", 41, 120);
        rank_in(snapshot, 200, 1, 2, "broadcast", 57, off ? 120 : 30);
        set_stuck_after(snapshot, off ? 0 : 60);
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "collective-mismatch"), 0u, "threshold %s", off ? "off" : "not reached");
        cr_assert_not_null(report_process_collective(analysis, process_of(snapshot, 200)),
                           "the collective is still known");
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

Test(collectives, a_rank_in_no_collective_is_the_one_the_others_wait_for)
{
    struct hd_snapshot *snapshot = job_with_launcher();
    rank_in(snapshot, 100, 0, 3, "all_reduce", 41, 120);
    rank_in(snapshot, 200, 1, 3, NULL, 20, 120);
    rank_in(snapshot, 300, 2, 3, "all_reduce", 41, 120);
    set_stuck_after(snapshot, 60);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "collective-straggler");
    cr_assert_eq(finding->tid, 200);
    cr_assert(strstr(finding->summary, "ranks 0,2 wait in all_reduce at train.py:41 for rank 1, which is in no "
                                       "collective"), "%s", finding->summary);
    cr_assert(strstr(evidence_at(finding, "rank", 1), "rank 1 (process 200): in no collective; its main thread is in "
                                                      "load_batch (/job/data.py:12)"));
    cr_assert_eq(count_findings(analysis, "collective-mismatch"), 0u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Rank 3 of 4 is not in the snapshot: it may be the one they wait for, or elsewhere; no straggler is named. */
Test(collectives, no_straggler_while_a_rank_is_not_in_the_snapshot)
{
    struct hd_snapshot *snapshot = job_with_launcher();
    rank_in(snapshot, 100, 0, 4, "all_reduce", 41, 120)->job->local_world_size = 2;
    rank_in(snapshot, 200, 1, 4, NULL, 20, 120)->job->local_world_size = 2;
    rank_in(snapshot, 300, 2, 4, "all_reduce", 41, 120)->job->local_world_size = 2;
    set_stuck_after(snapshot, 60);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "collective-straggler"), 0u);
    cr_assert_eq(count_findings(analysis, "rank-exited"), 0u, "LOCAL_WORLD_SIZE says not every rank runs here");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(collectives, a_rank_gone_from_a_host_that_runs_them_all_has_exited)
{
    struct hd_snapshot *snapshot = job_with_launcher();
    rank_in(snapshot, 100, 0, 3, "all_reduce", 41, 120);
    rank_in(snapshot, 300, 2, 3, "all_reduce", 41, 120);
    struct hd_process *zombie = add_process(snapshot, 200, LAUNCHER, HD_ORIGIN_EXEC, 0);
    zombie->zombie = true;
    zombie->exit_status = 1 << 8;
    set_stuck_after(snapshot, 60);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "rank-exited");
    cr_assert_eq(finding->pid, 200, "the rank's zombie is the subject");
    cr_assert(strstr(finding->summary, "rank 1 of 3 is gone from this host"), "%s", finding->summary);
    cr_assert(strstr(finding->summary, "ranks 0,2 wait in all_reduce at train.py:41"), "%s", finding->summary);
    cr_assert(strstr(evidence_of(finding, "exited"), "process 200, a child of the ranks' launcher 10, exited with "
                                                     "status 1 and was not reaped"), "%s", evidence_of(finding, "exited"));
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "worker-died");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A diagnosis of one rank's pid sees no launcher and no other rank: it says nothing of the ranks it cannot see. */
Test(collectives, one_rank_diagnosed_alone_says_nothing_of_the_others)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    rank_in(snapshot, 100, 0, 3, "all_reduce", 41, 120);
    set_stuck_after(snapshot, 60);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "rank-exited"), 0u);
    cr_assert_eq(count_findings(analysis, "collective-straggler"), 0u);
    cr_assert_eq(count_findings(analysis, "collective-mismatch"), 0u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
