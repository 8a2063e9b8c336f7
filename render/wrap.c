/* Line wrapping for the text report (wrap.h). Runs over the finished report, after escaping: every byte of a
 * target string is already printable, so the only escape sequences left are hangdoc's own colours. */
#include "wrap.h"

#include "util.h"

#include <stdbool.h>
#include <string.h>

/* Length in bytes of the colour sequence at `p` (ESC [ digits ; m), or 0. */
static size_t escape_length(const char *p, const char *end)
{
    if (p + 1 >= end || p[0] != '\x1b' || p[1] != '[')
        return 0;
    const char *q = p + 2;
    while (q < end && (*q == ';' || (*q >= '0' && *q <= '9')))
        q++;
    return q < end && *q == 'm' ? (size_t)(q - p + 1) : 0;
}

/* Columns the bytes take: one per code point (UTF-8 continuation bytes take none), none for colours. */
static size_t columns(const char *p, const char *end)
{
    size_t count = 0;
    while (p < end) {
        size_t escape = escape_length(p, end);
        if (escape) {
            p += escape;
            continue;
        }
        count += ((unsigned char)*p & 0xc0) != 0x80;
        p++;
    }
    return count;
}

/* The bytes and columns of the line's lead: indentation, then one prefix a continuation aligns under. */
static size_t hanging_indent(const char *line, const char *end)
{
    static const char *const prefixes[] = { "· ", "fix: ", "└── ", "chain: ", "verdict: " };
    const char *p = line;
    while (p < end && (*p == ' ' || escape_length(p, end)))
        p += escape_length(p, end) ? escape_length(p, end) : 1;
    for (size_t i = 0; i < COUNT(prefixes); i++) {
        size_t length = strlen(prefixes[i]);
        if ((size_t)(end - p) >= length && memcmp(p, prefixes[i], length) == 0)
            return columns(line, p + length); /* under the text that follows the prefix */
    }
    return columns(line, p) + 2; /* two columns in, so that it reads as a continuation */
}

static void wrap_line(struct report_buffer *out, const char *line, const char *end, unsigned width)
{
    size_t indent = hanging_indent(line, end);
    if (indent > width / 2)
        indent = width / 2;
    const char *p = line;
    size_t lead = 0; /* columns already on the output line: 0 for the first, `indent` for continuations */
    while (columns(p, end) + lead > width) {
        /* the last space at which the part before it still fits */
        const char *cut = NULL;
        for (const char *q = p; q < end && columns(p, q) + lead <= width; q++)
            if (*q == ' ' && q > p && q[-1] != ' ')
                cut = q;
        if (!cut) { /* a word longer than the line: break after it instead */
            cut = p;
            while (cut < end && *cut != ' ')
                cut++;
            if (cut >= end)
                break;
        }
        report_buffer_append(out, p, (size_t)(cut - p));
        report_buffer_puts(out, "\n");
        for (size_t i = 0; i < indent; i++)
            report_buffer_puts(out, " ");
        lead = indent;
        p = cut;
        while (p < end && *p == ' ')
            p++;
    }
    report_buffer_append(out, p, (size_t)(end - p));
}

void report_wrap(struct report_buffer *out, const char *text, size_t length, unsigned width)
{
    if (width == 0) {
        report_buffer_append(out, text, length);
        return;
    }
    const char *end = text + length;
    for (const char *line = text; line < end;) {
        const char *newline = memchr(line, '\n', (size_t)(end - line));
        const char *line_end = newline ? newline : end;
        wrap_line(out, line, line_end, width);
        if (newline)
            report_buffer_puts(out, "\n");
        line = newline ? newline + 1 : end;
    }
}
