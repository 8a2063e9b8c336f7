/* What hangdoc concludes from a snapshot: the wait-for graph, the findings, and the verdict.
 *
 * Pure over the snapshot (no /proc, no ptrace): every rule can be tested with a hand-built snapshot. The ids are
 * the stable ones of DESIGN.md's verdict catalogue; text and JSON print the same.
 */
#pragma once

#include "util.h"
#include "snapshot.h"
#include "registry.h"
#include "samples.h"

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
    REPORT_EDGE_FILE_LOCK,  /* a file lock: any thread of the process holding it (OR) */
    REPORT_EDGE_SIGNAL,     /* a signal wait that SIGCHLD ends: a child whose exit sends it (signals.c) */
    REPORT_EDGE_PTY,        /* the other side of a pseudo-terminal: a slave's master holder, a master's slaves' */
    REPORT_EDGE_FUSE,       /* a FUSE call: the daemon's threads at work on requests (any of them, OR) */
};

/* What an edge points at. A futex without owner can be woken by any thread of its process, a pipe by any thread
 * of a process holding the other end: such an OR-set is one edge to the process, not one edge to each of its
 * threads, so that a process of n idle threads has n edges and not n * n. */
enum report_target {
    REPORT_TO_THREAD,  /* `to` is a node */
    REPORT_TO_PROCESS, /* `to` is an index into graph.processes: any of its threads but the waiter itself */
};

struct report_edge {
    size_t from; /* node index */
    size_t to;   /* node index, or process index (REPORT_TO_PROCESS) */
    enum report_edge_kind kind;
    enum report_target target;
};

struct report_node {
    const struct hd_process *process;
    const struct hd_thread *thread; /* the snapshot's, or the graph's copy of one taken to wait again (gil.h) */
    struct report_history history; /* its samples folded (samples.h) */
    enum report_wake wake;
    bool blocked_without_timeout; /* asleep in a wait that has no timeout */
    bool waits_outside;           /* its wait (timed or not) can be ended by something outside the snapshot: a
                                   * socket to elsewhere, a tty, a file, a call hangdoc does not decode */
    uint64_t wake_signals;        /* the signals that end its wait (signals.c; bit n-1 for signal n): a signal
                                   * wait's, a signalfd's, a signal wake-up pipe's; 0 when none or unknown */
    const struct report_pump *pump; /* a library's message pump (python_view.h): it frees only the waiters of its
                                     * process that wait where it serves; NULL for every other thread */
    size_t process_index;         /* into graph.processes */
    size_t first_edge;            /* its edges: edges[first_edge .. first_edge + nedges - 1] */
    size_t nedges;
};

#define REPORT_NO_NODE ((size_t)-1)

/* A process of the snapshot and what the rules ask of its threads as a whole, counted once the graph settled. */
struct report_graph_process {
    const struct hd_process *process;
    size_t first_node; /* its threads are nodes first_node .. first_node + nnodes - 1 (snapshot order) */
    size_t nnodes;
    size_t never;      /* asleep forever */
    size_t self_running;       /* threads that may run by themselves: running, timed, outside, in the kernel */
    size_t runners[2];         /* the first two of those (REPORT_NO_NODE when fewer), to name one that is not X */
    size_t woken[2];           /* the first two threads that only a waker frees (REPORT_WAKE_WAKER after settling) */
};

struct report_graph {
    struct report_node *nodes; /* snapshot order */
    size_t nnodes;
    struct report_edge *edges; /* grouped by `from`, in node order */
    size_t nedges;
    struct report_graph_process *processes; /* snapshot order: processes[p].process == &snapshot->processes[p] */
    size_t nprocesses;
    struct report_tid_index {
        pid_t tid;
        size_t node;
    } *by_tid; /* sorted by tid */
    /* the threads taken to be in an earlier sample's wait (gil.h): their nodes point here, not at the snapshot */
    struct hd_thread *resumed;
    size_t nresumed;
};

/* ---- findings and the verdict ---- */

enum report_confidence { REPORT_CERTAIN, REPORT_LIKELY, REPORT_POSSIBLE, REPORT_INFORMATIONAL };

struct report_evidence {
    char *name;
    char *value; /* may hold target strings: renderers escape it */
};

struct report_runtime;
struct report_collective;
struct report_job_ranks;

struct report_finding {
    enum report_finding_id kind;
    const char *id; /* its name in the registry: "inherited-lock", ... */
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
    /* facts the verdict groups findings by (registry.h), set by the rules: not read back from the evidence */
    bool has_object;                      /* a lock or futex address names what it waits on */
    uint64_t object;                      /* that address, in the subject's memory */
    pid_t object_owner;                   /* the pid of the lock's owner; 0 when none is recorded */
    const struct report_runtime *runtime; /* the catalogued runtime its wait was attributed to, or NULL */
};

enum report_hung { REPORT_HUNG_NO, REPORT_HUNG_YES, REPORT_HUNG_UNKNOWN };

/* One independent hang: one root cause, and every finding that is that same root cause (the same inherited lock
 * in four forked workers is one hang, not four). */
struct report_hang {
    enum report_cause cause; /* never REPORT_CAUSE_NONE */
    long finding;      /* the finding that names it (index into findings); -1 for threads asleep forever that no
                        * rule of the catalogue explains (cause "deadlock") */
    bool root_cause;   /* false when `finding` only points at it (waiting-on-workers whose workers no rule names) */
    pid_t pid;
    pid_t tid;
    pid_t *chain;      /* from the top process down to the subject's */
    size_t nchain;
    size_t *findings;  /* every finding of this hang, `finding` first */
    size_t nfindings;
    size_t findings_capacity;
};

