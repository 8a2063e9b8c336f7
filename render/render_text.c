/* The text report (report.h): the verdict in one line, the chain, every other independent hang, the findings
 * with evidence and fix, then the tree: one line per process, its relevant threads, the healthy ones summarised. */
#include "report.h"

#include "buffer.h"
#include "collectives.h"
#include "describe.h"
#include "signals.h"
#include "render_inheritance.h"
#include "python_view.h"
#include "render_stacks.h"
#include "wrap.h"
#include "util.h"

#include <inttypes.h>
#include <signal.h>

#include <string.h>

#define CMDLINE_SHOWN_MAX 400 /* bytes of a command line shown in text; JSON has all of it */

static void put_escaped(struct report_buffer *out, const char *text)
{
    report_buffer_escaped(out, text, strlen(text));
}

/* ANSI SGR sequences; only ever written when the caller asked for colour. */
enum paint { PAINT_HUNG, PAINT_LIKELY, PAINT_GOOD, PAINT_ID, PAINT_FOREVER, PAINT_FIX, PAINT_QUIET };

static void paint(struct report_buffer *out, const struct report_text_options *options, enum paint what)
{
    static const char *const codes[] = {
        [PAINT_HUNG] = "\x1b[1;31m", [PAINT_LIKELY] = "\x1b[1;33m", [PAINT_GOOD] = "\x1b[32m",
        [PAINT_ID] = "\x1b[1m",      [PAINT_FOREVER] = "\x1b[31m",  [PAINT_FIX] = "\x1b[32m",
        [PAINT_QUIET] = "\x1b[2m",
    };
    if (options->colour)
        report_buffer_puts(out, codes[what]);
}

static void unpaint(struct report_buffer *out, const struct report_text_options *options)
{
    if (options->colour)
        report_buffer_puts(out, "\x1b[0m");
}

static unsigned depth_of(const struct hd_snapshot *snapshot, const struct hd_process *process)
{
    unsigned depth = 0;
    for (const struct hd_process *p = process; depth < 64;) {
        bool is_root = false;
        for (size_t r = 0; r < snapshot->nroots; r++)
            is_root |= snapshot->roots[r] == p->pid;
        const struct hd_process *parent = is_root ? NULL : hd_snapshot_find_process(snapshot, p->ppid);
        if (!parent)
            break;
        depth++;
        p = parent;
    }
    return depth;
}

static void indent(struct report_buffer *out, unsigned depth)
{
    for (unsigned i = 0; i < depth; i++)
        report_buffer_puts(out, "    ");
}

/* Where the ids come from: the PID namespaces of the targets that live below hangdoc's (a container seen from the
 * host), and hangdoc's own when it is not the host's (a sidecar). */
static void render_pid_namespaces(struct report_buffer *out, const struct hd_snapshot *snapshot)
{
    uint64_t listed[4];
    size_t nlisted = 0;
    for (size_t p = 0; p < snapshot->nprocesses && nlisted < 4; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        bool seen = false;
        for (size_t i = 0; i < nlisted; i++)
            seen |= listed[i] == process->pid_namespace;
        if (!process->ns_pid || seen)
            continue;
        listed[nlisted++] = process->pid_namespace;
        report_buffer_printf(out, "PID namespace pid:[%" PRIu64 "] (a container): process %d is pid %d there; the "
                                  "ids its memory holds are translated to this view's\n",
                             process->pid_namespace, (int)process->pid, (int)process->ns_pid);
    }
    if (snapshot->pid_namespace && !snapshot->initial_pid_namespace)
        report_buffer_printf(out, "hangdoc runs in PID namespace pid:[%" PRIu64 "], not the host's: every id is that "
                                  "namespace's\n",
                             snapshot->pid_namespace);
}

static void render_header(struct report_buffer *out, const struct hd_snapshot *snapshot)
{
    size_t threads = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        threads += snapshot->processes[p].nthreads;
    report_buffer_printf(out, "hangdoc: %zu process%s, %zu thread%s, %u sample%s over %.1f s", snapshot->nprocesses,
                         snapshot->nprocesses == 1 ? "" : "es", threads, threads == 1 ? "" : "s", snapshot->samples,
                         snapshot->samples == 1 ? "" : "s", snapshot->sampling_s);
    report_buffer_puts(out, " on ");
    put_escaped(out, snapshot->host);
    report_buffer_printf(out, " (Linux ");
    put_escaped(out, snapshot->kernel);
    report_buffer_printf(out, ", %s)\n", hd_arch_name(snapshot->arch));
    render_pid_namespaces(out, snapshot);
}

