/* fuse-deadlock (rule.h): a FUSE daemon that waits for its own mount. A request to a FUSE mount is answered only by
 * the process that reads the mount's /dev/fuse; when that process's own thread calls into the mount (a stat of a
 * path under it, a log file kept there, a backing directory inside it), the request waits for an answer only the
 * daemon could send, or for a directory lock held by a client's request that waits for the daemon: a deadlock
 * through the kernel, which no lock of the program shows. Every client of the mount then waits with it. */
#include "rule.h"

#include <stdio.h>
#include <string.h>

static const char *call_name(const struct hd_thread *thread)
{
    return thread->syscall.state == HD_SYSCALL_IN && thread->syscall.name ? thread->syscall.name : "a file system call";
}

/* The threads of other processes waiting on the same mount: the daemon's clients. */
static void client_evidence(struct report_rule_context *c, struct report_finding *finding,
                            const struct hd_process *daemon, int mount_id)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t listed = 0;
    for (size_t i = 0; i < graph->nnodes && listed < 8; i++) {
        const struct hd_thread *thread = graph->nodes[i].thread;
        if (graph->nodes[i].process == daemon || !thread->fuse.in_call || thread->fuse.mount_id != mount_id)
            continue;
        rule_evidence(c, finding, "client", "thread %d '%s' of process %d in %s, %s", (int)thread->tid, thread->name,
                      (int)graph->nodes[i].process->pid, call_name(thread),
                      thread->fuse.awaits_answer ? "waiting for its answer" : "waiting for a lock a request holds");
        rule_member(c, finding, i);
        listed++;
    }
}

void report_rule_fuse_deadlock(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t n = 0; n < graph->nnodes; n++) {
        const struct report_node *node = &graph->nodes[n];
        const struct hd_thread *thread = node->thread;
        const struct hd_process *process = node->process;
        const struct hd_fuse_call *call = &thread->fuse;
        if (!call->in_call || call->daemon_pid != process->pid || node->wake != REPORT_WAKE_NEVER)
            continue;
        size_t readers = 0;
        for (size_t t = 0; t < process->nthreads; t++)
            readers += process->threads[t].fuse.reads_requests;
        const char *mount = call->mount_point ? call->mount_point : "?";
        struct report_finding *finding = rule_finding(
            c, REPORT_FUSE_DEADLOCK, REPORT_CERTAIN, node,
            "FUSE daemon %d '%s' waits for its own mount %s: its thread %d called %s there, a request only this "
            "process answers, and %s",
            (int)process->pid, process->comm, mount, (int)thread->tid, call_name(thread),
            readers ? "every thread of it that could answer waits too" : "no thread of it is left reading /dev/fuse");
        rule_member(c, finding, n);
        rule_evidence(c, finding, "mount_point", "%s", mount);
        if (call->fs_type)
            rule_evidence(c, finding, "fs_type", "%s", call->fs_type);
        if (call->source)
            rule_evidence(c, finding, "source", "%s", call->source);
        if (call->mount_id)
            rule_evidence(c, finding, "connection", "%u (/sys/fs/fuse/connections/%u)", call->connection,
                          call->connection);
        if (call->waiting >= 0)
            rule_evidence(c, finding, "waiting", "%d", call->waiting);
        rule_evidence(c, finding, "call", "%s by thread %d (the mount told by %s)", call_name(thread),
                      (int)thread->tid, call->found_by ? call->found_by : "?");
        rule_evidence(c, finding, "kernel_wait", "%s (%s)", thread->wchan[0] ? thread->wchan : "?",
                      call->awaits_answer ? "its request waits for the answer"
                                          : "waits for a lock that a request in flight holds");
        rule_evidence(c, finding, "readers", "%zu thread%s reading /dev/fuse", readers, readers == 1 ? "" : "s");
        client_evidence(c, finding, process, call->mount_id);
        rule_remedy(c, finding, "A FUSE daemon must never use its own mount: give it paths outside the mount point "
                                "(its backing store, its logs, its configuration), or serve such requests from a "
                                "thread that does not block the reader of /dev/fuse.");
        char abort_command[160];
        if (call->mount_id) {
            snprintf(abort_command, sizeof abort_command,
                     "To release the waiters now: echo 1 > /sys/fs/fuse/connections/%u/abort (every request on the "
                     "mount then fails with ENOTCONN), or kill the daemon.",
                     call->connection);
            rule_remedy(c, finding, abort_command);
        }
    }
}
