/* The pipes family (rule.h): full-pipe, a thread asleep forever writing to a pipe or socket whose readers are all
 * asleep forever on something else, and wait-cycle, threads that wait on each other through joins, pipes,
 * sockets and child waits (lock-cycle is the cycle made of lock owners alone).
 *
 * Both follow the wait-for graph among threads asleep forever. An OR-set edge ("any thread of process P") goes
 * through a vertex of its own for P, so a search costs threads + processes + edges, whatever the size of the
 * OR-sets: nodes are vertices 0 .. nnodes - 1, process P is vertex nnodes + P.
 */
#include "rule.h"

#include "describe.h"
#include "python_view.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READERS_LISTED_MAX 8 /* reader threads named as evidence; more are counted */
#define CYCLE_STEPS_MAX 32   /* a longer cycle is named by its first steps */
/* A search for a cycle is linear in the graph, so a rule makes at most this many: a knot of thousands of writers
 * or readers is named by its first cycles (the rest of the findings keep their subject, without the cycle), and the
 * unexplained knot covers the rest. */
#define CYCLE_SEARCHES_MAX 512

/* A thread of a Python thread pool's machinery: a worker, or a multiprocessing pool's handler. */
static bool pool_machinery(const struct hd_thread *thread)
{
    return report_role_is_pool_machinery(report_python_role(thread));
}

struct search {
    const struct report_graph *graph;
    size_t nvertices;
    size_t *queue;
    size_t *parent;            /* the vertex it was reached from */
    enum report_edge_kind *via; /* the kind of edge it was reached through */
    bool *through_set;         /* reached through an OR-set ("any thread of process P"), not an edge to it */
    unsigned *seen;            /* == generation: reached in this search */
    unsigned generation;
};

static bool search_init(struct search *s, const struct report_graph *graph)
{
    *s = (struct search){ .graph = graph, .nvertices = graph->nnodes + graph->nprocesses };
    s->queue = calloc(s->nvertices + 1, sizeof *s->queue);
    s->parent = calloc(s->nvertices + 1, sizeof *s->parent);
    s->via = calloc(s->nvertices + 1, sizeof *s->via);
    s->seen = calloc(s->nvertices + 1, sizeof *s->seen);
    s->through_set = calloc(s->nvertices + 1, sizeof *s->through_set);
    return s->queue && s->parent && s->via && s->seen && s->through_set;
}

static void search_release(struct search *s)
{
    free(s->queue);
    free(s->parent);
    free(s->via);
    free(s->seen);
    free(s->through_set);
}

/* search_init for a rule: false (the run marked failed) when memory ran out; what was had is released with the
 * search (its cleanup) */
static bool rule_search_init(struct report_rule_context *c, struct search *s)
{
    if (search_init(s, &c->analysis->graph))
        return true;
    c->failed = true;
    return false;
}

static bool asleep_forever(const struct report_graph *graph, size_t node)
{
    return graph->nodes[node].wake == REPORT_WAKE_NEVER;
}

/* The shortest way from `start` back to itself among threads asleep forever; its length in vertices (0 when
 * there is none), the path read back through s->parent from `start`. */
