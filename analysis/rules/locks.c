/* The lock family (rule.h): inherited-lock, abandoned-lock and lock-cycle, over waits on locks with an owner, and
 * unowned-lock-cycle, over threads taking locks that record none. */
#include "rule.h"

#include "describe.h"
#include "python_view.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* The lock's address, type and owner as evidence, and as the facts the verdict groups the findings by. */
static void lock_evidence(struct report_rule_context *c, struct report_finding *finding, const struct hd_wait *wait)
{
    if (!finding)
        return;
    const struct hd_lock *lock = &wait->lock;
    rule_evidence(c, finding, "address", "0x%" PRIx64, wait->address);
    rule_evidence(c, finding, "lock", "%s%s%s%s%s", lock->type ? lock->type : "", lock->type ? " " : "",
                  report_lock_noun(lock), lock->robust ? ", robust" : "",
                  lock->priority_inheritance ? ", priority-inheritance" : "");
    if (lock->word_read)
        rule_evidence(c, finding, "lock_word", "0x%" PRIx32, lock->word);
    rule_evidence(c, finding, "owner_tid", "%d", (int)lock->owner_tid);
    if (lock->owner_ns_tid && lock->owner_ns_tid != lock->owner_tid)
        rule_evidence(c, finding, "owner_in_namespace", "the lock records tid %d, its id in the target's PID "
                      "namespace; %d in this one", (int)lock->owner_ns_tid, (int)lock->owner_tid);
    rule_evidence(c, finding, "owner_whereabouts", "%s", hd_owner_whereabouts_name(lock->owner_whereabouts));
    if (lock->owner_pid)
        rule_evidence(c, finding, "owner_pid", "%d", (int)lock->owner_pid);
    rule_evidence(c, finding, "mapping", "%s%s%s", hd_mapping_kind_name(wait->mapping_kind),
                  wait->mapping.path ? " " : "", wait->mapping.path ? wait->mapping.path : "");
    finding->has_object = true;
    finding->object = wait->address;
    finding->object_owner = lock->owner_pid;
}

/* Why the owner of a lock cannot release it, if it cannot. */
enum unreleasable {
    RELEASABLE,
    HELD_AT_FORK,  /* by a thread of an ancestor, which stayed there */
    OWNER_EXITED,  /* no thread has the owner's tid */
    OWNER_REUSED,  /* the owner's tid now names a thread of an unrelated process */
};

static enum unreleasable unreleasable(const struct report_rule_context *c, const struct report_node *node)
{
    if (!rule_waits_on_owned_lock(node))
        return RELEASABLE;
    const struct hd_wait *wait = &node->thread->wait;
    const struct hd_lock *lock = &wait->lock;
    if (lock->owner_whereabouts == HD_OWNER_GONE)
        return OWNER_EXITED;
    if ((lock->owner_whereabouts != HD_OWNER_OTHER_PROCESS && lock->owner_whereabouts != HD_OWNER_OUTSIDE) ||
        wait->mapping_kind == HD_MAPPING_SHARED)
        return RELEASABLE;
    return rule_is_ancestor(c->snapshot, lock->owner_pid, node->process) ? HELD_AT_FORK : OWNER_REUSED;
}

/* A lock held at fork() by a thread of an ancestor: that thread is not in the child, nothing there can unlock. */
void report_rule_inherited_lock(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (unreleasable(c, node) != HELD_AT_FORK)
            continue;
        const struct hd_lock *lock = &node->thread->wait.lock;
        struct report_finding *finding = rule_finding(
            c, REPORT_INHERITED_LOCK, REPORT_CERTAIN, node,
            "thread %d '%s' waits for %s 0x%" PRIx64 " held by thread %d '%s' of %s %d at fork(); that thread is "
            "not in this process, so nothing here can unlock it",
            (int)node->thread->tid, node->thread->name, report_lock_noun(lock), lock->object_address,
            (int)lock->owner_tid, rule_thread_name(c, lock->owner_tid),
            node->process->ppid == lock->owner_pid ? "parent" : "ancestor", (int)lock->owner_pid);
        if (lock->kind == HD_LOCK_GIL)
            rule_remedy(c, finding, "The fork() came from C code that CPython did not see (a library's fork(), "
                                    "ctypes' libc.fork()): os.fork() hands the child a fresh GIL; C code that forks "
                                    "with Python threads running must call PyOS_BeforeFork(), then "
                                    "PyOS_AfterFork_Child() in the child and PyOS_AfterFork_Parent() in the parent, "
                                    "or exec at once in the child (posix_spawn) without returning into Python.");
        rule_remedy(c, finding, "Do not fork() while other threads may hold locks: fork before any thread starts, "
                                "exec at once in the child (posix_spawn), or create the workers with spawn or "
                                "forkserver instead of fork.");
        lock_evidence(c, finding, &node->thread->wait);
    }
}

