/* The JSON report (report.h): one document, schema "hangdoc.report/1" (see the JSON contract in DESIGN.md).
 *
 * Addresses and raw syscall arguments are hex strings: JSON numbers lose precision above 2^53. Target strings are
 * escaped exactly as in the text report, so a value is valid UTF-8 and means the same in both.
 */
#include "report.h"

#include "buffer.h"
#include "describe.h"
#include "json_values.h"
#include "render_inheritance.h"
#include "render_stacks.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

static json_object *state_letter(char state)
{
    char text[2] = { state ? state : '?', '\0' };
    return json_object_new_string(text);
}

static json_object *timeout_object(const struct hd_timeout *timeout)
{
    static const char *const kinds[] = {
        [HD_TIMEOUT_NOT_APPLICABLE] = "not-applicable",
        [HD_TIMEOUT_NONE] = "none",
        [HD_TIMEOUT_FINITE] = "finite",
        [HD_TIMEOUT_UNREADABLE] = "unreadable",
    };
    json_object *object = json_object_new_object();
    json_object_object_add(object, "kind", json_object_new_string(kinds[timeout->kind]));
    if (timeout->kind == HD_TIMEOUT_FINITE) {
        json_object_object_add(object, "remaining_s", json_object_new_double((double)timeout->remaining_ns / 1e9));
        json_object_object_add(object, "absolute", json_object_new_boolean(timeout->absolute));
    }
    return object;
}

static json_object *syscall_object(const struct hd_thread *thread)
{
    const struct hd_syscall *syscall = &thread->syscall;
    static const char *const states[] = {
        [HD_SYSCALL_UNREAD] = "unread",
        [HD_SYSCALL_RUNNING] = "running",
        [HD_SYSCALL_NONE] = "none",
        [HD_SYSCALL_IN] = "in-syscall",
    };
    json_object *object = json_object_new_object();
    json_object_object_add(object, "state", json_object_new_string(states[syscall->state]));
    if (syscall->state != HD_SYSCALL_IN) {
        json_object_object_add(object, "name", NULL);
        json_object_object_add(object, "args", json_object_new_array());
        return object;
    }
    json_object_object_add(object, "nr", json_object_new_int64(syscall->nr));
    json_object_object_add(object, "name", report_json_string_or_null(syscall->name));
    json_object *args = json_object_new_array();
    for (size_t i = 0; i < 6; i++)
        json_object_array_add(args, report_json_hex(syscall->args[i]));
    json_object_object_add(object, "args", args);
    struct report_buffer words = { 0 };
    report_describe_wait(&words, thread);
    json_object_object_add(object, "description", json_object_new_string(words.data ? words.data : ""));
    report_buffer_release(&words);
    return object;
}

static json_object *nullable_pid(pid_t pid)
{
    return pid > 0 ? json_object_new_int(pid) : NULL;
}

static json_object *lock_object(const struct hd_lock *lock)
{
    json_object *object = json_object_new_object();
    json_object_object_add(object, "kind", json_object_new_string(hd_lock_kind_name(lock->kind)));
    if (lock->kind != HD_LOCK_UNKNOWN) {
        json_object_object_add(object, "object_address", report_json_hex(lock->object_address));
        json_object_object_add(object, "type", report_json_string_or_null(lock->type));
        json_object_object_add(object, "robust", json_object_new_boolean(lock->robust));
        json_object_object_add(object, "priority_inheritance", json_object_new_boolean(lock->priority_inheritance));
        json_object_object_add(object, "process_shared", json_object_new_boolean(lock->process_shared));
        json_object_object_add(object, "owner_whereabouts",
                               json_object_new_string(hd_owner_whereabouts_name(lock->owner_whereabouts)));
    } else {
        json_object_object_add(object, "why_unknown", report_json_string_or_null(lock->why_unknown));
    }
    json_object_object_add(object, "word", lock->word_read ? report_json_hex(lock->word) : NULL);
    return object;
}

