/* Snapshot files (record/): the tables cover every member of the model, a snapshot read back is the snapshot
 * saved (its strings byte for byte, its report character for character), a large one is compressed, and every
 * kind of bad file is refused with the place it went wrong at. */
#include "fields.h"
#include "record.h"
#include "report.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static size_t round_up(size_t offset, size_t align)
{
    return (offset + align - 1) / align * align;
}

static size_t expected_size(const struct record_field *field)
{
    switch (field->kind) {
    case RECORD_BOOL:
    case RECORD_CHAR:
        return 1;
    case RECORD_INT:
    case RECORD_UNSIGNED:
    case RECORD_ENUM:
        return 4;
    case RECORD_LONG:
    case RECORD_U64:
    case RECORD_DOUBLE:
    case RECORD_CAPACITY:
        return 8;
    case RECORD_STRING:
    case RECORD_STATIC:
    case RECORD_ARRAY:
    case RECORD_OPTIONAL:
    case RECORD_PIDS:
    case RECORD_ARGV:
        return sizeof(void *);
    case RECORD_U64S:
        return (size_t)field->limit * 8;
    case RECORD_INTS:
        return (size_t)field->limit * 4;
    case RECORD_STRUCT:
        return field->element->size;
    case RECORD_TEXT:
    case RECORD_DERIVED:
        return field->size;
    }
    return 0;
}

struct span {
    size_t start, size, align;
    const char *name;
};

static int by_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Every byte of each structure is a member of its table (an array's count with it), or padding: a gap is allowed
 * only where the next member's alignment puts it, and only that long. A member added to snapshot.h and not to
 * fields.c leaves a gap no alignment explains. */
Test(record, the_tables_name_every_member_of_the_model)
{
    for (size_t s = 0; s < record_nall_structs; s++) {
        const struct record_struct *table = record_all_structs[s];
        struct span spans[128];
        size_t nspans = 0;
        for (size_t f = 0; f < table->nfields; f++) {
            const struct record_field *field = &table->fields[f];
            cr_assert_eq(field->size, expected_size(field), "%s.%s: %zu bytes, not what its kind holds (%zu)",
                         table->name, field->key, field->size, expected_size(field));
            cr_assert_lt(nspans + 2, 128);
            spans[nspans++] = (struct span){ field->offset, field->size, field->align, field->key };
            if (field->kind == RECORD_ARRAY || field->kind == RECORD_PIDS || field->kind == RECORD_ARGV)
                spans[nspans++] = (struct span){ field->count_offset, sizeof(size_t), _Alignof(size_t), field->key };
        }
        qsort(spans, nspans, sizeof *spans, by_start);
        size_t end = 0;
        for (size_t i = 0; i < nspans; i++) {
            cr_assert_geq(spans[i].start, end, "%s.%s overlaps the member before it", table->name, spans[i].name);
            cr_assert_eq(spans[i].start, round_up(end, spans[i].align),
                         "%s: bytes %zu to %zu before %s are no member of fields.c's table, and not padding",
                         table->name, end, spans[i].start, spans[i].name);
            end = spans[i].start + spans[i].size;
        }
        cr_assert_eq(table->size, round_up(end, table->align),
                     "%s: bytes %zu to %zu at its end are no member of fields.c's table", table->name, end,
                     table->size);
    }
}

/* ---- round trips ------------------------------------------------------------------------------------------------ */

static char *temporary_path(void)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/hangdoc-record-test-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    return path;
}

static char *file_bytes(const char *path, size_t *length)
{
    FILE *file = fopen(path, "re");
    cr_assert_not_null(file);
    char *bytes = NULL;
    FILE *out = open_memstream(&bytes, length);
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, file)) > 0)
        fwrite(chunk, 1, got, out);
    fclose(file);
    fclose(out);
    return bytes;
}

static char *json_report(struct hd_snapshot *snapshot)
{
    struct report_analysis *analysis = analyze(snapshot);
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    cr_assert(report_render_json(snapshot, analysis, out));
    fclose(out);
    report_analysis_free(analysis);
    return text;
}

