/* `hangdoc merge` over hand-made reports (merge/merge.h): rank sets, the table of waits, what is read from a report
 * and what is left out, the tree, classes and outliers, missing ranks, every kind of merged verdict, the reports of
 * one rank over time, the input streams, and the escaping of what the reports hold. The merge is checked through its
 * JSON document (the contract), and its text and DOT where they differ. */
#include "merge.h"
#include "merge_input.h"
#include "merge_model.h"
#include "merge_ranks.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rank sets ---------------------------------------------------------------------------------------------- */

static char *described(const struct report_rank_set *set, size_t max_ranges)
{
    struct report_buffer out = { 0 };
    report_rank_set_describe(set, &out, max_ranges);
    cr_assert_not(out.failed);
    return out.data;
}

Test(rank_set, folds_ranges_and_counts)
{
    struct report_rank_set set = { 0 };
    for (int rank = 127; rank >= 0; rank--)
        if (rank != 63)
            cr_assert(report_rank_set_add(&set, rank));
    cr_assert(report_rank_set_add(&set, 5), "a rank added twice is there once");
    cr_assert_eq(set.count, 127u);
    char *text = described(&set, 0);
    cr_assert_str_eq(text, "ranks 0-62,64-127 (127)");
    free(text);
    cr_assert(report_rank_set_contains(&set, 64));
    cr_assert_not(report_rank_set_contains(&set, 63));
    report_rank_set_release(&set);
}

Test(rank_set, one_rank_none_and_a_shortened_list)
{
    struct report_rank_set set = { 0 };
    char *text = described(&set, 0);
    cr_assert_str_eq(text, "no rank");
    free(text);
    cr_assert(report_rank_set_add(&set, 63));
    text = described(&set, 0);
    cr_assert_str_eq(text, "rank 63");
    free(text);
    for (int rank = 0; rank < 20; rank += 2)
        cr_assert(report_rank_set_add(&set, rank));
    text = described(&set, 3);
    cr_assert_str_eq(text, "ranks 0,2,4,… (11)");
    free(text);
    report_rank_set_release(&set);
}

Test(rank_set, complement_is_the_missing_ranks)
{
    struct report_rank_set seen = { 0 }, missing = { 0 };
    for (int rank = 0; rank < 64; rank++)
        if (rank != 7)
            cr_assert(report_rank_set_add(&seen, rank));
    cr_assert(report_rank_set_complement(&seen, 66, &missing));
    char *text = described(&missing, 0);
    cr_assert_str_eq(text, "ranks 7,64-65 (3)");
    free(text);
    report_rank_set_release(&seen);
    report_rank_set_release(&missing);
}

/* ---- the table of waits and the phrases of findings ---------------------------------------------------------- */

static const struct report_named_wait *wait_of(const char *const *functions, const char *const *files, size_t n)
{
    size_t frame = 0;
    return report_find_named_wait(functions, files, n, &frame);
}

Test(waits, python_collective_needs_torch_distributed)
{
    const char *functions[] = { "all_reduce", "main" };
    const char *files[] = { "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", "/t.py" };
    const struct report_named_wait *wait = wait_of(functions, files, 2);
    cr_assert_not_null(wait);
    cr_assert_str_eq(wait->collective, "all_reduce");
    const char *user_files[] = { "/srv/my_broadcast.py", "/t.py" };
    const char *user_functions[] = { "broadcast", "main" };
    cr_assert_null(wait_of(user_functions, user_files, 2), "a user's broadcast() is no collective");
}

Test(waits, native_names_are_case_folded)
{
    const char *functions[] = { "__futex_abstimed_wait_common", "PMPI_Allreduce", "main" };
    const char *files[] = { NULL, NULL, NULL };
    const struct report_named_wait *wait = wait_of(functions, files, 3);
    cr_assert_not_null(wait);
    cr_assert_str_eq(wait->collective, "all_reduce");
}