static json_object *mapping_object(enum hd_mapping_kind kind, const struct hd_mapping *mapping)
{
    json_object *object = json_object_new_object();
    json_object_object_add(object, "kind", json_object_new_string(hd_mapping_kind_name(kind)));
    if (kind != HD_MAPPING_UNKNOWN) {
        json_object_object_add(object, "start", report_json_hex(mapping->start));
        json_object_object_add(object, "end", report_json_hex(mapping->end));
        json_object_object_add(object, "permissions", json_object_new_string(mapping->permissions));
        json_object_object_add(object, "path", report_json_string_or_null(mapping->path));
        json_object_object_add(object, "inode", json_object_new_int64((int64_t)mapping->inode));
    }
    return object;
}

static json_object *wait_fds_array(const struct hd_wait *wait)
{
    json_object *fds = json_object_new_array();
    for (unsigned i = 0; i < wait->nfds_known; i++)
        json_object_array_add(fds, json_object_new_int(wait->fds[i]));
    return fds;
}

static json_object *wait_object(const struct hd_wait *wait)
{
    if (wait->kind == HD_WAIT_NONE)
        return NULL;
    json_object *object = json_object_new_object();
    json_object_object_add(object, "kind", json_object_new_string(hd_wait_kind_name(wait->kind)));
    json_object_object_add(object, "operation", report_json_string_or_null(wait->operation));
    json_object_object_add(object, "timeout", timeout_object(&wait->timeout));
    switch (wait->kind) {
    case HD_WAIT_FUTEX:
        json_object_object_add(object, "address", report_json_hex(wait->address));
        json_object_object_add(object, "private", json_object_new_boolean(wait->futex_private));
        json_object_object_add(object, "expected", json_object_new_int64(wait->expected));
        json_object_object_add(object, "owner_tid", nullable_pid(wait->lock.owner_tid));
        json_object_object_add(object, "owner_pid", nullable_pid(wait->lock.owner_pid));
        json_object_object_add(object, "lock", lock_object(&wait->lock));
        json_object_object_add(object, "mapping", mapping_object(wait->mapping_kind, &wait->mapping));
        break;
    case HD_WAIT_POLL:
        if (wait->fd >= 0)
            json_object_object_add(object, "fd", json_object_new_int(wait->fd));
        else
            json_object_object_add(object, "nfds", json_object_new_int64(wait->nfds));
        break;
    case HD_WAIT_READ:
    case HD_WAIT_WRITE:
    case HD_WAIT_ACCEPT:
    case HD_WAIT_CONNECT:
    case HD_WAIT_LOCK:
        json_object_object_add(object, "fd", json_object_new_int(wait->fd));
        break;
    case HD_WAIT_CHILD: {
        static const char *const selectors[] = {
            [HD_CHILD_ANY] = "any", [HD_CHILD_PID] = "pid", [HD_CHILD_GROUP] = "group", [HD_CHILD_PIDFD] = "pidfd",
        };
        json_object_object_add(object, "children", json_object_new_string(selectors[wait->child_selector]));
        json_object_object_add(object, "pid", json_object_new_int(wait->child));
        break;
    }
    default:
        break;
    }
    if (wait->nfds_known > 0 || wait->kind == HD_WAIT_POLL) {
        json_object_object_add(object, "waits_on_fds", wait_fds_array(wait));
        json_object_object_add(object, "waits_on_fds_truncated", json_object_new_boolean(wait->fds_truncated));
    }
    return object;
}

static json_object *kernel_stack_array(const char *stack)
{
    if (!stack)
        return NULL;
    json_object *lines = json_object_new_array();
    const char *line;
    size_t length;
    while (report_next_line(&stack, &line, &length)) {
        struct report_buffer escaped = { 0 };
        report_buffer_escaped(&escaped, line, length);
        json_object_array_add(lines, json_object_new_string(escaped.data ? escaped.data : ""));
        report_buffer_release(&escaped);
    }
    return lines;
}

