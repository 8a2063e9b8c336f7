/* Naming program counters: which mapped file holds a pc, and which function of it, from the ELF symbol tables.
 *
 * One table per ELF file per run: .symtab and .dynsym of the file itself, or, when it has no .symtab, of its
 * separate debug file (/usr/lib/debug/.build-id/xx/yyyy.debug, then .gnu_debuglink), read with pread a chunk at a
 * time, names one at a time. The few pcs of a process's stacks are searched for in one pass over those tables
 * (probe_symbols_prepare); the table is kept in memory only when a file is asked for more or later. Only
 * function symbols with a size count, and a pc is named only by a symbol whose
 * [start, start + size) holds it: an address no symbol covers gets no name (the caller prints module+0xoffset),
 * never the nearest unrelated one. C++ names are demangled. ELF files are hostile input: a malformed one gives no
 * names, never a crash.
 *
 * Why libelf, and not libdwfl's dwfl_module_addrinfo and dwfl_standard_find_debuginfo: libelf does the parsing
 * here (section and program headers, notes with gelf_getnote, symbols converted with gelf_xlatetom); what this
 * module adds is the lookup. libdwfl sorts every symbol of a module into a table on its first lookup and keeps it
 * for the session; a worker's stacks land on a handful of pcs in each of dozens of modules (libtorch_cpu alone
 * has 24,600 exported functions), so one pass over the symbols for those pcs costs less time and no memory. It
 * would also open the module's files by their paths in hangdoc's mount namespace, where the target's own files
 * are read through /proc/<pid>/root or map_files here (the symbols of a container's libc are its own). The
 * debug-file search (build-id directory, then .gnu_debuglink) is the same one libdwfl's standard callback does.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct probe_symbols;

/* NULL when memory runs out. */
struct probe_symbols *probe_symbols_new(void);
void probe_symbols_free(struct probe_symbols *symbols);
/* Whether to look for separate debug files at all (the default): without them a frame is named only by the file's
 * own tables, as on a machine without -dbg packages, where a stripped file names only what it exports. Set before
 * the first lookup. */
void probe_symbols_use_debug_files(struct probe_symbols *symbols, bool use);

/* Fills frame->module, module_offset, symbol and symbol_offset for frame->pc, which lies in the memory of `pid`
 * described by `mappings` (sorted by address). module and symbol are malloc'd (NULL when unknown). False only
 * when memory ran out. */
bool probe_symbols_resolve(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mappings,
                           size_t nmappings, struct hd_frame *frame);

/* Searches ahead for the pcs about to be resolved (the whole stacks of a process): a file whose table is not
 * loaded yet is searched for all of them in one pass over its symbols, without building the table (the frames of
 * a few stacks land on a handful of addresses per file, and a table of glibc's functions weighs 160 KiB of fresh
 * memory). probe_symbols_resolve then finds them there, named as the first lookups in a loaded table would be. */
void probe_symbols_prepare(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mappings,
                           size_t nmappings, const uint64_t *pcs, size_t count);

/* Where the file mapped by `mapping` (of process `pid`, holding `address`) keeps its .eh_frame_hdr
 * (PT_GNU_EH_FRAME), as an address of that process. False when it has none or cannot be read: the unwinder then
 * finds the tables its slower way. */
bool probe_symbols_unwind_table(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mapping,
                                uint64_t address, uint64_t *eh_frame_hdr);

/* "symbol", or "module-basename+0xoffset", or "0xpc" for the frame: malloc'd, NULL when memory ran out. */
char *probe_symbols_frame_name(const struct hd_frame *frame);
/* The thread's leaf (the function its innermost frame is in, and where no symbol names it, the module and offset)
 * from `frame`; none when `frame` is NULL. Frees what it had. */
void probe_symbols_set_leaf(struct hd_thread *thread, const struct hd_frame *frame);
