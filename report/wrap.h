/* Fitting the text report to a terminal's width. */
#pragma once

#include "buffer.h"

#include <stddef.h>

/* Appends `text` to `out` with every line longer than `width` columns broken at spaces. A continuation line is
 * indented under the text of the line it continues (past its indentation and a leading "· ", "fix: " or tree
 * branch), plus two columns. Columns are counted in code points; colour escape sequences (ESC [ ... m) take none.
 * A word longer than the line stays whole. `width` 0 appends the text unchanged. */
void report_wrap(struct report_buffer *out, const char *text, size_t length, unsigned width);
