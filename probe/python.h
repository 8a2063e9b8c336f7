/* The Python stacks of CPython 3.10 to 3.14 processes, read from their memory without stopping them.
 *
 * For each process of the snapshot that runs CPython (the executable, or an embedding program with libpython
 * mapped), the interpreter's state is found through the symbols of its ELF file (python_symbols.h), its layout
 * chosen once the running version is known (python_offsets.h), and its main interpreter's thread states walked
 * with process_vm_readv (memory.h): every thread's frames, innermost first, with function, file and line, and
 * where each thread stands with the GIL. The process runs on while it is read, so every pointer is hostile:
 * lists are bounded and checked for loops, objects for their type, a stack that changed under the reader is read
 * again once and otherwise kept as far as it was consistent (python_truncated).
 *
 * Where the interpreter cannot be read (no symbol, a version outside 3.10-3.14, memory refused), the process gets
 * one note (HD_NOTE_PYTHON) that says why and python.read stays false; nothing fails. A process read that has
 * sub-interpreters gets one such note too, saying that only the main interpreter's threads were read.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stdint.h>

/* Fills `python` of every Python process of the snapshot and its threads' python_frames, python_truncated and
 * gil. Call it after the last sample's waits are decoded (a thread waits for the GIL when its futex lies in the
 * GIL's state). No process is begun at or after `deadline` (CLOCK_MONOTONIC seconds; 0: none): the ones left out
 * are counted in one HD_NOTE_DEADLINE note. False only when memory ran out. */
bool probe_read_python(struct hd_snapshot *snapshot, double deadline);

/* For each thread of a Python process that was running in every sample, with Python frames: reads its process's
 * Python stacks `looks` times more, `interval_ms` apart, into scratch copies (the snapshot's frames stay the last
 * sample's), and sets python_looks and python_leaf_same: whether its innermost Python frame stayed where it was.
 * A call that never returns (a regular expression's catastrophic backtracking, a C call holding the GIL) stays; a
 * computation moves on. Nothing is done, and no time spent, when no thread is such. No look is begun at or after
 * `deadline`. False only when memory ran out. */
bool probe_look_again_at_python_spinners(struct hd_snapshot *snapshot, unsigned looks, unsigned interval_ms,
                                         double deadline);

/* Where one process's interpreter lies in its memory: what its ELF file's symbols say once the load bias is added
 * (python_symbols.h). */
struct probe_python_addresses {
    const char *file;      /* the file that holds _PyRuntime: 3.10, without Py_Version, is known by its name */
    uint64_t runtime;      /* _PyRuntime */
    uint64_t runtime_size; /* its st_size; 0: unknown */
    uint64_t version;      /* Py_Version; 0 when the file has none (3.10) */
    uint64_t code_type;    /* PyCode_Type: every code object's ob_type */
};

/* Reads the interpreter of `process` at `where`, as probe_read_python() does once it has located it: fills
 * `python` of the process and its threads' Python stacks and GIL states, or gives the process one HD_NOTE_PYTHON
 * note that says why not. The walk behind probe_read_python() for each process, and the narrow entry of the
 * fuzz harness tests/fuzz/fuzz_python_walk.c, which forges an interpreter's memory at known addresses. False only
 * when memory ran out. */
bool probe_read_python_at(struct hd_snapshot *snapshot, struct hd_process *process,
                          const struct probe_python_addresses *where);
