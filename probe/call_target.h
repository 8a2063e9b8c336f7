/* What a frame that no symbol names was called as: the function its caller's call instruction names.
 *
 * A stripped library names only what it exports, and an exported function often hands over to a static one by a
 * tail call (glibc's __cxa_atexit jumps to __internal_atexit, localtime_r to __tz_convert): the frame that sleeps
 * in the library's lock then has no name, and the exported name the program called is on no frame. The caller's
 * return address follows its call instruction, so that instruction, read from the target's memory, says what was
 * called: a direct call (E8 rel32) to a function or to a PLT stub, whose jump through the GOT (the address the
 * dynamic linker wrote there, the call being under way) leads to the function; or an indirect call through the
 * GOT (FF 15, -fno-plt). The target must be the start of a named function; anything else gives no name. The
 * bytes are the target's and hostile: each read is bounded, and only these few encodings are decoded.
 */
#pragma once

#include "snapshot.h"
#include "symbols.h"

#include <stdint.h>
#include <sys/types.h>

/* The name of the function the call before `return_address` (in the memory of `pid`, mapped by `mappings`)
 * called, malloc'd; NULL when it cannot be told or memory ran out. */
char *probe_call_target_name(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mappings,
                             size_t nmappings, uint64_t return_address);
