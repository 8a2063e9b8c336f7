/* The wait-for graph (analysis.h): for every thread, who could wake it; then who can never run again.
 *
 * Edges go from a waiting thread to each thread that could wake it (DESIGN.md, "How a hang is recognised"). A
 * thread that runs, or waits with a timeout, or on something outside the snapshot, may run again; so may any
 * thread with an edge to one that may. Whatever is left after that fixpoint is asleep forever: a knot in the
 * OR-graph, of which a cycle of lock owners is the special case.
 */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

#define NO_NODE ((size_t)-1)

struct builder {
    const struct hd_snapshot *snapshot;
    struct report_graph *graph;
    size_t edge_cap;
    struct tid_index {
        pid_t tid;
        size_t node;
    } *index;
    bool failed;
};

static int compare_tid_index(const void *a, const void *b)
{
    const struct tid_index *x = a, *y = b;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

size_t report_graph_find(const struct report_graph *graph, pid_t tid)
{
    for (size_t i = 0; i < graph->nnodes; i++)
        if (graph->nodes[i].thread->tid == tid)
            return i;
    return NO_NODE;
}

static size_t node_of(const struct builder *b, pid_t tid)
{
    struct tid_index key = { .tid = tid };
    const struct tid_index *found = bsearch(&key, b->index, b->graph->nnodes, sizeof key, compare_tid_index);
    return found ? found->node : NO_NODE;
}

static void add_edge(struct builder *b, size_t from, size_t to, enum report_edge_kind kind)
{
    /* A thread cannot wake itself; the one self-edge kept is a lock it owns itself (a mutex locked twice). */
    if ((from == to && kind != REPORT_EDGE_LOCK_OWNER) || to == NO_NODE || b->failed)
        return;
    struct report_graph *graph = b->graph;
    if (graph->nedges == b->edge_cap) {
        size_t cap = b->edge_cap ? b->edge_cap * 2 : 64;
        struct report_edge *grown = reallocarray(graph->edges, cap, sizeof *grown);
        if (!grown) {
            b->failed = true;
            return;
        }
        graph->edges = grown;
        b->edge_cap = cap;
    }
    graph->edges[graph->nedges++] = (struct report_edge){ .from = from, .to = to, .kind = kind };
}

static void add_edges_to_process(struct builder *b, size_t from, const struct hd_process *process,
                                 enum report_edge_kind kind)
{
    for (size_t t = 0; t < process->nthreads; t++)
        add_edge(b, from, node_of(b, process->threads[t].tid), kind);
}

/* ---- futexes ------------------------------------------------------------------------------------------------- */

/* Does `process` map the object that `mapping` + `address` points into (same file or shm object, same offset)? */
static bool maps_same_object(const struct hd_process *process, const struct hd_mapping *mapping, uint64_t address)
{
    uint64_t object_offset = address - mapping->start + mapping->offset;
    for (size_t m = 0; m < process->nmappings; m++) {
        const struct hd_mapping *other = &process->mappings[m];
        if (other->permissions[3] == 's' && other->inode == mapping->inode &&
            other->device_major == mapping->device_major && other->device_minor == mapping->device_minor &&
            object_offset >= other->offset && object_offset < other->offset + (other->end - other->start))
            return true;
    }
    return false;
}

/* Edges to whoever could wake a futex waiter; false when that may be someone outside the snapshot. */
static bool futex_edges(struct builder *b, size_t from, const struct hd_process *process, const struct hd_wait *wait)
{
    const struct hd_lock *lock = &wait->lock;
    bool shared = wait->mapping_kind == HD_MAPPING_SHARED;
    if (lock->kind == HD_LOCK_JOIN) {
        add_edge(b, from, node_of(b, lock->owner_tid), REPORT_EDGE_JOIN);
        return true;
    }
    if (lock->kind != HD_LOCK_UNKNOWN) {
        /* Only the owner can release it, and only if it reaches this memory: its own process, or a process that
         * maps the same shared object. An owner in another process holding a private copy never will. */
        if (shared && lock->owner_whereabouts == HD_OWNER_OUTSIDE)
            return false;
        bool reachable = lock->owner_whereabouts == HD_OWNER_SAME_PROCESS ||
                         (shared && lock->owner_whereabouts == HD_OWNER_OTHER_PROCESS);
        if (reachable)
            add_edge(b, from, node_of(b, lock->owner_tid), REPORT_EDGE_LOCK_OWNER);
        return true;
    }
    if (!shared) {
        add_edges_to_process(b, from, process, REPORT_EDGE_FUTEX);
        return true;
    }
    /* a shared object that no other process of the snapshot maps is shared with someone outside it */
    bool others = false;
    for (size_t p = 0; p < b->snapshot->nprocesses; p++) {
        const struct hd_process *other = &b->snapshot->processes[p];
        bool same_object = other != process && maps_same_object(other, &wait->mapping, wait->address);
        others |= same_object;
        if (other == process || same_object)
            add_edges_to_process(b, from, other, REPORT_EDGE_FUTEX);
    }
    return others;
}

/* ---- pipes and sockets --------------------------------------------------------------------------------------- */

static uint64_t unix_peer_of(const struct hd_snapshot *snapshot, uint64_t inode)
{
    size_t low = 0, high = snapshot->nunix_peers;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (snapshot->unix_peers[middle].inode == inode)
            return snapshot->unix_peers[middle].peer_inode;
        if (snapshot->unix_peers[middle].inode < inode)
            low = middle + 1;
        else
            high = middle;
    }
    return 0;
}