static struct hd_snapshot *saved_and_read(struct hd_snapshot *snapshot, const char *path, double stuck_after_s)
{
    char error[512];
    const struct record_analysis settings = { .stuck_after_s = stuck_after_s };
    cr_assert_eq(record_save(path, snapshot, &settings, error, sizeof error), 0, "%s", error);
    struct hd_snapshot *read = NULL;
    struct record_analysis read_settings;
    cr_assert_eq(record_load(path, &read, &read_settings, error, sizeof error), 0, "%s", error);
    cr_assert_eq(read_settings.stuck_after_s, stuck_after_s);
    return read;
}

/* A tree with the strings a target may hold (bytes that are not UTF-8, quotes, control characters), a Python
 * stack, a job, notes, sockets, pipe holders and a departed process. */
static struct hd_snapshot *everything(void)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    struct hd_process *parent = &snapshot->processes[0];
    memcpy(parent->comm, "\xff\xfe\"q\\\n\x01z", 9);
    cr_assert_not_null(parent->argv = calloc(3, sizeof *parent->argv));
    parent->argv[0] = strdup("/usr/bin/python3");
    parent->argv[1] = strdup("-c\t\"import x\"\x7f\xc3\x28");
    parent->argc = 2;
    parent->exe = strdup("/opt/\xe2\x82\xac/bin (deleted)");
    cr_assert_not_null(parent->job = calloc(1, sizeof *parent->job));
    *parent->job = (struct hd_job){ .role = HD_JOB_RANK, .rank = 3, .world_size = 8, .local_rank = -1,
                                    .local_world_size = -1, .group_rank = -1, .node_id = 0,
                                    .rank_variable = "RANK", .rank_pid = parent->pid, .job_id = strdup("42_7") };
    struct hd_thread *thread = &parent->threads[0];
    add_native_frame(thread, "pthread_mutex_lock");
    add_python_frame(thread, "Worker.run", "/srv/\x80w.py", 12, true);
    thread->blocked_for_s = NAN;
    thread->wait.lock.why_unknown = "no owner recorded here";
    add_library(parent, 0x400000, 0x401000, "/usr/lib/libx.so", "libx.so");
    add_socket_pair(snapshot, 7001, 7002);
    hd_snapshot_note(snapshot, HD_NOTE_PROCFS, parent->pid, 0, "maps of %d: \xff unreadable", (int)parent->pid);
    cr_assert(hd_snapshot_add_departed(snapshot, &snapshot->processes[1]));
    return snapshot;
}

Test(record, a_snapshot_read_back_is_the_one_saved_byte_for_byte)
{
    struct hd_snapshot *snapshot = everything();
    char *path = temporary_path();
    struct hd_snapshot *read = saved_and_read(snapshot, path, 7.5);
    size_t first_length, second_length;
    char *first = file_bytes(path, &first_length);
    char error[512];
    const struct record_analysis settings = { .stuck_after_s = 7.5 };
    cr_assert_eq(record_save(path, read, &settings, error, sizeof error), 0, "%s", error);
    char *second = file_bytes(path, &second_length);
    unlink(path);
    cr_assert_eq(second_length, first_length);
    cr_assert(memcmp(first, second, first_length) == 0, "saved again, the file differs:\n%s\n%s", first, second);
    cr_assert(strstr(first, "{\"bytes\":\"fffe22715c0a017a\"}"), "the comm's bytes kept as hex: %s", first);

    const struct hd_process *process = &read->processes[0];
    cr_assert(memcmp(process->comm, "\xff\xfe\"q\\\n\x01z", 9) == 0);
    cr_assert_str_eq(process->argv[1], "-c\t\"import x\"\x7f\xc3\x28");
    cr_assert_null(process->argv[2]);
    cr_assert_str_eq(process->exe, "/opt/\xe2\x82\xac/bin (deleted)");
    cr_assert_str_eq(process->job->job_id, "42_7");
    cr_assert_str_eq(process->job->rank_variable, "RANK");
    cr_assert_str_eq(process->threads[0].python_frames[0].file, "/srv/\x80w.py");
    cr_assert(isnan(process->threads[0].blocked_for_s));
    cr_assert_str_eq(process->threads[0].wait.lock.why_unknown, "no owner recorded here");
    cr_assert_eq(read->notes_capacity, read->nnotes);
    cr_assert_eq(hd_snapshot_find_thread(read, process->threads[0].tid, NULL), &process->threads[0],
                 "the index is built again");

    char *live = json_report(snapshot), *replayed = json_report(read);
    cr_assert_str_eq(replayed, live);
    free(live);
    free(replayed);
    free(first);
    free(second);
    hd_snapshot_free(read);
    hd_snapshot_free(snapshot);
}

