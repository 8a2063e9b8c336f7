/* What one report says of each rank it shows (merge.h, merge_model.h): read from the parsed document once, kept as
 * small observations, so that the document can be freed before the next is parsed.
 *
 * Reports are hostile input: every value is checked for its type and a wrong one is treated as absent; a document
 * whose top level is not a hangdoc.report/2 report is left out with a note.
 */
#include "merge_model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_SCHEMA_ACCEPTED "hangdoc.report/2"

/* ---- small helpers the merge's modules share ---- */

bool report_merge_grow(void **items, size_t *capacity, size_t count, size_t item_size)
{
    if (count < *capacity)
        return true;
    size_t grown_capacity = *capacity ? *capacity * 2 : 8;
    void *grown = realloc(*items, grown_capacity * item_size);
    if (!grown)
        return false;
    *items = grown;
    *capacity = grown_capacity;
    return true;
}

char *report_merge_strdup(const char *text, bool *failed)
{
    if (!text)
        return NULL;
    char *copy = strdup(text);
    if (!copy)
        *failed = true;
    return copy;
}

bool report_merge_add_note(struct report_merge *merge, const char *source, const char *format, ...)
{
    if (!report_merge_grow((void **)&merge->notes, &merge->notes_capacity, merge->nnotes, sizeof *merge->notes))
        return false;
    va_list args;
    va_start(args, format);
    char *text cleanup_free = NULL;
    if (vasprintf(&text, format, args) < 0)
        text = NULL; /* what a failed vasprintf leaves there is undefined: nothing for the cleanup to free */
    va_end(args);
    bool failed = !text;
    char *source_copy cleanup_free = report_merge_strdup(source, &failed);
    if (failed)
        return false;
    merge->notes[merge->nnotes++] =
        (struct report_merge_note){ .source = steal_pointer(&source_copy), .text = steal_pointer(&text) };
    return true;
}

/* ---- typed reads: a value of another type is absent ---- */

static json_object *member(json_object *object, const char *key)
{
    json_object *value = NULL;
    if (!json_object_is_type(object, json_type_object) || !json_object_object_get_ex(object, key, &value))
        return NULL;
    return value;
}

static const char *string_member(json_object *object, const char *key)
{
    json_object *value = member(object, key);
    return json_object_is_type(value, json_type_string) ? json_object_get_string(value) : NULL;
}

static bool integer_member(json_object *object, const char *key, int64_t minimum, int64_t maximum, int64_t *out)
{
    json_object *value = member(object, key);
    if (!json_object_is_type(value, json_type_int))
        return false;
    int64_t number = json_object_get_int64(value);
    if (number < minimum || number > maximum)
        return false;
    *out = number;
    return true;
}

static pid_t pid_member(json_object *object, const char *key)
{
    int64_t pid = 0;
    return integer_member(object, key, 1, INT32_MAX, &pid) ? (pid_t)pid : 0;
}

static int count_member(json_object *object, const char *key)
{
    int64_t count = -1;
    return integer_member(object, key, 0, INT32_MAX, &count) ? (int)count : -1;
}

static size_t array_length(json_object *array)
{
    return json_object_is_type(array, json_type_array) ? json_object_array_length(array) : 0;
}

static enum report_hung hung_member(json_object *object, const char *key)
{
    json_object *value = member(object, key);
    if (!json_object_is_type(value, json_type_boolean))
        return REPORT_HUNG_UNKNOWN;
    return json_object_get_boolean(value) ? REPORT_HUNG_YES : REPORT_HUNG_NO;
}

static enum report_cause cause_named(const char *name)
{
    for (int cause = 0; name && cause < REPORT_CAUSES; cause++)
        if (strcmp(report_cause_name((enum report_cause)cause), name) == 0)
            return (enum report_cause)cause;
    return REPORT_CAUSE_UNKNOWN;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* ---- the main thread's stack as labels ---- */

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}

/* A Python frame as "function (file.py:line)": the file's base name only, since the same code lies under different
 * paths on different hosts (a virtual environment per user, a container per node). */
static char *python_label(json_object *frame)
{
    const char *function = string_member(frame, "function");
    const char *file = base_name(string_member(frame, "file"));
    int64_t line = 0;
    integer_member(frame, "line", 1, INT32_MAX, &line);
    char *label = NULL;
    int length = line > 0 ? asprintf(&label, "%s (%s:%lld)", function ? function : "?", file ? file : "?",
                                     (long long)line)
                          : asprintf(&label, "%s (%s)", function ? function : "?", file ? file : "?");
    return length < 0 ? NULL : label;
}

