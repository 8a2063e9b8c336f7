/* libFuzzer harness: what hangdoc decodes of a CPython interpreter's memory (probe/python_decode.h,
 * probe/python_offsets.h), bytes a target controls: the 3.10 line table and the 3.11+ location table of a code
 * object, the code units of a str, and the _Py_DebugOffsets table at the start of a 3.13 _PyRuntime. The first
 * byte picks the decoder, the next eight the parameters (first line, instruction offset, width); the rest is the
 * table. Each decoder must stay inside the bytes, and every layout it accepts must keep each offset inside the span
 * the reader then reads of its struct. */
#include "python_decode.h"
#include "python_offsets.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int32_t take_i32(const uint8_t *bytes)
{
    uint32_t value;
    memcpy(&value, bytes, sizeof value);
    return (int32_t)value;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9)
        return 0;
    unsigned which = data[0] % 4;
    int first_line = take_i32(data + 1);
    int64_t offset = take_i32(data + 5);
    size_t length = size - 9;
    /* a copy of exactly `length` bytes: a read past the end is caught, not hidden by libFuzzer's own buffer */
    uint8_t *table = malloc(length ? length : 1);
    if (!table)
        return 0;
    memcpy(table, data + 9, length);
    switch (which) {
    case 0:
        sink += (uint64_t)probe_python_line_310(table, length, first_line, offset);
        break;
    case 1:
        sink += (uint64_t)probe_python_line_311(table, length, first_line, offset);
        break;
    case 2: {
        char text[1024 * 4 + 1];
        unsigned width = (unsigned)data[1] % 5;
        size_t count = width ? length / width : length;
        size_t written = probe_python_text_utf8(table, count, width, text, (size_t)data[2] * 17 % sizeof text);
        sink += written + (written ? (unsigned char)text[written - 1] : 0);
        break;
    }
    default: {
        /* every version with a table of its own: each lays it out otherwise */
        unsigned minor = 13 + (unsigned)data[1] % 2;
        const struct probe_python_layout *base = probe_python_layout_for(minor);
        if (!base)
            break;
        struct probe_python_layout layout = *base;
        const char *why = NULL;
        bool taken = probe_python_layout_from_debug_offsets(table, length, minor, &layout, &why);
        sink += taken ? layout.gil_locked + layout.gil_last_holder + layout.gil_size : (why ? strlen(why) : 0);
        break;
    }
    }
    free(table);
    return 0;
}
