/* The wait-for graph (analysis.h): for every thread, who could wake it; then who can never run again.
 *
 * Edges go from a waiting thread to each thread that could wake it (DESIGN.md, "How a hang is recognised"). A
 * thread that runs, or waits with a timeout, or on something outside the snapshot, may run again; so may any
 * thread with an edge to one that may. Whatever is left after that fixpoint is asleep forever: a knot in the
 * OR-graph, of which a cycle of lock owners is the special case.
 *
 * Everything here is linear in threads + processes + edges: an OR-set ("any thread of this process") is one edge
 * to the process, the descriptors and shared mappings of the whole tree are indexed once instead of scanned for
 * each waiter, and the fixpoint is a worklist that visits each edge once.
 */
#include "analysis.h"
#include "gil.h"
#include "python_view.h"
#include "signals.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Where each pipe or socket inode is held, and each shared file or shm object mapped, across the snapshot. */
struct fd_holder {
    uint64_t inode;
    enum hd_fd_kind kind;
    int access_mode;
    size_t process;
};

struct shared_mapping {
    unsigned device_major, device_minor;
    uint64_t inode;
    uint64_t offset, length;
    size_t process;
};

struct builder {
    const struct hd_snapshot *snapshot;
    struct report_graph *graph;
    size_t edge_cap;
    struct fd_holder *holders;
    size_t nholders;
    struct shared_mapping *shared;
    size_t nshared;
    bool failed;
};

static int compare_tid_index(const void *a, const void *b)
{
    const struct report_tid_index *x = a, *y = b;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

size_t report_graph_find(const struct report_graph *graph, pid_t tid)
{
    struct report_tid_index key = { .tid = tid };
    const struct report_tid_index *found =
        graph->by_tid ? bsearch(&key, graph->by_tid, graph->nnodes, sizeof key, compare_tid_index) : NULL;
    return found ? found->node : REPORT_NO_NODE;
}

const struct report_graph_process *report_graph_process_of(const struct report_graph *graph,
                                                           const struct hd_process *process)
{
    if (graph->nprocesses == 0)
        return NULL;
    const struct hd_process *first = graph->processes[0].process;
    if (process < first || process >= first + graph->nprocesses)
        return NULL;
    return &graph->processes[process - first];
}

bool report_waits_for_a_signal_by_design(const struct report_node *node)
{
    return node->thread->wait.kind == HD_WAIT_SIGNAL ||
           report_signals_by_design(node->process, node->wake_signals) != 0;
}

const struct hd_thread *report_graph_thread(const struct report_graph *graph, pid_t tid,
                                            const struct hd_process **process)
{
    size_t node = report_graph_find(graph, tid);
    if (process)
        *process = node != REPORT_NO_NODE ? graph->nodes[node].process : NULL;
    return node != REPORT_NO_NODE ? graph->nodes[node].thread : NULL;
}

const struct hd_thread *report_process_thread(const struct report_graph *graph, const struct hd_process *process,
                                              size_t t)
{
    const struct report_graph_process *entry = report_graph_process_of(graph, process);
    if (!entry || t >= entry->nnodes)
        return &process->threads[t];
    return graph->nodes[entry->first_node + t].thread;
}

static void add_edge(struct builder *b, size_t from, size_t to, enum report_edge_kind kind,
                     enum report_target target)
{
    struct report_graph *graph = b->graph;
    if (to == REPORT_NO_NODE || b->failed)
        return;
    if (target == REPORT_TO_THREAD && from == to && kind != REPORT_EDGE_LOCK_OWNER)
        return; /* a thread cannot wake itself; the one self-edge kept is a lock it owns itself (locked twice) */
    if (target == REPORT_TO_PROCESS) {
        /* an OR-set of nobody but the waiter is no edge */
        const struct report_graph_process *process = &graph->processes[to];
        if (process->nnodes == 0 || (process->nnodes == 1 && process->first_node == from))
            return;
    }
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
    graph->edges[graph->nedges++] = (struct report_edge){ .from = from, .to = to, .kind = kind, .target = target };
}

static size_t process_index(const struct builder *b, const struct hd_process *process)
{
    return (size_t)(process - b->snapshot->processes);
}

/* ---- indexes over the whole snapshot ------------------------------------------------------------------------- */

static int compare_holders(const void *a, const void *b)
{
    const struct fd_holder *x = a, *y = b;
    if (x->inode != y->inode)
        return x->inode < y->inode ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return (x->process > y->process) - (x->process < y->process);
}

static int compare_shared(const void *a, const void *b)
{
    const struct shared_mapping *x = a, *y = b;
    if (x->inode != y->inode)
        return x->inode < y->inode ? -1 : 1;
    if (x->device_major != y->device_major)
        return x->device_major < y->device_major ? -1 : 1;
    if (x->device_minor != y->device_minor)
        return x->device_minor < y->device_minor ? -1 : 1;
    return (x->process > y->process) - (x->process < y->process);
}

/* Every pipe and socket descriptor, and every shared mapping, of the snapshot, sorted for lookups. */
static bool build_indexes(struct builder *b)
{
    const struct hd_snapshot *snapshot = b->snapshot;
    size_t fds = 0, mappings = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        fds += snapshot->processes[p].nfds;
        mappings += snapshot->processes[p].nmappings;
    }
    b->holders = calloc(fds ? fds : 1, sizeof *b->holders);
    b->shared = calloc(mappings ? mappings : 1, sizeof *b->shared);
    if (!b->holders || !b->shared)
        return false;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        for (size_t f = 0; f < process->nfds; f++) {
            const struct hd_fd *fd = &process->fds[f];
            if (fd->kind == HD_FD_PIPE || fd->kind == HD_FD_SOCKET)
                b->holders[b->nholders++] = (struct fd_holder){
                    .inode = fd->inode, .kind = fd->kind, .access_mode = fd->access_mode, .process = p };
        }
        for (size_t m = 0; m < process->nmappings; m++) {
            const struct hd_mapping *mapping = &process->mappings[m];
            if (mapping->permissions[3] == 's')
                b->shared[b->nshared++] = (struct shared_mapping){
                    .device_major = mapping->device_major, .device_minor = mapping->device_minor,
                    .inode = mapping->inode, .offset = mapping->offset, .length = mapping->end - mapping->start,
                    .process = p };
        }
    }
    if (b->nholders)
        qsort(b->holders, b->nholders, sizeof *b->holders, compare_holders);
    if (b->nshared)
        qsort(b->shared, b->nshared, sizeof *b->shared, compare_shared);
    return true;
}