/* A native frame by its function's name, or its module's when no symbol covers it; never its address. */
static char *native_label(json_object *frame)
{
    const char *symbol = string_member(frame, "symbol");
    const char *module = base_name(string_member(frame, "module"));
    return strdup(symbol && *symbol ? symbol : module && *module ? module : "??");
}

static json_object *main_thread(json_object *process, pid_t pid)
{
    json_object *threads = member(process, "threads");
    for (size_t t = 0; t < array_length(threads); t++) {
        json_object *thread = json_object_array_get_idx(threads, t);
        if (pid_member(thread, "tid") == pid)
            return thread;
    }
    return NULL;
}

/* A stack that could not be read still has a leaf, so that its ranks land in the tree. */
static bool placeholder_stack(struct report_merge_observation *observation, json_object *thread)
{
    const char *syscall = string_member(member(thread, "syscall"), "name");
    char *label cleanup_free = NULL;
    int length = !thread ? asprintf(&label, "(no main thread in the report)")
                 : syscall ? asprintf(&label, "(no stack; in %s)", syscall)
                           : asprintf(&label, "(no stack)");
    if (length < 0)
        label = NULL; /* what a failed asprintf leaves there is undefined: nothing for the cleanup to free */
    observation->stack = length < 0 ? NULL : malloc(sizeof *observation->stack);
    if (!observation->stack)
        return false;
    observation->stack[0] = steal_pointer(&label);
    observation->nstack = 1;
    return true;
}

/* The frames of `thread`, outermost first, and the innermost known wait among them. */
static bool read_stack(struct report_merge_observation *observation, json_object *thread)
{
    json_object *frames = member(thread, "python_frames");
    observation->python = array_length(frames) > 0;
    if (!observation->python)
        frames = member(thread, "frames");
    size_t total = array_length(frames);
    if (total == 0)
        return placeholder_stack(observation, thread);
    size_t kept = total > REPORT_MERGE_FRAMES_MAX ? REPORT_MERGE_FRAMES_MAX - 1 : total;
    size_t slots = kept + (kept < total);
    observation->stack = calloc(slots, sizeof *observation->stack);
    const char **functions = calloc(kept, sizeof *functions), **files = calloc(kept, sizeof *files);
    bool ok = observation->stack && functions && files;
    /* the report lists frames innermost first; the tree wants them outermost first */
    for (size_t i = 0; ok && i < kept; i++) {
        json_object *frame = json_object_array_get_idx(frames, i);
        char *label = observation->python ? python_label(frame) : native_label(frame);
        observation->stack[slots - 1 - i] = label;
        functions[i] = observation->python ? string_member(frame, "function") : string_member(frame, "symbol");
        files[i] = observation->python ? string_member(frame, "file") : NULL;
        ok = label != NULL;
    }
    if (ok && kept < total)
        ok = asprintf(&observation->stack[0], "(… %zu outer frames)", total - kept) >= 0;
    if (observation->stack)
        observation->nstack = slots;
    size_t inner = 0;
    if (ok)
        observation->wait = report_find_named_wait(functions, files, kept, &inner);
    observation->wait_frame = slots - 1 - inner;
    free(functions);
    free(files);
    return ok;
}

/* ---- the rank's local verdict ---- */

struct rank_processes {
    pid_t rank_pid;
    pid_t *pids; /* the rank's process and its workers */
    size_t npids;
};

static bool holds_pid(const struct rank_processes *processes, pid_t pid)
{
    for (size_t i = 0; i < processes->npids; i++)
        if (processes->pids[i] == pid)
            return true;
    return false;
}

static bool chain_holds(json_object *hang, pid_t pid)
{
    json_object *chain = member(hang, "chain");
    for (size_t i = 0; i < array_length(chain); i++) {
        json_object *link = json_object_array_get_idx(chain, i);
        if (json_object_is_type(link, json_type_int) && json_object_get_int64(link) == pid)
            return true;
    }
    return false;
}

/* The verdict a hang of the report gives: its cause, and its finding's id, summary and first remedy. */
static bool read_hang(json_object *document, json_object *hang, struct report_merge_local_verdict *verdict)
{
    verdict->hung = REPORT_HUNG_YES;
    verdict->cause = cause_named(string_member(hang, "cause"));
    verdict->pid = pid_member(hang, "pid");
    verdict->tid = pid_member(hang, "tid");
    json_object *findings = member(document, "findings");
    int64_t index = -1;
    json_object *finding = integer_member(hang, "finding", 0, (int64_t)array_length(findings) - 1, &index)
                               ? json_object_array_get_idx(findings, (size_t)index) : NULL;
    json_object *remedies = member(finding, "remedies");
    json_object *remedy = array_length(remedies) ? json_object_array_get_idx(remedies, 0) : NULL;
    bool failed = false;
    verdict->root_cause = report_merge_strdup(string_member(hang, "root_cause"), &failed);
    verdict->confidence = report_merge_strdup(string_member(finding, "confidence"), &failed);
    verdict->summary = report_merge_strdup(string_member(finding, "summary"), &failed);
    verdict->remedy = report_merge_strdup(json_object_is_type(remedy, json_type_string)
                                              ? json_object_get_string(remedy) : NULL, &failed);
    return !failed;
}

