/* pipe-held-open (rule.h): a thread reads pipes to their end that no process of the tree writes to any more. Its
 * child exited, and the write end lives on in a process left behind outside the tree: a background job of that
 * child, which inherited the child's stdout and was reparented when the child exited (`sh -c 'daemon & echo
 * started'` under subprocess.run(capture_output=True), a shell's $(...), popen()). The read ends only when that
 * process exits or closes the pipe; for a daemon, never. The holders are found by probe/pipe_holders.h.
 *
 * What keeps the look-alikes out: the reader's own child still holding the pipe (it is in the tree: a producer at
 * work), a pipeline's producer (a process that did not outlive its parent, and the reader has no child that
 * exited), and a holder older than the reader (not one it could have started).
 */
#include "rule.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#define HOLDERS_LISTED_MAX 8

/* The outside holders of `inode` (snapshot.h: sorted by inode): the first, and how many through *count. */
static const struct hd_pipe_holder *holders_of(const struct hd_snapshot *snapshot, uint64_t inode, size_t *count)
{
    size_t low = 0, high = snapshot->noutside_pipe_holders;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (snapshot->outside_pipe_holders[middle].inode < inode)
            low = middle + 1;
        else
            high = middle;
    }
    *count = 0;
    while (low + *count < snapshot->noutside_pipe_holders &&
           snapshot->outside_pipe_holders[low + *count].inode == inode)
        (*count)++;
    return *count ? &snapshot->outside_pipe_holders[low] : NULL;
}

/* Left behind by the reader's tree: started after the reader, and adopted when the child that started it exited:
 * its parent is no process of the snapshot but init, or a subreaper above the tree other than the reader's own
 * parent (whose children beside the reader are a pipeline's other commands); or, when the reader has a child that
 * exited, any parent outside the snapshot. */
static bool left_behind(const struct hd_snapshot *snapshot, const struct hd_process *reader, bool child_exited,
                        const struct hd_pipe_holder *holder)
{
    if (holder->start_time_s < reader->start_time_s || hd_snapshot_find_process(snapshot, holder->ppid))
        return false;
    return child_exited || holder->ppid == 1 || (holder->parent_above_tree && holder->ppid != reader->ppid);
}

/* Every fd the thread waits on is the read end of a pipe whose every writer is a process left behind. */
static bool reads_only_held_pipes(const struct hd_snapshot *snapshot, const struct hd_process *process,
                                  bool child_exited, const struct hd_thread *thread)
{
    const struct hd_wait *wait = &thread->wait;
    if (thread->syscall.state != HD_SYSCALL_IN || (wait->kind != HD_WAIT_READ && wait->kind != HD_WAIT_POLL) ||
        wait->timeout.kind != HD_TIMEOUT_NONE || wait->nfds_known == 0 || wait->fds_truncated)
        return false;
    for (unsigned i = 0; i < wait->nfds_known; i++) {
        const struct hd_fd *fd = hd_process_find_fd(process, wait->fds[i]);
        size_t count;
        const struct hd_pipe_holder *holders = fd && fd->kind == HD_FD_PIPE && fd->access_mode != O_WRONLY
                                                   ? holders_of(snapshot, fd->inode, &count)
                                                   : NULL;
        if (!holders)
            return false;
        for (size_t h = 0; h < count; h++)
            if (!left_behind(snapshot, process, child_exited, &holders[h]))
                return false;
    }
    return true;
}

/* A child of the process that exited and was not reaped yet: whose output the thread reads (it reads to the end
 * before it waits for the child). */
static const struct hd_process *exited_child(const struct hd_snapshot *snapshot, const struct hd_process *process)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        if (snapshot->processes[p].ppid == process->pid && snapshot->processes[p].zombie)
            return &snapshot->processes[p];
    return NULL;
}

