/* goroutine-deadlock (rule.h): goroutines of a Go program each waiting to take a sync.Mutex or RWMutex, on two
 * locks or more, in the same wait from the first sample to the last, while every other goroutine of the program's
 * own waits too. The OS threads say nothing of it: the runtime parks goroutines, not threads, and its threads poll
 * the network and sleep on timers; and Go's own "all goroutines are asleep" never fires while a goroutine waits on
 * a timer (a ticker). Which goroutine holds which lock no Mutex records, so: likely, as unowned-lock-cycle is. */
#include "rule.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { G_WAITING = 4 };

/* A goroutine taking a lock: the runtime's wait reason (Go 1.20+), or the frame of the lock's slow path (1.19,
 * whose reason is only "semacquire"). */
static const struct {
    const char *frame;  /* fnmatch(3) over a frame's symbol */
    const char *reason; /* or the wait reason */
    const char *lock;
} lock_takes[] = {
    { "sync.(\\*Mutex).lockSlow", "sync.Mutex.Lock", "sync.Mutex" },
    { "sync.(\\*RWMutex).Lock", "sync.RWMutex.Lock", "sync.RWMutex, to write" },
    { "sync.(\\*RWMutex).RLock", "sync.RWMutex.RLock", "sync.RWMutex, to read" },
};

#define FRAMES_SEARCHED 8
#define GOROUTINES_LISTED 8

/* The row of the lock the goroutine waits to take, or -1; *frame the frame that calls it (its user's code). */
static int lock_taken(const struct hd_goroutine *goroutine, size_t *caller)
{
    *caller = goroutine->nframes; /* no frame of its own until one is found */
    if (goroutine->status != G_WAITING || goroutine->system)
        return -1;
    for (size_t row = 0; row < COUNT(lock_takes); row++) {
        for (size_t f = 0; f < goroutine->nframes && f < FRAMES_SEARCHED; f++) {
            const char *symbol = goroutine->frames[f].symbol;
            if (symbol && fnmatch(lock_takes[row].frame, symbol, 0) == 0) {
                /* past the lock's own frames (Mutex.Lock calls lockSlow) to the code that takes it */
                *caller = f + 1;
                while (*caller < goroutine->nframes && goroutine->frames[*caller].symbol &&
                       strncmp(goroutine->frames[*caller].symbol, "sync.", 5) == 0)
                    ++*caller;
                return (int)row;
            }
        }
        if (goroutine->wait_reason && strcmp(goroutine->wait_reason, lock_takes[row].reason) == 0) {
            *caller = goroutine->nframes;
            return (int)row;
        }
    }
    return -1;
}

/* Where a lock word lies: a Mutex's sema is its second word, an RWMutex's writer and reader semaphores lie 4 and
 * 8 bytes after its embedded Mutex; the table's word is what tells two locks apart, and this is what is shown. */
static uint64_t lock_address(int row, uint64_t semaphore)
{
    return row == 0 ? semaphore - 4 : semaphore;
}

static const char *frame_name(const struct hd_goroutine *goroutine, size_t f)
{
    return f < goroutine->nframes && goroutine->frames[f].symbol ? goroutine->frames[f].symbol : "?";
}

/* The function the goroutine was started in: the frame inside runtime.goexit. */
static const char *started_in(const struct hd_goroutine *goroutine)
{
    for (size_t f = 1; f < goroutine->nframes; f++)
        if (goroutine->frames[f].symbol && strncmp(goroutine->frames[f].symbol, "runtime.goexit", 14) == 0)
            return frame_name(goroutine, f - 1);
    return "?";
}

