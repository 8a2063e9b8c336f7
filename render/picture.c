/* The wait-for graph as a picture (picture.h).
 *
 * What is drawn, in this order while there is room: the subject of each hang, the threads a hang finding names, the
 * threads asleep forever, those in the kernel or exited; then, one step along the graph, whoever those threads wait
 * for. A process is drawn when one of its threads is, or when it is a root; its other threads are one "not drawn"
 * note, counted by how they can run. The cost is linear in threads + edges of the graph, and in what is drawn at
 * most quadratic: the limits keep that small.
 */
#include "picture.h"

#include "describe.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>

/* Roots drawn even when nothing of theirs is: the top of the picture (a --job of many ranks draws the first few). */
#define ROOTS_DRAWN_MAX 8

/* box_of_node: a thread the picture wanted but had no room for, so that it is counted once */
#define NO_ROOM ((size_t)-2)

struct builder {
    struct report_picture *picture;
    const struct report_graph *graph;
    const struct report_picture_limits *limits;
    size_t *box_of_node;        /* graph node -> box, REPORT_NO_NODE, or NO_ROOM */
    size_t *any_thread_of;      /* graph process -> its ANY_THREAD box, or REPORT_NO_NODE */
    size_t any_thread_boxes;    /* how many: they have a limit of their own, so that threads asleep forever that
                                 * fill the picture still show what they wait for */
    size_t boxes_capacity;
    size_t edges_capacity;
    bool failed;
};

/* ---- boxes --------------------------------------------------------------------------------------------------- */

static size_t add_box(struct builder *b, const struct report_picture_box *box)
{
    struct report_picture *picture = b->picture;
    struct report_picture_box *grown =
        hd_grow(picture->boxes, &b->boxes_capacity, picture->nboxes, sizeof *picture->boxes);
    if (!grown) {
        b->failed = true;
        return REPORT_NO_NODE;
    }
    picture->boxes = grown;
    picture->boxes[picture->nboxes] = *box;
    picture->marks_used[box->mark] = true;
    return picture->nboxes++;
}

/* Room for one more box of a thread or an absent owner? */
static bool room(const struct builder *b)
{
    return b->picture->nboxes - b->any_thread_boxes < b->limits->boxes;
}

/* The reasons a thread matters to the picture, strongest first (draw_threads_that_matter). */
static bool named_by_a_hang(const struct builder *b, size_t node)
{
    return b->picture->analysis->named_by_hang && b->picture->analysis->named_by_hang[node];
}

static bool asleep_forever(const struct builder *b, size_t node)
{
    return b->graph->nodes[node].wake == REPORT_WAKE_NEVER;
}

static bool in_the_kernel_or_exited(const struct builder *b, size_t node)
{
    enum report_wake wake = b->graph->nodes[node].wake;
    return wake == REPORT_WAKE_KERNEL || wake == REPORT_WAKE_EXITED;
}

/* How a thread that is no hang's subject is marked: by what names it, else by how it can run. */
static enum report_picture_mark mark_of(const struct builder *b, size_t node)
{
    static const enum report_picture_mark by_wake[] = {
        [REPORT_WAKE_RUNNING] = REPORT_PICTURE_RUNS,   [REPORT_WAKE_TIMER] = REPORT_PICTURE_RUNS,
        [REPORT_WAKE_OUTSIDE] = REPORT_PICTURE_RUNS,   [REPORT_WAKE_KERNEL] = REPORT_PICTURE_KERNEL,
        [REPORT_WAKE_WAKER] = REPORT_PICTURE_WAITS,    [REPORT_WAKE_NEVER] = REPORT_PICTURE_FOREVER,
        [REPORT_WAKE_EXITED] = REPORT_PICTURE_EXITED,
    };
    return named_by_a_hang(b, node) ? REPORT_PICTURE_IN_HANG : by_wake[b->graph->nodes[node].wake];
}