static json_object *thread_object(const struct hd_thread *thread)
{
    json_object *object = json_object_new_object();
    json_object_object_add(object, "tid", json_object_new_int(thread->tid));
    json_object_object_add(object, "name", report_json_string(thread->name));
    json_object_object_add(object, "state", state_letter(thread->state));
    json_object_object_add(object, "wchan", thread->wchan[0] ? report_json_string(thread->wchan) : NULL);
    json_object_object_add(object, "syscall", syscall_object(thread));
    json_object_object_add(object, "wait", wait_object(&thread->wait));
    json_object_object_add(object, "blocked_for_s",
                           thread->blocked_for_known ? json_object_new_double(thread->blocked_for_s) : NULL);
    json_object_object_add(object, "progressing", json_object_new_boolean(thread->progressing));
    json_object_object_add(object, "cpu_time_s", json_object_new_double((double)thread->cpu_time_ns / 1e9));
    if (thread->switches_known) {
        json_object_object_add(object, "voluntary_switches", json_object_new_int64((int64_t)thread->voluntary_switches));
        json_object_object_add(object, "involuntary_switches",
                               json_object_new_int64((int64_t)thread->involuntary_switches));
    }
    json_object *samples = json_object_new_object();
    json_object_object_add(samples, "seen", json_object_new_int64(thread->samples_seen));
    json_object_object_add(samples, "in_state_d", json_object_new_int64(thread->samples_in_state_d));
    json_object_object_add(samples, "in_state_r", json_object_new_int64(thread->samples_in_state_r));
    json_object_object_add(samples, "cpu_delta_s", json_object_new_double((double)thread->cpu_delta_ns / 1e9));
    json_object_object_add(samples, "switches_delta", json_object_new_int64((int64_t)thread->switches_delta));
    json_object_object_add(samples, "voluntary_switches_delta",
                           json_object_new_int64((int64_t)thread->voluntary_switches_delta));
    json_object_object_add(samples, "syscall_changed", json_object_new_boolean(thread->syscall_changed));
    json_object_object_add(object, "samples", samples);
    json_object_object_add(object, "kernel_stack", kernel_stack_array(thread->kernel_stack));
    json_object_object_add(object, "frames", report_frames_json(thread));
    json_object_object_add(object, "stack", report_stack_json(thread));
    json_object_object_add(object, "leaf", report_leaf_json(thread));
    json_object_object_add(object, "python_frames", json_object_new_array());
    return object;
}

static json_object *fds_array(const struct hd_process *process, const struct report_catalogue *catalogue)
{
    static const char *const classes[] = {
        [HD_FD_OTHER] = "other", [HD_FD_FILE] = "file", [HD_FD_PIPE] = "pipe",
        [HD_FD_SOCKET] = "socket", [HD_FD_ANON] = "anon",
    };
    static const char *const modes[] = { "read", "write", "read-write" };
    json_object *fds = json_object_new_array();
    for (size_t i = 0; i < process->nfds; i++) {
        const struct hd_fd *fd = &process->fds[i];
        json_object *object = json_object_new_object();
        json_object_object_add(object, "fd", json_object_new_int(fd->fd));
        json_object_object_add(object, "target", report_json_string(fd->target));
        if (fd->inode)
            json_object_object_add(object, "inode", json_object_new_int64((int64_t)fd->inode));
        if (fd->access_mode >= 0 && fd->access_mode <= 2)
            json_object_object_add(object, "access", json_object_new_string(modes[fd->access_mode]));
        json_object_object_add(object, "kind", json_object_new_string(classes[fd->kind]));
        /* class, device, socket_name, runtime and inherited_from */
        report_json_fd_inheritance(object, fd, catalogue);
        json_object_array_add(fds, object);
    }
    return fds;
}

