/* The wait-for graph, the findings and the verdict (report/analysis.h), over hand-built snapshots.
 *
 * Each test builds the snapshot hangdoc would have read (processes, threads and what they wait on, fds, locks
 * already resolved) and checks the exact findings, their subjects and members, and the verdict.
 */
#include "../../report/analysis.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROCESSES 1024
#define NO_NODE ((size_t)-1)

/* ---- building snapshots -------------------------------------------------------------------------------------- */

static struct hd_snapshot *new_snapshot(pid_t root)
{
    struct hd_snapshot *snapshot = calloc(1, sizeof *snapshot);
    cr_assert_not_null(snapshot);
    snapshot->processes = calloc(MAX_PROCESSES, sizeof *snapshot->processes);
    snapshot->roots = malloc(sizeof *snapshot->roots);
    cr_assert_not_null(snapshot->processes);
    cr_assert_not_null(snapshot->roots);
    snapshot->roots[0] = root;
    snapshot->nroots = 1;
    snapshot->samples = 2;
    snapshot->arch = HD_ARCH_X86_64;
    return snapshot;
}

/* A process with `nthreads` threads, tids first_tid, first_tid + 1, ...; each starts out running. */
static struct hd_process *add_process(struct hd_snapshot *snapshot, pid_t pid, pid_t ppid, enum hd_origin origin,
                                      pid_t first_tid, size_t nthreads)
{
    cr_assert(snapshot->nprocesses < MAX_PROCESSES);
    struct hd_process *process = &snapshot->processes[snapshot->nprocesses++];
    *process = (struct hd_process){
        .pid = pid, .ppid = ppid, .state = 'S', .origin = origin, .arch = HD_ARCH_X86_64,
        .thread_count = (int)nthreads, .nthreads = nthreads,
        .threads = calloc(nthreads ? nthreads : 1, sizeof *process->threads),
    };
    cr_assert_not_null(process->threads);
    snprintf(process->comm, sizeof process->comm, "proc%d", (int)pid);
    for (size_t t = 0; t < nthreads; t++) {
        struct hd_thread *thread = &process->threads[t];
        thread->tid = first_tid + (pid_t)t;
        snprintf(thread->name, sizeof thread->name, "thread%d", (int)thread->tid);
        thread->state = 'R';
        thread->syscall.state = HD_SYSCALL_RUNNING;
        thread->wait.fd = -1;
        thread->samples_seen = 2;
    }
    return process;
}

static struct hd_thread *thread_of(struct hd_snapshot *snapshot, pid_t tid)
{
    struct hd_thread *thread = hd_snapshot_find_thread(snapshot, tid, NULL);
    cr_assert_not_null(thread, "no thread %d", (int)tid);
    return thread;
}

/* Asleep in system call `name`, waiting for `kind` without a timeout, not progressing. */
static struct hd_wait *asleep_in(struct hd_thread *thread, const char *name, enum hd_wait_kind kind,
                                 const char *operation)
{
    thread->state = 'S';
    thread->syscall = (struct hd_syscall){ .state = HD_SYSCALL_IN, .name = name };
    thread->progressing = false;
    thread->wait = (struct hd_wait){ .kind = kind, .operation = operation, .fd = -1,
                                     .timeout = { .kind = HD_TIMEOUT_NONE } };
    return &thread->wait;
}

/* Asleep in futex FUTEX_WAIT at `address`, in private anonymous memory, on an object with no owner recorded. */
static struct hd_wait *asleep_in_futex(struct hd_thread *thread, uint64_t address)
{
    struct hd_wait *wait = asleep_in(thread, "futex", HD_WAIT_FUTEX, "FUTEX_WAIT");
    wait->address = address;
    wait->futex_private = true;
    wait->expected = 0;
    wait->mapping_kind = HD_MAPPING_ANONYMOUS_PRIVATE;
    wait->mapping = (struct hd_mapping){ .start = address & ~0xfffull, .end = (address & ~0xfffull) + 0x21000,
                                         .permissions = "rw-p" };
    wait->lock = (struct hd_lock){ .kind = HD_LOCK_UNKNOWN, .word_read = true,
                                   .why_unknown = "no owner recorded (a condition variable, semaphore, barrier or "
                                                  "libc lock)" };
    return wait;
}

/* Asleep on a normal mutex at `address` owned by `owner` of process `owner_pid`. */
static struct hd_wait *waiting_on_mutex(struct hd_thread *thread, uint64_t address, pid_t owner, pid_t owner_pid,
                                        enum hd_owner_whereabouts whereabouts, enum hd_mapping_kind mapping_kind)
{
    struct hd_wait *wait = asleep_in_futex(thread, address);
    wait->expected = 2;
    wait->mapping_kind = mapping_kind;
    if (mapping_kind == HD_MAPPING_SHARED)
        memcpy(wait->mapping.permissions, "rw-s", 5);
    wait->lock = (struct hd_lock){
        .kind = HD_LOCK_MUTEX, .object_address = address, .type = "normal", .word_read = true, .word = 2,
        .owner_tid = owner, .owner_pid = owner_pid, .owner_whereabouts = whereabouts,
    };
    return wait;
}

static void in_wait4(struct hd_thread *thread, pid_t child)
{
    struct hd_wait *wait = asleep_in(thread, "wait4", HD_WAIT_CHILD, "wait4");
    wait->child_selector = HD_CHILD_PID;
    wait->child = child;
}

static void in_pause(struct hd_thread *thread)
{
    asleep_in(thread, "pause", HD_WAIT_SIGNAL, "pause");
}

static void in_nanosleep(struct hd_thread *thread)
{
    struct hd_wait *wait = asleep_in(thread, "nanosleep", HD_WAIT_SLEEP, "nanosleep");
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 500000000 };
}

static void reading(struct hd_thread *thread, int fd)
{
    struct hd_wait *wait = asleep_in(thread, "read", HD_WAIT_READ, "read");
    wait->fd = fd;
    wait->fds[0] = fd;
    wait->nfds_known = 1;
}

static void add_fd(struct hd_process *process, int number, enum hd_fd_kind kind, uint64_t inode, int access_mode)
{
    struct hd_fd *grown = reallocarray(process->fds, process->nfds + 1, sizeof *grown);
    cr_assert_not_null(grown);
    process->fds = grown;
    char target[64];
    snprintf(target, sizeof target, "%s:[%llu]", kind == HD_FD_PIPE ? "pipe" : "socket", (unsigned long long)inode);
    process->fds[process->nfds++] = (struct hd_fd){
        .fd = number, .kind = kind, .inode = inode, .access_mode = access_mode, .target = strdup(target),
    };
}

/* ---- checking analyses --------------------------------------------------------------------------------------- */

static struct report_analysis *analyze(const struct hd_snapshot *snapshot)
{
    struct report_analysis *analysis = report_analyze(snapshot);
    cr_assert_not_null(analysis);
    return analysis;
}

static size_t count_findings(const struct report_analysis *analysis, const char *id)
{
    size_t count = 0;
    for (size_t f = 0; f < analysis->nfindings; f++)
        count += strcmp(analysis->findings[f].id, id) == 0;
    return count;
}

