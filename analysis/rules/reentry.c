/* signal-reentry (rule.h): a signal handler that waits for a lock the code it interrupted holds. The handler runs on
 * the interrupted thread's own stack, above the frame that holds the lock, so that frame can never go on to unlock:
 * the thread waits for itself. localtime(), malloc(), printf() and a logging call in a SIGALRM or SIGCHLD handler
 * do it (none is async-signal-safe, signal-safety(7)). The stack shows it: the kernel's signal trampoline (told by
 * the unwinder, hd_frame.signal_frame) between the handler's frames and the interrupted ones.
 *
 * A Python handler has no trampoline of its own: CPython runs it in the main thread from the eval loop, or from a
 * blocking call the signal interrupted, through PyErr_CheckSignals. Its frames are the Python frames above that
 * native frame; the interrupted code's, those below. */
#include "rule.h"

#include "describe.h"
#include "python_view.h"
#include "signals.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* The innermost signal trampoline of a stack with frames on both sides of it, or -1. */
static long innermost_trampoline(const struct hd_stack *stack)
{
    for (size_t f = 1; stack->state == HD_STACK_TAKEN && f + 1 < stack->nframes; f++)
        if (stack->frames[f].signal_frame)
            return (long)f;
    return -1;
}

/* The function a frame is in: its symbol, or for a stripped library's static function the exported entry its
 * caller called (localtime for glibc's unnamed __tz_convert), so that the rule needs no debug symbols. */
static const char *function_of(const struct hd_frame *frame)
{
    return frame->symbol ? frame->symbol : frame->called_as;
}

static bool same_function(const struct hd_frame *a, const struct hd_frame *b)
{
    const char *first = function_of(a), *second = function_of(b);
    return first && second && strcmp(first, second) == 0 && a->module && b->module &&
           strcmp(a->module, b->module) == 0;
}

/* A named frame among the handler's (inner of the trampoline) whose function the interrupted frames (outer of it)
 * are inside too: the handler entered it again. The innermost such one; -1 when none. */
static long reentered_frame(const struct hd_stack *stack, size_t trampoline)
{
    for (size_t inner = 0; inner < trampoline; inner++)
        for (size_t outer = trampoline + 1; outer < stack->nframes; outer++)
            if (same_function(&stack->frames[inner], &stack->frames[outer]))
                return (long)inner;
    return -1;
}

/* "on_alarm (fixture)", or "fixture+0x1234" for a frame no symbol names, into `out`. */
static void frame_words(const struct hd_frame *frame, char *out, size_t size)
{
    const char *module = frame->module ? hd_basename(frame->module) : NULL, *function = function_of(frame);
    if (function)
        snprintf(out, size, "%s%s%s%s", function, module ? " (" : "", module ? module : "", module ? ")" : "");
    else if (module)
        snprintf(out, size, "%s+0x%" PRIx64, module, frame->module_offset);
    else
        snprintf(out, size, "0x%" PRIx64, frame->pc);
}

static void signal_words(int number, char *out, size_t size)
{
    const char *abbreviation = report_signal_abbreviation(number);
    if (abbreviation)
        snprintf(out, size, "SIG%s", abbreviation);
    else if (number > 0)
        snprintf(out, size, "signal %d", number);
    else
        snprintf(out, size, "a signal");
}

/* CPython's functions that run the Python handlers of the signals that arrived (3.8 to 3.14, exported). */
static const char *const python_signal_checks[] = { "PyErr_CheckSignals", "_PyErr_CheckSignals",
                                                    "_PyErr_CheckSignalsTstate", "_Py_HandlePending" };

static bool named_one_of(const struct hd_frame *frame, const char *const *names, size_t count)
{
    for (size_t i = 0; frame->symbol && i < count; i++)
        if (strcmp(frame->symbol, names[i]) == 0)
            return true;
    return false;
}