static json_object *process_object(const struct hd_snapshot *snapshot, const struct hd_process *process,
                                   const struct report_catalogue *catalogue)
{
    json_object *object = json_object_new_object();
    json_object_object_add(object, "pid", json_object_new_int(process->pid));
    json_object_object_add(object, "ppid", json_object_new_int(process->ppid));
    json_object_object_add(object, "uid", json_object_new_int64(process->uid));
    json_object_object_add(object, "comm", report_json_string(process->comm));
    json_object *cmdline = json_object_new_array();
    for (size_t i = 0; i < process->argc; i++)
        json_object_array_add(cmdline, report_json_string(process->argv[i]));
    json_object_object_add(object, "cmdline", cmdline);
    json_object_object_add(object, "cmdline_truncated", json_object_new_boolean(process->cmdline_truncated));
    json_object_object_add(object, "exe", report_json_string_or_null(process->exe));
    json_object_object_add(object, "state", state_letter(process->state));
    json_object_object_add(object, "origin", json_object_new_string(hd_origin_name(process->origin)));
    json_object_object_add(object, "origin_basis", json_object_new_string(hd_origin_basis_name(process->origin_basis)));
    json_object_object_add(object, "arch", json_object_new_string(hd_arch_name(process->arch)));
    json_object_object_add(object, "start_time_s", json_object_new_double(process->start_time_s));
    json_object_object_add(object, "age_s", json_object_new_double(process->age_s));
    json_object_object_add(object, "tracer_pid", process->tracer_pid ? json_object_new_int(process->tracer_pid) : NULL);
    json_object_object_add(object, "thread_count", json_object_new_int(process->thread_count));
    json_object_object_add(object, "kernel_thread", json_object_new_boolean(process->kernel_thread));
    json_object_object_add(object, "exit_status", process->zombie ? json_object_new_int(process->exit_status) : NULL);
    json_object_object_add(object, "fds", fds_array(process, catalogue));
    json_object_object_add(object, "stopped_for_s", json_object_new_double(process->stopped_for_s));
    /* libraries, python_role, python_start_method, device_mappings, thread_census */
    report_json_process_inheritance(object, snapshot, process, catalogue);
    json_object *threads = json_object_new_array();
    for (size_t t = 0; t < process->nthreads; t++)
        json_object_array_add(threads, thread_object(&process->threads[t]));
    json_object_object_add(object, "threads", threads);
    return object;
}

static json_object *hang_object(const struct report_analysis *analysis, const struct report_hang *hang)
{
    json_object *object = json_object_new_object();
    json_object_object_add(object, "cause", json_object_new_string(report_cause_name(hang->cause)));
    json_object_object_add(object, "root_cause", hang->root_cause && hang->finding >= 0
                                                     ? json_object_new_string(analysis->findings[hang->finding].id)
                                                     : NULL);
    json_object_object_add(object, "finding", hang->finding >= 0 ? json_object_new_int64(hang->finding) : NULL);
    json_object_object_add(object, "pid", json_object_new_int(hang->pid));
    json_object_object_add(object, "tid", json_object_new_int(hang->tid));
    json_object *chain = json_object_new_array();
    for (size_t i = 0; i < hang->nchain; i++)
        json_object_array_add(chain, json_object_new_int(hang->chain[i]));
    json_object_object_add(object, "chain", chain);
    json_object *findings = json_object_new_array();
    for (size_t i = 0; i < hang->nfindings; i++)
        json_object_array_add(findings, json_object_new_int64((int64_t)hang->findings[i]));
    json_object_object_add(object, "findings", findings);
    return object;
}

static json_object *verdict_object(const struct report_analysis *analysis)
{
    const struct report_verdict *verdict = &analysis->verdict;
    json_object *object = json_object_new_object();
    json_object_object_add(object, "hung", verdict->hung == REPORT_HUNG_UNKNOWN
                                               ? NULL
                                               : json_object_new_boolean(verdict->hung == REPORT_HUNG_YES));
    json_object_object_add(object, "cause", json_object_new_string(report_cause_name(verdict->cause)));
    json_object_object_add(object, "root_cause",
                           verdict->root_cause >= 0
                               ? json_object_new_string(analysis->findings[verdict->root_cause].id)
                               : NULL);
    json_object_object_add(object, "pid", nullable_pid(verdict->pid));
    json_object_object_add(object, "tid", nullable_pid(verdict->tid));
    json_object *chain = json_object_new_array();
    for (size_t i = 0; i < verdict->nchain; i++)
        json_object_array_add(chain, json_object_new_int(verdict->chain[i]));
    json_object_object_add(object, "chain", chain);
    json_object *hangs = json_object_new_array();
    for (size_t h = 0; h < verdict->nhangs; h++)
        json_object_array_add(hangs, hang_object(analysis, &verdict->hangs[h]));
    json_object_object_add(object, "hangs", hangs);
    json_object_object_add(object, "unread_waits", json_object_new_int64((int64_t)verdict->unread_waits));
    return object;
}

