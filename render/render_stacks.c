/* Grouped native stacks in text, and stacks in JSON (render_stacks.h). */
#include "render_stacks.h"

#include "json_writer.h"
#include "signals.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIDS_SHOWN_MAX 16 /* threads listed under a group; the count says how many there are */
#define NAMES_SHOWN_MAX 4

struct member {
    const struct hd_process *process;
    const struct hd_thread *thread;
};

struct stack_group {
    const struct hd_thread *representative;
    uint64_t hash;
    size_t order; /* of first appearance in the tree */
    struct member *members;
    size_t nmembers;
    size_t capacity;
};

static uint64_t mix(uint64_t hash, uint64_t value)
{
    return (hash ^ value) * 0x100000001b3ull;
}

static uint64_t text_hash(uint64_t hash, const char *text)
{
    for (; text && *text; text++)
        hash = mix(hash, (unsigned char)*text);
    return mix(hash, 0xff);
}

/* Two threads share a stack when every frame names the same place: the same module and offset (addresses differ
 * between processes), or a stack that was not taken for the same reason. */
static uint64_t stack_hash(const struct hd_thread *thread)
{
    uint64_t hash = mix(0xcbf29ce484222325ull, thread->stack.state);
    for (size_t f = 0; f < thread->npython_frames; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        hash = mix(text_hash(text_hash(hash, frame->function), frame->file), (uint64_t)frame->line);
    }
    if (thread->stack.state != HD_STACK_TAKEN)
        return text_hash(hash, thread->stack.why_not);
    for (size_t f = 0; f < thread->stack.nframes; f++) {
        const struct hd_frame *frame = &thread->stack.frames[f];
        hash = text_hash(hash, frame->module ? hd_basename(frame->module) : "");
        hash = mix(hash, frame->module ? frame->module_offset : frame->pc);
    }
    return hash;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_python_stack(const struct hd_thread *a, const struct hd_thread *b)
{
    if (a->npython_frames != b->npython_frames || a->python_truncated != b->python_truncated)
        return false;
    for (size_t f = 0; f < a->npython_frames; f++) {
        const struct hd_python_frame *x = &a->python_frames[f], *y = &b->python_frames[f];
        if (x->line != y->line || x->entry != y->entry || !same_text(x->function, y->function) ||
            !same_text(x->file, y->file))
            return false;
    }
    return true;
}

/* Identical Python stacks over identical native ones: threads whose Python lines differ are told apart. */
static bool same_stack(const struct hd_thread *a, const struct hd_thread *b)
{
    if (a->stack.state != b->stack.state || a->stack.nframes != b->stack.nframes || !same_python_stack(a, b))
        return false;
    if (a->stack.state != HD_STACK_TAKEN)
        return same_text(a->stack.why_not, b->stack.why_not);
    for (size_t f = 0; f < a->stack.nframes; f++) {
        const struct hd_frame *x = &a->stack.frames[f], *y = &b->stack.frames[f];
        if (!same_text(x->module, y->module) || !same_text(x->symbol, y->symbol))
            return false;
        if (x->module ? x->module_offset != y->module_offset : x->pc != y->pc)
            return false;
    }
    return true;
}

static bool add_member(struct stack_group *group, const struct hd_process *process, const struct hd_thread *thread)
{
    if (group->nmembers == group->capacity) {
        size_t capacity = group->capacity ? group->capacity * 2 : 4;
        struct member *grown = reallocarray(group->members, capacity, sizeof *grown);
        if (!grown)
            return false;
        group->members = grown;
        group->capacity = capacity;
    }
    group->members[group->nmembers++] = (struct member){ process, thread };
    return true;
}

/* The group of `thread`'s stack, found through an open-addressed table of group indexes (`slots`, a power of two
 * long, each slot 0 or 1 + a group index) so that ten thousand distinct stacks cost no more than ten thousand
 * lookups; a new group when none has it. NULL when memory ran out. */
static struct stack_group *group_for(struct stack_group **groups, size_t *count, size_t *capacity, size_t *slots,
                                     size_t nslots, const struct hd_thread *thread)
{
    uint64_t hash = stack_hash(thread);
    size_t slot = (size_t)hash & (nslots - 1);
    for (; slots[slot]; slot = (slot + 1) & (nslots - 1)) {
        struct stack_group *group = &(*groups)[slots[slot] - 1];
        if (group->hash == hash && same_stack(group->representative, thread))
            return group;
    }
    if (*count == *capacity) {
        size_t grown_capacity = *capacity ? *capacity * 2 : 16;
        struct stack_group *grown = reallocarray(*groups, grown_capacity, sizeof *grown);
        if (!grown)
            return NULL;
        *groups = grown;
        *capacity = grown_capacity;
    }
    (*groups)[*count] = (struct stack_group){ .representative = thread, .hash = hash, .order = *count };
    slots[slot] = ++*count;
    return &(*groups)[*count - 1];
}

/* Groups every thread that has a stack or a reason for lacking one; NULL with *count 0 when there is none. */
static struct stack_group *group_stacks(const struct hd_snapshot *snapshot, size_t *count, bool *failed)
{
    struct stack_group *groups = NULL;
    size_t capacity = 0, threads = 0, nslots = 16;
    *count = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        threads += snapshot->processes[p].nthreads;
    while (nslots < 2 * threads) /* at most half full: every thread may have a stack of its own */
        nslots *= 2;
    size_t *slots cleanup_free = calloc(nslots, sizeof *slots);
    if (!slots) {
        *failed = true;
        return NULL;
    }
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        for (size_t t = 0; t < process->nthreads; t++) {
            const struct hd_thread *thread = &process->threads[t];
            if (thread->stack.state == HD_STACK_NOT_TAKEN && !thread->stack.why_not && thread->npython_frames == 0)
                continue;
            struct stack_group *group = group_for(&groups, count, &capacity, slots, nslots, thread);
            if (!group || !add_member(group, process, thread)) {
                *failed = true;
                return groups;
            }
        }
    }
    return groups;
}

