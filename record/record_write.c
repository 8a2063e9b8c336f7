/* Saving a snapshot (record.h): the tables of fields.c walked into the streaming JSON writer, the document then
 * written plain or, when large, gzip-compressed. */
#include "record.h"

#include "fields.h"
#include "json_writer.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* A target's bytes, exactly: valid UTF-8 as a JSON string, anything else as {"bytes": "<hex>"} (a JSON string
 * cannot hold a byte that is not UTF-8 without an escape that readers undo differently). */
static void write_bytes(struct report_json *json, const char *key, const char *bytes, size_t length)
{
    if (report_json_is_utf8(bytes, length)) {
        report_json_bytes(json, key, bytes, length);
        return;
    }
    char *hex cleanup_free = malloc(2 * length + 1);
    if (!hex) {
        json->failed = true;
        return;
    }
    for (size_t i = 0; i < length; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)bytes[i]);
    report_json_begin_object(json, key);
    report_json_name(json, "bytes", hex);
    report_json_end_object(json);
}

static void write_string_or_null(struct report_json *json, const char *key, const char *text)
{
    if (text)
        write_bytes(json, key, text, strlen(text));
    else
        report_json_null(json, key);
}

static void write_struct(struct report_json *json, const char *key, const struct record_struct *table,
                         const void *object);

static size_t count_at(const void *object, size_t offset)
{
    size_t count;
    memcpy(&count, (const char *)object + offset, sizeof count);
    return count;
}

static void write_field(struct report_json *json, const struct record_field *field, const void *object)
{
    const char *at = (const char *)object + field->offset;
    const char *key = field->key;
    switch (field->kind) {
    case RECORD_BOOL:
        report_json_bool(json, key, *(const bool *)at);
        return;
    case RECORD_CHAR:
        write_bytes(json, key, at, *at ? 1 : 0);
        return;
    case RECORD_INT:
    case RECORD_ENUM: {
        int value;
        memcpy(&value, at, sizeof value);
        report_json_int(json, key, value);
        return;
    }
    case RECORD_UNSIGNED: {
        unsigned value;
        memcpy(&value, at, sizeof value);
        report_json_int(json, key, value);
        return;
    }
    case RECORD_LONG: {
        int64_t value;
        memcpy(&value, at, sizeof value);
        report_json_int(json, key, value);
        return;
    }
    case RECORD_U64: {
        uint64_t value;
        memcpy(&value, at, sizeof value);
        report_json_hex(json, key, value);
        return;
    }
    case RECORD_DOUBLE: {
        double value;
        memcpy(&value, at, sizeof value);
        report_json_double(json, key, value);
        return;
    }
    case RECORD_TEXT:
        write_bytes(json, key, at, strnlen(at, field->size));
        return;
    case RECORD_STRING:
    case RECORD_STATIC: {
        const char *text;
        memcpy(&text, at, sizeof text);
        write_string_or_null(json, key, text);
        return;
    }
    case RECORD_U64S:
        report_json_begin_array(json, key);
        for (long i = 0; i < field->limit; i++) {
            uint64_t value;
            memcpy(&value, at + (size_t)i * sizeof value, sizeof value);
            report_json_hex(json, NULL, value);
        }
        report_json_end_array(json);
        return;
    case RECORD_INTS:
        report_json_begin_array(json, key);
        for (long i = 0; i < field->limit; i++) {
            int value;
            memcpy(&value, at + (size_t)i * sizeof value, sizeof value);
            report_json_int(json, NULL, value);
        }
        report_json_end_array(json);
        return;
    case RECORD_STRUCT:
        write_struct(json, key, field->element, at);
        return;
    case RECORD_ARRAY: {
        const char *elements;
        memcpy(&elements, at, sizeof elements);
        size_t count = count_at(object, field->count_offset);
        report_json_begin_array(json, key);
        for (size_t i = 0; i < count; i++)
            write_struct(json, NULL, field->element, elements + i * field->element->size);
        report_json_end_array(json);
        return;
    }
    case RECORD_OPTIONAL: {
        const void *element;
        memcpy(&element, at, sizeof element);
        if (element)
            write_struct(json, key, field->element, element);
        else
            report_json_null(json, key);
        return;
    }
    case RECORD_PIDS: {
        const pid_t *pids;
        memcpy(&pids, at, sizeof pids);
        size_t count = count_at(object, field->count_offset);
        report_json_begin_array(json, key);
        for (size_t i = 0; i < count; i++)
            report_json_int(json, NULL, pids[i]);
        report_json_end_array(json);
        return;
    }
    case RECORD_ARGV: {
        char *const *argv;
        memcpy(&argv, at, sizeof argv);
        size_t count = count_at(object, field->count_offset);
        report_json_begin_array(json, key);
        for (size_t i = 0; i < count; i++)
            write_string_or_null(json, NULL, argv[i]);
        report_json_end_array(json);
        return;
    }
    case RECORD_CAPACITY:
    case RECORD_DERIVED:
        return;
    }
}