static void holder_evidence(struct report_rule_context *c, struct report_finding *finding,
                            const struct hd_process *reader, const struct hd_fd *fd, const struct hd_pipe_holder *h)
{
    char session[64] = "";
    if (h->session > 0 && h->session == reader->session)
        snprintf(session, sizeof session, ", in the session of process %d", (int)reader->pid);
    rule_evidence(c, finding, "holder",
                  "process %d '%s' holds the write end of pipe %llu (fd %d of process %d) as its fd %d; started %.1f "
                  "s after process %d, its parent is now process %d%s%s%s (its own parent exited)%s",
                  (int)h->pid, h->comm, (unsigned long long)h->inode, fd->fd, (int)reader->pid, h->fd,
                  h->start_time_s - reader->start_time_s, (int)reader->pid, (int)h->ppid, h->parent_comm[0] ? " '" : "",
                  h->parent_comm, h->parent_comm[0] ? "'" : "", session);
}

void report_rule_pipe_held_open(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct hd_snapshot *snapshot = c->snapshot;
    for (size_t n = 0; n < graph->nnodes && snapshot->noutside_pipe_holders > 0 && !c->failed; n++) {
        const struct report_node *node = &graph->nodes[n];
        const struct hd_process *process = node->process;
        const struct hd_process *child = exited_child(snapshot, process);
        if (node->wake == REPORT_WAKE_RUNNING || !reads_only_held_pipes(snapshot, process, child, node->thread))
            continue;
        const struct hd_wait *wait = &node->thread->wait;
        const struct hd_fd *first_fd = hd_process_find_fd(process, wait->fds[0]);
        size_t count;
        const struct hd_pipe_holder *first = holders_of(snapshot, first_fd->inode, &count);
        char exited[64] = "the process that started it exited";
        if (child)
            snprintf(exited, sizeof exited, "its child %d '%s' exited", (int)child->pid, child->comm);
        char others[48] = "";
        if (count > 1)
            snprintf(others, sizeof others, " and %zu more processes", count - 1);
        struct report_finding *finding = rule_finding(
            c, REPORT_PIPE_HELD_OPEN, REPORT_LIKELY, node,
            "thread %d '%s' of process %d reads %s to the end, but no process of the tree writes to %s any more: "
            "%s, and process %d '%s'%s, left behind outside the tree, still holds the write end: the read ends "
            "only when it exits or closes it",
            (int)node->thread->tid, node->thread->name, (int)process->pid,
            wait->nfds_known > 1 ? "pipes" : "a pipe", wait->nfds_known > 1 ? "them" : "it", exited,
            (int)first->pid, first->comm, others);
        for (unsigned i = 0; i < wait->nfds_known && finding; i++) {
            const struct hd_fd *fd = hd_process_find_fd(process, wait->fds[i]);
            rule_evidence(c, finding, "pipe", "fd %d of process %d, pipe %llu, read with no timeout", fd->fd,
                          (int)process->pid, (unsigned long long)fd->inode);
        }
        if (child)
            rule_evidence(c, finding, "exited_child", "process %d '%s' exited and is not reaped yet: its parent reads "
                                                      "to the end of its output first", (int)child->pid, child->comm);
        size_t listed = 0;
        for (unsigned i = 0; i < wait->nfds_known && finding; i++) {
            const struct hd_fd *fd = hd_process_find_fd(process, wait->fds[i]);
            const struct hd_pipe_holder *holders = holders_of(snapshot, fd->inode, &count);
            for (size_t h = 0; h < count; h++)
                if (listed++ < HOLDERS_LISTED_MAX)
                    holder_evidence(c, finding, process, fd, &holders[h]);
        }
        if (listed > HOLDERS_LISTED_MAX)
            rule_evidence(c, finding, "holder", "and %zu more", listed - HOLDERS_LISTED_MAX);
        rule_remedy(c, finding, "Give what the command leaves running its own output: start it with stdout and stderr "
                                "redirected (`daemon >/dev/null 2>&1 &`, or to a log file), or detached with its fds "
                                "closed; then the pipe ends when the command exits.");
        rule_remedy(c, finding, "Do not read to the end the output of a command that leaves a process behind: "
                                "subprocess.run(capture_output=True), communicate(), $(...) and popen() wait for "
                                "every holder of the pipe; give it a timeout, or let it write to a file.");
        rule_remedy(c, finding, "Now: ending the process left behind (by its pid) ends the read.");
    }
}