/* The only finding `id`; fails unless there is exactly one. */
static const struct report_finding *the_finding(const struct report_analysis *analysis, const char *id)
{
    cr_assert_eq(count_findings(analysis, id), 1, "%zu findings \"%s\"", count_findings(analysis, id), id);
    for (size_t f = 0; f < analysis->nfindings; f++)
        if (strcmp(analysis->findings[f].id, id) == 0)
            return &analysis->findings[f];
    return NULL;
}

/* The findings' ids in order, "a,b,c". */
static void finding_ids(const struct report_analysis *analysis, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t f = 0; f < analysis->nfindings && used < cap; f++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", f ? "," : "", analysis->findings[f].id);
}

#define EXPECT_IDS(analysis, text)                                                                                 \
    do {                                                                                                          \
        char ids_[512];                                                                                           \
        finding_ids(analysis, ids_, sizeof ids_);                                                                 \
        cr_assert_str_eq(ids_, text);                                                                             \
    } while (0)

static const char *evidence_of(const struct report_finding *finding, const char *name)
{
    for (size_t e = 0; e < finding->nevidence; e++)
        if (strcmp(finding->evidence[e].name, name) == 0)
            return finding->evidence[e].value;
    return NULL;
}

static pid_t member_tid(const struct report_analysis *analysis, const struct report_finding *finding, size_t i)
{
    cr_assert(i < finding->nmembers);
    cr_assert(finding->members[i] < analysis->graph.nnodes);
    return analysis->graph.nodes[finding->members[i]].thread->tid;
}

static bool has_member(const struct report_analysis *analysis, const struct report_finding *finding, pid_t tid)
{
    for (size_t i = 0; i < finding->nmembers; i++)
        if (member_tid(analysis, finding, i) == tid)
            return true;
    return false;
}

static enum report_wake wake_of(const struct report_analysis *analysis, pid_t tid)
{
    size_t node = report_graph_find(&analysis->graph, tid);
    cr_assert_neq(node, NO_NODE, "no node for thread %d", (int)tid);
    return analysis->graph.nodes[node].wake;
}

static bool has_edge(const struct report_analysis *analysis, pid_t from, pid_t to, enum report_edge_kind kind)
{
    size_t a = report_graph_find(&analysis->graph, from), b = report_graph_find(&analysis->graph, to);
    for (size_t e = 0; e < analysis->graph.nedges; e++) {
        const struct report_edge *edge = &analysis->graph.edges[e];
        if (edge->from != a || edge->kind != kind)
            continue;
        if (edge->target == REPORT_TO_THREAD && edge->to == b)
            return true;
        /* an OR-set: any thread of the process but the waiter */
        const struct report_graph_process *process = &analysis->graph.processes[edge->to];
        if (edge->target == REPORT_TO_PROCESS && b != a && b >= process->first_node &&
            b < process->first_node + process->nnodes)
            return true;
    }
    return false;
}

/* Every lock-owner edge goes from a waiter to the thread its lock names as owner. */
static void assert_owner_edges_point_to_owners(const struct report_analysis *analysis)
{
    const struct report_graph *graph = &analysis->graph;
    for (size_t e = 0; e < graph->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        cr_assert(edge->from < graph->nnodes);
        cr_assert(edge->target == REPORT_TO_THREAD ? edge->to < graph->nnodes : edge->to < graph->nprocesses);
        cr_assert(edge->target == REPORT_TO_PROCESS || edge->from != edge->to, "a thread does not wake itself");
        if (edge->kind != REPORT_EDGE_LOCK_OWNER)
            continue;
        const struct hd_thread *waiter = graph->nodes[edge->from].thread;
        cr_assert_eq(waiter->wait.kind, HD_WAIT_FUTEX);
        cr_assert_eq(waiter->wait.lock.owner_tid, graph->nodes[edge->to].thread->tid);
    }
}

static void assert_chain(const struct report_analysis *analysis, const pid_t *chain, size_t length)
{
    cr_assert_eq(analysis->verdict.nchain, length, "chain of %zu", analysis->verdict.nchain);
    for (size_t i = 0; i < length; i++)
        cr_assert_eq(analysis->verdict.chain[i], chain[i], "chain[%zu] = %d", i, (int)analysis->verdict.chain[i]);
}

static const char *root_cause_id(const struct report_analysis *analysis)
{
    long root = analysis->verdict.root_cause;
    if (root < 0)
        return NULL;
    cr_assert((size_t)root < analysis->nfindings);
    return analysis->findings[root].id;
}

/* ---- inherited and abandoned locks --------------------------------------------------------------------------- */

#define LOCK_ADDRESS 0x55d2a0c4e040ull

/* Parent 100 (thread 100 in wait4 on child 200, thread 101 in pause()) and forked child 200 whose thread waits on a
 * mutex owned by 101. */
static struct hd_snapshot *fork_with_held_lock(enum hd_mapping_kind mapping_kind)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 100, 2);
    add_process(snapshot, 200, 100, HD_ORIGIN_FORKED, 200, 1);
    in_wait4(thread_of(snapshot, 100), 200);
    in_pause(thread_of(snapshot, 101));
    waiting_on_mutex(thread_of(snapshot, 200), LOCK_ADDRESS, 101, 100, HD_OWNER_OTHER_PROCESS, mapping_kind);
    return snapshot;
}