Test(record, a_large_snapshot_is_compressed_and_read_back)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 1);
    for (pid_t tid = 101; tid < 2600; tid++) {
        struct hd_thread *thread = add_thread(snapshot, 100, tid);
        for (int frame = 0; frame < 4; frame++)
            add_native_frame(thread, "a_function_with_a_rather_long_name_as_templates_make_them");
    }
    finish_snapshot(snapshot);
    char *path = temporary_path();
    struct hd_snapshot *read = saved_and_read(snapshot, path, 60);
    size_t length;
    char *bytes = file_bytes(path, &length);
    cr_assert(length > 2 && (unsigned char)bytes[0] == 0x1f && (unsigned char)bytes[1] == 0x8b,
              "a snapshot over %u bytes is written with gzip", RECORD_COMPRESS_FROM);
    cr_assert_eq(read->processes[0].nthreads, 2500);
    cr_assert_str_eq(read->processes[0].threads[2499].stack.frames[3].symbol,
                     "a_function_with_a_rather_long_name_as_templates_make_them");

    /* cut short, it is refused, not half-read */
    struct hd_snapshot *cut = NULL;
    struct record_analysis settings;
    char error[512];
    cr_assert_neq(record_parse(bytes, length / 2, &cut, &settings, error, sizeof error), 0);
    cr_assert_null(cut);
    cr_assert(strstr(error, "cut short"), "%s", error);
    unlink(path);
    free(bytes);
    hd_snapshot_free(read);
    hd_snapshot_free(snapshot);
}

/* ---- refusals --------------------------------------------------------------------------------------------------- */

#define HEADER "{\"format\":\"hangdoc-snapshot\",\"version\":1,\"analysis\":{\"stuck_after_s\":60},"

static void expect_refused(const char *document, const char *why)
{
    struct hd_snapshot *snapshot = NULL;
    struct record_analysis settings;
    char error[512];
    int status = record_parse(document, strlen(document), &snapshot, &settings, error, sizeof error);
    cr_assert_neq(status, 0, "accepted: %s", document);
    cr_assert_null(snapshot);
    cr_assert(strstr(error, why), "refused with \"%s\", not \"%s\": %s", error, why, document);
}

Test(record, files_that_are_not_snapshots_are_refused_with_the_reason)
{
    expect_refused("", "the JSON ends too early");
    expect_refused("hello", "not a hangdoc snapshot");
    expect_refused("{\"schema\":\"hangdoc.report/2\"}", "not a hangdoc snapshot (no \"format\"");
    expect_refused("{\"format\":\"hangdoc-snapshot\"}", "without a format version");
    expect_refused("{\"format\":\"hangdoc-snapshot\",\"version\":9,\"written_by\":\"hangdoc 9.0\"}",
                   "written by hangdoc 9.0 in snapshot format 9, newer than format 1");
    expect_refused(HEADER "\"snapshot\":{}} trailing", "more after the document");
    expect_refused(HEADER "\"snapshot\":[]}", "no \"snapshot\" object");
}

Test(record, a_bad_value_is_refused_with_its_place_in_the_file)
{
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"threads\":[{\"tid\":5,\"wait\":{\"kind\":99}}]}]}}",
                   "processes[0].threads[0].wait.kind: 99 is out of range (0 to 11)");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"comm\":\"a name of twenty bytes\"}]}}",
                   "processes[0].comm: 22 bytes, more than the 15 this member holds");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"exe\":\"a\\u0000b\"}]}}",
                   "processes[0].exe: a string with a NUL byte inside");
    expect_refused(HEADER "\"snapshot\":{\"pid_namespace\":12}}", "pid_namespace: not an address");
    expect_refused(HEADER "\"snapshot\":{\"pid_namespace\":\"0x12345678901234567\"}}", "not an address");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":99999999999}]}}", "processes[0].pid: 99999999999 is "
                                                                                 "out of range");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"exe\":{\"bytes\":\"4g\"}}]}}",
                   "other than hex digits");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"exe\":{\"bytes\":\"410041\"}}]}}", "NUL byte");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"kernel_thread\":1}]}}",
                   "processes[0].kernel_thread: not true or false");
    /* the analysis indexes wait.fds with it: no more than the array holds */
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"threads\":[{\"tid\":5,\"wait\":"
                          "{\"kind\":2,\"nfds_known\":17}}]}]}}",
                   "processes[0].threads[0].wait.nfds_known: 17 is out of range (0 to 16)");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"threads\":[{\"tid\":5,\"syscall\":{\"args\":"
                          "[\"0x1\",\"0x1\",\"0x1\",\"0x1\",\"0x1\",\"0x1\",\"0x1\"]}}]}]}}",
                   "processes[0].threads[0].syscall.args: not an array of at most 6 values");
}