Test(waits, a_dataloader_wait_before_the_queue_it_is_made_of)
{
    const char *functions[] = { "Queue.get", "_MultiProcessingDataLoaderIter._try_get_data", "main" };
    const char *files[] = { "/usr/lib/python3.11/multiprocessing/queues.py",
                            "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", "/t.py" };
    const struct report_named_wait *wait = wait_of(functions, files, 3);
    cr_assert_not_null(wait);
    cr_assert_str_eq(wait->what, "for a DataLoader batch");
    cr_assert_null(wait->collective);
}

Test(waits, every_finding_id_has_a_phrase)
{
    for (int id = 0; id < REPORT_FINDING_IDS; id++)
        cr_assert_not_null(report_merge_finding_phrase(report_finding_id_name((enum report_finding_id)id)),
                           "%s has no phrase in merge_waits.c", report_finding_id_name((enum report_finding_id)id));
    cr_assert_null(report_merge_finding_phrase("no-such-finding"));
}

/* ---- hand-made reports --------------------------------------------------------------------------------------- */

#define DISTRIBUTED "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"
#define DATALOADER "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py"
#define STACK_ALL_REDUCE                                                                                               \
    "[{\"function\":\"all_reduce\",\"file\":\"" DISTRIBUTED "\",\"line\":2050},"                                    \
    "{\"function\":\"main\",\"file\":\"/srv/job/train.py\",\"line\":9}]"
#define STACK_BROADCAST                                                                                                \
    "[{\"function\":\"broadcast\",\"file\":\"" DISTRIBUTED "\",\"line\":2400},"                                     \
    "{\"function\":\"main\",\"file\":\"/srv/job/train.py\",\"line\":9}]"
#define STACK_DATALOADER                                                                                               \
    "[{\"function\":\"_next_data\",\"file\":\"" DATALOADER "\",\"line\":1328},"                                     \
    "{\"function\":\"main\",\"file\":\"/srv/job/train.py\",\"line\":7}]"
#define NOT_HUNG "{\"hung\":false,\"cause\":\"none\",\"hangs\":[]}"

static char *format(const char *format, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *text = NULL;
    cr_assert_geq(vasprintf(&text, format, args), 0);
    va_end(args);
    return text;
}

static char *job_label(const char *role, int rank, int world_size, int rank_pid, const char *job_id)
{
    return format("{\"role\":\"%s\",\"rank\":%d,\"world_size\":%d,\"local_rank\":0,\"local_world_size\":1,"
                  "\"group_rank\":%d,\"rank_variable\":\"RANK\",\"rank_pid\":%d,\"job_id\":\"%s\",\"step_id\":null,"
                  "\"node_id\":null,\"run_id\":null,\"master\":\"10.0.0.1:29500\",\"cgroup\":null}",
                  role, rank, world_size, rank, rank_pid, job_id);
}

/* A rank process whose main thread has these Python frames (a JSON array) and these native ones. */
static char *rank_process(int pid, int rank, int world_size, const char *python_frames, const char *native_frames,
                          const char *job_id)
{
    char *label = job_label("rank", rank, world_size, pid, job_id);
    char *process = format("{\"pid\":%d,\"ppid\":1,\"comm\":\"python3\",\"job\":%s,\"threads\":[{\"tid\":%d,"
                           "\"name\":\"python3\",\"state\":\"S\",\"syscall\":{\"name\":\"futex\"},\"frames\":%s,"
                           "\"python_frames\":%s}]}",
                           pid, label, pid, native_frames, python_frames);
    free(label);
    return process;
}

static char *worker_process(int pid, int rank_pid, int rank, int world_size)
{
    char *label = job_label("worker", rank, world_size, rank_pid, "42");
    char *process = format("{\"pid\":%d,\"ppid\":%d,\"comm\":\"pt_data_worker\",\"job\":%s,\"threads\":[]}", pid,
                           rank_pid, label);
    free(label);
    return process;
}

