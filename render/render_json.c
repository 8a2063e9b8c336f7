/* The JSON report (report.h): one document, schema "hangdoc.report/2" (see the JSON contract in DESIGN.md).
 *
 * Written as it is walked (json_writer.h), so that its cost is linear in what it says and its memory constant.
 * Addresses and raw syscall arguments are hex strings: JSON numbers lose precision above 2^53. Target strings are
 * escaped exactly as in the text report, so a value is valid UTF-8 and means the same in both.
 */
#include "report.h"
#include "signals.h"

#include "buffer.h"
#include "collectives.h"
#include "describe.h"
#include "json_writer.h"
#include "render_inheritance.h"
#include "python_view.h"
#include "render_stacks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void state_letter(struct report_json *json, const char *key, char state)
{
    char text[2] = { state ? state : '?', '\0' };
    report_json_string(json, key, text);
}

static void timeout_json(struct report_json *json, const struct hd_timeout *timeout)
{
    static const char *const kinds[] = {
        [HD_TIMEOUT_NOT_APPLICABLE] = "not-applicable",
        [HD_TIMEOUT_NONE] = "none",
        [HD_TIMEOUT_FINITE] = "finite",
        [HD_TIMEOUT_UNREADABLE] = "unreadable",
    };
    report_json_begin_object(json, "timeout");
    report_json_name(json, "kind", kinds[timeout->kind]);
    if (timeout->kind == HD_TIMEOUT_FINITE) {
        report_json_double(json, "remaining_s", (double)timeout->remaining_ns / 1e9);
        report_json_bool(json, "absolute", timeout->absolute);
    }
    report_json_end_object(json);
}

static void syscall_json(struct report_json *json, const struct hd_thread *thread)
{
    const struct hd_syscall *syscall = &thread->syscall;
    static const char *const states[] = {
        [HD_SYSCALL_UNREAD] = "unread",
        [HD_SYSCALL_RUNNING] = "running",
        [HD_SYSCALL_NONE] = "none",
        [HD_SYSCALL_IN] = "in-syscall",
    };
    report_json_begin_object(json, "syscall");
    report_json_name(json, "state", states[syscall->state]);
    if (thread->syscall_from_registers)
        report_json_bool(json, "from_registers", true);
    if (syscall->state != HD_SYSCALL_IN) {
        report_json_null(json, "name");
        report_json_begin_array(json, "args");
        report_json_end_array(json);
        report_json_end_object(json);
        return;
    }
    report_json_int(json, "nr", syscall->nr);
    report_json_string_or_null(json, "name", syscall->name);
    report_json_begin_array(json, "args");
    for (size_t i = 0; i < 6; i++)
        report_json_hex(json, NULL, syscall->args[i]);
    report_json_end_array(json);
    struct report_buffer words = { 0 };
    report_describe_wait(&words, thread);
    /* hangdoc's words: the call, its object and its timeout, no string of the target's */
    report_json_name(json, "description", words.data ? words.data : "");
    report_buffer_release(&words);
    report_json_end_object(json);
}

static const char *goroutine_status_name(uint32_t status)
{
    static const char *const names[] = { "idle", "runnable", "running", "syscall", "waiting", "moribund", "dead",
                                         "enqueue", "copystack", "preempted" };
    return status < COUNT(names) ? names[status] : "?";
}

/* The Go runtime of a Go program: null for any other. */
static void go_json(struct report_json *json, const struct hd_go_runtime *go)
{
    if (!go->present) {
        report_json_null(json, "go");
        return;
    }
    report_json_begin_object(json, "go");
    report_json_string_or_null(json, "version", go->version);
    report_json_string_or_null(json, "why_not", go->why_not);
    report_json_bool(json, "truncated", go->truncated);
    report_json_begin_array(json, "goroutines");
    for (size_t g = 0; g < go->ngoroutines; g++) {
        const struct hd_goroutine *goroutine = &go->goroutines[g];
        report_json_begin_object(json, NULL);
        report_json_int(json, "goid", goroutine->goid);
        report_json_name(json, "status", goroutine_status_name(goroutine->status));
        report_json_string_or_null(json, "wait_reason", goroutine->wait_reason);
        if (goroutine->semaphore)
            report_json_hex(json, "semaphore", goroutine->semaphore);
        else
            report_json_null(json, "semaphore");
        report_json_bool(json, "system", goroutine->system);
        report_json_bool(json, "unchanged", goroutine->unchanged);
        report_frame_array_json(json, "frames", goroutine->frames, goroutine->nframes);
        report_json_end_object(json);
    }
    report_json_end_array(json);
    report_json_end_object(json);
}

