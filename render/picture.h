/* The wait-for graph as a picture: which threads to draw, grouped by process, the edges between them, and what to
 * highlight (the root cause, the knot), bounded so that a 10,000-thread process is a few boxes and a note of how
 * many were left out.
 *
 * Pure over (snapshot, analysis), and free of any format's syntax: the DOT renderer (render_dot.h) and the Mermaid
 * graph of the Markdown summary (render_markdown.h) draw the same picture, each escaping target strings its own way
 * through a report_picture_syntax.
 */
#pragma once

#include "analysis.h"
#include "buffer.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a box is highlighted; a thread gets the first that applies. */
enum report_picture_mark {
    REPORT_PICTURE_ROOT_CAUSE, /* the subject of a hang: its root-cause finding's, or a knot no rule explains */
    REPORT_PICTURE_IN_HANG,    /* the subject or a member of another finding that is a hang */
    REPORT_PICTURE_FOREVER,    /* asleep forever: nothing that could wake it can run (the knot) */
    REPORT_PICTURE_KERNEL,     /* in D, stopped, or not in a system call: the kernel's to decide */
    REPORT_PICTURE_EXITED,
    REPORT_PICTURE_WAITS,      /* blocked, but a thread that can run may wake it */
    REPORT_PICTURE_RUNS,       /* running, in a timed wait, or waiting on something outside the tree */
    REPORT_PICTURE_PLAIN,      /* not a thread: "any thread of", "not drawn" */
    REPORT_PICTURE_MARKS
};

enum report_picture_box_kind {
    REPORT_BOX_THREAD,       /* a thread of the snapshot */
    REPORT_BOX_ANY_THREAD,   /* "any thread of this process": where an OR-set edge (futex, pipe, wait4) points */
    REPORT_BOX_LEFT_OUT,     /* a note in the process: how many of its threads are not drawn */
    REPORT_BOX_ABSENT_OWNER, /* the owner a lock records, not in the snapshot (gone, or outside the tree) */
};

struct report_picture_box {
    enum report_picture_box_kind kind;
    enum report_picture_mark mark;
    size_t node;    /* THREAD: the graph's node */
    size_t process; /* index into picture->processes; REPORT_NO_NODE for an absent owner */
    pid_t tid;      /* THREAD, ABSENT_OWNER */
    size_t hang;    /* ROOT_CAUSE: the verdict's hang it is the subject of (0: the verdict's own) */
    long finding;   /* THREAD: the first hang finding about it (the root cause for ROOT_CAUSE); -1 when none */
    enum hd_owner_whereabouts whereabouts; /* ABSENT_OWNER: why it is not in the snapshot */
};

struct report_picture_process {
    size_t process;  /* index into the graph's (and the snapshot's) processes */
    size_t drawn;    /* its threads that have a box */
    size_t left_out; /* its threads that have none */
    size_t left_out_by_wake[REPORT_WAKE_EXITED + 1];
    size_t any_thread; /* its ANY_THREAD box, or REPORT_NO_NODE */
};

enum report_picture_edge_kind {
    REPORT_PICTURE_MUTEX,    /* lock-owner edges, by the lock the waiter waits for */
    REPORT_PICTURE_RWLOCK,
    REPORT_PICTURE_GIL,
    REPORT_PICTURE_JOIN,
    REPORT_PICTURE_FUTEX,    /* a futex without owner: any thread that reaches it */
    REPORT_PICTURE_PIPE,
    REPORT_PICTURE_SOCKET,
    REPORT_PICTURE_CHILD,    /* wait4, waitid */
    REPORT_PICTURE_FILE_LOCK,
    REPORT_PICTURE_OUT_OF_REACH, /* not an edge of the graph: the owner a lock records, who can never release it
                                  * (a fork() copy of a lock held in the parent, an owner that is gone) */
    REPORT_PICTURE_EDGE_KINDS
};

struct report_picture_edge {
    size_t from, to; /* boxes */
    enum report_picture_edge_kind kind;
    bool knot;       /* the waiter is asleep forever and nothing at this end can run: an edge of the knot */
    uint64_t object; /* the lock's address for lock edges, 0 otherwise */
    enum hd_owner_whereabouts whereabouts; /* OUT_OF_REACH: where the owner is */
};

/* How much a picture may hold: boxes of threads and absent owners, and edges. As many "any thread of" boxes at most,
 * and the one "not drawn" note of each drawn process, come on top. */
struct report_picture_limits {
    size_t boxes;
    size_t edges;
};

struct report_picture {
    const struct hd_snapshot *snapshot;
    const struct report_analysis *analysis;
    struct report_picture_box *boxes;
    size_t nboxes;
    struct report_picture_process *processes; /* those drawn, in snapshot order */
    size_t nprocesses;
    struct report_picture_edge *edges; /* in the order of their waiters' boxes */
    size_t nedges;
    /* what the limits or the choice of what matters left out, for the picture's own note */
    size_t threads_left_out;   /* threads the picture wanted (in a hang, asleep forever, a waker) but had no room for */
    size_t processes_left_out; /* processes with nothing drawn */
    size_t edges_left_out;     /* edges of drawn threads to threads not drawn, or past the edge limit */
    bool marks_used[REPORT_PICTURE_MARKS];           /* for the legend */
    bool kinds_used[REPORT_PICTURE_EDGE_KINDS];
    bool knot_used;
};

/* NULL only when memory ran out. */
struct report_picture *report_picture_new(const struct hd_snapshot *snapshot, const struct report_analysis *analysis,
                                          const struct report_picture_limits *limits);
void report_picture_free(struct report_picture *picture);
HD_DEFINE_CLEANUP(struct report_picture, report_picture_free)

/* How a format writes the words of a box: an escape for each target string (comm, thread name), and a line break
 * inside a label. */
struct report_picture_syntax {
    void (*escape)(struct report_buffer *out, const char *text);
    const char *line_break;
};

/* "thread 4012 'locker'", its wait and how long, whether it can run, and the hang it is the root cause of. */
void report_picture_box_label(const struct report_picture *picture, size_t box,
                              const struct report_picture_syntax *syntax, struct report_buffer *out);
/* "process 4000 'trainer' · rank 3 of 8", and its thread count. */
void report_picture_process_label(const struct report_picture *picture, size_t process,
                                  const struct report_picture_syntax *syntax, struct report_buffer *out);
/* "mutex 0x55d2a0c4e040", "wait4", "copied by fork(): its owner cannot unlock it": hangdoc's words only. */
void report_picture_edge_label(const struct report_picture_edge *edge, struct report_buffer *out);
/* The verdict in one line, for a title: "HUNG (fork-inheritance): inherited-lock in thread 4012 'w' of process
 * 4012". */
void report_picture_title(const struct report_picture *picture, const struct report_picture_syntax *syntax,
                          struct report_buffer *out);
/* What the picture left out as a whole ("not drawn: 12 processes where every thread can run ..."); nothing when
 * it left nothing out. */
void report_picture_left_out(const struct report_picture *picture, struct report_buffer *out);

/* For the legend: "root cause", "asleep forever", ...; "mutex", "wait4", ... (static) */
const char *report_picture_mark_name(enum report_picture_mark mark);
const char *report_picture_edge_kind_name(enum report_picture_edge_kind kind);