/* A lock whose owner no longer exists: it exited holding it (certain), or its tid was reused (likely). */
void report_rule_abandoned_lock(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        enum unreleasable why = unreleasable(c, node);
        if (why != OWNER_EXITED && why != OWNER_REUSED)
            continue;
        const struct hd_lock *lock = &node->thread->wait.lock;
        struct report_finding *finding = NULL;
        if (why == OWNER_EXITED) {
            finding = rule_finding(c, REPORT_ABANDONED_LOCK, REPORT_CERTAIN, node,
                                   "thread %d '%s' waits for %s 0x%" PRIx64 " whose owner, thread %d, no longer "
                                   "exists: it exited holding the lock",
                                   (int)node->thread->tid, node->thread->name, report_lock_noun(lock),
                                   lock->object_address, (int)lock->owner_tid);
            rule_remedy(c, finding, "Unlock on every path out of the critical section, thread exit and "
                                    "cancellation included (pthread_cleanup_push), or use a robust mutex and "
                                    "handle EOWNERDEAD.");
        } else {
            finding = rule_finding(c, REPORT_ABANDONED_LOCK, REPORT_LIKELY, node,
                                   "thread %d '%s' waits for %s 0x%" PRIx64 " whose recorded owner, tid %d, is "
                                   "now a thread of unrelated process %d: the owner exited and its tid was reused",
                                   (int)node->thread->tid, node->thread->name, report_lock_noun(lock),
                                   lock->object_address, (int)lock->owner_tid, (int)lock->owner_pid);
            rule_remedy(c, finding, "Unlock on every path out of the critical section, thread exit included.");
        }
        lock_evidence(c, finding, &node->thread->wait);
    }
}

/* The owner edge of a node (each waiter has at most one), or REPORT_NO_NODE. */
static size_t owner_of(const struct report_graph *graph, size_t node)
{
    const struct report_node *n = &graph->nodes[node];
    for (size_t e = n->first_edge; e < n->first_edge + n->nedges; e++)
        if (graph->edges[e].kind == REPORT_EDGE_LOCK_OWNER)
            return graph->edges[e].to;
    return REPORT_NO_NODE;
}


static void add_lock_cycle(struct report_rule_context *c, size_t start, size_t length)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct report_node *first = &graph->nodes[start];
    bool through_gil = false;
    for (size_t node = start, steps = 0; steps < length; steps++, node = owner_of(graph, node))
        through_gil |= graph->nodes[node].thread->wait.lock.kind == HD_LOCK_GIL;
    struct report_finding *finding =
        length == 1 ? rule_finding(c, REPORT_LOCK_CYCLE, REPORT_CERTAIN, first,
                                  "thread %d '%s' waits for a %s it holds itself: a non-recursive lock taken "
                                  "twice", (int)first->thread->tid, first->thread->name,
                                  report_lock_noun(&first->thread->wait.lock))
                    : rule_finding(c, REPORT_LOCK_CYCLE, REPORT_CERTAIN, first,
                                  "%zu threads wait on locks owned by each other%s", length,
                                  through_gil ? ", one of them the Python GIL" : "");
    size_t node = start;
    do {
        const struct report_node *n = &graph->nodes[node];
        const struct hd_lock *lock = &n->thread->wait.lock;
        rule_member(c, finding, node);
        rule_evidence(c, finding, "waiter", "thread %d '%s' of process %d waits for %s 0x%" PRIx64 " held by thread %d",
                 (int)n->thread->tid, n->thread->name, (int)n->process->pid, report_lock_noun(lock),
                 lock->object_address, (int)lock->owner_tid);
        node = owner_of(graph, node);
    } while (node != start);
    if (through_gil)
        rule_remedy(c, finding, "Release the GIL before a call that may block on a lock another thread holds while it "
                                "calls back into Python: ctypes.CDLL (not PyDLL), Py_BEGIN_ALLOW_THREADS in a C "
                                "extension, py::gil_scoped_release or py::call_guard<py::gil_scoped_release> in "
                                "pybind11; and in the callback's thread, do not hold a C lock while it enters Python.");
    rule_remedy(c, finding, length == 1 ? "Do not lock a mutex the thread already holds (or make it recursive, "
                                     "PTHREAD_MUTEX_RECURSIVE, if re-entry is intended)."
                                   : "Take the locks in one global order everywhere (or use "
                                     "pthread_mutex_trylock and back off), so that no two threads can each "
                                     "hold what the other waits for.");
}


