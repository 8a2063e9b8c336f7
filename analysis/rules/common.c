/* The helpers every rule adds findings with, and the facts several families share (rule.h). */
#include "rule.h"

#include "finding.h"
#include "signals.h"

#include <stdarg.h>
#include <stdio.h>

static struct report_finding *finding_v(struct report_rule_context *c, enum report_finding_id id,
                                        enum report_confidence confidence, pid_t pid, pid_t tid, const char *summary,
                                        va_list args) __attribute__((format(printf, 6, 0)));
static struct report_finding *finding_v(struct report_rule_context *c, enum report_finding_id id,
                                        enum report_confidence confidence, pid_t pid, pid_t tid, const char *summary,
                                        va_list args)
{
    struct report_finding *finding = report_finding_append(c->analysis, id, confidence, pid, tid, summary, args);
    c->failed |= !finding;
    return finding;
}

struct report_finding *rule_finding(struct report_rule_context *c, enum report_finding_id id,
                                    enum report_confidence confidence, const struct report_node *node,
                                    const char *summary, ...)
{
    va_list args;
    va_start(args, summary);
    struct report_finding *finding =
        finding_v(c, id, confidence, node->process->pid, node->thread->tid, summary, args);
    va_end(args);
    return finding;
}

struct report_finding *rule_finding_for(struct report_rule_context *c, enum report_finding_id id,
                                        enum report_confidence confidence, pid_t pid, pid_t tid,
                                        const char *summary, ...)
{
    va_list args;
    va_start(args, summary);
    struct report_finding *finding = finding_v(c, id, confidence, pid, tid, summary, args);
    va_end(args);
    return finding;
}

void rule_evidence(struct report_rule_context *c, struct report_finding *finding, const char *name,
                   const char *value, ...)
{
    if (!finding)
        return;
    va_list args;
    va_start(args, value);
    c->failed |= !report_finding_evidence(finding, name, value, args);
    va_end(args);
}

void rule_remedy(struct report_rule_context *c, struct report_finding *finding, const char *text)
{
    c->failed |= finding && !report_finding_remedy(finding, text);
}

void rule_member(struct report_rule_context *c, struct report_finding *finding, size_t node)
{
    c->failed |= finding && !report_finding_member(finding, node);
}

bool rule_is_ancestor(const struct hd_snapshot *snapshot, pid_t ancestor, const struct hd_process *process)
{
    if (process->ppid == ancestor)
        return true; /* the parent itself may be outside the snapshot */
    const struct hd_process *p = hd_snapshot_find_process(snapshot, process->ppid);
    for (unsigned depth = 0; p && depth < 64; depth++) {
        if (p->pid == ancestor || p->ppid == ancestor)
            return true;
        p = hd_snapshot_find_process(snapshot, p->ppid);
    }
    return false;
}

const char *rule_thread_name(const struct report_rule_context *c, pid_t tid)
{
    size_t node = report_graph_find(&c->analysis->graph, tid);
    return node != REPORT_NO_NODE ? c->analysis->graph.nodes[node].thread->name : "?";
}

bool rule_asleep_for_the_threshold(const struct report_rule_context *c, const struct report_node *node)
{
    const struct hd_thread *thread = node->thread;
    double stuck_after_s = c->analysis->stuck_after_s;
    return stuck_after_s > 0 && node->blocked_without_timeout && thread->syscall.state == HD_SYSCALL_IN &&
           thread->blocked_for_known && !node->history.progressing && thread->blocked_for_s >= stuck_after_s;
}

bool rule_waits_on_owned_lock(const struct report_node *node)
{
    const struct hd_wait *wait = &node->thread->wait;
    return node->wake == REPORT_WAKE_NEVER && wait->kind == HD_WAIT_FUTEX &&
           (wait->lock.kind == HD_LOCK_MUTEX || wait->lock.kind == HD_LOCK_RWLOCK || wait->lock.kind == HD_LOCK_GIL) &&
           wait->lock.owner_tid > 0;
}


const char *rule_edge_words(enum report_edge_kind kind)
{
    static const char *const words[] = {
        [REPORT_EDGE_LOCK_OWNER] = "the lock's owner", [REPORT_EDGE_JOIN] = "the thread it joins",
        [REPORT_EDGE_FUTEX] = "a futex",               [REPORT_EDGE_PIPE] = "a pipe",
        [REPORT_EDGE_SOCKET] = "a socket",             [REPORT_EDGE_CHILD] = "wait4",
        [REPORT_EDGE_FILE_LOCK] = "a file lock",       [REPORT_EDGE_SIGNAL] = "SIGCHLD",
        [REPORT_EDGE_PTY] = "a pseudo-terminal",
        [REPORT_EDGE_FUSE] = "a FUSE request",
    };
    return words[kind];
}

bool rule_named_by_a_hang(const struct report_analysis *analysis, size_t node)
{
    for (size_t f = 0; f < analysis->nfindings; f++) {
        const struct report_finding *finding = &analysis->findings[f];
        if (!finding->hang)
            continue;
        if (finding->tid == analysis->graph.nodes[node].thread->tid)
            return true;
        for (size_t m = 0; m < finding->nmembers; m++)
            if (finding->members[m] == node)
                return true;
    }
    return false;
}

void rule_describe_exit(int status, char *out, size_t size)
{
    int signal = status & 0x7f;
    if (signal == 0)
        snprintf(out, size, "exited with status %d", (status >> 8) & 0xff);
    else if (signal != 0x7f)
        snprintf(out, size, "killed by SIG%s (%d)%s",
                 report_signal_abbreviation(signal) ? report_signal_abbreviation(signal) : "?", signal,
                 status & 0x80 ? ", core dumped" : "");
    else
        snprintf(out, size, "stopped (wait status 0x%x)", (unsigned)status);
}