static json_object *report(const char *host, double taken_at, const char *processes, const char *verdict,
                           const char *findings)
{
    char *text = format("{\"schema\":\"hangdoc.report/2\",\"snapshot\":{\"host\":\"%s\",\"boot_id\":\"b-%s\","
                        "\"taken_at\":%.3f},\"verdict\":%s,\"findings\":%s,\"processes\":[%s]}",
                        host, host, taken_at, verdict, findings, processes);
    json_object *document = json_tokener_parse(text);
    cr_assert_not_null(document, "the test's report parses: %s", text);
    free(text);
    return document;
}

/* A host with one healthy rank whose main thread has `stack`. */
static void add_rank(struct report_merge *merge, int rank, int world_size, const char *stack, double taken_at)
{
    char host[32];
    snprintf(host, sizeof host, "node-%03d", rank);
    char *process = rank_process(1000 + rank, rank, world_size, stack, "[]", "42");
    json_object *document = report(host, taken_at, process, NOT_HUNG, "[]");
    cr_assert(report_merge_add(merge, document, host));
    json_object_put(document);
    free(process);
}

/* Rank `rank` whose DataLoader worker 5000 waits for a mutex held at fork: its report is hung. */
static void add_hung_rank(struct report_merge *merge, int rank, int world_size, const char *stack)
{
    char host[32];
    snprintf(host, sizeof host, "node-%03d", rank);
    char *rank_text = rank_process(1000 + rank, rank, world_size, stack, "[]", "42");
    char *worker = worker_process(5000, 1000 + rank, rank, world_size);
    char *processes = format("%s,%s", rank_text, worker);
    char *verdict = format("{\"hung\":true,\"cause\":\"fork-inheritance\",\"root_cause\":\"inherited-lock\","
                           "\"hangs\":[{\"cause\":\"fork-inheritance\",\"root_cause\":\"inherited-lock\","
                           "\"finding\":0,\"pid\":5000,\"tid\":5000,\"chain\":[%d,5000],\"findings\":[0]}]}",
                           1000 + rank);
    json_object *document = report(host, 100, processes, verdict,
                                   "[{\"id\":\"inherited-lock\",\"confidence\":\"certain\",\"pid\":5000,"
                                   "\"tid\":5000,\"summary\":\"thread 5000 waits for mutex 0x10 held at fork\","
                                   "\"evidence\":{},\"remedies\":[\"Fork before threads start.\"]}]");
    cr_assert(report_merge_add(merge, document, host));
    json_object_put(document);
    free(rank_text);
    free(worker);
    free(processes);
    free(verdict);
}

/* Rank `rank` whose main thread spins in the collective (NCCL polls): its report says busy-loop. */
static void add_spinning_rank(struct report_merge *merge, int rank, int world_size)
{
    char host[32];
    snprintf(host, sizeof host, "node-%03d", rank);
    int pid = 1000 + rank;
    char *process = rank_process(pid, rank, world_size, STACK_ALL_REDUCE, "[]", "42");
    char *verdict = format("{\"hung\":true,\"cause\":\"busy-loop\",\"hangs\":[{\"cause\":\"busy-loop\","
                           "\"root_cause\":\"spinning\",\"finding\":0,\"pid\":%d,\"tid\":%d,\"chain\":[%d],"
                           "\"findings\":[0]}]}",
                           pid, pid, pid);
    char *findings = format("[{\"id\":\"spinning\",\"confidence\":\"likely\",\"pid\":%d,\"tid\":%d,"
                            "\"summary\":\"spins\",\"evidence\":{},\"remedies\":[]}]",
                            pid, pid);
    json_object *document = report(host, 100, process, verdict, findings);
    cr_assert(report_merge_add(merge, document, host));
    json_object_put(document);
    free(process);
    free(verdict);
    free(findings);
}

/* The merge, finished, as its JSON document (validated against nothing here: tests/test_merge.c does that). */
static json_object *merged_json(struct report_merge *merge)
{
    cr_assert(report_merge_finish(merge));
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    cr_assert(report_merge_render_json(merge, out));
    fclose(out);
    json_object *document = json_tokener_parse(text);
    cr_assert_not_null(document, "the merge's JSON parses: %s", text);
    free(text);
    return document;
}

