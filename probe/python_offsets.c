/* The layouts of CPython 3.10 to 3.14 (python_offsets.h).
 *
 * The numbers are offsetof() and sizeof() of the structs named in each comment, printed by a throwaway program
 * compiled with -DPy_BUILD_CORE against the installed headers (Include/ and Include/internal/) of CPython 3.10.13,
 * 3.11.7 (and Debian's 3.11.2: the same numbers), 3.12.1, 3.13.0 and Debian's 3.14.10, x86-64, default build
 * (GIL, no Py_DEBUG, no Py_TRACE_REFS). aarch64 has the same LP64 sizes and alignments, so the same offsets.
 */
#include "python_offsets.h"

#include "util.h"

#include <string.h>

#define ABSENT PROBE_PYTHON_ABSENT

/* Shared by all four: PyObject.ob_type (object.h), PyBytesObject's ob_base.ob_size and ob_sval (bytesobject.h),
 * PyASCIIObject.length and .state (unicodeobject.h), struct _gil_runtime_state's sizeof, last_holder and locked
 * (internal/pycore_gil.h; FORCE_SWITCHING on, as that header defines it). */
#define COMMON_OBJECTS                                                                                        \
    .object_type = 8, .type_name = 24, .bytes_size = 16, .bytes_data = 32, .unicode_length = 16,             \
    .unicode_state = 32,                                                                                      \
    .gil_size = 208, .gil_last_holder = 8, .gil_locked = 16