/* ---- futexes ------------------------------------------------------------------------------------------------- */

/* The first shared mapping of the index with this object, or nshared. */
static size_t first_shared(const struct builder *b, const struct hd_mapping *mapping)
{
    struct shared_mapping key = { .device_major = mapping->device_major, .device_minor = mapping->device_minor,
                                  .inode = mapping->inode, .process = 0 };
    return hd_lower_bound(&key, b->shared, b->nshared, sizeof *b->shared, compare_shared);
}

/* Edges to whoever could wake a futex waiter; false when that may be someone outside the snapshot. */
static bool futex_edges(struct builder *b, size_t from, const struct hd_process *process, const struct hd_wait *wait)
{
    const struct hd_lock *lock = &wait->lock;
    bool shared = wait->mapping_kind == HD_MAPPING_SHARED;
    if (lock->kind == HD_LOCK_JOIN) {
        add_edge(b, from, report_graph_find(b->graph, lock->owner_tid), REPORT_EDGE_JOIN, REPORT_TO_THREAD);
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
            add_edge(b, from, report_graph_find(b->graph, lock->owner_tid), REPORT_EDGE_LOCK_OWNER,
                     REPORT_TO_THREAD);
        return true;
    }
    size_t own = process_index(b, process);
    add_edge(b, from, own, REPORT_EDGE_FUTEX, REPORT_TO_PROCESS);
    if (!shared)
        return true;
    /* any other process that maps the same object at the same offset; one that none maps is shared with someone
     * outside the snapshot */
    const struct hd_mapping *mapping = &wait->mapping;
    uint64_t object_offset = wait->address - mapping->start + mapping->offset;
    bool others = false;
    size_t last = own;
    for (size_t i = first_shared(b, mapping); i < b->nshared; i++) {
        const struct shared_mapping *other = &b->shared[i];
        if (other->inode != mapping->inode || other->device_major != mapping->device_major ||
            other->device_minor != mapping->device_minor)
            break;
        if (other->process == own || other->process == last || object_offset < other->offset ||
            object_offset >= other->offset + other->length)
            continue;
        add_edge(b, from, other->process, REPORT_EDGE_FUTEX, REPORT_TO_PROCESS);
        others = true;
        last = other->process;
    }
    return others;
}

/* ---- pipes and sockets --------------------------------------------------------------------------------------- */

HD_KEY_COMPARATOR(compare_peer_inode, uint64_t, struct hd_socket_peer, .inode)