Test(inherited_lock, mutex_held_at_fork_by_a_parent_thread)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);

    cr_assert_eq(analysis->graph.nnodes, 3u);
    cr_assert_eq(wake_of(analysis, 100), REPORT_WAKE_NEVER);
    cr_assert_eq(wake_of(analysis, 101), REPORT_WAKE_NEVER);
    cr_assert_eq(wake_of(analysis, 200), REPORT_WAKE_NEVER);
    cr_assert(has_edge(analysis, 100, 200, REPORT_EDGE_CHILD));
    cr_assert_not(has_edge(analysis, 200, 101, REPORT_EDGE_LOCK_OWNER), "the parent's thread cannot unlock the copy");

    EXPECT_IDS(analysis, "inherited-lock,waiting-on-workers");
    const struct report_finding *inherited = the_finding(analysis, "inherited-lock");
    cr_assert_eq(inherited->pid, 200);
    cr_assert_eq(inherited->tid, 200);
    cr_assert_eq(inherited->confidence, REPORT_CERTAIN);
    cr_assert(inherited->hang);
    cr_assert_not_null(inherited->summary);
    cr_assert(strstr(inherited->summary, "parent 100"), "%s", inherited->summary);
    cr_assert_str_eq(evidence_of(inherited, "owner_tid"), "101");
    cr_assert_str_eq(evidence_of(inherited, "owner_pid"), "100");
    cr_assert_str_eq(evidence_of(inherited, "owner_whereabouts"), "other-process");
    cr_assert_str_eq(evidence_of(inherited, "address"), "0x55d2a0c4e040");
    cr_assert(inherited->nremedies >= 1);

    const struct report_finding *workers = the_finding(analysis, "waiting-on-workers");
    cr_assert_eq(workers->pid, 100);
    cr_assert_eq(workers->tid, 100);
    cr_assert_eq(workers->nmembers, 1u);
    cr_assert_eq(member_tid(analysis, workers, 0), 200);
    cr_assert_str_eq(evidence_of(workers, "workers"), "200");

    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "fork-inheritance");
    cr_assert_str_eq(root_cause_id(analysis), "inherited-lock");
    cr_assert_eq(analysis->verdict.pid, 200);
    cr_assert_eq(analysis->verdict.tid, 200);
    assert_chain(analysis, (const pid_t[]){ 100, 200 }, 2);
    cr_assert(analysis->asleep_forever_exists);
    assert_owner_edges_point_to_owners(analysis);

    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(inherited_lock, owner_outside_the_snapshot_is_still_the_parent)
{
    /* only the child is probed: its parent 100 lies outside the snapshot */
    struct hd_snapshot *snapshot = new_snapshot(200);
    add_process(snapshot, 200, 100, HD_ORIGIN_FORKED, 200, 1);
    waiting_on_mutex(thread_of(snapshot, 200), LOCK_ADDRESS, 101, 100, HD_OWNER_OUTSIDE, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "inherited-lock");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "fork-inheritance");
    assert_chain(analysis, (const pid_t[]){ 200 }, 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(inherited_lock, not_for_a_shared_lock_the_owner_can_reach)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_SHARED);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 200, 101, REPORT_EDGE_LOCK_OWNER), "the owner maps the same memory");
    cr_assert_eq(count_findings(analysis, "inherited-lock"), 0);
    cr_assert_eq(count_findings(analysis, "abandoned-lock"), 0);
    assert_owner_edges_point_to_owners(analysis);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(inherited_lock, shared_lock_with_a_running_owner_is_no_hang)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_SHARED);
    struct hd_thread *owner = thread_of(snapshot, 101);
    owner->state = 'R';
    owner->syscall = (struct hd_syscall){ .state = HD_SYSCALL_RUNNING };
    owner->wait = (struct hd_wait){ .kind = HD_WAIT_NONE, .fd = -1 };
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 101), REPORT_WAKE_RUNNING);
    cr_assert_eq(wake_of(analysis, 200), REPORT_WAKE_WAKER);
    cr_assert_eq(wake_of(analysis, 100), REPORT_WAKE_WAKER);
    cr_assert_eq(count_findings(analysis, "inherited-lock"), 0);
    cr_assert_eq(count_findings(analysis, "waiting-on-workers"), 0);
    for (size_t f = 0; f < analysis->nfindings; f++)
        cr_assert_str_eq(analysis->findings[f].id, "idle");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "none");
    cr_assert_eq(analysis->verdict.root_cause, -1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(abandoned_lock, owner_gone)
{
    struct hd_snapshot *snapshot = new_snapshot(300);
    add_process(snapshot, 300, 1, HD_ORIGIN_EXEC, 300, 1);
    waiting_on_mutex(thread_of(snapshot, 300), LOCK_ADDRESS, 399, 0, HD_OWNER_GONE, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "abandoned-lock");
    const struct report_finding *finding = the_finding(analysis, "abandoned-lock");
    cr_assert_eq(finding->confidence, REPORT_CERTAIN);
    cr_assert_eq(finding->pid, 300);
    cr_assert_eq(finding->tid, 300);
    cr_assert_str_eq(evidence_of(finding, "owner_tid"), "399");
    cr_assert_str_eq(evidence_of(finding, "owner_whereabouts"), "gone");
    cr_assert_null(evidence_of(finding, "owner_pid"), "no owner process to name");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "abandoned-lock");
    assert_chain(analysis, (const pid_t[]){ 300 }, 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(abandoned_lock, owner_tid_reused_by_an_unrelated_process)
{
    struct hd_snapshot *snapshot = new_snapshot(300);
    add_process(snapshot, 300, 1, HD_ORIGIN_EXEC, 300, 1);
    add_process(snapshot, 310, 300, HD_ORIGIN_EXEC, 310, 1);
    add_process(snapshot, 320, 300, HD_ORIGIN_EXEC, 320, 1);
    /* 310's lock names thread 320 of its sibling: not an ancestor, so not inherited */
    waiting_on_mutex(thread_of(snapshot, 310), LOCK_ADDRESS, 320, 320, HD_OWNER_OTHER_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    in_nanosleep(thread_of(snapshot, 300));
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "inherited-lock"), 0);
    const struct report_finding *finding = the_finding(analysis, "abandoned-lock");
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert_eq(finding->tid, 310);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    assert_chain(analysis, (const pid_t[]){ 300, 310 }, 2);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- lock cycles --------------------------------------------------------------------------------------------- */

Test(lock_cycle, two_threads_own_what_the_other_waits_for)
{
    struct hd_snapshot *snapshot = new_snapshot(301);
    add_process(snapshot, 301, 1, HD_ORIGIN_EXEC, 301, 3);
    waiting_on_mutex(thread_of(snapshot, 301), 0x1000, 302, 301, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 302), 0x2000, 301, 301, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 303), 0x2000, 301, 301, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);

    cr_assert_eq(analysis->graph.nedges, 3u);
    cr_assert(has_edge(analysis, 301, 302, REPORT_EDGE_LOCK_OWNER));
    cr_assert(has_edge(analysis, 302, 301, REPORT_EDGE_LOCK_OWNER));
    cr_assert(has_edge(analysis, 303, 301, REPORT_EDGE_LOCK_OWNER));
    assert_owner_edges_point_to_owners(analysis);
    for (pid_t tid = 301; tid <= 303; tid++)
        cr_assert_eq(wake_of(analysis, tid), REPORT_WAKE_NEVER, "thread %d", (int)tid);

    EXPECT_IDS(analysis, "lock-cycle");
    const struct report_finding *cycle = the_finding(analysis, "lock-cycle");
    cr_assert_eq(cycle->pid, 301);
    cr_assert_eq(cycle->tid, 301);
    cr_assert_eq(cycle->confidence, REPORT_CERTAIN);
    cr_assert_eq(cycle->nmembers, 2u);
    cr_assert(has_member(analysis, cycle, 301));
    cr_assert(has_member(analysis, cycle, 302));
    cr_assert_not(has_member(analysis, cycle, 303), "303 waits on the cycle but is not in it");
    cr_assert(strstr(cycle->summary, "2 threads"), "%s", cycle->summary);

    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_str_eq(root_cause_id(analysis), "lock-cycle");
    cr_assert_eq(analysis->verdict.tid, 301);
    assert_chain(analysis, (const pid_t[]){ 301 }, 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(lock_cycle, three_threads_listed_once_whichever_comes_first)
{
    struct hd_snapshot *snapshot = new_snapshot(400);
    add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 400, 4);
    /* 400 runs; 401 -> 403 -> 402 -> 401 */
    waiting_on_mutex(thread_of(snapshot, 401), 0x1000, 403, 400, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 403), 0x3000, 402, 400, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    waiting_on_mutex(thread_of(snapshot, 402), 0x2000, 401, 400, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 400), REPORT_WAKE_RUNNING);
    const struct report_finding *cycle = the_finding(analysis, "lock-cycle");
    cr_assert_eq(cycle->tid, 401);
    cr_assert_eq(cycle->nmembers, 3u);
    cr_assert_eq(member_tid(analysis, cycle, 0), 401);
    cr_assert_eq(member_tid(analysis, cycle, 1), 403);
    cr_assert_eq(member_tid(analysis, cycle, 2), 402);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(lock_cycle, owner_that_runs_breaks_no_cycle)
{
    struct hd_snapshot *snapshot = new_snapshot(301);
    add_process(snapshot, 301, 1, HD_ORIGIN_EXEC, 301, 2);
    waiting_on_mutex(thread_of(snapshot, 302), 0x2000, 301, 301, HD_OWNER_SAME_PROCESS, HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 302), REPORT_WAKE_WAKER);
    EXPECT_IDS(analysis, "idle");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- orphaned waits ------------------------------------------------------------------------------------------ */

#define POOL_ADDRESS 0x7f3a2c000a40ull

/* Parent 400 (thread 400 in wait4 on 500, thread 401 asleep on a private futex) and child 500 asleep at the same
 * address: a thread pool's condition variable copied by fork(). */
static struct hd_snapshot *pool_copied_by_fork(enum hd_origin child_origin)
{
    struct hd_snapshot *snapshot = new_snapshot(400);
    add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 400, 2);
    add_process(snapshot, 500, 400, child_origin, 500, 1);
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
    EXPECT_IDS(analysis, "waiting-on-workers");
    /* the exec'd child's threads are still asleep forever: a deadlock no rule explains, in the child */
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.root_cause, -1);
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    cr_assert_eq(analysis->verdict.hangs[0].finding, -1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* The parent maps [start, start + 0x21000) as asleep_in_futex() draws the child's mapping: the child got that
 * memory at fork(). */
static void parent_maps_the_same(struct hd_process *parent, uint64_t address)
{
    struct hd_mapping *grown = reallocarray(parent->mappings, parent->nmappings + 1, sizeof *grown);
    cr_assert_not_null(grown);
    parent->mappings = grown;
    parent->mappings[parent->nmappings++] = (struct hd_mapping){
        .start = address & ~0xfffull, .end = (address & ~0xfffull) + 0x21000, .permissions = "rw-p" };
}

Test(orphaned_wait, a_lone_child_thread_on_memory_it_got_at_fork)
{
    struct hd_snapshot *snapshot = new_snapshot(400);
    struct hd_process *parent = add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 400, 1);
    add_process(snapshot, 500, 400, HD_ORIGIN_FORKED, 500, 1);
    in_wait4(thread_of(snapshot, 400), 500);
    asleep_in_futex(thread_of(snapshot, 500), POOL_ADDRESS);
    parent_maps_the_same(parent, POOL_ADDRESS);
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
    add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 400, 1);
    add_process(snapshot, 500, 400, HD_ORIGIN_FORKED, 500, 1);
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
    struct hd_process *parent = add_process(snapshot, 400, 1, HD_ORIGIN_EXEC, 400, 1);
    add_process(snapshot, 500, 400, HD_ORIGIN_FORKED, 500, 2);
    in_wait4(thread_of(snapshot, 400), 500);
    asleep_in_futex(thread_of(snapshot, 500), POOL_ADDRESS);
    asleep_in_futex(thread_of(snapshot, 501), POOL_ADDRESS + 0x40);
    parent_maps_the_same(parent, POOL_ADDRESS);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "orphaned-wait"), 0);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- idle ---------------------------------------------------------------------------------------------------- */