/* A HotSpot JVM's Java threads: null for a process without one. */
static void jvm_json(struct report_json *json, const struct hd_jvm *jvm)
{
    if (!jvm->present) {
        report_json_null(json, "jvm");
        return;
    }
    report_json_begin_object(json, "jvm");
    report_json_string_or_null(json, "release", jvm->release);
    report_json_string_or_null(json, "why_not", jvm->why_not);
    report_json_begin_array(json, "java_threads");
    for (size_t t = 0; t < jvm->nthreads; t++) {
        const struct hd_java_thread *thread = &jvm->threads[t];
        report_json_begin_object(json, NULL);
        report_json_int(json, "tid", thread->tid);
        report_json_int(json, "state", thread->state);
        if (thread->pending_monitor) {
            report_json_begin_object(json, "pending_monitor");
            report_json_hex(json, "monitor", thread->pending_monitor);
            if (thread->monitor_object)
                report_json_hex(json, "object", thread->monitor_object);
            else
                report_json_null(json, "object");
            report_json_string_or_null(json, "class", thread->monitor_class);
            if (thread->owner_tid)
                report_json_int(json, "owner_tid", thread->owner_tid);
            else
                report_json_null(json, "owner_tid");
            report_json_end_object(json);
        } else {
            report_json_null(json, "pending_monitor");
        }
        if (thread->waiting_monitor)
            report_json_hex(json, "waiting_monitor", thread->waiting_monitor);
        else
            report_json_null(json, "waiting_monitor");
        if (thread->blocker_object) {
            report_json_begin_object(json, "parked_for");
            report_json_hex(json, "object", thread->blocker_object);
            report_json_string_or_null(json, "class", thread->blocker_class);
            if (thread->blocker_owner_tid)
                report_json_int(json, "owner_tid", thread->blocker_owner_tid);
            else
                report_json_null(json, "owner_tid");
            report_json_end_object(json);
        } else {
            report_json_null(json, "parked_for");
        }
        report_json_end_object(json);
    }
    report_json_end_array(json);
    report_json_end_object(json);
}

static void lock_json(struct report_json *json, const struct hd_lock *lock)
{
    report_json_begin_object(json, "lock");
    report_json_name(json, "kind", hd_lock_kind_name(lock->kind));
    if (lock->kind != HD_LOCK_UNKNOWN) {
        report_json_hex(json, "object_address", lock->object_address);
        report_json_string_or_null(json, "type", lock->type);
        report_json_bool(json, "robust", lock->robust);
        report_json_bool(json, "priority_inheritance", lock->priority_inheritance);
        report_json_bool(json, "process_shared", lock->process_shared);
        report_json_name(json, "owner_whereabouts", hd_owner_whereabouts_name(lock->owner_whereabouts));
    } else {
        report_json_string_or_null(json, "why_unknown", lock->why_unknown);
        if (lock->type) /* a lock told by its layout that records no owner (musl's normal mutex) */
            report_json_string(json, "type", lock->type);
    }
    if (lock->word_read)
        report_json_hex(json, "word", lock->word);
    else
        report_json_null(json, "word");
    report_json_end_object(json);
}

static void mapping_json(struct report_json *json, enum hd_mapping_kind kind, const struct hd_mapping *mapping)
{
    report_json_begin_object(json, "mapping");
    report_json_name(json, "kind", hd_mapping_kind_name(kind));
    if (kind != HD_MAPPING_UNKNOWN) {
        report_json_hex(json, "start", mapping->start);
        report_json_hex(json, "end", mapping->end);
        report_json_string(json, "permissions", mapping->permissions);
        report_json_string_or_null(json, "path", mapping->path);
        report_json_int(json, "inode", (int64_t)mapping->inode);
    }
    report_json_end_object(json);
}

/* ["SIGCHLD", "SIGALRM"]: hangdoc's names for a signal set */
static void signals_json(struct report_json *json, const char *key, uint64_t signals)
{
    report_json_begin_array(json, key);
    for (int number = 1; number <= 64; number++) {
        if (!(signals & REPORT_SIGNAL_BIT(number)))
            continue;
        char name[32];
        report_signal_names(REPORT_SIGNAL_BIT(number), name, sizeof name);
        report_json_string(json, NULL, name);
    }
    report_json_end_array(json);
}

