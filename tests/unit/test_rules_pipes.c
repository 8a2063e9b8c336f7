/* The pipes family of rules (analysis/rules/pipes.c): full-pipe, a writer whose readers all wait for it, and
 * wait-cycle, threads that wait on each other through joins, children and pipes; over hand-built snapshots
 * (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <string.h>

/* ---- full pipes and mixed cycles --------------------------------------------------------------------------------- */

/* Parent 2100 waits in wait4 for child 2200 (exec'd, say `python -c` through subprocess), which writes to pipe
 * 4242 whose read end only the parent holds: Popen(stdout=PIPE).wait() with more output than the pipe holds. */
static struct hd_snapshot *parent_waits_for_a_writer(void)
{
    struct hd_snapshot *snapshot = new_snapshot(2100);
    struct hd_process *parent = add_process(snapshot, 2100, 1, HD_ORIGIN_EXEC, 1);
    struct hd_process *child = add_process(snapshot, 2200, 2100, HD_ORIGIN_EXEC, 1);
    add_fd(parent, 3, HD_FD_PIPE, 4242, 0);
    add_fd(child, 1, HD_FD_PIPE, 4242, 1);
    in_wait4(thread_of(snapshot, 2100), 2200);
    writing(thread_of(snapshot, 2200), 1);
    return snapshot;
}