/* Threads that wait on locks owned by each other: jstack's "Found one deadlock". One finding per cycle, on the
 * member that comes first in the snapshot, in that order. Each waiter has at most one owner, so the owner edges
 * form paths that end in a thread or in one cycle: one walk per path, each node visited once. */
void report_rule_lock_cycle(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t *walk = calloc(graph->nnodes + 1, sizeof *walk); /* 0: not seen; else 1 + the start of its walk */
    size_t *starts = calloc(graph->nnodes + 1, sizeof *starts);
    size_t *lengths = calloc(graph->nnodes + 1, sizeof *lengths);
    if (!walk || !starts || !lengths) {
        c->failed = true;
        goto done;
    }
    for (size_t start = 0; start < graph->nnodes; start++) {
        if (walk[start] || !rule_waits_on_owned_lock(&graph->nodes[start]))
            continue;
        size_t node = start;
        while (node != REPORT_NO_NODE && !walk[node] && rule_waits_on_owned_lock(&graph->nodes[node])) {
            walk[node] = start + 1;
            node = owner_of(graph, node);
        }
        if (node == REPORT_NO_NODE || walk[node] != start + 1)
            continue; /* the path ended, or ran into an earlier walk */
        /* a cycle through `node`: its smallest member names it */
        size_t smallest = node, length = 0, n = node;
        do {
            smallest = n < smallest ? n : smallest;
            length++;
            n = owner_of(graph, n);
        } while (n != node);
        starts[smallest] = 1;
        lengths[smallest] = length;
    }
    /* a lock taken twice by one thread that a signal handler re-entered is signal-reentry's */
    for (size_t i = 0; i < graph->nnodes && !c->failed; i++)
        if (starts[i] && !(lengths[i] == 1 && rule_named_by_a_hang(c->analysis, i)))
            add_lock_cycle(c, i, lengths[i]);
done:
    free(walk);
    free(starts);
    free(lengths);
}

/* ---- unowned-lock-cycle ------------------------------------------------------------------------------------ */

/* `caller` of a row that accepts an unnamed static function of the same module as the taker's caller */
#define STATIC_CALLER ""
/* `caller` of a row whose nearest callers must be unnamed or parts of CPython's locks (see parked_on_a_lock) */
#define LOCK_CALLERS "\x01"

#define NO_WORD (-1)
/* the `caller` of a row whose `pattern` is the decoded lock's type (hd_lock.type), not a frame */
#define BY_LOCK_TYPE "\x02"

/* Locks whose word records no owner, by the function a thread sleeps in to take one: the one frame that tells a
 * lock being taken from any other futex wait (a condition variable, a semaphore, an event). */
static const struct {
    const char *pattern; /* fnmatch(3) over the demangled native frame */
    const char *caller;  /* a frame further out that must be there too (NULL: none): the lock's own entry point */
    const char *lock;
    bool python;         /* CPython's: taken for threading's waits too, so the Python frame must be the user's */
    int word_offset;     /* where in the lock its futex word lies, the word the waiters sleep on; NO_WORD where
                          * each waiter parks on a word of its own */
} unowned_lock_takers[] = {
    /* PyThread_acquire_lock_timed also serves SimpleQueue.get(), the io locks and the import lock: only the
     * Lock and RLock objects' acquire count */
    { "PyThread_acquire_lock_timed", "lock_PyThread_acquire_lock*", "CPython's threading.Lock", true, 0 },
    { "PyThread_acquire_lock_timed", "rlock_acquire*", "CPython's threading.RLock", true, 0 },
    { "_PyMutex_LockTimed", "lock_PyThread_acquire_lock*", "CPython's threading.Lock", true, NO_WORD },
    { "_PyMutex_LockTimed", "rlock_acquire*", "CPython's threading.RLock", true, NO_WORD },
    /* A stripped interpreter (Debian's python3 without its -dbg package, uv's builds, most images) names only what
     * it exports: the callers above are static. Called straight from an unnamed function of the interpreter itself,
     * from the user's Python code, the exported lock call is a Lock's or an RLock's acquire (SimpleQueue.get is the
     * one other such caller a user's line makes, and it waits on a lock of its own the same way). The report says
     * less, never something else. */
    { "PyThread_acquire_lock_timed", STATIC_CALLER, "CPython's threading.Lock or RLock", true, 0 },
    /* 3.13's Lock and RLock go through its exported retry loop first */
    { "PyThread_acquire_lock_timed_with_retries", STATIC_CALLER, "CPython's threading.Lock or RLock", true, 0 },
    { "_PyMutex_LockTimed", STATIC_CALLER, "CPython's threading.Lock or RLock", true, NO_WORD },
    /* 3.13+ built with link-time optimisation (Debian's 3.14) inlines or clones the lock calls into functions no
     * table names: what is left is the exported semaphore every parking-lot wait sleeps in. Only a Lock's or an
     * RLock's acquire reaches it straight from the user's line through unnamed or lock frames; an Event's or a
     * join's wait (PyEvent_WaitTimed) and SimpleQueue.get name another function where names are there. */
    { "_PySemaphore_Wait", LOCK_CALLERS, "CPython's threading.Lock or RLock", true, NO_WORD },
    { "*Mutex*::lock_contended", NULL, "Rust's std::sync::Mutex", false, 0 },
    /* { state, writer_notify } (std/src/sys/.../futex rwlock): readers sleep on the state word, writers on the
     * word after it, so that a reader and a writer of one lock are told to be at one lock */
    { "*RwLock*::write_contended", NULL, "Rust's std::sync::RwLock, to write", false, 4 },
    { "*RwLock*::read_contended", NULL, "Rust's std::sync::RwLock, to read", false, 0 },
    { "*parking_lot*RawMutex*::lock_slow", NULL, "Rust's parking_lot::Mutex", false, NO_WORD },
    { "absl::*Mutex::LockSlow*", NULL, "Abseil's absl::Mutex", false, NO_WORD },
    /* told by the words of the lock (probe/locks.c), not by a frame: musl's own functions have no unwind tables,
     * and a static binary's stack ends in them. The waiters sleep on the second int. */
    { "musl normal", BY_LOCK_TYPE, "musl's pthread_mutex_t (normal)", false, 4 },
};