static char *merged_text(struct report_merge *merge, bool (*render)(const struct report_merge *, FILE *))
{
    cr_assert(report_merge_finish(merge));
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    cr_assert(render(merge, out));
    fclose(out);
    return text;
}

static json_object *at(json_object *object, const char *path)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", path);
    for (char *key = strtok(copy, "."); key && object; key = strtok(NULL, ".")) {
        json_object *next = NULL;
        if (json_object_is_type(object, json_type_array))
            next = json_object_array_get_idx(object, (size_t)atoi(key));
        else if (!json_object_object_get_ex(object, key, &next))
            next = NULL;
        object = next;
    }
    return object;
}

static const char *string_at(json_object *object, const char *path)
{
    json_object *value = at(object, path);
    cr_assert(json_object_is_type(value, json_type_string), "%s is a string", path);
    return json_object_get_string(value);
}

/* ---- reading reports ---------------------------------------------------------------------------------------- */

Test(merge_read, not_a_report_is_left_out_with_a_note)
{
    struct report_merge *merge = report_merge_new();
    json_object *other = json_tokener_parse("{\"schema\":\"hangdoc.report/1\",\"processes\":[]}");
    json_object *array = json_tokener_parse("[1,2]");
    cr_assert(report_merge_add(merge, other, "old.json"));
    cr_assert(report_merge_add(merge, array, "array.json"));
    cr_assert_eq(report_merge_documents(merge), 0u);
    cr_assert_eq(report_merge_skipped(merge), 2u);
    json_object_put(other);
    json_object_put(array);
    report_merge_free(merge);
}

Test(merge_read, values_of_the_wrong_type_are_absent)
{
    struct report_merge *merge = report_merge_new();
    /* a rank that is a string, a pid that is negative, a host that is a number: nothing to place, nothing breaks */
    json_object *document = json_tokener_parse(
        "{\"schema\":\"hangdoc.report/2\",\"snapshot\":{\"host\":7,\"taken_at\":\"now\"},\"verdict\":[],"
        "\"findings\":{},\"processes\":[{\"pid\":-4,\"job\":{\"role\":\"rank\",\"rank\":1}},"
        "{\"pid\":12,\"job\":{\"role\":\"rank\",\"rank\":\"3\"}},{\"pid\":13,\"job\":\"rank\"}, 5]}");
    cr_assert(report_merge_add(merge, document, "odd.json"));
    json_object *merged = merged_json(merge);
    cr_assert_eq(json_object_array_length(at(merged, "jobs")), 0u);
    cr_assert_str_eq(string_at(merged, "reports.0.host"), "?");
    cr_assert_str_eq(string_at(merged, "verdict.kind"), "no-ranks");
    json_object_put(merged);
    json_object_put(document);
    report_merge_free(merge);
}

Test(merge_read, stacks_are_names_never_addresses)
{
    struct report_merge *merge = report_merge_new();
    add_rank(merge, 0, 2, "[]", 0); /* no frames at all */
    char *process = rank_process(2001, 1, 2, "[]",
                                 "[{\"pc\":\"0x7f01\",\"module\":\"/usr/lib/x86_64-linux-gnu/libc.so.6\","
                                 "\"symbol\":\"__futex_abstimed_wait_common\",\"offset\":\"0x2e\"},"
                                 "{\"pc\":\"0x7f02\",\"module\":\"/opt/lib/libnccl.so.2\",\"symbol\":null},"
                                 "{\"pc\":\"0x7f03\",\"module\":null,\"symbol\":null}]",
                                 "42");
    json_object *document = report("node-001", 0, process, NOT_HUNG, "[]");
    cr_assert(report_merge_add(merge, document, "node-001"));
    json_object *merged = merged_json(merge);
    json_object *ranks = at(merged, "jobs.0.ranks");
    cr_assert_eq(json_object_array_length(ranks), 2u);
    /* rank 1's frames by symbol, by module without one, neither; rank 0's leaf says it has none, and its wait */
    json_object *classes = at(merged, "jobs.0.classes");
    bool seen_native = false, seen_placeholder = false;
    for (size_t c = 0; c < json_object_array_length(classes); c++) {
        json_object *stack = at(json_object_array_get_idx(classes, c), "stack");
        const char *outer = json_object_get_string(json_object_array_get_idx(stack, 0));
        if (strcmp(outer, "??") == 0) {
            seen_native = true;
            cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(stack, 1)), "libnccl.so.2");
            cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(stack, 2)),
                             "__futex_abstimed_wait_common");
        } else {
            seen_placeholder = true;
            cr_assert_str_eq(outer, "(no stack; in futex)");
        }
    }
    cr_assert(seen_native && seen_placeholder);
    json_object_put(merged);
    json_object_put(document);
    free(process);
    report_merge_free(merge);
}