/* Can an fd opened with access `mode` do the opposite of what the waiter does (write for a reader)? */
static bool can_serve(int mode, bool waiter_reads)
{
    if (mode < 0 || mode == 2 /* O_RDWR */)
        return true;
    return waiter_reads ? mode == 1 /* O_WRONLY */ : mode == 0 /* O_RDONLY */;
}

/* Edges to every process holding `inode` (a pipe: with the opposite access); true when one was found. */
static bool holder_edges(struct builder *b, size_t from, uint64_t inode, enum hd_fd_kind kind, bool waiter_reads,
                         enum report_edge_kind edge)
{
    bool found = false;
    for (size_t p = 0; p < b->snapshot->nprocesses; p++) {
        const struct hd_process *holder = &b->snapshot->processes[p];
        for (size_t f = 0; f < holder->nfds; f++) {
            const struct hd_fd *fd = &holder->fds[f];
            if (fd->kind != kind || fd->inode != inode)
                continue;
            if (kind == HD_FD_PIPE && !can_serve(fd->access_mode, waiter_reads))
                continue;
            add_edges_to_process(b, from, holder, edge);
            found = true;
            break;
        }
    }
    return found;
}

/* Edges for one fd waited on; false when what could wake it is outside the snapshot. */
static bool fd_edges(struct builder *b, size_t from, const struct hd_process *process, int number, bool reads)
{
    const struct hd_fd *fd = hd_process_find_fd(process, number);
    if (!fd)
        return false;
    if (fd->kind == HD_FD_PIPE)
        return holder_edges(b, from, fd->inode, HD_FD_PIPE, reads, REPORT_EDGE_PIPE);
    if (fd->kind == HD_FD_SOCKET) {
        uint64_t peer = unix_peer_of(b->snapshot, fd->inode);
        return peer && holder_edges(b, from, peer, HD_FD_SOCKET, reads, REPORT_EDGE_SOCKET);
    }
    return false; /* a file, a tty, an eventfd...: not something hangdoc can follow */
}

/* ---- children ------------------------------------------------------------------------------------------------ */

static bool child_edges(struct builder *b, size_t from, const struct hd_process *process, const struct hd_wait *wait)
{
    bool found = false;
    for (size_t p = 0; p < b->snapshot->nprocesses; p++) {
        const struct hd_process *child = &b->snapshot->processes[p];
        if (child->ppid != process->pid || child == process)
            continue;
        if (wait->child_selector == HD_CHILD_PID && child->pid != wait->child)
            continue;
        add_edges_to_process(b, from, child, REPORT_EDGE_CHILD);
        found = true;
    }
    return found;
}

/* ---- each thread --------------------------------------------------------------------------------------------- */

/* The wake state before edges are followed; REPORT_WAKE_WAKER means "decided by its edges". */
static enum report_wake initial_wake(const struct hd_thread *thread)
{
    if (thread->state == 'Z' || thread->state == 'X')
        return REPORT_WAKE_EXITED;
    if (thread->progressing || thread->state == 'R' || thread->syscall.state == HD_SYSCALL_RUNNING)
        return REPORT_WAKE_RUNNING;
    if (strchr("DTtP", thread->state) || thread->syscall.state != HD_SYSCALL_IN)
        return REPORT_WAKE_KERNEL;
    const struct hd_wait *wait = &thread->wait;
    switch (wait->kind) {
    case HD_WAIT_NONE:
    case HD_WAIT_OTHER:
    case HD_WAIT_LOCK:
    case HD_WAIT_ACCEPT:
    case HD_WAIT_CONNECT:
        return REPORT_WAKE_OUTSIDE;
    case HD_WAIT_SLEEP:
        return REPORT_WAKE_TIMER;
    case HD_WAIT_SIGNAL:
        return wait->timeout.kind == HD_TIMEOUT_NONE ? REPORT_WAKE_NEVER : REPORT_WAKE_TIMER;
    default:
        break;
    }
    if (wait->timeout.kind == HD_TIMEOUT_FINITE || wait->timeout.kind == HD_TIMEOUT_UNREADABLE)
        return REPORT_WAKE_TIMER;
    return REPORT_WAKE_WAKER;
}