static uint64_t unix_peer_of(const struct hd_snapshot *snapshot, uint64_t inode)
{
    size_t at = hd_lower_bound(&inode, snapshot->unix_peers, snapshot->nunix_peers, sizeof *snapshot->unix_peers,
                               compare_peer_inode);
    return at < snapshot->nunix_peers && snapshot->unix_peers[at].inode == inode ? snapshot->unix_peers[at].peer_inode
                                                                               : 0;
}

/* Can an fd opened with access `mode` do the opposite of what the waiter does (write for a reader)? */
static bool can_serve(int mode, bool waiter_reads)
{
    if (mode < 0 || mode == 2 /* O_RDWR */)
        return true;
    return waiter_reads ? mode == 1 /* O_WRONLY */ : mode == 0 /* O_RDONLY */;
}

/* Edges to every process holding `inode` (a pipe: with the opposite access); true when one was found. *only_own
 * (when not NULL) says whether the waiter's own process `own` was the only one. */
static bool holder_edges(struct builder *b, size_t from, uint64_t inode, enum hd_fd_kind kind, bool waiter_reads,
                         enum report_edge_kind edge, size_t own, bool *only_own)
{
    struct fd_holder key = { .inode = inode, .kind = kind, .process = 0 };
    size_t low = hd_lower_bound(&key, b->holders, b->nholders, sizeof *b->holders, compare_holders);
    bool found = false;
    size_t last = REPORT_NO_NODE;
    for (size_t i = low; i < b->nholders && b->holders[i].inode == inode && b->holders[i].kind == kind; i++) {
        const struct fd_holder *holder = &b->holders[i];
        if (holder->process == last || (kind == HD_FD_PIPE && !can_serve(holder->access_mode, waiter_reads)))
            continue;
        add_edge(b, from, holder->process, edge, REPORT_TO_PROCESS);
        if (only_own)
            *only_own = (found ? *only_own : true) && holder->process == own;
        found = true;
        last = holder->process;
    }
    return found;
}

/* A relay's listening socket: Python's forkserver accepts a connection only from the process that started it (or
 * one of the processes it forked, which inherit the address), asking for a new child; nobody else knows the
 * address. Its wakers are those processes, not the outside world. */
static bool relay_listener_edges(struct builder *b, size_t from, const struct hd_process *process)
{
    if (process->python_role != HD_PYTHON_ROLE_FORKSERVER)
        return false;
    bool found = false;
    for (size_t p = 0; p < b->snapshot->nprocesses; p++) {
        const struct hd_process *other = &b->snapshot->processes[p];
        if (other == process || (other->pid != process->ppid && other->ppid != process->pid))
            continue;
        add_edge(b, from, p, REPORT_EDGE_SOCKET, REPORT_TO_PROCESS);
        found = true;
    }
    return found;
}

/* A pseudo-terminal's other side: what a slave's writer waits to be read (and its reader waits to be written) by
 * the processes that hold its master, and a master's waiter by those that hold one of its slaves. One edge per
 * such process; false when none is in the snapshot (a terminal emulator or sshd outside the tree). Linear in the
 * snapshot's fds for each waiter on a pty, which are few. */
static bool pty_edges(struct builder *b, size_t from, const struct hd_fd *fd)
{
    bool found = false;
    for (size_t p = 0; p < b->snapshot->nprocesses; p++) {
        const struct hd_process *other = &b->snapshot->processes[p];
        for (size_t f = 0; f < other->nfds; f++) {
            const struct hd_fd *end = &other->fds[f];
            if (!end->pty || end->pty_master == fd->pty_master || end->pty_index != fd->pty_index)
                continue;
            add_edge(b, from, p, REPORT_EDGE_PTY, REPORT_TO_PROCESS);
            found = true;
            break;
        }
    }
    return found;
}

/* ---- FUSE ------------------------------------------------------------------------------------------------------ */

/* A thread in a FUSE call waits for the file system's daemon (probe/fuse.h): for the daemon's threads at work on
 * requests, one of which has its request (or the one holding what it needs); a thread idle in its read of /dev/fuse
 * has none. When none is at work, any thread of the daemon may still answer (a daemon that replies from another
 * thread than the one that read). *outside when the daemon is a process outside the snapshot; false when it is not
 * known (then the wait stays the kernel's). */
/* The functions of FUSE libraries whose thread waits for the worker threads and answers no request itself:
 * libfuse 3's and 2's multi-threaded loops, whose calling thread waits on a semaphore until the session ends. */
static const char *const fuse_supervisors[] = { "fuse_session_loop_mt", "fuse_loop_mt" };

