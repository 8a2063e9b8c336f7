/* The layouts of CPython 3.10 to 3.13 (python_offsets.h).
 *
 * The numbers are offsetof() and sizeof() of the structs named in each comment, printed by a throwaway program
 * compiled with -DPy_BUILD_CORE against the installed headers (Include/ and Include/internal/) of CPython 3.10.13,
 * 3.11.7 (and Debian's 3.11.2: the same numbers), 3.12.1 and 3.13.0, x86-64, default build (GIL, no Py_DEBUG,
 * no Py_TRACE_REFS). aarch64 has the same LP64 sizes and alignments, so the same offsets.
 */
#include "python_offsets.h"

#include <string.h>

#define ABSENT PROBE_PYTHON_ABSENT

/* Shared by all four: PyObject.ob_type (object.h), PyBytesObject's ob_base.ob_size and ob_sval (bytesobject.h),
 * PyASCIIObject.length and .state (unicodeobject.h), struct _gil_runtime_state's sizeof, last_holder and locked
 * (internal/pycore_gil.h; FORCE_SWITCHING on, as that header defines it). */
#define COMMON_OBJECTS                                                                                        \
    .object_type = 8, .bytes_size = 16, .bytes_data = 32, .unicode_length = 16, .unicode_state = 32,         \
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
        COMMON_OBJECTS,
    },
};

const struct probe_python_layout *probe_python_layout_for(unsigned minor)
{
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].minor == minor)
            return &layouts[i];
    return NULL;
}

/* ---- 3.13: _Py_DebugOffsets -------------------------------------------------------------------------------------- */

/* The table as 3.13's internal/pycore_runtime.h lays it out: a cookie, the version, then for each struct its
 * size and the offsets of some of its fields, all uint64_t. Only the groups up to the one read last are here. */
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

/* offsetof(_Py_DebugOffsets, gc) in 3.13.0 */
_Static_assert(sizeof(struct debug_offsets_313) == 568, "the 3.13 table's groups up to unicode_object");

#define DEBUG_COOKIE "xdebugpy"
/* No struct the reader walks is near this large (3.13's PyInterpreterState is 190 KiB); a size past it is not a
 * table but garbage. */
#define STRUCT_SIZE_MAX (16u << 20)

size_t probe_python_debug_offsets_size(void)
{
    return sizeof(struct debug_offsets_313);
}

/* `offset` as a layout offset, when a field of `width` bytes there lies inside a struct of `size` bytes. */
static bool fits(uint64_t size, uint64_t offset, uint64_t width, uint32_t *out)
{
    if (size == 0 || size > STRUCT_SIZE_MAX || offset > size || width > size - offset)
        return false;
    *out = (uint32_t)offset;
    return true;
}

static bool take_runtime_and_interpreter(const struct debug_offsets_313 *table, struct probe_python_layout *layout)
{
    uint64_t size = table->interpreter_state.size;
    uint64_t gil = table->interpreter_state.gil_runtime_state;
    uint64_t locked = table->interpreter_state.gil_runtime_state_locked;
    uint64_t holder = table->interpreter_state.gil_runtime_state_holder;
    uint32_t gil_inline;
    /* not in the table: the thread states' pointers back to their interpreter check the layout instead */
    layout->interp_runtime = ABSENT;
    /* locked and last_holder are given from the interpreter's start: the GIL's own offsets are the differences */
    return fits(table->runtime_state.size, table->runtime_state.interpreters_head, 8,
                &layout->runtime_interpreters_head) &&
           fits(size, table->interpreter_state.next, 8, &layout->interp_next) &&
           fits(size, table->interpreter_state.id, 8, &layout->interp_id) &&
           fits(size, table->interpreter_state.threads_head, 8, &layout->interp_threads_head) &&
           fits(size, table->interpreter_state.ceval_gil, 8, &layout->interp_gil_pointer) &&
           fits(size, gil, layout->gil_size, &gil_inline) && locked >= gil && holder >= gil &&
           fits(layout->gil_size, locked - gil, 4, &layout->gil_locked) &&
           fits(layout->gil_size, holder - gil, 8, &layout->gil_last_holder);
}