/* The first hang of the report that is the rank's; *first says whether it was the report's first. */
static bool read_local_verdict(json_object *document, const struct rank_processes *processes,
                               struct report_merge_local_verdict *verdict, bool *first)
{
    json_object *report_verdict = member(document, "verdict");
    json_object *hangs = member(report_verdict, "hangs");
    for (size_t h = 0; h < array_length(hangs); h++) {
        json_object *hang = json_object_array_get_idx(hangs, h);
        if (!holds_pid(processes, pid_member(hang, "pid")) && !chain_holds(hang, processes->rank_pid))
            continue;
        *first = h == 0;
        if (!read_hang(document, hang, verdict))
            return false;
        pid_t pid = verdict->pid;
        verdict->subject = pid == processes->rank_pid   ? REPORT_MERGE_SUBJECT_RANK
                           : holds_pid(processes, pid) ? REPORT_MERGE_SUBJECT_WORKER
                                                       : REPORT_MERGE_SUBJECT_PROCESS;
        return true;
    }
    /* none is the rank's: it is not hung by itself, unless the report could not tell at all */
    verdict->hung = hung_member(report_verdict, "hung") == REPORT_HUNG_UNKNOWN ? REPORT_HUNG_UNKNOWN : REPORT_HUNG_NO;
    verdict->cause = REPORT_CAUSE_NONE;
    return true;
}

static bool read_findings(json_object *document, const struct rank_processes *processes,
                          struct report_merge_observation *observation)
{
    json_object *findings = member(document, "findings");
    size_t capacity = 0;
    for (size_t f = 0; f < array_length(findings); f++) {
        json_object *finding = json_object_array_get_idx(findings, f);
        if (!holds_pid(processes, pid_member(finding, "pid")))
            continue;
        if (!report_merge_grow((void **)&observation->findings, &capacity, observation->nfindings,
                               sizeof *observation->findings))
            return false;
        bool failed = false;
        observation->findings[observation->nfindings++] = (struct report_merge_finding){
            .id = report_merge_strdup(string_member(finding, "id"), &failed),
            .confidence = report_merge_strdup(string_member(finding, "confidence"), &failed),
            .pid = pid_member(finding, "pid"),
            .tid = pid_member(finding, "tid"),
            .summary = report_merge_strdup(string_member(finding, "summary"), &failed),
        };
        if (failed)
            return false;
    }
    return true;
}

/* A busy loop of the rank's own process while its main thread is in a collective: the collective's own polling. */
static bool mark_collective_spin(struct report_merge_observation *observation)
{
    const struct report_merge_local_verdict *verdict = &observation->verdict;
    observation->verdict.spins_in_collective = verdict->hung == REPORT_HUNG_YES &&
                                               verdict->cause == REPORT_CAUSE_BUSY_LOOP &&
                                               verdict->subject == REPORT_MERGE_SUBJECT_RANK && observation->wait &&
                                               observation->wait->collective;
    return true;
}

/* The rank's collective as its report names it (`collective` of its process), with how long its thread has slept
 * there against the report's threshold. Reports from before `collective` name none: the stack's wait stands. */
static bool read_call(json_object *document, json_object *process, struct report_merge_observation *observation)
{
    json_object *collective = member(process, "collective");
    const char *name = string_member(collective, "name");
    if (!name)
        return true;
    const char *file = string_member(collective, "site_file");
    int64_t line = 0;
    bool failed = false;
    observation->call.name = report_merge_strdup(name, &failed);
    if (file && integer_member(collective, "site_line", 0, INT32_MAX, &line)) {
        const char *slash = strrchr(file, '/');
        if (asprintf(&observation->call.site, "%s:%d", slash ? slash + 1 : file, (int)line) < 0) {
            observation->call.site = NULL;
            failed = true;
        }
    }
    json_object *thread = main_thread(process, pid_member(collective, "tid"));
    json_object *asleep = member(thread, "blocked_for_s"), *threshold = member(member(document, "snapshot"),
                                                                              "stuck_after_s");
    bool numbers = (json_object_is_type(asleep, json_type_double) || json_object_is_type(asleep, json_type_int)) &&
                   (json_object_is_type(threshold, json_type_double) || json_object_is_type(threshold, json_type_int));
    observation->call.timed = numbers;
    observation->call.waited_long = numbers && json_object_get_double(threshold) > 0 &&
                                    json_object_get_double(asleep) >= json_object_get_double(threshold);
    return !failed;
}