Test(idle, worker_on_a_futex_another_thread_can_signal)
{
    struct hd_snapshot *snapshot = new_snapshot(600);
    add_process(snapshot, 600, 1, HD_ORIGIN_EXEC, 600, 2);
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

/* ---- pipes ----------------------------------------------------------------------------------------------------- */

/* Parent 700 reads fd 4, the read end of pipe 9999; child 800 (exec'd) holds the write end as fd 5. */
static struct hd_snapshot *parent_reading_a_worker(void)
{
    struct hd_snapshot *snapshot = new_snapshot(700);
    struct hd_process *parent = add_process(snapshot, 700, 1, HD_ORIGIN_EXEC, 700, 1);
    struct hd_process *child = add_process(snapshot, 800, 700, HD_ORIGIN_EXEC, 800, 1);
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

    EXPECT_IDS(analysis, "waiting-on-workers");
    const struct report_finding *workers = the_finding(analysis, "waiting-on-workers");
    cr_assert_eq(workers->pid, 700);
    cr_assert_eq(workers->tid, 700);
    cr_assert_eq(workers->nmembers, 1u);
    cr_assert_eq(member_tid(analysis, workers, 0), 800);
    cr_assert(strstr(workers->summary, "a pipe"), "%s", workers->summary);
    cr_assert_str_eq(evidence_of(workers, "timed_loop"), "no");

    /* the root is the worker's knot, which no rule names: a deadlock in the worker, reached through the parent */
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.root_cause, -1);
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

Test(socket, reader_of_a_socketpair_whose_peer_is_asleep_forever)
{
    struct hd_snapshot *snapshot = new_snapshot(700);
    struct hd_process *parent = add_process(snapshot, 700, 1, HD_ORIGIN_EXEC, 700, 1);
    struct hd_process *child = add_process(snapshot, 800, 700, HD_ORIGIN_EXEC, 800, 1);
    add_fd(parent, 3, HD_FD_SOCKET, 5001, 2);
    add_fd(child, 3, HD_FD_SOCKET, 5002, 2);
    snapshot->unix_peers = malloc(2 * sizeof *snapshot->unix_peers);
    cr_assert_not_null(snapshot->unix_peers);
    snapshot->unix_peers[0] = (struct hd_socket_peer){ .inode = 5001, .peer_inode = 5002 };
    snapshot->unix_peers[1] = (struct hd_socket_peer){ .inode = 5002, .peer_inode = 5001 };
    snapshot->nunix_peers = 2;
    reading(thread_of(snapshot, 700), 3);
    asleep_in_futex(thread_of(snapshot, 800), 0x7f0000000040);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 700, 800, REPORT_EDGE_SOCKET));
    const struct report_finding *workers = the_finding(analysis, "waiting-on-workers");
    cr_assert_eq(workers->tid, 700);
    cr_assert(strstr(workers->summary, "a socket"), "%s", workers->summary);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- signals, running threads, lookups ----------------------------------------------------------------------- */

