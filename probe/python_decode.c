/* Line tables and string code units of CPython (python_decode.h). */
#include "python_decode.h"

#include <stdbool.h>
#include <string.h>

/* A line delta in a 3.10 table that means "these instructions have no line" (lnotab_notes.txt of 3.10). */
#define NO_LINE_310 (-128)

/* The kinds of a 3.11 location entry (bits 3-6 of its first byte; Objects/locations.md of 3.11). */
enum location_kind {
    LOCATION_SHORT_LAST = 9,     /* 0-9: same line, one byte of columns */
    LOCATION_ONE_LINE_FIRST = 10, /* 10-12: line + (kind - 10), two bytes of columns */
    LOCATION_ONE_LINE_LAST = 12,
    LOCATION_NO_COLUMNS = 13,    /* svarint line delta */
    LOCATION_LONG = 14,          /* svarint line delta, then end line, column and end column varints */
    LOCATION_NONE = 15,          /* no location: the line is unknown, the running line unchanged */
};

/* A varint has 6 bits a byte; past this many bytes it cannot be a line delta of a real program (2^30 lines). */
#define VARINT_BYTES_MAX 5

int probe_python_line_310(const uint8_t *table, size_t size, int first_line, int64_t offset)
{
    if (offset < 0)
        return first_line;
    int64_t end = 0;
    int64_t line = first_line; /* at most 32,767 pairs of a 64 KiB table, 127 lines each: no overflow */
    bool has_line = false;
    for (size_t i = 0; i + 1 < size; i += 2) {
        end += table[i];
        int delta = (int8_t)table[i + 1];
        has_line = delta != NO_LINE_310;
        if (has_line)
            line += delta;
        /* an entry that covers no bytecode (delta 0) only moves the line */
        if (offset < end)
            return has_line && line > 0 && line <= INT32_MAX ? (int)line : 0;
    }
    return 0;
}

/* The unsigned varint that starts at table[*at], whose bytes all lie before `end` (the next entry's first byte):
 * 6 bits a byte, least significant first, bit 6 set on every byte but the last. False when it runs past the entry
 * or past VARINT_BYTES_MAX bytes. */
static bool read_varint(const uint8_t *table, size_t end, size_t *at, uint32_t *value)
{
    uint32_t result = 0;
    for (unsigned shift = 0, count = 0; *at < end && count < VARINT_BYTES_MAX; shift += 6, count++) {
        uint8_t byte = table[(*at)++];
        result |= (uint32_t)(byte & 63) << shift;
        if (!(byte & 64)) {
            *value = result;
            return true;
        }
    }
    return false;
}

static bool read_signed_varint(const uint8_t *table, size_t end, size_t *at, int64_t *value)
{
    uint32_t raw;
    if (!read_varint(table, end, at, &raw))
        return false;
    *value = raw & 1 ? -(int64_t)(raw >> 1) : (int64_t)(raw >> 1);
    return true;
}

/* The line delta of the entry whose first byte is table[start] and which ends before `end`; false when its bytes
 * do not hold what its kind says. */
static bool location_line_delta(const uint8_t *table, size_t start, size_t end, enum location_kind kind,
                                int64_t *delta)
{
    size_t at = start + 1;
    *delta = 0;
    if (kind == LOCATION_NO_COLUMNS || kind == LOCATION_LONG)
        return read_signed_varint(table, end, &at, delta);
    if (kind >= LOCATION_ONE_LINE_FIRST && kind <= LOCATION_ONE_LINE_LAST)
        *delta = kind - LOCATION_ONE_LINE_FIRST;
    return true;
}

int probe_python_line_311(const uint8_t *table, size_t size, int first_line, int64_t offset)
{
    if (offset < 0)
        return first_line;
    int64_t end = 0;
    int64_t line = first_line;
    size_t start = 0;
    while (start < size) {
        if (!(table[start] & 0x80))
            return 0; /* not the first byte of an entry: a table we cannot read */
        enum location_kind kind = (enum location_kind)((table[start] >> 3) & 15);
        int64_t units = (table[start] & 7) + 1;
        size_t next = start + 1;
        while (next < size && !(table[next] & 0x80))
            next++;
        int64_t delta;
        if (!location_line_delta(table, start, next, kind, &delta))
            return 0;
        line += delta;
        if (line < INT32_MIN || line > INT32_MAX)
            return 0;
        end += units * 2; /* code units of two bytes (_Py_CODEUNIT) */
        if (offset < end)
            return kind != LOCATION_NONE && line > 0 ? (int)line : 0;
        start = next;
    }
    return 0;
}

/* ---- strings ----------------------------------------------------------------------------------------------------- */

static uint32_t code_unit(const uint8_t *units, size_t index, unsigned width)
{
    if (width == 1)
        return units[index];
    if (width == 2) {
        uint16_t value;
        memcpy(&value, units + index * 2, 2);
        return value;
    }
    uint32_t value;
    memcpy(&value, units + index * 4, 4);
    return value;
}

/* The UTF-8 bytes of `code_point` in `bytes`; how many. */
static size_t utf8_encode(uint32_t code_point, char bytes[4])
{
    if (code_point == 0 || (code_point >= 0xd800 && code_point <= 0xdfff) || code_point > 0x10ffff)
        code_point = 0xfffd; /* a C string, valid UTF-8: the replacement character */
    if (code_point < 0x80) {
        bytes[0] = (char)code_point;
        return 1;
    }
    if (code_point < 0x800) {
        bytes[0] = (char)(0xc0 | (code_point >> 6));
        bytes[1] = (char)(0x80 | (code_point & 0x3f));
        return 2;
    }
    if (code_point < 0x10000) {
        bytes[0] = (char)(0xe0 | (code_point >> 12));
        bytes[1] = (char)(0x80 | ((code_point >> 6) & 0x3f));
        bytes[2] = (char)(0x80 | (code_point & 0x3f));
        return 3;
    }
    bytes[0] = (char)(0xf0 | (code_point >> 18));
    bytes[1] = (char)(0x80 | ((code_point >> 12) & 0x3f));
    bytes[2] = (char)(0x80 | ((code_point >> 6) & 0x3f));
    bytes[3] = (char)(0x80 | (code_point & 0x3f));
    return 4;
}

size_t probe_python_text_utf8(const uint8_t *units, size_t count, unsigned width, char *out, size_t size)
{
    if (size == 0)
        return 0;
    out[0] = '\0';
    if (width != 1 && width != 2 && width != 4)
        return 0;
    size_t length = 0;
    for (size_t i = 0; i < count; i++) {
        char bytes[4];
        size_t encoded = utf8_encode(code_unit(units, i, width), bytes);
        if (length + encoded >= size)
            break;
        memcpy(out + length, bytes, encoded);
        length += encoded;
    }
    out[length] = '\0';
    return length;
}