Test(merge_read, concatenated_documents_from_a_stream)
{
    char *one = rank_process(1000, 0, 2, STACK_ALL_REDUCE, "[]", "42");
    char *two = rank_process(1001, 1, 2, STACK_ALL_REDUCE, "[]", "42");
    json_object *first = report("a", 1, one, NOT_HUNG, "[]"), *second = report("b", 2, two, NOT_HUNG, "[]");
    char *stream = format("%s\n  %s\n\n", json_object_to_json_string(first), json_object_to_json_string(second));
    FILE *in = fmemopen(stream, strlen(stream), "r");
    struct report_merge *merge = report_merge_new();
    cr_assert(report_merge_read_stream(merge, in, "-"));
    fclose(in);
    cr_assert_eq(report_merge_documents(merge), 2u);
    cr_assert_eq(report_merge_skipped(merge), 0u);
    report_merge_free(merge);

    /* a stream cut inside its second document: the first is merged, the cut is a note */
    stream[strlen(stream) - 10] = '\0';
    in = fmemopen(stream, strlen(stream), "r");
    merge = report_merge_new();
    cr_assert(report_merge_read_stream(merge, in, "-"));
    fclose(in);
    cr_assert_eq(report_merge_documents(merge), 1u);
    cr_assert_eq(report_merge_skipped(merge), 1u);
    report_merge_free(merge);

    in = fmemopen((char *)"GET / HTTP/1.1\r\n", 16, "r");
    merge = report_merge_new();
    cr_assert(report_merge_read_stream(merge, in, "-"));
    fclose(in);
    cr_assert_eq(report_merge_documents(merge), 0u);
    cr_assert_eq(report_merge_skipped(merge), 1u);
    report_merge_free(merge);
    json_object_put(first);
    json_object_put(second);
    free(one);
    free(two);
    free(stream);
}

/* ---- the tree, classes, missing ranks and the verdict -------------------------------------------------------- */

Test(merge_verdict, outlier_hung_by_itself_is_the_culprit)
{
    struct report_merge *merge = report_merge_new();
    for (int rank = 0; rank < 8; rank++)
        if (rank == 5)
            add_hung_rank(merge, rank, 10, STACK_DATALOADER);
        else
            add_rank(merge, rank, 10, STACK_ALL_REDUCE, 100);
    json_object *merged = merged_json(merge);
    cr_assert_str_eq(string_at(merged, "jobs.0.seen.folded"), "0-7");
    cr_assert_str_eq(string_at(merged, "jobs.0.missing.folded"), "8-9");
    cr_assert_str_eq(string_at(merged, "jobs.0.classes.0.ranks.folded"), "5", "the smallest class first");
    cr_assert(json_object_get_boolean(at(merged, "jobs.0.classes.0.outlier")));
    cr_assert(json_object_get_boolean(at(merged, "jobs.0.classes.1.most_common")));
    cr_assert_str_eq(string_at(merged, "verdict.kind"), "rank-hung");
    cr_assert_str_eq(string_at(merged, "verdict.cause"), "fork-inheritance");
    cr_assert_eq(json_object_get_int(at(merged, "verdict.culprit.rank")), 5);
    cr_assert_str_eq(string_at(merged, "verdict.culprit.local_verdict.subject"), "worker");
    cr_assert_str_eq(string_at(merged, "verdict.text"),
                     "HUNG (fork-inheritance): 7 ranks wait in all_reduce ← rank 5 never joined the all_reduce ← "
                     "its main thread waits for a DataLoader batch ← worker 5000 waits for a mutex its parent held "
                     "at fork [inherited-lock, certain]");
    cr_assert_str_eq(string_at(merged, "verdict.also.0"), "ranks 8-9 (2) of WORLD_SIZE 10 never reported");
    cr_assert_eq(report_merge_hung(merge), REPORT_HUNG_YES);
    cr_assert_eq(report_merge_cause(merge), REPORT_CAUSE_FORK_INHERITANCE);
    json_object_put(merged);
    report_merge_free(merge);
}