/* The Python frames of the first `runs` runs of the eval loop: up to each run's entry frame (3.11+), one frame a
 * run before 3.11 (no frame is an entry frame there). Returns how many frames that is. */
static size_t frames_of_runs(const struct hd_thread *thread, size_t runs)
{
    bool entries = false;
    for (size_t f = 0; f < thread->npython_frames; f++)
        entries |= thread->python_frames[f].entry;
    size_t f = 0;
    for (size_t run = 0; run < runs && f < thread->npython_frames; run++) {
        if (!entries) {
            f++;
            continue;
        }
        while (f < thread->npython_frames && !thread->python_frames[f++].entry)
            ;
    }
    return f;
}

static void python_frame_words(const struct hd_python_frame *frame, char *out, size_t size)
{
    snprintf(out, size, "%s at %s:%d", frame->function, hd_basename(frame->file), frame->line);
}

/* The signals the process catches, but SIGINT, which every CPython catches itself, and glibc's own real-time
 * signals (32 and 33, for thread cancellation and set*id across threads): "SIGALRM, SIGUSR1". */
static void caught_signal_words(const struct hd_process *process, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int number = 1; number <= 64 && used < size; number++) {
        if (!(process->signals_caught & REPORT_SIGNAL_BIT(number)) || number == SIGINT || number == 32 ||
            number == 33)
            continue;
        char one[32];
        signal_words(number, one, sizeof one);
        used += (size_t)snprintf(out + used, size - used, "%s%s", used ? ", " : "", one);
    }
}

/* A thread asleep forever inside a Python signal handler: nothing but the code the signal interrupted (on the same
 * thread, below the handler) could end its wait, and that code runs again only when the handler returns. */
static void python_handler_reentry(struct report_rule_context *c, size_t n)
{
    const struct report_node *node = &c->analysis->graph.nodes[n];
    const struct hd_thread *thread = node->thread;
    const struct hd_stack *stack = &thread->stack;
    if (stack->state != HD_STACK_TAKEN || thread->npython_frames == 0)
        return;
    size_t inner_runs = 0;
    long check = -1;
    for (size_t f = 0; f < stack->nframes && check < 0; f++) {
        if (named_one_of(&stack->frames[f], python_signal_checks, COUNT(python_signal_checks)))
            check = (long)f;
        else if (report_runs_eval_loop(stack->frames[f].symbol))
            inner_runs++;
    }
    if (check < 0 || inner_runs == 0)
        return;
    size_t handler_frames = frames_of_runs(thread, inner_runs);
    if (handler_frames == 0 || handler_frames > thread->npython_frames)
        return;
    char handler[320], interrupted[320] = "", caught[160];
    python_frame_words(&thread->python_frames[handler_frames - 1], handler, sizeof handler);
    if (handler_frames < thread->npython_frames)
        python_frame_words(&thread->python_frames[handler_frames], interrupted, sizeof interrupted);
    caught_signal_words(node->process, caught, sizeof caught);
    struct report_finding *finding = rule_finding(
        c, REPORT_SIGNAL_REENTRY, REPORT_CERTAIN, node,
        "thread %d '%s' of process %d deadlocked itself in a Python signal handler: %s waits for %s that nothing but "
        "the code it interrupted%s%s%s could release, and that code cannot go on until the handler returns",
        (int)thread->tid, thread->name, (int)node->process->pid, handler,
        thread->wait.lock.kind == HD_LOCK_UNKNOWN ? "a lock" : report_lock_noun(&thread->wait.lock),
        interrupted[0] ? " (" : "", interrupted, interrupted[0] ? ")" : "");
    rule_evidence(c, finding, "handler", "%s", handler);
    if (interrupted[0])
        rule_evidence(c, finding, "interrupted", "%s", interrupted);
    rule_evidence(c, finding, "run_by", "%s (the eval loop runs Python signal handlers from there)",
                  stack->frames[check].symbol);
    if (caught[0])
        rule_evidence(c, finding, "caught", "%s", caught);
    rule_evidence(c, finding, "address", "0x%" PRIx64, thread->wait.address);
    rule_remedy(c, finding, "Do no work that takes a lock in a Python signal handler: set a flag (or an Event that "
                            "nothing else locks), or write to signal.set_wakeup_fd's pipe, and do the work in the "
                            "main loop; or take the signal in a thread of its own with signal.sigwait.");
    rule_remedy(c, finding, "Or take the lock with a timeout in the handler (lock.acquire(timeout=...)) and give up "
                            "when it is held, since the holder is the code the handler interrupted.");
}