static bool supervises_fuse_workers(const struct hd_thread *thread)
{
    if (thread->fuse.in_call || thread->stack.state != HD_STACK_TAKEN)
        return false;
    for (size_t f = 0; f < thread->stack.nframes; f++) {
        const char *symbol = thread->stack.frames[f].symbol;
        for (size_t s = 0; symbol && s < COUNT(fuse_supervisors); s++)
            if (strncmp(symbol, fuse_supervisors[s], strlen(fuse_supervisors[s])) == 0)
                return true;
    }
    return false;
}

static bool fuse_edges(struct builder *b, size_t from, const struct hd_fuse_call *call, bool *outside)
{
    *outside = false;
    if (!call->daemon_pid)
        return false;
    const struct hd_process *daemon = hd_snapshot_find_process(b->snapshot, call->daemon_pid);
    if (!daemon) {
        *outside = true;
        return true;
    }
    size_t p = process_index(b, daemon);
    const struct report_graph_process *graph_process = &b->graph->processes[p];
    bool busy = false;
    for (size_t t = 0; t < daemon->nthreads; t++) {
        const struct hd_thread *thread = &daemon->threads[t];
        if (thread->fuse.reads_requests || thread->state == 'Z' || thread->state == 'X' ||
            supervises_fuse_workers(thread))
            continue;
        add_edge(b, from, graph_process->first_node + t, REPORT_EDGE_FUSE, REPORT_TO_THREAD);
        busy = true;
    }
    if (!busy)
        add_edge(b, from, p, REPORT_EDGE_FUSE, REPORT_TO_PROCESS);
    return true;
}

/* Edges for one fd waited on; false when what could wake it is outside the snapshot. A signalfd, or a pipe or
 * socket pair that only the waiter's own process holds the other end of (a signal handler's self-pipe), adds the
 * signals that can end the wait to *signals. */
static bool fd_edges(struct builder *b, size_t from, const struct hd_process *process, int number, bool reads,
                     uint64_t *signals)
{
    const struct hd_fd *fd = hd_process_find_fd(process, number);
    if (!fd)
        return false;
    if (fd->signalfd_mask && reads) {
        *signals |= fd->signalfd_mask;
        return true;
    }
    if (fd->pty)
        return pty_edges(b, from, fd);
    if (fd->kind == HD_FD_PIPE) {
        bool only_own = false;
        bool found = holder_edges(b, from, fd->inode, HD_FD_PIPE, reads, REPORT_EDGE_PIPE, process_index(b, process),
                                  &only_own);
        if (found && only_own && reads)
            *signals |= report_signals_caught(process);
        return found;
    }
    if (fd->kind == HD_FD_SOCKET) {
        uint64_t peer = unix_peer_of(b->snapshot, fd->inode);
        if (!peer)
            return reads && relay_listener_edges(b, from, process);
        /* a socket pair only its own process holds is a self-pipe too: asyncio's, given to signal.set_wakeup_fd */
        bool only_own = false;
        bool found = holder_edges(b, from, peer, HD_FD_SOCKET, reads, REPORT_EDGE_SOCKET, process_index(b, process),
                                  &only_own);
        if (found && only_own && reads)
            *signals |= report_signals_caught(process);
        return found;
    }
    return false; /* a file, a tty, an eventfd...: not something hangdoc can follow */
}

/* ---- signals ------------------------------------------------------------------------------------------------- */

/* Edges for the signals that end a wait: SIGCHLD from every child that has not exited yet (its exit sends it). True
 * when a timer of the process may deliver one of them (signals.h): then the wait is a timed one. */
static bool signal_edges(struct builder *b, size_t from, const struct hd_process *process, uint64_t signals)
{
    if (signals & REPORT_SIGNAL_BIT(SIGCHLD))
        for (size_t p = 0; p < b->snapshot->nprocesses; p++) {
            const struct hd_process *child = &b->snapshot->processes[p];
            if (child->ppid == process->pid && child != process && !child->zombie)
                add_edge(b, from, p, REPORT_EDGE_SIGNAL, REPORT_TO_PROCESS);
        }
    return (signals & report_timer_signals(process)) != 0;
}

/* ---- children ------------------------------------------------------------------------------------------------ */