static void write_struct(struct report_json *json, const char *key, const struct record_struct *table,
                         const void *object)
{
    report_json_begin_object(json, key);
    for (size_t i = 0; i < table->nfields; i++)
        write_field(json, &table->fields[i], object);
    report_json_end_object(json);
}

static bool write_document(FILE *out, const struct hd_snapshot *snapshot, const struct record_analysis *analysis)
{
    struct report_json *json cleanup_free = malloc(sizeof *json);
    if (!json)
        return false;
    report_json_start(json, out, false);
    report_json_begin_object(json, NULL);
    report_json_name(json, "format", RECORD_FORMAT);
    report_json_int(json, "version", RECORD_FORMAT_VERSION);
    report_json_name(json, "written_by", "hangdoc " HANGDOC_VERSION);
    report_json_name(json, "commit", HANGDOC_COMMIT);
    report_json_begin_object(json, "analysis");
    report_json_double(json, "stuck_after_s", analysis->stuck_after_s);
    report_json_end_object(json);
    write_struct(json, "snapshot", &record_snapshot_struct, snapshot);
    report_json_end_object(json);
    return report_json_finish(json);
}

static bool write_all(int fd, const char *bytes, size_t length)
{
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return false;
        bytes += written;
        length -= (size_t)written;
    }
    return true;
}

/* gzip, in chunks that fit gzwrite's unsigned length. */
static bool write_compressed(int fd, const char *bytes, size_t length)
{
    int own = dup(fd);
    gzFile gz = own >= 0 ? gzdopen(own, "wb6") : NULL;
    if (!gz) {
        if (own >= 0)
            close(own);
        errno = errno ? errno : ENOMEM;
        return false;
    }
    bool written = true;
    for (size_t done = 0; written && done < length;) {
        unsigned chunk = length - done > (1u << 30) ? 1u << 30 : (unsigned)(length - done);
        written = gzwrite(gz, bytes + done, chunk) == (int)chunk;
        done += chunk;
    }
    if (gzclose(gz) != Z_OK)
        written = false;
    if (!written && !errno)
        errno = EIO;
    return written;
}

/* mkostemp makes the file 0600: it gets what open(O_CREAT, 0666) would have given it under the user's umask, as
 * the report files have. */
static int permit_as_created(const char *path)
{
    mode_t mask = umask(0);
    umask(mask);
    return chmod(path, 0666 & ~mask);
}

int record_save(const char *path, const struct hd_snapshot *snapshot, const struct record_analysis *analysis,
                char *error, size_t error_size)
{
    char *document cleanup_free = NULL;
    size_t length = 0;
    FILE *memory = open_memstream(&document, &length);
    if (!memory) {
        snprintf(error, error_size, "out of memory");
        return -ENOMEM;
    }
    bool made = write_document(memory, snapshot, analysis);
    if (fclose(memory) != 0 || !made) {
        snprintf(error, error_size, "out of memory while writing the snapshot");
        return -ENOMEM;
    }
    bool to_stdout = strcmp(path, "-") == 0;
    /* written beside the file, then renamed over it: a write that fails half-way (a full disk) leaves the snapshot
     * that was there, not half of a new one */
    char *temporary cleanup_free = NULL;
    if (!to_stdout && asprintf(&temporary, "%s.XXXXXX", path) < 0) {
        snprintf(error, error_size, "out of memory");
        return -ENOMEM;
    }
    int fd = to_stdout ? STDOUT_FILENO : mkostemp(temporary, O_CLOEXEC);
    if (fd < 0) {
        int cause = errno;
        snprintf(error, error_size, "cannot create %s: %s", path, strerror(cause));
        return -cause;
    }
    errno = 0;
    bool written = length > RECORD_COMPRESS_FROM ? write_compressed(fd, document, length)
                                                 : write_all(fd, document, length);
    int cause = written ? 0 : errno ? errno : EIO;
    if (!to_stdout) {
        /* NFS and quotas may say so only at close */
        bool kept = close(fd) == 0 && written && permit_as_created(temporary) == 0 && rename(temporary, path) == 0;
        if (written && !kept) {
            cause = errno ? errno : EIO;
            written = false;
        }
        if (!written)
            unlink(temporary);
    }
    if (!written) {
        snprintf(error, error_size, "cannot write %s: %s", to_stdout ? "the snapshot" : path, strerror(cause));
        return -cause;
    }
    return 0;
}
