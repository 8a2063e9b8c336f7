/* Decoders of CPython data copied out of a target (probe/python.h): the line tables of code objects and the code
 * units of strings. Pure functions over bytes: the bytes are hostile, so every length is bounded by the caller's
 * buffer, every variable-length integer is capped, and nothing is trusted to end where it says.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The line of the instruction at byte `offset` of a CPython 3.10 code object whose co_linetable is `table`
 * (PEP 626, Objects/lnotab_notes.txt of 3.10: pairs of an unsigned bytecode delta and a signed line delta, -128
 * for "no line"), counting from `first_line` (co_firstlineno). A negative offset (a frame not started yet) is the
 * first line. 0 when the table does not reach the offset or gives that instruction no line. */
int probe_python_line_310(const uint8_t *table, size_t size, int first_line, int64_t offset);

/* The same for CPython 3.11 to 3.13, whose co_linetable is the location table (Objects/locations.md of 3.11):
 * entries of a first byte with bit 7 set (bits 3-6 the kind, bits 0-2 the code units covered minus one) and
 * bytes without it, the line as a delta from the previous entry's. `offset` counts bytes from co_code_adaptive. */
int probe_python_line_311(const uint8_t *table, size_t size, int first_line, int64_t offset);

/* `count` code units of `width` bytes each (1: Latin-1, 2: UCS-2, 4: UCS-4, in the host's byte order, as a
 * compact PyUnicodeObject holds them) as UTF-8 in `out`, NUL-terminated, cut at the last whole character that fits
 * in `size` bytes. A NUL, a surrogate or a value past U+10FFFF becomes U+FFFD, so that the result is valid UTF-8
 * and a C string. Returns its length in bytes; 0 (and "") when `width` is none of those or `size` is 0. */
size_t probe_python_text_utf8(const uint8_t *units, size_t count, unsigned width, char *out, size_t size);