Test(merge_verdict, missing_ranks_when_no_rank_is_hung)
{
    struct report_merge *merge = report_merge_new();
    for (int rank = 0; rank < 6; rank++)
        if (rank != 3)
            add_rank(merge, rank, 8, STACK_ALL_REDUCE, 100);
    json_object *merged = merged_json(merge);
    cr_assert_str_eq(string_at(merged, "verdict.kind"), "missing-ranks");
    cr_assert(json_object_is_type(at(merged, "verdict.hung"), json_type_null), "missing ranks: could not tell");
    cr_assert_str_eq(string_at(merged, "jobs.0.missing.folded"), "3,6-7");
    cr_assert_str_eq(string_at(merged, "verdict.chain.1.step"), "missing");
    cr_assert_str_eq(string_at(merged, "verdict.chain.1.ranks.folded"), "3,6-7");
    cr_assert_eq(report_merge_hung(merge), REPORT_HUNG_UNKNOWN);
    json_object_put(merged);
    report_merge_free(merge);
}

/* Reports that name no `collective` (older ones): the collectives their stacks show, without a site, and no
 * threshold to say the waits have lasted: a mismatch, as a suspect. */
Test(merge_verdict, ranks_in_different_collectives_are_a_mismatch_suspect_until_timed)
{
    struct report_merge *merge = report_merge_new();
    for (int rank = 0; rank < 4; rank++)
        add_rank(merge, rank, 4, rank == 2 ? STACK_BROADCAST : STACK_ALL_REDUCE, 100);
    json_object *merged = merged_json(merge);
    cr_assert_str_eq(string_at(merged, "verdict.kind"), "mismatch");
    cr_assert(json_object_is_type(at(merged, "verdict.hung"), json_type_null), "not timed: could not tell");
    cr_assert_eq(json_object_get_int(at(merged, "verdict.culprit.rank")), 2);
    cr_assert_str_eq(string_at(merged, "verdict.chain.0.text"),
                     "mismatched collectives: ranks 0-1,3 (3) in all_reduce; rank 2 in broadcast (how long they "
                     "have waited there not every report says: a suspect, not a verdict)");
    cr_assert_str_eq(string_at(merged, "verdict.chain.1.text"), "rank 2 makes the odd call: the fewest ranks are in it");
    cr_assert_str_eq(string_at(merged, "jobs.0.collectives.0.ranks.folded"), "0-1,3");
    cr_assert_str_eq(string_at(merged, "jobs.0.collectives.1.name"), "broadcast");
    cr_assert_eq(report_merge_hung(merge), REPORT_HUNG_UNKNOWN);
    json_object_put(merged);
    report_merge_free(merge);
}