Test(record, an_order_the_analysis_relies_on_is_checked)
{
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"threads\":[{\"tid\":7},{\"tid\":6}]}]}}",
                   "processes[0]: threads not in increasing order of tid (thread 1)");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"threads\":[{\"tid\":7}]},"
                          "{\"pid\":6,\"threads\":[{\"tid\":7}]}]}}",
                   "threads: tid 7 twice");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5},{\"pid\":5}]}}", "processes: pid 5 twice");
    expect_refused(HEADER "\"snapshot\":{\"processes\":[{\"pid\":5,\"mappings\":[{\"start\":\"0x1000\",\"end\":"
                          "\"0x3000\"},{\"start\":\"0x2000\",\"end\":\"0x4000\"}]}]}}",
                   "mappings not in increasing order of address (mapping 1)");
    expect_refused(HEADER "\"snapshot\":{\"unix_peers\":[{\"inode\":\"0x9\"},{\"inode\":\"0x2\"}]}}",
                   "unix_peers not in increasing order of inode");
}

Test(record, nesting_and_size_are_bounded)
{
    char deep[512] = HEADER "\"snapshot\":{\"x\":";
    for (int i = 0; i < 60; i++)
        strcat(deep, "[");
    expect_refused(deep, "too deep");

    /* a gzip stream that claims far more than a snapshot may be: refused once past the bound, not read whole */
    size_t length = RECORD_DOCUMENT_MAX + (size_t)(1 << 20);
    char *spaces = malloc(length);
    cr_assert_not_null(spaces);
    memset(spaces, ' ', length);
    uLongf compressed_length = compressBound(length);
    unsigned char *compressed = malloc(compressed_length);
    z_stream stream = { 0 };
    cr_assert_eq(deflateInit2(&stream, 1, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
    stream.next_in = (Bytef *)spaces;
    stream.avail_in = (uInt)length;
    stream.next_out = compressed;
    stream.avail_out = (uInt)compressed_length;
    cr_assert_eq(deflate(&stream, Z_FINISH), Z_STREAM_END);
    size_t used = stream.total_out;
    deflateEnd(&stream);
    free(spaces);
    struct hd_snapshot *snapshot = NULL;
    struct record_analysis settings;
    char error[512];
    cr_assert_neq(record_parse(compressed, used, &snapshot, &settings, error, sizeof error), 0);
    cr_assert(strstr(error, "once decompressed: not read"), "%s", error);
    free(compressed);

    /* few bytes, but more objects than json-c should build for any snapshot: refused before it is parsed */
    size_t count = RECORD_OBJECTS_MAX + 1;
    char *objects = malloc(sizeof HEADER + 32 + 3 * count);
    cr_assert_not_null(objects);
    char *at = objects + sprintf(objects, "%s\"snapshot\":{\"departed\":[", HEADER);
    for (size_t i = 0; i < count; i++)
        at += sprintf(at, "%s{}", i ? "," : "");
    strcpy(at, "]}}");
    expect_refused(objects, "objects and");
    free(objects);
}

Test(record, a_missing_file_says_so)
{
    struct hd_snapshot *snapshot = NULL;
    struct record_analysis settings;
    char error[512];
    cr_assert_neq(record_load("/nonexistent/snapshot", &snapshot, &settings, error, sizeof error), 0);
    cr_assert_str_eq(error, "cannot open /nonexistent/snapshot: No such file or directory");
}