Test(full_pipe, a_writer_whose_only_reader_waits_for_it)
{
    struct hd_snapshot *snapshot = parent_waits_for_a_writer();
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 2200), REPORT_WAKE_NEVER);
    EXPECT_IDS(analysis, "full-pipe");
    const struct report_finding *full = the_finding(analysis, "full-pipe");
    cr_assert_eq(full->tid, 2200);
    cr_assert(strstr(evidence_of(full, "reader"), "thread 2100"), "%s", evidence_of(full, "reader"));
    cr_assert(strstr(evidence_of(full, "cycle"), "waits through a pipe for thread 2100"), "%s",
              evidence_of(full, "cycle"));
    cr_assert_eq(full->nmembers, 2u, "the writer and the parent waiting for it");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.nhangs, 1u, "one cycle, one hang; no waiting-on-workers beside it");
    cr_assert_eq(remedies_containing(full, "communicate()"), 0, "the parent is no Python");
    report_analysis_free(analysis);

    strcpy(snapshot->processes[0].comm, "python3");
    analysis = analyze(snapshot);
    full = the_finding(analysis, "full-pipe");
    cr_assert_eq(remedies_containing(full, "communicate()"), 1);
    cr_assert_eq(remedies_containing(full, "cancel_join_thread"), 0, "not a multiprocessing worker");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(full_pipe, not_while_a_reader_can_run)
{
    struct hd_snapshot *snapshot = parent_waits_for_a_writer();
    polling(thread_of(snapshot, 2100), 3, 100000000);
    ran(snapshot, thread_of(snapshot, 2100), 1000000, 20, 0); /* it reads between polls */
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 2200), REPORT_WAKE_WAKER);
    cr_assert_eq(count_findings(analysis, "full-pipe"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(full_pipe, a_multiprocessing_queue_joined_before_it_is_read)
{
    /* parent 2300 joins (wait4) forked child 2400; the child's feeder thread 2401 writes the queue's pipe, whose
     * read end both hold; the child's main thread 2400 waits for the feeder on a futex in memory the parent does
     * not map (made after fork): a deadlock, not fork's doing */
    struct hd_snapshot *snapshot = new_snapshot(2300);
    struct hd_process *parent = add_process(snapshot, 2300, 1, HD_ORIGIN_EXEC, 1);
    struct hd_process *child = add_process(snapshot, 2400, 2300, HD_ORIGIN_FORKED, 2);
    strcpy(parent->comm, "python3");
    strcpy(child->comm, "python3");
    child->python_role = HD_PYTHON_ROLE_FORK_CHILD;
    add_fd(parent, 5, HD_FD_PIPE, 5151, 0);
    add_fd(parent, 6, HD_FD_PIPE, 5151, 1);
    add_fd(child, 5, HD_FD_PIPE, 5151, 0);
    add_fd(child, 6, HD_FD_PIPE, 5151, 1);
    in_wait4(thread_of(snapshot, 2300), 2400);
    asleep_in_futex(thread_of(snapshot, 2400), 0x7f5a10000b70);
    writing(thread_of(snapshot, 2401), 6);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "full-pipe");
    const struct report_finding *full = the_finding(analysis, "full-pipe");
    cr_assert_eq(full->tid, 2401);
    cr_assert_eq(full->nmembers, 2u, "%zu members", full->nmembers);
    cr_assert_eq(member_tid(analysis, full, 0), 2401);
    cr_assert_eq(member_tid(analysis, full, 1), 2300);
    cr_assert_eq(remedies_containing(full, "cancel_join_thread"), 1);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(wait_cycle, a_join_a_child_wait_and_a_pipe)
{
    /* thread 2500 joins 2501; 2501 waits for child 2600; the child reads a pipe only process 2500 writes */
    struct hd_snapshot *snapshot = new_snapshot(2500);
    struct hd_process *parent = add_process(snapshot, 2500, 1, HD_ORIGIN_EXEC, 2);
    struct hd_process *child = add_process(snapshot, 2600, 2500, HD_ORIGIN_EXEC, 1);
    add_fd(parent, 7, HD_FD_PIPE, 6161, 1);
    add_fd(child, 0, HD_FD_PIPE, 6161, 0);
    joining(thread_of(snapshot, 2500), 0x7f0000003000, 2501, 2500);
    in_wait4(thread_of(snapshot, 2501), 2600);
    reading(thread_of(snapshot, 2600), 0);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "wait-cycle");
    const struct report_finding *cycle = the_finding(analysis, "wait-cycle");
    cr_assert_eq(cycle->nmembers, 3u);
    cr_assert_eq(count_evidence(cycle, "cycle"), 3u);
    cr_assert_str_eq(evidence_at(cycle, "cycle", 0),
                     "thread 2500 'thread2500' of process 2500 (futex wait) waits through the thread it joins for "
                     "thread 2501 'thread2501' of process 2500");
    cr_assert_str_eq(evidence_at(cycle, "cycle", 1),
                     "thread 2501 'thread2501' of process 2500 (wait4) waits through wait4 for thread 2600 "
                     "'thread2600' of process 2600");
    cr_assert_str_eq(evidence_at(cycle, "cycle", 2),
                     "thread 2600 'thread2600' of process 2600 (read) waits through a pipe for thread 2500 "
                     "'thread2500' of process 2500");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Main 2700 joins 2701; 2701 and 2702 sleep on futexes that record no owner (Rust's std Mutex taken in opposite
 * orders). The join closes a cycle only through "any thread of process 2700": the evidence must not call main
 * 2701's waker, only one of the threads asleep forever that could be. */
Test(wait_cycle, through_a_futex_with_no_owner_the_evidence_names_the_possible_wakers)
{
    struct hd_snapshot *snapshot = new_snapshot(2700);
    add_process(snapshot, 2700, 1, HD_ORIGIN_EXEC, 3);
    joining(thread_of(snapshot, 2700), 0x7f0000005000, 2701, 2700);
    asleep_in_futex(thread_of(snapshot, 2701), 0x55d2a0c50a20);
    asleep_in_futex(thread_of(snapshot, 2702), 0x55d2a0c50af0);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "wait-cycle");
    const struct report_finding *cycle = the_finding(analysis, "wait-cycle");
    cr_assert_eq(count_evidence(cycle, "cycle"), 2u);
    cr_assert_str_eq(evidence_at(cycle, "cycle", 0),
                     "thread 2700 'thread2700' of process 2700 (futex wait) waits through the thread it joins for "
                     "thread 2701 'thread2701' of process 2700");
    cr_assert_str_eq(evidence_at(cycle, "cycle", 1),
                     "thread 2701 'thread2701' of process 2700 (futex wait) waits on a futex with no owner recorded: "
                     "only a thread of process 2700 could wake it, and none of its 2 other threads can run, thread "
                     "2700 'thread2700' among them");
    cr_assert_null(strstr(cycle->summary, "wait on each other in a cycle"), "%s", cycle->summary);
    size_t remedies = 0;
    for (size_t r = 0; r < cycle->nremedies; r++)
        remedies += strstr(cycle->remedies[r], "take them in one order everywhere") != NULL;
    cr_assert_eq(remedies, 1u);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A child waits for the file lock (flock) its parent holds, and the parent waits for the child: the lock's holder
 * comes from /proc/locks (probe/filelocks.h), and the edge goes to any thread of the holding process. */
static void waiting_for_file_lock(struct hd_thread *thread, pid_t holder, enum hd_owner_whereabouts whereabouts)
{
    struct hd_wait *wait = asleep_in(thread, "flock", HD_WAIT_LOCK, "flock");
    wait->fd = 4;
    wait->lock = (struct hd_lock){ .kind = HD_LOCK_FILE, .type = "flock", .owner_tid = holder, .owner_pid = holder,
                                   .owner_whereabouts = whereabouts };
}

Test(wait_cycle, a_child_wait_and_a_file_lock)
{
    struct hd_snapshot *snapshot = new_snapshot(2700);
    add_process(snapshot, 2700, 1, HD_ORIGIN_EXEC, 1);
    add_process(snapshot, 2800, 2700, HD_ORIGIN_EXEC, 1);
    in_wait4(thread_of(snapshot, 2700), 2800);
    waiting_for_file_lock(thread_of(snapshot, 2800), 2700, HD_OWNER_OTHER_PROCESS);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 2800), REPORT_WAKE_NEVER);
    EXPECT_IDS(analysis, "wait-cycle");
    const struct report_finding *cycle = the_finding(analysis, "wait-cycle");
    cr_assert_eq(cycle->nmembers, 2u);
    cr_assert_str_eq(evidence_at(cycle, "cycle", 0),
                     "thread 2700 'thread2700' of process 2700 (wait4) waits through wait4 for thread 2800 "
                     "'thread2800' of process 2800");
    cr_assert_str_eq(evidence_at(cycle, "cycle", 1),
                     "thread 2800 'thread2800' of process 2800 (flock) waits through a file lock for thread 2700 "
                     "'thread2700' of process 2700");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(wait_cycle, a_file_lock_held_outside_the_snapshot_is_the_outside_world)
{
    struct hd_snapshot *snapshot = new_snapshot(2700);
    add_process(snapshot, 2700, 1, HD_ORIGIN_EXEC, 1);
    waiting_for_file_lock(thread_of(snapshot, 2700), 4242, HD_OWNER_OUTSIDE);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 2700), REPORT_WAKE_OUTSIDE);
    cr_assert_neq(analysis->verdict.hung, REPORT_HUNG_YES);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- pipe-held-open ---------------------------------------------------------------------------------------------- */

