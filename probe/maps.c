/* maps parsing and reading (maps.h). */
#include "maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAPS_READ_CHUNK (64 * 1024)

static bool take_hex(const char **cursor, const char *end, uint64_t *value)
{
    const char *p = *cursor;
    uint64_t result = 0;
    const char *start = p;
    for (; p < end; p++) {
        unsigned digit;
        if (*p >= '0' && *p <= '9')
            digit = (unsigned)(*p - '0');
        else if (*p >= 'a' && *p <= 'f')
            digit = (unsigned)(*p - 'a' + 10);
        else if (*p >= 'A' && *p <= 'F')
            digit = (unsigned)(*p - 'A' + 10);
        else
            break;
        if (result >> 60)
            return false;
        result = result << 4 | digit;
    }
    if (p == start)
        return false;
    *cursor = p;
    *value = result;
    return true;
}

static bool take_decimal(const char **cursor, const char *end, uint64_t *value)
{
    const char *p = *cursor;
    uint64_t result = 0;
    const char *start = p;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (result > (UINT64_MAX - 9) / 10)
            return false;
        result = result * 10 + (uint64_t)(*p - '0');
    }
    if (p == start)
        return false;
    *cursor = p;
    *value = result;
    return true;
}

static bool take_char(const char **cursor, const char *end, char expected)
{
    if (*cursor >= end || **cursor != expected)
        return false;
    (*cursor)++;
    return true;
}

static void skip_spaces(const char **cursor, const char *end)
{
    while (*cursor < end && (**cursor == ' ' || **cursor == '\t'))
        (*cursor)++;
}

bool probe_parse_maps_line(const char *line, size_t length, struct hd_mapping *out)
{
    *out = (struct hd_mapping){ 0 };
    const char *p = line, *end = line + length;
    while (end > p && end[-1] == '\n')
        end--;
    uint64_t major, minor;
    if (!take_hex(&p, end, &out->start) || !take_char(&p, end, '-') || !take_hex(&p, end, &out->end) ||
        out->end < out->start || !take_char(&p, end, ' '))
        return false;
    if (end - p < 5 || p[4] != ' ')
        return false;
    memcpy(out->permissions, p, 4);
    out->permissions[4] = '\0';
    p += 5;
    if (!take_hex(&p, end, &out->offset) || !take_char(&p, end, ' ') || !take_hex(&p, end, &major) ||
        !take_char(&p, end, ':') || !take_hex(&p, end, &minor) || !take_char(&p, end, ' ') ||
        !take_decimal(&p, end, &out->inode))
        return false;
    out->device_major = (unsigned)major;
    out->device_minor = (unsigned)minor;
    skip_spaces(&p, end);
    if (p < end) {
        out->path = strndup(p, (size_t)(end - p));
        if (!out->path)
            return false;
    }
    return true;
}

int probe_read_maps(pid_t pid, size_t max_mappings, struct hd_mapping **mappings, size_t *count, bool *truncated)
{
    *mappings = NULL;
    *count = 0;
    *truncated = false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *file = fopen(path, "re");
    if (!file)
        return -errno;
    /* a process with a few hundred libraries has thousands of mappings: read them in a few large pieces, not in
     * stdio's 4 KiB ones (each read() of the file takes the target's mmap lock again) */
    char *buffer = malloc(MAPS_READ_CHUNK);
    if (buffer)
        setvbuf(file, buffer, _IOFBF, MAPS_READ_CHUNK);
    char *line = NULL;
    size_t line_cap = 0, cap = 0;
    ssize_t length;
    int result = 0;
    while ((length = getline(&line, &line_cap, file)) > 0) {
        if (*count == max_mappings) {
            *truncated = true;
            break;
        }
        if (*count == cap) {
            cap = cap ? cap * 2 : 64;
            struct hd_mapping *grown = reallocarray(*mappings, cap, sizeof *grown);
            if (!grown) {
                result = -ENOMEM;
                break;
            }
            *mappings = grown;
        }
        if (probe_parse_maps_line(line, (size_t)length, &(*mappings)[*count]))
            (*count)++;
    }
    free(line);
    fclose(file);
    free(buffer);
    /* The kernel lists mappings in address order already; nothing to sort. */
    return result;
}
