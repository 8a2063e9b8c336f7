/* The ELF objects a process maps: path, soname and build-id, from the process's memory (elf_memory.h, which says
 * why), and from each file with libelf for what memory could not decide.
 *
 * The files are the target's: hostile input. libelf checks every offset against the file's size; what it cannot
 * parse is left NULL, never guessed.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>

/* Fills `libraries` of every process of the snapshot from its mappings, and marks the ones its parent maps at the
 * same address. Each file is read once per call, however many processes map it. False when memory ran out. */
bool probe_read_libraries(struct hd_snapshot *snapshot);

/* Reads DT_SONAME and the GNU build-id of the ELF file open on `fd`; each is NULL when absent or unreadable
 * (free them). False when the file is not ELF. */
bool probe_read_elf_identity(int fd, char **soname, char **build_id);

/* Opens read-only the regular file `mapping` of process `pid` maps, through /proc/<pid>/map_files or else the
 * process's root directory, only when its device and inode are the mapping's; -1 otherwise. */
int probe_open_mapped_file(pid_t pid, const struct hd_mapping *mapping);