#define TAKER_FRAMES_SEARCHED 16

/* The Python files whose lock acquires are waits of another kind: a Condition's or Event's waiter lock, a join's
 * thread-state lock, a queue's or a pool's condition. */
static const char *const python_wait_files[] = {
    "threading.py", "queue.py", "concurrent/futures/_base.py", "concurrent/futures/thread.py",
    "multiprocessing/pool.py", "multiprocessing/queues.py", "multiprocessing/synchronize.py",
};

static bool python_waits_in_library(const struct hd_thread *thread)
{
    if (thread->npython_frames == 0)
        return true; /* without the Python stack, a CPython lock acquire could be any of threading's waits */
    for (size_t f = 0; f < COUNT(python_wait_files); f++)
        if (report_python_file_is(thread->python_frames[0].file, python_wait_files[f]))
            return true;
    return false;
}

/* Is frame `f`'s caller a function of the same file that the symbol tables do not name (a static one, stripped)? */
static bool unnamed_caller_of_the_same_module(const struct hd_thread *thread, size_t f)
{
    if (f + 1 >= thread->stack.nframes)
        return false;
    const struct hd_frame *frame = &thread->stack.frames[f], *caller = &thread->stack.frames[f + 1];
    return !caller->symbol && frame->module && caller->module && strcmp(frame->module, caller->module) == 0;
}

/* The functions CPython's Lock and RLock acquires pass through on their way to the parking lot's semaphore. */
static const char *const cpython_lock_frames[] = {
    "_PyParkingLot_Park", "_PyMutex_Lock*", "PyMutex_Lock*", "_PyRecursiveMutex_Lock*", "PyThread_acquire_lock*",
    "lock_PyThread_acquire_lock*", "rlock_acquire*", "_PySemaphore_*",
};

/* How many callers of the semaphore wait are looked at: the lock's own calls lie within them. */
#define LOCK_CALLERS_SEARCHED 3

/* Are frame `f`'s nearest callers each one of CPython's lock functions or an unnamed function of the interpreter
 * itself? A named function of anything else (PyEvent_WaitTimed), or a function of another module (the _queue
 * extension, whose SimpleQueue.get parks through the exported _PyParkingLot_Park), is a wait of another kind. */
static bool parked_on_a_lock(const struct hd_thread *thread, size_t f)
{
    const char *interpreter = thread->stack.frames[f].module;
    for (size_t c = f + 1; c < thread->stack.nframes && c <= f + LOCK_CALLERS_SEARCHED; c++) {
        const struct hd_frame *frame = &thread->stack.frames[c];
        const char *symbol = frame->symbol;
        bool lock = !symbol && interpreter && frame->module && strcmp(frame->module, interpreter) == 0;
        for (size_t l = 0; !lock && symbol && l < COUNT(cpython_lock_frames); l++)
            lock = fnmatch(cpython_lock_frames[l], symbol, 0) == 0;
        if (!lock)
            return false;
    }
    return f + 1 < thread->stack.nframes;
}

static bool has_frame(const struct hd_thread *thread, size_t from, const char *pattern)
{
    for (size_t f = from; f < thread->stack.nframes && f < TAKER_FRAMES_SEARCHED; f++)
        if (thread->stack.frames[f].symbol && fnmatch(pattern, thread->stack.frames[f].symbol, 0) == 0)
            return true;
    return false;
}