static void render_process_name(struct report_buffer *out, const struct hd_snapshot *snapshot, pid_t pid)
{
    const struct hd_process *process = hd_snapshot_find_process(snapshot, pid);
    report_buffer_printf(out, "%d '", (int)pid);
    put_escaped(out, process ? process->comm : "?");
    report_buffer_puts(out, "'");
}

static void render_chain(struct report_buffer *out, const struct hd_snapshot *snapshot, const pid_t *chain,
                         size_t length)
{
    for (size_t i = 0; i < length; i++) {
        if (i > 0)
            report_buffer_puts(out, " → ");
        render_process_name(out, snapshot, chain[i]);
    }
}

/* One hang in one line: its cause and what names it. */
static void render_hang(struct report_buffer *out, const struct report_analysis *analysis,
                        const struct report_hang *hang, const struct report_text_options *options)
{
    const struct report_finding *finding = hang->finding >= 0 ? &analysis->findings[hang->finding] : NULL;
    bool likely = finding && finding->confidence != REPORT_CERTAIN;
    paint(out, options, likely ? PAINT_LIKELY : PAINT_HUNG);
    report_buffer_printf(out, "%sHUNG (%s)", likely ? "likely " : "", report_cause_name(hang->cause));
    unpaint(out, options);
    report_buffer_puts(out, ": ");
    if (!finding) {
        /* threads asleep forever that no rule of the catalogue explains */
        const struct hd_thread *thread = report_graph_thread(&analysis->graph, hang->tid, NULL);
        report_buffer_printf(out, "thread %d '", (int)hang->tid);
        put_escaped(out, thread ? thread->name : "?");
        report_buffer_printf(out, "' of process %d is asleep forever (", (int)hang->pid);
        if (thread)
            report_describe_wait(out, thread);
        report_buffer_puts(out, ") and nothing that could wake it can run; no rule of the catalogue names why");
        /* the user's line, as a finding about a Python thread gives it (python.h) */
        const struct hd_python_frame *place = thread ? report_python_place(thread) : NULL;
        if (place) {
            report_buffer_puts(out, "; in Python: ");
            put_escaped(out, place->function ? place->function : "?");
            report_buffer_puts(out, " at ");
            put_escaped(out, hd_basename(place->file ? place->file : "?"));
            if (place->line > 0)
                report_buffer_printf(out, ":%d", place->line);
        }
        report_buffer_puts(out, "\n");
        return;
    }
    put_escaped(out, finding->summary);
    report_buffer_printf(out, " [%s, %s", finding->id, report_confidence_name(finding->confidence));
    if (hang->nfindings > 1)
        report_buffer_printf(out, ", ×%zu", hang->nfindings);
    report_buffer_puts(out, "]\n");
}

/* ": thread 412 'svc' of process 412 waits by design for a signal (SIGTERM), and every other thread ..." when threads asleep forever wait so (a daemon's pause(), a service's loop that SIGTERM's handler wakes): a
 * "not hung" that says why they do not count. */
static void render_not_hung(struct report_buffer *out, const struct report_graph *graph)
{
    size_t by_design = 0, first = REPORT_NO_NODE;
    for (size_t i = 0; i < graph->nnodes; i++)
        if (graph->nodes[i].wake == REPORT_WAKE_NEVER && report_waits_for_a_signal_by_design(&graph->nodes[i]) &&
            by_design++ == 0)
            first = i;
    if (by_design == 0) {
        report_buffer_puts(out, ": every thread runs, waits with a timeout or on the outside, or can be woken by one "
                                "that does\n");
        return;
    }
    const struct report_node *node = &graph->nodes[first];
    /* the ones a program catches to be told what to do: not the faults a crash handler (or a sanitizer) catches */
    uint64_t signals = report_signals_by_design(node->process, node->wake_signals);
    char names[256];
    report_signal_names(signals, names, sizeof names);
    report_buffer_printf(out, ": thread %d '", (int)node->thread->tid);
    put_escaped(out, node->thread->name);
    report_buffer_printf(out, "' of process %d waits by design for a signal", (int)node->process->pid);
    if (names[0])
        report_buffer_printf(out, " (%s)", names);
    if (by_design > 1)
        report_buffer_printf(out, ", as %zu more thread%s do", by_design - 1, by_design == 2 ? "" : "s");
    report_buffer_puts(out, ", and every other thread runs, waits with a timeout or on the outside, or can be woken "
                            "by one that does\n");
}

