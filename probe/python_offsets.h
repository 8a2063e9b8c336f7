/* Where CPython 3.10 to 3.14 keep what probe/python.c reads: byte offsets into the interpreter's structures, one
 * layout per minor version.
 *
 * 3.10, 3.11 and 3.12 publish nothing for out-of-process readers: their layouts are numbers taken from the
 * headers of each version (python_offsets.c says which struct each comes from) and hold for every patch release of
 * that minor version only, for the default (non-debug, GIL) build on a 64-bit Linux. 3.13 and later publish their
 * own table, _Py_DebugOffsets, at the start of _PyRuntime: the layout is read from the target itself, with the few
 * values the table does not give taken from that version's headers. The table's own shape changes from version to
 * version (3.14 added fields in the middle of its groups), so each version's shape is a row of python_offsets.c;
 * a new version is a new row. A layout is used only once the running version is known to match.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An offset the version does not have. */
#define PROBE_PYTHON_ABSENT UINT32_MAX

enum probe_python_frame_kind {
    PROBE_PYTHON_FRAME_OBJECT,      /* 3.10: PyFrameObject, f_back, f_lasti an instruction index */
    PROBE_PYTHON_INTERPRETER_FRAME, /* 3.11+: _PyInterpreterFrame, `previous`, a pointer to the instruction */
};

enum probe_python_line_table {
    PROBE_PYTHON_LINES_310, /* PEP 626 pairs */
    PROBE_PYTHON_LINES_311, /* the location table of 3.11+ */
};

struct probe_python_layout {
    unsigned minor; /* 3.minor */
    /* _PyRuntimeState */
    uint32_t runtime_interpreters_head;
    uint32_t runtime_gil; /* the GIL's state inline in the runtime (3.10, 3.11); ABSENT: one per interpreter */
    /* PyInterpreterState */
    uint32_t interp_next;
    uint32_t interp_id;
    uint32_t interp_threads_head;
    uint32_t interp_runtime;     /* the runtime it belongs to: a check that a pointer is an interpreter (ABSENT
                                  * once 3.13's table is read: it does not give it) */
    uint32_t interp_gil_pointer; /* 3.12+: ceval.gil, a pointer to the GIL's state */
    /* PyThreadState */
    uint32_t tstate_next;
    uint32_t tstate_interp;
    uint32_t tstate_thread_id;        /* pthread_self() of the thread */
    uint32_t tstate_native_thread_id; /* its kernel tid (3.11+) */
    uint32_t tstate_frame;            /* the innermost frame: `frame` (3.10), `current_frame` (3.13) */
    uint32_t tstate_cframe;           /* 3.11, 3.12: `cframe`, whose current_frame is the innermost frame */
    uint32_t cframe_current_frame;
    /* the frame */
    enum probe_python_frame_kind frame_kind;
    uint32_t frame_previous;
    uint32_t frame_code;
    uint32_t frame_instruction; /* f_lasti (an int), prev_instr (3.11, 3.12) or instr_ptr (3.13) */
    uint32_t frame_owner;       /* a char: who owns the frame (3.11+) */
    uint32_t frame_is_entry;    /* a bool (3.11 only): the first frame of one run of the eval loop */
    int owned_by_c_stack;       /* the lowest owner value of the interpreter's own frames, which run no code: the
                                 * eval loop's entry shim (3.12+: owner >= this value); -1: none */
    uint64_t frame_code_tag;    /* the low bits that tag the code reference (3.14: a _PyStackRef), cleared to
                                 * have the code object's address; 0: a plain pointer */
    /* PyCodeObject */
    uint32_t code_filename;
    uint32_t code_name;
    uint32_t code_qualname;
    uint32_t code_linetable;
    uint32_t code_firstlineno;
    uint32_t code_adaptive; /* co_code_adaptive: the instructions, inside the code object (3.11+) */
    enum probe_python_line_table line_table;
    /* objects */
    uint32_t object_type;          /* ob_type of every PyObject */
    uint32_t bytes_size;           /* PyBytesObject: ob_size */
    uint32_t bytes_data;           /*                ob_sval */
    uint32_t unicode_length;       /* PyASCIIObject: length */
    uint32_t unicode_state;        /*                state (bit fields, the first byte: see python.c) */
    uint32_t unicode_ascii_size;   /* sizeof(PyASCIIObject): where a compact ASCII string's characters begin */
    uint32_t unicode_compact_size; /* sizeof(PyCompactUnicodeObject): where other compact strings' begin */
    uint32_t type_name;            /* PyTypeObject: tp_name */
    uint32_t lock_mutex;           /* lockobject and rlockobject (Modules/_threadmodule.c): the PyMutex (3.14+) */
    /* Python/parking_lot.c, struct wait_entry on the waiter's stack: how far before the futex word of its
     * semaphore (a sem_t, whose word comes first) lies the address it parks on, `addr`; ABSENT before 3.13 */
    uint32_t parked_key_before_futex;
    /* struct _gil_runtime_state */
    uint32_t gil_size;
    uint32_t gil_last_holder;
    uint32_t gil_locked;
};

/* The oldest and newest minor versions of CPython 3 that have a layout. */
#define PROBE_PYTHON_OLDEST_MINOR 10
#define PROBE_PYTHON_NEWEST_MINOR 14

/* The layout of CPython 3.`minor` for 10 to 14 (13, 14: the headers' values, to be checked against and
 * overridden by the target's own _Py_DebugOffsets); NULL for any other. */
const struct probe_python_layout *probe_python_layout_for(unsigned minor);

/* How many bytes of the _Py_DebugOffsets at the start of a 3.`minor` _PyRuntime the reader reads; 0 for a version
 * that publishes no table (3.10-3.12) or that has no layout. */
size_t probe_python_debug_offsets_size(unsigned minor);

/* Reads the _Py_DebugOffsets at the start of a 3.`minor` _PyRuntime (`bytes`, `size` of them) into `layout`,
 * which starts as probe_python_layout_for(minor). False, with `why` (static), when the version has no table, the
 * cookie is not there, the table is of another version than 3.`minor` or a free-threaded build, or an offset lies
 * outside the size the table gives for its struct. */
bool probe_python_layout_from_debug_offsets(const uint8_t *bytes, size_t size, unsigned minor,
                                            struct probe_python_layout *layout, const char **why);

/* How many bytes of each struct a reader needs to read to have every field of `layout` it uses. */
struct probe_python_spans {
    size_t interp;
    size_t tstate;
    size_t frame;
    size_t code;
    size_t unicode;
};
struct probe_python_spans probe_python_layout_spans(const struct probe_python_layout *layout);