static bool by_lock_type(size_t row)
{
    const char *caller = unowned_lock_takers[row].caller;
    return caller && strcmp(caller, BY_LOCK_TYPE) == 0;
}

/* The row of the lock with no owner recorded that the thread of `node` sleeps to take (its frame at *frame), or
 * -1. */
static int unowned_lock_row(const struct report_node *node, size_t *frame)
{
    const struct hd_thread *thread = node->thread;
    const struct hd_wait *wait = &thread->wait;
    if (wait->kind != HD_WAIT_FUTEX || wait->lock.kind != HD_LOCK_UNKNOWN || thread->stack.state != HD_STACK_TAKEN)
        return -1;
    for (size_t t = 0; t < COUNT(unowned_lock_takers); t++)
        if (by_lock_type(t) && wait->lock.type && strcmp(wait->lock.type, unowned_lock_takers[t].pattern) == 0) {
            *frame = 0;
            return (int)t;
        }
    /* row by row, so that a row that names the lock more precisely wins over a later one matched further in */
    for (size_t t = 0; t < COUNT(unowned_lock_takers); t++) {
        if (by_lock_type(t))
            continue;
        for (size_t f = 0; f < thread->stack.nframes && f < TAKER_FRAMES_SEARCHED; f++) {
            const char *symbol = thread->stack.frames[f].symbol;
            const char *caller = unowned_lock_takers[t].caller;
            if (!symbol || fnmatch(unowned_lock_takers[t].pattern, symbol, 0) != 0)
                continue;
            if (caller && caller[0] == LOCK_CALLERS[0] ? !parked_on_a_lock(thread, f)
                : caller && caller[0] ? !has_frame(thread, f + 1, caller)
                : caller && !unnamed_caller_of_the_same_module(thread, f))
                continue;
            if (unowned_lock_takers[t].python && python_waits_in_library(thread))
                return -1;
            *frame = f;
            return (int)t;
        }
    }
    return -1;
}

/* The lock objects the probe read from CPython's parking lot (3.13+), by their type's name there. */
static const struct {
    const char *type;
    const char *lock;
} parked_python_locks[] = {
    { "threading.Lock", "CPython's threading.Lock" },
    { "threading.RLock", "CPython's threading.RLock" },
};

/* The lock a thread parks to take, as the parking lot names it, when it is taken from the user's code; NULL when
 * the probe read none, or the acquire is one of threading's own waits. */
static const char *parked_python_lock(const struct hd_thread *thread)
{
    if (!thread->wait.python_lock || thread->wait.kind != HD_WAIT_FUTEX || python_waits_in_library(thread))
        return NULL;
    for (size_t i = 0; i < COUNT(parked_python_locks); i++)
        if (thread->wait.python_lock_type && strcmp(thread->wait.python_lock_type, parked_python_locks[i].type) == 0)
            return parked_python_locks[i].lock;
    return NULL;
}

static const char *unowned_lock_taken(const struct report_node *node)
{
    const char *parked = parked_python_lock(node->thread);
    if (parked)
        return parked;
    size_t frame;
    int row = unowned_lock_row(node, &frame);
    return row < 0 ? NULL : unowned_lock_takers[row].lock;
}

/* Where the lock lies: the lock object the parking lot names, else the lock its futex word lies in, else the word. */
static uint64_t unowned_lock_address(const struct report_node *node)
{
    if (parked_python_lock(node->thread))
        return node->thread->wait.python_lock;
    size_t frame;
    int row = unowned_lock_row(node, &frame);
    int offset = row < 0 ? NO_WORD : unowned_lock_takers[row].word_offset;
    return node->thread->wait.address - (uint64_t)(offset == NO_WORD ? 0 : offset);
}

/* Do the takers `a` and `b` wait on different locks? By the lock objects the parking lot names (CPython 3.13+);
 * by the lock their futex words lie in where the word is the lock's; else (each waiter parks on a word of its own)
 * by where they take it: their Python lines, or the frame that calls the lock. Two threads taking one lock from one
 * line are not told apart, and not counted as two locks. */
