/* Rust symbol names made readable, for the frames of Rust code (a Rust program, or a Python extension written in
 * Rust such as tokenizers or polars).
 *
 * Rust has two manglings. The legacy one is C++'s (_ZN...E) with a hash as the last segment (h + 16 hex digits) and
 * the characters C++ names cannot hold escaped ($LT$ for <, .. for ::): the C++ demangler reads it, and
 * probe_rust_tidy_legacy() then drops the hash and the escapes. The v0 one (_R...) is its own grammar (RFC 2603),
 * which probe_rust_demangle_v0() reads. Both take names out of the target's files, so both treat them as hostile:
 * bounded output, bounded recursion, and NULL (or the name left as it was) on anything they do not understand.
 */
#pragma once

#include <stdbool.h>

/* Is `name` (as __cxa_demangle gave it) a legacy Rust name: its last segment "::h" and 16 hex digits? */
bool probe_rust_is_legacy(const char *name);
/* Drops the hash segment of a legacy Rust name and decodes its escapes, in place (the text only shrinks). */
void probe_rust_tidy_legacy(char *name);
/* The readable form of v0 name `mangled` ("_R..."; a suffix such as ".llvm.123" is ignored), malloc'd; NULL when
 * it is not one, is malformed, or memory ran out. Generic arguments are kept; the instantiating crate is not. */
char *probe_rust_demangle_v0(const char *mangled);
