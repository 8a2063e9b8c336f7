/* Finding a CPython interpreter's state in a process: the symbols _PyRuntime, Py_Version and PyCode_Type of the ELF
 * file that holds the interpreter (the executable, or a mapped libpython), read from that file with libelf.
 *
 * The file is the target's: hostile. It is opened without harm (files.h) as the very file the mapping maps, its
 * section count checked before libelf sizes its tables by it, every section read only when its size is bounded.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What one ELF file says. Values are the file's own (st_value): add the load bias for an address of the process. */
struct probe_python_symbols {
    uint64_t runtime;      /* _PyRuntime; 0 when the file has no such defined object */
    uint64_t runtime_size; /* its st_size: how many bytes the struct takes in this build */
    uint64_t version;      /* Py_Version (3.11+); 0 when absent */
    uint64_t code_type;    /* PyCode_Type; 0 when absent */
    bool fixed_address;    /* ET_EXEC: loaded at the addresses it names, bias 0 */
    uint64_t first_load;   /* the page-aligned p_vaddr of the PT_LOAD that maps file offset 0 */
};

/* Reads the symbols of the file `mapping` (of process `pid`) maps, opened through /proc/<pid>/root, else
 * /proc/<pid>/map_files. False when it cannot be opened or is not an ELF file we read; `why` (static) says which. */
bool probe_python_read_symbols(pid_t pid, const struct hd_mapping *mapping, struct probe_python_symbols *symbols,
                               const char **why);

/* The load bias of the file whose mapping of file offset 0 is `first` and whose symbols are `symbols`: what to
 * add to its st_values. False when they disagree (an ET_EXEC mapped elsewhere than it says). */
bool probe_python_load_bias(const struct probe_python_symbols *symbols, const struct hd_mapping *first,
                            uint64_t *bias);