/* The box of thread `node`, drawn now if there is room; REPORT_NO_NODE when there is none. */
static size_t draw_thread(struct builder *b, size_t node, enum report_picture_mark mark, size_t hang)
{
    if (b->box_of_node[node] != REPORT_NO_NODE && b->box_of_node[node] != NO_ROOM)
        return b->box_of_node[node];
    if (!room(b)) {
        if (b->box_of_node[node] == REPORT_NO_NODE)
            b->picture->threads_left_out++;
        b->box_of_node[node] = NO_ROOM;
        return REPORT_NO_NODE;
    }
    struct report_picture_box box = { .kind = REPORT_BOX_THREAD, .mark = mark, .node = node,
                                      .tid = b->graph->nodes[node].thread->tid, .hang = hang, .finding = -1 };
    size_t index = add_box(b, &box);
    if (index != REPORT_NO_NODE)
        b->box_of_node[node] = index;
    return index;
}

/* The subject of every hang first, best first: the picture is for them. */
static void draw_hang_subjects(struct builder *b)
{
    const struct report_verdict *verdict = &b->picture->analysis->verdict;
    for (size_t h = 0; h < verdict->nhangs; h++) {
        size_t node = report_graph_find(b->graph, verdict->hangs[h].tid);
        if (node != REPORT_NO_NODE && b->box_of_node[node] == REPORT_NO_NODE)
            draw_thread(b, node, REPORT_PICTURE_ROOT_CAUSE, h);
    }
}

/* Then the threads that matter to a hang, one pass for each reason, the strongest first, while there is room. */
static void draw_threads_that_matter(struct builder *b)
{
    static bool (*const reasons[])(const struct builder *, size_t) = {
        named_by_a_hang, asleep_forever, in_the_kernel_or_exited,
    };
    for (size_t r = 0; r < COUNT(reasons); r++)
        for (size_t i = 0; i < b->graph->nnodes; i++)
            if (b->box_of_node[i] == REPORT_NO_NODE && reasons[r](b, i))
                draw_thread(b, i, mark_of(b, i), 0);
}

/* The box "any thread of process p" (graph index), drawn now if `create` and there is room. */
static size_t any_thread_box(struct builder *b, size_t process, bool create)
{
    /* one that finds no room is not a thread left out: the edges to it are counted instead */
    if (b->any_thread_of[process] != REPORT_NO_NODE || !create || b->any_thread_boxes >= b->limits->boxes)
        return b->any_thread_of[process];
    struct report_picture_box box = { .kind = REPORT_BOX_ANY_THREAD, .mark = REPORT_PICTURE_PLAIN,
                                      .node = REPORT_NO_NODE, .finding = -1 };
    b->any_thread_of[process] = add_box(b, &box);
    b->any_thread_boxes += b->any_thread_of[process] != REPORT_NO_NODE;
    return b->any_thread_of[process];
}

/* Where an edge of the graph points in the picture: its thread; for an OR-set, the one thread it can be when there is
 * only one, else the process's "any thread" box. With `create`, what is not drawn yet is drawn if there is room. */
static size_t edge_target(struct builder *b, const struct report_edge *edge, size_t waiter, bool create)
{
    size_t node = edge->to;
    if (edge->target == REPORT_TO_PROCESS) {
        const struct report_graph_process *process = &b->graph->processes[edge->to];
        size_t candidates = process->nnodes - (b->graph->nodes[waiter].process_index == edge->to);
        if (candidates > 1)
            return any_thread_box(b, edge->to, create);
        node = report_edge_first(b->graph, edge, waiter);
        if (node == REPORT_NO_NODE)
            return REPORT_NO_NODE;
    }
    if (b->box_of_node[node] != REPORT_NO_NODE && b->box_of_node[node] != NO_ROOM)
        return b->box_of_node[node];
    return create ? draw_thread(b, node, mark_of(b, node), 0) : REPORT_NO_NODE;
}

/* A lock whose recorded owner can never release it, so that the graph has no edge for it: a fork() copy of a lock
 * held in the parent, an owner that is gone. The picture draws it: it is the story of an inherited lock. */