static bool different_locks(const struct report_node *a, const struct report_node *b)
{
    if (parked_python_lock(a->thread) && parked_python_lock(b->thread))
        return a->thread->wait.python_lock != b->thread->wait.python_lock;
    size_t frame_a, frame_b;
    int row_a = unowned_lock_row(a, &frame_a), row_b = unowned_lock_row(b, &frame_b);
    if (row_a < 0 || row_b < 0)
        return false;
    int offset_a = unowned_lock_takers[row_a].word_offset, offset_b = unowned_lock_takers[row_b].word_offset;
    if (offset_a != NO_WORD && offset_b != NO_WORD)
        return a->thread->wait.address - (uint64_t)offset_a != b->thread->wait.address - (uint64_t)offset_b;
    const struct hd_python_frame *place_a = report_python_place(a->thread), *place_b = report_python_place(b->thread);
    if (place_a && place_b)
        return place_a->line != place_b->line || !place_a->file || !place_b->file ||
               strcmp(place_a->file, place_b->file) != 0;
    const struct hd_thread *thread_a = a->thread, *thread_b = b->thread;
    if (frame_a + 1 >= thread_a->stack.nframes || frame_b + 1 >= thread_b->stack.nframes)
        return false;
    return thread_a->stack.frames[frame_a + 1].pc != thread_b->stack.frames[frame_b + 1].pc;
}

/* A thread that only sleeps on a timer in a loop, as a keep-alive main loop does (while True: time.sleep(1)): in
 * a timed sleep now, hardly any CPU while sampled, nothing outside the snapshot that could end its wait. It could
 * free a lock no word says it holds only by doing something it shows no sign of. */
#define LOOP_SLEEPER_CPU_MAX_S 0.005
#define LOOP_SLEEPER_CPU_SHARE_MAX 0.02

static bool only_sleeps_in_a_loop(const struct hd_snapshot *snapshot, const struct report_node *node)
{
    const struct hd_thread *thread = node->thread;
    /* seen to wake and sleep again while sampled: a loop, not one long sleep before it does something */
    bool looped = node->history.samples_seen >= 2 && node->history.voluntary_switches_delta > 0;
    return looped && (node->wake == REPORT_WAKE_TIMER || node->wake == REPORT_WAKE_RUNNING) && thread->state != 'R' &&
           thread->syscall.state == HD_SYSCALL_IN && thread->wait.kind == HD_WAIT_SLEEP && !node->waits_outside &&
           (double)node->history.cpu_delta_ns / 1e9 <=
               LOOP_SLEEPER_CPU_MAX_S + LOOP_SLEEPER_CPU_SHARE_MAX * snapshot->sampling_s;
}

#define UNOWNED_LOCK_WAITERS_LISTED 8

/* The takers of process `process`: threads asleep taking a lock with no owner, asleep forever or (when
 * `sleepers_allowed`) for the threshold; how many, and whether they wait on two locks or more. */
static size_t lock_takers(const struct report_rule_context *c, const struct report_graph_process *process,
                          size_t *takers, bool *two_locks)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t count = 0;
    *two_locks = false;
    for (size_t n = process->first_node; n < process->first_node + process->nnodes; n++) {
        const struct report_node *node = &graph->nodes[n];
        bool asleep = node->wake == REPORT_WAKE_NEVER ||
                      (node->wake == REPORT_WAKE_WAKER && rule_asleep_for_the_threshold(c, node));
        if (!asleep || !unowned_lock_taken(node) || rule_named_by_a_hang(c->analysis, n))
            continue;
        /* "the same lock" is an equality: a taker that differs from the first shows two locks, and comparing each
         * with the first alone keeps this linear in a process of thousands of takers of one lock */
        *two_locks = *two_locks || (count > 0 && different_locks(node, &graph->nodes[takers[0]]));
        takers[count++] = n;
    }
    return count;
}

/* Could the message pump `pump` free any of the takers? */
static bool pump_may_free_a_taker(const struct report_graph *graph, const size_t *takers, size_t count,
                                  const struct report_pump *pump)
{
    for (size_t t = 0; t < count; t++)
        if (report_pump_may_free(pump, graph->nodes[takers[t]].thread))
            return true;
    return false;
}

/* Can anything of the process but the takers free them? Nothing can when every other thread has exited, sleeps
 * on a futex forever (a join, a condition) or for the threshold, only sleeps in a loop, or is a library's message
 * pump (pytest-xdist's channel receiver) that runs nothing but that library's code. A thread asleep on
 * something else (a pipe, a child) may hang for a reason of its own that another rule names better: then this
 * one says nothing. *sleepers counts the loop sleepers and *pumps the message pumps, each named as evidence of
 * `finding` when there is one; *waiting the futex sleepers. */