static void render_verdict(struct report_buffer *out, const struct hd_snapshot *snapshot,
                           const struct report_analysis *analysis, const struct report_text_options *options)
{
    const struct report_verdict *verdict = &analysis->verdict;
    report_buffer_puts(out, "verdict: ");
    switch (verdict->hung) {
    case REPORT_HUNG_NO:
        paint(out, options, PAINT_GOOD);
        report_buffer_puts(out, "not hung");
        unpaint(out, options);
        render_not_hung(out, &analysis->graph);
        return;
    case REPORT_HUNG_UNKNOWN:
        paint(out, options, PAINT_LIKELY);
        report_buffer_puts(out, "could not tell");
        unpaint(out, options);
        report_buffer_printf(out, ": no hang in what could be read, but the waits of %zu sleeping thread%s could "
                                  "not be read (see the notes)\n",
                             verdict->unread_waits, verdict->unread_waits == 1 ? "" : "s");
        return;
    case REPORT_HUNG_YES:
        break;
    }
    render_hang(out, analysis, &verdict->hangs[0], options);
    if (verdict->nchain > 0) {
        report_buffer_puts(out, "chain: ");
        render_chain(out, snapshot, verdict->chain, verdict->nchain);
        report_buffer_puts(out, "\n");
    }
    if (verdict->nhangs > 1)
        report_buffer_printf(out, "%zu independent hangs, each with its own root cause:\n", verdict->nhangs);
    for (size_t h = 1; h < verdict->nhangs; h++) {
        report_buffer_printf(out, "  %zu. ", h + 1);
        render_hang(out, analysis, &verdict->hangs[h], options);
        report_buffer_puts(out, "     chain: ");
        render_chain(out, snapshot, verdict->hangs[h].chain, verdict->hangs[h].nchain);
        report_buffer_puts(out, "\n");
    }
}

static void render_finding(struct report_buffer *out, const struct report_finding *finding,
                           const struct report_text_options *options)
{
    report_buffer_puts(out, "\n");
    paint(out, options, finding->hang ? PAINT_ID : PAINT_QUIET);
    report_buffer_printf(out, "%s (%s)", finding->id, report_confidence_name(finding->confidence));
    unpaint(out, options);
    report_buffer_printf(out, " · process %d, thread %d\n  ", (int)finding->pid, (int)finding->tid);
    put_escaped(out, finding->summary);
    report_buffer_puts(out, "\n");
    for (size_t e = 0; e < finding->nevidence; e++) {
        report_buffer_puts(out, "  · ");
        put_escaped(out, finding->evidence[e].name);
        report_buffer_puts(out, ": ");
        put_escaped(out, finding->evidence[e].value);
        report_buffer_puts(out, "\n");
    }
    for (size_t r = 0; r < finding->nremedies; r++) {
        report_buffer_puts(out, "  ");
        paint(out, options, PAINT_FIX);
        report_buffer_puts(out, "fix:");
        unpaint(out, options);
        report_buffer_puts(out, " ");
        put_escaped(out, finding->remedies[r]);
        report_buffer_puts(out, "\n");
    }
}

static void render_lock_wait(struct report_buffer *out, const struct hd_snapshot *snapshot,
                             const struct report_node *node)
{
    const struct hd_lock *lock = &node->thread->wait.lock;
    report_buffer_printf(out, "  thread %d '", (int)node->thread->tid);
    put_escaped(out, node->thread->name);
    report_buffer_printf(out, "' of process %d waits for %s%s%s 0x%" PRIx64 "\n", (int)node->process->pid,
                         lock->type ? lock->type : "", lock->type ? " " : "the ", report_lock_noun(lock),
                         lock->object_address);
    report_buffer_printf(out, "    held by thread %d '", (int)lock->owner_tid);
    const struct hd_thread *owner = hd_snapshot_find_thread(snapshot, lock->owner_tid, NULL);
    put_escaped(out, owner ? owner->name : "?");
    if (lock->owner_pid == node->process->pid)
        report_buffer_puts(out, "' of the same process\n");
    else if (lock->owner_pid == node->process->ppid)
        report_buffer_printf(out, "' of its parent %d, which is not in this process\n", (int)lock->owner_pid);
    else
        report_buffer_printf(out, "' of process %d, which is not in this process\n", (int)lock->owner_pid);
}