static bool child_edges(struct builder *b, size_t from, const struct hd_process *process, const struct hd_wait *wait)
{
    bool found = false;
    if (wait->child_selector == HD_CHILD_PID) {
        const struct hd_process *child = hd_snapshot_find_process(b->snapshot, wait->child);
        if (!child || child->ppid != process->pid || child == process)
            return false;
        add_edge(b, from, process_index(b, child), REPORT_EDGE_CHILD, REPORT_TO_PROCESS);
        return true;
    }
    for (size_t p = 0; p < b->snapshot->nprocesses; p++) {
        const struct hd_process *child = &b->snapshot->processes[p];
        if (child->ppid != process->pid || child == process)
            continue;
        add_edge(b, from, p, REPORT_EDGE_CHILD, REPORT_TO_PROCESS);
        found = true;
    }
    return found;
}

/* ---- each thread --------------------------------------------------------------------------------------------- */

/* The wake state before edges are followed; REPORT_WAKE_WAKER means "decided by its edges". */
/* A thread in take_gil() waits on a timer (5 ms) only to ask the holder to let go, and counts context switches
 * doing it: neither is progress of its own. Only the GIL's holder frees it. */
static bool waits_for_gil_holder(const struct hd_thread *thread)
{
    return thread->syscall.state == HD_SYSCALL_IN && thread->wait.kind == HD_WAIT_FUTEX &&
           thread->wait.lock.kind == HD_LOCK_GIL && thread->wait.lock.owner_tid > 0;
}

/* An edge to the process holding the file lock a thread waits for; false when that is not a process of the
 * snapshot (outside, gone, unknown). */
static bool file_lock_edges(struct builder *b, size_t from, const struct hd_wait *wait)
{
    if (wait->lock.kind != HD_LOCK_FILE)
        return false;
    const struct hd_process *holder = hd_snapshot_find_process(b->snapshot, wait->lock.owner_pid);
    if (!holder)
        return false;
    add_edge(b, from, process_index(b, holder), REPORT_EDGE_FILE_LOCK, REPORT_TO_PROCESS);
    return true;
}

static enum report_wake initial_wake(const struct report_node *node)
{
    const struct hd_thread *thread = node->thread;
    if (thread->state == 'Z' || thread->state == 'X')
        return REPORT_WAKE_EXITED;
    if (waits_for_gil_holder(thread))
        return REPORT_WAKE_WAKER;
    if (node->history.progressing || thread->state == 'R' || thread->syscall.state == HD_SYSCALL_RUNNING)
        return REPORT_WAKE_RUNNING;
    /* a frozen process runs again when its cgroup is thawed, whatever its threads wait for */
    if (strchr("DTtP", thread->state) || thread->syscall.state != HD_SYSCALL_IN || node->process->frozen)
        return REPORT_WAKE_KERNEL;
    const struct hd_wait *wait = &thread->wait;
    switch (wait->kind) {
    case HD_WAIT_LOCK:
        /* a file lock whose holder is a process of the snapshot: that process's threads can release it */
        if (wait->lock.kind == HD_LOCK_FILE && (wait->lock.owner_whereabouts == HD_OWNER_SAME_PROCESS ||
                                                wait->lock.owner_whereabouts == HD_OWNER_OTHER_PROCESS))
            break;
        return REPORT_WAKE_OUTSIDE;
    case HD_WAIT_NONE:
    case HD_WAIT_OTHER:
    case HD_WAIT_ACCEPT:
    case HD_WAIT_CONNECT:
        return REPORT_WAKE_OUTSIDE;
    case HD_WAIT_SLEEP:
        return REPORT_WAKE_TIMER;
    case HD_WAIT_SIGNAL:
        /* without a timeout, decided by the senders of the signals that end it (signal_edges) */
        return wait->timeout.kind == HD_TIMEOUT_NONE ? REPORT_WAKE_WAKER : REPORT_WAKE_TIMER;
    case HD_WAIT_FUTEX:
    case HD_WAIT_POLL:
    case HD_WAIT_READ:
    case HD_WAIT_WRITE:
    case HD_WAIT_CHILD:
        break; /* by its timeout, and by who could wake it (thread_edges) */
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
    enum report_wake wake = initial_wake(n);
    if (wake == REPORT_WAKE_EXITED)
        return wake;
    /* in a FUSE call (S or D): the daemon answers it, whatever the system call was */
    bool fuse_outside = false;
    if (n->thread->fuse.in_call && !n->process->frozen && wake != REPORT_WAKE_RUNNING &&
        fuse_edges(b, node, &n->thread->fuse, &fuse_outside)) {
        b->graph->nodes[node].waits_outside = fuse_outside;
        return fuse_outside ? REPORT_WAKE_OUTSIDE : REPORT_WAKE_WAKER;
    }
    if (n->thread->syscall.state != HD_SYSCALL_IN)
        return wake;
    bool outside = false;
    uint64_t signals = 0;
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
            outside |= !fd_edges(b, node, n->process, wait->fds[i], wait->kind != HD_WAIT_WRITE, &signals);
        outside |= wait->fds_truncated;
        break;
    case HD_WAIT_SIGNAL:
        signals = report_signal_wait_ends_on(n->process, n->thread);
        break;
    case HD_WAIT_CHILD:
        outside = !child_edges(b, node, n->process, wait);
        break;
    case HD_WAIT_LOCK:
        outside = !file_lock_edges(b, node, wait);
        break;
    case HD_WAIT_NONE:
    case HD_WAIT_OTHER:
    case HD_WAIT_ACCEPT:
    case HD_WAIT_CONNECT:
    case HD_WAIT_SLEEP:
        break; /* no thread of the snapshot wakes these (initial_wake said what does) */
    }
    b->graph->nodes[node].wake_signals = signals;
    if (signals && signal_edges(b, node, n->process, signals) && wake == REPORT_WAKE_WAKER)
        wake = REPORT_WAKE_TIMER; /* a timer of its own delivers a signal that ends the wait */
    b->graph->nodes[node].waits_outside = outside || wake == REPORT_WAKE_OUTSIDE;
    return wake == REPORT_WAKE_WAKER && outside ? REPORT_WAKE_OUTSIDE : wake;
}

