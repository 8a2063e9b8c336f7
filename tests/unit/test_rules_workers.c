/* The workers family of rules (analysis/rules/workers.c): waiting-on-workers, a thread that waits through a pipe or
 * socket on processes asleep forever, and worker-died, a worker that ended while its parent waits for what it
 * would send; over hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

/* ---- waiting on workers through pipes and sockets ---------------------------------------------------------------- */

/* Parent 700 reads fd 4, the read end of pipe 9999; child 800 (exec'd) holds the write end as fd 5. */
static struct hd_snapshot *parent_reading_a_worker(void)
{
    struct hd_snapshot *snapshot = new_snapshot(700);
    struct hd_process *parent = add_process(snapshot, 700, 1, HD_ORIGIN_EXEC, 1);
    struct hd_process *child = add_process(snapshot, 800, 700, HD_ORIGIN_EXEC, 1);
    add_fd(parent, 4, HD_FD_PIPE, 9999, 0);
    add_fd(child, 5, HD_FD_PIPE, 9999, 1);
    reading(thread_of(snapshot, 700), 4);
    return snapshot;
}

Test(pipe, parent_reads_from_a_worker_asleep_forever)
{
    struct hd_snapshot *snapshot = parent_reading_a_worker();
    asleep_in_futex(thread_of(snapshot, 800), 0x7f0000000040);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 700, 800, REPORT_EDGE_PIPE));
    cr_assert_eq(analysis->graph.nedges, 1u);
    cr_assert_eq(wake_of(analysis, 800), REPORT_WAKE_NEVER);
    cr_assert_eq(wake_of(analysis, 700), REPORT_WAKE_NEVER);

    EXPECT_IDS(analysis, "waiting-on-workers,no-waker");
    const struct report_finding *workers = the_finding(analysis, "waiting-on-workers");
    cr_assert_eq(workers->pid, 700);
    cr_assert_eq(workers->tid, 700);
    cr_assert_eq(workers->nmembers, 1u);
    cr_assert_eq(member_tid(analysis, workers, 0), 800);
    cr_assert_str_eq(evidence_of(workers, "workers"), "800");
    cr_assert_str_eq(evidence_of(workers, "timed_loop"), "no");

    /* the root is the worker's knot, nothing left in the worker to wake it, reached through the parent */
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "no-waker");
    cr_assert_eq(analysis->verdict.pid, 800);
    cr_assert_eq(analysis->verdict.tid, 800);
    assert_chain(analysis, (const pid_t[]){ 700, 800 }, 2);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(pipe, parent_reads_from_a_worker_that_sleeps_with_a_timeout)
{
    struct hd_snapshot *snapshot = parent_reading_a_worker();
    in_nanosleep(thread_of(snapshot, 800));
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 800), REPORT_WAKE_TIMER);
    cr_assert_eq(wake_of(analysis, 700), REPORT_WAKE_WAKER);
    EXPECT_IDS(analysis, "idle");
    const struct report_finding *idle = the_finding(analysis, "idle");
    cr_assert_eq(idle->tid, 700);
    cr_assert_eq(member_tid(analysis, idle, 0), 800);
    cr_assert(strstr(idle->summary, "a pipe"), "%s", idle->summary);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "none");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(pipe, reader_of_a_pipe_only_other_readers_hold_waits_on_the_outside)
{
    struct hd_snapshot *snapshot = parent_reading_a_worker();
    snapshot->processes[1].fds[0].access_mode = 0; /* the child holds a read end too: the writer is elsewhere */
    asleep_in_futex(thread_of(snapshot, 800), 0x7f0000000040);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(analysis->graph.nedges, 0u);
    cr_assert_eq(wake_of(analysis, 700), REPORT_WAKE_OUTSIDE);
    cr_assert_eq(count_findings(analysis, "waiting-on-workers"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES, "800 alone is asleep forever, with no finding");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.tid, 800);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(pipe, timed_poll_loop_on_a_worker_asleep_forever)
{
    struct hd_snapshot *snapshot = parent_reading_a_worker();
    polling(thread_of(snapshot, 700), 4, 1000000000);
    asleep_in_futex(thread_of(snapshot, 800), 0x7f0000000040);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 700), REPORT_WAKE_TIMER);
    cr_assert(has_edge(analysis, 700, 800, REPORT_EDGE_PIPE), "edges are kept for timed waits");
    const struct report_finding *workers = the_finding(analysis, "waiting-on-workers");
    cr_assert_eq(workers->tid, 700);
    cr_assert(strncmp(evidence_of(workers, "timed_loop"), "yes", 3) == 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(socket, reader_of_a_socketpair_whose_peer_is_asleep_forever)
{
    struct hd_snapshot *snapshot = new_snapshot(700);
    struct hd_process *parent = add_process(snapshot, 700, 1, HD_ORIGIN_EXEC, 1);
    struct hd_process *child = add_process(snapshot, 800, 700, HD_ORIGIN_EXEC, 1);
    add_fd(parent, 3, HD_FD_SOCKET, 5001, 2);
    add_fd(child, 3, HD_FD_SOCKET, 5002, 2);
    add_socket_pair(snapshot, 5001, 5002);
    reading(thread_of(snapshot, 700), 3);
    asleep_in_futex(thread_of(snapshot, 800), 0x7f0000000040);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 700, 800, REPORT_EDGE_SOCKET));
    const struct report_finding *workers = the_finding(analysis, "waiting-on-workers");
    cr_assert_eq(workers->tid, 700);
    cr_assert_str_eq(evidence_of(workers, "workers"), "800");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- worker-died --------------------------------------------------------------------------------------------- */

