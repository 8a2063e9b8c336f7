/* The inputs of `hangdoc merge`: files, directories, standard input (merge_input.h). */
#include "merge_input.h"

#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* json-c's default nesting bound: a report nests about eight deep, so deeper input is not one */
#define DOCUMENT_DEPTH_MAX 64
#define READ_CHUNK 65536

HD_DEFINE_CLEANUP(json_tokener, json_tokener_free)

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Feeds `length` bytes of `chunk` to the tokener, handing each complete document to the merge. Returns false when
 * memory ran out; sets *broken (and stops) when the stream is not JSON. *pending says whether a document was begun
 * and not finished, so that the end of the stream can tell a cut document from trailing white space. */
static bool feed(struct report_merge *merge, json_tokener *tokener, const char *chunk, size_t length,
                 const char *source, bool *pending, bool *broken)
{
    size_t offset = 0;
    while (offset < length) {
        if (!*pending) {
            while (offset < length && is_space(chunk[offset]))
                offset++;
            if (offset == length)
                return true;
        }
        *pending = true;
        json_object *document = json_tokener_parse_ex(tokener, chunk + offset, (int)(length - offset));
        enum json_tokener_error error = json_tokener_get_error(tokener);
        if (error == json_tokener_continue)
            return true;
        if (error != json_tokener_success) {
            char why[200];
            snprintf(why, sizeof why, "not JSON: %s (the rest of it is not read)", json_tokener_error_desc(error));
            *broken = true;
            return report_merge_skip(merge, source, why);
        }
        size_t used = json_tokener_get_parse_end(tokener);
        offset += used > 0 ? used : length - offset;
        *pending = false;
        bool added = report_merge_add(merge, document, source);
        json_object_put(document);
        json_tokener_reset(tokener);
        if (!added)
            return false;
    }
    return true;
}

bool report_merge_read_stream(struct report_merge *merge, FILE *stream, const char *source)
{
    json_tokener *tokener hd_cleanup(json_tokener_free) = json_tokener_new_ex(DOCUMENT_DEPTH_MAX);
    char *chunk cleanup_free = malloc(READ_CHUNK);
    if (!tokener || !chunk)
        return false;
    bool ok = true, pending = false, broken = false;
    size_t got;
    while (ok && !broken && (got = fread(chunk, 1, READ_CHUNK, stream)) > 0)
        ok = feed(merge, tokener, chunk, got, source, &pending, &broken);
    if (ok && !broken && ferror(stream)) {
        char why[200];
        snprintf(why, sizeof why, "could not be read to the end: %s", strerror(errno));
        ok = report_merge_skip(merge, source, why);
    } else if (ok && !broken && pending) {
        ok = report_merge_skip(merge, source, "ends inside a JSON document (cut short?)");
    }
    return ok;
}

static bool read_file(struct report_merge *merge, const char *path)
{
    FILE *file = fopen(path, "re");
    if (!file) {
        char why[200];
        snprintf(why, sizeof why, "cannot be opened: %s", strerror(errno));
        return report_merge_skip(merge, path, why);
    }
    bool ok = report_merge_read_stream(merge, file, path);
    fclose(file);
    return ok;
}

static int json_file_only(const struct dirent *entry)
{
    size_t length = strlen(entry->d_name);
    return entry->d_name[0] != '.' && length > 5 && strcmp(entry->d_name + length - 5, ".json") == 0;
}

static bool read_directory(struct report_merge *merge, const char *path)
{
    struct dirent **entries = NULL;
    int count = scandir(path, &entries, json_file_only, alphasort);
    if (count < 0) {
        char why[200];
        snprintf(why, sizeof why, "cannot be listed: %s", strerror(errno));
        return report_merge_skip(merge, path, why);
    }
    bool ok = true;
    for (int i = 0; i < count; i++) {
        if (ok) {
            size_t length = strlen(path) + strlen(entries[i]->d_name) + 2;
            char *file_path = malloc(length);
            if (file_path) {
                snprintf(file_path, length, "%s/%s", path, entries[i]->d_name);
                struct stat status;
                /* a directory named x.json is not descended into */
                if (stat(file_path, &status) == 0 && S_ISDIR(status.st_mode))
                    ok = report_merge_skip(merge, file_path, "is a directory (directories are not descended)");
                else
                    ok = read_file(merge, file_path);
            }
            ok = ok && file_path;
            free(file_path);
        }
        free(entries[i]);
    }
    free(entries);
    if (ok && count == 0)
        ok = report_merge_skip(merge, path, "holds no file whose name ends in .json");
    return ok;
}

bool report_merge_read_path(struct report_merge *merge, const char *path)
{
    if (strcmp(path, "-") == 0)
        return report_merge_read_stream(merge, stdin, "-");
    struct stat status;
    if (stat(path, &status) == 0 && S_ISDIR(status.st_mode))
        return read_directory(merge, path);
    return read_file(merge, path);
}