static bool take_thread_and_frame(const struct debug_offsets_313 *table, struct probe_python_layout *layout)
{
    uint64_t size = table->thread_state.size;
    uint64_t frame = table->interpreter_frame.size;
    layout->tstate_cframe = layout->cframe_current_frame = ABSENT;
    return fits(size, table->thread_state.next, 8, &layout->tstate_next) &&
           fits(size, table->thread_state.interp, 8, &layout->tstate_interp) &&
           fits(size, table->thread_state.thread_id, 8, &layout->tstate_thread_id) &&
           fits(size, table->thread_state.native_thread_id, 8, &layout->tstate_native_thread_id) &&
           fits(size, table->thread_state.current_frame, 8, &layout->tstate_frame) &&
           fits(frame, table->interpreter_frame.previous, 8, &layout->frame_previous) &&
           fits(frame, table->interpreter_frame.executable, 8, &layout->frame_code) &&
           fits(frame, table->interpreter_frame.instr_ptr, 8, &layout->frame_instruction) &&
           fits(frame, table->interpreter_frame.owner, 1, &layout->frame_owner);
}

static bool take_objects(const struct debug_offsets_313 *table, struct probe_python_layout *layout)
{
    uint64_t code = table->code_object.size;
    uint64_t unicode = table->unicode_object.size;
    /* PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject: the headers' difference */
    uint64_t compact_extra = layout->unicode_compact_size - layout->unicode_ascii_size;
    uint32_t ascii_size;
    if (!fits(unicode, table->unicode_object.asciiobject_size, compact_extra, &ascii_size))
        return false;
    layout->unicode_ascii_size = ascii_size;
    layout->unicode_compact_size = ascii_size + (uint32_t)compact_extra;
    return fits(code, table->code_object.filename, 8, &layout->code_filename) &&
           fits(code, table->code_object.name, 8, &layout->code_name) &&
           fits(code, table->code_object.qualname, 8, &layout->code_qualname) &&
           fits(code, table->code_object.linetable, 8, &layout->code_linetable) &&
           fits(code, table->code_object.firstlineno, 4, &layout->code_firstlineno) &&
           fits(code, table->code_object.co_code_adaptive, 0, &layout->code_adaptive) &&
           fits(table->pyobject.size, table->pyobject.ob_type, 8, &layout->object_type) &&
           fits(table->bytes_object.size, table->bytes_object.ob_size, 8, &layout->bytes_size) &&
           fits(table->bytes_object.size, table->bytes_object.ob_sval, 0, &layout->bytes_data) &&
           fits(unicode, table->unicode_object.length, 8, &layout->unicode_length) &&
           fits(unicode, table->unicode_object.state, 4, &layout->unicode_state);
}

bool probe_python_layout_from_debug_offsets(const uint8_t *bytes, size_t size, unsigned minor,
                                            struct probe_python_layout *layout, const char **why)
{
    struct debug_offsets_313 table;
    if (size < sizeof table) {
        *why = "its _Py_DebugOffsets table could not be read";
        return false;
    }
    memcpy(&table, bytes, sizeof table);
    if (memcmp(table.cookie, DEBUG_COOKIE, sizeof table.cookie) != 0) {
        *why = "no _Py_DebugOffsets table at the start of _PyRuntime (cookie missing)";
        return false;
    }
    if (table.version >> 24 != 3 || ((table.version >> 16) & 0xff) != minor) {
        *why = "its _Py_DebugOffsets table is of another version than Py_Version";
        return false;
    }
    if (table.free_threaded) {
        *why = "a free-threaded build: its thread states and GIL are laid out otherwise";
        return false;
    }
    if (!take_runtime_and_interpreter(&table, layout) || !take_thread_and_frame(&table, layout) ||
        !take_objects(&table, layout)) {
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