static bool nothing_else_frees_them(struct report_rule_context *c, const struct report_graph_process *process,
                                    const size_t *takers, size_t count, size_t *sleepers, size_t *pumps,
                                    size_t *waiting, struct report_finding *finding)
{
    const struct report_graph *graph = &c->analysis->graph;
    *sleepers = *pumps = *waiting = 0;
    for (size_t n = process->first_node, t = 0; n < process->first_node + process->nnodes; n++) {
        if (t < count && takers[t] == n) {
            t++;
            continue;
        }
        const struct report_node *node = &graph->nodes[n];
        if (node->wake == REPORT_WAKE_EXITED)
            continue;
        if (node->thread->wait.kind == HD_WAIT_FUTEX &&
            (node->wake == REPORT_WAKE_NEVER ||
             (node->wake == REPORT_WAKE_WAKER && rule_asleep_for_the_threshold(c, node)))) {
            ++*waiting;
            continue;
        }
        if (node->pump && !pump_may_free_a_taker(graph, takers, count, node->pump)) {
            ++*pumps;
            if (finding)
                rule_evidence(c, finding, "pump", "thread %d '%s' is the message pump of %s (the channel of a "
                              "pytest-xdist worker, or like it): it runs that library's code only, and has not freed "
                              "them", (int)node->thread->tid, node->thread->name, report_pump_library(node->pump));
            continue;
        }
        if (!only_sleeps_in_a_loop(c->snapshot, node))
            return false;
        ++*sleepers;
        if (!finding)
            continue;
        char where[512];
        report_python_where(node->thread, where, sizeof where);
        rule_evidence(c, finding, "sleeper", "thread %d '%s' only sleeps in a loop (%s, %.3f s of CPU in %.1f s "
                      "sampled)%s: it has not freed them", (int)node->thread->tid, node->thread->name,
                      report_wait_label(node->thread), (double)node->history.cpu_delta_ns / 1e9,
                      c->snapshot->sampling_s, where);
    }
    return true;
}

/* Two or more threads of one process asleep taking locks that record no owner (CPython's, Rust's, Abseil's), on
 * at least two different locks, while nothing that could free them runs: asleep forever, or asleep for the
 * threshold while the only other threads merely sleep in a loop (a keep-alive main loop). A lock-order deadlock,
 * each holding a lock another waits for; which holds which no word says, so: likely. */
/* Condition variables whose waiters re-take a lock that records no owner when woken: the waiter held that lock
 * until it slept, and may hold another it took before. */
static const char *const condition_waits[] = {
    "std::sys::*Condvar::wait*", "*parking_lot*Condvar::wait*",
};

/* Asleep forever in a condition wait of the table (its wait without a timeout). */
static bool waits_on_a_condition(const struct report_node *node)
{
    const struct hd_thread *thread = node->thread;
    if (node->wake != REPORT_WAKE_NEVER || thread->wait.kind != HD_WAIT_FUTEX ||
        thread->stack.state != HD_STACK_TAKEN)
        return false;
    for (size_t w = 0; w < COUNT(condition_waits); w++)
        if (has_frame(thread, 0, condition_waits[w]))
            return true;
    return false;
}

/* Lock takers (sorted by node) and condition waiters merged into `members`, in node order; how many. */
static size_t with_condition_waiters(const struct report_graph_process *process, const struct report_graph *graph,
                                     const size_t *takers, size_t count, size_t *members, size_t *waiters)
{
    size_t merged = 0, t = 0;
    *waiters = 0;
    for (size_t n = process->first_node; n < process->first_node + process->nnodes; n++) {
        if (t < count && takers[t] == n) {
            members[merged++] = takers[t++];
        } else if (waits_on_a_condition(&graph->nodes[n])) {
            members[merged++] = n;
            ++*waiters;
        }
    }
    return merged;
}

/* One lock taken by threads that sleep forever, and a thread asleep forever on a condition (Rust's Condvar) that
 * only they could notify: the waiter likely holds the lock they wait for (it took it before its wait, as a
 * thread that guards its state with two locks does). Which holds what no word says: likely. */