Test(worker_died, zombie_killed_by_sigkill_while_the_parent_polls)
{
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 1000), REPORT_WAKE_TIMER);
    EXPECT_IDS(analysis, "worker-died");
    const struct report_finding *died = the_finding(analysis, "worker-died");
    cr_assert_eq(died->pid, 1100);
    cr_assert_eq(died->tid, 1100);
    cr_assert_eq(died->confidence, REPORT_LIKELY, "a timed loop could be a parent that reaps lazily");
    cr_assert_str_eq(evidence_of(died, "exit"), "killed by SIGKILL (9)");
    cr_assert_str_eq(evidence_of(died, "wait_status"), "0x9");
    cr_assert(strstr(evidence_of(died, "waiter"), "thread 1000 'thread1000' of process 1000: poll"),
              "%s", evidence_of(died, "waiter"));
    cr_assert(has_member(analysis, died, 1000));
    cr_assert(strstr(died->remedies[0], "OOM killer"), "%s", died->remedies[0]);
    cr_assert_eq(died->nremedies, 2u, "the SIGKILL remedy and the parent's");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "worker-died");
    cr_assert_str_eq(root_cause_id(analysis), "worker-died");
    assert_chain(analysis, (const pid_t[]){ 1000, 1100 }, 2);
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(worker_died, a_parent_reading_forever_is_part_of_the_same_hang)
{
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
    reading(thread_of(snapshot, 1000), 3); /* no timeout: asleep forever, as the pipe's writer is itself */
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 1000), REPORT_WAKE_NEVER);
    EXPECT_IDS(analysis, "worker-died");
    cr_assert_eq(the_finding(analysis, "worker-died")->confidence, REPORT_CERTAIN, "nothing in the parent looks");
    cr_assert_eq(analysis->verdict.nhangs, 1u, "not a second, unexplained deadlock in the parent");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(worker_died, exit_status_and_core_dump_are_decoded)
{
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(3 << 8);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *died = the_finding(analysis, "worker-died");
    cr_assert_str_eq(evidence_of(died, "exit"), "exited with status 3");
    cr_assert(strstr(died->remedies[0], "stderr"), "%s", died->remedies[0]);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
    snapshot = parent_polling_a_dead_worker(SIGSEGV | 0x80);
    analysis = analyze(snapshot);
    died = the_finding(analysis, "worker-died");
    cr_assert_str_eq(evidence_of(died, "exit"), "killed by SIGSEGV (11), core dumped");
    cr_assert(strstr(died->remedies[0], "core dump"), "%s", died->remedies[0]);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(worker_died, not_while_the_parent_makes_progress_or_waits_for_a_signal)
{
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
    ran(snapshot, thread_of(snapshot, 1000), 4000000, 30, 0); /* its poll returns and it goes on: it will reap */
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    snapshot = parent_polling_a_dead_worker(SIGKILL);
    in_pause(thread_of(snapshot, 1000)); /* a zombie whose parent only pauses: untidy, not a hang */
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(worker_died, not_for_a_zombie_some_sample_saw_alive_while_the_parent_polls_in_a_loop)
{
    /* it died between two samples: a parent that reaps between two timeouts has not had its turn yet */
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
    earlier_zombie(snapshot, &snapshot->processes[1], false);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    /* one sample shows no loop at all: a timed wait is no evidence then */
    snapshot = parent_polling_a_dead_worker(SIGKILL);
    snapshot->samples = 1;
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(worker_died, not_while_another_thread_of_the_parent_makes_progress_or_reaps)
{
    for (int reaps = 0; reaps < 2; reaps++) {
        struct hd_snapshot *snapshot = new_snapshot(1000);
        struct hd_process *parent = add_process(snapshot, 1000, 1, HD_ORIGIN_EXEC, 2);
        struct hd_process *worker = add_process(snapshot, 1100, 1000, HD_ORIGIN_FORKED, 1);
        add_fd(parent, 3, HD_FD_PIPE, 4242, 0);
        add_fd(parent, 4, HD_FD_PIPE, 4242, 1);
        polling(thread_of(snapshot, 1000), 3, 4000000000);
        if (reaps)
            in_wait4(thread_of(snapshot, 1001), 1200); /* reaps another child first: this zombie waits its turn */
        else
            ran(snapshot, thread_of(snapshot, 1001), 50000000, 3, 1);
        worker->state = 'Z';
        worker->zombie = true;
        worker->exit_status = 0;
        thread_of(snapshot, 1100)->state = 'Z';
        thread_of(snapshot, 1100)->syscall.state = HD_SYSCALL_NONE;
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "worker-died"), 0, "%s", reaps ? "wait4" : "progress");
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

Test(worker_died, not_for_orphans_that_init_has_yet_to_reap)
{
    struct hd_snapshot *snapshot = new_snapshot(1);
    add_process(snapshot, 1, 0, HD_ORIGIN_EXEC, 1);
    struct hd_process *orphan = add_process(snapshot, 1100, 1, HD_ORIGIN_FORKED, 1);
    struct hd_wait *wait = asleep_in(thread_of(snapshot, 1), "epoll_wait", HD_WAIT_POLL, "epoll_wait");
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 4000000000 };
    orphan->state = 'Z';
    orphan->zombie = true;
    orphan->exit_status = SIGKILL;
    thread_of(snapshot, 1100)->state = 'Z';
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 0, "reparented to init: not init's worker");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(worker_died, worker_that_vanished_during_sampling)
{
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
    remove_process(snapshot, 1100); /* the worker is gone: only an earlier sample saw it */
    struct hd_process gone = { .pid = 1100, .ppid = 1000, .comm = "worker" };
    cr_assert(hd_snapshot_add_departed(snapshot, &gone));
    snapshot->processes[0].ignores_sigchld = true; /* the kernel reaps its children: it cannot notice */
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *died = the_finding(analysis, "worker-died");
    cr_assert_eq(died->pid, 1100);
    cr_assert_eq(died->confidence, REPORT_LIKELY);
    cr_assert_str_eq(evidence_of(died, "worker_pid"), "1100");
    cr_assert_str_eq(evidence_of(died, "exit"),
                     "unknown: reaped by the kernel before the last sample, as the parent ignores SIGCHLD");
    cr_assert_null(evidence_of(died, "wait_status"), "no exit status was read: %s", evidence_of(died, "wait_status"));
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "worker-died");
    assert_chain(analysis, (const pid_t[]){ 1000, 1100 }, 2);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    /* a parent that does not ignore SIGCHLD reaped the child itself: a healthy loop of short subprocesses, its
     * other thread in a timed wait for something else */
    snapshot = parent_polling_a_dead_worker(SIGKILL);
    remove_process(snapshot, 1100);
    cr_assert(hd_snapshot_add_departed(snapshot, &gone));
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    /* a parent in wait4 gets the status: a child that vanished was reaped by it; and a parent in wait4 with a
     * zombie child waits for another one */
    snapshot = parent_polling_a_dead_worker(SIGKILL);
    remove_process(snapshot, 1100);
    cr_assert(hd_snapshot_add_departed(snapshot, &gone));
    in_wait4(thread_of(snapshot, 1000), 1100);
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    snapshot = parent_polling_a_dead_worker(SIGKILL);
    in_wait4(thread_of(snapshot, 1000), 1200);
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* A parent whose thread waits on a mutex its other thread holds (or joins a thread) does not wait for a worker: a
 * child that exits during the sampling, reaped by the kernel, is no dead worker of that hang. */
Test(worker_died, not_for_a_child_that_leaves_while_the_parent_waits_on_its_own_lock)
{
    for (int variant = 0; variant < 2; variant++) {
        struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
        remove_process(snapshot, 1100);
        struct hd_process gone = { .pid = 1100, .ppid = 1000, .comm = "watcher" };
        cr_assert(hd_snapshot_add_departed(snapshot, &gone));
        snapshot->processes[0].ignores_sigchld = true;
        struct hd_thread *waiter = thread_of(snapshot, 1000);
        if (variant == 0)
            waiting_on_mutex(waiter, LOCK_ADDRESS, 1000, 1000, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
        else
            joining(waiter, 0x7f0000003000, 1000, 1000);
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "worker-died"), 0, "variant %d", variant);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

Test(worker_died, the_workers_one_parent_lost_are_one_hang)
{
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
    remove_process(snapshot, 1100);
    snapshot->processes[0].ignores_sigchld = true;
    for (pid_t pid = 1100; pid < 1104; pid++) {
        struct hd_process gone = { .pid = pid, .ppid = 1000, .comm = "worker" };
        cr_assert(hd_snapshot_add_departed(snapshot, &gone));
    }
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 4);
    cr_assert_eq(analysis->verdict.nhangs, 1u, "one parent left waiting, not 4 independent hangs");
    cr_assert_eq(analysis->verdict.hangs[0].nfindings, 4u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
