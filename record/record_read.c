/* Reading a snapshot file (record.h): decompressed within a bound, parsed by json-c, then the tables of fields.c
 * walked over the document, every value checked against its member's kind before it is stored. A failure names
 * the place ("processes[2].threads[0].wait.kind") and what was wrong; the snapshot read so far is freed. */
#include "record.h"

#include "fields.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

HD_DEFINE_CLEANUP(json_tokener, json_tokener_free)
HD_DEFINE_CLEANUP(json_object, json_object_put)

/* The document nests ten deep (snapshot, processes, a thread, its samples, a sample's system call, its
 * arguments); more is not a snapshot. */
#define RECORD_DEPTH_MAX 24

struct reader {
    struct hd_snapshot *snapshot; /* keeps the "static" strings */
    char place[512];              /* where the walk is: "processes[2].threads[0].wait" */
    size_t place_length;
    char *error;
    size_t error_size;
};

__attribute__((format(printf, 2, 3))) static bool refuse(struct reader *reader, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int used = reader->place_length ? snprintf(reader->error, reader->error_size, "%s: ", reader->place) : 0;
    if (used >= 0 && (size_t)used < reader->error_size)
        vsnprintf(reader->error + used, reader->error_size - (size_t)used, format, args);
    va_end(args);
    return false;
}

/* Enters a member or an element for the messages; returns the length to go back to. */
static size_t enter(struct reader *reader, const char *key, size_t index)
{
    size_t before = reader->place_length;
    size_t room = sizeof reader->place - before;
    int added = key ? snprintf(reader->place + before, room, "%s%s", before ? "." : "", key)
                    : snprintf(reader->place + before, room, "[%zu]", index);
    reader->place_length = added < 0 || (size_t)added >= room ? sizeof reader->place - 1 : before + (size_t)added;
    return before;
}

static void leave(struct reader *reader, size_t before)
{
    reader->place_length = before;
    reader->place[before] = '\0';
}

static bool read_int64(struct reader *reader, json_object *value, int64_t low, int64_t high, int64_t *out)
{
    if (!json_object_is_type(value, json_type_int))
        return refuse(reader, "not an integer");
    errno = 0;
    int64_t number = json_object_get_int64(value);
    /* json-c clamps a number past int64 to its ends; an unsigned one past them it keeps as uint64 */
    if (errno != 0 || number < low || number > high ||
        (number == INT64_MAX && json_object_get_uint64(value) != (uint64_t)INT64_MAX))
        return refuse(reader, "%s is out of range (%" PRId64 " to %" PRId64 ")", json_object_get_string(value),
                      low, high);
    *out = number;
    return true;
}

/* "0x..." text: hex digits only, at most 16 of them. */
static bool read_u64(struct reader *reader, json_object *value, uint64_t *out)
{
    const char *text = json_object_is_type(value, json_type_string) ? json_object_get_string(value) : NULL;
    size_t length = text ? strlen(text) : 0;
    if (!text || length < 3 || length > 18 || text[0] != '0' || text[1] != 'x' ||
        strspn(text + 2, "0123456789abcdefABCDEF") != length - 2)
        return refuse(reader, "not an address or a 64-bit value (\"0x\" and up to 16 hex digits)");
    *out = strtoull(text + 2, NULL, 16);
    return true;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                                                                      : -1;
}

/* A target's bytes: a JSON string, or {"bytes": "<hex>"}. Returns a malloc'd NUL-terminated copy and its length;
 * no NUL may be inside (the model's strings end at the first). */
