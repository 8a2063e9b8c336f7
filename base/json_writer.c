/* Streaming JSON writer (json_writer.h). */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void flush_pending(struct report_json *json)
{
    if (json->npending > 0 && fwrite(json->pending, 1, json->npending, json->out) != json->npending)
        json->failed = true;
    json->npending = 0;
}

static void emit(struct report_json *json, const char *bytes, size_t length)
{
    if (json->failed)
        return;
    if (length > sizeof json->pending - json->npending) {
        flush_pending(json);
        if (length > sizeof json->pending) {
            if (fwrite(bytes, 1, length, json->out) != length)
                json->failed = true;
            return;
        }
    }
    memcpy(json->pending + json->npending, bytes, length);
    json->npending += length;
}

static void emit_text(struct report_json *json, const char *text)
{
    emit(json, text, strlen(text));
}

static void newline_and_indent(struct report_json *json)
{
    static const char spaces[] = "                                                                ";
    emit(json, "\n", 1);
    size_t width = 2 * (size_t)json->depth;
    while (width > 0) {
        size_t chunk = width < sizeof spaces - 1 ? width : sizeof spaces - 1;
        emit(json, spaces, chunk);
        width -= chunk;
    }
}

/* The length of the valid UTF-8 sequence at `bytes` (at most `left` bytes), or 0 when it is not one: overlong forms,
 * surrogates and code points past U+10FFFF are not. */
static size_t utf8_sequence(const unsigned char *bytes, size_t left)
{
    unsigned char first = bytes[0];
    size_t length = first < 0x80 ? 1 : first >= 0xc2 && first <= 0xdf ? 2 : first >= 0xe0 && first <= 0xef ? 3
                  : first >= 0xf0 && first <= 0xf4 ? 4 : 0;
    if (length == 0 || length > left)
        return 0;
    for (size_t i = 1; i < length; i++)
        if ((bytes[i] & 0xc0) != 0x80)
            return 0;
    if ((first == 0xe0 && bytes[1] < 0xa0) || (first == 0xed && bytes[1] >= 0xa0) ||
        (first == 0xf0 && bytes[1] < 0x90) || (first == 0xf4 && bytes[1] >= 0x90))
        return 0;
    return length;
}

bool report_json_is_utf8(const char *bytes, size_t length)
{
    const unsigned char *text = (const unsigned char *)bytes;
    for (size_t i = 0, sequence; i < length; i += sequence)
        if ((sequence = utf8_sequence(text + i, length - i)) == 0)
            return false;
    return true;
}

/* Any string as JSON: its exact value. Valid UTF-8 as it is, with JSON's escapes for the quote, the backslash and
 * control characters (DEL too), and each byte that is not part of valid UTF-8 as the lone surrogate U+DC00 + byte,
 * as Python's "surrogateescape" does, so that value.encode('utf-8', 'surrogateescape') gives the bytes back. Keys,
 * hangdoc's own names and a target's bytes all go through here. */
static void emit_quoted(struct report_json *json, const char *bytes, size_t length)
{
    emit(json, "\"", 1);
    const unsigned char *text = (const unsigned char *)bytes;
    size_t plain = 0;
    for (size_t i = 0; i < length;) {
        size_t sequence = utf8_sequence(text + i, length - i);
        bool needs_escape = sequence == 0 || (sequence == 1 && (text[i] < 0x20 || text[i] == '"' ||
                                                                text[i] == '\\' || text[i] == 0x7f));
        if (!needs_escape) {
            i += sequence;
            continue;
        }
        emit(json, bytes + plain, i - plain);
        char escape[8];
        if (sequence == 0)
            snprintf(escape, sizeof escape, "\\udc%02x", text[i]);
        else if (text[i] == '"' || text[i] == '\\')
            snprintf(escape, sizeof escape, "\\%c", text[i]);
        else if (text[i] == '\n' || text[i] == '\t' || text[i] == '\r')
            snprintf(escape, sizeof escape, "\\%c", text[i] == '\n' ? 'n' : text[i] == '\t' ? 't' : 'r');
        else
            snprintf(escape, sizeof escape, "\\u%04x", text[i]);
        emit_text(json, escape);
        i++;
        plain = i;
    }
    emit(json, bytes + plain, length - plain);
    emit(json, "\"", 1);
}

