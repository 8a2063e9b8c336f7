/* Words for waits, durations and states (describe.h). */
#include "describe.h"

#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool report_next_line(const char **text, const char **line, size_t *length)
{
    if (!*text || !**text)
        return false;
    const char *newline = strchr(*text, '\n');
    *line = *text;
    *length = newline ? (size_t)(newline - *text) : strlen(*text);
    *text += *length + (newline ? 1 : 0);
    return true;
}

void report_format_duration(double seconds, char *out, size_t size)
{
    if (seconds < 0)
        seconds = 0;
    if (seconds < 10)
        snprintf(out, size, "%.1f s", seconds);
    else if (seconds < 60)
        snprintf(out, size, "%.0f s", seconds);
    else if (seconds < 3600)
        snprintf(out, size, "%.0f min", seconds / 60);
    else if (seconds < 86400)
        snprintf(out, size, "%d h %d min", (int)(seconds / 3600), (int)(seconds / 60) % 60);
    else
        snprintf(out, size, "%d d %d h", (int)(seconds / 86400), (int)(seconds / 3600) % 24);
}

const char *report_state_name(char state)
{
    static const struct {
        char letter;
        const char *name;
    } states[] = {
        { 'R', "running" },  { 'S', "sleeping" },        { 'D', "disk sleep (uninterruptible)" },
        { 'T', "stopped" },  { 't', "tracing stop" },    { 'Z', "zombie" },
        { 'X', "dead" },     { 'I', "idle kernel thread" }, { 'P', "parked" },
    };
    for (size_t i = 0; i < COUNT(states); i++)
        if (states[i].letter == state)
            return states[i].name;
    return "unknown state";
}

/* Is the thread in restart_syscall, decoded as the call it resumes? */
static bool resumed_call(const struct hd_thread *thread)
{
    return thread->syscall.name && strcmp(thread->syscall.name, "restart_syscall") == 0 && thread->wait.operation &&
           strcmp(thread->wait.operation, "restart_syscall") != 0;
}

const char *report_wait_label(const struct hd_thread *thread)
{
    const struct hd_wait *wait = &thread->wait;
    /* A stopped thread's syscall file still names the call it stopped in (kill, tgkill): the stop is the news. */
    if (thread->state == 'T')
        return "stopped";
    if (thread->state == 't')
        return "tracing stop";
    if (thread->state == 'Z' || thread->state == 'X')
        return "exited";
    switch (thread->syscall.state) {
    case HD_SYSCALL_RUNNING:
        return "running";
    case HD_SYSCALL_NONE:
        return thread->state == 'T' || thread->state == 't' ? "stopped" : "not in a syscall";
    case HD_SYSCALL_UNREAD:
        return thread->state == 'R' ? "running" : report_state_name(thread->state);
    case HD_SYSCALL_IN:
        break;
    }
    if (wait->kind == HD_WAIT_FUTEX) {
        static const struct {
            const char *operation, *label;
        } labels[] = {
            { "FUTEX_WAIT", "futex wait" },          { "FUTEX_WAIT_BITSET", "futex wait" },
            { "FUTEX_LOCK_PI", "futex lock_pi" },    { "FUTEX_LOCK_PI2", "futex lock_pi" },
            { "FUTEX_WAIT_REQUEUE_PI", "futex wait" }, { "futex_waitv", "futex waitv" },
        };
        for (size_t i = 0; i < COUNT(labels); i++)
            if (wait->operation && strcmp(wait->operation, labels[i].operation) == 0)
                return labels[i].label;
    }
    /* a restart_syscall decoded as the call it resumes (probe/syscalls.h) is labelled as that call */
    if (resumed_call(thread))
        return wait->operation;
    if (thread->syscall.name)
        return thread->syscall.name;
    return "syscall";
}

static void describe_timeout(struct report_buffer *out, const struct hd_timeout *timeout)
{
    char duration[32];
    switch (timeout->kind) {
    case HD_TIMEOUT_NOT_APPLICABLE:
        return;
    case HD_TIMEOUT_NONE:
        report_buffer_puts(out, ", no timeout");
        return;
    case HD_TIMEOUT_UNREADABLE:
        report_buffer_puts(out, ", with a timeout (its value could not be read)");
        return;
    case HD_TIMEOUT_FINITE:
        break;
    }
    double seconds = (double)timeout->remaining_ns / 1e9;
    if (!timeout->absolute && timeout->remaining_ns < 10 * INT64_C(1000000000) &&
        timeout->remaining_ns % 1000000 == 0) {
        report_buffer_printf(out, ", %" PRId64 " ms timeout", timeout->remaining_ns / 1000000);
        return;
    }
    if (!timeout->absolute) {
        report_format_duration(seconds, duration, sizeof duration);
        report_buffer_printf(out, ", %s timeout", duration);
    } else if (seconds >= 0) {
        report_format_duration(seconds, duration, sizeof duration);
        report_buffer_printf(out, ", deadline in %s", duration);
    } else {
        report_format_duration(-seconds, duration, sizeof duration);
        report_buffer_printf(out, ", deadline passed %s ago", duration);
    }
}

static void describe_child(struct report_buffer *out, const struct hd_wait *wait)
{
    switch (wait->child_selector) {
    case HD_CHILD_ANY:
        report_buffer_puts(out, " any child");
        break;
    case HD_CHILD_PID:
        report_buffer_printf(out, " pid %d", (int)wait->child);
        break;
    case HD_CHILD_GROUP:
        if (wait->child == 0)
            report_buffer_puts(out, " any child in its process group");
        else
            report_buffer_printf(out, " process group %d", (int)wait->child);
        break;
    case HD_CHILD_PIDFD:
        report_buffer_printf(out, " pidfd %d", (int)wait->child);
        break;
    }
}

