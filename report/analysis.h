/* What hangdoc concludes from a snapshot: the wait-for graph, the findings, and the verdict.
 *
 * Pure over the snapshot (no /proc, no ptrace): every rule can be tested with a hand-built snapshot. The ids are
 * the stable ones of DESIGN.md's verdict catalogue; text and JSON print the same.
 */
#pragma once

#include "../probe/snapshot.h"

#include <stdbool.h>
#include <stddef.h>

/* ---- the wait-for graph ---- */

/* Why a thread can or cannot run again by itself. */
enum report_wake {
    REPORT_WAKE_RUNNING,        /* on a CPU, or progressed between samples */
    REPORT_WAKE_TIMER,          /* a timed wait: the timeout wakes it */
    REPORT_WAKE_OUTSIDE,        /* waits on something outside the snapshot: a socket to elsewhere, a tty, a file */
    REPORT_WAKE_KERNEL,         /* D state, stopped, or not in a system call: not the program's to decide */
    REPORT_WAKE_WAKER,          /* blocked, but a thread that can run may wake it (an edge to it) */
    REPORT_WAKE_NEVER,          /* asleep forever: nobody who could wake it can ever run */
    REPORT_WAKE_EXITED,         /* a zombie thread */
};

enum report_edge_kind {
    REPORT_EDGE_LOCK_OWNER, /* mutex / rwlock: only the owner can release it (AND) */
    REPORT_EDGE_JOIN,       /* pthread_join: the joined thread's exit */
    REPORT_EDGE_FUTEX,      /* a futex without owner: any thread that reaches it (OR) */
    REPORT_EDGE_PIPE,       /* the other end of a pipe */
    REPORT_EDGE_SOCKET,     /* the peer of a unix socket */
    REPORT_EDGE_CHILD,      /* a child waited for */
};

struct report_edge {
    size_t from; /* node indexes */
    size_t to;
    enum report_edge_kind kind;
};

struct report_node {
    const struct hd_process *process;
    const struct hd_thread *thread;
    enum report_wake wake;
    bool blocked_without_timeout; /* asleep in a wait that has no timeout */
};

struct report_graph {
    struct report_node *nodes; /* snapshot order */
    size_t nnodes;
    struct report_edge *edges;
    size_t nedges;
};

/* ---- findings and the verdict ---- */

enum report_confidence { REPORT_CERTAIN, REPORT_LIKELY, REPORT_POSSIBLE, REPORT_INFORMATIONAL };

struct report_evidence {
    char *name;
    char *value; /* may hold target strings: renderers escape it */
};

struct report_finding {
    const char *id; /* static: "inherited-lock", ... */
    enum report_confidence confidence;
    bool hang;      /* false only for "idle" */
    pid_t pid;
    pid_t tid;
    char *summary;
    struct report_evidence *evidence;
    size_t nevidence;
    char **remedies;
    size_t nremedies;
    size_t *members; /* node indexes: the threads of a lock cycle, the workers waited on */
    size_t nmembers;
};

enum report_hung { REPORT_HUNG_NO, REPORT_HUNG_YES, REPORT_HUNG_UNKNOWN };

/* One independent hang: one root cause, and every finding that is that same root cause (the same inherited lock
 * in four forked workers is one hang, not four). */
struct report_hang {
    const char *cause; /* static: "fork-inheritance", "deadlock", "kernel", "busy-loop", "stopped", "worker-died",
                        * "unknown" */
    long finding;      /* the finding that names it (index into findings); -1 for threads asleep forever that no
                        * rule of the catalogue explains (cause "deadlock") */
    bool root_cause;   /* false when `finding` only points at it (waiting-on-workers whose workers no rule names) */
    pid_t pid;
    pid_t tid;
    pid_t *chain;      /* from the top process down to the subject's */
    size_t nchain;
    size_t *findings;  /* every finding of this hang, `finding` first */
    size_t nfindings;
};

/* The verdict's pid, tid, cause, root_cause and chain are those of hangs[0], the first of the catalogue's order. */
struct report_verdict {
    enum report_hung hung;
    const char *cause; /* static: "fork-inheritance", "deadlock", "none", "unknown", ... */
    long root_cause;   /* index into findings, -1 when none */
    pid_t pid;
    pid_t tid;
    pid_t *chain; /* from the top process down to the root cause's (hangs[0].chain, not owned) */
    size_t nchain;
    struct report_hang *hangs;
    size_t nhangs;
    size_t unread_waits; /* threads asleep whose wait could not be read (permissions): "could not tell" */
};

struct report_catalogue;

struct report_analysis {
    struct report_graph graph;
    const struct report_catalogue *catalogue; /* borrowed: the runtimes the findings and renderers classify by */
    struct report_finding *findings;
    size_t nfindings;
    struct report_verdict verdict;
    bool asleep_forever_exists; /* then a signal could still wake them: say so once */
};

/* NULL only when memory ran out. */
struct report_analysis *report_analyze(const struct hd_snapshot *snapshot);
/* The same with a runtime catalogue of the caller's (catalogue.h), which must outlive the analysis. */
struct report_analysis *report_analyze_with(const struct hd_snapshot *snapshot,
                                            const struct report_catalogue *catalogue);
void report_analysis_free(struct report_analysis *analysis);

const char *report_confidence_name(enum report_confidence confidence);
const char *report_wake_name(enum report_wake wake);
const char *report_edge_kind_name(enum report_edge_kind kind);

/* Builds the graph and decides who can wake (graph.c). False when memory ran out. */
bool report_build_graph(const struct hd_snapshot *snapshot, struct report_graph *graph);
void report_graph_release(struct report_graph *graph);
/* The node of thread `tid`, or (size_t)-1. */
size_t report_graph_find(const struct report_graph *graph, pid_t tid);