static bool may_run(enum report_wake wake)
{
    return wake != REPORT_WAKE_NEVER && wake != REPORT_WAKE_EXITED && wake != REPORT_WAKE_WAKER;
}

/* ---- the fixpoint -------------------------------------------------------------------------------------------- */

/* The edges into each node and into each process, as offsets into one array of edge indexes (counting sort). */
struct reverse {
    size_t *into_node;    /* nnodes + 1 offsets */
    size_t *into_process; /* nprocesses + 1 offsets */
    size_t *edges;
};

static bool build_reverse(const struct report_graph *graph, struct reverse *r)
{
    r->into_node = calloc(graph->nnodes + 2, sizeof *r->into_node);
    r->into_process = calloc(graph->nprocesses + 2, sizeof *r->into_process);
    r->edges = calloc(graph->nedges ? graph->nedges : 1, sizeof *r->edges);
    if (!r->into_node || !r->into_process || !r->edges)
        return false;
    for (size_t e = 0; e < graph->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        (edge->target == REPORT_TO_THREAD ? r->into_node : r->into_process)[edge->to + 1]++;
    }
    for (size_t i = 0; i < graph->nnodes; i++)
        r->into_node[i + 1] += r->into_node[i];
    /* the process lists follow the node lists in the one array */
    r->into_process[0] = r->into_node[graph->nnodes];
    for (size_t p = 0; p < graph->nprocesses; p++)
        r->into_process[p + 1] += r->into_process[p];
    size_t *fill_node cleanup_free = calloc(graph->nnodes + 1, sizeof *fill_node);
    size_t *fill_process cleanup_free = calloc(graph->nprocesses + 1, sizeof *fill_process);
    if (!fill_node || !fill_process)
        return false;
    memcpy(fill_node, r->into_node, graph->nnodes * sizeof *fill_node);
    memcpy(fill_process, r->into_process, graph->nprocesses * sizeof *fill_process);
    for (size_t e = 0; e < graph->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        size_t *fill = edge->target == REPORT_TO_THREAD ? &fill_node[edge->to] : &fill_process[edge->to];
        r->edges[(*fill)++] = e;
    }
    return true;
}

static void release_reverse(struct reverse *r)
{
    free(r->into_node);
    free(r->into_process);
    free(r->edges);
}

/* Pending nodes (WAKER) that have an edge to a live node are live too. Each live node frees the waiters of its
 * edges into it, and the first live one of a process frees the waiters of the edges into that process; a process
 * edge does not free the waiter through the waiter itself, which holds because a pending waiter is never the
 * first of its process to be live. A live message pump (python_view.h) frees, of the waiters of its process, only
 * those that wait where it serves: the xdist worker waiting for its next test, not the test's deadlocked locks.
 */