enum held_variant {
    HELD_BY_ORPHAN,         /* the pipe's writer is a background job adopted by init, the reader's child a zombie */
    HELD_CHILD_REAPED,      /* the same, the child reaped already (bash's SIGCHLD handler) */
    HELD_BY_OLDER_PROCESS,  /* the writer is older than the reader: not one it started */
    HELD_BY_SIBLING,        /* the writer's parent is the reader's parent (a pipeline), no child exited */
    HELD_BESIDE_UNDER_INIT, /* the same under a shell that is PID 1 (a container's): init, yet the pipeline's */
    HELD_READ_WITH_TIMEOUT, /* the reader polls with a timeout */
    HELD_READ_LATELY,       /* the reader read 0.5 s ago: fed now and then */
    HELD_SEARCH_INCOMPLETE, /* the search for holders missed processes (another user's, or cut short) */
    HELD_VARIANTS
};

/* Reader 7000 (started 100 s after boot, asleep for 90 s, --stuck-after 60 s) reads pipe 5150 (fd 3); the writer,
 * process 9000 outside the snapshot, as the variant says. */
static struct hd_snapshot *reader_of_a_held_pipe(enum held_variant variant)
{
    struct hd_snapshot *snapshot = new_snapshot(7000);
    set_stuck_after(snapshot, 60);
    bool beside = variant == HELD_BY_SIBLING || variant == HELD_BESIDE_UNDER_INIT;
    struct hd_process *reader = add_process(snapshot, 7000, variant == HELD_BESIDE_UNDER_INIT ? 1 : 6000,
                                            HD_ORIGIN_EXEC, 1);
    reader->start_time_s = 100;
    reader->session = 6000;
    add_fd(reader, 3, HD_FD_PIPE, 5150, 0);
    struct hd_thread *thread = thread_of(snapshot, 7000);
    if (variant == HELD_READ_WITH_TIMEOUT)
        polling(thread, 3, 4000000000);
    else
        reading(thread, 3);
    thread->blocked_for_known = true;
    thread->blocked_for_s = variant == HELD_READ_LATELY ? 0.5 : 90;
    if (variant != HELD_CHILD_REAPED && !beside) {
        struct hd_process *child = add_process(snapshot, 7001, 7000, HD_ORIGIN_EXEC, 1);
        child->state = 'Z';
        child->zombie = true;
        child->start_time_s = 100.1;
        memcpy(child->comm, "sh", 3);
        thread_of(snapshot, 7001)->state = 'Z';
        thread_of(snapshot, 7001)->syscall.state = HD_SYSCALL_NONE;
    }
    snapshot->outside_pipe_holders = calloc(1, sizeof *snapshot->outside_pipe_holders);
    snapshot->noutside_pipe_holders = 1;
    snapshot->outside_pipe_holders_complete = variant != HELD_SEARCH_INCOMPLETE;
    struct hd_pipe_holder *holder = snapshot->outside_pipe_holders;
    *holder = (struct hd_pipe_holder){ .inode = 5150, .pid = 9000, .ppid = 1, .session = 6000, .fd = 1,
                                       .start_time_s = variant == HELD_BY_OLDER_PROCESS ? 50 : 100.2 };
    memcpy(holder->comm, "sleep", 6);
    memcpy(holder->parent_comm, "init", 5);
    if (variant == HELD_BY_SIBLING) {
        holder->ppid = 6000;
        holder->parent_above_tree = true;
    }
    return snapshot;
}