static bool owner_out_of_reach(const struct report_graph *graph, size_t node)
{
    const struct report_node *n = &graph->nodes[node];
    const struct hd_wait *wait = &n->thread->wait;
    enum hd_lock_kind kind = wait->lock.kind;
    bool owned = kind == HD_LOCK_MUTEX || kind == HD_LOCK_RWLOCK || kind == HD_LOCK_GIL;
    if (n->thread->syscall.state != HD_SYSCALL_IN || wait->kind != HD_WAIT_FUTEX || !owned ||
        wait->lock.owner_tid <= 0 || n->waits_outside)
        return false;
    for (size_t e = n->first_edge; e < n->first_edge + n->nedges; e++)
        if (graph->edges[e].kind == REPORT_EDGE_LOCK_OWNER)
            return false;
    return true;
}

/* The box of the owner of an out-of-reach lock: its thread when in the snapshot, else a box of its own. */
static size_t owner_box(struct builder *b, size_t waiter, bool create)
{
    const struct hd_lock *lock = &b->graph->nodes[waiter].thread->wait.lock;
    size_t node = report_graph_find(b->graph, lock->owner_tid);
    if (node != REPORT_NO_NODE) {
        if (b->box_of_node[node] != REPORT_NO_NODE && b->box_of_node[node] != NO_ROOM)
            return b->box_of_node[node];
        return create ? draw_thread(b, node, mark_of(b, node), 0) : REPORT_NO_NODE;
    }
    for (size_t i = 0; i < b->picture->nboxes; i++)
        if (b->picture->boxes[i].kind == REPORT_BOX_ABSENT_OWNER && b->picture->boxes[i].tid == lock->owner_tid)
            return i;
    if (!create || !room(b))
        return REPORT_NO_NODE;
    struct report_picture_box box = { .kind = REPORT_BOX_ABSENT_OWNER, .mark = REPORT_PICTURE_PLAIN,
                                      .node = REPORT_NO_NODE, .process = REPORT_NO_NODE, .tid = lock->owner_tid,
                                      .finding = -1, .whereabouts = lock->owner_whereabouts };
    return add_box(b, &box);
}

/* One step along the graph from what is drawn: who the drawn threads wait for. */
static void draw_wakers(struct builder *b)
{
    size_t drawn = b->picture->nboxes;
    for (size_t i = 0; i < drawn && !b->failed; i++) {
        if (b->picture->boxes[i].kind != REPORT_BOX_THREAD)
            continue;
        size_t node = b->picture->boxes[i].node;
        const struct report_node *n = &b->graph->nodes[node];
        for (size_t e = n->first_edge; e < n->first_edge + n->nedges; e++)
            edge_target(b, &b->graph->edges[e], node, true);
        if (owner_out_of_reach(b->graph, node))
            owner_box(b, node, true);
    }
}

/* The first hang finding about each drawn thread, its subject's or a member's: the label names it. */
static void name_findings(struct builder *b)
{
    const struct report_analysis *analysis = b->picture->analysis;
    for (size_t h = 0; h < analysis->verdict.nhangs; h++) {
        size_t node = report_graph_find(b->graph, analysis->verdict.hangs[h].tid);
        size_t box = node == REPORT_NO_NODE ? REPORT_NO_NODE : b->box_of_node[node];
        if (box < b->picture->nboxes && b->picture->boxes[box].mark == REPORT_PICTURE_ROOT_CAUSE)
            b->picture->boxes[box].finding = analysis->verdict.hangs[h].finding;
    }
    for (size_t f = 0; f < analysis->nfindings; f++) {
        const struct report_finding *finding = &analysis->findings[f];
        if (!finding->hang)
            continue;
        size_t subject = report_graph_find(b->graph, finding->tid);
        for (size_t m = 0; m <= finding->nmembers; m++) {
            size_t node = m == 0 ? subject : finding->members[m - 1];
            size_t box = node == REPORT_NO_NODE ? REPORT_NO_NODE : b->box_of_node[node];
            if (box < b->picture->nboxes && b->picture->boxes[box].finding < 0 &&
                b->picture->boxes[box].mark != REPORT_PICTURE_ROOT_CAUSE)
                b->picture->boxes[box].finding = (long)f;
        }
    }
}

/* ---- processes ----------------------------------------------------------------------------------------------- */