/* A stack with frames to show: a native one taken, or a Python one read. */
static bool has_frames(const struct hd_thread *thread)
{
    return thread->stack.state == HD_STACK_TAKEN || thread->npython_frames > 0;
}

/* Stacks with frames first, the biggest groups first; ties keep the tree order. */
static int compare_groups(const void *a, const void *b)
{
    const struct stack_group *x = a, *y = b;
    bool x_taken = has_frames(x->representative);
    bool y_taken = has_frames(y->representative);
    if (x_taken != y_taken)
        return x_taken ? -1 : 1;
    if (x->nmembers != y->nmembers)
        return x->nmembers > y->nmembers ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Members join their group in tree order, so the threads of one process are next to each other. */
static size_t distinct_processes(const struct stack_group *group)
{
    size_t count = 0;
    for (size_t m = 0; m < group->nmembers; m++)
        count += m == 0 || group->members[m].process != group->members[m - 1].process;
    return count;
}

static void render_names(struct report_buffer *out, const struct stack_group *group)
{
    const char *shown_names[NAMES_SHOWN_MAX];
    size_t shown = 0;
    for (size_t m = 0; m < group->nmembers && shown <= NAMES_SHOWN_MAX; m++) {
        /* every earlier member's name was shown (or the loop ended): compare with the shown ones alone */
        const char *name = group->members[m].thread->name;
        bool seen = false;
        for (size_t n = 0; n < shown && !seen; n++)
            seen = strcmp(shown_names[n], name) == 0;
        if (seen)
            continue;
        if (shown == NAMES_SHOWN_MAX) {
            report_buffer_puts(out, ", …");
            break;
        }
        shown_names[shown] = name;
        report_buffer_puts(out, shown++ ? ", '" : " named '");
        report_buffer_escaped(out, name, strlen(name));
        report_buffer_puts(out, "'");
    }
}

/* "×16 threads in 8 processes named 'worker': 100/101 100/102 …": pid/tid, or tids alone in one process. */
static void render_members(struct report_buffer *out, const struct stack_group *group)
{
    size_t processes = distinct_processes(group);
    report_buffer_printf(out, "×%zu thread%s", group->nmembers, group->nmembers == 1 ? "" : "s");
    if (processes > 1)
        report_buffer_printf(out, " in %zu processes", processes);
    render_names(out, group);
    if (processes == 1)
        report_buffer_printf(out, ": process %d, thread%s", (int)group->members[0].process->pid,
                             group->nmembers == 1 ? "" : "s");
    else
        report_buffer_puts(out, ": pid/tid");
    for (size_t m = 0; m < group->nmembers && m < TIDS_SHOWN_MAX; m++) {
        const struct member *member = &group->members[m];
        if (processes == 1)
            report_buffer_printf(out, " %d", (int)member->thread->tid);
        else
            report_buffer_printf(out, " %d/%d", (int)member->process->pid, (int)member->thread->tid);
    }
    if (group->nmembers > TIDS_SHOWN_MAX)
        report_buffer_printf(out, " and %zu more", group->nmembers - TIDS_SHOWN_MAX);
    report_buffer_puts(out, "\n");
}

/* Anonymous memory that may hold code: no path, or a memfd or named anonymous region (a JIT's double mapping). */
static bool anonymous_executable(const struct hd_mapping *mapping)
{
    bool anonymous = !mapping->path || strncmp(mapping->path, "/memfd:", 7) == 0 ||
                     strncmp(mapping->path, "[anon:", 6) == 0;
    return anonymous && mapping->permissions[2] == 'x';
}

static bool maps_a_library(const struct hd_process *process, const char *name)
{
    for (size_t m = 0; process && m < process->nmappings; m++)
        if (process->mappings[m].path && strncmp(hd_basename(process->mappings[m].path), name, strlen(name)) == 0)
            return true;
    return false;
}

static bool runs_v8(const struct hd_thread *thread)
{
    for (size_t f = 0; f < thread->stack.nframes; f++) {
        const char *symbol = thread->stack.frames[f].symbol;
        if (symbol && (strncmp(symbol, "Builtins_", 9) == 0 || strncmp(symbol, "v8::", 4) == 0))
            return true;
    }
    return false;
}

/* What lies at a pc that no file backs: a JIT's code (a JVM's, V8's, or another's) in anonymous executable memory,
 * which no symbol table names, or nothing known. */
static const char *unfiled_code(const struct hd_process *process, const struct hd_thread *thread, uint64_t pc)
{
    const struct hd_mapping *mapping =
        process ? hd_mappings_find(process->mappings, process->nmappings, pc) : NULL;
    if (!mapping || !anonymous_executable(mapping))
        return "no file mapped there";
    if (maps_a_library(process, "libjvm.so"))
        return "JIT code: the JVM's, in anonymous executable memory";
    if (runs_v8(thread))
        return "JIT code: V8's, in anonymous executable memory";
    return "JIT or generated code, in anonymous executable memory";
}

static void render_frame(struct report_buffer *out, size_t index, const struct hd_frame *frame,
                         const struct hd_process *process, const struct hd_thread *thread)
{
    report_buffer_printf(out, "    #%-2zu ", index);
    if (frame->symbol) {
        report_buffer_escaped(out, frame->symbol, strlen(frame->symbol));
        report_buffer_printf(out, "+0x%" PRIx64, frame->symbol_offset);
        if (frame->module) {
            const char *name = hd_basename(frame->module);
            report_buffer_puts(out, " (");
            report_buffer_escaped(out, name, strlen(name));
            report_buffer_puts(out, ")");
        }
    } else if (frame->module) {
        const char *name = hd_basename(frame->module);
        report_buffer_escaped(out, name, strlen(name));
        report_buffer_printf(out, "+0x%" PRIx64, frame->module_offset);
        if (frame->called_as) {
            report_buffer_puts(out, " (in a call to ");
            report_buffer_escaped(out, frame->called_as, strlen(frame->called_as));
            report_buffer_puts(out, ")");
        }
    } else {
        report_buffer_printf(out, "0x%" PRIx64 " (%s)", frame->pc, unfiled_code(process, thread, frame->pc));
    }
    if (frame->signal_frame) {
        /* as gdb says it: the frames above are a handler's, the ones below were interrupted */
        const char *abbreviation = report_signal_abbreviation(frame->signal_number);
        if (abbreviation)
            report_buffer_printf(out, " <signal handler called: SIG%s>", abbreviation);
        else if (frame->signal_number > 0)
            report_buffer_printf(out, " <signal handler called: signal %d>", frame->signal_number);
        else
            report_buffer_puts(out, " <signal handler called>");
    }
    report_buffer_puts(out, "\n");
}

static void render_python_frame(struct report_buffer *out, size_t index, const struct hd_python_frame *frame)
{
    report_buffer_printf(out, "    #%-2zu py ", index);
    report_buffer_escaped(out, frame->function ? frame->function : "?", frame->function ? strlen(frame->function) : 1);
    report_buffer_puts(out, " (");
    report_buffer_escaped(out, frame->file ? frame->file : "?", frame->file ? strlen(frame->file) : 1);
    if (frame->line > 0)
        report_buffer_printf(out, ":%d", frame->line);
    report_buffer_puts(out, ")\n");
}

/* Does the native frame run CPython's eval loop? One call of it runs the Python frames up to the next entry frame:
 * those are shown in its place, as py-spy --native does. */
static bool runs_eval_loop(const struct hd_frame *frame)
{
    static const char *const eval_loops[] = { "_PyEval_EvalFrameDefault", "_PyEval_EvalFrame", "PyEval_EvalFrameEx" };
    for (size_t i = 0; frame->symbol && i < COUNT(eval_loops); i++)
        if (strcmp(frame->symbol, eval_loops[i]) == 0)
            return true;
    return false;
}

/* The Python frames of one run of the eval loop, from `*next` up to its entry frame; returns the next index. */
static size_t render_python_run(struct report_buffer *out, size_t *index, const struct hd_thread *thread,
                                size_t next)
{
    for (; next < thread->npython_frames; next++) {
        render_python_frame(out, (*index)++, &thread->python_frames[next]);
        if (thread->python_frames[next].entry)
            return next + 1;
    }
    return next;
}

/* The native frames with the Python ones in place of the eval loop's frames; Python frames that found no eval
 * frame (a stack not taken, stripped symbols) are listed after it, and said to be so. */
static void render_mixed_frames(struct report_buffer *out, const struct hd_process *process,
                                const struct hd_thread *thread)
{
    const struct hd_stack *stack = &thread->stack;
    size_t index = 0, next_python = 0;
    bool taken = stack->state == HD_STACK_TAKEN;
    for (size_t f = 0; taken && f < stack->nframes; f++) {
        if (next_python < thread->npython_frames && runs_eval_loop(&stack->frames[f]))
            next_python = render_python_run(out, &index, thread, next_python);
        else
            render_frame(out, index++, &stack->frames[f], process, thread);
    }
    if (next_python < thread->npython_frames) {
        if (taken && stack->nframes > 0)
            report_buffer_puts(out, "    python frames not placed in the native stack:\n");
        while (next_python < thread->npython_frames)
            render_python_frame(out, index++, &thread->python_frames[next_python++]);
    }
    if (thread->python_truncated)
        report_buffer_puts(out, "    … python stack cut short\n");
}

static void render_group(struct report_buffer *out, size_t number, const struct stack_group *group)
{
    const struct hd_thread *thread = group->representative;
    const struct hd_process *process = group->nmembers ? group->members[0].process : NULL;
    const struct hd_stack *stack = &thread->stack;
    report_buffer_printf(out, "\nstack %zu · ", number);
    render_members(out, group);
    if (stack->state != HD_STACK_TAKEN) {
        if (stack->why_not || stack->state == HD_STACK_FAILED) {
            report_buffer_puts(out, stack->state == HD_STACK_FAILED ? "    not taken: " : "    not attempted: ");
            report_buffer_escaped(out, stack->why_not ? stack->why_not : "",
                                  stack->why_not ? strlen(stack->why_not) : 0);
            report_buffer_puts(out, "\n");
        }
        render_mixed_frames(out, process, thread);
        return;
    }
    render_mixed_frames(out, process, thread);
    if (stack->nframes == 0)
        report_buffer_puts(out, "    (no frame could be read)\n");
    if (stack->why_not) {
        report_buffer_printf(out, "    %s", stack->truncated ? "… cut short: " : "(stops here: ");
        report_buffer_escaped(out, stack->why_not, strlen(stack->why_not));
        report_buffer_puts(out, stack->truncated ? "\n" : ")\n");
    }
}

static void render_stopped_time(struct report_buffer *out, const struct hd_snapshot *snapshot)
{
    double total = 0, longest = 0;
    size_t stopped = 0, unstopped = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        double seconds = process->stopped_for_s;
        total += seconds;
        longest = seconds > longest ? seconds : longest;
        stopped += seconds > 0;
        bool read_unstopped = false;
        for (size_t t = 0; t < process->nthreads && !read_unstopped; t++)
            read_unstopped = process->threads[t].stack.unstopped;
        unstopped += read_unstopped;
    }
    char without[128] = "";
    if (unstopped > 0)
        snprintf(without, sizeof without, "%s%zu process%s read without stopping (the notes say why)",
                 stopped ? ", " : "", unstopped, unstopped == 1 ? "" : "es");
    if (!snapshot->ptrace_used && stopped == 0 && unstopped == 0) { /* stacks no process was stopped for: a core's */
        report_buffer_puts(out, "\nnative stacks (from the registers and memory the core files kept; identical "
                                "stacks shown once):\n");
        return;
    }
    if (stopped == 0) {
        report_buffer_printf(out, "\nnative stacks (%s; identical stacks shown once):\n", without);
        return;
    }
    report_buffer_printf(out, "\nnative stacks (%zu process%s stopped for %.1f ms in all, %.1f ms at most each%s; "
                              "identical stacks shown once):\n",
                         stopped, stopped == 1 ? "" : "es", total * 1e3, longest * 1e3, without);
}

