/* The wait-for graph (analysis/graph.c, analysis/analysis.h): one node per thread, edges from a waiter to who could
 * wake it, and who can never run again; large OR-sets with edges linear in the threads. Over hand-built snapshots
 * (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>

/* ---- nodes, wake decisions, look-ups ------------------------------------------------------------------------- */

Test(graph, running_thread)
{
    struct hd_snapshot *snapshot = new_snapshot(950);
    add_process(snapshot, 950, 1, HD_ORIGIN_EXEC, 1);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(analysis->graph.nnodes, 1u);
    cr_assert_eq(wake_of(analysis, 950), REPORT_WAKE_RUNNING);
    cr_assert_eq(analysis->graph.nodes[0].process, &snapshot->processes[0]);
    cr_assert_eq(analysis->graph.nodes[0].thread, &snapshot->processes[0].threads[0]);
    cr_assert_eq(analysis->nfindings, 0u);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    cr_assert_not(analysis->asleep_forever_exists);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(graph, progressing_and_kernel_and_zombie_threads)
{
    struct hd_snapshot *snapshot = new_snapshot(960);
    add_process(snapshot, 960, 1, HD_ORIGIN_EXEC, 4);
    struct hd_thread *progressing = thread_of(snapshot, 960);
    asleep_in_futex(progressing, 0x7f0000000040);
    ran(snapshot, progressing, 2000000, 5, 0);
    struct hd_thread *disk = thread_of(snapshot, 961);
    asleep_in(disk, "read", HD_WAIT_READ, "read");
    disk->state = 'D';
    earlier_samples(snapshot, disk)[0].state = 'S'; /* D in the last sample only: no uninterruptible finding */
    struct hd_thread *zombie = thread_of(snapshot, 962);
    zombie->state = 'Z';
    struct hd_thread *faulting = thread_of(snapshot, 963);
    faulting->state = 'S';
    faulting->syscall = (struct hd_syscall){ .state = HD_SYSCALL_NONE };
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 960), REPORT_WAKE_RUNNING);
    cr_assert_eq(wake_of(analysis, 961), REPORT_WAKE_KERNEL);
    cr_assert_eq(wake_of(analysis, 962), REPORT_WAKE_EXITED);
    cr_assert_eq(wake_of(analysis, 963), REPORT_WAKE_KERNEL);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(graph, find)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_graph graph;
    cr_assert(report_build_graph(snapshot, &graph));
    cr_assert_eq(graph.nnodes, 3u);
    cr_assert_eq(report_graph_find(&graph, 100), 0u);
    cr_assert_eq(report_graph_find(&graph, 101), 1u);
    cr_assert_eq(report_graph_find(&graph, 200), 2u);
    cr_assert_eq(report_graph_find(&graph, 999), NO_NODE);
    cr_assert_eq(graph.nodes[2].process, &snapshot->processes[1]);
    report_graph_release(&graph);
    cr_assert_null(graph.nodes);
    cr_assert_eq(graph.nnodes, 0u);
    hd_snapshot_free(snapshot);
}

Test(graph, empty_snapshot)
{
    struct hd_snapshot *snapshot = new_snapshot(1);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(analysis->graph.nnodes, 0u);
    cr_assert_eq(analysis->nfindings, 0u);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    cr_assert_eq(report_graph_find(&analysis->graph, 1), NO_NODE);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(graph, names)
{
    cr_assert_str_eq(report_wake_name(REPORT_WAKE_NEVER), "asleep forever");
    cr_assert_str_eq(report_edge_kind_name(REPORT_EDGE_LOCK_OWNER), "lock-owner");
    cr_assert_str_eq(report_confidence_name(REPORT_CERTAIN), "certain");
}

Test(graph, shared_mutex_owned_by_a_live_thread_outside_the_snapshot)
{
    /* A live thread of a process outside the snapshot owns a MAP_SHARED lock: it can release it, so the waiter
     * waits on the outside, like a pipe whose other end is held outside the snapshot. */
    struct hd_snapshot *snapshot = new_snapshot(1300);
    add_process(snapshot, 1300, 1, HD_ORIGIN_EXEC, 1);
    waiting_on_mutex(thread_of(snapshot, 1300), 0x7f0000002000, 4000, 4000, HD_OWNER_OUTSIDE, HD_MAPPING_SHARED);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "inherited-lock"), 0, "shared memory: the owner can reach it");
    cr_assert_eq(count_findings(analysis, "abandoned-lock"), 0);
    cr_expect_eq(wake_of(analysis, 1300), REPORT_WAKE_OUTSIDE, "wake: %s", report_wake_name(wake_of(analysis, 1300)));
    cr_expect_eq(analysis->verdict.hung, REPORT_HUNG_NO, "hung %d", (int)analysis->verdict.hung);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- scale: large OR-sets give the same answers, with edges linear in the threads ---------------------------- */