/* The comma, the line break and the key that come before a value. */
static void begin_value(struct report_json *json, const char *key)
{
    if (json->has_values[json->depth])
        emit(json, ",", 1);
    json->has_values[json->depth] = true;
    if (json->pretty && json->depth > 0)
        newline_and_indent(json);
    if (key) {
        emit_quoted(json, key, strlen(key));
        emit(json, json->pretty ? ": " : ":", json->pretty ? 2 : 1);
    }
}

void report_json_start(struct report_json *json, FILE *out, bool pretty)
{
    memset(json, 0, offsetof(struct report_json, pending));
    json->out = out;
    json->pretty = pretty;
    json->npending = 0;
}

bool report_json_finish(struct report_json *json)
{
    if (json->depth != 0)
        json->failed = true; /* a renderer left a container open: a bug, but say so rather than print half */
    if (json->pretty)
        emit(json, "\n", 1);
    flush_pending(json);
    return !json->failed && fflush(json->out) == 0;
}

static void open_container(struct report_json *json, const char *key, char bracket)
{
    begin_value(json, key);
    emit(json, &bracket, 1);
    if (json->depth >= REPORT_JSON_DEPTH_MAX) {
        json->failed = true;
        return;
    }
    json->depth++;
    json->has_values[json->depth] = false;
}

static void close_container(struct report_json *json, char bracket)
{
    if (json->depth == 0) {
        json->failed = true;
        return;
    }
    bool had_values = json->has_values[json->depth];
    json->depth--;
    if (json->pretty && had_values)
        newline_and_indent(json);
    emit(json, &bracket, 1);
}

void report_json_begin_object(struct report_json *json, const char *key)
{
    open_container(json, key, '{');
}

void report_json_end_object(struct report_json *json)
{
    close_container(json, '}');
}

void report_json_begin_array(struct report_json *json, const char *key)
{
    open_container(json, key, '[');
}

void report_json_end_array(struct report_json *json)
{
    close_container(json, ']');
}

void report_json_bytes(struct report_json *json, const char *key, const char *bytes, size_t length)
{
    begin_value(json, key);
    emit_quoted(json, bytes, length);
}

void report_json_string(struct report_json *json, const char *key, const char *text)
{
    report_json_bytes(json, key, text ? text : "", text ? strlen(text) : 0);
}

void report_json_string_or_null(struct report_json *json, const char *key, const char *text)
{
    if (text)
        report_json_string(json, key, text);
    else
        report_json_null(json, key);
}

void report_json_name(struct report_json *json, const char *key, const char *name)
{
    report_json_string(json, key, name);
}

void report_json_null(struct report_json *json, const char *key)
{
    begin_value(json, key);
    emit(json, "null", 4);
}

void report_json_bool(struct report_json *json, const char *key, bool value)
{
    begin_value(json, key);
    emit_text(json, value ? "true" : "false");
}

void report_json_int(struct report_json *json, const char *key, int64_t value)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, value);
    begin_value(json, key);
    emit_text(json, text);
}

void report_json_pid_or_null(struct report_json *json, const char *key, int64_t pid)
{
    if (pid > 0)
        report_json_int(json, key, pid);
    else
        report_json_null(json, key);
}

void report_json_double(struct report_json *json, const char *key, double value)
{
    if (!isfinite(value)) {
        report_json_null(json, key);
        return;
    }
    char text[40];
    /* 15 significant digits read back exactly for most values (0.1 stays 0.1); 17 always do */
    snprintf(text, sizeof text, "%.15g", value);
    if (strtod(text, NULL) != value)
        snprintf(text, sizeof text, "%.17g", value);
    /* keep it a JSON number with a fraction, as a reader that types numbers expects of a double */
    if (!strpbrk(text, ".e"))
        strcat(text, ".0");
    begin_value(json, key);
    emit_text(json, text);
}

void report_json_hex(struct report_json *json, const char *key, uint64_t value)
{
    char text[24];
    snprintf(text, sizeof text, "\"0x%" PRIx64 "\"", value);
    begin_value(json, key);
    emit_text(json, text);
}