struct report_stack_groups {
    struct stack_group *groups; /* in the order the section shows them */
    size_t count;
    struct member *numbered;    /* every member, sorted by thread address, for report_stack_group_number() */
    size_t *numbers;
    size_t nnumbered;
    bool failed;
};

static int compare_members(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Every grouped thread with its group's number, findable by the thread's address. */
static void number_members(struct report_stack_groups *result)
{
    size_t total = 0;
    for (size_t g = 0; g < result->count; g++)
        total += result->groups[g].nmembers;
    result->numbered = calloc(total ? total : 1, sizeof *result->numbered);
    result->numbers = calloc(total ? total : 1, sizeof *result->numbers);
    if (!result->numbered || !result->numbers) {
        result->failed = true;
        return;
    }
    for (size_t g = 0; g < result->count; g++)
        for (size_t m = 0; m < result->groups[g].nmembers; m++)
            result->numbered[result->nnumbered++] = result->groups[g].members[m];
    qsort(result->numbered, result->nnumbered, sizeof *result->numbered, compare_members);
    for (size_t g = 0; g < result->count; g++)
        for (size_t m = 0; m < result->groups[g].nmembers; m++) {
            const struct member *found = bsearch(&result->groups[g].members[m], result->numbered, result->nnumbered,
                                                 sizeof *result->numbered, compare_members);
            result->numbers[found - result->numbered] = g + 1;
        }
}

struct report_stack_groups *report_stack_groups_new(const struct hd_snapshot *snapshot)
{
    struct report_stack_groups *result = calloc(1, sizeof *result);
    if (!result)
        return NULL;
    result->groups = group_stacks(snapshot, &result->count, &result->failed);
    if (result->count > 1)
        qsort(result->groups, result->count, sizeof *result->groups, compare_groups);
    number_members(result);
    return result;
}

void report_stack_groups_free(struct report_stack_groups *groups)
{
    if (!groups)
        return;
    for (size_t g = 0; g < groups->count; g++)
        free(groups->groups[g].members);
    free(groups->groups);
    free(groups->numbered);
    free(groups->numbers);
    free(groups);
}

size_t report_stack_group_number(const struct report_stack_groups *groups, const struct hd_thread *thread)
{
    if (!groups || !groups->numbers || !has_frames(thread))
        return 0;
    struct member key = { .thread = thread };
    const struct member *found =
        groups->nnumbered ? bsearch(&key, groups->numbered, groups->nnumbered, sizeof *groups->numbered, compare_members)
                          : NULL;
    return found ? groups->numbers[found - groups->numbered] : 0;
}

void report_render_stack_groups(struct report_buffer *out, const struct hd_snapshot *snapshot,
                                const struct report_stack_groups *groups)
{
    if (!groups) {
        out->failed = true;
        return;
    }
    if (groups->failed)
        out->failed = true;
    if (groups->count == 0)
        return;
    render_stopped_time(out, snapshot);
    for (size_t g = 0; g < groups->count; g++)
        render_group(out, g + 1, &groups->groups[g]);
}

void report_render_stacks(struct report_buffer *out, const struct hd_snapshot *snapshot)
{
    struct report_stack_groups *groups = report_stack_groups_new(snapshot);
    report_render_stack_groups(out, snapshot, groups);
    report_stack_groups_free(groups);
}

/* ---- JSON -------------------------------------------------------------------------------------------------- */

void report_frames_json(struct report_json *json, const char *key, const struct hd_thread *thread)
{
    bool taken = thread->stack.state == HD_STACK_TAKEN;
    report_frame_array_json(json, key, thread->stack.frames, taken ? thread->stack.nframes : 0);
}

void report_frame_array_json(struct report_json *json, const char *key, const struct hd_frame *frames,
                             size_t nframes)
{
    report_json_begin_array(json, key);
    for (size_t f = 0; f < nframes; f++) {
        const struct hd_frame *frame = &frames[f];
        report_json_begin_object(json, NULL);
        report_json_hex(json, "pc", frame->pc);
        report_json_string_or_null(json, "module", frame->module);
        report_json_string_or_null(json, "symbol", frame->symbol);
        if (frame->symbol)
            report_json_hex(json, "offset", frame->symbol_offset);
        else if (frame->module)
            report_json_hex(json, "offset", frame->module_offset);
        else
            report_json_null(json, "offset");
        if (frame->module)
            report_json_hex(json, "module_offset", frame->module_offset);
        else
            report_json_null(json, "module_offset");
        if (frame->called_as)
            report_json_string(json, "called_as", frame->called_as);
        if (frame->signal_frame) {
            report_json_bool(json, "signal_frame", true);
            char name[16];
            const char *abbreviation = report_signal_abbreviation(frame->signal_number);
            snprintf(name, sizeof name, "SIG%s", abbreviation ? abbreviation : "?");
            if (abbreviation)
                report_json_string(json, "signal", name);
            else if (frame->signal_number > 0)
                report_json_int(json, "signal", frame->signal_number);
            else
                report_json_null(json, "signal");
        }
        report_json_end_object(json);
    }
    report_json_end_array(json);
}

void report_stack_json(struct report_json *json, const char *key, const struct hd_thread *thread)
{
    static const char *const states[] = {
        [HD_STACK_NOT_TAKEN] = "not-taken", [HD_STACK_TAKEN] = "taken", [HD_STACK_FAILED] = "failed" };
    report_json_begin_object(json, key);
    report_json_name(json, "state", states[thread->stack.state]);
    report_json_bool(json, "truncated", thread->stack.truncated);
    if (thread->stack.unstopped)
        report_json_bool(json, "unstopped", true);
    report_json_string_or_null(json, "why_not", thread->stack.why_not);
    report_json_end_object(json);
}

void report_leaf_json(struct report_json *json, const char *key, const struct report_history *history)
{
    if (history->leaf_samples == 0) {
        report_json_null(json, key);
        return;
    }
    report_json_begin_object(json, key);
    report_json_int(json, "samples", history->leaf_samples);
    report_json_bool(json, "same", history->leaf_same);
    report_json_string_or_null(json, "function", history->leaf_function);
    report_json_end_object(json);
}