static char *read_bytes(struct reader *reader, json_object *value, size_t *length)
{
    json_object *hex = NULL;
    if (json_object_is_type(value, json_type_object) && json_object_object_length(value) == 1 &&
        json_object_object_get_ex(value, "bytes", &hex) && json_object_is_type(hex, json_type_string)) {
        size_t digits = (size_t)json_object_get_string_len(hex);
        const char *text = json_object_get_string(hex);
        if (digits % 2 != 0) {
            refuse(reader, "an odd number of hex digits");
            return NULL;
        }
        char *bytes = malloc(digits / 2 + 1);
        if (!bytes) {
            refuse(reader, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < digits / 2; i++) {
            int high = hex_digit(text[2 * i]), low = hex_digit(text[2 * i + 1]);
            if (high < 0 || low < 0 || (high == 0 && low == 0)) {
                free(bytes);
                refuse(reader, "\"bytes\" holds other than hex digits, or a NUL byte");
                return NULL;
            }
            bytes[i] = (char)(high << 4 | low);
        }
        bytes[digits / 2] = '\0';
        *length = digits / 2;
        return bytes;
    }
    if (!json_object_is_type(value, json_type_string)) {
        refuse(reader, "not a string");
        return NULL;
    }
    size_t size = (size_t)json_object_get_string_len(value);
    const char *text = json_object_get_string(value);
    if (memchr(text, '\0', size)) {
        refuse(reader, "a string with a NUL byte inside");
        return NULL;
    }
    char *copy = strndup(text, size);
    if (!copy)
        refuse(reader, "out of memory");
    *length = size;
    return copy;
}

static bool read_struct(struct reader *reader, json_object *object, const struct record_struct *table, void *out);

static void store_count(void *object, size_t offset, size_t count)
{
    memcpy((char *)object + offset, &count, sizeof count);
}

/* An array's elements, allocated and stored with their count before they are read, so that a failure half-way
 * leaves a snapshot hd_snapshot_free releases whole. */
static bool read_array(struct reader *reader, json_object *value, const struct record_field *field, void *object)
{
    if (json_object_is_type(value, json_type_null))
        return true;
    if (!json_object_is_type(value, json_type_array))
        return refuse(reader, "not an array");
    size_t count = json_object_array_length(value);
    if (count == 0)
        return true;
    size_t size = field->kind == RECORD_ARRAY ? field->element->size
                : field->kind == RECORD_PIDS  ? sizeof(pid_t)
                                              : sizeof(char *);
    /* argv ends with a NULL */
    char *elements = calloc(count + (field->kind == RECORD_ARGV), size);
    if (!elements)
        return refuse(reader, "out of memory for %zu elements", count);
    memcpy((char *)object + field->offset, &elements, sizeof elements);
    for (size_t i = 0; i < count; i++) {
        json_object *element = json_object_array_get_idx(value, i);
        size_t before = enter(reader, NULL, i);
        bool read = true;
        switch (field->kind) {
        case RECORD_ARRAY:
            store_count(object, field->count_offset, i + 1);
            read = read_struct(reader, element, field->element, elements + i * size);
            break;
        case RECORD_PIDS: {
            int64_t pid;
            read = read_int64(reader, element, 0, INT_MAX, &pid);
            ((pid_t *)(void *)elements)[i] = (pid_t)pid;
            store_count(object, field->count_offset, i + 1);
            break;
        }
        case RECORD_ARGV: {
            size_t length;
            char *text = read_bytes(reader, element, &length);
            ((char **)(void *)elements)[i] = text;
            read = text != NULL;
            if (read)
                store_count(object, field->count_offset, i + 1);
            break;
        }
        case RECORD_BOOL: case RECORD_CHAR: case RECORD_INT: case RECORD_UNSIGNED: case RECORD_LONG:
        case RECORD_U64: case RECORD_DOUBLE: case RECORD_ENUM: case RECORD_TEXT: case RECORD_STRING:
        case RECORD_STATIC: case RECORD_U64S: case RECORD_INTS: case RECORD_STRUCT: case RECORD_OPTIONAL:
        case RECORD_CAPACITY: case RECORD_DERIVED:
            read = refuse(reader, "not an array member (a bug of fields.c)");
            break;
        }
        if (!read)
            return false;
        leave(reader, before);
    }
    return true;
}

static bool read_fixed(struct reader *reader, json_object *value, const struct record_field *field, char *at)
{
    if (!json_object_is_type(value, json_type_array) || json_object_array_length(value) > (size_t)field->limit)
        return refuse(reader, "not an array of at most %ld values", field->limit);
    for (size_t i = 0; i < json_object_array_length(value); i++) {
        json_object *element = json_object_array_get_idx(value, i);
        size_t before = enter(reader, NULL, i);
        if (field->kind == RECORD_U64S) {
            uint64_t number;
            if (!read_u64(reader, element, &number))
                return false;
            memcpy(at + i * sizeof number, &number, sizeof number);
        } else {
            int64_t number;
            if (!read_int64(reader, element, INT_MIN, INT_MAX, &number))
                return false;
            int stored = (int)number;
            memcpy(at + i * sizeof stored, &stored, sizeof stored);
        }
        leave(reader, before);
    }
    return true;
}

static bool read_string_member(struct reader *reader, json_object *value, const struct record_field *field, char *at)
{
    if (json_object_is_type(value, json_type_null))
        return true;
    size_t length;
    char *text = read_bytes(reader, value, &length);
    if (!text)
        return false;
    if (field->kind == RECORD_STATIC && !hd_snapshot_keep_string(reader->snapshot, text))
        return refuse(reader, "out of memory");
    memcpy(at, &text, sizeof text);
    return true;
}

static bool read_small_bytes(struct reader *reader, json_object *value, const struct record_field *field, char *at)
{
    size_t length;
    char *text cleanup_free = read_bytes(reader, value, &length);
    if (!text)
        return false;
    size_t room = field->kind == RECORD_CHAR ? 1 : field->size - 1;
    if (length > room)
        return refuse(reader, "%zu bytes, more than the %zu this member holds", length, room);
    memcpy(at, text, length);
    if (field->kind == RECORD_TEXT)
        at[length] = '\0';
    return true;
}

static bool read_number(struct reader *reader, json_object *value, const struct record_field *field, char *at)
{
    int64_t number;
    switch (field->kind) {
    case RECORD_INT:
    case RECORD_ENUM: {
        if (!read_int64(reader, value, field->kind == RECORD_ENUM ? 0 : INT_MIN,
                        field->kind == RECORD_ENUM ? field->limit - 1 : INT_MAX, &number))
            return false;
        int integer = (int)number;
        memcpy(at, &integer, sizeof integer);
        return true;
    }
    case RECORD_UNSIGNED: {
        if (!read_int64(reader, value, 0, field->limit ? field->limit - 1 : UINT_MAX, &number))
            return false;
        unsigned natural = (unsigned)number;
        memcpy(at, &natural, sizeof natural);
        return true;
    }
    case RECORD_LONG:
        if (!read_int64(reader, value, INT64_MIN, INT64_MAX, &number))
            return false;
        memcpy(at, &number, sizeof number);
        return true;
    case RECORD_U64: {
        uint64_t address;
        if (!read_u64(reader, value, &address))
            return false;
        memcpy(at, &address, sizeof address);
        return true;
    }
    case RECORD_DOUBLE: {
        double real = NAN;
        if (json_object_is_type(value, json_type_double) || json_object_is_type(value, json_type_int))
            real = json_object_get_double(value);
        else if (!json_object_is_type(value, json_type_null))
            return refuse(reader, "not a number");
        memcpy(at, &real, sizeof real);
        return true;
    }
    case RECORD_BOOL: case RECORD_CHAR: case RECORD_TEXT: case RECORD_STRING: case RECORD_STATIC:
    case RECORD_U64S: case RECORD_INTS: case RECORD_STRUCT: case RECORD_ARRAY: case RECORD_OPTIONAL:
    case RECORD_PIDS: case RECORD_ARGV: case RECORD_CAPACITY: case RECORD_DERIVED:
        break;
    }
    return refuse(reader, "not a number member (a bug of fields.c)");
}

static bool read_field(struct reader *reader, json_object *value, const struct record_field *field, void *object)
{
    char *at = (char *)object + field->offset;
    switch (field->kind) {
    case RECORD_BOOL:
        if (!json_object_is_type(value, json_type_boolean))
            return refuse(reader, "not true or false");
        *(bool *)(void *)at = json_object_get_boolean(value);
        return true;
    case RECORD_CHAR:
    case RECORD_TEXT:
        return read_small_bytes(reader, value, field, at);
    case RECORD_INT:
    case RECORD_ENUM:
    case RECORD_UNSIGNED:
    case RECORD_LONG:
    case RECORD_U64:
    case RECORD_DOUBLE:
        return read_number(reader, value, field, at);
    case RECORD_STRING:
    case RECORD_STATIC:
        return read_string_member(reader, value, field, at);
    case RECORD_U64S:
    case RECORD_INTS:
        return read_fixed(reader, value, field, at);
    case RECORD_STRUCT:
        return read_struct(reader, value, field->element, at);
    case RECORD_ARRAY:
    case RECORD_PIDS:
    case RECORD_ARGV:
        return read_array(reader, value, field, object);
    case RECORD_OPTIONAL: {
        if (json_object_is_type(value, json_type_null))
            return true;
        void *element = calloc(1, field->element->size);
        if (!element)
            return refuse(reader, "out of memory");
        memcpy(at, &element, sizeof element);
        return read_struct(reader, value, field->element, element);
    }
    case RECORD_CAPACITY:
    case RECORD_DERIVED:
        return true;
    }
    return true;
}

/* A member absent from the file keeps its zero: a file of this format version names every member, but a later
 * reader may drop one. Members the file has and this table does not are ignored. */
static bool read_struct(struct reader *reader, json_object *object, const struct record_struct *table, void *out)
{
    if (!json_object_is_type(object, json_type_object))
        return refuse(reader, "not an object (%s)", table->name);
    for (size_t i = 0; i < table->nfields; i++) {
        const struct record_field *field = &table->fields[i];
        json_object *value;
        if (!json_object_object_get_ex(object, field->key, &value))
            continue;
        size_t before = enter(reader, field->key, 0);
        if (!read_field(reader, value, field, out))
            return false;
        leave(reader, before);
    }
    for (size_t i = 0; i < table->nfields; i++) {
        char *text = NULL;
        if (table->fields[i].required)
            memcpy(&text, (char *)out + table->fields[i].offset, sizeof text);
        if (table->fields[i].required && !text)
            return refuse(reader, "%s has no %s: every one has", table->name, table->fields[i].key);
    }
    for (size_t i = 0; i < table->nfields; i++)
        if (table->fields[i].kind == RECORD_CAPACITY) {
            size_t count;
            memcpy(&count, (char *)out + table->fields[i].count_offset, sizeof count);
            store_count(out, table->fields[i].offset, count);
        }
    return true;
}

/* ---- what the analysis relies on ------------------------------------------------------------------------------- */

static int compare_pids(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return x < y ? -1 : x > y;
}

/* Each pid and tid once in the snapshot; threads by tid, mappings and libraries by address, peers and pipe holders
 * by inode: the find functions search them. */
static bool check_order(struct reader *reader, const struct hd_snapshot *snapshot)
{
    size_t nids = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        nids += snapshot->processes[p].nthreads;
    pid_t *tids cleanup_free = calloc(nids + 1, sizeof *tids);
    pid_t *pids cleanup_free = calloc(snapshot->nprocesses + 1, sizeof *pids);
    if (!tids || !pids)
        return refuse(reader, "out of memory");
    nids = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        snprintf(reader->place, sizeof reader->place, "processes[%zu]", p);
        reader->place_length = strlen(reader->place);
        if (process->pid <= 0)
            return refuse(reader, "pid %d is not a process id", (int)process->pid);
        pids[p] = process->pid;
        for (size_t t = 0; t < process->nthreads; t++) {
            if (process->threads[t].tid <= 0 || (t > 0 && process->threads[t].tid <= process->threads[t - 1].tid))
                return refuse(reader, "threads not in increasing order of tid (thread %zu)", t);
            tids[nids++] = process->threads[t].tid;
        }
        for (size_t m = 0; m < process->nmappings; m++)
            if (process->mappings[m].start >= process->mappings[m].end ||
                (m > 0 && process->mappings[m].start < process->mappings[m - 1].end))
                return refuse(reader, "mappings not in increasing order of address (mapping %zu)", m);
        for (size_t l = 1; l < process->nlibraries; l++)
            if (process->libraries[l].start < process->libraries[l - 1].start)
                return refuse(reader, "libraries not in increasing order of address (library %zu)", l);
        for (size_t a = 0; a < process->argc; a++)
            if (!process->argv[a])
                return refuse(reader, "argv[%zu] is null", a);
    }
    leave(reader, 0);
    qsort(pids, snapshot->nprocesses, sizeof *pids, compare_pids);
    qsort(tids, nids, sizeof *tids, compare_pids);
    for (size_t i = 1; i < snapshot->nprocesses; i++)
        if (pids[i] == pids[i - 1])
            return refuse(reader, "processes: pid %d twice", (int)pids[i]);
    for (size_t i = 1; i < nids; i++)
        if (tids[i] == tids[i - 1])
            return refuse(reader, "threads: tid %d twice", (int)tids[i]);
    for (size_t i = 1; i < snapshot->nunix_peers; i++)
        if (snapshot->unix_peers[i].inode < snapshot->unix_peers[i - 1].inode)
            return refuse(reader, "unix_peers not in increasing order of inode");
    for (size_t i = 1; i < snapshot->noutside_pipe_holders; i++)
        if (snapshot->outside_pipe_holders[i].inode < snapshot->outside_pipe_holders[i - 1].inode)
            return refuse(reader, "outside_pipe_holders not in increasing order of inode");
    return true;
}

