/* A streaming JSON writer: the renderers' reports (render_json.c, render_stacks.c, render_inheritance.c) and the
 * snapshot files (record/).
 *
 * Why not json-c's tree: a report of 10,000 threads is a tree of about a million json-c objects, each a malloc'd
 * hash table or string, built in full before the first byte is written; that cost more than the whole probe
 * (BENCHMARKS.md, scale). This writer keeps nothing but its nesting and a write buffer: memory is constant and
 * time linear in the output.
 *
 * Every value call takes the key it has in its enclosing object, or NULL inside an array. Target strings hold
 * their exact value: valid UTF-8 as it is, with JSON's escapes for the quote, the backslash and control characters,
 * and each byte that is not valid UTF-8 as the lone surrogate U+DC00 + byte (Python's "surrogateescape": reversible).
 * The text report escapes for a terminal instead (buffer.h). Addresses are "0x..." text (JSON numbers lose
 * precision past 2^53). Errors (memory, the stream) are remembered and reported once by report_json_finish.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REPORT_JSON_DEPTH_MAX 32

struct report_json {
    FILE *out;
    bool pretty;                                /* one value per line, two spaces a level */
    unsigned depth;
    bool has_values[REPORT_JSON_DEPTH_MAX + 1]; /* whether the container at each depth holds a value yet */
    bool failed;
    char pending[16384];                        /* written to `out` when full and at the finish */
    size_t npending;
};

void report_json_start(struct report_json *json, FILE *out, bool pretty);
/* Writes what is pending and a final newline (pretty only); false when anything failed. */
bool report_json_finish(struct report_json *json);

void report_json_begin_object(struct report_json *json, const char *key);
void report_json_end_object(struct report_json *json);
void report_json_begin_array(struct report_json *json, const char *key);
void report_json_end_array(struct report_json *json);

/* A target's string, its exact value; "" for NULL. */
void report_json_string(struct report_json *json, const char *key, const char *text);
/* The same for `length` bytes that need not end in NUL. */
void report_json_bytes(struct report_json *json, const char *key, const char *bytes, size_t length);
/* Whether `length` bytes are valid UTF-8 (no overlong form, no surrogate), which a JSON string holds as they are. */
bool report_json_is_utf8(const char *bytes, size_t length);
/* A target's string, or null for NULL. */
void report_json_string_or_null(struct report_json *json, const char *key, const char *text);
/* One of hangdoc's own names (an enum's name, a finding id): the same exact form as a target's string; the name
 * says at the call that the value is hangdoc's. */
void report_json_name(struct report_json *json, const char *key, const char *name);
void report_json_null(struct report_json *json, const char *key);
void report_json_bool(struct report_json *json, const char *key, bool value);
void report_json_int(struct report_json *json, const char *key, int64_t value);
/* A pid or tid, or null when not positive (unknown). */
void report_json_pid_or_null(struct report_json *json, const char *key, int64_t pid);
/* The shortest decimal that reads back as `value`; null for NaN and infinities, which JSON cannot hold. */
void report_json_double(struct report_json *json, const char *key, double value);
/* "0x1b64e" */
void report_json_hex(struct report_json *json, const char *key, uint64_t value);