static void wait_json(struct report_json *json, const struct hd_wait *wait)
{
    if (wait->kind == HD_WAIT_NONE) {
        report_json_null(json, "wait");
        return;
    }
    report_json_begin_object(json, "wait");
    report_json_name(json, "kind", hd_wait_kind_name(wait->kind));
    report_json_string_or_null(json, "operation", wait->operation);
    timeout_json(json, &wait->timeout);
    if (wait->kind == HD_WAIT_SIGNAL && wait->signal_set_kind != HD_SIGNAL_SET_UNKNOWN) {
        /* the set as the call gave it: the signals it blocks while it waits, or those it waits for */
        report_json_name(json, "signal_set_kind",
                         wait->signal_set_kind == HD_SIGNAL_SET_BLOCKED ? "blocked" : "wanted");
        signals_json(json, "signal_set", wait->signal_set);
    }
    switch (wait->kind) {
    case HD_WAIT_FUTEX:
        report_json_hex(json, "address", wait->address);
        report_json_bool(json, "private", wait->futex_private);
        report_json_int(json, "expected", wait->expected);
        report_json_pid_or_null(json, "owner_tid", wait->lock.owner_tid);
        report_json_pid_or_null(json, "owner_pid", wait->lock.owner_pid);
        report_json_pid_or_null(json, "owner_ns_tid", wait->lock.owner_ns_tid);
        lock_json(json, &wait->lock);
        mapping_json(json, wait->mapping_kind, &wait->mapping);
        break;
    case HD_WAIT_POLL:
        if (wait->fd >= 0)
            report_json_int(json, "fd", wait->fd);
        else
            report_json_int(json, "nfds", wait->nfds);
        break;
    case HD_WAIT_READ:
    case HD_WAIT_WRITE:
    case HD_WAIT_ACCEPT:
    case HD_WAIT_CONNECT:
        report_json_int(json, "fd", wait->fd);
        break;
    case HD_WAIT_LOCK:
        report_json_int(json, "fd", wait->fd);
        report_json_pid_or_null(json, "owner_tid", wait->lock.owner_tid);
        report_json_pid_or_null(json, "owner_pid", wait->lock.owner_pid);
        if (wait->lock.kind == HD_LOCK_FILE) {
            report_json_begin_object(json, "lock");
            report_json_name(json, "kind", hd_lock_kind_name(wait->lock.kind));
            report_json_string_or_null(json, "type", wait->lock.type);
            report_json_pid_or_null(json, "owner_pid", wait->lock.owner_pid);
            report_json_name(json, "owner_whereabouts", hd_owner_whereabouts_name(wait->lock.owner_whereabouts));
            report_json_end_object(json);
        }
        break;
    case HD_WAIT_CHILD: {
        static const char *const selectors[] = {
            [HD_CHILD_ANY] = "any", [HD_CHILD_PID] = "pid", [HD_CHILD_GROUP] = "group", [HD_CHILD_PIDFD] = "pidfd",
        };
        report_json_name(json, "children", selectors[wait->child_selector]);
        report_json_int(json, "pid", wait->child);
        break;
    }
    case HD_WAIT_NONE:
    case HD_WAIT_OTHER:
    case HD_WAIT_SLEEP:
    case HD_WAIT_SIGNAL:
        break; /* nothing beyond the common keys */
    }
    if (wait->nfds_known > 0 || wait->kind == HD_WAIT_POLL) {
        report_json_begin_array(json, "waits_on_fds");
        for (unsigned i = 0; i < wait->nfds_known; i++)
            report_json_int(json, NULL, wait->fds[i]);
        report_json_end_array(json);
        report_json_bool(json, "waits_on_fds_truncated", wait->fds_truncated);
    }
    report_json_end_object(json);
}

static void kernel_stack_json(struct report_json *json, const char *stack)
{
    if (!stack) {
        report_json_null(json, "kernel_stack");
        return;
    }
    report_json_begin_array(json, "kernel_stack");
    const char *line;
    size_t length;
    while (report_next_line(&stack, &line, &length))
        report_json_bytes(json, NULL, line, length);
    report_json_end_array(json);
}

/* The FUSE call a thread is in (probe/fuse.h); null for every other thread. */
static void fuse_json(struct report_json *json, const struct hd_fuse_call *call)
{
    if (!call->in_call) {
        report_json_null(json, "fuse");
        return;
    }
    report_json_begin_object(json, "fuse");
    report_json_bool(json, "awaits_answer", call->awaits_answer);
    report_json_string_or_null(json, "mount_point", call->mount_point);
    report_json_string_or_null(json, "fs_type", call->fs_type);
    report_json_string_or_null(json, "source", call->source);
    if (call->mount_id) {
        report_json_int(json, "mount_id", call->mount_id);
        report_json_int(json, "connection", call->connection);
    } else {
        report_json_null(json, "mount_id");
        report_json_null(json, "connection");
    }
    report_json_string_or_null(json, "found_by", call->found_by);
    if (call->waiting >= 0)
        report_json_int(json, "waiting", call->waiting);
    else
        report_json_null(json, "waiting");
    report_json_pid_or_null(json, "daemon_pid", call->daemon_pid);
    report_json_string_or_null(json, "daemon_comm", call->daemon_pid ? call->daemon_comm : NULL);
    report_json_string_or_null(json, "daemon_found_by", call->daemon_found_by);
    report_json_end_object(json);
}