Test(pipe_held_open, a_pipe_read_to_its_end_held_by_an_adopted_background_job)
{
    for (enum held_variant variant = HELD_BY_ORPHAN; variant <= HELD_CHILD_REAPED; variant++) {
        struct hd_snapshot *snapshot = reader_of_a_held_pipe(variant);
        struct report_analysis *analysis = analyze(snapshot);
        const struct report_finding *finding = the_finding(analysis, "pipe-held-open");
        cr_assert_eq(finding->tid, 7000);
        cr_assert_eq(finding->confidence, REPORT_LIKELY);
        if (variant == HELD_BY_ORPHAN)
            cr_assert_str_eq(evidence_of(finding, "exited_child"),
                             "process 7001 'sh' exited and is not reaped yet: its parent reads to the end of its "
                             "output first");
        else
            cr_assert_null(evidence_of(finding, "exited_child"), "%s", evidence_of(finding, "exited_child"));
        cr_assert_eq(count_evidence(finding, "holder"), 1u);
        cr_assert_str_eq(evidence_of(finding, "holder"),
                         "process 9000 'sleep' holds the write end of pipe 5150 (fd 3 of process 7000) as its fd 1; "
                         "started 0.2 s after process 7000, its parent is now process 1 'init' (its own parent "
                         "exited), in the session of process 7000");
        cr_assert_str_eq(root_cause_id(analysis), "pipe-held-open");
        cr_assert_eq(analysis->verdict.cause, REPORT_CAUSE_PIPE_HELD_OPEN);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

Test(pipe_held_open, not_for_an_older_holder_a_pipelines_producer_a_recent_read_or_a_search_that_missed_some)
{
    for (enum held_variant variant = HELD_BY_OLDER_PROCESS; variant < HELD_VARIANTS; variant++) {
        struct hd_snapshot *snapshot = reader_of_a_held_pipe(variant);
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "pipe-held-open"), 0, "variant %d", variant);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}