static const struct probe_python_layout layouts[] = {
    {
        .minor = 10,
        /* internal/pycore_runtime.h, _PyRuntimeState: interpreters.head, ceval.gil */
        .runtime_interpreters_head = 32, .runtime_gil = 352,
        /* internal/pycore_interp.h, struct _is: next, id, tstate_head, runtime */
        .interp_next = 0, .interp_id = 24, .interp_threads_head = 8, .interp_runtime = 16,
        .interp_gil_pointer = ABSENT,
        /* cpython/pystate.h, struct _ts: next, interp, thread_id, frame */
        .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 176, .tstate_native_thread_id = ABSENT,
        .tstate_frame = 24, .tstate_cframe = ABSENT, .cframe_current_frame = ABSENT,
        /* cpython/frameobject.h, struct _frame: f_back, f_code, f_lasti */
        .frame_kind = PROBE_PYTHON_FRAME_OBJECT, .frame_previous = 24, .frame_code = 32, .frame_instruction = 96,
        .frame_owner = ABSENT, .frame_is_entry = ABSENT, .owned_by_c_stack = -1,
        /* cpython/code.h, PyCodeObject: co_filename, co_name, co_linetable, co_firstlineno */
        .code_filename = 104, .code_name = 112, .code_qualname = ABSENT, .code_linetable = 120,
        .code_firstlineno = 40, .code_adaptive = ABSENT, .line_table = PROBE_PYTHON_LINES_310,
        /* cpython/unicodeobject.h: sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject) (with wstr) */
        .unicode_ascii_size = 48, .unicode_compact_size = 72,
        .lock_mutex = ABSENT, .parked_key_before_futex = ABSENT,
        COMMON_OBJECTS,
    },
    {
        .minor = 11,
        /* internal/pycore_runtime.h, _PyRuntimeState: interpreters.head, ceval.gil */
        .runtime_interpreters_head = 40, .runtime_gil = 360,
        /* internal/pycore_interp.h, struct _is: next, id, threads.head, runtime */
        .interp_next = 0, .interp_id = 48, .interp_threads_head = 16, .interp_runtime = 40,
        .interp_gil_pointer = ABSENT,
        /* cpython/pystate.h, struct _ts: next, interp, thread_id, native_thread_id, cframe; _PyCFrame:
         * current_frame */
        .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 152, .tstate_native_thread_id = 160,
        .tstate_frame = ABSENT, .tstate_cframe = 56, .cframe_current_frame = 8,
        /* internal/pycore_frame.h, _PyInterpreterFrame: previous, f_code, prev_instr, owner, is_entry */
        .frame_kind = PROBE_PYTHON_INTERPRETER_FRAME, .frame_previous = 48, .frame_code = 32,
        .frame_instruction = 56, .frame_owner = 69, .frame_is_entry = 68, .owned_by_c_stack = -1,
        /* cpython/code.h, PyCodeObject: co_filename, co_name, co_qualname, co_linetable, co_firstlineno,
         * co_code_adaptive */
        .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_linetable = 136,
        .code_firstlineno = 72, .code_adaptive = 184, .line_table = PROBE_PYTHON_LINES_311,
        .unicode_ascii_size = 48, .unicode_compact_size = 72,
        .lock_mutex = ABSENT, .parked_key_before_futex = ABSENT,
        COMMON_OBJECTS,
    },
    {
        .minor = 12,
        /* internal/pycore_runtime.h, _PyRuntimeState: interpreters.head (the GIL moved into the interpreter) */
        .runtime_interpreters_head = 40, .runtime_gil = ABSENT,
        /* internal/pycore_interp.h, struct _is: next, id, threads.head, runtime, ceval.gil */
        .interp_next = 0, .interp_id = 8, .interp_threads_head = 72, .interp_runtime = 96,
        .interp_gil_pointer = 384,
        /* cpython/pystate.h, struct _ts: next, interp, thread_id, native_thread_id, cframe; _PyCFrame:
         * current_frame */
        .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 136, .tstate_native_thread_id = 144,
        .tstate_frame = ABSENT, .tstate_cframe = 56, .cframe_current_frame = 0,
        /* internal/pycore_frame.h, _PyInterpreterFrame: previous, f_code, prev_instr, owner;
         * FRAME_OWNED_BY_CSTACK */
        .frame_kind = PROBE_PYTHON_INTERPRETER_FRAME, .frame_previous = 8, .frame_code = 0,
        .frame_instruction = 56, .frame_owner = 70, .frame_is_entry = ABSENT, .owned_by_c_stack = 3,
        /* cpython/code.h, PyCodeObject: as in 3.11, co_firstlineno moved */
        .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_linetable = 136,
        .code_firstlineno = 68, .code_adaptive = 192, .line_table = PROBE_PYTHON_LINES_311,
        /* cpython/unicodeobject.h: wstr is gone */
        .unicode_ascii_size = 40, .unicode_compact_size = 56,
        .lock_mutex = ABSENT, .parked_key_before_futex = ABSENT,
        COMMON_OBJECTS,
    },
    {
        .minor = 13,
        /* internal/pycore_runtime.h, _PyRuntimeState: interpreters.head (after the 584-byte debug offsets) */
        .runtime_interpreters_head = 632, .runtime_gil = ABSENT,
        /* internal/pycore_interp.h, struct _is: next, id, threads.head, runtime, ceval.gil */
        .interp_next = 7264, .interp_id = 7272, .interp_threads_head = 7344, .interp_runtime = 7376,
        .interp_gil_pointer = 16,
        /* cpython/pystate.h, struct _ts: next, interp, thread_id, native_thread_id, current_frame */
        .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 152, .tstate_native_thread_id = 160,
        .tstate_frame = 72, .tstate_cframe = ABSENT, .cframe_current_frame = ABSENT,
        /* internal/pycore_frame.h, _PyInterpreterFrame: previous, f_executable, instr_ptr, owner;
         * FRAME_OWNED_BY_CSTACK */
        .frame_kind = PROBE_PYTHON_INTERPRETER_FRAME, .frame_previous = 8, .frame_code = 0,
        .frame_instruction = 56, .frame_owner = 70, .frame_is_entry = ABSENT, .owned_by_c_stack = 3,
        /* cpython/code.h, PyCodeObject */
        .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_linetable = 136,
        .code_firstlineno = 68, .code_adaptive = 200, .line_table = PROBE_PYTHON_LINES_311,
        .unicode_ascii_size = 40, .unicode_compact_size = 56,
        /* 3.13's Lock is still a PyThread_type_lock; its wait entry is 3.14's: park_arg, addr, the semaphore */
        .lock_mutex = ABSENT, .parked_key_before_futex = 8,
        COMMON_OBJECTS,
    },
    {
        .minor = 14,
        /* internal/pycore_runtime_structs.h, _PyRuntimeState: interpreters.head (after the debug offsets and the
         * remote debugger's cookie) */
        .runtime_interpreters_head = 808, .runtime_gil = ABSENT,
        /* internal/pycore_interp_structs.h, struct _is: next, id, threads.head, runtime, ceval.gil */
        .interp_next = 7272, .interp_id = 7280, .interp_threads_head = 7344, .interp_runtime = 7384,
        .interp_gil_pointer = 16,
        /* cpython/pystate.h, struct _ts: as in 3.13 */
        .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 152, .tstate_native_thread_id = 160,
        .tstate_frame = 72, .tstate_cframe = ABSENT, .cframe_current_frame = ABSENT,
        /* internal/pycore_interpframe_structs.h, _PyInterpreterFrame: previous, f_executable (a _PyStackRef whose
         * low bit marks a deferred reference), instr_ptr, owner; FRAME_OWNED_BY_INTERPRETER (the entry shim) and
         * FRAME_OWNED_BY_CSTACK come last */
        .frame_kind = PROBE_PYTHON_INTERPRETER_FRAME, .frame_previous = 8, .frame_code = 0,
        .frame_instruction = 56, .frame_owner = 74, .frame_is_entry = ABSENT, .owned_by_c_stack = 3,
        .frame_code_tag = 3,
        /* cpython/code.h, PyCodeObject */
        .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_linetable = 136,
        .code_firstlineno = 68, .code_adaptive = 208, .line_table = PROBE_PYTHON_LINES_311,
        .unicode_ascii_size = 40, .unicode_compact_size = 56,
        /* the lock objects' PyMutex right after their PyObject_HEAD */
        .lock_mutex = 16, .parked_key_before_futex = 8,
        COMMON_OBJECTS,
    },
};

