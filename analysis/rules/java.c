/* java-deadlock (rule.h): Java threads of a HotSpot JVM each blocked on what the next one owns, round to the
 * first: a monitor it waits to enter (synchronized), or a java.util.concurrent lock it parks for (a ReentrantLock,
 * a write lock: their synchronizer names its exclusive owner). jstack's "Found one Java-level deadlock".
 *
 * The futex view cannot tell: the JVM keeps its GC, JIT and periodic threads running on timers, and a blocked
 * Java thread parks on a condition variable of the JVM's own that any of them could signal. The JVM's own tables
 * say who owns each lock (probe/jvm.h), so the cycle is certain, as a lock cycle of owned mutexes is. */
#include "rule.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

enum { JAVA_THREAD_BLOCKED = 10 }; /* HotSpot's _thread_blocked */

#define CYCLE_MAX 64

static const struct hd_java_thread *java_thread(const struct hd_jvm *jvm, pid_t tid)
{
    for (size_t t = 0; t < jvm->nthreads; t++)
        if (jvm->threads[t].tid == tid)
            return &jvm->threads[t];
    return NULL;
}

/* The Java thread that owns what `thread` is blocked on: a monitor it waits to enter, or the java.util.concurrent
 * lock it parks for (its exclusive owner); 0 when none. */
static pid_t holder(const struct hd_java_thread *thread)
{
    if (thread->state != JAVA_THREAD_BLOCKED)
        return 0;
    if (thread->pending_monitor)
        return thread->owner_tid;
    return thread->blocker_object ? thread->blocker_owner_tid : 0;
}

/* Blocked on something another Java thread owns: that thread, or NULL. */
static const struct hd_java_thread *waits_for(const struct hd_jvm *jvm, const struct hd_java_thread *thread)
{
    pid_t owner = holder(thread);
    return owner && owner != thread->tid ? java_thread(jvm, owner) : NULL;
}

/* The cycle through `start`, into `cycle` (its members in order, `start` first); 0 when `start` is on none, or
 * (so that each cycle is found once) when another member has a smaller tid. */
static size_t cycle_from(const struct hd_jvm *jvm, const struct hd_java_thread *start,
                         const struct hd_java_thread **cycle)
{
    size_t length = 0;
    for (const struct hd_java_thread *at = start; at && length < CYCLE_MAX; at = waits_for(jvm, at)) {
        if (length > 0 && at == start)
            return length;
        if (at->tid < start->tid)
            return 0;
        for (size_t i = 1; i < length; i++)
            if (cycle[i] == at)
                return 0; /* a cycle that `start` only leads into */
        cycle[length++] = at;
    }
    return 0;
}

static const char *name_of(struct report_rule_context *c, pid_t tid)
{
    return rule_thread_name(c, tid);
}

void report_rule_java_deadlock(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < graph->nprocesses; p++) {
        const struct hd_process *process = graph->processes[p].process;
        const struct hd_jvm *jvm = &process->jvm;
        for (size_t t = 0; jvm->present && t < jvm->nthreads; t++) {
            const struct hd_java_thread *cycle[CYCLE_MAX];
            size_t length = cycle_from(jvm, &jvm->threads[t], cycle);
            size_t subject = length ? report_graph_find(graph, cycle[0]->tid) : REPORT_NO_NODE;
            if (subject == REPORT_NO_NODE || rule_named_by_a_hang(c->analysis, subject))
                continue;
            struct report_finding *finding = rule_finding(
                c, REPORT_JAVA_DEADLOCK, REPORT_CERTAIN, &graph->nodes[subject],
                "%zu Java threads of JVM %d '%s' each wait for a lock the next one holds: a Java-level "
                "deadlock",
                length, (int)process->pid, process->comm);
            for (size_t m = 0; m < length; m++) {
                const struct hd_java_thread *thread = cycle[m];
                size_t node = report_graph_find(graph, thread->tid);
                if (node != REPORT_NO_NODE)
                    rule_member(c, finding, node);
                if (thread->pending_monitor)
                    rule_evidence(c, finding, "waiter",
                                  "\"%s\" (thread %d) waits to lock monitor 0x%" PRIx64 " (object 0x%" PRIx64
                                  ", a %s), which is held by \"%s\" (thread %d)",
                                  name_of(c, thread->tid), (int)thread->tid, thread->pending_monitor,
                                  thread->monitor_object, thread->monitor_class ? thread->monitor_class : "?",
                                  name_of(c, thread->owner_tid), (int)thread->owner_tid);
                else
                    rule_evidence(c, finding, "waiter",
                                  "\"%s\" (thread %d) waits for ownable synchronizer 0x%" PRIx64 " (a %s), which "
                                  "is held by \"%s\" (thread %d)",
                                  name_of(c, thread->tid), (int)thread->tid, thread->blocker_object,
                                  thread->blocker_class ? thread->blocker_class : "?",
                                  name_of(c, thread->blocker_owner_tid), (int)thread->blocker_owner_tid);
            }
            if (jvm->release)
                rule_evidence(c, finding, "jvm", "%s", jvm->release);
            rule_remedy(c, finding, "Take the locks in one order in every thread (the waiters show which each "
                                    "holds and which it wants), or hold one at a time; java.util.concurrent's "
                                    "tryLock with a timeout lets a thread back off.");
        }
    }
}