/* jstack's own block for a Java-level deadlock, from the JVM's threads the finding's members are. */
static void render_java_deadlock(struct report_buffer *out, const struct hd_snapshot *snapshot,
                                 const struct report_analysis *analysis, const struct report_finding *finding)
{
    const struct hd_process *process = hd_snapshot_find_process(snapshot, finding->pid);
    if (!process)
        return;
    report_buffer_puts(out, "\nFound one Java-level deadlock:\n=============================\n");
    for (size_t m = 0; m < finding->nmembers; m++) {
        const struct hd_java_thread *waiter = NULL;
        for (size_t t = 0; t < process->jvm.nthreads; t++)
            if (process->jvm.threads[t].tid == analysis->graph.nodes[finding->members[m]].thread->tid)
                waiter = &process->jvm.threads[t];
        if (!waiter)
            continue;
        bool monitor = waiter->pending_monitor != 0;
        pid_t owner_tid = monitor ? waiter->owner_tid : waiter->blocker_owner_tid;
        const struct hd_thread *thread = hd_snapshot_find_thread(snapshot, waiter->tid, NULL);
        const struct hd_thread *owner = hd_snapshot_find_thread(snapshot, owner_tid, NULL);
        const char *class_name = monitor ? waiter->monitor_class : waiter->blocker_class;
        report_buffer_puts(out, "\"");
        put_escaped(out, thread ? thread->name : "?");
        if (monitor)
            report_buffer_printf(out, "\" (thread %d):\n  waiting to lock monitor 0x%016" PRIx64
                                 " (object 0x%016" PRIx64 ", a ",
                                 (int)waiter->tid, waiter->pending_monitor, waiter->monitor_object);
        else
            report_buffer_printf(out, "\" (thread %d):\n  waiting for ownable synchronizer 0x%016" PRIx64 ", (a ",
                                 (int)waiter->tid, waiter->blocker_object);
        put_escaped(out, class_name ? class_name : "?");
        report_buffer_puts(out, "),\n  which is held by \"");
        put_escaped(out, owner ? owner->name : "?");
        report_buffer_printf(out, "\" (thread %d)\n", (int)owner_tid);
    }
}

/* jstack-style blocks for the lock findings. */
static void render_lock_blocks(struct report_buffer *out, const struct hd_snapshot *snapshot,
                               const struct report_analysis *analysis)
{
    for (size_t f = 0; f < analysis->nfindings; f++) {
        const struct report_finding *finding = &analysis->findings[f];
        if (finding->kind == REPORT_LOCK_CYCLE) {
            report_buffer_puts(out, "\nFound one deadlock (lock cycle):\n");
            for (size_t m = 0; m < finding->nmembers; m++)
                render_lock_wait(out, snapshot, &analysis->graph.nodes[finding->members[m]]);
        } else if (finding->kind == REPORT_JAVA_DEADLOCK) {
            render_java_deadlock(out, snapshot, analysis, finding);
        } else if (finding->kind == REPORT_INHERITED_LOCK) {
            size_t node = report_graph_find(&analysis->graph, finding->tid);
            report_buffer_puts(out, "\nFound a lock held across fork():\n");
            render_lock_wait(out, snapshot, &analysis->graph.nodes[node]);
        }
    }
}

static void render_findings(struct report_buffer *out, const struct hd_snapshot *snapshot,
                            const struct report_analysis *analysis, const struct report_text_options *options)
{
    size_t idle = 0;
    for (size_t f = 0; f < analysis->nfindings; f++) {
        if (!analysis->findings[f].hang && !options->verbose) {
            idle++;
            continue;
        }
        render_finding(out, &analysis->findings[f], options);
    }
    render_lock_blocks(out, snapshot, analysis);
    if (analysis->asleep_forever_exists)
        report_buffer_puts(out, "\nA signal could still wake the threads that are asleep forever (a handler that "
                                "runs code); hangdoc counts only what the threads themselves can do.\n");
    if (idle)
        report_buffer_printf(out, "\nidle: %zu thread%s wait%s with a live waker (not hung; -v lists them)\n", idle,
                             idle == 1 ? "" : "s", idle == 1 ? "s" : "");
    report_buffer_puts(out, "\n");
}

/* "all_reduce at train.py:41", escaped: the file is the target's */
static void put_collective(struct report_buffer *out, const struct report_collective *collective)
{
    struct report_buffer call = { 0 };
    report_describe_collective(collective, &call);
    put_escaped(out, call.data && !call.failed ? call.data : "?");
    report_buffer_release(&call);
}

#define CALL_RANKS_LISTED 32

/* Which ranks of each job are in which call, when the snapshot shows two ranks of a job or more and one of them is
 * in a collective: the table a person reads a mismatch, a straggler or a healthy job's progress from. */