const struct probe_python_layout *probe_python_layout_for(unsigned minor)
{
    for (size_t i = 0; i < COUNT(layouts); i++)
        if (layouts[i].minor == minor)
            return &layouts[i];
    return NULL;
}

/* ---- 3.13+: _Py_DebugOffsets ------------------------------------------------------------------------------------ */

/* The tables as each version's internal headers lay them out (3.13: pycore_runtime.h, 3.14:
 * pycore_debug_offsets.h): a cookie, the version, whether the build is free-threaded, then for each struct its size
 * and the offsets of some of its fields, all uint64_t. Only the groups up to the last one read are here; a field
 * the reader does not take is still declared, to keep the ones after it in place. */
struct debug_offsets_313 {
    char cookie[8];
    uint64_t version;
    uint64_t free_threaded;
    struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
    struct {
        uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil,
            gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked, gil_runtime_state_holder;
    } interpreter_state;
    struct {
        uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
    } thread_state;
    struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
    struct {
        uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
            localspluskinds, co_code_adaptive;
    } code_object;
    struct { uint64_t size, ob_type; } pyobject;
    struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
    struct { uint64_t size, ob_item, ob_size; } tuple_object;
    struct { uint64_t size, ob_item, ob_size; } list_object;
    struct { uint64_t size, ma_keys, ma_values; } dict_object;
    struct { uint64_t size, ob_fval; } float_object;
    struct { uint64_t size, lv_tag, ob_digit; } long_object;
    struct { uint64_t size, ob_size, ob_sval; } bytes_object;
    struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
};

/* 3.14 added threads_main, code_object_generation and tlbc_generation to the interpreter's group, stackpointer
 * and tlbc_index to the frame's, co_tlbc to the code object's, and a set object group. */
struct debug_offsets_314 {
    char cookie[8];
    uint64_t version;
    uint64_t free_threaded;
    struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
    struct {
        uint64_t size, id, next, threads_head, threads_main, gc, imports_modules, sysdict, builtins, ceval_gil,
            gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked, gil_runtime_state_holder,
            code_object_generation, tlbc_generation;
    } interpreter_state;
    struct {
        uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
    } thread_state;
    struct {
        uint64_t size, previous, executable, instr_ptr, localsplus, owner, stackpointer, tlbc_index;
    } interpreter_frame;
    struct {
        uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
            localspluskinds, co_code_adaptive, co_tlbc;
    } code_object;
    struct { uint64_t size, ob_type; } pyobject;
    struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
    struct { uint64_t size, ob_item, ob_size; } tuple_object;
    struct { uint64_t size, ob_item, ob_size; } list_object;
    struct { uint64_t size, used, table, mask; } set_object;
    struct { uint64_t size, ma_keys, ma_values; } dict_object;
    struct { uint64_t size, ob_fval; } float_object;
    struct { uint64_t size, lv_tag, ob_digit; } long_object;
    struct { uint64_t size, ob_size, ob_sval; } bytes_object;
    struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
};