/* The verdict's pid, tid, cause, root_cause and chain are those of hangs[0], the first of the catalogue's order. */
struct report_verdict {
    enum report_hung hung;
    enum report_cause cause; /* REPORT_CAUSE_NONE when not hung */
    long root_cause;   /* index into findings, -1 when none */
    pid_t pid;
    pid_t tid;
    pid_t *chain; /* from the top process down to the root cause's (hangs[0].chain, not owned) */
    size_t nchain;
    struct report_hang *hangs;
    size_t nhangs;
    size_t hangs_capacity;
    size_t unread_waits; /* threads asleep whose wait could not be read (permissions): "could not tell" */
};

struct report_catalogue;

struct report_analysis {
    struct report_graph graph;
    const struct report_catalogue *catalogue; /* borrowed: the runtimes the findings and renderers classify by */
    double stuck_after_s;                     /* report_options' */
    struct report_finding *findings;
    size_t nfindings;
    size_t findings_capacity;
    struct report_verdict verdict;
    bool asleep_forever_exists; /* then a signal could still wake them: say so once */
    bool *named_by_hang;        /* per node: the subject or a member of a finding that is a hang */
    struct report_collective *collectives; /* the processes in a collective, snapshot order (collectives.h) */
    size_t ncollectives;
    struct report_job_ranks *jobs; /* the rank processes by job (collectives.h) */
    size_t njobs;
};

/* The analysis's settings: what the caller decides, not what was read from the system. */
struct report_options {
    const struct report_catalogue *catalogue; /* the runtimes (catalogue.h), outliving the analysis; NULL: built in */
    /* --stuck-after: a thread asleep without timeout at least this long whose only wakers wake on timers is likely
     * hung (rules/timers.c), as is a reader of a pipe held open; 0: those rules are off */
    double stuck_after_s;
};

/* With the default settings (the built-in catalogue, stuck_after_s 0). NULL only when memory ran out. */
struct report_analysis *report_analyze(const struct hd_snapshot *snapshot);
/* The same with the caller's settings. */
struct report_analysis *report_analyze_with(const struct hd_snapshot *snapshot, const struct report_options *options);
void report_analysis_free(struct report_analysis *analysis);
HD_DEFINE_CLEANUP(struct report_analysis, report_analysis_free)

const char *report_confidence_name(enum report_confidence confidence);
const char *report_wake_name(enum report_wake wake);
const char *report_edge_kind_name(enum report_edge_kind kind);

/* Builds the graph and decides who can wake (graph.c). False when memory ran out. */
bool report_build_graph(const struct hd_snapshot *snapshot, struct report_graph *graph);
void report_graph_release(struct report_graph *graph);
/* The fixpoint of the graph from chosen seeds: live[i] for every node that is a seed, or that waits (REPORT_WAKE_WAKER)
 * with an edge to a live node; linear in nodes + edges. report_build_graph settles the graph with the nodes that
 * may run by themselves as seeds; the timer rule asks again without the threads that only wake on timers. False
 * when memory ran out. */
bool report_graph_reach(const struct report_graph *graph, const bool *seeds, bool *live);
/* The node of thread `tid`, or REPORT_NO_NODE. O(log n). */
size_t report_graph_find(const struct report_graph *graph, pid_t tid);
/* The folded samples of `thread` (a thread of the snapshot the graph was built from); an empty history for one
 * the graph does not have. */
const struct report_history *report_thread_history(const struct report_graph *graph, const struct hd_thread *thread);
/* The graph's entry for `process`, a process of the snapshot the graph was built from. */
const struct report_graph_process *report_graph_process_of(const struct report_graph *graph,
                                                           const struct hd_process *process);
/* Does the thread of `node`, asleep forever, wait for a signal by design: in pause(), sigsuspend() or sigwait(), or
 * on a self-pipe or signalfd that a signal a program catches to be told what to do ends (signals.h)? A daemon's
 * main loop waiting to be stopped, not a knot. */
bool report_waits_for_a_signal_by_design(const struct report_node *node);
/* Thread `tid` as the analysis takes it (its node's thread), and its process when `process` is not NULL; NULL and
 * NULL when the graph has no such thread. */
const struct hd_thread *report_graph_thread(const struct report_graph *graph, pid_t tid,
                                            const struct hd_process **process);
/* Thread `t` of `process` as the analysis takes it: its node's (gil.h), the snapshot's when the graph has none.
 * Ask this, not process->threads, wherever a wait matters. */
const struct hd_thread *report_process_thread(const struct report_graph *graph, const struct hd_process *process,
                                              size_t t);
/* A thread that could wake `waiter` through `edge` and is not asleep forever or exited: one that may run by
 * itself if the edge reaches one, else one that a waker frees; REPORT_NO_NODE when none. */
size_t report_edge_waker(const struct report_graph *graph, const struct report_edge *edge, size_t waiter);
/* Does `edge` reach a thread (other than `waiter`) that is not asleep forever or exited? With `ignore_woken`,
 * threads of the waiter's own process that only a waker frees do not count. */
bool report_edge_reaches_live(const struct report_graph *graph, const struct report_edge *edge, size_t waiter,
                              bool ignore_woken);
/* The first thread an edge reaches other than `waiter` (for naming a process), or REPORT_NO_NODE. */
size_t report_edge_first(const struct report_graph *graph, const struct report_edge *edge, size_t waiter);