static void render_job_calls(struct report_buffer *out, const struct report_analysis *analysis)
{
    for (size_t j = 0; j < analysis->njobs; j++) {
        const struct report_job_ranks *job = &analysis->jobs[j];
        bool any = false;
        for (size_t r = 0; r < job->count; r++)
            any = any || job->ranks[r].collective;
        if (job->count < 2 || !any)
            continue;
        report_buffer_printf(out, "collectives of the job's ranks here (%zu", job->count);
        if (job->job->world_size > 0)
            report_buffer_printf(out, " of %d", job->job->world_size);
        if (job->job->master) {
            report_buffer_puts(out, ", master ");
            put_escaped(out, job->job->master);
        }
        report_buffer_puts(out, "):\n");
        for (size_t r = 0; r < job->count; r++) {
            const struct report_collective *own = job->ranks[r].collective;
            bool seen = false;
            for (size_t e = 0; e < r && !seen; e++)
                seen = own && job->ranks[e].collective && report_same_call(job->ranks[e].collective, own);
            if (!own || seen)
                continue;
            report_buffer_puts(out, "  ");
            put_collective(out, own);
            report_buffer_puts(out, "  ");
            report_describe_ranks_in(job, own, out, CALL_RANKS_LISTED, NULL);
            report_buffer_puts(out, "\n");
        }
        size_t in_none;
        struct report_buffer none = { 0 };
        report_describe_ranks_in(job, NULL, &none, CALL_RANKS_LISTED, &in_none);
        if (in_none)
            report_buffer_printf(out, "  in no collective  %s\n", none.data && !none.failed ? none.data : "?");
        report_buffer_release(&none);
        report_buffer_puts(out, "\n");
    }
}

static void render_cmdline(struct report_buffer *out, const struct hd_process *process)
{
    size_t shown = 0;
    for (size_t i = 0; i < process->argc && shown < CMDLINE_SHOWN_MAX; i++) {
        if (i > 0)
            report_buffer_puts(out, " ");
        size_t length = strlen(process->argv[i]);
        if (shown + length > CMDLINE_SHOWN_MAX)
            length = CMDLINE_SHOWN_MAX - shown;
        report_buffer_escaped(out, process->argv[i], length);
        shown += length + 1;
    }
    if (shown >= CMDLINE_SHOWN_MAX || process->cmdline_truncated)
        report_buffer_puts(out, " …");
}

static void render_kernel_stack(struct report_buffer *out, const char *stack, unsigned depth)
{
    const char *line;
    size_t length;
    while (report_next_line(&stack, &line, &length)) {
        indent(out, depth);
        report_buffer_puts(out, "        kernel: ");
        report_buffer_escaped(out, line, length);
        report_buffer_puts(out, "\n");
    }
}

/* " · python: inner (app.py:12), GIL released": the innermost Python line of the thread and its standing with the
 * GIL, when its interpreter was read. */
static void render_python_place(struct report_buffer *out, const struct hd_thread *thread)
{
    if (thread->npython_frames > 0) {
        const struct hd_python_frame *frame = &thread->python_frames[0];
        report_buffer_puts(out, " · python: ");
        put_escaped(out, frame->function ? frame->function : "?");
        report_buffer_puts(out, " (");
        put_escaped(out, frame->file ? hd_basename(frame->file) : "?");
        if (frame->line > 0)
            report_buffer_printf(out, ":%d", frame->line);
        report_buffer_puts(out, ")");
    }
    static const char *const gil_words[] = {
        [HD_GIL_HOLDS] = "holds the GIL", [HD_GIL_WAITS] = "waits for the GIL", [HD_GIL_RELEASED] = "GIL released",
    };
    if (thread->npython_frames > 0 && (size_t)thread->gil < COUNT(gil_words) &&
        gil_words[thread->gil])
        report_buffer_printf(out, ", %s", gil_words[thread->gil]);
    else if (thread->gil == HD_GIL_HOLDS || thread->gil == HD_GIL_WAITS)
        report_buffer_printf(out, " · %s", gil_words[thread->gil]);
    const char *role = report_thread_role_name(report_python_role(thread));
    if (role)
        report_buffer_printf(out, " · %s", role);
}

#define SIGNAL_SENDERS_LISTED 4

/* " · SIGCHLD ends it: from child 1234 (runs)" for a wait that signals end; who sends them, as far as the snapshot
 * shows (signals.h) */