static void samples_json(struct report_json *json, const struct report_history *history)
{
    report_json_begin_object(json, "samples");
    report_json_int(json, "seen", history->samples_seen);
    report_json_int(json, "in_state_d", history->samples_in_state_d);
    report_json_int(json, "in_state_r", history->samples_in_state_r);
    report_json_double(json, "cpu_delta_s", (double)history->cpu_delta_ns / 1e9);
    report_json_int(json, "switches_delta", (int64_t)history->switches_delta);
    report_json_int(json, "voluntary_switches_delta", (int64_t)history->voluntary_switches_delta);
    report_json_bool(json, "syscall_changed", history->syscall_changed);
    report_json_int(json, "on_last_futex", history->samples_on_this_futex);
    report_json_end_object(json);
}

/* The thread's Python stack, innermost first, and its standing with the GIL (omitted when unknown). */
static void python_frames_json(struct report_json *json, const struct hd_thread *thread)
{
    report_json_begin_array(json, "python_frames");
    for (size_t f = 0; f < thread->npython_frames; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        report_json_begin_object(json, NULL);
        report_json_string(json, "function", frame->function);
        report_json_string(json, "file", frame->file);
        report_json_int(json, "line", frame->line);
        report_json_bool(json, "entry", frame->entry);
        report_json_end_object(json);
    }
    report_json_end_array(json);
    if (thread->python_truncated)
        report_json_bool(json, "python_truncated", true);
    if (thread->python_looks > 1) {
        report_json_int(json, "python_looks", thread->python_looks);
        report_json_bool(json, "python_leaf_same", thread->python_leaf_same);
    }
    if (hd_gil_state_name(thread->gil))
        report_json_name(json, "gil", hd_gil_state_name(thread->gil));
    const char *role = report_thread_role_name(report_python_role(thread));
    if (role)
        report_json_name(json, "role", role);
}

/* The process's CPython interpreter, when it was read. */
static void python_json(struct report_json *json, const struct hd_process *process)
{
    if (!process->python.read)
        return;
    report_json_begin_object(json, "python");
    report_json_string(json, "version", process->python.version);
    report_json_bool(json, "gil_locked", process->python.gil_locked);
    report_json_pid_or_null(json, "gil_holder", process->python.gil_holder);
    if (process->python.gil_holder_recorded && !process->python.gil_holder)
        report_json_int(json, "gil_holder_recorded", process->python.gil_holder_recorded);
    report_json_end_object(json);
}

static void thread_json(struct report_json *json, const struct hd_thread *thread,
                        const struct report_history *history)
{
    report_json_begin_object(json, NULL);
    report_json_int(json, "tid", thread->tid);
    report_json_pid_or_null(json, "ns_tid", thread->ns_tid);
    report_json_string(json, "name", thread->name);
    state_letter(json, "state", thread->state);
    report_json_string_or_null(json, "wchan", thread->wchan[0] ? thread->wchan : NULL);
    syscall_json(json, thread);
    wait_json(json, &thread->wait);
    if (thread->blocked_for_known)
        report_json_double(json, "blocked_for_s", thread->blocked_for_s);
    else
        report_json_null(json, "blocked_for_s");
    if (thread->waited_before_s > 0) {
        report_json_double(json, "blocked_before_stop_s", thread->waited_before_s);
        report_json_double(json, "earlier_stop_at", thread->earlier_stop_at);
    }
    report_json_bool(json, "progressing", history->progressing);
    report_json_double(json, "cpu_time_s", (double)thread->cpu_time_ns / 1e9);
    if (thread->switches_known) {
        report_json_int(json, "voluntary_switches", (int64_t)thread->voluntary_switches);
        report_json_int(json, "involuntary_switches", (int64_t)thread->involuntary_switches);
    }
    samples_json(json, history);
    fuse_json(json, &thread->fuse);
    kernel_stack_json(json, thread->kernel_stack);
    report_frames_json(json, "frames", thread);
    report_stack_json(json, "stack", thread);
    report_leaf_json(json, "leaf", history);
    python_frames_json(json, thread);
    report_json_end_object(json);
}