/* offsetof(_Py_DebugOffsets, gc) in 3.13.0; offsetof(_Py_DebugOffsets, gc) in 3.14.10 */
_Static_assert(sizeof(struct debug_offsets_313) == 568, "the 3.13 table's groups up to unicode_object");
_Static_assert(sizeof(struct debug_offsets_314) == 648, "the 3.14 table's groups up to unicode_object");
_Static_assert(offsetof(struct debug_offsets_314, code_object) == 312, "3.14: code_object where the headers say");

/* Where in one version's table each value the reader takes lies (byte positions of its uint64_t entries). */
struct debug_table_shape {
    unsigned minor;
    size_t size; /* bytes read */
    size_t version, free_threaded;
    size_t runtime_size, runtime_interpreters_head;
    size_t interp_size, interp_id, interp_next, interp_threads_head, interp_ceval_gil, interp_gil,
        interp_gil_locked, interp_gil_holder;
    size_t tstate_size, tstate_next, tstate_interp, tstate_current_frame, tstate_thread_id, tstate_native_thread_id;
    size_t frame_size, frame_previous, frame_executable, frame_instr_ptr, frame_owner;
    size_t code_size, code_filename, code_name, code_qualname, code_linetable, code_firstlineno, code_adaptive;
    size_t object_size, object_type;
    size_t bytes_size, bytes_ob_size, bytes_ob_sval;
    size_t unicode_size, unicode_state, unicode_length, unicode_ascii_size;
};

/* One row from the mirror of a version's table: the field names have stayed the same from 3.13 on. */
#define SHAPE(minor_version, T)                                                                                  \
    {                                                                                                             \
        .minor = minor_version, .size = sizeof(T), .version = offsetof(T, version),                              \
        .free_threaded = offsetof(T, free_threaded), .runtime_size = offsetof(T, runtime_state.size),            \
        .runtime_interpreters_head = offsetof(T, runtime_state.interpreters_head),                               \
        .interp_size = offsetof(T, interpreter_state.size), .interp_id = offsetof(T, interpreter_state.id),      \
        .interp_next = offsetof(T, interpreter_state.next),                                                      \
        .interp_threads_head = offsetof(T, interpreter_state.threads_head),                                      \
        .interp_ceval_gil = offsetof(T, interpreter_state.ceval_gil),                                            \
        .interp_gil = offsetof(T, interpreter_state.gil_runtime_state),                                          \
        .interp_gil_locked = offsetof(T, interpreter_state.gil_runtime_state_locked),                            \
        .interp_gil_holder = offsetof(T, interpreter_state.gil_runtime_state_holder),                            \
        .tstate_size = offsetof(T, thread_state.size), .tstate_next = offsetof(T, thread_state.next),            \
        .tstate_interp = offsetof(T, thread_state.interp),                                                       \
        .tstate_current_frame = offsetof(T, thread_state.current_frame),                                         \
        .tstate_thread_id = offsetof(T, thread_state.thread_id),                                                 \
        .tstate_native_thread_id = offsetof(T, thread_state.native_thread_id),                                   \
        .frame_size = offsetof(T, interpreter_frame.size), .frame_previous = offsetof(T, interpreter_frame.previous), \
        .frame_executable = offsetof(T, interpreter_frame.executable),                                           \
        .frame_instr_ptr = offsetof(T, interpreter_frame.instr_ptr),                                             \
        .frame_owner = offsetof(T, interpreter_frame.owner), .code_size = offsetof(T, code_object.size),         \
        .code_filename = offsetof(T, code_object.filename), .code_name = offsetof(T, code_object.name),          \
        .code_qualname = offsetof(T, code_object.qualname), .code_linetable = offsetof(T, code_object.linetable), \
        .code_firstlineno = offsetof(T, code_object.firstlineno),                                                \
        .code_adaptive = offsetof(T, code_object.co_code_adaptive), .object_size = offsetof(T, pyobject.size),   \
        .object_type = offsetof(T, pyobject.ob_type), .bytes_size = offsetof(T, bytes_object.size),              \
        .bytes_ob_size = offsetof(T, bytes_object.ob_size), .bytes_ob_sval = offsetof(T, bytes_object.ob_sval),  \
        .unicode_size = offsetof(T, unicode_object.size), .unicode_state = offsetof(T, unicode_object.state),    \
        .unicode_length = offsetof(T, unicode_object.length),                                                    \
        .unicode_ascii_size = offsetof(T, unicode_object.asciiobject_size),                                      \
    }

static const struct debug_table_shape shapes[] = {
    SHAPE(13, struct debug_offsets_313),
    SHAPE(14, struct debug_offsets_314),
};