static bool is_root(const struct hd_snapshot *snapshot, pid_t pid, size_t *which)
{
    for (size_t r = 0; r < snapshot->nroots; r++)
        if (snapshot->roots[r] == pid) {
            *which = r;
            return true;
        }
    return false;
}

/* The processes with something drawn, and the first roots: each box learns its process, each process its "not
 * drawn" note. */
static void collect_processes(struct builder *b)
{
    struct report_picture *picture = b->picture;
    const struct report_graph *graph = b->graph;
    size_t *drawn cleanup_free = calloc(graph->nprocesses + 1, sizeof *drawn);
    picture->processes = calloc(graph->nprocesses + 1, sizeof *picture->processes);
    if (!drawn || !picture->processes) {
        b->failed = true;
        return;
    }
    for (size_t i = 0; i < picture->nboxes; i++)
        if (picture->boxes[i].kind == REPORT_BOX_THREAD)
            drawn[graph->nodes[picture->boxes[i].node].process_index]++;
    size_t *picture_process cleanup_free = calloc(graph->nprocesses + 1, sizeof *picture_process);
    if (!picture_process) {
        b->failed = true;
        return;
    }
    for (size_t p = 0; p < graph->nprocesses; p++) {
        size_t root;
        bool anchor = is_root(picture->snapshot, graph->processes[p].process->pid, &root) && root < ROOTS_DRAWN_MAX;
        if (!drawn[p] && b->any_thread_of[p] == REPORT_NO_NODE && !anchor)
            continue;
        struct report_picture_process *process = &picture->processes[picture->nprocesses];
        *process = (struct report_picture_process){ .process = p, .drawn = drawn[p],
                                                    .left_out = graph->processes[p].nnodes - drawn[p],
                                                    .any_thread = b->any_thread_of[p] };
        for (size_t i = graph->processes[p].first_node; i < graph->processes[p].first_node + graph->processes[p].nnodes;
             i++)
            if (b->box_of_node[i] == REPORT_NO_NODE || b->box_of_node[i] == NO_ROOM)
                process->left_out_by_wake[graph->nodes[i].wake]++;
        picture_process[p] = picture->nprocesses++;
    }
    picture->processes_left_out = graph->nprocesses - picture->nprocesses;
    for (size_t i = 0; i < picture->nboxes; i++) {
        struct report_picture_box *box = &picture->boxes[i];
        if (box->kind == REPORT_BOX_THREAD)
            box->process = picture_process[graph->nodes[box->node].process_index];
    }
    for (size_t p = 0; p < graph->nprocesses; p++)
        if (b->any_thread_of[p] != REPORT_NO_NODE)
            picture->boxes[b->any_thread_of[p]].process = picture_process[p];
    for (size_t p = 0; p < picture->nprocesses && !b->failed; p++)
        if (picture->processes[p].left_out > 0) {
            struct report_picture_box box = { .kind = REPORT_BOX_LEFT_OUT, .mark = REPORT_PICTURE_PLAIN,
                                              .node = REPORT_NO_NODE, .process = p, .finding = -1 };
            add_box(b, &box);
        }
}

/* ---- edges --------------------------------------------------------------------------------------------------- */

static void add_edge(struct builder *b, size_t first_of_waiter, const struct report_picture_edge *edge)
{
    struct report_picture *picture = b->picture;
    /* an OR-set drawn as one box, or several pipes to one process, are one line, not several */
    for (size_t e = first_of_waiter; e < picture->nedges; e++)
        if (picture->edges[e].to == edge->to && picture->edges[e].kind == edge->kind)
            return;
    if (picture->nedges >= b->limits->edges) {
        picture->edges_left_out++;
        return;
    }
    struct report_picture_edge *grown = hd_grow(picture->edges, &b->edges_capacity, picture->nedges, sizeof *grown);
    if (!grown) {
        b->failed = true;
        return;
    }
    picture->edges = grown;
    picture->edges[picture->nedges++] = *edge;
    picture->kinds_used[edge->kind] = true;
    picture->knot_used |= edge->knot;
}