void report_rule_signal_reentry(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t n = 0; n < graph->nnodes; n++) {
        const struct report_node *node = &graph->nodes[n];
        const struct hd_thread *thread = node->thread;
        if (node->wake != REPORT_WAKE_NEVER || thread->wait.kind != HD_WAIT_FUTEX)
            continue;
        long trampoline = innermost_trampoline(&thread->stack);
        if (trampoline < 0) {
            python_handler_reentry(c, n);
            continue;
        }
        const struct hd_lock *lock = &thread->wait.lock;
        bool owned_by_itself = (lock->kind == HD_LOCK_MUTEX || lock->kind == HD_LOCK_RWLOCK) &&
                               lock->owner_tid == thread->tid;
        if (lock->owner_tid > 0 && !owned_by_itself)
            continue; /* another thread holds it: the lock rules' */
        long reentered = reentered_frame(&thread->stack, (size_t)trampoline);
        if (!owned_by_itself && reentered < 0)
            continue; /* a handler that waits for something else: nothing says the interrupted code holds it */
        const struct hd_frame *frames = thread->stack.frames;
        char handler[192], interrupted[192], signal[32], function[192];
        frame_words(&frames[trampoline - 1], handler, sizeof handler);
        frame_words(&frames[trampoline + 1], interrupted, sizeof interrupted);
        signal_words(frames[trampoline].signal_number, signal, sizeof signal);
        if (reentered >= 0)
            frame_words(&frames[reentered], function, sizeof function);
        struct report_finding *finding = rule_finding(
            c, REPORT_SIGNAL_REENTRY, owned_by_itself ? REPORT_CERTAIN : REPORT_LIKELY, node,
            "thread %d '%s' of process %d deadlocked itself in a signal handler: %s, run for %s, waits for %s 0x%" PRIx64
            " that the code it interrupted holds%s%s%s, and that code cannot go on until the handler returns",
            (int)thread->tid, thread->name, (int)node->process->pid, handler, signal,
            owned_by_itself ? report_lock_noun(lock) : "a lock", thread->wait.address,
            reentered >= 0 ? " (the handler entered " : "", reentered >= 0 ? function : "", reentered >= 0 ? " again)" : "");
        rule_evidence(c, finding, "signal", "%s", signal);
        rule_evidence(c, finding, "handler", "%s", handler);
        rule_evidence(c, finding, "interrupted", "%s", interrupted);
        if (reentered >= 0)
            rule_evidence(c, finding, "reentered", "%s", function);
        rule_evidence(c, finding, "address", "0x%" PRIx64, thread->wait.address);
        if (owned_by_itself)
            rule_evidence(c, finding, "owner_tid", "%d (the thread itself)", (int)lock->owner_tid);
        rule_remedy(c, finding, "Do only async-signal-safe work in a signal handler (signal-safety(7)): no locks, no "
                                "malloc, printf, localtime or logging. Set a volatile sig_atomic_t flag or write a "
                                "byte to a self-pipe, and do the work in the main loop (or take the signal with "
                                "signalfd or sigwaitinfo in a thread of its own).");
        rule_remedy(c, finding, "Or block the signal around the code that takes the lock (pthread_sigmask), so that "
                                "the handler never runs while the lock is held.");
    }
}