#define DEBUG_COOKIE "xdebugpy"
/* No struct the reader walks is near this large (3.13's PyInterpreterState is 190 KiB); a size past it is not a
 * table but garbage. */
#define STRUCT_SIZE_MAX (16u << 20)

static const struct debug_table_shape *shape_for(unsigned minor)
{
    for (size_t i = 0; i < COUNT(shapes); i++)
        if (shapes[i].minor == minor)
            return &shapes[i];
    return NULL;
}

size_t probe_python_debug_offsets_size(unsigned minor)
{
    const struct debug_table_shape *shape = shape_for(minor);
    return shape ? shape->size : 0;
}

/* The table's entry at byte `position` (inside the bytes read: every position is below the shape's size). */
static uint64_t entry(const uint8_t *table, size_t position)
{
    uint64_t value;
    memcpy(&value, table + position, sizeof value);
    return value;
}

/* `offset` as a layout offset, when a field of `width` bytes there lies inside a struct of `size` bytes. */
static bool fits(uint64_t size, uint64_t offset, uint64_t width, uint32_t *out)
{
    if (size == 0 || size > STRUCT_SIZE_MAX || offset > size || width > size - offset)
        return false;
    *out = (uint32_t)offset;
    return true;
}

#define AT(field) entry(table, shape->field)

static bool take_runtime_and_interpreter(const uint8_t *table, const struct debug_table_shape *shape,
                                         struct probe_python_layout *layout)
{
    uint64_t size = AT(interp_size);
    uint64_t gil = AT(interp_gil);
    uint64_t locked = AT(interp_gil_locked);
    uint64_t holder = AT(interp_gil_holder);
    uint32_t gil_inline;
    /* not in the table: the thread states' pointers back to their interpreter check the layout instead */
    layout->interp_runtime = ABSENT;
    /* locked and last_holder are given from the interpreter's start: the GIL's own offsets are the differences */
    return fits(AT(runtime_size), AT(runtime_interpreters_head), 8, &layout->runtime_interpreters_head) &&
           fits(size, AT(interp_next), 8, &layout->interp_next) && fits(size, AT(interp_id), 8, &layout->interp_id) &&
           fits(size, AT(interp_threads_head), 8, &layout->interp_threads_head) &&
           fits(size, AT(interp_ceval_gil), 8, &layout->interp_gil_pointer) &&
           fits(size, gil, layout->gil_size, &gil_inline) && locked >= gil && holder >= gil &&
           fits(layout->gil_size, locked - gil, 4, &layout->gil_locked) &&
           fits(layout->gil_size, holder - gil, 8, &layout->gil_last_holder);
}

static bool take_thread_and_frame(const uint8_t *table, const struct debug_table_shape *shape,
                                  struct probe_python_layout *layout)
{
    uint64_t size = AT(tstate_size);
    uint64_t frame = AT(frame_size);
    layout->tstate_cframe = layout->cframe_current_frame = ABSENT;
    return fits(size, AT(tstate_next), 8, &layout->tstate_next) &&
           fits(size, AT(tstate_interp), 8, &layout->tstate_interp) &&
           fits(size, AT(tstate_thread_id), 8, &layout->tstate_thread_id) &&
           fits(size, AT(tstate_native_thread_id), 8, &layout->tstate_native_thread_id) &&
           fits(size, AT(tstate_current_frame), 8, &layout->tstate_frame) &&
           fits(frame, AT(frame_previous), 8, &layout->frame_previous) &&
           fits(frame, AT(frame_executable), 8, &layout->frame_code) &&
           fits(frame, AT(frame_instr_ptr), 8, &layout->frame_instruction) &&
           fits(frame, AT(frame_owner), 1, &layout->frame_owner);
}