static size_t shortest_cycle(struct search *s, size_t start)
{
    const struct report_graph *graph = s->graph;
    size_t head = 0, tail = 0;
    s->generation++;
    s->queue[tail++] = start;
    s->seen[start] = s->generation;
    s->parent[start] = REPORT_NO_NODE;
    while (head < tail) {
        size_t vertex = s->queue[head++];
        size_t from_node = vertex < graph->nnodes ? vertex : s->parent[vertex];
        size_t first, count;
        if (vertex < graph->nnodes) {
            first = graph->nodes[vertex].first_edge;
            count = graph->nodes[vertex].nedges;
        } else {
            const struct report_graph_process *process = &graph->processes[vertex - graph->nnodes];
            first = process->first_node;
            count = process->nnodes;
        }
        for (size_t k = first; k < first + count; k++) {
            size_t next;
            enum report_edge_kind via;
            if (vertex < graph->nnodes) {
                const struct report_edge *edge = &graph->edges[k];
                next = edge->target == REPORT_TO_THREAD ? edge->to : graph->nnodes + edge->to;
                via = edge->kind;
            } else {
                next = k; /* a thread of the process, any but the one that waits on it */
                via = s->via[vertex];
                if (next == from_node)
                    continue;
            }
            if (next < graph->nnodes && !asleep_forever(graph, next))
                continue;
            /* Back at the start, or at an OR-set of the start's own process reached from another thread than the
             * start: that closes the cycle at once. (The OR-set's vertex may have been expanded already from the
             * start itself, which it does not lead back to, so the ordinary way would miss it.) */
            bool own_process = next >= graph->nnodes && vertex < graph->nnodes && vertex != start &&
                               next - graph->nnodes == graph->nodes[start].process_index;
            if (next == start || own_process) {
                s->parent[start] = vertex;
                s->via[start] = via;
                s->through_set[start] = own_process || vertex >= graph->nnodes;
                size_t length = 0;
                for (size_t v = vertex; v != start && length <= s->nvertices; v = s->parent[v])
                    length++;
                return length + 1;
            }
            if (s->seen[next] == s->generation)
                continue;
            s->seen[next] = s->generation;
            s->parent[next] = vertex;
            s->via[next] = via;
            s->through_set[next] = vertex >= graph->nnodes;
            s->queue[tail++] = next;
        }
    }
    return 0;
}

/* The threads of the cycle found from `start`, in the order they wait on each other (start first); how many. */
static size_t cycle_nodes(const struct search *s, size_t start, size_t *nodes, size_t max)
{
    /* s->parent runs backwards: start <- ... <- x <- start; collect, then reverse */
    size_t count = 0;
    for (size_t v = s->parent[start]; v != start && v != REPORT_NO_NODE && count < s->nvertices; v = s->parent[v])
        if (v < s->graph->nnodes && count < max)
            nodes[count++] = v;
    for (size_t i = 0; i < count / 2; i++) {
        size_t swap = nodes[i];
        nodes[i] = nodes[count - 1 - i];
        nodes[count - 1 - i] = swap;
    }
    if (count < max) {
        memmove(nodes + 1, nodes, count * sizeof *nodes);
        nodes[0] = start;
        count++;
    }
    return count;
}

/* How node `waiter` reaches the next member of the cycle: the kind of edge it waits through. */
static enum report_edge_kind step_kind(const struct search *s, size_t next_member)
{
    /* the next member was reached from the waiter directly, or through the waiter's process target */
    return s->via[next_member];
}

/* A step through a futex that records no owner (a condition variable, a semaphore, a lock such as Rust's or
 * Abseil's): the next member is not the waiter's waker, only one of the threads that could be; all of them are
 * asleep forever, or the waiter would not be. */
static bool step_through_unowned_futex(const struct search *s, size_t next_member)
{
    return s->through_set[next_member] && s->via[next_member] == REPORT_EDGE_FUTEX;
}

static void cycle_evidence(struct report_rule_context *c, struct report_finding *finding, const struct search *s,
                           const size_t *nodes, size_t count)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t m = 0; m < count; m++) {
        const struct report_node *waiter = &graph->nodes[nodes[m]];
        size_t next_index = nodes[(m + 1) % count];
        const struct report_node *next = &graph->nodes[next_index];
        if (step_through_unowned_futex(s, next_index)) {
            const struct report_graph_process *wakers = &graph->processes[next->process_index];
            size_t others = wakers->nnodes - (waiter->process_index == next->process_index ? 1 : 0);
            rule_evidence(c, finding, "cycle",
                          "thread %d '%s' of process %d (%s) waits on a futex with no owner recorded: only a thread "
                          "of process %d could wake it, and none of its %zu other threads can run, thread %d '%s' "
                          "among them",
                          (int)waiter->thread->tid, waiter->thread->name, (int)waiter->process->pid,
                          report_wait_label(waiter->thread), (int)next->process->pid, others,
                          (int)next->thread->tid, next->thread->name);
        } else {
            rule_evidence(c, finding, "cycle",
                          "thread %d '%s' of process %d (%s) waits through %s for thread %d '%s' of process %d",
                          (int)waiter->thread->tid, waiter->thread->name, (int)waiter->process->pid,
                          report_wait_label(waiter->thread), rule_edge_words(step_kind(s, next_index)),
                          (int)next->thread->tid, next->thread->name, (int)next->process->pid);
        }
        rule_member(c, finding, nodes[m]);
    }
}

