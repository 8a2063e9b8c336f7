/* The kernel family (rule.h): frozen, a process whose cgroup an outside party froze; uninterruptible, a thread in
 * D in every sample; and stopped, a process held stopped by a signal or a tracer: waits that only the kernel (or
 * whoever thaws the cgroup or sends SIGCONT) can end. */
#include "rule.h"

#include "describe.h"
#include "signals.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* What a thread in D waits for, from its kernel stack or wait channel: the first pattern found wins. */
static const struct kernel_wait {
    const char *pattern;
    const char *what;
    const char *remedy;
} kernel_waits[] = {
    { "vfork", "vfork(): the parent waits until its child execs or exits",
      "The child of vfork() must exec or _exit at once; see what the child does (it neither execs nor exits)." },
    /* without root there is no kernel stack; a task in D inside kernel_clone() is a vfork() parent */
    { "kernel_clone", "vfork(): the parent waits until its child execs or exits",
      "The child of vfork() must exec or _exit at once; see what the child does (it neither execs nor exits)." },
    { "uvm_", "NVIDIA unified memory (nvidia-uvm)",
      "Check the GPU (nvidia-smi; dmesg for Xid errors): a task stuck in the driver often ends only with a GPU reset." },
    { "nvidia", "the NVIDIA driver",
      "Check the GPU (nvidia-smi; dmesg for Xid errors): a task stuck in the driver often ends only with a GPU reset." },
    { "nv_", "the NVIDIA driver",
      "Check the GPU (nvidia-smi; dmesg for Xid errors): a task stuck in the driver often ends only with a GPU reset." },
    { "nfs", "NFS", "Check the NFS server and the network to it; a hard mount waits for the server for ever." },
    { "rpc_", "an RPC (NFS)", "Check the NFS server and the network to it; a hard mount waits for the server for ever." },
    { "fuse_", "a FUSE filesystem", "The FUSE daemon does not answer: look at it (or abort the connection in "
                                    "/sys/fs/fuse/connections)." },
    { "refrigerator", "the cgroup freezer", "The task's cgroup is frozen: thaw it (cgroup.freeze 0)." },
    { "freezer", "the cgroup freezer", "The task's cgroup is frozen: thaw it (cgroup.freeze 0)." },
    { "io_schedule", "block I/O", "The storage does not complete I/O: check the disk and dmesg." },
    { "folio_wait", "block I/O (a page being read or written)", "The storage does not complete I/O: check the disk "
                                                                "and dmesg." },
    { "blk_", "block I/O", "The storage does not complete I/O: check the disk and dmesg." },
    { "rwsem", "a kernel lock (a read-write semaphore such as the mmap lock)",
      "Another task holds the kernel lock: look for other threads in D." },
    { "mutex_lock", "a kernel mutex", "Another task holds the kernel lock: look for other threads in D." },
};

static const struct kernel_wait *kernel_wait_of(const struct hd_thread *thread)
{
    for (size_t i = 0; i < COUNT(kernel_waits); i++)
        if ((thread->kernel_stack && strstr(thread->kernel_stack, kernel_waits[i].pattern)) ||
            strstr(thread->wchan, kernel_waits[i].pattern))
            return &kernel_waits[i];
    return NULL;
}

/* The first lines of a kernel stack, one evidence line each. */
static void kernel_stack_evidence(struct report_rule_context *c, struct report_finding *finding, const char *stack)
{
    const char *line;
    size_t length;
    for (int lines = 0; lines < 4 && report_next_line(&stack, &line, &length); lines++)
        rule_evidence(c, finding, "kernel_stack", "%.*s", (int)length, line);
}

/* The first node of `process` that made no progress, or NULL: a frozen process's threads never run, but one that
 * was thawed during sampling has. */
static const struct report_node *first_still_node(const struct report_graph *graph, const struct hd_process *process)
{
    for (size_t i = 0; i < graph->nnodes; i++)
        if (graph->nodes[i].process == process && !graph->nodes[i].history.progressing)
            return &graph->nodes[i];
    return NULL;
}

/* Frozen by the cgroup freezer: stopped from outside on purpose (docker pause, systemctl freeze, Kubernetes), never
 * a deadlock of its own. One finding per process, about its first thread that did not move. */