Test(merge_verdict, every_rank_alike_names_no_culprit_and_the_flight_recorder)
{
    struct report_merge *merge = report_merge_new();
    for (int rank = 0; rank < 4; rank++)
        add_rank(merge, rank, 4, STACK_ALL_REDUCE, 100);
    json_object *merged = merged_json(merge);
    cr_assert_str_eq(string_at(merged, "verdict.kind"), "uniform");
    cr_assert(json_object_is_type(at(merged, "verdict.culprit"), json_type_null));
    cr_assert_eq(json_object_array_length(at(merged, "jobs.0.classes")), 1u);
    cr_assert_not_null(strstr(string_at(merged, "verdict.next.0"), "TORCH_NCCL_TRACE_BUFFER_SIZE"));
    cr_assert_not_null(strstr(string_at(merged, "verdict.next.0"), "TORCH_NCCL_DUMP_ON_TIMEOUT"));
    cr_assert_str_eq(string_at(merged, "verdict.text"),
                     "could not tell: all 4 ranks wait in all_reduce; no rank is hung by itself: the ranks wait for "
                     "something no report shows (the network, a rank of another job, the communicator)");
    json_object_put(merged);
    report_merge_free(merge);
}

Test(merge_verdict, a_hung_process_that_is_no_ranks)
{
    struct report_merge *merge = report_merge_new();
    json_object *document = report("login-1", 0,
                                   "{\"pid\":77,\"ppid\":1,\"comm\":\"prep\",\"job\":null,\"threads\":[]}",
                                   "{\"hung\":true,\"cause\":\"deadlock\",\"hangs\":[{\"cause\":\"deadlock\","
                                   "\"root_cause\":\"lock-cycle\",\"finding\":0,\"pid\":77,\"tid\":78,\"chain\":[77],"
                                   "\"findings\":[0]}]}",
                                   "[{\"id\":\"lock-cycle\",\"confidence\":\"certain\",\"pid\":77,\"tid\":78,"
                                   "\"summary\":\"two threads\",\"evidence\":{},\"remedies\":[]}]");
    cr_assert(report_merge_add(merge, document, "login-1.json"));
    json_object *merged = merged_json(merge);
    cr_assert_str_eq(string_at(merged, "verdict.kind"), "process-hung");
    cr_assert_str_eq(string_at(merged, "verdict.text"),
                     "HUNG (deadlock): process 77 'prep' on login-1 is in a lock cycle [lock-cycle, certain]");
    cr_assert_eq(report_merge_cause(merge), REPORT_CAUSE_DEADLOCK);
    json_object_put(merged);
    json_object_put(document);
    report_merge_free(merge);
}

Test(merge_verdict, the_outlier_is_preferred_to_a_hung_rank_of_the_common_stack)
{
    struct report_merge *merge = report_merge_new();
    for (int rank = 0; rank < 6; rank++)
        add_rank(merge, rank, 8, STACK_ALL_REDUCE, 100);
    add_hung_rank(merge, 6, 8, STACK_ALL_REDUCE);
    add_hung_rank(merge, 7, 8, STACK_DATALOADER);
    json_object *merged = merged_json(merge);
    cr_assert_eq(json_object_get_int(at(merged, "verdict.culprit.rank")), 7);
    cr_assert_str_eq(string_at(merged, "verdict.also.0"), "rank 6 is hung by itself too (see its class)");
    json_object_put(merged);
    report_merge_free(merge);
}

Test(merge_verdict, spinning_inside_the_collective_is_the_wait_not_a_hang)
{
    struct report_merge *merge = report_merge_new();
    for (int rank = 0; rank < 7; rank++)
        add_spinning_rank(merge, rank, 8);
    add_rank(merge, 7, 8, STACK_DATALOADER, 100);
    json_object *merged = merged_json(merge);
    cr_assert_str_eq(string_at(merged, "verdict.kind"), "outlier", "no rank is hung by itself");
    cr_assert_eq(json_object_get_int(at(merged, "verdict.culprit.rank")), 7);
    cr_assert(json_object_get_boolean(at(merged, "jobs.0.ranks.0.local_verdict.spins_in_collective")));
    cr_assert(json_object_get_boolean(at(merged, "jobs.0.ranks.0.local_verdict.hung")), "the report's word is kept");
    cr_assert_eq(json_object_array_length(at(merged, "jobs.0.classes")), 2u);
    cr_assert_eq(report_merge_hung(merge), REPORT_HUNG_UNKNOWN);
    json_object_put(merged);
    report_merge_free(merge);
}