/* ---- full-pipe ---------------------------------------------------------------------------------------------- */

/* The pipe, socket or pseudo-terminal a writer waits on: the first of its fds that is one. */
static const struct hd_fd *written_fd(const struct report_node *node)
{
    const struct hd_wait *wait = &node->thread->wait;
    for (unsigned i = 0; i < wait->nfds_known; i++) {
        const struct hd_fd *fd = hd_process_find_fd(node->process, wait->fds[i]);
        if (fd && (fd->kind == HD_FD_PIPE || fd->kind == HD_FD_SOCKET || fd->pty))
            return fd;
    }
    return NULL;
}

static const char *written_noun(const struct hd_fd *fd)
{
    return fd->pty ? "pseudo-terminal" : fd->kind == HD_FD_PIPE ? "pipe" : "socket";
}

/* A pseudo-terminal's other side: which processes hold it, as evidence ("the master of /dev/pts/3: fd 5 of process
 * 4242 'python3'"). */
static void pty_evidence(struct report_rule_context *c, struct report_finding *finding, const struct hd_fd *fd)
{
    rule_evidence(c, finding, "pty", "fd %d %s (%s /dev/pts/%d)", fd->fd, fd->target ? fd->target : "?",
                  fd->pty_master ? "the master of" : "the slave", fd->pty_index);
    for (size_t p = 0; p < c->snapshot->nprocesses; p++) {
        const struct hd_process *other = &c->snapshot->processes[p];
        for (size_t f = 0; f < other->nfds; f++) {
            const struct hd_fd *end = &other->fds[f];
            if (end->pty && end->pty_master != fd->pty_master && end->pty_index == fd->pty_index) {
                rule_evidence(c, finding, fd->pty_master ? "pty_slave" : "pty_master", "fd %d of process %d '%s'",
                              end->fd, (int)other->pid, other->comm);
                break;
            }
        }
    }
}

/* Each reader the writer waits for, with what it waits on instead of reading. */
static void reader_evidence(struct report_rule_context *c, struct report_finding *finding, size_t writer)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_node *node = &graph->nodes[writer];
    size_t listed = 0, more = 0;
    for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        if (edge->kind != REPORT_EDGE_PIPE && edge->kind != REPORT_EDGE_SOCKET && edge->kind != REPORT_EDGE_PTY)
            continue;
        size_t first = edge->target == REPORT_TO_THREAD ? edge->to : graph->processes[edge->to].first_node;
        size_t end = edge->target == REPORT_TO_THREAD ? edge->to + 1
                                                      : first + graph->processes[edge->to].nnodes;
        for (size_t r = first; r < end; r++) {
            if (r == writer)
                continue;
            if (listed == READERS_LISTED_MAX) {
                more++;
                continue;
            }
            const struct report_node *reader = &graph->nodes[r];
            listed++;
            rule_evidence(c, finding, "reader", "thread %d '%s' of process %d could read it, but waits in %s",
                          (int)reader->thread->tid, reader->thread->name, (int)reader->process->pid,
                          report_wait_label(reader->thread));
        }
    }
    if (more)
        rule_evidence(c, finding, "reader", "and %zu more threads of the processes that hold the other end", more);
}

/* Writing blocks only when the pipe (or the socket's buffer) is full: the writer waits for a reader to make room,
 * and every thread that could read is asleep forever. */