static enum report_picture_edge_kind picture_kind(const struct report_edge *edge, const struct hd_lock *lock)
{
    static const enum report_picture_edge_kind by_graph_kind[] = {
        [REPORT_EDGE_LOCK_OWNER] = REPORT_PICTURE_MUTEX, [REPORT_EDGE_JOIN] = REPORT_PICTURE_JOIN,
        [REPORT_EDGE_FUTEX] = REPORT_PICTURE_FUTEX,      [REPORT_EDGE_PIPE] = REPORT_PICTURE_PIPE,
        [REPORT_EDGE_SOCKET] = REPORT_PICTURE_SOCKET,    [REPORT_EDGE_CHILD] = REPORT_PICTURE_CHILD,
        [REPORT_EDGE_FILE_LOCK] = REPORT_PICTURE_FILE_LOCK,
        /* SIGCHLD ends the wait when the child exits: the same tie as wait4's */
        [REPORT_EDGE_SIGNAL] = REPORT_PICTURE_CHILD,
        /* a terminal carries bytes as a pipe does */
        [REPORT_EDGE_PTY] = REPORT_PICTURE_PIPE,
        /* a request answered through /dev/fuse, as a server answers on a socket */
        [REPORT_EDGE_FUSE] = REPORT_PICTURE_SOCKET,
    };
    if (edge->kind == REPORT_EDGE_LOCK_OWNER && lock->kind == HD_LOCK_RWLOCK)
        return REPORT_PICTURE_RWLOCK;
    if (edge->kind == REPORT_EDGE_LOCK_OWNER && lock->kind == HD_LOCK_GIL)
        return REPORT_PICTURE_GIL;
    return by_graph_kind[edge->kind];
}

/* The edges of each drawn thread to what is drawn; the rest counted. */
static void collect_edges(struct builder *b)
{
    const struct report_graph *graph = b->graph;
    for (size_t i = 0; i < b->picture->nboxes && !b->failed; i++) {
        if (b->picture->boxes[i].kind != REPORT_BOX_THREAD)
            continue;
        size_t node = b->picture->boxes[i].node, first = b->picture->nedges;
        const struct report_node *n = &graph->nodes[node];
        const struct hd_lock *lock = &n->thread->wait.lock;
        bool forever = n->wake == REPORT_WAKE_NEVER;
        for (size_t e = n->first_edge; e < n->first_edge + n->nedges; e++) {
            const struct report_edge *edge = &graph->edges[e];
            size_t to = edge_target(b, edge, node, false);
            if (to == REPORT_NO_NODE) {
                b->picture->edges_left_out++;
                continue;
            }
            bool lock_edge = edge->kind == REPORT_EDGE_LOCK_OWNER;
            struct report_picture_edge drawn = {
                .from = i, .to = to, .kind = picture_kind(edge, lock),
                .knot = forever && !report_edge_reaches_live(graph, edge, node, false),
                .object = lock_edge && lock->kind != HD_LOCK_GIL ? lock->object_address : 0,
            };
            add_edge(b, first, &drawn);
        }
        if (!owner_out_of_reach(graph, node))
            continue;
        size_t owner = owner_box(b, node, false);
        if (owner == REPORT_NO_NODE) {
            b->picture->edges_left_out++;
            continue;
        }
        struct report_picture_edge drawn = { .from = i, .to = owner, .kind = REPORT_PICTURE_OUT_OF_REACH,
                                             .knot = forever, .object = lock->object_address,
                                             .whereabouts = lock->owner_whereabouts };
        add_edge(b, first, &drawn);
    }
}

/* ---- the picture --------------------------------------------------------------------------------------------- */

static void builder_release(struct builder *b)
{
    free(b->box_of_node);
    free(b->any_thread_of);
}