static void render_signal_wakers(struct report_buffer *out, const struct report_graph *graph,
                                 const struct report_node *node)
{
    if (!node->wake_signals)
        return;
    /* the signals whose senders the snapshot shows; the others could come from anyone, as for any thread */
    char names[256];
    const struct hd_process *process = node->process;
    uint64_t timers = node->wake_signals & report_timer_signals(process);
    uint64_t shown = timers | (node->wake_signals & REPORT_SIGNAL_BIT(SIGCHLD));
    if (!shown)
        return;
    report_signal_names(shown, names, sizeof names);
    report_buffer_printf(out, " · ends on %s", names);
    size_t listed = 0, children = 0;
    for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        if (edge->kind != REPORT_EDGE_SIGNAL)
            continue;
        children++;
        if (listed == SIGNAL_SENDERS_LISTED)
            continue;
        const struct report_graph_process *child = &graph->processes[edge->to];
        bool alive = report_edge_reaches_live(graph, edge, (size_t)(node - graph->nodes), false);
        report_buffer_printf(out, "%s%d (%s)", listed ? ", " : ": SIGCHLD from child ", (int)child->process->pid,
                             alive ? "can still exit" : "asleep forever");
        listed++;
    }
    if (children > listed)
        report_buffer_printf(out, " and %zu more", children - listed);
    uint64_t posix_timers = process->timers_known ? timers & process->timer_signals : 0;
    if (posix_timers) {
        report_signal_names(posix_timers, names, sizeof names);
        report_buffer_printf(out, "; a timer of its process sends %s", names);
    }
    if (timers & ~posix_timers & REPORT_SIGNAL_BIT(SIGALRM))
        report_buffer_printf(out, "; it catches SIGALRM, which alarm() or setitimer() may send (no /proc file "
                                  "shows whether one is armed)");
}

/* `node` is the thread's node in the graph, which lists threads in snapshot order. */
/* " · FUSE call on /mnt/x, for daemon 412 'sshfs'": what the kernel holds a FUSE client for. */
static void render_fuse_call(struct report_buffer *out, const struct hd_fuse_call *call)
{
    if (!call->in_call)
        return;
    report_buffer_puts(out, " · FUSE call on ");
    put_escaped(out, call->mount_point ? call->mount_point : "a mount not told");
    if (call->daemon_pid) {
        report_buffer_printf(out, ", for daemon %d '", (int)call->daemon_pid);
        put_escaped(out, call->daemon_comm);
        report_buffer_puts(out, "'");
    }
}

static void render_thread(struct report_buffer *out, const struct report_graph *graph, const struct hd_thread *thread,
                          unsigned depth, const struct report_text_options *options, const struct report_node *node,
                          const struct report_stack_groups *stacks)
{
    indent(out, depth);
    report_buffer_printf(out, "    thread %d '", (int)thread->tid);
    put_escaped(out, thread->name);
    report_buffer_printf(out, "' %c [%s", thread->state ? thread->state : '?', report_wait_label(thread));
    if (thread->blocked_for_known && thread->state != 'R') {
        char duration[32];
        report_format_duration(thread->blocked_for_s, duration, sizeof duration);
        report_buffer_printf(out, ", %s", duration);
        if (thread->waited_before_s > 0) {
            /* the wait ledger kept the clock an earlier diagnosis's stop restarted */
            report_format_duration(thread->waited_before_s, duration, sizeof duration);
            report_buffer_printf(out, " (%s before hangdoc's earlier stop)", duration);
        }
    }
    report_buffer_puts(out, "] ");
    if (thread->syscall.state == HD_SYSCALL_IN)
        report_describe_wait(out, thread);
    else
        report_buffer_puts(out, report_state_name(thread->state));
    render_signal_wakers(out, graph, node);
    if (thread->wchan[0]) {
        report_buffer_puts(out, " · in ");
        put_escaped(out, thread->wchan);
    }
    render_fuse_call(out, &thread->fuse);
    if (node->history.samples_seen > 1) {
        if (node->history.progressing)
            report_buffer_printf(out, " · progressing (%.0f ms CPU, %llu switches)",
                                 (double)node->history.cpu_delta_ns / 1e6,
                                 (unsigned long long)node->history.switches_delta);
        else
            report_buffer_puts(out, " · no progress");
    }
    if (node->wake == REPORT_WAKE_NEVER) {
        report_buffer_puts(out, " · ");
        paint(out, options, PAINT_FOREVER);
        report_buffer_puts(out, "asleep forever");
        unpaint(out, options);
    }
    render_python_place(out, thread);
    size_t stack_number = report_stack_group_number(stacks, thread);
    if (stack_number)
        report_buffer_printf(out, " · stack %zu", stack_number);
    report_buffer_puts(out, "\n");
    if (thread->kernel_stack && (options->verbose || thread->state == 'D'))
        render_kernel_stack(out, thread->kernel_stack, depth);
}

/* A thread a reader of a hang needs to see: named by a finding, asleep forever, or stopped, in D, exited. */
static bool relevant(const struct report_analysis *analysis, const struct report_node *node)
{
    if (node->wake == REPORT_WAKE_NEVER || node->wake == REPORT_WAKE_EXITED || node->wake == REPORT_WAKE_KERNEL)
        return true;
    return analysis->named_by_hang[node - analysis->graph.nodes];
}