/* ---- jobs ---- */

/* The job `label` belongs to: one whose identity (Slurm job and step, torchelastic run, master) is the same. */
static size_t job_of(struct report_merge *merge, json_object *label)
{
    const char *job_id = string_member(label, "job_id"), *step_id = string_member(label, "step_id");
    const char *run_id = string_member(label, "run_id"), *master = string_member(label, "master");
    for (size_t k = 0; k < merge->njobs; k++) {
        size_t j = (merge->last_job + k) % merge->njobs;
        const struct report_merge_job *job = &merge->jobs[j];
        if (same_text(job->job_id, job_id) && same_text(job->step_id, step_id) && same_text(job->run_id, run_id) &&
            same_text(job->master, master))
            return merge->last_job = j;
    }
    if (!report_merge_grow((void **)&merge->jobs, &merge->jobs_capacity, merge->njobs, sizeof *merge->jobs))
        return REPORT_MERGE_NONE;
    bool failed = false;
    merge->jobs[merge->njobs] = (struct report_merge_job){
        .job_id = report_merge_strdup(job_id, &failed),
        .step_id = report_merge_strdup(step_id, &failed),
        .run_id = report_merge_strdup(run_id, &failed),
        .master = report_merge_strdup(master, &failed),
        .rank_variable = report_merge_strdup(string_member(label, "rank_variable"), &failed),
        .world_size = -1,
        .most_common = REPORT_MERGE_NONE,
    };
    if (failed) {
        struct report_merge_job *job = &merge->jobs[merge->njobs];
        free(job->job_id);
        free(job->step_id);
        free(job->run_id);
        free(job->master);
        free(job->rank_variable);
        return REPORT_MERGE_NONE;
    }
    return merge->last_job = merge->njobs++;
}

static bool note_world_size(struct report_merge *merge, struct report_merge_job *job, int world_size,
                            const char *source)
{
    if (world_size < 0 || world_size == job->world_size)
        return true;
    if (world_size > REPORT_MERGE_WORLD_SIZE_MAX)
        return report_merge_add_note(merge, source, "WORLD_SIZE %d is above %d: taken as unknown", world_size,
                                     REPORT_MERGE_WORLD_SIZE_MAX);
    bool first_difference = job->world_size >= 0 && !job->world_size_differs;
    if (job->world_size >= 0)
        job->world_size_differs = true;
    if (first_difference && !report_merge_add_note(merge, source, "ranks name different WORLD_SIZEs (%d and %d): "
                                                   "the largest is used", job->world_size, world_size))
        return false;
    if (world_size > job->world_size)
        job->world_size = world_size;
    return true;
}

/* ---- one document ---- */

static bool is_role(json_object *process, const char *role)
{
    const char *name = string_member(member(process, "job"), "role");
    return name && strcmp(name, role) == 0;
}

/* The rank process `process` of the report: one observation. */
static bool observe_rank(struct report_merge *merge, json_object *document, json_object *process, size_t document_index)
{
    json_object *label = member(process, "job");
    int64_t rank = -1;
    pid_t pid = pid_member(process, "pid");
    if (!integer_member(label, "rank", 0, INT32_MAX, &rank) || pid == 0)
        return true; /* a rank process that names no rank number cannot be placed */
    struct rank_processes processes = { .rank_pid = pid };
    json_object *all = member(document, "processes");
    processes.pids = calloc(array_length(all) + 1, sizeof *processes.pids);
    if (!processes.pids)
        return false;
    processes.pids[processes.npids++] = pid;
    for (size_t p = 0; p < array_length(all); p++) {
        json_object *other = json_object_array_get_idx(all, p);
        if (is_role(other, "worker") && pid_member(member(other, "job"), "rank_pid") == pid)
            processes.pids[processes.npids++] = pid_member(other, "pid");
    }
    size_t job = job_of(merge, label);
    bool ok = job != REPORT_MERGE_NONE &&
              report_merge_grow((void **)&merge->observations, &merge->observations_capacity,
                                merge->nobservations, sizeof *merge->observations);
    if (ok) {
        struct report_merge_observation *observation = &merge->observations[merge->nobservations++];
        *observation = (struct report_merge_observation){
            .document = document_index, .job = job, .rank = (int)rank, .pid = pid,
            .local_rank = count_member(label, "local_rank"), .group_rank = count_member(label, "group_rank"),
        };
        bool first = false;
        ok = read_stack(observation, main_thread(process, pid)) &&
             read_local_verdict(document, &processes, &observation->verdict, &first) &&
             mark_collective_spin(observation) &&
             read_findings(document, &processes, observation) && read_call(document, process, observation) &&
             note_world_size(merge, &merge->jobs[job], count_member(label, "world_size"),
                             merge->documents[document_index].source);
        merge->documents[document_index].ranks++;
        merge->documents[document_index].hang_in_rank |= first;
    }
    free(processes.pids);
    return ok;
}