static void fds_json(struct report_json *json, const struct hd_process *process,
                     const struct report_catalogue *catalogue)
{
    static const char *const classes[] = {
        [HD_FD_OTHER] = "other", [HD_FD_FILE] = "file", [HD_FD_PIPE] = "pipe",
        [HD_FD_SOCKET] = "socket", [HD_FD_ANON] = "anon",
    };
    static const char *const modes[] = { "read", "write", "read-write" };
    report_json_begin_array(json, "fds");
    for (size_t i = 0; i < process->nfds; i++) {
        const struct hd_fd *fd = &process->fds[i];
        report_json_begin_object(json, NULL);
        report_json_int(json, "fd", fd->fd);
        report_json_string(json, "target", fd->target);
        if (fd->inode)
            report_json_int(json, "inode", (int64_t)fd->inode);
        if (fd->access_mode >= 0 && fd->access_mode <= 2)
            report_json_name(json, "access", modes[fd->access_mode]);
        report_json_name(json, "kind", classes[fd->kind]);
        /* class, device, socket_name, runtime and inherited_from */
        report_json_fd_inheritance(json, fd, catalogue);
        report_json_end_object(json);
    }
    report_json_end_array(json);
}

static void number_or_null(struct report_json *json, const char *key, int value)
{
    if (value >= 0)
        report_json_int(json, key, value);
    else
        report_json_null(json, key);
}

/* Who the process is in a distributed job (probe/job.h); null when its environment names none. */
static void job_json(struct report_json *json, const struct hd_job *job)
{
    if (!job) {
        report_json_null(json, "job");
        return;
    }
    report_json_begin_object(json, "job");
    report_json_name(json, "role", hd_job_role_name(job->role));
    number_or_null(json, "rank", job->rank);
    number_or_null(json, "world_size", job->world_size);
    number_or_null(json, "local_rank", job->local_rank);
    number_or_null(json, "local_world_size", job->local_world_size);
    number_or_null(json, "group_rank", job->group_rank);
    report_json_string_or_null(json, "rank_variable", job->rank_variable);
    report_json_int(json, "rank_pid", job->rank_pid);
    report_json_string_or_null(json, "job_id", job->job_id);
    report_json_string_or_null(json, "step_id", job->step_id);
    number_or_null(json, "node_id", job->node_id);
    report_json_string_or_null(json, "run_id", job->run_id);
    report_json_string_or_null(json, "master", job->master);
    report_json_string_or_null(json, "cgroup", job->cgroup);
    report_json_end_object(json);
}

/* The collective the process is in (collectives.h); null when none. */
static void collective_json(struct report_json *json, const struct report_analysis *analysis,
                            const struct hd_process *process)
{
    const struct report_collective *collective = report_process_collective(analysis, process);
    if (!collective) {
        report_json_null(json, "collective");
        return;
    }
    const struct hd_thread *thread = analysis->graph.nodes[collective->node].thread;
    report_json_begin_object(json, "collective");
    report_json_string(json, "name", collective->name);
    report_json_int(json, "tid", thread->tid);
    report_json_string_or_null(json, "function", collective->function);
    report_json_string_or_null(json, "file", collective->file);
    number_or_null(json, "line", collective->file ? collective->line : -1);
    report_json_string_or_null(json, "site_function", collective->site_function);
    report_json_string_or_null(json, "site_file", collective->site_file);
    number_or_null(json, "site_line", collective->site_file ? collective->site_line : -1);
    report_json_string_or_null(json, "backend", collective->backend);
    report_json_string_or_null(json, "backend_wait", collective->backend_wait);
    report_json_pid_or_null(json, "backend_tid",
                            collective->backend ? analysis->graph.nodes[collective->backend_node].thread->tid : 0);
    if (collective->backend_timeout_known)
        report_json_double(json, "backend_timeout_s", collective->backend_timeout_s);
    else
        report_json_null(json, "backend_timeout_s");
    report_json_end_object(json);
}