Test(merge_verdict, reports_over_time_tell_moved_stacks)
{
    struct report_merge *merge = report_merge_new();
    for (int sample = 0; sample < 3; sample++)
        for (int rank = 0; rank < 4; rank++)
            add_rank(merge, rank, 4, rank == 1 && sample == 2 ? STACK_BROADCAST : STACK_ALL_REDUCE, 30.0 * sample);
    json_object *merged = merged_json(merge);
    cr_assert_eq(json_object_get_int(at(merged, "jobs.0.ranks.1.reports")), 3);
    cr_assert_not(json_object_get_boolean(at(merged, "jobs.0.ranks.1.stack_unchanged")));
    cr_assert(json_object_get_boolean(at(merged, "jobs.0.ranks.0.stack_unchanged")));
    cr_assert_str_eq(string_at(merged, "jobs.0.classes.1.unchanged.folded"), "0,2-3");
    cr_assert_str_eq(string_at(merged, "verdict.also.0"),
                     "rank 1's stack moved between its 3 reports: it runs, slowly or in a loop, while the others wait");
    json_object_put(merged);
    report_merge_free(merge);
}

Test(merge_verdict, two_jobs_are_merged_apart)
{
    struct report_merge *merge = report_merge_new();
    add_rank(merge, 0, 1, STACK_ALL_REDUCE, 0);
    char *other = rank_process(3000, 0, 1, STACK_ALL_REDUCE, "[]", "43");
    json_object *document = report("node-900", 0, other, NOT_HUNG, "[]");
    cr_assert(report_merge_add(merge, document, "node-900"));
    json_object *merged = merged_json(merge);
    cr_assert_eq(json_object_array_length(at(merged, "jobs")), 2u);
    cr_assert_str_eq(string_at(merged, "jobs.1.job_id"), "43");
    json_object_put(merged);
    json_object_put(document);
    free(other);
    report_merge_free(merge);
}

/* ---- hostile strings --------------------------------------------------------------------------------------- */

Test(merge_render, report_strings_are_escaped_in_text_and_dot_and_exact_in_json)
{
    struct report_merge *merge = report_merge_new();
    char *process = rank_process(1000, 0, 1,
                                 "[{\"function\":\"evil\\u001b[2J\\\"\\\\\\n\",\"file\":\"/x/\\u202ey.py\","
                                 "\"line\":3}]",
                                 "[]", "42");
    json_object *document = report("host\\u001b]0;pwned\\u0007", 0, process, NOT_HUNG, "[]");
    cr_assert(report_merge_add(merge, document, "bad.json"));
    char *text = merged_text(merge, report_merge_render_text);
    cr_assert_null(strchr(text, '\x1b'), "no escape byte in the text");
    cr_assert_null(strstr(text, "\xe2\x80\xae"), "no bidirectional override in the text");
    cr_assert_not_null(strstr(text, "evil\\e[2J\"\\\\\\n (\\u{202E}y.py:3)"), "%s", text);
    char *dot = merged_text(merge, report_merge_render_dot);
    cr_assert_null(strchr(dot, '\x1b'));
    /* the quote escaped for DOT, every backslash doubled: nothing ends the string early */
    cr_assert_not_null(strstr(dot, "[label=\"evil\\\\e[2J\\\"\\\\\\\\\\\\n (\\\\u{202E}y.py:3)\""), "%s", dot);
    json_object *merged = merged_json(merge);
    cr_assert_str_eq(string_at(merged, "jobs.0.tree.1.frame"), "evil\x1b[2J\"\\\n (\xe2\x80\xaey.py:3)");
    cr_assert_str_eq(string_at(merged, "reports.0.host"), "host\x1b]0;pwned\x07");
    json_object_put(merged);
    json_object_put(document);
    free(text);
    free(dot);
    free(process);
    report_merge_free(merge);
}