static const char *comm_of(json_object *document, pid_t pid)
{
    json_object *processes = member(document, "processes");
    for (size_t p = 0; p < array_length(processes); p++)
        if (pid_member(json_object_array_get_idx(processes, p), "pid") == pid)
            return string_member(json_object_array_get_idx(processes, p), "comm");
    return NULL;
}

/* The report's own facts: where and when it was taken, its first hang, its launchers. */
static bool read_document(struct report_merge_document *entry, json_object *document, const char *source)
{
    json_object *snapshot = member(document, "snapshot");
    json_object *taken_at = member(snapshot, "taken_at");
    const char *host = string_member(snapshot, "host");
    bool failed = false;
    *entry = (struct report_merge_document){
        .source = report_merge_strdup(source, &failed),
        .host = report_merge_strdup(host ? host : "?", &failed),
        .boot_id = report_merge_strdup(string_member(snapshot, "boot_id"), &failed),
        .taken_at = json_object_is_type(taken_at, json_type_double) || json_object_is_type(taken_at, json_type_int)
                        ? json_object_get_double(taken_at) : 0,
    };
    json_object *verdict = member(document, "verdict");
    json_object *hangs = member(verdict, "hangs");
    entry->verdict.hung = hung_member(verdict, "hung");
    if (array_length(hangs) > 0 && !read_hang(document, json_object_array_get_idx(hangs, 0), &entry->verdict))
        failed = true;
    if (entry->verdict.hung == REPORT_HUNG_YES && array_length(hangs) == 0)
        entry->verdict.cause = cause_named(string_member(verdict, "cause"));
    entry->verdict.subject = REPORT_MERGE_SUBJECT_PROCESS;
    entry->comm = report_merge_strdup(comm_of(document, entry->verdict.pid), &failed);
    json_object *processes = member(document, "processes");
    size_t capacity = 0;
    for (size_t p = 0; !failed && p < array_length(processes); p++) {
        json_object *process = json_object_array_get_idx(processes, p);
        if (!is_role(process, "launcher") || !pid_member(process, "pid"))
            continue;
        if (!report_merge_grow((void **)&entry->launchers, &capacity, entry->nlaunchers, sizeof *entry->launchers))
            failed = true;
        else
            entry->launchers[entry->nlaunchers++] = pid_member(process, "pid");
    }
    return !failed;
}

static const char *why_not_a_report(json_object *document)
{
    const char *schema = string_member(document, "schema");
    if (!json_object_is_type(document, json_type_object))
        return "is not a JSON object";
    if (!schema)
        return "has no \"schema\": not a hangdoc report";
    if (strcmp(schema, REPORT_SCHEMA_ACCEPTED) != 0)
        return "is not a " REPORT_SCHEMA_ACCEPTED " report";
    if (!json_object_is_type(member(document, "processes"), json_type_array) ||
        !json_object_is_type(member(document, "snapshot"), json_type_object))
        return "has no \"processes\" array or \"snapshot\" object";
    return NULL;
}

bool report_merge_add(struct report_merge *merge, json_object *document, const char *source)
{
    const char *why_not = why_not_a_report(document);
    if (why_not) {
        merge->skipped++;
        return report_merge_add_note(merge, source, "a document %s: left out", why_not);
    }
    if (!report_merge_grow((void **)&merge->documents, &merge->documents_capacity, merge->ndocuments,
                           sizeof *merge->documents))
        return false;
    size_t index = merge->ndocuments++;
    if (!read_document(&merge->documents[index], document, source))
        return false;
    json_object *processes = member(document, "processes");
    for (size_t p = 0; p < array_length(processes); p++) {
        json_object *process = json_object_array_get_idx(processes, p);
        if (is_role(process, "rank") && !observe_rank(merge, document, process, index))
            return false;
    }
    return true;
}

bool report_merge_skip(struct report_merge *merge, const char *source, const char *why)
{
    merge->skipped++;
    return report_merge_add_note(merge, source, "%s", why);
}