/* ---- the file ------------------------------------------------------------------------------------------------- */

/* A gzip member's contents, at most RECORD_DOCUMENT_MAX bytes, NUL-terminated; NULL after saying why. */
static char *inflate_document(struct reader *reader, const void *bytes, size_t length, size_t *inflated)
{
    z_stream stream = { .next_in = (Bytef *)(uintptr_t)bytes, .avail_in = (uInt)length };
    if (inflateInit2(&stream, 15 + 16) != Z_OK) {
        refuse(reader, "cannot decompress: out of memory");
        return NULL;
    }
    char *document cleanup_free = NULL;
    size_t capacity = 0, used = 0;
    int status = Z_OK;
    bool said = false;
    while (status == Z_OK) {
        if (capacity - used < 2) {
            if (capacity > RECORD_DOCUMENT_MAX) {
                refuse(reader, "larger than %u MiB once decompressed: not read", RECORD_DOCUMENT_MAX >> 20);
                said = true;
                break;
            }
            size_t wanted = capacity ? 2 * capacity : (size_t)1 << 20;
            wanted = wanted > RECORD_DOCUMENT_MAX + (size_t)2 ? RECORD_DOCUMENT_MAX + (size_t)2 : wanted;
            char *grown = realloc(document, wanted);
            if (!grown) {
                refuse(reader, "out of memory while decompressing");
                said = true;
                break;
            }
            document = grown;
            capacity = wanted;
        }
        stream.next_out = (Bytef *)document + used;
        stream.avail_out = (uInt)(capacity - 1 - used);
        status = inflate(&stream, Z_NO_FLUSH);
        used = capacity - 1 - stream.avail_out;
    }
    inflateEnd(&stream);
    if (status != Z_STREAM_END) {
        if (!said)
            refuse(reader, "cannot decompress: %s", status == Z_BUF_ERROR ? "the file is cut short"
                                                    : stream.msg             ? stream.msg
                                                                             : "corrupt data");
        return NULL;
    }
    document[used] = '\0';
    *inflated = used;
    return steal_pointer(&document);
}