struct report_picture *report_picture_new(const struct hd_snapshot *snapshot, const struct report_analysis *analysis,
                                          const struct report_picture_limits *limits)
{
    struct report_picture *picture hd_cleanup(report_picture_free) = calloc(1, sizeof *picture);
    const struct report_graph *graph = &analysis->graph;
    struct builder b cleanup_with(builder_release) = { .picture = picture, .graph = graph, .limits = limits };
    b.box_of_node = malloc((graph->nnodes + 1) * sizeof *b.box_of_node);
    b.any_thread_of = malloc((graph->nprocesses + 1) * sizeof *b.any_thread_of);
    if (!picture || !b.box_of_node || !b.any_thread_of)
        return NULL;
    picture->snapshot = snapshot;
    picture->analysis = analysis;
    for (size_t i = 0; i <= graph->nnodes; i++)
        b.box_of_node[i] = REPORT_NO_NODE;
    for (size_t p = 0; p <= graph->nprocesses; p++)
        b.any_thread_of[p] = REPORT_NO_NODE;
    draw_hang_subjects(&b);
    draw_threads_that_matter(&b);
    draw_wakers(&b);
    name_findings(&b);
    collect_processes(&b);
    collect_edges(&b);
    if (b.failed)
        return NULL;
    return steal_pointer(&picture);
}

void report_picture_free(struct report_picture *picture)
{
    if (!picture)
        return;
    free(picture->boxes);
    free(picture->processes);
    free(picture->edges);
    free(picture);
}

/* ---- words --------------------------------------------------------------------------------------------------- */

const char *report_picture_mark_name(enum report_picture_mark mark)
{
    static const char *const names[] = {
        [REPORT_PICTURE_ROOT_CAUSE] = "root cause",    [REPORT_PICTURE_IN_HANG] = "in a hang",
        [REPORT_PICTURE_FOREVER] = "asleep forever",   [REPORT_PICTURE_KERNEL] = "in the kernel, stopped",
        [REPORT_PICTURE_EXITED] = "exited",            [REPORT_PICTURE_WAITS] = "can be woken",
        [REPORT_PICTURE_RUNS] = "may run by itself",   [REPORT_PICTURE_PLAIN] = "not a thread",
    };
    return names[mark];
}

const char *report_picture_edge_kind_name(enum report_picture_edge_kind kind)
{
    static const char *const names[] = {
        [REPORT_PICTURE_MUTEX] = "mutex owner",          [REPORT_PICTURE_RWLOCK] = "rwlock owner",
        [REPORT_PICTURE_GIL] = "GIL holder",             [REPORT_PICTURE_JOIN] = "joined thread",
        [REPORT_PICTURE_FUTEX] = "futex: any thread",    [REPORT_PICTURE_PIPE] = "pipe: the other end",
        [REPORT_PICTURE_SOCKET] = "unix socket peer",    [REPORT_PICTURE_CHILD] = "wait4: the child",
        [REPORT_PICTURE_FILE_LOCK] = "file lock holder", [REPORT_PICTURE_OUT_OF_REACH] = "owner out of reach",
    };
    return names[kind];
}

static void thread_name(const struct report_picture_syntax *syntax, struct report_buffer *out, pid_t tid,
                        const char *name)
{
    report_buffer_printf(out, "thread %d '", (int)tid);
    syntax->escape(out, name);
    report_buffer_puts(out, "'");
}

/* "ROOT CAUSE: inherited-lock", "root cause of hang 2: lock-cycle", "HANG: deadlock, no rule names why",
 * "in waiting-on-workers": the verdict's own hang shouts, the others speak. */
static void hang_line(const struct report_picture *picture, const struct report_picture_box *box,
                      struct report_buffer *out)
{
    const struct report_analysis *analysis = picture->analysis;
    if (box->mark == REPORT_PICTURE_ROOT_CAUSE) {
        const struct report_hang *hang = &analysis->verdict.hangs[box->hang];
        if (box->hang == 0)
            report_buffer_puts(out, hang->root_cause ? "ROOT CAUSE" : "HANG");
        else
            report_buffer_printf(out, hang->root_cause ? "root cause of hang %zu" : "hang %zu", box->hang + 1);
        if (hang->finding < 0)
            report_buffer_printf(out, ": %s, no rule names why", report_cause_name(hang->cause));
        else
            report_buffer_printf(out, ": %s%s", analysis->findings[hang->finding].id,
                                 hang->root_cause ? "" : ", no root cause named");
    } else if (box->finding >= 0) {
        report_buffer_printf(out, "in %s", analysis->findings[box->finding].id);
    }
}

