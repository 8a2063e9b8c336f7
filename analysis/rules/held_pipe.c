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

HD_KEY_COMPARATOR(compare_holder_inode, uint64_t, struct hd_pipe_holder, .inode)

/* The outside holders of `inode` (snapshot.h: sorted by inode): the first, and how many through *count. */
static const struct hd_pipe_holder *holders_of(const struct hd_snapshot *snapshot, uint64_t inode, size_t *count)
{
    size_t low = hd_lower_bound(&inode, snapshot->outside_pipe_holders, snapshot->noutside_pipe_holders,
                                sizeof *snapshot->outside_pipe_holders, compare_holder_inode);
    *count = 0;
    while (low + *count < snapshot->noutside_pipe_holders &&
           snapshot->outside_pipe_holders[low + *count].inode == inode)
        (*count)++;
    return *count ? &snapshot->outside_pipe_holders[low] : NULL;
}

/* Started beside the tree by the parent of one of its roots: a pipeline's other command (`producer | consumer`,
 * the shell the parent of both), not something a process of the tree left behind. */
static bool beside_the_tree(const struct hd_snapshot *snapshot, const struct hd_pipe_holder *holder)
{
    for (size_t r = 0; r < snapshot->nroots; r++) {
        const struct hd_process *root = hd_snapshot_find_process(snapshot, snapshot->roots[r]);
        if (root && root->ppid == holder->ppid)
            return true;
    }
    return false;
}

/* Left behind by the reader: started after it, its parent no process of the tree, and either started after a child
 * of the reader that exited (`child`, or NULL: a descendant of it, most likely), or adopted (its parent init or a
 * subreaper above the tree) and not started beside the tree. */
static bool left_behind(const struct hd_snapshot *snapshot, const struct hd_process *reader,
                        const struct hd_process *child, const struct hd_pipe_holder *holder)
{
    if (holder->start_time_s < reader->start_time_s || hd_snapshot_find_process(snapshot, holder->ppid))
        return false;
    if (child && holder->start_time_s >= child->start_time_s)
        return true;
    return (holder->ppid == 1 || holder->parent_above_tree) && !beside_the_tree(snapshot, holder);
}

/* Every fd the thread waits on is the read end of a pipe whose every writer is a process left behind. */
static bool reads_only_held_pipes(const struct hd_snapshot *snapshot, const struct hd_process *process,
                                  const struct hd_process *child, const struct hd_thread *thread)
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
            if (!left_behind(snapshot, process, child, &holders[h]))
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
    char session[64] = "", parent[HD_COMM_MAX + 4] = "";
    if (h->session > 0 && h->session == reader->session)
        snprintf(session, sizeof session, ", in the session of process %d", (int)reader->pid);
    if (h->parent_comm[0])
        snprintf(parent, sizeof parent, " '%s'", h->parent_comm);
    bool adopted = h->ppid == 1 || h->parent_above_tree;
    rule_evidence(c, finding, "holder",
                  "process %d '%s' holds the write end of pipe %llu (fd %d of process %d) as its fd %d; started %.1f "
                  "s after process %d, its parent is %sprocess %d%s%s%s",
                  (int)h->pid, h->comm, (unsigned long long)h->inode, fd->fd, (int)reader->pid, h->fd,
                  h->start_time_s - reader->start_time_s, (int)reader->pid, adopted ? "now " : "", (int)h->ppid, parent,
                  adopted ? " (its own parent exited)" : ", outside the tree", session);
}

void report_rule_pipe_held_open(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct hd_snapshot *snapshot = c->snapshot;
    /* only where the search missed no process: "every writer is left behind" needs them all */
    bool searched_all = snapshot->outside_pipe_holders_complete;
    for (size_t n = 0; n < graph->nnodes && searched_all && snapshot->noutside_pipe_holders > 0 && !c->failed; n++) {
        const struct report_node *node = &graph->nodes[n];
        const struct hd_process *process = node->process;
        /* asleep for --stuck-after: a reader fed now and then by a detached producer is not one; the search for
         * its exited child (all processes) only for such a reader */
        if (!rule_asleep_for_the_threshold(c, node))
            continue;
        const struct hd_process *child = exited_child(snapshot, process);
        if (!reads_only_held_pipes(snapshot, process, child, node->thread))
            continue;
        const struct hd_wait *wait = &node->thread->wait;
        const struct hd_fd *first_fd = hd_process_find_fd(process, wait->fds[0]);
        size_t count = 0;
        const struct hd_pipe_holder *first = first_fd ? holders_of(snapshot, first_fd->inode, &count) : NULL;
        if (!first)
            continue; /* reads_only_held_pipes found its holders: not reached */
        char exited[64] = "the process that started it exited";
        if (child)
            snprintf(exited, sizeof exited, "its child %d '%s' exited", (int)child->pid, child->comm);
        char others[48] = "";
        if (count > 1)
            snprintf(others, sizeof others, " and %zu more processes", count - 1);
        const char *holds = count > 1 ? "still hold" : "still holds";
        struct report_finding *finding = rule_finding(
            c, REPORT_PIPE_HELD_OPEN, REPORT_LIKELY, node,
            "thread %d '%s' of process %d reads %s to the end, but no process of the tree writes to %s any more: "
            "%s, and process %d '%s'%s, left behind outside the tree, %s the write end: the read ends only when "
            "%s",
            (int)node->thread->tid, node->thread->name, (int)process->pid,
            wait->nfds_known > 1 ? "pipes" : "a pipe", wait->nfds_known > 1 ? "them" : "it", exited,
            (int)first->pid, first->comm, others, holds, count > 1 ? "they exit or close it" : "it exits or closes it");
        for (unsigned i = 0; i < wait->nfds_known && finding; i++) {
            const struct hd_fd *fd = hd_process_find_fd(process, wait->fds[i]);
            if (!fd)
                continue;
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