static bool take_objects(const uint8_t *table, const struct debug_table_shape *shape,
                         struct probe_python_layout *layout)
{
    uint64_t code = AT(code_size);
    uint64_t unicode = AT(unicode_size);
    /* PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject: the headers' difference */
    uint64_t compact_extra = layout->unicode_compact_size - layout->unicode_ascii_size;
    uint32_t ascii_size;
    if (!fits(unicode, AT(unicode_ascii_size), compact_extra, &ascii_size))
        return false;
    layout->unicode_ascii_size = ascii_size;
    layout->unicode_compact_size = ascii_size + (uint32_t)compact_extra;
    return fits(code, AT(code_filename), 8, &layout->code_filename) &&
           fits(code, AT(code_name), 8, &layout->code_name) &&
           fits(code, AT(code_qualname), 8, &layout->code_qualname) &&
           fits(code, AT(code_linetable), 8, &layout->code_linetable) &&
           fits(code, AT(code_firstlineno), 4, &layout->code_firstlineno) &&
           fits(code, AT(code_adaptive), 0, &layout->code_adaptive) &&
           fits(AT(object_size), AT(object_type), 8, &layout->object_type) &&
           fits(AT(bytes_size), AT(bytes_ob_size), 8, &layout->bytes_size) &&
           fits(AT(bytes_size), AT(bytes_ob_sval), 0, &layout->bytes_data) &&
           fits(unicode, AT(unicode_length), 8, &layout->unicode_length) &&
           fits(unicode, AT(unicode_state), 4, &layout->unicode_state);
}

#undef AT

bool probe_python_layout_from_debug_offsets(const uint8_t *bytes, size_t size, unsigned minor,
                                            struct probe_python_layout *layout, const char **why)
{
    const struct debug_table_shape *shape = shape_for(minor);
    if (!shape) {
        *why = "this version publishes no _Py_DebugOffsets table that hangdoc knows";
        return false;
    }
    if (size < shape->size) {
        *why = "its _Py_DebugOffsets table could not be read";
        return false;
    }
    if (memcmp(bytes, DEBUG_COOKIE, strlen(DEBUG_COOKIE)) != 0) {
        *why = "no _Py_DebugOffsets table at the start of _PyRuntime (cookie missing)";
        return false;
    }
    uint64_t version = entry(bytes, shape->version);
    if (version >> 24 != 3 || ((version >> 16) & 0xff) != minor) {
        *why = "its _Py_DebugOffsets table is of another version than Py_Version";
        return false;
    }
    if (entry(bytes, shape->free_threaded)) {
        *why = "a free-threaded build (no GIL): its thread states and frames are laid out otherwise, not read yet";
        return false;
    }
    if (!take_runtime_and_interpreter(bytes, shape, layout) || !take_thread_and_frame(bytes, shape, layout) ||
        !take_objects(bytes, shape, layout)) {
        *why = "its _Py_DebugOffsets table holds an offset outside its struct";
        return false;
    }
    return true;
}

/* ---- spans ------------------------------------------------------------------------------------------------------- */

/* The end of a field of `width` bytes at `offset`, or 0 when the field is absent. */
static size_t field_end(uint32_t offset, size_t width)
{
    return offset == ABSENT ? 0 : (size_t)offset + width;
}

static size_t largest(const size_t *ends, size_t count)
{
    size_t result = 0;
    for (size_t i = 0; i < count; i++)
        if (ends[i] > result)
            result = ends[i];
    return result;
}

#define LARGEST(...) largest((const size_t[]){ __VA_ARGS__ }, sizeof((const size_t[]){ __VA_ARGS__ }) / sizeof(size_t))

struct probe_python_spans probe_python_layout_spans(const struct probe_python_layout *layout)
{
    /* f_lasti is an int; prev_instr and instr_ptr are pointers */
    size_t instruction = layout->frame_kind == PROBE_PYTHON_FRAME_OBJECT ? 4 : 8;
    return (struct probe_python_spans){
        .interp = LARGEST(field_end(layout->interp_next, 8), field_end(layout->interp_id, 8),
                          field_end(layout->interp_threads_head, 8), field_end(layout->interp_runtime, 8),
                          field_end(layout->interp_gil_pointer, 8)),
        .tstate = LARGEST(field_end(layout->tstate_next, 8), field_end(layout->tstate_interp, 8),
                          field_end(layout->tstate_thread_id, 8), field_end(layout->tstate_native_thread_id, 8),
                          field_end(layout->tstate_frame, 8), field_end(layout->tstate_cframe, 8)),
        .frame = LARGEST(field_end(layout->frame_previous, 8), field_end(layout->frame_code, 8),
                         field_end(layout->frame_instruction, instruction), field_end(layout->frame_owner, 1),
                         field_end(layout->frame_is_entry, 1)),
        .code = LARGEST(field_end(layout->code_filename, 8), field_end(layout->code_name, 8),
                        field_end(layout->code_qualname, 8), field_end(layout->code_linetable, 8),
                        field_end(layout->code_firstlineno, 4)),
        .unicode = LARGEST(field_end(layout->unicode_length, 8), field_end(layout->unicode_state, 1)),
    };
}