/* Adds the edges of one thread; returns its wake state before the fixpoint. Edges are added for timed waits too:
 * a poll loop that times out forever on a hung worker is the rules' business. */
static enum report_wake thread_edges(struct builder *b, size_t node)
{
    const struct report_node *n = &b->graph->nodes[node];
    const struct hd_wait *wait = &n->thread->wait;
    enum report_wake wake = initial_wake(n->thread);
    if (n->thread->syscall.state != HD_SYSCALL_IN || wake == REPORT_WAKE_EXITED)
        return wake;
    bool outside = false;
    switch (wait->kind) {
    case HD_WAIT_FUTEX:
        if (wait->operation && strcmp(wait->operation, "futex_waitv") == 0)
            outside = true; /* several futexes, not decoded */
        else
            outside = !futex_edges(b, node, n->process, wait);
        break;
    case HD_WAIT_READ:
    case HD_WAIT_WRITE:
    case HD_WAIT_POLL:
        /* poll(NULL, 0, -1) has nothing to wake it; poll on fds it could not read is outside our sight */
        if (wait->kind == HD_WAIT_POLL && wait->nfds_known == 0 && wait->nfds > 0)
            outside = true;
        for (unsigned i = 0; i < wait->nfds_known; i++)
            outside |= !fd_edges(b, node, n->process, wait->fds[i], wait->kind != HD_WAIT_WRITE);
        outside |= wait->fds_truncated;
        break;
    case HD_WAIT_CHILD:
        outside = !child_edges(b, node, n->process, wait);
        break;
    default:
        break;
    }
    return wake == REPORT_WAKE_WAKER && outside ? REPORT_WAKE_OUTSIDE : wake;
}

static bool may_run(enum report_wake wake)
{
    return wake != REPORT_WAKE_NEVER && wake != REPORT_WAKE_EXITED && wake != REPORT_WAKE_WAKER;
}

/* Pending nodes (WAKER) that have an edge to a node that may run may run too; the rest never will. */
static void settle(struct report_graph *graph, bool *woken)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t e = 0; e < graph->nedges; e++) {
            const struct report_edge *edge = &graph->edges[e];
            if (graph->nodes[edge->from].wake != REPORT_WAKE_WAKER || woken[edge->from])
                continue;
            enum report_wake target = graph->nodes[edge->to].wake;
            if (may_run(target) || woken[edge->to]) {
                woken[edge->from] = true;
                changed = true;
            }
        }
    }
    for (size_t i = 0; i < graph->nnodes; i++)
        if (graph->nodes[i].wake == REPORT_WAKE_WAKER && !woken[i])
            graph->nodes[i].wake = REPORT_WAKE_NEVER;
}

bool report_build_graph(const struct hd_snapshot *snapshot, struct report_graph *graph)
{
    *graph = (struct report_graph){ 0 };
    size_t count = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        count += snapshot->processes[p].nthreads;
    graph->nodes = calloc(count ? count : 1, sizeof *graph->nodes);
    struct builder b = { .snapshot = snapshot, .graph = graph, .index = calloc(count ? count : 1, sizeof *b.index) };
    if (!graph->nodes || !b.index) {
        free(b.index);
        report_graph_release(graph);
        return false;
    }
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        for (size_t t = 0; t < snapshot->processes[p].nthreads; t++) {
            const struct hd_thread *thread = &snapshot->processes[p].threads[t];
            graph->nodes[graph->nnodes] = (struct report_node){
                .process = &snapshot->processes[p],
                .thread = thread,
                .blocked_without_timeout = thread->syscall.state == HD_SYSCALL_IN &&
                                           thread->wait.kind != HD_WAIT_OTHER &&
                                           thread->wait.kind != HD_WAIT_NONE &&
                                           thread->wait.timeout.kind == HD_TIMEOUT_NONE,
            };
            b.index[graph->nnodes] = (struct tid_index){ .tid = thread->tid, .node = graph->nnodes };
            graph->nnodes++;
        }
    qsort(b.index, graph->nnodes, sizeof *b.index, compare_tid_index);
    for (size_t i = 0; i < graph->nnodes; i++)
        graph->nodes[i].wake = thread_edges(&b, i);
    free(b.index);
    bool *woken = calloc(graph->nnodes ? graph->nnodes : 1, sizeof *woken);
    if (!woken || b.failed) {
        free(woken);
        report_graph_release(graph);
        return false;
    }
    settle(graph, woken);
    free(woken);
    return true;
}

void report_graph_release(struct report_graph *graph)
{
    free(graph->nodes);
    free(graph->edges);
    *graph = (struct report_graph){ 0 };
}