bool report_graph_reach(const struct report_graph *graph, const bool *seeds, bool *live)
{
    struct reverse r cleanup_with(release_reverse) = { 0 };
    bool *process_live cleanup_free = calloc(graph->nprocesses + 1, sizeof *process_live);
    size_t *queue cleanup_free = calloc(graph->nnodes + 1, sizeof *queue);
    if (!process_live || !queue || !build_reverse(graph, &r))
        return false;
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < graph->nnodes; i++) {
        live[i] = seeds[i];
        if (live[i])
            queue[tail++] = i;
    }
    while (head < tail) {
        size_t node = queue[head++];
        size_t p = graph->nodes[node].process_index;
        const struct report_pump *pump = graph->nodes[node].pump;
        size_t from = r.into_node[node], to = r.into_node[node + 1];
        for (int pass = 0; pass < 2; pass++) {
            for (size_t k = from; k < to; k++) {
                size_t waiter = graph->edges[r.edges[k]].from;
                if (live[waiter] || graph->nodes[waiter].wake != REPORT_WAKE_WAKER || waiter == node)
                    continue;
                if (pass == 1 && pump && !report_pump_may_free(pump, graph->nodes[waiter].thread))
                    continue;
                live[waiter] = true;
                queue[tail++] = waiter;
            }
            if (process_live[p])
                break;
            if (!pump)
                process_live[p] = true; /* a pump's pass may be followed by another live thread's, which frees all */
            from = r.into_process[p];
            to = r.into_process[p + 1];
        }
    }
    return true;
}

/* The nodes that may run by themselves are the seeds; pending nodes that are not reached never will run. */
static bool settle(struct report_graph *graph)
{
    bool *seeds = calloc(graph->nnodes + 1, sizeof *seeds);
    bool *live = calloc(graph->nnodes + 1, sizeof *live);
    bool ok = seeds && live;
    for (size_t i = 0; ok && i < graph->nnodes; i++)
        seeds[i] = may_run(graph->nodes[i].wake);
    ok = ok && report_graph_reach(graph, seeds, live);
    for (size_t i = 0; ok && i < graph->nnodes; i++)
        if (graph->nodes[i].wake == REPORT_WAKE_WAKER && !live[i])
            graph->nodes[i].wake = REPORT_WAKE_NEVER;
    free(seeds);
    free(live);
    return ok;
}

/* What the rules ask of a process as a whole, once each thread's wake is final. */
static void count_processes(struct report_graph *graph)
{
    for (size_t p = 0; p < graph->nprocesses; p++) {
        struct report_graph_process *process = &graph->processes[p];
        size_t runners = 0, woken = 0;
        process->runners[0] = process->runners[1] = process->woken[0] = process->woken[1] = REPORT_NO_NODE;
        for (size_t i = process->first_node; i < process->first_node + process->nnodes; i++) {
            enum report_wake wake = graph->nodes[i].wake;
            process->never += wake == REPORT_WAKE_NEVER;
            if (may_run(wake)) {
                process->self_running++;
                if (runners < 2)
                    process->runners[runners++] = i;
            } else if (wake == REPORT_WAKE_WAKER && woken < 2) {
                process->woken[woken++] = i;
            }
        }
    }
}

/* ---- questions the rules ask of an edge ---------------------------------------------------------------------- */

static size_t other_than(const size_t pair[2], size_t waiter)
{
    return pair[0] != waiter ? pair[0] : pair[1];
}

size_t report_edge_waker(const struct report_graph *graph, const struct report_edge *edge, size_t waiter)
{
    if (edge->target == REPORT_TO_THREAD) {
        enum report_wake wake = graph->nodes[edge->to].wake;
        return wake == REPORT_WAKE_NEVER || wake == REPORT_WAKE_EXITED ? REPORT_NO_NODE : edge->to;
    }
    const struct report_graph_process *process = &graph->processes[edge->to];
    size_t runner = other_than(process->runners, waiter);
    return runner != REPORT_NO_NODE ? runner : other_than(process->woken, waiter);
}

bool report_edge_reaches_live(const struct report_graph *graph, const struct report_edge *edge, size_t waiter,
                              bool ignore_woken)
{
    size_t own = graph->nodes[waiter].process_index;
    if (edge->target == REPORT_TO_THREAD) {
        enum report_wake wake = graph->nodes[edge->to].wake;
        if (ignore_woken && wake == REPORT_WAKE_WAKER && graph->nodes[edge->to].process_index == own)
            return false;
        return wake != REPORT_WAKE_NEVER && wake != REPORT_WAKE_EXITED;
    }
    const struct report_graph_process *process = &graph->processes[edge->to];
    size_t runners = process->self_running - (may_run(graph->nodes[waiter].wake) && edge->to == own);
    if (runners > 0)
        return true;
    if (ignore_woken && edge->to == own)
        return false;
    return other_than(process->woken, waiter) != REPORT_NO_NODE;
}