static void process_json(struct report_json *json, const struct hd_snapshot *snapshot,
                         const struct hd_process *process, const struct report_analysis *analysis)
{
    const struct report_catalogue *catalogue = analysis->catalogue;
    report_json_begin_object(json, NULL);
    report_json_int(json, "pid", process->pid);
    report_json_int(json, "ppid", process->ppid);
    report_json_int(json, "uid", process->uid);
    report_json_string(json, "comm", process->comm);
    report_json_begin_array(json, "cmdline");
    for (size_t i = 0; i < process->argc; i++)
        report_json_string(json, NULL, process->argv[i]);
    report_json_end_array(json);
    report_json_bool(json, "cmdline_truncated", process->cmdline_truncated);
    report_json_string_or_null(json, "exe", process->exe);
    state_letter(json, "state", process->state);
    report_json_name(json, "origin", hd_origin_name(process->origin));
    report_json_name(json, "origin_basis", hd_origin_basis_name(process->origin_basis));
    report_json_name(json, "arch", hd_arch_name(process->arch));
    report_json_double(json, "start_time_s", process->start_time_s);
    report_json_double(json, "age_s", process->age_s);
    report_json_pid_or_null(json, "tracer_pid", process->tracer_pid);
    report_json_string_or_null(json, "tracer_comm", process->tracer_comm[0] ? process->tracer_comm : NULL);
    report_json_string_or_null(json, "tracer_cmdline", process->tracer_pid ? process->tracer_cmdline : NULL);
    if (process->frozen) {
        report_json_begin_object(json, "freezer");
        report_json_int(json, "version", process->freezer_version);
        report_json_bool(json, "freezing", process->freezing);
        report_json_string_or_null(json, "cgroup", process->frozen_cgroup);
        report_json_string_or_null(json, "frozen_by", process->frozen_by);
        report_json_string_or_null(json, "control", process->freeze_control);
        report_json_end_object(json);
    } else {
        report_json_null(json, "freezer");
    }
    report_json_bool(json, "fuse_daemon", process->fuse_daemon);
    go_json(json, &process->go);
    jvm_json(json, &process->jvm);
    if (process->ns_pid) {
        report_json_begin_object(json, "pid_namespace");
        report_json_int(json, "id", (int64_t)process->pid_namespace);
        report_json_int(json, "pid", process->ns_pid);
        report_json_end_object(json);
    } else {
        report_json_null(json, "pid_namespace");
    }
    job_json(json, process->job);
    collective_json(json, analysis, process);
    report_json_int(json, "thread_count", process->thread_count);
    report_json_bool(json, "kernel_thread", process->kernel_thread);
    if (process->zombie)
        report_json_int(json, "exit_status", process->exit_status);
    else
        report_json_null(json, "exit_status");
    fds_json(json, process, catalogue);
    report_json_double(json, "stopped_for_s", process->stopped_for_s);
    /* libraries, python_role, python_start_method, device_mappings, thread_census */
    report_json_process_inheritance(json, snapshot, process, catalogue);
    python_json(json, process);
    report_json_begin_array(json, "threads");
    for (size_t t = 0; t < process->nthreads; t++) {
        const struct hd_thread *thread = report_process_thread(&analysis->graph, process, t);
        thread_json(json, thread, report_thread_history(&analysis->graph, thread));
    }
    report_json_end_array(json);
    report_json_end_object(json);
}

static void finding_id_or_null(struct report_json *json, const char *key, const struct report_analysis *analysis,
                               ptrdiff_t finding)
{
    if (finding >= 0)
        report_json_name(json, key, analysis->findings[finding].id);
    else
        report_json_null(json, key);
}

static void chain_json(struct report_json *json, const pid_t *chain, size_t nchain)
{
    report_json_begin_array(json, "chain");
    for (size_t i = 0; i < nchain; i++)
        report_json_int(json, NULL, chain[i]);
    report_json_end_array(json);
}

static void hang_json(struct report_json *json, const struct report_analysis *analysis, const struct report_hang *hang)
{
    report_json_begin_object(json, NULL);
    report_json_name(json, "cause", report_cause_name(hang->cause));
    finding_id_or_null(json, "root_cause", analysis, hang->root_cause ? hang->finding : -1);
    if (hang->finding >= 0)
        report_json_int(json, "finding", hang->finding);
    else
        report_json_null(json, "finding");
    report_json_int(json, "pid", hang->pid);
    report_json_int(json, "tid", hang->tid);
    chain_json(json, hang->chain, hang->nchain);
    report_json_begin_array(json, "findings");
    for (size_t i = 0; i < hang->nfindings; i++)
        report_json_int(json, NULL, (int64_t)hang->findings[i]);
    report_json_end_array(json);
    report_json_end_object(json);
}

static void verdict_json(struct report_json *json, const struct report_analysis *analysis)
{
    const struct report_verdict *verdict = &analysis->verdict;
    report_json_begin_object(json, "verdict");
    if (verdict->hung == REPORT_HUNG_UNKNOWN)
        report_json_null(json, "hung");
    else
        report_json_bool(json, "hung", verdict->hung == REPORT_HUNG_YES);
    report_json_name(json, "cause", report_cause_name(verdict->cause));
    finding_id_or_null(json, "root_cause", analysis, verdict->root_cause);
    report_json_pid_or_null(json, "pid", verdict->pid);
    report_json_pid_or_null(json, "tid", verdict->tid);
    chain_json(json, verdict->chain, verdict->nchain);
    report_json_begin_array(json, "hangs");
    for (size_t h = 0; h < verdict->nhangs; h++)
        hang_json(json, analysis, &verdict->hangs[h]);
    report_json_end_array(json);
    report_json_int(json, "unread_waits", (int64_t)verdict->unread_waits);
    report_json_end_object(json);
}

static int compare_evidence_names(const void *left, const void *right, void *context)
{
    const struct report_evidence *evidence = context;
    size_t a = *(const size_t *)left, b = *(const size_t *)right;
    int by_name = strcmp(evidence[a].name, evidence[b].name);
    return by_name ? by_name : (a > b) - (a < b);
}