void report_rule_frozen(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t p = 0; p < c->snapshot->nprocesses; p++) {
        const struct hd_process *process = &c->snapshot->processes[p];
        const struct report_node *node = process->frozen ? first_still_node(graph, process) : NULL;
        if (!node)
            continue;
        const char *cgroup = process->frozen_cgroup ? process->frozen_cgroup : "?";
        struct report_finding *finding = rule_finding(
            c, REPORT_FROZEN, REPORT_CERTAIN, node,
            "process %d '%s' is %s by the cgroup freezer (cgroup %s%s%s): someone outside froze it (docker pause, "
            "systemctl freeze, Kubernetes), it runs again only when thawed; this is not a deadlock",
            (int)process->pid, process->comm, process->freezing ? "being frozen" : "frozen", cgroup,
            process->frozen_by && strcmp(process->frozen_by, cgroup) != 0 ? ", frozen with its ancestor " : "",
            process->frozen_by && strcmp(process->frozen_by, cgroup) != 0 ? process->frozen_by : "");
        rule_evidence(c, finding, "cgroup", "%s", cgroup);
        if (process->frozen_by)
            rule_evidence(c, finding, "frozen_by", "%s", process->frozen_by);
        rule_evidence(c, finding, "freezer", "cgroup v%d%s", process->freezer_version,
                      process->freezer_version == 1 ? (process->freezing ? " (FREEZING)" : " (FROZEN)")
                                                    : " (cgroup.events: frozen 1)");
        if (process->freeze_control)
            rule_evidence(c, finding, "control", "%s", process->freeze_control);
        rule_evidence(c, finding, "stacks", "not taken: a frozen process is never stopped");
        char remedy[640];
        if (process->freeze_control)
            snprintf(remedy, sizeof remedy, "Thaw it where it was frozen: echo %s > %s (or docker unpause, systemctl "
                                            "thaw UNIT, as whoever froze it).",
                     process->freezer_version == 1 ? "THAWED" : "0", process->freeze_control);
        else
            snprintf(remedy, sizeof remedy, "Thaw its cgroup (docker unpause, systemctl thaw UNIT, or write %s to its "
                                            "%s).",
                     process->freezer_version == 1 ? "THAWED" : "0",
                     process->freezer_version == 1 ? "freezer.state" : "cgroup.freeze");
        rule_remedy(c, finding, remedy);
    }
}

/* In D in every sample: only the kernel can release it. Named after what the kernel stack or wchan shows. */
void report_rule_uninterruptible(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        const struct hd_thread *thread = node->thread;
        if (thread->state != 'D' || node->history.samples_in_state_d != node->history.samples_seen ||
            node->process->frozen)
            continue; /* a frozen process's D (the v1 freezer's) is the freezer's, which frozen names */
        /* a thread born since the earlier samples and caught once in D (a thread being set up or torn down waits
         * on its process's memory map for a moment) has not been shown to stay there, unless it slept longer */
        bool seen_once_of_several = node->history.samples_seen < 2 && c->snapshot->samples >= 2;
        if (seen_once_of_several && !(thread->blocked_for_known && thread->blocked_for_s >= c->snapshot->sampling_s))
            continue;
        if (thread->fuse.in_call && node->nedges > 0)
            continue; /* a FUSE call whose daemon is in the snapshot: its edges say what it waits for */
        const struct kernel_wait *wait = kernel_wait_of(thread);
        struct report_finding *finding = rule_finding(
            c, REPORT_UNINTERRUPTIBLE, REPORT_LIKELY, node,
            "thread %d '%s' of process %d is in uninterruptible sleep (D) in every sample, in %s",
            (int)thread->tid, thread->name, (int)node->process->pid, wait ? wait->what : "the kernel");
        if (thread->wchan[0])
            rule_evidence(c, finding, "wchan", "%s", thread->wchan);
        rule_evidence(c, finding, "samples_in_d", "%u of %u", node->history.samples_in_state_d,
                      node->history.samples_seen);
        if (thread->blocked_for_known)
            rule_evidence(c, finding, "blocked_for_s", "%.1f", thread->blocked_for_s);
        kernel_stack_evidence(c, finding, thread->kernel_stack);
        if (thread->fuse.in_call && thread->fuse.mount_point)
            rule_evidence(c, finding, "fuse_mount", "%s", thread->fuse.mount_point);
        if (thread->fuse.in_call && thread->fuse.daemon_pid)
            rule_evidence(c, finding, "fuse_daemon", "%d '%s'%s", (int)thread->fuse.daemon_pid,
                          thread->fuse.daemon_comm,
                          hd_snapshot_find_process(c->snapshot, thread->fuse.daemon_pid)
                              ? "" : ", outside the diagnosed tree: diagnose it too");
        if (wait && strstr(wait->what, "vfork"))
            for (size_t p = 0; p < c->snapshot->nprocesses; p++)
                if (c->snapshot->processes[p].ppid == node->process->pid)
                    rule_evidence(c, finding, "vfork_child", "%d", (int)c->snapshot->processes[p].pid);
        rule_remedy(c, finding, wait ? wait->remedy : "Read the kernel stack (as root: /proc/<tid>/stack): only the "
                                                 "kernel can release this wait; a signal cannot interrupt it.");
    }
}

/* What stopped a process that no tracer holds, by the signal the kernel keeps for it (stat's exit_code): what it
 * means and what ends it. */