#define POOL_THREADS 10000

/* One process: thread 5000 first, then POOL_THREADS threads each asleep on a futex of its own (an idle pool). */
static struct hd_snapshot *pool_of_idle_threads(void)
{
    struct hd_snapshot *snapshot = new_snapshot(5000);
    add_process(snapshot, 5000, 1, HD_ORIGIN_EXEC, POOL_THREADS + 1);
    for (pid_t t = 1; t <= POOL_THREADS; t++)
        asleep_in_futex(thread_of(snapshot, 5000 + t), 0x7f0000100000 + 0x40 * (uint64_t)t);
    return snapshot;
}

Test(scale, ten_thousand_idle_threads_and_one_that_runs)
{
    struct hd_snapshot *snapshot = pool_of_idle_threads();
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(analysis->graph.nnodes, (size_t)POOL_THREADS + 1);
    cr_assert_eq(analysis->graph.nedges, (size_t)POOL_THREADS, "one edge per waiter, to its process");
    cr_assert(has_edge(analysis, 5001, 5000, REPORT_EDGE_FUTEX));
    cr_assert(has_edge(analysis, 5001, 5000 + POOL_THREADS, REPORT_EDGE_FUTEX));
    cr_assert_not(has_edge(analysis, 5001, 5001, REPORT_EDGE_FUTEX), "not to the waiter itself");
    for (pid_t t = 1; t <= POOL_THREADS; t++)
        cr_assert_eq(wake_of(analysis, 5000 + t), REPORT_WAKE_WAKER, "thread %d", (int)(5000 + t));
    cr_assert_eq(count_findings(analysis, "idle"), (size_t)POOL_THREADS);
    for (size_t f = 0; f < analysis->nfindings; f++) {
        const struct report_finding *idle = &analysis->findings[f];
        cr_assert_str_eq(idle->id, "idle");
        cr_assert_eq(idle->tid, 5001 + (pid_t)f, "in snapshot order");
        cr_assert_eq(member_tid(analysis, idle, 0), 5000, "the thread that runs is the one named as waker");
    }
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(scale, ten_thousand_threads_nobody_can_wake_are_one_knot)
{
    struct hd_snapshot *snapshot = pool_of_idle_threads();
    in_pause(thread_of(snapshot, 5000));
    struct report_analysis *analysis = analyze(snapshot);
    for (pid_t t = 0; t <= POOL_THREADS; t++)
        cr_assert_eq(wake_of(analysis, 5000 + t), REPORT_WAKE_NEVER, "thread %d", (int)(5000 + t));
    /* nothing is left that could wake the pool: one finding, every sleeper a member */
    EXPECT_IDS(analysis, "no-waker");
    const struct report_finding *knot = the_finding(analysis, "no-waker");
    cr_assert_eq(knot->tid, 5001, "the first thread of the knot that waits on a futex");
    cr_assert_eq(knot->nmembers, (size_t)POOL_THREADS);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "no-waker");
    cr_assert_eq(analysis->verdict.nhangs, 1u, "one process, one knot");
    cr_assert_eq(analysis->verdict.tid, 5001);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(scale, a_thread_woken_by_one_woken_thread_of_the_pool)
{
    /* thread 5000 waits on a futex too; only thread 5000 + POOL_THREADS has a way out (a timed wait): every
     * other one is freed through it, across one OR-set */
    struct hd_snapshot *snapshot = pool_of_idle_threads();
    asleep_in_futex(thread_of(snapshot, 5000), 0x7f00000fff00);
    struct hd_wait *timed = asleep_in_futex(thread_of(snapshot, 5000 + POOL_THREADS), 0x7f00000ffe00);
    timed->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 100000000 };
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 5000 + POOL_THREADS), REPORT_WAKE_TIMER);
    for (pid_t t = 0; t < POOL_THREADS; t++)
        cr_assert_eq(wake_of(analysis, 5000 + t), REPORT_WAKE_WAKER, "thread %d", (int)(5000 + t));
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(scale, a_long_chain_of_lock_owners_ending_in_one_cycle)
{
    /* thread i waits for a mutex held by thread i + 1; the last one waits for one held by the third from last:
     * one cycle of three at the end of a path of thousands, found once, named after its first member */
    struct hd_snapshot *snapshot = new_snapshot(7000);
    add_process(snapshot, 7000, 1, HD_ORIGIN_EXEC, 5000);
    for (pid_t t = 0; t < 4999; t++)
        waiting_on_mutex(thread_of(snapshot, 7000 + t), 0x1000 + 0x40 * (uint64_t)t, 7001 + t, 7000,
                         HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 11999), 0x900000, 11997, 7000, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "lock-cycle");
    const struct report_finding *cycle = the_finding(analysis, "lock-cycle");
    cr_assert_eq(cycle->tid, 11997);
    cr_assert_eq(cycle->nmembers, 3u);
    cr_assert_eq(member_tid(analysis, cycle, 0), 11997);
    cr_assert_eq(member_tid(analysis, cycle, 1), 11998);
    cr_assert_eq(member_tid(analysis, cycle, 2), 11999);
    cr_assert_eq(wake_of(analysis, 7000), REPORT_WAKE_NEVER);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