Test(signal, pause_alone_is_no_hang)
{
    struct hd_snapshot *snapshot = new_snapshot(900);
    add_process(snapshot, 900, 1, HD_ORIGIN_EXEC, 900, 1);
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

Test(signal, lone_futex_sleeper_is_an_unexplained_deadlock)
{
    /* a lone thread on a semaphore nobody can post, in a process that was not forked: no catalogue id names it,
     * but nobody can ever wake it: hung, cause "deadlock", no root-cause finding */
    struct hd_snapshot *snapshot = new_snapshot(910);
    add_process(snapshot, 910, 1, HD_ORIGIN_EXEC, 910, 1);
    asleep_in_futex(thread_of(snapshot, 910), 0x7f0000000040);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 910), REPORT_WAKE_NEVER);
    cr_assert_eq(analysis->nfindings, 0u);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.root_cause, -1);
    cr_assert_eq(analysis->verdict.tid, 910);
    assert_chain(analysis, (const pid_t[]){ 910 }, 1);
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(graph, running_thread)
{
    struct hd_snapshot *snapshot = new_snapshot(950);
    add_process(snapshot, 950, 1, HD_ORIGIN_EXEC, 950, 1);
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
    add_process(snapshot, 960, 1, HD_ORIGIN_EXEC, 960, 4);
    struct hd_thread *progressing = thread_of(snapshot, 960);
    asleep_in_futex(progressing, 0x7f0000000040);
    progressing->progressing = true;
    struct hd_thread *disk = thread_of(snapshot, 961);
    asleep_in(disk, "read", HD_WAIT_READ, "read");
    disk->state = 'D';
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

/* ---- more waits ---------------------------------------------------------------------------------------------- */

Test(pipe, timed_poll_loop_on_a_worker_asleep_forever)
{
    struct hd_snapshot *snapshot = parent_reading_a_worker();
    struct hd_wait *wait = asleep_in(thread_of(snapshot, 700), "poll", HD_WAIT_POLL, "poll");
    wait->nfds = 1;
    wait->fds[0] = 4;
    wait->nfds_known = 1;
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 1000000000 };
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

Test(join, joiner_of_a_running_thread_can_be_woken)
{
    struct hd_snapshot *snapshot = new_snapshot(1100);
    add_process(snapshot, 1100, 1, HD_ORIGIN_EXEC, 1100, 2);
    struct hd_wait *wait = asleep_in_futex(thread_of(snapshot, 1100), 0x7f0000001000);
    wait->futex_private = false;
    wait->expected = 1101;
    wait->lock = (struct hd_lock){ .kind = HD_LOCK_JOIN, .type = "join", .object_address = 0x7f0000001000,
                                   .word_read = true, .word = 1101, .owner_tid = 1101,
                                   .owner_whereabouts = HD_OWNER_SAME_PROCESS, .owner_pid = 1100 };
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(has_edge(analysis, 1100, 1101, REPORT_EDGE_JOIN));
    cr_assert_eq(analysis->graph.nedges, 1u);
    cr_assert_eq(wake_of(analysis, 1100), REPORT_WAKE_WAKER);
    EXPECT_IDS(analysis, "idle");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(lock_cycle, thread_waiting_on_a_mutex_it_owns_itself)
{
    /* A thread that locks a normal mutex it already holds sleeps forever on a lock it owns itself: a one-thread
     * lock-cycle, a certain deadlock. */
    struct hd_snapshot *snapshot = new_snapshot(1200);
    add_process(snapshot, 1200, 1, HD_ORIGIN_EXEC, 1200, 1);
    waiting_on_mutex(thread_of(snapshot, 1200), 0x1000, 1200, 1200, HD_OWNER_SAME_PROCESS,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(wake_of(analysis, 1200), REPORT_WAKE_NEVER);
    cr_expect_eq(analysis->verdict.hung, REPORT_HUNG_YES, "hung %d", (int)analysis->verdict.hung);
    cr_expect_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_expect_geq(analysis->verdict.root_cause, 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(graph, shared_mutex_owned_by_a_live_thread_outside_the_snapshot)
{
    /* A live thread of a process outside the snapshot owns a MAP_SHARED lock: it can release it, so the waiter
     * waits on the outside, like a pipe whose other end is held outside the snapshot. */
    struct hd_snapshot *snapshot = new_snapshot(1300);
    add_process(snapshot, 1300, 1, HD_ORIGIN_EXEC, 1300, 1);
    waiting_on_mutex(thread_of(snapshot, 1300), 0x7f0000002000, 4000, 4000, HD_OWNER_OUTSIDE, HD_MAPPING_SHARED);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "inherited-lock"), 0, "shared memory: the owner can reach it");
    cr_assert_eq(count_findings(analysis, "abandoned-lock"), 0);
    cr_expect_eq(wake_of(analysis, 1300), REPORT_WAKE_OUTSIDE, "wake: %s", report_wake_name(wake_of(analysis, 1300)));
    cr_expect_eq(analysis->verdict.hung, REPORT_HUNG_NO, "hung %d", (int)analysis->verdict.hung);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(uninterruptible, d_in_every_sample_is_named_from_the_kernel_stack)
{
    struct hd_snapshot *snapshot = new_snapshot(1400);
    add_process(snapshot, 1400, 1, HD_ORIGIN_EXEC, 1400, 1);
    struct hd_thread *thread = thread_of(snapshot, 1400);
    thread->state = 'D';
    thread->syscall.state = HD_SYSCALL_IN;
    thread->syscall.name = "read";
    thread->samples_in_state_d = 2;
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
    add_process(snapshot, 1410, 1, HD_ORIGIN_EXEC, 1410, 1);
    struct hd_thread *thread = thread_of(snapshot, 1410);
    thread->state = 'D';
    thread->syscall.state = HD_SYSCALL_IN;
    thread->samples_in_state_d = 1; /* of 2: it came out of D meanwhile */
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "uninterruptible"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(stopped, by_a_tracer_and_by_a_signal)
{
    struct hd_snapshot *snapshot = new_snapshot(1500);
    struct hd_process *traced = add_process(snapshot, 1500, 1, HD_ORIGIN_EXEC, 1500, 2);
    traced->tracer_pid = 777;
    traced->threads[0].state = 't';
    traced->threads[1].state = 't';
    struct hd_process *stopped = add_process(snapshot, 1600, 1500, HD_ORIGIN_EXEC, 1600, 1);
    stopped->threads[0].state = 'T';
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "stopped"), 2, "one per process");
    const struct report_finding *first = NULL;
    for (size_t f = 0; f < analysis->nfindings && !first; f++)
        if (strcmp(analysis->findings[f].id, "stopped") == 0)
            first = &analysis->findings[f];
    if (!first)
        cr_assert_fail("no stopped finding");
    cr_assert_eq(first->pid, 1500);
    cr_assert(strstr(first->summary, "tracer, process 777"), "%s", first->summary);
    cr_assert_str_eq(evidence_of(first, "tracer_pid"), "777");
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "stopped");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- worker-died ------------------------------------------------------------------------------------------- */

/* Parent 1000 polls (5 s timeout, in a loop) the read end of a pipe whose write end it holds itself, as a
 * multiprocessing queue does; its worker 1100 is a zombie with wait status `status`, in both samples. */
static struct hd_snapshot *parent_polling_a_dead_worker(int status)
{
    struct hd_snapshot *snapshot = new_snapshot(1000);
    struct hd_process *parent = add_process(snapshot, 1000, 1, HD_ORIGIN_EXEC, 1000, 1);
    struct hd_process *worker = add_process(snapshot, 1100, 1000, HD_ORIGIN_FORKED, 1100, 1);
    add_fd(parent, 3, HD_FD_PIPE, 4242, 0);
    add_fd(parent, 4, HD_FD_PIPE, 4242, 1);
    struct hd_wait *wait = asleep_in(thread_of(snapshot, 1000), "poll", HD_WAIT_POLL, "poll");
    wait->nfds = 1;
    wait->fds[0] = 3;
    wait->nfds_known = 1;
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 4000000000 };
    worker->state = 'Z';
    worker->zombie = true;
    worker->zombie_throughout = true;
    worker->exit_status = status;
    thread_of(snapshot, 1100)->state = 'Z';
    thread_of(snapshot, 1100)->syscall.state = HD_SYSCALL_NONE;
    return snapshot;
}

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
    thread_of(snapshot, 1000)->progressing = true; /* its poll returns and it goes on: it will reap */
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
    snapshot->processes[1].zombie_throughout = false;
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
        struct hd_process *parent = add_process(snapshot, 1000, 1, HD_ORIGIN_EXEC, 1000, 2);
        struct hd_process *worker = add_process(snapshot, 1100, 1000, HD_ORIGIN_FORKED, 1100, 1);
        add_fd(parent, 3, HD_FD_PIPE, 4242, 0);
        add_fd(parent, 4, HD_FD_PIPE, 4242, 1);
        struct hd_wait *wait = asleep_in(thread_of(snapshot, 1000), "poll", HD_WAIT_POLL, "poll");
        wait->nfds = 1;
        wait->fds[0] = 3;
        wait->nfds_known = 1;
        wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 4000000000 };
        if (reaps)
            in_wait4(thread_of(snapshot, 1001), 1200); /* reaps another child first: this zombie waits its turn */
        else
            thread_of(snapshot, 1001)->progressing = true;
        worker->state = 'Z';
        worker->zombie = worker->zombie_throughout = true;
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
    add_process(snapshot, 1, 0, HD_ORIGIN_EXEC, 1, 1);
    struct hd_process *orphan = add_process(snapshot, 1100, 1, HD_ORIGIN_FORKED, 1100, 1);
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
    snapshot->nprocesses = 1; /* the worker is gone: only an earlier sample saw it */
    free(snapshot->processes[1].threads);
    snapshot->processes[1] = (struct hd_process){ 0 };
    struct hd_process gone = { .pid = 1100, .ppid = 1000, .comm = "worker" };
    cr_assert(hd_snapshot_add_departed(snapshot, &gone));
    snapshot->processes[0].ignores_sigchld = true; /* the kernel reaps its children: it cannot notice */
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *died = the_finding(analysis, "worker-died");
    cr_assert_eq(died->pid, 1100);
    cr_assert_eq(died->confidence, REPORT_LIKELY);
    cr_assert(strstr(died->summary, "worker 1100 'worker' vanished during sampling"), "%s", died->summary);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "worker-died");
    assert_chain(analysis, (const pid_t[]){ 1000, 1100 }, 2);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    /* a parent that does not ignore SIGCHLD reaped the child itself: a healthy loop of short subprocesses, its
     * other thread in a timed wait for something else */
    snapshot = parent_polling_a_dead_worker(SIGKILL);
    snapshot->nprocesses = 1;
    free(snapshot->processes[1].threads);
    snapshot->processes[1] = (struct hd_process){ 0 };
    cr_assert(hd_snapshot_add_departed(snapshot, &gone));
    analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "worker-died"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    /* a parent in wait4 gets the status: a child that vanished was reaped by it; and a parent in wait4 with a
     * zombie child waits for another one */
    snapshot = parent_polling_a_dead_worker(SIGKILL);
    snapshot->nprocesses = 1;
    free(snapshot->processes[1].threads);
    snapshot->processes[1] = (struct hd_process){ 0 };
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