/* Up to this many healthy threads of a process are listed; more are summarised in one line (unless -v). */
#define HEALTHY_THREADS_LISTED_MAX 2

/* The relevant threads one line each; the healthy ones too when few, else counted by how they can run. */
static void render_threads(struct report_buffer *out, const struct report_analysis *analysis,
                           const struct hd_process *process, unsigned depth, const struct report_text_options *options,
                           const struct report_node *nodes, const struct report_stack_groups *stacks)
{
    size_t healthy = 0;
    size_t by_wake[REPORT_WAKE_EXITED + 1] = { 0 };
    for (size_t t = 0; t < process->nthreads; t++)
        if (!relevant(analysis, &nodes[t])) {
            healthy++;
            by_wake[nodes[t].wake]++;
        }
    bool list_all = options->verbose || healthy <= HEALTHY_THREADS_LISTED_MAX;
    for (size_t t = 0; t < process->nthreads; t++)
        if (list_all || relevant(analysis, &nodes[t]))
            render_thread(out, &analysis->graph, nodes[t].thread, depth, options, &nodes[t], stacks);
    if (list_all)
        return;
    indent(out, depth);
    paint(out, options, PAINT_QUIET);
    report_buffer_printf(out, "    + %zu healthy thread%s:", healthy, healthy == 1 ? "" : "s");
    const char *separator = " ";
    for (size_t w = 0; w <= REPORT_WAKE_EXITED; w++)
        if (by_wake[w]) {
            report_buffer_printf(out, "%s%zu %s", separator, by_wake[w], report_wake_name((enum report_wake)w));
            separator = ", ";
        }
    report_buffer_puts(out, " (-v lists them)");
    unpaint(out, options);
    report_buffer_puts(out, "\n");
}

/* "collective: all_reduce at train.py:41 (thread 12, asleep 63 s) · gloo: receive from a peer, timeout in 29 min" */
static void render_collective(struct report_buffer *out, const struct report_analysis *analysis,
                              const struct hd_process *process, unsigned depth)
{
    const struct report_collective *collective = report_process_collective(analysis, process);
    if (!collective)
        return;
    const struct hd_thread *thread = analysis->graph.nodes[collective->node].thread;
    indent(out, depth);
    report_buffer_puts(out, "    collective: ");
    put_collective(out, collective);
    report_buffer_printf(out, " (thread %d", (int)thread->tid);
    if (thread->blocked_for_known && thread->state != 'R')
        report_buffer_printf(out, ", asleep %.1f s", thread->blocked_for_s);
    report_buffer_puts(out, ")");
    if (collective->backend) {
        report_buffer_printf(out, " · %s: %s", collective->backend, collective->backend_wait);
        if (collective->backend_timeout_known)
            report_buffer_printf(out, ", timeout in %.0f s", collective->backend_timeout_s);
    }
    report_buffer_puts(out, "\n");
}