static json_object *finding_object(const struct report_analysis *analysis, const struct report_finding *finding)
{
    json_object *object = json_object_new_object();
    json_object_object_add(object, "id", json_object_new_string(finding->id));
    json_object_object_add(object, "confidence", json_object_new_string(report_confidence_name(finding->confidence)));
    json_object_object_add(object, "hang", json_object_new_boolean(finding->hang));
    json_object_object_add(object, "pid", json_object_new_int(finding->pid));
    json_object_object_add(object, "tid", json_object_new_int(finding->tid));
    json_object_object_add(object, "summary", report_json_string(finding->summary));
    json_object *evidence = json_object_new_object();
    for (size_t e = 0; e < finding->nevidence; e++) {
        const char *name = finding->evidence[e].name;
        json_object *existing;
        /* repeated names (the waiters of a cycle, parent waiters) become arrays */
        if (json_object_object_get_ex(evidence, name, &existing)) {
            if (!json_object_is_type(existing, json_type_array)) {
                json_object *array = json_object_new_array();
                json_object_array_add(array, json_object_get(existing));
                json_object_object_add(evidence, name, array);
                existing = array;
            }
            json_object_array_add(existing, report_json_string(finding->evidence[e].value));
        } else {
            json_object_object_add(evidence, name, report_json_string(finding->evidence[e].value));
        }
    }
    json_object_object_add(object, "evidence", evidence);
    json_object *remedies = json_object_new_array();
    for (size_t r = 0; r < finding->nremedies; r++)
        json_object_array_add(remedies, report_json_string(finding->remedies[r]));
    json_object_object_add(object, "remedies", remedies);
    json_object *members = json_object_new_array();
    for (size_t m = 0; m < finding->nmembers; m++) {
        const struct report_node *node = &analysis->graph.nodes[finding->members[m]];
        json_object *member = json_object_new_object();
        json_object_object_add(member, "pid", json_object_new_int(node->process->pid));
        json_object_object_add(member, "tid", json_object_new_int(node->thread->tid));
        json_object_array_add(members, member);
    }
    json_object_object_add(object, "members", members);
    return object;
}

static json_object *graph_object(const struct report_graph *graph)
{
    json_object *object = json_object_new_object();
    json_object *nodes = json_object_new_array();
    for (size_t i = 0; i < graph->nnodes; i++) {
        json_object *node = json_object_new_object();
        json_object_object_add(node, "pid", json_object_new_int(graph->nodes[i].process->pid));
        json_object_object_add(node, "tid", json_object_new_int(graph->nodes[i].thread->tid));
        json_object_object_add(node, "wake", json_object_new_string(report_wake_name(graph->nodes[i].wake)));
        json_object_object_add(node, "asleep_forever", json_object_new_boolean(graph->nodes[i].wake == REPORT_WAKE_NEVER));
        json_object_array_add(nodes, node);
    }
    json_object_object_add(object, "nodes", nodes);
    /* an edge to one thread is an edge; an edge to "any thread of these processes" (an OR-set) is written once
     * per waiter and kind, with the processes, instead of as an edge to each of their threads */
    json_object *edges = json_object_new_array();
    json_object *wait_sets = json_object_new_array();
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        json_object *set = NULL;
        enum report_edge_kind set_kind = REPORT_EDGE_FUTEX;
        for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
            const struct report_edge *edge = &graph->edges[e];
            if (edge->target == REPORT_TO_THREAD) {
                json_object *single = json_object_new_object();
                json_object_object_add(single, "from", json_object_new_int(node->thread->tid));
                json_object_object_add(single, "to", json_object_new_int(graph->nodes[edge->to].thread->tid));
                json_object_object_add(single, "kind", json_object_new_string(report_edge_kind_name(edge->kind)));
                json_object_array_add(edges, single);
                continue;
            }
            if (!set || edge->kind != set_kind) {
                json_object *entry = json_object_new_object();
                json_object_object_add(entry, "from", json_object_new_int(node->thread->tid));
                json_object_object_add(entry, "kind", json_object_new_string(report_edge_kind_name(edge->kind)));
                set = json_object_new_array();
                json_object_object_add(entry, "any_thread_of", set);
                json_object_array_add(wait_sets, entry);
                set_kind = edge->kind;
            }
            json_object_array_add(set, json_object_new_int(graph->processes[edge->to].process->pid));
        }
    }
    json_object_object_add(object, "edges", edges);
    json_object_object_add(object, "wait_sets", wait_sets);
    return object;
}