static bool read_envelope(struct reader *reader, json_object *root, struct record_analysis *analysis,
                          json_object **snapshot)
{
    json_object *format, *version, *settings, *stuck_after;
    if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "format", &format) ||
        !json_object_is_type(format, json_type_string) ||
        strcmp(json_object_get_string(format), RECORD_FORMAT) != 0)
        return refuse(reader, "not a hangdoc snapshot (no \"format\": \"%s\")", RECORD_FORMAT);
    const char *written_by = "an unknown hangdoc";
    json_object *writer;
    if (json_object_object_get_ex(root, "written_by", &writer) && json_object_is_type(writer, json_type_string))
        written_by = json_object_get_string(writer);
    int64_t number = 0;
    if (!json_object_object_get_ex(root, "version", &version) || !json_object_is_type(version, json_type_int) ||
        (number = json_object_get_int64(version)) < 1)
        return refuse(reader, "a snapshot without a format version: not read");
    if (number > RECORD_FORMAT_VERSION)
        return refuse(reader, "written by %.64s in snapshot format %" PRId64 ", newer than format %d that this "
                              "hangdoc (%s) reads: analyse it with that version or a later one",
                      written_by, number, RECORD_FORMAT_VERSION, HANGDOC_VERSION);
    if (number < RECORD_FORMAT_VERSION)
        return refuse(reader, "written by %.64s in snapshot format %" PRId64 ", which this hangdoc no longer reads "
                              "(it reads format %d): analyse it with the version that saved it",
                      written_by, number, RECORD_FORMAT_VERSION);
    analysis->stuck_after_s = 0;
    if (json_object_object_get_ex(root, "analysis", &settings) &&
        json_object_object_get_ex(settings, "stuck_after_s", &stuck_after) &&
        (json_object_is_type(stuck_after, json_type_double) || json_object_is_type(stuck_after, json_type_int)))
        analysis->stuck_after_s = json_object_get_double(stuck_after);
    if (!(analysis->stuck_after_s >= 0 && analysis->stuck_after_s < 1e9))
        return refuse(reader, "analysis.stuck_after_s is not a duration");
    if (!json_object_object_get_ex(root, "snapshot", snapshot) || !json_object_is_type(*snapshot, json_type_object))
        return refuse(reader, "no \"snapshot\" object");
    return true;
}