size_t report_edge_first(const struct report_graph *graph, const struct report_edge *edge, size_t waiter)
{
    if (edge->target == REPORT_TO_THREAD)
        return edge->to;
    const struct report_graph_process *process = &graph->processes[edge->to];
    if (process->nnodes == 0)
        return REPORT_NO_NODE;
    if (process->first_node != waiter)
        return process->first_node;
    return process->nnodes > 1 ? process->first_node + 1 : REPORT_NO_NODE;
}

/* ---- building it --------------------------------------------------------------------------------------------- */

/* The threads the analysis takes to be in an earlier sample's wait (gil.h) get a copy of their own that says so,
 * which their node points at; every other node points into the snapshot. */
static bool add_resumed_waits(const struct hd_snapshot *snapshot, struct report_graph *graph)
{
    struct hd_thread scratch;
    size_t count = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        for (size_t t = 0; t < snapshot->processes[p].nthreads; t++)
            count += report_gil_wait_resumed(&snapshot->processes[p], &snapshot->processes[p].threads[t], &scratch);
    if (count == 0)
        return true;
    graph->resumed = calloc(count, sizeof *graph->resumed);
    if (!graph->resumed)
        return false;
    for (size_t node = 0; node < graph->nnodes; node++) {
        struct hd_thread *copy = &graph->resumed[graph->nresumed];
        if (graph->nresumed < count && report_gil_wait_resumed(graph->nodes[node].process, graph->nodes[node].thread,
                                                               copy)) {
            graph->nodes[node].thread = copy;
            graph->nresumed++;
        }
    }
    return true;
}

static bool add_nodes(const struct hd_snapshot *snapshot, struct report_graph *graph)
{
    size_t count = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        count += snapshot->processes[p].nthreads;
    graph->nodes = calloc(count ? count : 1, sizeof *graph->nodes);
    graph->by_tid = calloc(count ? count : 1, sizeof *graph->by_tid);
    graph->processes = calloc(snapshot->nprocesses ? snapshot->nprocesses : 1, sizeof *graph->processes);
    if (!graph->nodes || !graph->by_tid || !graph->processes)
        return false;
    graph->nprocesses = snapshot->nprocesses;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        graph->processes[p] = (struct report_graph_process){
            .process = process, .first_node = graph->nnodes, .nnodes = process->nthreads };
        for (size_t t = 0; t < process->nthreads; t++)
            graph->nodes[graph->nnodes++] = (struct report_node){
                .process = process, .thread = &process->threads[t], .process_index = p };
    }
    if (!add_resumed_waits(snapshot, graph))
        return false;
    for (size_t i = 0; i < graph->nnodes; i++) {
        struct report_node *node = &graph->nodes[i];
        const struct hd_thread *thread = node->thread;
        node->blocked_without_timeout = (thread->syscall.state == HD_SYSCALL_IN && thread->wait.kind != HD_WAIT_OTHER &&
                                         thread->wait.kind != HD_WAIT_NONE &&
                                         thread->wait.timeout.kind == HD_TIMEOUT_NONE) ||
                                        waits_for_gil_holder(thread);
        node->pump = report_python_pump(thread);
        report_fold_samples(thread, &node->history);
        graph->by_tid[i] = (struct report_tid_index){ .tid = thread->tid, .node = i };
    }
    qsort(graph->by_tid, graph->nnodes, sizeof *graph->by_tid, compare_tid_index);
    return true;
}

bool report_build_graph(const struct hd_snapshot *snapshot, struct report_graph *graph)
{
    *graph = (struct report_graph){ 0 };
    struct builder b = { .snapshot = snapshot, .graph = graph };
    bool ok = add_nodes(snapshot, graph) && build_indexes(&b);
    for (size_t i = 0; ok && i < graph->nnodes; i++) {
        graph->nodes[i].first_edge = graph->nedges;
        graph->nodes[i].wake = thread_edges(&b, i);
        graph->nodes[i].nedges = graph->nedges - graph->nodes[i].first_edge;
    }
    ok = ok && !b.failed && settle(graph);
    free(b.holders);
    free(b.shared);
    if (!ok) {
        report_graph_release(graph);
        return false;
    }
    count_processes(graph);
    return true;
}

void report_graph_release(struct report_graph *graph)
{
    free(graph->nodes);
    free(graph->edges);
    free(graph->processes);
    free(graph->by_tid);
    free(graph->resumed);
    *graph = (struct report_graph){ 0 };
}

const struct report_history *report_thread_history(const struct report_graph *graph, const struct hd_thread *thread)
{
    static const struct report_history none = { .samples_seen = 0 };
    size_t node = report_graph_find(graph, thread->tid);
    return node != REPORT_NO_NODE ? &graph->nodes[node].history : &none;
}