static json_object *snapshot_header(const struct hd_snapshot *snapshot)
{
    json_object *header = json_object_new_object();
    json_object_object_add(header, "taken_at", json_object_new_double(snapshot->taken_at));
    json_object_object_add(header, "host", report_json_string(snapshot->host));
    json_object_object_add(header, "kernel", report_json_string(snapshot->kernel));
    json_object_object_add(header, "arch", json_object_new_string(hd_arch_name(snapshot->arch)));
    json_object_object_add(header, "samples", json_object_new_int64(snapshot->samples));
    json_object_object_add(header, "interval_ms", json_object_new_int64(snapshot->interval_ms));
    json_object_object_add(header, "sampling_s", json_object_new_double(snapshot->sampling_s));
    json_object *ptrace = json_object_new_object();
    json_object_object_add(ptrace, "used", json_object_new_boolean(snapshot->ptrace_used));
    json_object_object_add(ptrace, "why_not", report_json_string_or_null(snapshot->ptrace_why_not));
    json_object_object_add(header, "ptrace", ptrace);
    json_object *roots = json_object_new_array();
    for (size_t r = 0; r < snapshot->nroots; r++)
        json_object_array_add(roots, json_object_new_int(snapshot->roots[r]));
    json_object_object_add(header, "roots", roots);
    report_json_snapshot_inheritance(header, snapshot);
    return header;
}

static json_object *notes_array(const struct hd_snapshot *snapshot)
{
    json_object *notes = json_object_new_array();
    for (size_t n = 0; n < snapshot->nnotes; n++) {
        const struct hd_note *note = &snapshot->notes[n];
        json_object *object = json_object_new_object();
        json_object_object_add(object, "pid", note->pid ? json_object_new_int(note->pid) : NULL);
        json_object_object_add(object, "tid", note->tid ? json_object_new_int(note->tid) : NULL);
        json_object_object_add(object, "text", report_json_string(note->text));
        json_object_array_add(notes, object);
    }
    return notes;
}

bool report_render_json(const struct hd_snapshot *snapshot, const struct report_analysis *analysis, FILE *out)
{
    json_object *document = json_object_new_object();
    if (!document)
        return false;
    json_object_object_add(document, "schema", json_object_new_string(REPORT_JSON_SCHEMA));
    json_object_object_add(document, "hangdoc_version", json_object_new_string(HANGDOC_VERSION));
    json_object_object_add(document, "snapshot", snapshot_header(snapshot));
    json_object_object_add(document, "verdict", verdict_object(analysis));
    json_object *findings = json_object_new_array();
    for (size_t f = 0; f < analysis->nfindings; f++)
        json_object_array_add(findings, finding_object(analysis, &analysis->findings[f]));
    json_object_object_add(document, "findings", findings);
    json_object *processes = json_object_new_array();
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        json_object_array_add(processes, process_object(snapshot, &snapshot->processes[p], analysis->catalogue));
    json_object_object_add(document, "processes", processes);
    json_object_object_add(document, "graph", graph_object(&analysis->graph));
    json_object_object_add(document, "notes", notes_array(snapshot));
    const char *text = json_object_to_json_string_ext(document, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    bool ok = text && fputs(text, out) >= 0 && fputc('\n', out) != EOF && fflush(out) == 0;
    json_object_put(document);
    return ok;
}
