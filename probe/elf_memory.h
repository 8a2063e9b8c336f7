/* The identity of the ELF objects a process maps (soname, build-id), read from the process's memory.
 *
 * Why not from the files: opening each one (O_PATH, fstat, reopen, then libelf's section headers, .dynamic,
 * .dynstr and notes) costs a dozen system calls per object, and a PyTorch worker maps hundreds. The loader has
 * already mapped what we need: the ELF and program headers at the object's file offset 0, the PT_NOTE and
 * PT_DYNAMIC segments, the string table. Three batched process_vm_readv calls per process read them for all its
 * objects at once: headers, then notes and .dynamic, then sonames.
 *
 * The memory is the target's: hostile. Every count, offset and address in it is bounded; every read stays inside
 * a readable mapping of the object's own file. What cannot be decided from memory is left UNDECIDED for the
 * caller to read from the file.
 *
 * Why by hand, not libelf's elf_memory(): it takes one contiguous image of the object, and what is read here is a
 * few scattered pieces of it (headers, notes, .dynamic, one string), batched across all the objects of a process;
 * the section headers it would look for are not mapped at all. What is parsed is small and fixed (the ELF header,
 * program headers, note headers, dynamic entries), byte order and class handled by probe_elf_host_order, and it is
 * the most fuzzed reader of the project (tests/fuzz/elf).
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROBE_SONAME_MAX 256
#define PROBE_BUILD_ID_MAX 64 /* bytes; SHA-1 ids are 20 */
/* The most bytes of one note or dynamic section (or segment) that is read: real ones are a few hundred bytes; a
 * hostile object could name gigabytes. */
#define PROBE_SECTION_READ_MAX (64 * 1024)

enum probe_elf_verdict {
    PROBE_ELF_UNDECIDED, /* memory could not tell (refused, unreadable, a layout we do not read): read the file */
    PROBE_ELF_NOT_ELF,   /* the bytes at file offset 0 are not ELF magic */
    PROBE_ELF_ELF,       /* an ELF object; soname and build_id are what memory held, each NULL when absent */
};

/* One object to identify. `first` is its mapping of file offset 0 in the process's `mappings`; the results are
 * the caller's to free. */
struct probe_elf_object {
    const struct hd_mapping *first;
    enum probe_elf_verdict verdict;
    char *soname;
    char *build_id; /* lowercase hex */
};

/* Identifies `count` objects of `process` from its memory; only its pid and mappings (sorted by address, as
 * probe_read_maps gives them) are used. Objects left UNDECIDED have NULL soname and build_id. False when memory
 * ran out. */
bool probe_read_elf_objects(const struct hd_process *process, struct probe_elf_object *objects, size_t count);

/* `value`, `size` (2, 4 or 8) bytes read from an ELF file or image of byte order `msb`, in ours. */
uint64_t probe_elf_host_order(uint64_t value, size_t size, bool msb);

/* The build-id `bytes` as lowercase hex (free it); NULL when empty, longer than PROBE_BUILD_ID_MAX, or out of
 * memory. */
char *probe_build_id_text(const unsigned char *bytes, size_t length);