static void thread_label(const struct report_picture *picture, const struct report_picture_box *box,
                         const struct report_picture_syntax *syntax, struct report_buffer *out)
{
    const struct report_node *node = &picture->analysis->graph.nodes[box->node];
    const struct hd_thread *thread = node->thread;
    thread_name(syntax, out, thread->tid, thread->name);
    report_buffer_puts(out, syntax->line_break);
    report_buffer_puts(out, report_wait_label(thread));
    if (thread->blocked_for_known && thread->state != 'R') {
        char duration[32];
        report_format_duration(thread->blocked_for_s, duration, sizeof duration);
        report_buffer_printf(out, ", %s", duration);
    }
    if (node->wake != REPORT_WAKE_RUNNING) {
        report_buffer_puts(out, syntax->line_break);
        report_buffer_puts(out, report_wake_name(node->wake));
    }
    if (box->mark == REPORT_PICTURE_ROOT_CAUSE || box->finding >= 0) {
        report_buffer_puts(out, syntax->line_break);
        hang_line(picture, box, out);
    }
}

/* "+ 9,998 other threads: 9,990 can be woken, 8 running" */
static void left_out_label(const struct report_picture_process *process, const struct report_picture_syntax *syntax,
                           struct report_buffer *out)
{
    report_buffer_printf(out, "+ %zu %sthread%s not drawn", process->left_out, process->drawn ? "other " : "",
                         process->left_out == 1 ? "" : "s");
    const char *separator = syntax->line_break;
    for (size_t w = 0; w < COUNT(process->left_out_by_wake); w++)
        if (process->left_out_by_wake[w]) {
            report_buffer_printf(out, "%s%zu %s", separator, process->left_out_by_wake[w],
                                 report_wake_name((enum report_wake)w));
            separator = ", ";
        }
}

static void absent_owner_label(const struct report_picture_box *box, const struct report_picture_syntax *syntax,
                               struct report_buffer *out)
{
    static const char *const where[] = {
        [HD_OWNER_UNKNOWN] = "not in the tree",       [HD_OWNER_SAME_PROCESS] = "not in the tree",
        [HD_OWNER_OTHER_PROCESS] = "not in the tree", [HD_OWNER_OUTSIDE] = "outside the tree",
        [HD_OWNER_GONE] = "gone: no thread has that id",
    };
    report_buffer_printf(out, "thread %d%s%s", (int)box->tid, syntax->line_break, where[box->whereabouts]);
}

void report_picture_box_label(const struct report_picture *picture, size_t index,
                              const struct report_picture_syntax *syntax, struct report_buffer *out)
{
    const struct report_picture_box *box = &picture->boxes[index];
    switch (box->kind) {
    case REPORT_BOX_THREAD:
        thread_label(picture, box, syntax, out);
        return;
    case REPORT_BOX_ANY_THREAD: {
        const struct report_graph_process *process =
            &picture->analysis->graph.processes[picture->processes[box->process].process];
        report_buffer_printf(out, "any thread of%sprocess %d (%zu)", syntax->line_break, (int)process->process->pid,
                             process->nnodes);
        return;
    }
    case REPORT_BOX_LEFT_OUT:
        left_out_label(&picture->processes[box->process], syntax, out);
        return;
    case REPORT_BOX_ABSENT_OWNER:
        absent_owner_label(box, syntax, out);
        return;
    }
}

void report_picture_process_label(const struct report_picture *picture, size_t index,
                                  const struct report_picture_syntax *syntax, struct report_buffer *out)
{
    const struct hd_process *process = picture->analysis->graph.processes[picture->processes[index].process].process;
    report_buffer_printf(out, "process %d '", (int)process->pid);
    syntax->escape(out, process->comm);
    report_buffer_puts(out, "'");
    const struct hd_job *job = process->job;
    if (job && job->role == HD_JOB_RANK && job->rank >= 0) {
        report_buffer_printf(out, " · rank %d", job->rank);
        if (job->world_size >= 0)
            report_buffer_printf(out, " of %d", job->world_size);
    } else if (job && job->role == HD_JOB_WORKER) {
        report_buffer_printf(out, job->rank >= 0 ? " · worker of rank %d" : " · worker", job->rank);
    } else if (job && job->role == HD_JOB_LAUNCHER) {
        report_buffer_puts(out, " · launcher");
    }
    report_buffer_printf(out, "%s%zu thread%s%s", syntax->line_break, process->nthreads,
                         process->nthreads == 1 ? "" : "s", process->zombie ? ", zombie" : "");
}