static void condition_waiter_holds_the_lock(struct report_rule_context *c, const struct report_graph_process *process,
                                            const size_t *takers, size_t count, size_t *members)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t waiters, sleepers, pumps, waiting;
    size_t merged = with_condition_waiters(process, graph, takers, count, members, &waiters);
    if (waiters == 0 || !nothing_else_frees_them(c, process, members, merged, &sleepers, &pumps, &waiting, NULL) ||
        sleepers || pumps)
        return;
    const struct report_node *subject = &graph->nodes[takers[0]];
    struct report_finding *finding = rule_finding(
        c, REPORT_UNOWNED_LOCK_CYCLE, REPORT_LIKELY, subject,
        "%zu thread%s of process %d sleep%s forever taking a lock that records no owner (%s), and %zu other%s "
        "wait%s forever on a condition variable that only %s could notify: likely a deadlock, the condition's "
        "waiter holding the lock %s for",
        count, count == 1 ? "" : "s", (int)subject->process->pid, count == 1 ? "s" : "", unowned_lock_taken(subject),
        waiters, waiters == 1 ? "" : "s", waiters == 1 ? "s" : "", count == 1 ? "it" : "they",
        count == 1 ? "it waits" : "they wait");
    for (size_t m = 0; m < merged && finding; m++) {
        const struct report_node *node = &graph->nodes[members[m]];
        rule_member(c, finding, members[m]);
        if (m >= UNOWNED_LOCK_WAITERS_LISTED)
            continue;
        char waited[64] = "";
        if (node->thread->blocked_for_known)
            snprintf(waited, sizeof waited, ", asleep %.1f s", node->thread->blocked_for_s);
        if (waits_on_a_condition(node))
            rule_evidence(c, finding, "condition_waiter", "thread %d '%s' waits on a condition at 0x%" PRIx64 "%s",
                          (int)node->thread->tid, node->thread->name, node->thread->wait.address, waited);
        else
            rule_evidence(c, finding, "waiter", "thread %d '%s' takes %s at 0x%" PRIx64 "%s", (int)node->thread->tid,
                          node->thread->name, unowned_lock_taken(node), unowned_lock_address(node), waited);
    }
    if (finding && waiting)
        rule_evidence(c, finding, "others", "the process's other %zu threads sleep on futexes too (a join, a "
                      "condition), waiting to be woken: none can notify or free a lock", waiting);
    rule_remedy(c, finding, "Do not wait on a condition while holding a lock its notifier must take first: release "
                            "it before the wait (a condition wait releases only its own mutex), or take the locks "
                            "in one order in every thread; give the wait a timeout that logs (wait_timeout).");
}

void report_rule_unowned_lock_cycle(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t *takers = calloc(graph->nnodes + 1, sizeof *takers);
    size_t *members = calloc(graph->nnodes + 1, sizeof *members);
    if (!takers || !members) {
        free(takers);
        free(members);
        c->failed = true;
        return;
    }
    for (size_t p = 0; p < graph->nprocesses && !c->failed; p++) {
        const struct report_graph_process *process = &graph->processes[p];
        bool two_locks;
        size_t sleepers, pumps, waiting, count = lock_takers(c, process, takers, &two_locks);
        if (count >= 1 && !two_locks) {
            condition_waiter_holds_the_lock(c, process, takers, count, members);
            continue;
        }
        if (count < 2 || !nothing_else_frees_them(c, process, takers, count, &sleepers, &pumps, &waiting, NULL))
            continue;
        const struct report_node *subject = &graph->nodes[takers[0]];
        char how_long[64] = "forever";
        if (sleepers)
            snprintf(how_long, sizeof how_long, "for %.0f s or more", c->analysis->stuck_after_s);
        struct report_finding *finding = rule_finding(
            c, REPORT_UNOWNED_LOCK_CYCLE, REPORT_LIKELY, subject,
            "%zu threads of process %d sleep %s taking locks that record no owner (%s), and nothing that could "
            "free them %s: likely a lock-order deadlock, each holding a lock another waits for",
            count, (int)subject->process->pid, how_long, unowned_lock_taken(subject),
            sleepers ? "runs but threads that only sleep in a loop" : "can run");
        for (size_t w = 0; w < count && finding; w++) {
            const struct report_node *node = &graph->nodes[takers[w]];
            rule_member(c, finding, takers[w]);
            if (w == UNOWNED_LOCK_WAITERS_LISTED) {
                rule_evidence(c, finding, "waiter", "and %zu more threads", count - w);
                continue;
            }
            if (w > UNOWNED_LOCK_WAITERS_LISTED)
                continue;
            char where[512], waited[64] = "";
            report_python_where(node->thread, where, sizeof where);
            if (node->thread->blocked_for_known)
                snprintf(waited, sizeof waited, ", asleep %.1f s", node->thread->blocked_for_s);
            rule_evidence(c, finding, "waiter", "thread %d '%s' takes %s at 0x%" PRIx64 "%s%s",
                          (int)node->thread->tid, node->thread->name, unowned_lock_taken(node),
                          unowned_lock_address(node), waited, where);
        }
        if (finding && (sleepers || pumps))
            nothing_else_frees_them(c, process, takers, count, &sleepers, &pumps, &waiting, finding);
        if (finding && waiting)
            rule_evidence(c, finding, "others", "the process's other %zu threads sleep on futexes too (a join, a "
                          "condition), waiting to be woken: none can free a lock", waiting);
        rule_remedy(c, finding, "Take the locks in one order in every thread (the waiters' lines show which each "
                                "holds and which it wants), or hold one at a time.");
        rule_remedy(c, finding, "To see it in the program itself: take locks with a timeout (Python: "
                                "lock.acquire(timeout=...)) and log where a take fails; faulthandler."
                                "dump_traceback_later() prints every Python thread's stack.");
    }
    free(takers);
    free(members);
}