static const struct stop_signal {
    int number;
    const char *how;
    const char *remedy;
} stop_signals[] = {
    { SIGSTOP, "sent SIGSTOP (kill -STOP, a job scheduler, a supervisor)", NULL },
    { SIGTSTP, "suspended from its terminal (Ctrl-Z: SIGTSTP), as a shell's job",
      "Resume the job where it was suspended: fg (or bg) in its shell." },
    { SIGTTIN, "a background job that read from its terminal (SIGTTIN): only the foreground job may",
      "Bring the job to the foreground (fg), or give it an input that is not the terminal (< /dev/null)." },
    { SIGTTOU, "a background job that wrote to its terminal or changed its settings (SIGTTOU: stty tostop, tcsetattr)",
      "Bring the job to the foreground (fg), or give it an output that is not the terminal (> file, nohup)." },
};

static const struct stop_signal *stop_signal_of(const struct hd_process *process)
{
    for (size_t i = 0; i < COUNT(stop_signals); i++)
        if ((process->exit_status & 0x7f) == stop_signals[i].number)
            return &stop_signals[i];
    return NULL;
}

/* The threads that wait on `process` (an edge to it or to one of its threads) and will not run before it does. */
static void waiter_evidence(struct report_rule_context *c, struct report_finding *finding,
                            const struct hd_process *process)
{
    const struct report_graph *graph = &c->analysis->graph;
    size_t listed = 0;
    for (size_t i = 0; i < graph->nnodes && listed < 8; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (node->process == process || node->wake == REPORT_WAKE_RUNNING)
            continue;
        for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
            const struct report_edge *edge = &graph->edges[e];
            const struct hd_process *to = edge->target == REPORT_TO_PROCESS ? graph->processes[edge->to].process
                                                                            : graph->nodes[edge->to].process;
            if (to != process)
                continue;
            rule_evidence(c, finding, "waiter", "thread %d '%s' of process %d waits for it through %s",
                          (int)node->thread->tid, node->thread->name, (int)node->process->pid,
                          rule_edge_words(edge->kind));
            listed++;
            break;
        }
    }
}

/* Stopped in every sample: by a signal (it runs again on SIGCONT) or by a tracer. One finding per process, naming
 * who stopped it where that can be known (the tracer and its command line; the job-control signal) and who waits
 * for it. */
void report_rule_stopped(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    const struct hd_process *reported = NULL;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        char state = node->thread->state;
        if ((state != 'T' && state != 't') || node->history.progressing || node->process == reported ||
            node->process->frozen)
            continue;
        reported = node->process;
        const struct hd_process *process = node->process;
        pid_t tracer = process->tracer_pid;
        const struct stop_signal *stop = tracer ? NULL : stop_signal_of(process);
        struct report_finding *finding =
            tracer ? rule_finding(c, REPORT_STOPPED, REPORT_CERTAIN, node,
                                  "process %d '%s' is held stopped by its tracer, process %d '%s'%s%s",
                                  (int)process->pid, process->comm, (int)tracer,
                                  process->tracer_comm[0] ? process->tracer_comm : "?",
                                  process->tracer_cmdline ? ": " : "",
                                  process->tracer_cmdline ? process->tracer_cmdline : "")
            : stop ? rule_finding(c, REPORT_STOPPED, REPORT_CERTAIN, node,
                                  "process %d '%s' is stopped: %s; it runs again only on SIGCONT",
                                  (int)process->pid, process->comm, stop->how)
                   : rule_finding(c, REPORT_STOPPED, REPORT_CERTAIN, node,
                                  "process %d '%s' is stopped by a signal (SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU): it "
                                  "runs again only on SIGCONT",
                                  (int)process->pid, process->comm);
        rule_evidence(c, finding, "state", "%c", state);
        if (stop) {
            const char *abbreviation = report_signal_abbreviation(stop->number);
            rule_evidence(c, finding, "signal", "SIG%s", abbreviation ? abbreviation : "?");
        }
        if (tracer)
            rule_evidence(c, finding, "tracer_pid", "%d", (int)tracer);
        if (tracer && process->tracer_comm[0])
            rule_evidence(c, finding, "tracer_comm", "%s", process->tracer_comm);
        if (tracer && process->tracer_cmdline)
            rule_evidence(c, finding, "tracer_cmdline", "%s", process->tracer_cmdline);
        waiter_evidence(c, finding, process);
        char command[64];
        snprintf(command, sizeof command, "kill -CONT %d", (int)process->pid);
        if (tracer) {
            rule_remedy(c, finding, "Detach the tracer (quit the debugger or strace that holds it).");
            continue;
        }
        rule_remedy(c, finding, command);
        if (stop && stop->remedy)
            rule_remedy(c, finding, stop->remedy);
    }
}