void report_picture_edge_label(const struct report_picture_edge *edge, struct report_buffer *out)
{
    static const char *const nouns[] = {
        [REPORT_PICTURE_MUTEX] = "mutex",     [REPORT_PICTURE_RWLOCK] = "rwlock",   [REPORT_PICTURE_GIL] = "GIL",
        [REPORT_PICTURE_JOIN] = "join",       [REPORT_PICTURE_FUTEX] = "futex",     [REPORT_PICTURE_PIPE] = "pipe",
        [REPORT_PICTURE_SOCKET] = "unix socket", [REPORT_PICTURE_CHILD] = "wait4",
        [REPORT_PICTURE_FILE_LOCK] = "file lock", [REPORT_PICTURE_OUT_OF_REACH] = "lock",
    };
    /* why the owner of an out-of-reach lock never releases it */
    static const char *const unreachable[] = {
        [HD_OWNER_UNKNOWN] = "its owner cannot release it",
        [HD_OWNER_SAME_PROCESS] = "its owner cannot release it",
        [HD_OWNER_OTHER_PROCESS] = "copied by fork(): its owner cannot unlock it",
        [HD_OWNER_OUTSIDE] = "its owner is outside the tree",
        [HD_OWNER_GONE] = "its owner is gone",
    };
    report_buffer_puts(out, nouns[edge->kind]);
    if (edge->object)
        report_buffer_printf(out, " 0x%" PRIx64, edge->object);
    if (edge->kind == REPORT_PICTURE_OUT_OF_REACH)
        report_buffer_printf(out, ", %s", unreachable[edge->whereabouts]);
}

void report_picture_title(const struct report_picture *picture, const struct report_picture_syntax *syntax,
                          struct report_buffer *out)
{
    const struct report_analysis *analysis = picture->analysis;
    const struct report_verdict *verdict = &analysis->verdict;
    if (verdict->hung != REPORT_HUNG_YES) {
        report_buffer_puts(out, verdict->hung == REPORT_HUNG_NO ? "not hung" : "could not tell");
        return;
    }
    const struct report_hang *hang = &verdict->hangs[0];
    report_buffer_printf(out, "HUNG (%s): ", report_cause_name(hang->cause));
    if (hang->finding >= 0)
        report_buffer_printf(out, "%s in ", analysis->findings[hang->finding].id);
    const struct hd_thread *thread = hd_snapshot_find_thread(picture->snapshot, hang->tid, NULL);
    const struct hd_process *process = hd_snapshot_find_process(picture->snapshot, hang->pid);
    thread_name(syntax, out, hang->tid, thread ? thread->name : "?");
    report_buffer_printf(out, " of process %d '", (int)hang->pid);
    syntax->escape(out, process ? process->comm : "?");
    report_buffer_puts(out, "'");
    if (verdict->nhangs > 1)
        report_buffer_printf(out, " (and %zu more hang%s)", verdict->nhangs - 1, verdict->nhangs == 2 ? "" : "s");
}

void report_picture_left_out(const struct report_picture *picture, struct report_buffer *out)
{
    const struct {
        size_t count;
        const char *one, *many;
    } parts[] = {
        { picture->threads_left_out, "thread that matters (no room)", "threads that matter (no room)" },
        { picture->processes_left_out, "process with nothing in a hang", "processes with nothing in a hang" },
        { picture->edges_left_out, "edge", "edges" },
    };
    const char *separator = "not drawn: ";
    for (size_t i = 0; i < COUNT(parts); i++)
        if (parts[i].count) {
            report_buffer_printf(out, "%s%zu %s", separator, parts[i].count,
                                 parts[i].count == 1 ? parts[i].one : parts[i].many);
            separator = ", ";
        }
}