#define CHILDREN 1000

Test(scale, a_parent_waits_on_a_thousand_children_asleep_forever)
{
    /* every child holds the write end of the pipe the parent reads, and sleeps forever on a futex of its own */
    struct hd_snapshot *snapshot = new_snapshot(20000);
    struct hd_process *parent = add_process(snapshot, 20000, 1, HD_ORIGIN_EXEC, 1);
    add_fd(parent, 3, HD_FD_PIPE, 4242, 0);
    reading(thread_of(snapshot, 20000), 3);
    for (pid_t c = 1; c <= CHILDREN; c++) {
        struct hd_process *child = add_process(snapshot, 20000 + 2 * c, 20000, HD_ORIGIN_EXEC, 2);
        add_fd(child, 4, HD_FD_PIPE, 4242, 1);
        asleep_in_futex(&child->threads[0], 0x7f0000200000);
        asleep_in_futex(&child->threads[1], 0x7f0000200040);
    }
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(analysis->graph.nedges, (size_t)CHILDREN + 2 * CHILDREN,
                 "one pipe edge per child holding the pipe, one futex edge per child thread");
    cr_assert_eq(wake_of(analysis, 20000), REPORT_WAKE_NEVER);
    cr_assert_eq(wake_of(analysis, 20000 + 2 * CHILDREN + 1), REPORT_WAKE_NEVER);
    const struct report_finding *workers = the_finding(analysis, "waiting-on-workers");
    cr_assert_eq(workers->tid, 20000);
    cr_assert_eq(workers->nmembers, (size_t)CHILDREN, "each child once");
    cr_assert_eq(member_tid(analysis, workers, 0), 20002);
    cr_assert_eq(member_tid(analysis, workers, CHILDREN - 1), 20000 + 2 * CHILDREN);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_eq(analysis->verdict.nhangs, (size_t)CHILDREN, "each exec'd child is a knot of its own");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