/* evidence {name: value}; a name given more than once (the waiters of a cycle, parent waiters) becomes an array
 * of its values, in their order, at the place of its first value */
static void evidence_json(struct report_json *json, const struct report_finding *finding)
{
    report_json_begin_object(json, "evidence");
    if (finding->nevidence == 0) {
        report_json_end_object(json);
        return;
    }
    size_t *by_name = malloc(finding->nevidence * sizeof *by_name);
    size_t *group_of = malloc(finding->nevidence * sizeof *group_of);
    if (!by_name || !group_of) {
        json->failed = true;
    } else {
        /* sort the indexes by name (then index) so that each name's values are one run; index each run by its
         * first value */
        for (size_t e = 0; e < finding->nevidence; e++)
            by_name[e] = e;
        qsort_r(by_name, finding->nevidence, sizeof *by_name, compare_evidence_names, finding->evidence);
        for (size_t run = 0; run < finding->nevidence;) {
            size_t end = run + 1;
            while (end < finding->nevidence &&
                   strcmp(finding->evidence[by_name[end]].name, finding->evidence[by_name[run]].name) == 0)
                end++;
            for (size_t i = run; i < end; i++)
                group_of[by_name[i]] = run;
            run = end;
        }
        for (size_t e = 0; e < finding->nevidence; e++) {
            size_t run = group_of[e];
            if (by_name[run] != e)
                continue; /* written with its name's first value */
            size_t end = run + 1;
            while (end < finding->nevidence && group_of[by_name[end]] == run)
                end++;
            if (end - run == 1) {
                report_json_string(json, finding->evidence[e].name, finding->evidence[e].value);
                continue;
            }
            report_json_begin_array(json, finding->evidence[e].name);
            for (size_t i = run; i < end; i++)
                report_json_string(json, NULL, finding->evidence[by_name[i]].value);
            report_json_end_array(json);
        }
    }
    free(by_name);
    free(group_of);
    report_json_end_object(json);
}

static void finding_json(struct report_json *json, const struct report_analysis *analysis,
                         const struct report_finding *finding)
{
    report_json_begin_object(json, NULL);
    report_json_name(json, "id", finding->id);
    report_json_name(json, "confidence", report_confidence_name(finding->confidence));
    report_json_bool(json, "hang", finding->hang);
    report_json_int(json, "pid", finding->pid);
    report_json_int(json, "tid", finding->tid);
    report_json_string(json, "summary", finding->summary);
    evidence_json(json, finding);
    report_json_begin_array(json, "remedies");
    for (size_t r = 0; r < finding->nremedies; r++)
        report_json_string(json, NULL, finding->remedies[r]);
    report_json_end_array(json);
    report_json_begin_array(json, "members");
    for (size_t m = 0; m < finding->nmembers; m++) {
        const struct report_node *node = &analysis->graph.nodes[finding->members[m]];
        report_json_begin_object(json, NULL);
        report_json_int(json, "pid", node->process->pid);
        report_json_int(json, "tid", node->thread->tid);
        report_json_end_object(json);
    }
    report_json_end_array(json);
    report_json_end_object(json);
}

static void graph_nodes_json(struct report_json *json, const struct report_graph *graph)
{
    report_json_begin_array(json, "nodes");
    for (size_t i = 0; i < graph->nnodes; i++) {
        report_json_begin_object(json, NULL);
        report_json_int(json, "pid", graph->nodes[i].process->pid);
        report_json_int(json, "tid", graph->nodes[i].thread->tid);
        report_json_name(json, "wake", report_wake_name(graph->nodes[i].wake));
        report_json_bool(json, "asleep_forever", graph->nodes[i].wake == REPORT_WAKE_NEVER);
        if (graph->nodes[i].wake_signals)
            signals_json(json, "ends_on_signals", graph->nodes[i].wake_signals);
        report_json_end_object(json);
    }
    report_json_end_array(json);
}

static void graph_edges_json(struct report_json *json, const struct report_graph *graph)
{
    report_json_begin_array(json, "edges");
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
            const struct report_edge *edge = &graph->edges[e];
            if (edge->target != REPORT_TO_THREAD)
                continue;
            report_json_begin_object(json, NULL);
            report_json_int(json, "from", node->thread->tid);
            report_json_int(json, "to", graph->nodes[edge->to].thread->tid);
            report_json_name(json, "kind", report_edge_kind_name(edge->kind));
            report_json_end_object(json);
        }
    }
    report_json_end_array(json);
}

/* An edge to "any thread of these processes" (an OR-set) is written once per waiter and kind, with the
 * processes, instead of as an edge to each of their threads. */