void report_rule_full_pipe(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    struct search s cleanup_with(search_release) = { .graph = NULL };
    if (!rule_search_init(c, &s))
        return;
    size_t searches = 0;
    for (size_t i = 0; i < graph->nnodes && !c->failed; i++) {
        const struct report_node *node = &graph->nodes[i];
        const struct hd_fd *fd = node->wake == REPORT_WAKE_NEVER && node->thread->wait.kind == HD_WAIT_WRITE
                                     ? written_fd(node) : NULL;
        if (!fd || node->nedges == 0)
            continue;
        const char *what = written_noun(fd);
        struct report_finding *finding = rule_finding(
            c, REPORT_FULL_PIPE, REPORT_CERTAIN, node,
            "thread %d '%s' of process %d waits to write to a full %s (fd %d) that no thread will ever read: "
            "every thread that holds its other end is asleep forever",
            (int)node->thread->tid, node->thread->name, (int)node->process->pid, what, fd->fd);
        rule_evidence(c, finding, "writer", "thread %d '%s' of process %d: %s", (int)node->thread->tid,
                      node->thread->name, (int)node->process->pid, report_wait_label(node->thread));
        if (fd->pty)
            pty_evidence(c, finding, fd);
        else
            rule_evidence(c, finding, fd->kind == HD_FD_PIPE ? "pipe" : "socket", "fd %d %s", fd->fd,
                          fd->target ? fd->target : "?");
        reader_evidence(c, finding, i);
        size_t nodes[CYCLE_STEPS_MAX];
        if (searches++ < CYCLE_SEARCHES_MAX && shortest_cycle(&s, i))
            cycle_evidence(c, finding, &s, nodes, cycle_nodes(&s, i, nodes, CYCLE_STEPS_MAX));
        else
            rule_member(c, finding, i);
        if (fd->pty)
            rule_remedy(c, finding, "Read the terminal's master while you wait for the child: with pexpect, "
                                    "child.expect(pexpect.EOF) (or child.read()) before child.wait(), or "
                                    "child.close(); with pty.fork() or openpty(), drain the master in a loop until "
                                    "it reads EOF (EIO on Linux), then waitpid().");
        rule_remedy(c, finding, "Read the other end while you wait: drain it in a thread of its own, or poll() on "
                                "the pipe and on what you wait for together; never wait for a writer to finish "
                                "before reading what it writes.");
    }
}

/* ---- wait-cycle --------------------------------------------------------------------------------------------- */

/* Waits that can close a cycle other than through a lock's owner: reading a pipe or socket, waiting for a child,
 * joining a thread. Futex OR-sets only carry a cycle along (a condition variable in the middle of one). */
static bool starts_a_cycle(const struct report_node *node)
{
    enum hd_wait_kind kind = node->thread->wait.kind;
    return node->wake == REPORT_WAKE_NEVER && node->nedges > 0 &&
           (kind == HD_WAIT_READ || kind == HD_WAIT_POLL || kind == HD_WAIT_CHILD ||
            (kind == HD_WAIT_LOCK && node->thread->wait.lock.kind == HD_LOCK_FILE) ||
            (kind == HD_WAIT_FUTEX && node->thread->wait.lock.kind == HD_LOCK_JOIN));
}


/* A step from a relay to the process that started it: Python's forkserver waits on its parent only for the next
 * request or for its exit, and passes on its children's exits (SIGCHLD) to the parent's sentinels. Asleep forever,
 * it is so because its children are: a cycle through that step is the path by which the parent waits on them, not
 * a hang of its own, which the children's findings name. */
static bool relay_step_upstream(const struct report_graph *graph, size_t waiter, size_t next)
{
    const struct hd_process *relay = graph->nodes[waiter].process;
    return relay->python_role == HD_PYTHON_ROLE_FORKSERVER && graph->nodes[next].process->pid == relay->ppid;
}

