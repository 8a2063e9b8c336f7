/* A growable text buffer for the renderers, with the one escaping every target string goes through. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct report_buffer {
    char *data;
    size_t length;
    size_t cap;
    bool failed; /* memory ran out: later appends are ignored, the caller checks once at the end */
};

void report_buffer_append(struct report_buffer *buffer, const char *text, size_t length);
void report_buffer_puts(struct report_buffer *buffer, const char *text);
void report_buffer_printf(struct report_buffer *buffer, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Appends untrusted bytes (comm, cmdline, paths) so that nothing in them can act on a terminal or a parser:
 * - valid UTF-8 printable text passes unchanged;
 * - C0 controls, DEL and C1 controls become \n, \t, \r, \e or \xNN; invalid UTF-8 bytes become \xNN;
 * - bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069) become \u{NNNN} ("Trojan Source");
 * - a backslash becomes \\ so that an escape in the output always means an escaped byte. */
void report_buffer_escaped(struct report_buffer *buffer, const char *bytes, size_t length);

/* The escaped copy of a NUL-terminated string, malloc'd; NULL when memory ran out. */
char *report_escape(const char *text);

void report_buffer_release(struct report_buffer *buffer);
