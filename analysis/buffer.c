/* Text buffer and escaping (buffer.h). */
#include "buffer.h"

#include "util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct report_buffer *buffer, size_t more)
{
    if (buffer->failed)
        return false;
    if (buffer->length + more + 1 <= buffer->cap)
        return true;
    size_t cap = buffer->cap ? buffer->cap : 256;
    while (cap < buffer->length + more + 1)
        cap *= 2;
    char *grown = realloc(buffer->data, cap);
    if (!grown) {
        buffer->failed = true;
        return false;
    }
    buffer->data = grown;
    buffer->cap = cap;
    return true;
}

void report_buffer_append(struct report_buffer *buffer, const char *text, size_t length)
{
    if (!reserve(buffer, length))
        return;
    memcpy(buffer->data + buffer->length, text, length);
    buffer->length += length;
    buffer->data[buffer->length] = '\0';
}

void report_buffer_puts(struct report_buffer *buffer, const char *text)
{
    report_buffer_append(buffer, text, strlen(text));
}

void report_buffer_printf(struct report_buffer *buffer, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char small[256];
    int needed = vsnprintf(small, sizeof small, format, args);
    va_end(args);
    if (needed < 0)
        return;
    if ((size_t)needed < sizeof small) {
        report_buffer_append(buffer, small, (size_t)needed);
        return;
    }
    if (!reserve(buffer, (size_t)needed))
        return;
    va_start(args, format);
    vsnprintf(buffer->data + buffer->length, (size_t)needed + 1, format, args);
    va_end(args);
    buffer->length += (size_t)needed;
}

/* Length of the valid UTF-8 sequence at `p` (1..4) and its code point, or 0 when the bytes are not one.
 * Overlong forms, surrogates and code points above U+10FFFF are invalid (RFC 3629). */
static size_t utf8_sequence(const unsigned char *p, size_t available, uint32_t *code_point)
{
    static const struct {
        unsigned char mask, value;
        size_t length;
        uint32_t minimum;
    } leads[] = {
        { 0x80, 0x00, 1, 0 }, { 0xE0, 0xC0, 2, 0x80 }, { 0xF0, 0xE0, 3, 0x800 }, { 0xF8, 0xF0, 4, 0x10000 },
    };
    for (size_t i = 0; i < COUNT(leads); i++) {
        if ((p[0] & leads[i].mask) != leads[i].value)
            continue;
        size_t length = leads[i].length;
        if (length > available)
            return 0;
        uint32_t value = p[0] & (unsigned char)~leads[i].mask & 0x7F;
        for (size_t k = 1; k < length; k++) {
            if ((p[k] & 0xC0) != 0x80)
                return 0;
            value = value << 6 | (p[k] & 0x3F);
        }
        if (value < leads[i].minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))
            return 0;
        *code_point = value;
        return length;
    }
    return 0;
}

static bool is_bidi_control(uint32_t code_point)
{
    return (code_point >= 0x202A && code_point <= 0x202E) || (code_point >= 0x2066 && code_point <= 0x2069);
}

void report_buffer_escaped(struct report_buffer *buffer, const char *bytes, size_t length)
{
    static const struct {
        unsigned char byte;
        const char *escape;
    } named[] = { { '\n', "\\n" }, { '\t', "\\t" }, { '\r', "\\r" }, { 0x1b, "\\e" }, { '\\', "\\\\" } };
    const unsigned char *p = (const unsigned char *)bytes, *end = p + length;
    while (p < end) {
        uint32_t code_point = 0;
        size_t sequence = utf8_sequence(p, (size_t)(end - p), &code_point);
        bool control = sequence == 1 && (code_point < 0x20 || code_point == 0x7F || code_point == '\\');
        bool c1 = sequence == 2 && code_point >= 0x80 && code_point <= 0x9F;
        if (sequence > 0 && !control && !c1 && !is_bidi_control(code_point)) {
            report_buffer_append(buffer, (const char *)p, sequence);
            p += sequence;
            continue;
        }
        if (sequence == 0 || c1 || control) {
            /* one byte at a time: a C1 control is two bytes, each shown */
            size_t count = sequence == 0 ? 1 : sequence;
            for (size_t k = 0; k < count; k++) {
                const char *escape = NULL;
                for (size_t n = 0; n < COUNT(named); n++)
                    if (named[n].byte == p[k])
                        escape = named[n].escape;
                if (escape)
                    report_buffer_puts(buffer, escape);
                else
                    report_buffer_printf(buffer, "\\x%02x", p[k]);
            }
            p += count;
            continue;
        }
        report_buffer_printf(buffer, "\\u{%04X}", (unsigned)code_point);
        p += sequence;
    }
}

char *report_escape(const char *text)
{
    struct report_buffer buffer = { 0 };
    report_buffer_escaped(&buffer, text, strlen(text));
    if (!buffer.data && !buffer.failed)
        return strdup("");
    if (buffer.failed) {
        report_buffer_release(&buffer);
        return NULL;
    }
    return buffer.data;
}

void report_buffer_release(struct report_buffer *buffer)
{
    free(buffer->data);
    *buffer = (struct report_buffer){ 0 };
}