static void render_process(struct report_buffer *out, const struct hd_snapshot *snapshot,
                           const struct report_analysis *analysis, const struct hd_process *process,
                           const struct report_text_options *options, const struct report_node *nodes,
                           const struct report_stack_groups *stacks)
{
    unsigned depth = depth_of(snapshot, process);
    if (depth == 0 && process != snapshot->processes)
        report_buffer_puts(out, "\n"); /* a blank line between the trees of several roots */
    indent(out, depth > 0 ? depth - 1 : 0);
    report_buffer_puts(out, depth > 0 ? "└── " : "");
    report_buffer_printf(out, "process %d '", (int)process->pid);
    put_escaped(out, process->comm);
    report_buffer_printf(out, "' %c %s, uid %u, %d thread%s", process->state, report_state_name(process->state),
                         (unsigned)process->uid, process->thread_count, process->thread_count == 1 ? "" : "s");
    if (process->tracer_pid) {
        report_buffer_printf(out, ", traced by %d", (int)process->tracer_pid);
        if (process->tracer_comm[0]) {
            report_buffer_puts(out, " '");
            put_escaped(out, process->tracer_comm);
            report_buffer_puts(out, "'");
        }
    }
    if (process->frozen) {
        report_buffer_printf(out, ", %s by cgroup ", process->freezing ? "being frozen" : "frozen");
        put_escaped(out, process->frozen_by ? process->frozen_by : process->frozen_cgroup ? process->frozen_cgroup : "?");
    }
    if (process->kernel_thread)
        report_buffer_puts(out, ", kernel thread");
    if (process->zombie)
        report_buffer_printf(out, ", exit status 0x%x", (unsigned)process->exit_status);
    report_buffer_puts(out, "\n");
    if (process->argc > 0) {
        indent(out, depth);
        report_buffer_puts(out, "    cmdline: ");
        render_cmdline(out, process);
        report_buffer_puts(out, "\n");
    }
    if (process->exe) {
        indent(out, depth);
        report_buffer_puts(out, "    exe: ");
        put_escaped(out, process->exe);
        report_buffer_puts(out, "\n");
    }
    if (process->job) {
        indent(out, depth);
        report_buffer_puts(out, "    job: ");
        report_describe_job(out, process->job);
        report_buffer_puts(out, "\n");
    }
    render_collective(out, analysis, process, depth);
    if (process->python.read) {
        indent(out, depth);
        report_buffer_puts(out, "    python ");
        put_escaped(out, process->python.version);
        if (process->python.gil_locked && process->python.gil_holder)
            report_buffer_printf(out, " · GIL held by thread %d\n", (int)process->python.gil_holder);
        else
            report_buffer_puts(out, process->python.gil_locked ? " · GIL held by a thread not seen\n" : " · GIL free\n");
    }
    char prefix[4 * 64 + 1] = "";
    for (unsigned level = 0; level < depth && level < 64; level++)
        strcat(prefix, "    ");
    report_text_process_inheritance(out, snapshot, process, analysis->catalogue, prefix);
    render_threads(out, analysis, process, depth, options, nodes, stacks);
}

static void render_notes(struct report_buffer *out, const struct hd_snapshot *snapshot)
{
    if (snapshot->nnotes == 0)
        return;
    report_buffer_puts(out, "\nnotes:\n");
    for (size_t n = 0; n < snapshot->nnotes; n++) {
        const struct hd_note *note = &snapshot->notes[n];
        report_buffer_puts(out, "  ");
        if (note->tid)
            report_buffer_printf(out, "thread %d: ", (int)note->tid);
        else if (note->pid)
            report_buffer_printf(out, "process %d: ", (int)note->pid);
        put_escaped(out, note->text);
        report_buffer_puts(out, "\n");
    }
}

/* The verdict once more, with the fix of each hang's root cause: the last thing on the screen. */
static void render_recap(struct report_buffer *out, const struct hd_snapshot *snapshot,
                         const struct report_analysis *analysis, const struct report_text_options *options)
{
    report_buffer_puts(out, "\nIn short:\n");
    render_verdict(out, snapshot, analysis, options);
    const struct report_verdict *verdict = &analysis->verdict;
    for (size_t h = 0; h < verdict->nhangs; h++) {
        const struct report_hang *hang = &verdict->hangs[h];
        if (!hang->root_cause || hang->finding < 0)
            continue;
        const struct report_finding *finding = &analysis->findings[hang->finding];
        for (size_t r = 0; r < finding->nremedies; r++) {
            paint(out, options, PAINT_FIX);
            report_buffer_puts(out, "fix:");
            unpaint(out, options);
            report_buffer_puts(out, " ");
            put_escaped(out, finding->remedies[r]);
            report_buffer_puts(out, "\n");
        }
    }
}

bool report_render_text(const struct hd_snapshot *snapshot, const struct report_analysis *analysis,
                        const struct report_text_options *options, FILE *out)
{
    static const struct report_text_options defaults = { 0 };
    if (!options)
        options = &defaults;
    struct report_buffer text = { 0 };
    render_verdict(&text, snapshot, analysis, options);
    render_header(&text, snapshot);
    render_findings(&text, snapshot, analysis, options);
    render_job_calls(&text, analysis);
    const struct report_node *nodes = analysis->graph.nodes;
    struct report_stack_groups *stacks = report_stack_groups_new(snapshot);
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        render_process(&text, snapshot, analysis, &snapshot->processes[p], options, nodes, stacks);
        nodes += snapshot->processes[p].nthreads;
    }
    report_render_stack_groups(&text, snapshot, stacks);
    report_stack_groups_free(stacks);
    render_notes(&text, snapshot);
    if (options->recap)
        render_recap(&text, snapshot, analysis, options);
    struct report_buffer wrapped = { 0 };
    report_wrap(&wrapped, text.data ? text.data : "", text.length, options->width);
    bool ok = !text.failed && !wrapped.failed &&
              fwrite(wrapped.data, 1, wrapped.length, out) == wrapped.length && fflush(out) == 0;
    report_buffer_release(&text);
    report_buffer_release(&wrapped);
    return ok;
}