static void graph_wait_sets_json(struct report_json *json, const struct report_graph *graph)
{
    report_json_begin_array(json, "wait_sets");
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        bool set_open = false;
        enum report_edge_kind set_kind = REPORT_EDGE_FUTEX;
        for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
            const struct report_edge *edge = &graph->edges[e];
            if (edge->target == REPORT_TO_THREAD)
                continue;
            if (!set_open || edge->kind != set_kind) {
                if (set_open) {
                    report_json_end_array(json);
                    report_json_end_object(json);
                }
                report_json_begin_object(json, NULL);
                report_json_int(json, "from", node->thread->tid);
                report_json_name(json, "kind", report_edge_kind_name(edge->kind));
                report_json_begin_array(json, "any_thread_of");
                set_open = true;
                set_kind = edge->kind;
            }
            report_json_int(json, NULL, graph->processes[edge->to].process->pid);
        }
        if (set_open) {
            report_json_end_array(json);
            report_json_end_object(json);
        }
    }
    report_json_end_array(json);
}

static void graph_json(struct report_json *json, const struct report_graph *graph)
{
    report_json_begin_object(json, "graph");
    graph_nodes_json(json, graph);
    graph_edges_json(json, graph);
    graph_wait_sets_json(json, graph);
    report_json_end_object(json);
}

/* the snapshot and the setting it was judged with (--stuck-after) */
static void snapshot_header_json(struct report_json *json, const struct hd_snapshot *snapshot,
                                 const struct report_analysis *analysis)
{
    report_json_begin_object(json, "snapshot");
    report_json_double(json, "taken_at", snapshot->taken_at);
    report_json_string(json, "host", snapshot->host);
    report_json_string_or_null(json, "boot_id", snapshot->boot_id[0] ? snapshot->boot_id : NULL);
    report_json_string(json, "kernel", snapshot->kernel);
    report_json_name(json, "arch", hd_arch_name(snapshot->arch));
    report_json_int(json, "samples", snapshot->samples);
    report_json_int(json, "interval_ms", snapshot->interval_ms);
    report_json_double(json, "sampling_s", snapshot->sampling_s);
    report_json_double(json, "stuck_after_s", analysis->stuck_after_s);
    report_json_begin_object(json, "pid_namespace");
    if (snapshot->pid_namespace)
        report_json_int(json, "id", (int64_t)snapshot->pid_namespace);
    else
        report_json_null(json, "id");
    report_json_bool(json, "initial", snapshot->initial_pid_namespace);
    report_json_end_object(json);
    report_json_begin_object(json, "ptrace");
    report_json_bool(json, "used", snapshot->ptrace_used);
    report_json_string_or_null(json, "why_not", snapshot->ptrace_why_not);
    report_json_end_object(json);
    report_json_begin_array(json, "roots");
    for (size_t r = 0; r < snapshot->nroots; r++)
        report_json_int(json, NULL, snapshot->roots[r]);
    report_json_end_array(json);
    report_json_snapshot_inheritance(json, snapshot);
    report_json_end_object(json);
}

static void notes_json(struct report_json *json, const struct hd_snapshot *snapshot)
{
    report_json_begin_array(json, "notes");
    for (size_t n = 0; n < snapshot->nnotes; n++) {
        const struct hd_note *note = &snapshot->notes[n];
        report_json_begin_object(json, NULL);
        report_json_string(json, "kind", hd_note_kind_name(note->kind));
        report_json_pid_or_null(json, "pid", note->pid);
        report_json_pid_or_null(json, "tid", note->tid);
        report_json_string(json, "text", note->text);
        report_json_end_object(json);
    }
    report_json_end_array(json);
}

bool report_render_json(const struct hd_snapshot *snapshot, const struct report_analysis *analysis, FILE *out)
{
    struct report_json *json = malloc(sizeof *json);
    if (!json)
        return false;
    report_json_start(json, out, true);
    report_json_begin_object(json, NULL);
    report_json_name(json, "schema", REPORT_JSON_SCHEMA);
    report_json_name(json, "hangdoc_version", HANGDOC_VERSION);
    snapshot_header_json(json, snapshot, analysis);
    verdict_json(json, analysis);
    report_json_begin_array(json, "findings");
    for (size_t f = 0; f < analysis->nfindings; f++)
        finding_json(json, analysis, &analysis->findings[f]);
    report_json_end_array(json);
    report_json_begin_array(json, "processes");
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        process_json(json, snapshot, &snapshot->processes[p], analysis);
    report_json_end_array(json);
    graph_json(json, &analysis->graph);
    notes_json(json, snapshot);
    report_json_end_object(json);
    bool ok = report_json_finish(json);
    free(json);
    return ok;
}
