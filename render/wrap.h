/* Fitting the text report to a terminal's width. */
#pragma once

#include "buffer.h"

#include <stddef.h>

/* Appends `text` to `out` with every line longer than `width` columns broken at spaces. A continuation line is
 * indented under the text that follows a leading "· ", "fix: ", "chain: ", "verdict: " or tree branch, and
 * otherwise two columns deeper than the line it continues. Columns are counted in code points; colour escape sequences (ESC [ ... m) take none.
 * A word longer than the line stays whole. `width` 0 appends the text unchanged. */
void report_wrap(struct report_buffer *out, const char *text, size_t length, unsigned width);