Test(worker_died, the_workers_one_parent_lost_are_one_hang)
{
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
    snapshot->nprocesses = 1;
    free(snapshot->processes[1].threads);
    snapshot->processes[1] = (struct hd_process){ 0 };
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

/* ---- spinning ---------------------------------------------------------------------------------------------- */

/* Thread 1200 running in all of 3 samples over 2 s, using `cpu_s` of CPU, stopped `leaf_samples` times in
 * `function` (leaf_same as given). */
static struct hd_snapshot *spinner(double cpu_s, unsigned leaf_samples, bool leaf_same, const char *function)
{
    struct hd_snapshot *snapshot = new_snapshot(1200);
    snapshot->samples = 3;
    snapshot->sampling_s = 2.0;
    add_process(snapshot, 1200, 1, HD_ORIGIN_EXEC, 1200, 1);
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

/* ---- several hangs ------------------------------------------------------------------------------------------ */

Test(hangs, one_inherited_lock_in_several_workers_is_one_hang)
{
    /* parent 100 (waits for 200, thread 101 holds the lock) and two workers forked while it was held */
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    add_process(snapshot, 300, 100, HD_ORIGIN_FORKED, 300, 1);
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
    snapshot->roots = realloc(snapshot->roots, 2 * sizeof *snapshot->roots);
    snapshot->roots[1] = 1000;
    snapshot->nroots = 2;
    struct hd_snapshot *other = parent_polling_a_dead_worker(SIGKILL);
    for (size_t p = 0; p < other->nprocesses; p++)
        snapshot->processes[snapshot->nprocesses++] = other->processes[p];
    other->nprocesses = 0;
    hd_snapshot_free(other);
    /* and a third: a lone thread asleep on a semaphore nobody can post */
    add_process(snapshot, 1300, 1, HD_ORIGIN_EXEC, 1300, 1);
    asleep_in_futex(thread_of(snapshot, 1300), 0x7f0000000040);
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
    cr_assert_eq(verdict->hangs[2].tid, 1300);
    cr_assert_str_eq(report_cause_name(verdict->cause), "fork-inheritance", "the first hang is the verdict's");
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(verdict, waits_that_could_not_be_read_give_could_not_tell)
{
    struct hd_snapshot *snapshot = new_snapshot(1400);
    add_process(snapshot, 1400, 1, HD_ORIGIN_EXEC, 1400, 1);
    struct hd_thread *thread = thread_of(snapshot, 1400);
    thread->state = 'S';
    thread->syscall.state = HD_SYSCALL_UNREAD;
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_UNKNOWN);
    cr_assert_eq(analysis->verdict.unread_waits, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- specific remedies --------------------------------------------------------------------------------------- */

static void add_mapping(struct hd_process *process, uint64_t start, uint64_t end, const char *permissions,
                        const char *path)
{
    struct hd_mapping *grown = reallocarray(process->mappings, process->nmappings + 1, sizeof *grown);
    cr_assert_not_null(grown);
    process->mappings = grown;
    struct hd_mapping *mapping = &process->mappings[process->nmappings++];
    *mapping = (struct hd_mapping){ .start = start, .end = end, .path = path ? strdup(path) : NULL };
    memcpy(mapping->permissions, permissions, 5);
}

/* The library `path` mapped at [start, end), as probe/libraries.c lists it. */
static void add_library(struct hd_process *process, uint64_t start, uint64_t end, const char *path)
{
    struct hd_library *grown = reallocarray(process->libraries, process->nlibraries + 1, sizeof *grown);
    cr_assert_not_null(grown);
    process->libraries = grown;
    process->libraries[process->nlibraries++] = (struct hd_library){ .path = strdup(path), .start = start, .end = end };
}

static size_t remedies_containing(const struct report_finding *finding, const char *part)
{
    size_t count = 0;
    for (size_t r = 0; r < finding->nremedies; r++)
        count += strstr(finding->remedies[r], part) != NULL;
    return count;
}

Test(remedies, python_start_method_only_for_a_python_child)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *inherited = the_finding(analysis, "inherited-lock");
    cr_assert_eq(remedies_containing(inherited, "set_start_method"), 0, "not Python: no Python remedy");
    cr_assert_eq(inherited->nremedies, 1u);
    report_analysis_free(analysis);

    struct hd_process *child = &snapshot->processes[1];
    child->exe = strdup("/usr/bin/python3.11");
    analysis = analyze(snapshot);
    inherited = the_finding(analysis, "inherited-lock");
    cr_assert_eq(remedies_containing(inherited, "if __name__ == '__main__': "
                                                "torch.multiprocessing.set_start_method('spawn', force=True)"), 1);
    cr_assert_eq(remedies_containing(inherited, "context has already been set"), 1, "why not in Jupyter");
    cr_assert_eq(remedies_containing(inherited, "no lambdas"), 1, "what must pickle");
    cr_assert_eq(remedies_containing(inherited, "imports the main module again"), 1, "the re-import pitfall");
    cr_assert_eq(remedies_containing(inherited, "atexit"), 0);
    report_analysis_free(analysis);

    free(child->exe);
    child->exe = strdup("/opt/app/bin/server"); /* an embedding program: libpython mapped */
    add_mapping(child, 0x7f0000000000, 0x7f0000100000, "r-xp", "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0");
    analysis = analyze(snapshot);
    cr_assert_eq(remedies_containing(the_finding(analysis, "inherited-lock"), "torch.multiprocessing"), 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Forked child 1600 of 1500, its one thread asleep forever on a private futex at `address`. */
static struct hd_snapshot *child_asleep_at(uint64_t address)
{
    struct hd_snapshot *snapshot = new_snapshot(1500);
    add_process(snapshot, 1500, 1, HD_ORIGIN_EXEC, 1500, 1);
    add_process(snapshot, 1600, 1500, HD_ORIGIN_FORKED, 1600, 1);
    in_wait4(thread_of(snapshot, 1500), 1600);
    asleep_in_futex(thread_of(snapshot, 1600), address);
    parent_maps_the_same(&snapshot->processes[0], address); /* the child got that memory at fork() */
    return snapshot;
}

/* A lock in libc's data, and no stack to tell which of libc's locks: libc's own remedy, not another runtime's (the
 * function that names the lock: test_catalogue.c) */
Test(remedies, libc_when_the_lock_lies_in_libc_data)
{
    struct hd_snapshot *snapshot = child_asleep_at(0x7fc15fe9d2c8);
    struct hd_process *child = &snapshot->processes[1];
    add_mapping(child, 0x7fc15fe9b000, 0x7fc15fe9d000, "rw-p", "/usr/lib/x86_64-linux-gnu/libc.so.6");
    add_mapping(child, 0x7fc15fe9d000, 0x7fc15feaa000, "rw-p", NULL); /* libc's .bss */
    add_library(child, 0x7fc15fe9b000, 0x7fc15fe9d000, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *orphaned = the_finding(analysis, "orphaned-wait");
    cr_assert_eq(remedies_containing(orphaned, "The lock is glibc's own: fork only before the program starts "
                                               "threads"), 1);
    cr_assert_eq(remedies_containing(orphaned, "atexit"), 0, "no frame names the atexit lock");
    cr_assert_eq(remedies_containing(orphaned, "OpenMP"), 0, "libgomp is not mapped");
    cr_assert_eq(remedies_containing(orphaned, "set_start_method"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    snapshot = child_asleep_at(0x55d2a0c4e040); /* the heap, after the program's own data */
    child = &snapshot->processes[1];
    add_mapping(child, 0x55d2a0c00000, 0x55d2a0c4e000, "rw-p", "/usr/bin/app");
    add_mapping(child, 0x55d2a0c4e000, 0x55d2a0c6f000, "rw-p", "[heap]");
    analysis = analyze(snapshot);
    cr_assert_eq(remedies_containing(the_finding(analysis, "orphaned-wait"), "atexit"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(remedies, openmp_choices_when_the_child_maps_libgomp)
{
    struct hd_snapshot *snapshot = child_asleep_at(0x55d2a0c4e040);
    add_mapping(&snapshot->processes[1], 0x7f1000000000, 0x7f1000040000, "r-xp",
                "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0");
    add_library(&snapshot->processes[1], 0x7f1000000000, 0x7f1000040000, "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0");
    thread_of(snapshot, 1600)->syscall.program_counter = 0x7f100001b64e; /* libgomp makes its futex calls itself */
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *orphaned = the_finding(analysis, "orphaned-wait");
    /* the catalogue's row for GNU OpenMP (report/catalogue.c) */
    cr_assert_eq(remedies_containing(orphaned, "OMP_NUM_THREADS=1"), 1);
    cr_assert_eq(remedies_containing(orphaned, "LLVM libomp or Intel libiomp5"), 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(remedies, python_pool_advice_when_the_parent_of_a_dead_worker_is_python)
{
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(remedies_containing(the_finding(analysis, "worker-died"), "ProcessPoolExecutor"), 0);
    report_analysis_free(analysis);
    strcpy(snapshot->processes[0].comm, "python3");
    analysis = analyze(snapshot);
    cr_assert_eq(remedies_containing(the_finding(analysis, "worker-died"), "BrokenProcessPool"), 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- scale: large OR-sets give the same answers, with edges linear in the threads --------------------------- */

#define POOL_THREADS 10000

/* One process: thread 5000 first, then POOL_THREADS threads each asleep on a futex of its own (an idle pool). */
static struct hd_snapshot *pool_of_idle_threads(void)
{
    struct hd_snapshot *snapshot = new_snapshot(5000);
    add_process(snapshot, 5000, 1, HD_ORIGIN_EXEC, 5000, POOL_THREADS + 1);
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
    EXPECT_IDS(analysis, "");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.nhangs, 1u, "one process, one knot");
    cr_assert_eq(analysis->verdict.tid, 5001, "the first thread of the knot that waits on a futex");
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
    add_process(snapshot, 7000, 1, HD_ORIGIN_EXEC, 7000, 5000);
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
    struct hd_process *parent = add_process(snapshot, 20000, 1, HD_ORIGIN_EXEC, 20000, 1);
    add_fd(parent, 3, HD_FD_PIPE, 4242, 0);
    reading(thread_of(snapshot, 20000), 3);
    for (pid_t c = 1; c <= CHILDREN; c++) {
        struct hd_process *child = add_process(snapshot, 20000 + 2 * c, 20000, HD_ORIGIN_EXEC, 20000 + 2 * c, 2);
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

/* ---- full pipes and mixed cycles ------------------------------------------------------------------------------ */

static void writing(struct hd_thread *thread, int fd)
{
    struct hd_wait *wait = asleep_in(thread, "write", HD_WAIT_WRITE, "write");
    wait->fd = fd;
    wait->fds[0] = fd;
    wait->nfds_known = 1;
}

/* Parent 2100 waits in wait4 for child 2200 (exec'd, say `python -c` through subprocess), which writes to pipe
 * 4242 whose read end only the parent holds: Popen(stdout=PIPE).wait() with more output than the pipe holds. */
static struct hd_snapshot *parent_waits_for_a_writer(void)
{
    struct hd_snapshot *snapshot = new_snapshot(2100);
    struct hd_process *parent = add_process(snapshot, 2100, 1, HD_ORIGIN_EXEC, 2100, 1);
    struct hd_process *child = add_process(snapshot, 2200, 2100, HD_ORIGIN_EXEC, 2200, 1);
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
    struct hd_wait *wait = asleep_in(thread_of(snapshot, 2100), "poll", HD_WAIT_POLL, "poll");
    wait->nfds = 1;
    wait->fds[0] = 3;
    wait->nfds_known = 1;
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 100000000 };
    thread_of(snapshot, 2100)->progressing = true; /* it reads between polls */
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
    struct hd_process *parent = add_process(snapshot, 2300, 1, HD_ORIGIN_EXEC, 2300, 1);
    struct hd_process *child = add_process(snapshot, 2400, 2300, HD_ORIGIN_FORKED, 2400, 2);
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
    struct hd_process *parent = add_process(snapshot, 2500, 1, HD_ORIGIN_EXEC, 2500, 2);
    struct hd_process *child = add_process(snapshot, 2600, 2500, HD_ORIGIN_EXEC, 2600, 1);
    add_fd(parent, 7, HD_FD_PIPE, 6161, 1);
    add_fd(child, 0, HD_FD_PIPE, 6161, 0);
    struct hd_wait *join = asleep_in_futex(thread_of(snapshot, 2500), 0x7f0000003000);
    join->lock = (struct hd_lock){ .kind = HD_LOCK_JOIN, .type = "join", .object_address = 0x7f0000003000,
                                   .word_read = true, .word = 2501, .owner_tid = 2501,
                                   .owner_whereabouts = HD_OWNER_SAME_PROCESS, .owner_pid = 2500 };
    in_wait4(thread_of(snapshot, 2501), 2600);
    reading(thread_of(snapshot, 2600), 0);
    struct report_analysis *analysis = analyze(snapshot);
    EXPECT_IDS(analysis, "wait-cycle");
    const struct report_finding *cycle = the_finding(analysis, "wait-cycle");
    cr_assert_eq(cycle->nmembers, 3u);
    cr_assert(strstr(cycle->summary, "3 threads wait on each other"), "%s", cycle->summary);
    cr_assert_str_eq(report_cause_name(analysis->verdict.cause), "deadlock");
    cr_assert_eq(analysis->verdict.nhangs, 1u);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* ---- timer-only-wakers (issue 13) ------------------------------------------------------------------------------ */

/* Process 7000: main thread 7000 asleep without timeout on a futex for `blocked_for_s`; thread 7001 a timer thread
 * (a timed futex wait, woke `wakeups` times while sampled, 1 ms of CPU); --stuck-after 60 s. */
static struct hd_snapshot *main_thread_behind_a_timer(double blocked_for_s, unsigned wakeups)
{
    struct hd_snapshot *snapshot = new_snapshot(7000);
    snapshot->stuck_after_s = 60;
    snapshot->sampling_s = 1.0;
    add_process(snapshot, 7000, 1, HD_ORIGIN_EXEC, 7000, 2);
    struct hd_thread *main_thread = thread_of(snapshot, 7000);
    asleep_in_futex(main_thread, 0x7f0000100040);
    main_thread->blocked_for_known = true;
    main_thread->blocked_for_s = blocked_for_s;
    struct hd_thread *timer = thread_of(snapshot, 7001);
    asleep_in_futex(timer, 0x7f0000100080)->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE,
                                                                          .remaining_ns = 100000000 };
    timer->blocked_for_known = true;
    timer->blocked_for_s = 0.05;
    timer->voluntary_switches_delta = wakeups;
    timer->progressing = wakeups > 0;
    timer->cpu_delta_ns = 1000000;
    return snapshot;
}

Test(timers, asleep_longer_than_the_threshold_behind_a_timer_is_likely_hung)
{
    struct hd_snapshot *snapshot = main_thread_behind_a_timer(60.5, 10);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *finding = the_finding(analysis, "timer-only-wakers");
    cr_assert_eq(finding->tid, 7000);
    cr_assert_eq(finding->confidence, REPORT_LIKELY);
    cr_assert(strstr(evidence_of(finding, "timer_waker"), "thread 7001 'thread7001'"), "%s",
              evidence_of(finding, "timer_waker"));
    cr_assert(strstr(evidence_of(finding, "timer_waker"), "woke 10 times in the 1.0 s sampled"));
    cr_assert_str_eq(root_cause_id(analysis), "timer-only-wakers");
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_YES);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(timers, just_under_the_threshold_is_not_hung)
{
    struct hd_snapshot *snapshot = main_thread_behind_a_timer(59.5, 10);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "timer-only-wakers"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* What keeps it "not hung": a timer not seen to fire (it may do anything when it does), a timer thread that does
 * more than wake (CPU), one that waits on the outside world, a thread that runs, the rule off (threshold 0), and a
 * waker that ran lately (the main thread of a scheduler woken by its timer). */
Test(timers, a_timer_that_did_not_fire_or_that_works_keeps_it_not_hung)
{
    for (int variant = 0; variant < 6; variant++) {
        struct hd_snapshot *snapshot = main_thread_behind_a_timer(120, variant == 0 ? 0 : 10);
        struct hd_thread *timer = thread_of(snapshot, 7001);
        if (variant == 1)
            timer->cpu_delta_ns = 200000000; /* 0.2 s of CPU in 1 s: it does work */
        if (variant == 2) {
            asleep_in(timer, "recvfrom", HD_WAIT_READ, NULL)->timeout =
                (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 100000000 };
            timer->wait.fd = 9; /* not in the process's table: something outside */
            timer->wait.fds[0] = 9;
            timer->wait.nfds_known = 1;
        }
        if (variant == 3) {
            timer->state = 'R';
            timer->samples_in_state_r = 2;
        }
        if (variant == 4)
            snapshot->stuck_after_s = 0;
        if (variant == 5) {
            /* a third thread, asleep without timeout but woken 0.3 s ago: wakeups reach this process */
            struct hd_process *process = &snapshot->processes[0];
            process->threads = realloc(process->threads, 3 * sizeof *process->threads);
            process->nthreads = 3;
            process->threads[2] = process->threads[0];
            process->threads[2].tid = 7002;
            process->threads[2].blocked_for_s = 0.3;
        }
        struct report_analysis *analysis = analyze(snapshot);
        cr_assert_eq(count_findings(analysis, "timer-only-wakers"), 0, "variant %d", variant);
        cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO, "variant %d", variant);
        report_analysis_free(analysis);
        hd_snapshot_free(snapshot);
    }
}

/* The main thread of a process in a timed loop is the program's own schedule, not a housekeeping timer: its idle
 * workers are not hung however long they wait (a pool idle between batches). */
Test(timers, idle_workers_of_a_main_thread_in_a_sleep_loop_are_not_hung)
{
    struct hd_snapshot *snapshot = new_snapshot(7100);
    snapshot->stuck_after_s = 60;
    snapshot->sampling_s = 1.0;
    add_process(snapshot, 7100, 1, HD_ORIGIN_EXEC, 7100, 3);
    struct hd_thread *main_thread = thread_of(snapshot, 7100);
    in_nanosleep(main_thread);
    main_thread->voluntary_switches_delta = 5;
    for (pid_t tid = 7101; tid <= 7102; tid++) {
        struct hd_thread *worker = thread_of(snapshot, tid);
        asleep_in_futex(worker, 0x7f0000200000 + 0x40 * (uint64_t)tid);
        worker->blocked_for_known = true;
        worker->blocked_for_s = 3600;
    }
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(count_findings(analysis, "timer-only-wakers"), 0);
    cr_assert_eq(analysis->verdict.hung, REPORT_HUNG_NO);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