/* json-c builds the whole document before a member is checked, at a few hundred bytes an object and tens a value:
 * 512 MiB of "{}," would take tens of gigabytes. Objects and values are counted first (over-counted: the
 * punctuation inside strings counts too) and a document with more than a snapshot of RECORD_THREADS_BUDGET
 * threads could have is refused before it is parsed. */
static bool within_budget(struct reader *reader, const char *bytes, size_t length)
{
    size_t objects = 0, values = 0;
    for (size_t i = 0; i < length; i++) {
        objects += bytes[i] == '{';
        values += bytes[i] == ',' || bytes[i] == '[' || bytes[i] == '{';
    }
    if (objects <= RECORD_OBJECTS_MAX && values <= RECORD_VALUES_MAX)
        return true;
    return refuse(reader, "%zu objects and %zu values, more than a snapshot of %d threads holds "
                          "(%d and %d): not read", objects, values, RECORD_THREADS_BUDGET, RECORD_OBJECTS_MAX,
                  RECORD_VALUES_MAX);
}

int record_parse(const void *bytes, size_t length, struct hd_snapshot **snapshot, struct record_analysis *analysis,
                 char *error, size_t error_size)
{
    *snapshot = NULL;
    error[0] = '\0';
    struct reader reader = { .error = error, .error_size = error_size };
    if (length > RECORD_FILE_MAX) {
        refuse(&reader, "larger than %u MiB: not read", RECORD_FILE_MAX >> 20);
        return -EFBIG;
    }
    const unsigned char *magic = bytes;
    char *inflated cleanup_free = NULL;
    if (length >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        size_t inflated_length = 0;
        if (!(inflated = inflate_document(&reader, bytes, length, &inflated_length)))
            return -EINVAL;
        bytes = inflated;
        length = inflated_length;
    }
    if (length > RECORD_DOCUMENT_MAX) {
        refuse(&reader, "larger than %u MiB: not read", RECORD_DOCUMENT_MAX >> 20);
        return -EFBIG;
    }
    if (!within_budget(&reader, bytes, length))
        return -EFBIG;
    json_tokener *tokener hd_cleanup(json_tokener_free) = json_tokener_new_ex(RECORD_DEPTH_MAX);
    if (!tokener) {
        refuse(&reader, "out of memory");
        return -ENOMEM;
    }
    json_object *root hd_cleanup(json_object_put) = json_tokener_parse_ex(tokener, bytes, (int)length);
    enum json_tokener_error parsed = json_tokener_get_error(tokener);
    if (parsed != json_tokener_success || !root) {
        refuse(&reader, "not a hangdoc snapshot: %s at byte %zu",
               parsed == json_tokener_continue ? "the JSON ends too early" : json_tokener_error_desc(parsed),
               json_tokener_get_parse_end(tokener));
        return -EINVAL;
    }
    const char *rest = (const char *)bytes + json_tokener_get_parse_end(tokener);
    size_t left = length - json_tokener_get_parse_end(tokener);
    while (left > 0 && strchr(" \t\r\n", *rest) && *rest) {
        rest++;
        left--;
    }
    if (left > 0) {
        refuse(&reader, "not a hangdoc snapshot: more after the document (byte %zu)",
               json_tokener_get_parse_end(tokener));
        return -EINVAL;
    }
    json_object *document;
    if (!read_envelope(&reader, root, analysis, &document))
        return -EINVAL;
    struct hd_snapshot *read hd_cleanup(hd_snapshot_free) = calloc(1, sizeof *read);
    if (!read) {
        refuse(&reader, "out of memory");
        return -ENOMEM;
    }
    reader.snapshot = read;
    if (!read_struct(&reader, document, &record_snapshot_struct, read) || !check_order(&reader, read))
        return -EINVAL;
    hd_snapshot_index_build(read);
    *snapshot = steal_pointer(&read);
    return 0;
}

