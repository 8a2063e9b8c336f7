/* The objects an ELF file defines, by name: the symbols a runtime's state is found through (CPython's _PyRuntime,
 * Go's runtime.allgs), read from the file with libelf.
 *
 * The file is the target's: hostile. It is opened without harm (files.h) as the very file the mapping maps, its
 * section count checked before libelf sizes its tables by it, every section read only when its size is bounded.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One object wanted: filled by probe_elf_read_objects with the file's own st_value (add the load bias for an
 * address of the process) and st_size; value 0 when the file defines no such object of at least size_min bytes. */
struct probe_elf_object {
    const char *name;
    uint64_t size_min;
    bool optional; /* its absence from the dynamic symbols alone does not send the search on to .symtab */
    uint64_t value;
    uint64_t size;
};

struct probe_elf_file {
    bool fixed_address;  /* ET_EXEC: loaded at the addresses it names, bias 0 */
    uint64_t first_load; /* the page-aligned p_vaddr of the PT_LOAD that maps file offset 0 */
};

/* Looks up `wanted` in the file `mapping` (of process `pid`) maps, opened through /proc/<pid>/root, else
 * /proc/<pid>/map_files: its dynamic symbols, then its .symtab while one that is not optional is missing. With
 * `only_with_section`, only in a file that has a section of that name (".go.buildinfo": a Go program), so that
 * other files cost their headers alone. False when it cannot be opened, is not an ELF file we read, or lacks the
 * section; `why` (static) says which. */
bool probe_elf_read_objects(pid_t pid, const struct hd_mapping *mapping, const char *only_with_section,
                            struct probe_elf_object *wanted, size_t nwanted, struct probe_elf_file *file,
                            const char **why);

/* The load bias of the file whose mapping of file offset 0 is `first`: what to add to its st_values. False when
 * they disagree (an ET_EXEC mapped elsewhere than it says). */
bool probe_elf_load_bias(const struct probe_elf_file *file, const struct hd_mapping *first, uint64_t *bias);