void report_describe_wait(struct report_buffer *out, const struct hd_thread *thread)
{
    const struct hd_wait *wait = &thread->wait;
    if (thread->syscall.state != HD_SYSCALL_IN || (thread->state && strchr("TtZX", thread->state))) {
        report_buffer_puts(out, report_wait_label(thread));
        return;
    }
    report_buffer_puts(out, report_wait_label(thread));
    if (wait->operation && strcmp(wait->operation, "restart_syscall") == 0) {
        /* the original call's arguments are in the kernel's restart block, not in /proc (probe/syscalls.h) */
        if (wait->kind != HD_WAIT_OTHER)
            report_buffer_printf(out, " (resuming a %s wait that a signal or a ptrace stop interrupted)",
                                 hd_wait_kind_name(wait->kind));
        describe_timeout(out, &wait->timeout);
        return;
    }
    switch (wait->kind) {
    case HD_WAIT_FUTEX:
        if (wait->operation && strcmp(wait->operation, "futex_waitv") == 0)
            report_buffer_printf(out, " on %u futexes", wait->nfds);
        else if (wait->operation && strstr(wait->operation, "LOCK_PI"))
            /* FUTEX_LOCK_PI takes no expected value: the kernel reads the owner from the word */
            report_buffer_printf(out, " 0x%" PRIx64 " %s", wait->address, wait->futex_private ? "private" : "shared");
        else
            report_buffer_printf(out, " 0x%" PRIx64 " %s, expected %" PRIu32, wait->address,
                                 wait->futex_private ? "private" : "shared", wait->expected);
        if (wait->lock.kind == HD_LOCK_GIL)
            report_buffer_printf(out, ": the Python GIL, held by thread %d (its timed wake-ups only ask for it)",
                                 (int)wait->lock.owner_tid);
        break;
    case HD_WAIT_POLL:
        if (wait->fd >= 0)
            report_buffer_printf(out, " on epoll fd %d", wait->fd);
        else
            report_buffer_printf(out, " %u fd%s", wait->nfds, wait->nfds == 1 ? "" : "s");
        break;
    case HD_WAIT_READ:
    case HD_WAIT_WRITE:
    case HD_WAIT_ACCEPT:
    case HD_WAIT_CONNECT:
    case HD_WAIT_LOCK:
        report_buffer_printf(out, " fd %d", wait->fd);
        break;
    case HD_WAIT_CHILD:
        describe_child(out, wait);
        break;
    case HD_WAIT_SLEEP:
    case HD_WAIT_SIGNAL:
    case HD_WAIT_NONE:
    case HD_WAIT_OTHER:
        break;
    }
    describe_timeout(out, &wait->timeout);
    if (resumed_call(thread))
        report_buffer_puts(out, ", resumed by restart_syscall after a stop");
}

const char *report_lock_noun(const struct hd_lock *lock)
{
    static const char *const nouns[] = {
        [HD_LOCK_UNKNOWN] = "futex", [HD_LOCK_MUTEX] = "mutex", [HD_LOCK_RWLOCK] = "rwlock",
        [HD_LOCK_JOIN] = "thread", [HD_LOCK_GIL] = "Python GIL", [HD_LOCK_FILE] = "file lock",
    };
    return (size_t)lock->kind < COUNT(nouns) ? nouns[lock->kind] : "lock";
}

static void put_value(struct report_buffer *out, const char *label, const char *value)
{
    if (!value)
        return;
    report_buffer_puts(out, label);
    report_buffer_escaped(out, value, strlen(value));
}

void report_describe_job(struct report_buffer *out, const struct hd_job *job)
{
    if (job->role == HD_JOB_WORKER) {
        if (job->rank >= 0)
            report_buffer_printf(out, "worker of rank %d (process %d)", job->rank, (int)job->rank_pid);
        else
            report_buffer_printf(out, "worker of process %d", (int)job->rank_pid);
    } else if (job->role == HD_JOB_LAUNCHER) {
        report_buffer_puts(out, "launcher of ranks (a torchrun agent or a wrapper)");
    } else if (job->rank >= 0) {
        report_buffer_printf(out, "rank %d", job->rank);
        if (job->world_size >= 0)
            report_buffer_printf(out, " of %d", job->world_size);
        report_buffer_printf(out, " (%s", job->rank_variable ? job->rank_variable : "?");
        if (job->local_rank >= 0)
            report_buffer_printf(out, ", local %d", job->local_rank);
        if (job->local_rank >= 0 && job->local_world_size >= 0)
            report_buffer_printf(out, " of %d", job->local_world_size);
        report_buffer_puts(out, ")");
    } else {
        report_buffer_puts(out, "in a job, no rank");
    }
    if (job->role == HD_JOB_WORKER)
        return; /* the rest is its rank's */
    put_value(out, " · Slurm job ", job->job_id);
    put_value(out, job->job_id ? " step " : " · Slurm step ", job->step_id);
    if (job->node_id >= 0)
        report_buffer_printf(out, " · node %d", job->node_id);
    if (job->group_rank >= 0)
        report_buffer_printf(out, " · node rank %d", job->group_rank);
    put_value(out, " · torchrun run ", job->run_id);
    put_value(out, " · master ", job->master);
}