void report_rule_wait_cycle(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    struct search s cleanup_with(search_release) = { .graph = NULL };
    if (!rule_search_init(c, &s))
        return;
    bool *named cleanup_free = report_cycle_members(c->analysis);
    /* the lock takers unowned-lock-cycle named: a cycle through one of them (a thread that joins one) is its;
     * and the processes of a starved pool: there every thread is asleep, and a cycle through a futex with no
     * owner and the pool's own threads is only one path through that knot (a pool's handler, its pipe, and the
     * thread that waits for a map) */
    bool *named_before cleanup_free = calloc(graph->nnodes + 1, sizeof *named_before);
    bool *starved cleanup_free = calloc(graph->nprocesses + 1, sizeof *starved);
    for (size_t f = 0; named_before && starved && f < c->analysis->nfindings; f++) {
        const struct report_finding *finding = &c->analysis->findings[f];
        for (size_t m = 0; m < finding->nmembers; m++) {
            if (finding->kind == REPORT_UNOWNED_LOCK_CYCLE)
                named_before[finding->members[m]] = true;
            if (finding->kind == REPORT_POOL_STARVATION)
                starved[graph->nodes[finding->members[m]].process_index] = true;
        }
    }
    if (!named || !named_before || !starved) {
        c->failed = true;
        return;
    }
    size_t searches = 0;
    for (size_t i = 0; i < graph->nnodes && !c->failed && searches < CYCLE_SEARCHES_MAX; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (!starts_a_cycle(node) || named[i])
            continue;
        searches++;
        size_t length = shortest_cycle(&s, i);
        if (length == 0)
            continue;
        size_t nodes[CYCLE_STEPS_MAX];
        size_t count = cycle_nodes(&s, i, nodes, CYCLE_STEPS_MAX);
        bool through_lock_only = true;
        for (size_t m = 0; m < count; m++)
            through_lock_only &= step_kind(&s, nodes[(m + 1) % count]) == REPORT_EDGE_LOCK_OWNER;
        bool named_already = false;
        for (size_t m = 0; m < count; m++)
            named_already |= named_before[nodes[m]] || relay_step_upstream(graph, nodes[m], nodes[(m + 1) % count]);
        if (count < 2 || through_lock_only || named_already)
            continue; /* a thread waiting on its own process alone is the knot's business, locks lock-cycle's, a
                       * cycle through unowned-lock-cycle's lock takers that one's, and one through a relay's
                       * wait on its parent its children's */
        bool unowned = false, in_a_starved_pool = true, through_the_pool = false;
        size_t named_step = 1 % count; /* a step the summary names: one that is not through the futex */
        for (size_t m = 0; m < count; m++) {
            bool through = step_through_unowned_futex(&s, nodes[m]);
            unowned |= through;
            if (!through && step_through_unowned_futex(&s, nodes[named_step]))
                named_step = m;
            in_a_starved_pool &= starved[graph->nodes[nodes[m]].process_index];
            through_the_pool |= pool_machinery(graph->nodes[nodes[m]].thread);
        }
        if (unowned && in_a_starved_pool && through_the_pool)
            continue;
        /* through a futex that records no owner, the threads do not wait on each other as such: each waits on
         * something that only threads asleep forever could set */
        struct report_finding *finding =
            unowned ? rule_finding(c, REPORT_WAIT_CYCLE, REPORT_CERTAIN, node,
                                   "%zu threads wait through %s and a futex with no owner recorded, whose only "
                                   "possible wakers are asleep forever: none of them can ever go on",
                                   count, rule_edge_words(step_kind(&s, nodes[named_step])))
                    : rule_finding(c, REPORT_WAIT_CYCLE, REPORT_CERTAIN, node,
                                   "%zu threads wait on each other in a cycle through %s and %s: none of them can "
                                   "ever go on",
                                   count, rule_edge_words(step_kind(&s, nodes[1 % count])),
                                   rule_edge_words(step_kind(&s, nodes[0])));
        cycle_evidence(c, finding, &s, nodes, count);
        for (size_t m = 0; m < count; m++)
            named[nodes[m]] = true;
        rule_remedy(c, finding, "Break the cycle at one of its waits: read a pipe while waiting for its writer "
                                "(a thread of its own, or poll on both), join or wait for a process only after "
                                "taking all it sends, and do not make a thread wait for one that waits for it.");
        if (unowned)
            rule_remedy(c, finding, "A futex with no owner recorded may be a lock that does not say who holds it "
                                    "(Rust's std::sync::Mutex, absl::Mutex, a semaphore used as a lock): two threads "
                                    "asleep on such locks, each holding the one the other wants, took them in "
                                    "opposite orders (their stacks show where); take them in one order everywhere.");
    }
}

bool *report_cycle_members(const struct report_analysis *analysis)
{
    bool *named = calloc(analysis->graph.nnodes + 1, sizeof *named);
    for (size_t f = 0; named && f < analysis->nfindings; f++) {
        const struct report_finding *finding = &analysis->findings[f];
        if (report_rule(finding->kind)->cycle)
            for (size_t m = 0; m < finding->nmembers; m++)
                named[finding->members[m]] = true;
    }
    return named;
}