/* The other goroutines of the program's own: none may run (each waits), and each is named as evidence. */
static bool others_all_wait(struct report_rule_context *c, const struct hd_go_runtime *go, const bool *taker,
                            struct report_finding *finding)
{
    size_t listed = 0;
    for (size_t g = 0; g < go->ngoroutines; g++) {
        const struct hd_goroutine *goroutine = &go->goroutines[g];
        if (taker[g] || goroutine->system)
            continue;
        if (goroutine->status != G_WAITING)
            return false;
        if (finding && listed++ < GOROUTINES_LISTED)
            rule_evidence(c, finding, "other", "goroutine %" PRId64 " waits too (%s) in %s", goroutine->goid,
                          goroutine->wait_reason ? goroutine->wait_reason : "?", started_in(goroutine));
    }
    return true;
}

static size_t main_thread_node(const struct report_graph *graph, const struct report_graph_process *threads)
{
    for (size_t n = threads->first_node; n < threads->first_node + threads->nnodes; n++)
        if (graph->nodes[n].thread->tid == threads->process->pid)
            return n;
    return threads->nnodes ? threads->first_node : REPORT_NO_NODE;
}

void report_rule_goroutine_deadlock(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < graph->nprocesses; p++) {
        const struct report_graph_process *threads = &graph->processes[p];
        const struct hd_go_runtime *go = &threads->process->go;
        if (!go->present || go->ngoroutines == 0 || go->truncated)
            continue;
        bool *taker = calloc(go->ngoroutines, sizeof *taker);
        if (!taker) {
            c->failed = true;
            return;
        }
        size_t takers = 0, first = 0;
        bool two_locks = false;
        for (size_t g = 0; g < go->ngoroutines; g++) {
            size_t caller;
            const struct hd_goroutine *goroutine = &go->goroutines[g];
            if (lock_taken(goroutine, &caller) < 0 || !goroutine->unchanged || !goroutine->semaphore)
                continue;
            taker[g] = true;
            if (takers++ == 0)
                first = g;
            two_locks = two_locks || goroutine->semaphore != go->goroutines[first].semaphore;
        }
        size_t subject = main_thread_node(graph, threads);
        if (takers < 2 || !two_locks || !others_all_wait(c, go, taker, NULL) || subject == REPORT_NO_NODE ||
            rule_named_by_a_hang(c->analysis, subject)) {
            free(taker);
            continue;
        }
        const struct hd_process *process = threads->process;
        struct report_finding *finding = rule_finding(
            c, REPORT_GOROUTINE_DEADLOCK, REPORT_LIKELY, &graph->nodes[subject],
            "%zu goroutines of Go program %d '%s' wait to take locks that record no owner (sync.Mutex, RWMutex), "
            "on two locks or more, in the same wait since the first sample, and every other goroutine of the "
            "program waits too: likely a lock-order deadlock, each holding a lock another waits for",
            takers, (int)process->pid, process->comm);
        size_t listed = 0;
        for (size_t g = 0; g < go->ngoroutines && listed < GOROUTINES_LISTED; g++) {
            if (!taker[g])
                continue;
            size_t caller;
            const struct hd_goroutine *goroutine = &go->goroutines[g];
            int row = lock_taken(goroutine, &caller);
            if (row < 0)
                continue; /* a taker by the first pass; never so */
            rule_evidence(c, finding, "goroutine",
                          "goroutine %" PRId64 " takes %s at 0x%" PRIx64 " in %s (started in %s), unchanged since "
                          "the first sample",
                          goroutine->goid, lock_takes[row].lock, lock_address(row, goroutine->semaphore),
                          frame_name(goroutine, caller), started_in(goroutine));
            listed++;
        }
        others_all_wait(c, go, taker, finding);
        if (go->version)
            rule_evidence(c, finding, "runtime", "%s", go->version);
        rule_remedy(c, finding, "Take the locks in one order in every goroutine (the goroutines' frames show where "
                                "each takes its lock), or hold one at a time. go vet's copylocks and the race "
                                "detector do not find lock-order cycles; a goroutine dump (SIGQUIT, which ends the "
                                "program) shows the same stacks.");
        free(taker);
    }
}