int record_load(const char *path, struct hd_snapshot **snapshot, struct record_analysis *analysis, char *error,
                size_t error_size)
{
    *snapshot = NULL;
    bool from_stdin = strcmp(path, "-") == 0;
    int fd cleanup_fd = from_stdin ? -1 : open(path, O_RDONLY | O_CLOEXEC);
    if (!from_stdin && fd < 0) {
        int cause = errno;
        snprintf(error, error_size, "cannot open %s: %s", path, strerror(cause));
        return -cause;
    }
    int in = from_stdin ? STDIN_FILENO : fd;
    struct stat status;
    if (fstat(in, &status) == 0 && S_ISDIR(status.st_mode)) {
        snprintf(error, error_size, "%s is a directory", path);
        return -EISDIR;
    }
    size_t capacity = 1 << 16, used = 0;
    char *bytes cleanup_free = NULL;
    for (;;) {
        if (used == capacity || !bytes) {
            if (bytes)
                capacity *= 2;
            char *grown = capacity > RECORD_FILE_MAX + (size_t)1 ? NULL : realloc(bytes, capacity);
            if (!grown) {
                snprintf(error, error_size, "%s: larger than %u MiB, or out of memory: not read", path,
                         RECORD_FILE_MAX >> 20);
                return -EFBIG;
            }
            bytes = grown;
        }
        ssize_t got = read(in, bytes + used, capacity - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int cause = errno;
            snprintf(error, error_size, "cannot read %s: %s", path, strerror(cause));
            return -cause;
        }
        if (got == 0)
            break;
        used += (size_t)got;
    }
    char why[512];
    int parsed = record_parse(bytes, used, snapshot, analysis, why, sizeof why);
    if (parsed != 0)
        snprintf(error, error_size, "%s: %s", from_stdin ? "standard input" : path, why);
    return parsed;
}
