/* Python stacks, read from a running CPython's memory (python.h). */
#include "python.h"

#include "files.h"

#include "clock.h"
#include "memory.h"
#include "pid_map.h"
#include "procfs.h"
#include "syscalls.h"
#include "python_decode.h"
#include "python_memory.h"
#include "python_offsets.h"
#include "python_symbols.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ABSENT PROBE_PYTHON_ABSENT

/* Bounds on what a process may make the reader walk: its memory is hostile, and it runs on while it is read. */
#define INTERPRETERS_MAX 64
#define THREAD_STATES_MAX 10000
#define FRAMES_MAX 512
#define TEXT_MAX 1024                /* bytes of UTF-8 kept of a function or file name */
#define LINE_TABLE_MAX (64 * 1024)   /* a code object's line table; real ones take a few hundred bytes */
#define LINE_MAX 10000000            /* a line number past this is garbage, not a source file */
/* What one read of a struct may take: 3.13's layout comes from the target. The interpreter's fields lie 7 KiB into
 * it in 3.13; every other struct read (thread state, frame, code object, str, GIL) is a few hundred bytes. */
#define INTERPRETER_READ_MAX (64 * 1024)
#define OBJECT_READ_MAX 1024
#define SYMBOL_FILES_MAX 16          /* distinct interpreter files remembered per run */

/* PyASCIIObject.state's bit fields as GCC lays them out from the lowest bit (python_symbols.c reads only files of
 * our byte order): interned (2 bits), kind (3), compact (1), ascii (1). cpython/unicodeobject.h of 3.10-3.13. */
#define UNICODE_KIND(state) (((state) >> 2) & 7)
#define UNICODE_COMPACT(state) (((state) >> 5) & 1)
#define UNICODE_ASCII(state) (((state) >> 6) & 1)

/* glibc's offsetof(struct pthread, tid) (nptl/descr.h): x86-64, aarch64. 3.10's thread states hold only the
 * pthread_t, the address of that struct; the kernel's tid is found in it. These are tried first; any offset must
 * prove itself on the process's own threads. */
static const uint32_t glibc_tid_offsets[] = { 0x2d0, 0xd0 };
#define PTHREAD_SCAN_BYTES 1024
#define PTHREAD_SAMPLES 8

/* ---- the ELF files interpreters were looked for in, once per run ------------------------------------------------- */

struct symbol_file {
    uint64_t inode;
    unsigned device_major;
    unsigned device_minor;
    bool readable;
    const char *why_not; /* static: when not readable */
    struct probe_python_symbols symbols;
};

struct symbol_files {
    struct symbol_file items[SYMBOL_FILES_MAX];
    size_t count;
};

/* The symbols of the file `mapping` maps: a tree of Python processes maps one or two interpreters' files. */
static const struct symbol_file *symbols_of(struct symbol_files *files, pid_t pid, const struct hd_mapping *mapping)
{
    for (size_t i = 0; i < files->count; i++) {
        const struct symbol_file *file = &files->items[i];
        if (file->inode == mapping->inode && file->device_major == mapping->device_major &&
            file->device_minor == mapping->device_minor)
            return file;
    }
    /* when full, the last slot is the scratch one */
    struct symbol_file *file = &files->items[files->count < SYMBOL_FILES_MAX ? files->count++ : SYMBOL_FILES_MAX - 1];
    *file = (struct symbol_file){
        .inode = mapping->inode, .device_major = mapping->device_major, .device_minor = mapping->device_minor };
    file->readable = probe_python_read_symbols(pid, mapping, &file->symbols, &file->why_not);
    return file;
}

/* ---- one process ------------------------------------------------------------------------------------------------- */

/* What one code object says, read once per process. */
struct code_info {
    char *function; /* co_qualname (3.11+) or co_name; NULL when unreadable */
    char *file;     /* co_filename; NULL when unreadable */
    int first_line; /* 0 when implausible */
    uint8_t *line_table;
    size_t line_table_size;
};

/* One PyThreadState of the main interpreter. */
struct thread_state {
    uint64_t address;
    uint64_t frame_holder; /* `frame` (3.10), `current_frame` (3.13), or the _PyCFrame holding it (3.11, 3.12) */
    uint64_t thread_id;    /* pthread_t */
    uint64_t native_thread_id;
    pid_t own_tid;            /* the kernel tid it records, in the process's own PID namespace; 0 when unread */
    struct hd_thread *thread; /* NULL when no thread of the snapshot has its id */
};

struct target {
    struct hd_process *process;
    pid_t pid;
    pid_t own_pid; /* the process's pid in its own PID namespace: what its memory holds */
    uint32_t tid_offset; /* 3.10: where glibc's struct pthread holds the tid; 0 until found */
    unsigned *gil_rereads; /* what is left of the run's GIL_REREADS_PER_RUN */
    struct probe_memory_cache *memory;
    char why[256]; /* why the interpreter could not be read */
    int read_error; /* the last failed read's -errno */
    bool out_of_memory;
    struct probe_python_addresses where; /* found in its ELF file (the file: one of the process's mappings) */
    /* known once read */
    unsigned minor;
    char version[16];
    struct probe_python_layout layout;
    struct probe_python_spans spans;
    uint64_t interpreter;
    uint8_t *interpreter_bytes; /* spans.interp of them */
    unsigned subinterpreters;   /* the interpreters besides the main one, whose threads are not read */
    struct thread_state *states;
    size_t nstates;
    struct probe_pid_map own_tids; /* in another PID namespace: a thread's own tid to its index */
    struct hd_int_map code_index;
    struct code_info *codes;
    size_t ncodes;
    size_t codes_capacity;
};

__attribute__((format(printf, 2, 3))) static bool fail(struct target *target, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(target->why, sizeof target->why, format, arguments);
    va_end(arguments);
    return false;
}

static bool read_target(struct target *target, uint64_t address, void *buffer, size_t size)
{
    if (!address)
        return false;
    int error = probe_memory_cache_read(target->memory, address, buffer, size);
    if (error)
        target->read_error = error;
    return error == 0;
}

/* Why the last read failed, in words for a note. */
static const char *read_failure(const struct target *target)
{
    if (target->read_error == -EPERM || target->read_error == -EACCES)
        return "its memory may not be read (another user, or Yama's ptrace_scope)";
    if (target->read_error == -ESRCH)
        return "the process exited";
    return target->read_error ? strerror(-target->read_error) : "an implausible value";
}

static uint64_t field_u64(const uint8_t *bytes, size_t size, uint32_t offset)
{
    uint64_t value = 0;
    if (offset != ABSENT && offset <= size && size - offset >= sizeof value)
        memcpy(&value, bytes + offset, sizeof value);
    return value;
}

static int32_t field_i32(const uint8_t *bytes, size_t size, uint32_t offset)
{
    int32_t value = 0;
    if (offset != ABSENT && offset <= size && size - offset >= sizeof value)
        memcpy(&value, bytes + offset, sizeof value);
    return value;
}

static uint8_t field_u8(const uint8_t *bytes, size_t size, uint32_t offset)
{
    return offset != ABSENT && offset < size ? bytes[offset] : 0;
}

/* The thread whose id in the process's own PID namespace is `own_tid`, or NULL. */
static struct hd_thread *thread_of(const struct target *target, uint64_t own_tid)
{
    if (own_tid == 0 || own_tid > INT32_MAX)
        return NULL;
    if (!target->process->ns_pid)
        return hd_process_find_thread(target->process, (pid_t)own_tid);
    size_t index;
    if (!probe_pid_map_get(&target->own_tids, (pid_t)own_tid, &index))
        return NULL;
    return &target->process->threads[index];
}

static bool index_own_tids(struct target *target)
{
    struct hd_process *process = target->process;
    target->own_pid = process->ns_pid ? process->ns_pid : process->pid;
    for (size_t t = 0; process->ns_pid && t < process->nthreads; t++)
        if (process->threads[t].ns_tid > 0 && !probe_pid_map_put(&target->own_tids, process->threads[t].ns_tid, t)) {
            target->out_of_memory = true;
            return false;
        }
    return true;
}

/* ---- finding the interpreter ------------------------------------------------------------------------------------- */

static bool is_libpython(const struct hd_mapping *mapping)
{
    return strncmp(hd_basename(mapping->path), "libpython", 9) == 0;
}

static bool is_executable(const struct hd_process *process, const struct hd_mapping *mapping)
{
    return process->exe && strcmp(mapping->path, process->exe) == 0;
}

/* Takes the interpreter's symbols from the file `mapping` maps (at file offset 0), when it has them. */
static bool take_symbols(struct target *target, struct symbol_files *files, const struct hd_mapping *mapping)
{
    const struct symbol_file *file = symbols_of(files, target->pid, mapping);
    uint64_t bias;
    if (!file->readable)
        return fail(target, "%s: %s", mapping->path, file->why_not);
    if (!file->symbols.runtime)
        return fail(target, "no _PyRuntime symbol in %s (Python 2, before 3.7, or stripped)", mapping->path);
    if (!file->symbols.code_type)
        return fail(target, "no PyCode_Type symbol in %s", mapping->path);
    if (!probe_python_load_bias(&file->symbols, mapping, &bias))
        return fail(target, "%s is mapped elsewhere than its program headers say", mapping->path);
    target->where = (struct probe_python_addresses){
        .file = mapping->path,
        .runtime = file->symbols.runtime + bias,
        .runtime_size = file->symbols.runtime_size,
        .version = file->symbols.version ? file->symbols.version + bias : 0,
        .code_type = file->symbols.code_type + bias,
    };
    return true;
}

/* The interpreter's symbols: in a mapped libpython (pyenv's shared builds, embedding programs), else, when none
 * is mapped, in the executable (Debian's python3.11 links libpython in). */
static bool locate_interpreter(struct target *target, struct symbol_files *files)
{
    const struct hd_process *process = target->process;
    bool libpython_mapped = false;
    if (process->nmappings == 0)
        return fail(target, "its maps could not be read");
    fail(target, "no libpython is mapped, and the executable is unknown or not mapped");
    for (int pass = 0; pass < 2 && !(pass == 1 && libpython_mapped); pass++)
        for (size_t m = 0; m < process->nmappings; m++) {
            const struct hd_mapping *mapping = &process->mappings[m];
            if (mapping->offset != 0 || !mapping->path || mapping->path[0] != '/' || mapping->inode == 0 ||
                !(pass == 0 ? is_libpython(mapping) : is_executable(process, mapping)))
                continue;
            libpython_mapped |= pass == 0;
            if (take_symbols(target, files, mapping))
                return true;
        }
    return false;
}

/* The minor version a file name gives: "libpython3.10.so.1.0", "python3.10"; 0 when it names none. */
static unsigned minor_in_name(const char *path)
{
    const char *name = strstr(hd_basename(path), "python3.");
    if (!name)
        return 0;
    char *end;
    unsigned long minor = strtoul(name + 8, &end, 10);
    return end != name + 8 && minor < 100 ? (unsigned)minor : 0;
}

/* "3.11.7", "3.13.0rc2": Py_Version is PY_VERSION_HEX, 0xMMmmppLS (level 0xA alpha, 0xB beta, 0xC candidate,
 * 0xF final; S the serial). */
static void format_version(uint32_t hex, char *out, size_t size)
{
    static const char *const levels[16] = { [0xa] = "a", [0xb] = "b", [0xc] = "rc" };
    unsigned level = (hex >> 4) & 0xf;
    int length = snprintf(out, size, "%u.%u.%u", hex >> 24, (hex >> 16) & 0xff, (hex >> 8) & 0xff);
    if (levels[level] && length > 0 && (size_t)length < size)
        snprintf(out + length, size - (size_t)length, "%s%u", levels[level], hex & 0xf);
}

/* 3.11+ publish Py_Version; 3.10 does not, and is known by its file's name (the layout's own checks follow). */
static bool identify_version(struct target *target)
{
    if (target->where.version) {
        uint32_t hex; /* an unsigned long; its low 32 bits on a little-endian machine */
        if (!read_target(target, target->where.version, &hex, sizeof hex))
            return fail(target, "Py_Version unreadable: %s", read_failure(target));
        format_version(hex, target->version, sizeof target->version);
        if (hex >> 24 != 3)
            return fail(target, "Py_Version says %s: not CPython 3", target->version);
        target->minor = (hex >> 16) & 0xff;
    } else {
        target->minor = minor_in_name(target->where.file);
        if (target->minor == 0)
            return fail(target, "no Py_Version symbol, and the name of %s gives no version", target->where.file);
        snprintf(target->version, sizeof target->version, "3.%u", target->minor);
        if (target->minor >= 11)
            return fail(target, "no Py_Version symbol, though %s names 3.%u", target->where.file, target->minor);
    }
    if (target->minor > PROBE_PYTHON_NEWEST_MINOR)
        return fail(target, "Python %s: not supported yet (hangdoc reads CPython 3.%d to 3.%d)", target->version,
                    PROBE_PYTHON_OLDEST_MINOR, PROBE_PYTHON_NEWEST_MINOR);
    if (!probe_python_layout_for(target->minor))
        return fail(target, "Python %s: too old (hangdoc reads CPython 3.%d to 3.%d)", target->version,
                    PROBE_PYTHON_OLDEST_MINOR, PROBE_PYTHON_NEWEST_MINOR);
    return true;
}

static bool choose_layout(struct target *target)
{
    target->layout = *probe_python_layout_for(target->minor);
    size_t size = probe_python_debug_offsets_size(target->minor);
    if (size) {
        uint8_t table[1024];
        const char *why;
        if (size > sizeof table || !read_target(target, target->where.runtime, table, size))
            return fail(target, "_Py_DebugOffsets unreadable: %s", read_failure(target));
        if (!probe_python_layout_from_debug_offsets(table, size, target->minor, &target->layout, &why))
            return fail(target, "CPython %s: %s", target->version, why);
    }
    target->spans = probe_python_layout_spans(&target->layout);
    const struct probe_python_spans *spans = &target->spans;
    if (spans->interp > INTERPRETER_READ_MAX || spans->tstate > OBJECT_READ_MAX || spans->frame > OBJECT_READ_MAX ||
        spans->code > OBJECT_READ_MAX || spans->unicode > OBJECT_READ_MAX || target->layout.gil_size > OBJECT_READ_MAX)
        return fail(target, "CPython %s: its structs are laid out too large to be read", target->version);
    uint64_t runtime_end = target->layout.runtime_interpreters_head + 8;
    if (target->layout.runtime_gil != ABSENT)
        runtime_end = target->layout.runtime_gil + target->layout.gil_size;
    if (target->where.runtime_size && target->where.runtime_size < runtime_end)
        return fail(target, "its _PyRuntime is smaller than CPython %s's", target->version);
    return true;
}

/* The main interpreter (id 0), the oldest in the list that starts at _PyRuntime.interpreters.head. Each one must
 * point back to _PyRuntime (3.10-3.12: the check that the layout is this build's; 3.13's table, read from the
 * build itself, does not say where that pointer is). */
static bool find_main_interpreter(struct target *target)
{
    const struct probe_python_layout *layout = &target->layout;
    size_t span = target->spans.interp;
    uint64_t address;
    if (!read_target(target, target->where.runtime + layout->runtime_interpreters_head, &address, sizeof address))
        return fail(target, "_PyRuntime unreadable: %s", read_failure(target));
    if (!address)
        return fail(target, "no interpreter yet (starting, or finalizing)");
    if (!(target->interpreter_bytes = malloc(span))) {
        target->out_of_memory = true;
        return false;
    }
    for (unsigned count = 0; address && count < INTERPRETERS_MAX; count++) {
        if (!read_target(target, address, target->interpreter_bytes, span))
            return fail(target, "an interpreter's state unreadable: %s", read_failure(target));
        if (layout->interp_runtime != ABSENT &&
            field_u64(target->interpreter_bytes, span, layout->interp_runtime) != target->where.runtime)
            return fail(target, "an interpreter that does not point back to _PyRuntime: not CPython %s's layout",
                        target->version);
        if (field_u64(target->interpreter_bytes, span, layout->interp_id) == 0) {
            target->interpreter = address;
            target->subinterpreters = count; /* the list runs from the newest to the main one, the oldest */
            return true;
        }
        address = field_u64(target->interpreter_bytes, span, layout->interp_next);
    }
    return fail(target, "no main interpreter among the first %d", INTERPRETERS_MAX);
}

/* ---- thread states ----------------------------------------------------------------------------------------------- */

static bool append_state(struct target *target, const uint8_t *bytes, uint64_t address, size_t *capacity)
{
    const struct probe_python_layout *layout = &target->layout;
    size_t span = target->spans.tstate;
    struct thread_state *grown = hd_grow(target->states, capacity, target->nstates, sizeof *grown);
    if (!grown)
        return false;
    target->states = grown;
    uint32_t frame_field = layout->tstate_cframe != ABSENT ? layout->tstate_cframe : layout->tstate_frame;
    target->states[target->nstates++] = (struct thread_state){
        .address = address,
        .frame_holder = field_u64(bytes, span, frame_field),
        .thread_id = field_u64(bytes, span, layout->tstate_thread_id),
        .native_thread_id = field_u64(bytes, span, layout->tstate_native_thread_id),
    };
    return true;
}

/* The main interpreter's thread states, as far as the list reads consistently: a thread that ends while the list
 * is walked takes its state out of it, and a state that is not the interpreter's (or seen before) ends the walk. */
static bool read_thread_states(struct target *target)
{
    const struct probe_python_layout *layout = &target->layout;
    size_t span = target->spans.tstate, capacity = 0;
    uint8_t bytes[OBJECT_READ_MAX];
    struct hd_int_map seen = { 0 };
    uint64_t address = field_u64(target->interpreter_bytes, target->spans.interp, layout->interp_threads_head);
    bool ok = true;
    while (address && target->nstates < THREAD_STATES_MAX && ok) {
        size_t ignored;
        if (hd_int_map_get(&seen, address, &ignored) || !read_target(target, address, bytes, span) ||
            field_u64(bytes, span, layout->tstate_interp) != target->interpreter)
            break;
        ok = hd_int_map_put(&seen, address, 0) && append_state(target, bytes, address, &capacity);
        address = field_u64(bytes, span, layout->tstate_next);
    }
    hd_int_map_clear(&seen);
    target->out_of_memory |= !ok;
    if (ok && target->nstates == 0)
        return fail(target, "no thread state in the main interpreter");
    return ok;
}

/* Whether the int at `offset` of each pthread block is the tid of a distinct thread of the process; with one
 * block, only when it is a known glibc offset or names the process's own main thread. At a known offset, a block
 * may name a thread the process does not have, as long as another names one it has: in a child forked by C code
 * that CPython did not see, the thread states of the parent's other threads remain, their pthreads holding the
 * parent's tids. */
static bool tid_offset_fits(const struct target *target, uint8_t blocks[][PTHREAD_SCAN_BYTES], size_t count,
                            uint32_t offset, bool known)
{
    int32_t seen[PTHREAD_SAMPLES];
    bool names_main = false, names_any = false;
    for (size_t b = 0; b < count; b++) {
        int32_t tid = field_i32(blocks[b], PTHREAD_SCAN_BYTES, offset);
        bool ours = tid > 0 && thread_of(target, (uint64_t)tid);
        names_any |= ours;
        /* glibc zeroes the tid of every other thread's descriptor in a forked child */
        if (known && tid == 0)
            continue;
        if (tid <= 0 || (!ours && !known))
            return false;
        for (size_t s = 0; s < b; s++)
            if (seen[s] == tid)
                return false;
        seen[b] = tid;
        names_main |= tid == target->own_pid;
    }
    return names_any && (count >= 2 || known || names_main);
}

/* 3.10: where glibc's struct pthread keeps the tid, found on the process's own thread states (up to
 * PTHREAD_SAMPLES of them, each a different pthread_t). */
static bool find_tid_offset(struct target *target, uint32_t *offset)
{
    uint8_t blocks[PTHREAD_SAMPLES][PTHREAD_SCAN_BYTES];
    uint64_t sampled[PTHREAD_SAMPLES];
    size_t count = 0;
    for (size_t i = 0; i < target->nstates && count < PTHREAD_SAMPLES; i++) {
        uint64_t pthread = target->states[i].thread_id;
        bool again = false;
        for (size_t s = 0; s < count; s++)
            again |= sampled[s] == pthread;
        if (!again && read_target(target, pthread, blocks[count], PTHREAD_SCAN_BYTES))
            sampled[count++] = pthread;
    }
    for (size_t k = 0; k < COUNT(glibc_tid_offsets); k++)
        if (count && tid_offset_fits(target, blocks, count, glibc_tid_offsets[k], true)) {
            *offset = glibc_tid_offsets[k];
            return true;
        }
    for (uint32_t candidate = 0; count && candidate + 4 <= PTHREAD_SCAN_BYTES; candidate += 4)
        if (tid_offset_fits(target, blocks, count, candidate, false)) {
            *offset = candidate;
            return true;
        }
    return false;
}

/* A process forked by C code that CPython did not see (a library's fork(), ctypes' libc.fork()): its thread states
 * still record the parent's native thread ids, the forking thread's included. glibc wrote the child's tid into
 * that thread's own struct pthread at fork, so a state whose pthread holds, at glibc's offset, the tid of a thread
 * of the process not matched yet is that thread's. The other states keep the parent's ids (a GIL holder that
 * stayed there). */
static void match_after_fork(struct target *target, struct thread_state *state, struct probe_pid_map *matched,
                             bool *failed)
{
    for (size_t k = 0; k < COUNT(glibc_tid_offsets); k++) {
        int32_t tid = 0;
        if (!read_target(target, state->thread_id + glibc_tid_offsets[k], &tid, sizeof tid) || tid <= 0)
            continue;
        struct hd_thread *thread = thread_of(target, (uint64_t)tid);
        size_t taken;
        if (!thread || probe_pid_map_get(matched, thread->tid, &taken))
            continue;
        if (probe_pid_map_add(matched, thread->tid, (size_t)(state - target->states), failed)) {
            state->thread = thread;
            return;
        }
    }
}

/* Each thread state's thread: by native_thread_id (3.11+), or by the tid in its pthread (3.10). */
static bool match_threads(struct target *target)
{
    uint32_t tid_offset = 0;
    bool native = target->layout.tstate_native_thread_id != ABSENT, failed = false;
    struct probe_pid_map matched = { 0 };
    if (!native && !find_tid_offset(target, &tid_offset))
        return fail(target, "its thread states' pthreads name no thread of the process");
    target->tid_offset = tid_offset;
    for (size_t i = 0; i < target->nstates && !failed; i++) {
        struct thread_state *state = &target->states[i];
        int32_t tid = 0;
        if (native && state->native_thread_id > 0 && state->native_thread_id <= INT32_MAX)
            tid = (int32_t)state->native_thread_id;
        else if (!native && !(read_target(target, state->thread_id + tid_offset, &tid, sizeof tid) && tid > 0))
            tid = 0;
        /* a state whose thread is not in this process keeps its id: after a fork() that CPython did not see, the
         * GIL's holder may be a thread that stayed in the parent */
        state->own_tid = tid > 0 ? (pid_t)tid : 0;
        state->thread = tid > 0 ? thread_of(target, (uint64_t)tid) : NULL;
        /* a thread with two states (a C extension's own): its first, the newest, is the one it runs */
        if (state->thread && !probe_pid_map_add(&matched, state->thread->tid, i, &failed))
            state->thread = NULL;
    }
    for (size_t i = 0; native && hd_process_forked(target->process) && i < target->nstates && !failed; i++)
        if (!target->states[i].thread)
            match_after_fork(target, &target->states[i], &matched, &failed);
    probe_pid_map_clear(&matched);
    target->out_of_memory |= failed;
    return !failed;
}

/* ---- code objects and strings ------------------------------------------------------------------------------------ */

/* The compact str at `address` as UTF-8 (at most TEXT_MAX bytes), malloc'd; NULL when it is not one we read. */
static char *read_text(struct target *target, uint64_t address)
{
    const struct probe_python_layout *layout = &target->layout;
    size_t span = target->spans.unicode;
    uint8_t header[OBJECT_READ_MAX];
    if (!read_target(target, address, header, span))
        return NULL;
    uint8_t state = field_u8(header, span, layout->unicode_state);
    int64_t length = (int64_t)field_u64(header, span, layout->unicode_length);
    unsigned width = UNICODE_KIND(state);
    bool ascii = UNICODE_ASCII(state);
    if (!UNICODE_COMPACT(state) || length < 0 || (width != 1 && width != 2 && width != 4) || (ascii && width != 1))
        return NULL;
    size_t count = length > TEXT_MAX ? TEXT_MAX : (size_t)length;
    uint8_t units[TEXT_MAX * 4];
    char text[TEXT_MAX + 1];
    uint64_t data = address + (ascii ? layout->unicode_ascii_size : layout->unicode_compact_size);
    if (count && !read_target(target, data, units, count * width))
        return NULL;
    probe_python_text_utf8(units, count, width, text, sizeof text);
    char *copy = strdup(text);
    target->out_of_memory |= !copy;
    return copy;
}

/* The bytes of the line table (a bytes object) at `address`, malloc'd into `info`; left NULL when unreadable. */
static void read_line_table(struct target *target, uint64_t address, struct code_info *info)
{
    const struct probe_python_layout *layout = &target->layout;
    int64_t size;
    if (!read_target(target, address + layout->bytes_size, &size, sizeof size) || size <= 0 ||
        size > LINE_TABLE_MAX || !(info->line_table = malloc((size_t)size)))
        return;
    if (read_target(target, address + layout->bytes_data, info->line_table, (size_t)size)) {
        info->line_table_size = (size_t)size;
        return;
    }
    free(info->line_table);
    info->line_table = NULL;
}

static void code_info_release(struct code_info *info)
{
    free(info->function);
    free(info->file);
    free(info->line_table);
}

/* The code object at `address`, read once per process; NULL when it is not a code object (its type is not
 * PyCode_Type: the frame changed under the reader) or memory ran out. Valid until the next call. */
static const struct code_info *code_at(struct target *target, uint64_t address)
{
    const struct probe_python_layout *layout = &target->layout;
    size_t span = target->spans.code, index;
    if (hd_int_map_get(&target->code_index, address, &index))
        return &target->codes[index];
    uint8_t bytes[OBJECT_READ_MAX];
    if (!read_target(target, address, bytes, span) ||
        field_u64(bytes, span, layout->object_type) != target->where.code_type)
        return NULL;
    struct code_info info = { 0 };
    uint32_t name = layout->code_qualname != ABSENT ? layout->code_qualname : layout->code_name;
    info.function = read_text(target, field_u64(bytes, span, name));
    info.file = read_text(target, field_u64(bytes, span, layout->code_filename));
    int32_t first_line = field_i32(bytes, span, layout->code_firstlineno);
    info.first_line = first_line > 0 && first_line <= LINE_MAX ? first_line : 0;
    read_line_table(target, field_u64(bytes, span, layout->code_linetable), &info);
    struct code_info *grown = hd_grow(target->codes, &target->codes_capacity, target->ncodes, sizeof *grown);
    if (!grown || !hd_int_map_put(&target->code_index, address, target->ncodes)) {
        code_info_release(&info);
        target->out_of_memory = true;
        return NULL;
    }
    target->codes = grown;
    target->codes[target->ncodes] = info;
    return &target->codes[target->ncodes++];
}

/* The line of the frame's instruction: `instruction` is f_lasti (3.10, an index of code units) or the address of
 * the instruction (3.11+: prev_instr, instr_ptr), from co_code_adaptive inside the code object. */
static int line_of(const struct target *target, const struct code_info *info, uint64_t code, uint64_t instruction)
{
    const struct probe_python_layout *layout = &target->layout;
    int line;
    if (!info->first_line || !info->line_table)
        return 0;
    if (layout->line_table == PROBE_PYTHON_LINES_310) {
        int32_t index = (int32_t)instruction;
        line = probe_python_line_310(info->line_table, info->line_table_size, info->first_line,
                                     index < 0 ? -1 : (int64_t)index * 2);
    } else {
        int64_t offset = (int64_t)(instruction - (code + layout->code_adaptive));
        line = probe_python_line_311(info->line_table, info->line_table_size, info->first_line, offset);
    }
    return line > 0 && line <= LINE_MAX ? line : 0;
}

/* ---- frames ------------------------------------------------------------------------------------------------------ */

enum walk_end {
    WALK_WHOLE,     /* reached the outermost frame */
    WALK_CAPPED,    /* FRAMES_MAX reached */
    WALK_BROKEN,    /* a frame unreadable, not a code object's, or seen before: the stack changed under us */
};

struct walk {
    struct hd_python_frame *frames;
    size_t count;
    size_t capacity;
};

static void walk_release(struct walk *walk)
{
    for (size_t f = 0; f < walk->count; f++) {
        free(walk->frames[f].function);
        free(walk->frames[f].file);
    }
    free(walk->frames);
    *walk = (struct walk){ 0 };
}

static bool append_frame(struct walk *walk, const struct code_info *info, int line, bool entry)
{
    struct hd_python_frame *grown = hd_grow(walk->frames, &walk->capacity, walk->count, sizeof *grown);
    if (!grown)
        return false;
    walk->frames = grown;
    char *function cleanup_free = strdup(info->function ? info->function : "?");
    char *file cleanup_free = strdup(info->file ? info->file : "?");
    if (!function || !file)
        return false;
    walk->frames[walk->count++] = (struct hd_python_frame){
        .function = steal_pointer(&function),
        .file = steal_pointer(&file),
        .line = line,
        .entry = entry,
    };
    return true;
}

static bool seen_before(const uint64_t *visited, size_t count, uint64_t address)
{
    for (size_t i = 0; i < count; i++)
        if (visited[i] == address)
            return true;
    return false;
}

/* One frame at `address`: appended to the walk (or, for the eval loop's own shim frame, marks the frame before it
 * as the first of its run); *previous is its caller. */
static enum walk_end take_frame(struct target *target, uint64_t address, struct walk *walk, uint64_t *previous)
{
    const struct probe_python_layout *layout = &target->layout;
    size_t span = target->spans.frame;
    uint8_t bytes[OBJECT_READ_MAX];
    if (!read_target(target, address, bytes, span))
        return WALK_BROKEN;
    *previous = field_u64(bytes, span, layout->frame_previous);
    if (layout->owned_by_c_stack >= 0 && field_u8(bytes, span, layout->frame_owner) >= layout->owned_by_c_stack) {
        if (walk->count > 0)
            walk->frames[walk->count - 1].entry = true;
        return WALK_WHOLE;
    }
    uint64_t code = field_u64(bytes, span, layout->frame_code) & ~layout->frame_code_tag;
    const struct code_info *info = code_at(target, code);
    if (!info)
        return WALK_BROKEN;
    uint64_t instruction = layout->frame_kind == PROBE_PYTHON_FRAME_OBJECT
                               ? (uint64_t)(uint32_t)field_i32(bytes, span, layout->frame_instruction)
                               : field_u64(bytes, span, layout->frame_instruction);
    /* 3.10 runs every frame in an eval loop of its own; 3.11 marks the first of each run */
    bool entry = layout->frame_kind == PROBE_PYTHON_FRAME_OBJECT ||
                 (layout->frame_is_entry != ABSENT && field_u8(bytes, span, layout->frame_is_entry));
    if (!append_frame(walk, info, line_of(target, info, code, instruction), entry)) {
        target->out_of_memory = true;
        return WALK_BROKEN;
    }
    return WALK_WHOLE;
}

/* The frames from `first` outwards. */
static enum walk_end walk_frames(struct target *target, uint64_t first, struct walk *walk)
{
    uint64_t visited[FRAMES_MAX];
    size_t nvisited = 0;
    for (uint64_t address = first; address;) {
        if (nvisited == FRAMES_MAX)
            return WALK_CAPPED;
        if (seen_before(visited, nvisited, address))
            return WALK_BROKEN;
        visited[nvisited++] = address;
        enum walk_end end = take_frame(target, address, walk, &address);
        if (end != WALK_WHOLE)
            return end;
    }
    return WALK_WHOLE;
}

/* The innermost frame of a thread state: read through its _PyCFrame in 3.11 and 3.12. */
static bool innermost_frame(struct target *target, const struct thread_state *state, uint64_t *frame)
{
    const struct probe_python_layout *layout = &target->layout;
    *frame = 0;
    if (layout->tstate_cframe == ABSENT) {
        *frame = state->frame_holder;
        return true;
    }
    return !state->frame_holder ||
           read_target(target, state->frame_holder + layout->cframe_current_frame, frame, sizeof *frame);
}

/* The thread state read again, for a second walk: its frames moved on since. */
static bool reread_state(struct target *target, struct thread_state *state)
{
    const struct probe_python_layout *layout = &target->layout;
    size_t span = target->spans.tstate;
    uint8_t bytes[OBJECT_READ_MAX];
    if (!read_target(target, state->address, bytes, span) ||
        field_u64(bytes, span, layout->tstate_interp) != target->interpreter)
        return false;
    uint32_t frame_field = layout->tstate_cframe != ABSENT ? layout->tstate_cframe : layout->tstate_frame;
    state->frame_holder = field_u64(bytes, span, frame_field);
    return true;
}

/* A thread's Python stack. A walk broken by a thread that ran on is taken once more from the top; when that too
 * breaks, the longer consistent part is kept, marked truncated. */
static void read_stack(struct target *target, struct thread_state *state)
{
    struct walk kept = { 0 };
    enum walk_end end = WALK_BROKEN;
    for (int attempt = 0; attempt < 2 && end == WALK_BROKEN && !target->out_of_memory; attempt++) {
        uint64_t first;
        struct walk walk = { 0 };
        if (attempt > 0)
            probe_memory_cache_forget(target->memory); /* what it holds is what the broken walk saw */
        if ((attempt > 0 && !reread_state(target, state)) || !innermost_frame(target, state, &first))
            break;
        end = walk_frames(target, first, &walk);
        if (end != WALK_BROKEN || walk.count > kept.count) {
            walk_release(&kept);
            kept = walk;
        } else {
            walk_release(&walk);
        }
    }
    struct hd_thread *thread = state->thread;
    hd_python_frames_release(thread);
    thread->python_frames = kept.frames;
    thread->npython_frames = kept.count;
    thread->python_truncated = end != WALK_WHOLE;
}

/* ---- the GIL ----------------------------------------------------------------------------------------------------- */

/* The GIL's state: inline in _PyRuntime (3.10, 3.11), or where the main interpreter's ceval.gil points (3.12+).
 * Fills the process's python.gil_*; *holder is the thread state holding it (0: free). False when unreadable. */
static bool read_gil(struct target *target, uint64_t *holder)
{
    const struct probe_python_layout *layout = &target->layout;
    struct hd_python *python = &target->process->python;
    uint8_t bytes[OBJECT_READ_MAX];
    uint64_t address = layout->runtime_gil != ABSENT
                           ? target->where.runtime + layout->runtime_gil
                           : field_u64(target->interpreter_bytes, target->spans.interp, layout->interp_gil_pointer);
    if (layout->gil_size > sizeof bytes || !read_target(target, address, bytes, layout->gil_size))
        return false;
    /* `locked` is -1 before the GIL is created, 0 or 1 after */
    python->gil_locked = field_i32(bytes, layout->gil_size, layout->gil_locked) == 1;
    python->gil_address = address;
    python->gil_size = layout->gil_size;
    *holder = python->gil_locked ? field_u64(bytes, layout->gil_size, layout->gil_last_holder) : 0;
    return true;
}

static bool waits_for_gil(const struct hd_thread *thread, const struct hd_python *python)
{
    return thread->wait.kind == HD_WAIT_FUTEX && thread->wait.address >= python->gil_address &&
           thread->wait.address - python->gil_address < python->gil_size;
}

/* How often, and how far apart, a thread state caught outside any wait is read again while another thread holds
 * the GIL: a thread waiting for it wakes every 5 ms to ask for it and runs for microseconds, and the last sample
 * may have caught it doing so (one report in a dozen did, in a GIL deadlock). */
#define GIL_REREADS 8
#define GIL_REREAD_GAP_NS 700000
#define GIL_REREADS_PER_PROCESS 32 /* threads computing in C without the GIL look the same: bound what they cost */
#define GIL_REREADS_PER_RUN 160     /* and a tree of such processes: at most ~0.1 s in all */

/* The mapping the futex of `wait` lies in, as probe_read_locks() records it for the waits of the samples. */
static void place_in_mapping(const struct hd_process *process, struct hd_wait *wait)
{
    const struct hd_mapping *mapping = hd_process_find_mapping(process, wait->address);
    wait->mapping_kind = hd_mapping_classify(mapping);
    if (mapping) {
        wait->mapping = *mapping;
        wait->mapping.path = mapping->path ? strdup(mapping->path) : NULL;
    }
}

/* Reads the system call of `thread` again; true when it now sleeps in a futex wait inside the GIL's state, with
 * its syscall and wait replaced by what was read. Each read takes one of `*budget`. */
static bool caught_waiting_for_gil(const struct hd_process *process, struct hd_thread *thread, unsigned *budget)
{
    char path[96], text[512];
    if (probe_files_offline())
        return false; /* a core's thread is where the core caught it: nothing to read again */
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)process->pid, (int)thread->tid);
    for (int attempt = 0; attempt < GIL_REREADS && *budget > 0; attempt++, --*budget) {
        if (attempt)
            nanosleep(&(struct timespec){ .tv_nsec = GIL_REREAD_GAP_NS }, NULL);
        struct hd_syscall syscall = { 0 };
        ssize_t length = probe_read_file(path, text, sizeof text);
        if (length < 0)
            return false;
        if (!probe_parse_syscall(text, (size_t)length, &syscall) || syscall.state != HD_SYSCALL_IN)
            continue;
        syscall.name = probe_syscall_name(process->arch, syscall.nr);
        struct timespec monotonic, realtime;
        clock_gettime(CLOCK_MONOTONIC, &monotonic);
        clock_gettime(CLOCK_REALTIME, &realtime);
        struct probe_clocks clocks = {
            .monotonic_ns = (int64_t)monotonic.tv_sec * 1000000000 + monotonic.tv_nsec,
            .realtime_ns = (int64_t)realtime.tv_sec * 1000000000 + realtime.tv_nsec,
        };
        struct hd_wait wait = { 0 };
        pid_t pid = process->pid;
        probe_decode_wait(&syscall, NULL, probe_read_memory_of, &pid, &clocks, &wait);
        struct hd_thread probe = { .wait = wait };
        if (!waits_for_gil(&probe, &process->python))
            return false; /* in another call: not a GIL waiter caught between two waits */
        place_in_mapping(process, &wait);
        free(thread->wait.mapping.path);
        thread->syscall = syscall;
        thread->wait = wait;
        thread->state = 'S';
        return true;
    }
    return false;
}

/* 3.10 in a child forked by C code: glibc zeroed the tid in the descriptors of the threads that stayed in the
 * parent, so the GIL holder's is read where fork() left the same descriptor, at the same address in the parent. */
static pid_t tid_in_parent(const struct target *target, const struct thread_state *state)
{
    const struct hd_process *process = target->process;
    int32_t tid = 0;
    if (!target->tid_offset || !hd_process_forked(process) || process->ppid <= 1 ||
        !probe_read_memory(process->ppid, state->thread_id + target->tid_offset, &tid, sizeof tid) || tid <= 0)
        return 0;
    return (pid_t)tid;
}

/* Did an earlier sample see the thread in a futex wait inside the GIL's state? Then the analysis takes a thread the
 * last sample caught between two waits to be in that wait again (analysis/gil.h), and reading it once more here
 * would cost time for nothing: only a thread no earlier sample saw waiting is read again. */
static bool earlier_sample_saw_gil_wait(const struct hd_python *python, const struct hd_thread *thread)
{
    const struct hd_thread_sample *earlier = hd_thread_earlier_futex(thread);
    uint64_t address = earlier ? earlier->wait_address : 0;
    return address && address >= python->gil_address && address - python->gil_address < python->gil_size;
}

/* Each thread's standing with the GIL: the holder the GIL names, the threads in a futex wait inside its state,
 * the other thread states (released it), and the threads with no thread state. */
static void mark_gil_states(struct target *target, uint64_t holder)
{
    struct hd_process *process = target->process;
    for (size_t t = 0; t < process->nthreads; t++)
        process->threads[t].gil = HD_GIL_NONE;
    for (size_t i = 0; i < target->nstates; i++)
        if (target->states[i].thread)
            target->states[i].thread->gil = HD_GIL_RELEASED;
    for (size_t i = 0; i < target->nstates; i++) {
        if (!holder || target->states[i].address != holder)
            continue;
        if (!target->states[i].own_tid && !target->states[i].thread)
            target->states[i].own_tid = tid_in_parent(target, &target->states[i]);
        process->python.gil_holder_recorded = target->states[i].own_tid;
        if (target->states[i].thread) {
            target->states[i].thread->gil = HD_GIL_HOLDS;
            process->python.gil_holder = target->states[i].thread->tid;
        }
    }
    unsigned budget = *target->gil_rereads < GIL_REREADS_PER_PROCESS ? *target->gil_rereads : GIL_REREADS_PER_PROCESS;
    unsigned granted = budget;
    for (size_t t = 0; t < process->nthreads; t++) {
        struct hd_thread *thread = &process->threads[t];
        /* The GIL is read after the last sample, once the stacks have let the process go: a thread the sample saw
         * waiting for it may have taken it since. The GIL names it as the holder now, so that wait is over; taken
         * for current, it would be a thread waiting for a GIL it holds itself, a "certain" deadlock in a healthy
         * process (the kill-at-random trials' Python target got one in 12 runs of 160). */
        if (thread->gil == HD_GIL_HOLDS)
            continue;
        /* on a CPU, or preempted in user space on its way back to the wait */
        bool caught_between_waits = holder && thread->gil == HD_GIL_RELEASED &&
                                    (thread->syscall.state == HD_SYSCALL_RUNNING ||
                                     thread->syscall.state == HD_SYSCALL_NONE);
        if (waits_for_gil(thread, &process->python) ||
            (caught_between_waits && !earlier_sample_saw_gil_wait(&process->python, thread) &&
             caught_waiting_for_gil(process, thread, &budget)))
            thread->gil = HD_GIL_WAITS;
    }
    *target->gil_rereads -= granted - budget;
}

/* The lock of every wait inside the GIL's state. What the bytes around the futex looked like to the mutex decoder
 * does not matter: the word is the GIL's (its condition variable's can read as a write-locked rwlock "owned" by
 * tid 1, its mutex as a mutex owned by whichever thread was taking the GIL). A thread waiting for the GIL waits on
 * a lock whose owner is the thread state the GIL names as its holder: the id that state records, in the process's
 * own PID namespace, as every lock owner read from memory is before probe_translate_namespaced_ids() and
 * probe_resolve_owners() place it (a holder that stayed in the parent at fork is then another process's thread,
 * or gone). The GIL is read after the last sample: the holder's own wait there, from before it took the GIL, is
 * over, and with an unlocked GIL the waits have no owner. Taken for a mutex of the holder's, such a stale wait
 * closed a "certain" lock-cycle in a healthy process that passes the GIL around. */
static void mark_gil_locks(struct hd_process *process)
{
    struct hd_python *python = &process->python;
    if (python->gil_locked && python->gil_holder_recorded > 0)
        python->gil_lock = (struct hd_lock){
            .kind = HD_LOCK_GIL,
            .object_address = python->gil_address,
            .owner_tid = python->gil_holder_recorded,
            .owner_whereabouts = HD_OWNER_UNKNOWN,
        };
    else
        python->gil_lock = (struct hd_lock){
            .kind = HD_LOCK_UNKNOWN,
            .object_address = python->gil_address,
            .why_unknown = python->gil_locked
                               ? "the GIL's own state, locked by a thread state that records no thread id"
                               : "the GIL's own state, unlocked when it was read: no owner to wait for",
        };
    for (size_t t = 0; t < process->nthreads; t++) {
        struct hd_thread *thread = &process->threads[t];
        if (thread->gil == HD_GIL_WAITS)
            thread->wait.lock = python->gil_lock;
        else if (waits_for_gil(thread, python)) /* the holder's own, from before it took the GIL */
            thread->wait.lock = (struct hd_lock){
                .kind = HD_LOCK_UNKNOWN,
                .object_address = python->gil_address,
                .why_unknown = "the GIL's own state, waited in before the thread took the GIL: over",
            };
    }
}

/* ---- one process, whole ------------------------------------------------------------------------------------------ */

/* The main interpreter and its thread states. A process that starts and ends threads all the time can be caught
 * with its list of thread states in the middle of a change (its head not yet, or no longer, a thread state of the
 * interpreter): the list is read again, afresh from memory, a few times before hangdoc gives up on it. */
#define THREAD_LIST_READS 4

static bool read_thread_list(struct target *target)
{
    for (int attempt = 0;; attempt++) {
        if (find_main_interpreter(target) && read_thread_states(target))
            return true;
        if (target->out_of_memory || attempt + 1 == THREAD_LIST_READS)
            return false;
        free(target->interpreter_bytes);
        target->interpreter_bytes = NULL;
        free(target->states);
        target->states = NULL;
        target->nstates = 0;
        probe_memory_cache_reset(target->memory, target->pid);
    }
}

/* ---- locks parked on (3.13+) ---------------------------------------------------------------------------------- */

/* The lock types whose acquire parks on their PyMutex, by tp_name, and how the report names them. */
static const struct {
    const char *type_name;
    const char *name;
} parked_lock_types[] = {
    { "_thread.lock", "threading.Lock" },
    { "_thread.RLock", "threading.RLock" },
};

#define TYPE_NAME_READ 16 /* longer than every name above, with its NUL */

/* A thread asleep in the parking lot sleeps on the semaphore of a wait entry on its own stack, and that entry says
 * what it parks on: for a Lock's or an RLock's acquire, the PyMutex inside the lock object. So a lock that records
 * no owner is still told apart from another, with no symbol: the object's type is read back and must be one of
 * the lock types, else the wait is left as it was. */
static void read_parked_lock(struct target *target, struct hd_thread *thread)
{
    const struct probe_python_layout *layout = &target->layout;
    struct hd_wait *wait = &thread->wait;
    uint64_t key, type, name_address;
    char name[TYPE_NAME_READ];
    if (wait->kind != HD_WAIT_FUTEX || wait->address <= layout->parked_key_before_futex ||
        !read_target(target, wait->address - layout->parked_key_before_futex, &key, sizeof key) ||
        key <= layout->lock_mutex)
        return;
    uint64_t object = key - layout->lock_mutex;
    if (!read_target(target, object + layout->object_type, &type, sizeof type) ||
        !read_target(target, type + layout->type_name, &name_address, sizeof name_address) ||
        !read_target(target, name_address, name, sizeof name))
        return;
    for (size_t i = 0; i < COUNT(parked_lock_types); i++)
        if (strncmp(name, parked_lock_types[i].type_name, sizeof name) == 0) {
            wait->python_lock = object;
            wait->python_lock_type = parked_lock_types[i].name;
        }
}

static void read_parked_locks(struct target *target)
{
    if (target->layout.parked_key_before_futex == ABSENT || target->layout.lock_mutex == ABSENT)
        return;
    for (size_t t = 0; t < target->process->nthreads; t++)
        read_parked_lock(target, &target->process->threads[t]);
}

static bool read_interpreter(struct target *target)
{
    if (!read_thread_list(target) || !index_own_tids(target) || !match_threads(target))
        return false;
    uint64_t holder = 0;
    bool gil_read = read_gil(target, &holder);
    for (size_t i = 0; i < target->nstates && !target->out_of_memory; i++)
        if (target->states[i].thread)
            read_stack(target, &target->states[i]);
    if (target->out_of_memory)
        return false;
    struct hd_python *python = &target->process->python;
    python->read = true;
    snprintf(python->version, sizeof python->version, "%s", target->version);
    if (gil_read) {
        mark_gil_states(target, holder);
        mark_gil_locks(target->process);
    }
    read_parked_locks(target);
    return true;
}

static void target_release(struct target *target)
{
    for (size_t i = 0; i < target->ncodes; i++)
        code_info_release(&target->codes[i]);
    free(target->codes);
    hd_int_map_clear(&target->code_index);
    probe_pid_map_clear(&target->own_tids);
    free(target->states);
    free(target->interpreter_bytes);
}

static void target_begin(struct target *target, struct hd_process *process, struct probe_memory_cache *memory,
                         unsigned *gil_rereads)
{
    *target = (struct target){ .process = process, .pid = process->pid, .memory = memory,
                               .gil_rereads = gil_rereads };
    probe_memory_cache_reset(memory, process->pid);
    process->python = (struct hd_python){ 0 };
}

/* Reads the interpreter at target->where once `located`; a process not read gets a note of target->why. Releases
 * the target. False only when memory ran out. */
static bool read_located(struct hd_snapshot *snapshot, struct target *target, bool located)
{
    bool read = located && identify_version(target) && choose_layout(target) && read_interpreter(target);
    bool out_of_memory = target->out_of_memory;
    target_release(target);
    if (!read && !out_of_memory &&
        !hd_snapshot_note(snapshot, HD_NOTE_PYTHON, target->pid, 0, "Python interpreter not read: %s", target->why))
        return false;
    /* a thread that runs code in a sub-interpreter (concurrent.interpreters, PEP 734) has a thread state there */
    if (read && target->subinterpreters &&
        !hd_snapshot_note(snapshot, HD_NOTE_PYTHON, target->pid, 0,
                          "%u sub-interpreter%s besides the main one: only the main interpreter's threads are read; "
                          "a thread running in a sub-interpreter shows no Python frames", target->subinterpreters,
                          target->subinterpreters == 1 ? "" : "s"))
        return false;
    return !out_of_memory;
}

/* False only when memory ran out. */
static bool read_process(struct hd_snapshot *snapshot, struct hd_process *process, struct symbol_files *files,
                         struct probe_memory_cache *memory, unsigned *gil_rereads)
{
    struct target target;
    target_begin(&target, process, memory, gil_rereads);
    return read_located(snapshot, &target, locate_interpreter(&target, files));
}

bool probe_read_python_at(struct hd_snapshot *snapshot, struct hd_process *process,
                          const struct probe_python_addresses *where)
{
    struct probe_memory_cache memory;
    unsigned gil_rereads = GIL_REREADS_PER_RUN;
    if (!probe_memory_cache_init(&memory))
        return false;
    struct target target;
    target_begin(&target, process, &memory, &gil_rereads);
    target.where = *where;
    bool ok = read_located(snapshot, &target, true);
    probe_memory_cache_free(&memory);
    return ok;
}

bool probe_read_python(struct hd_snapshot *snapshot, double deadline)
{
    struct symbol_files *files cleanup_free = calloc(1, sizeof *files);
    struct probe_memory_cache memory;
    if (!files || !probe_memory_cache_init(&memory))
        return false;
    size_t candidates = 0, left_out = 0;
    unsigned gil_rereads = GIL_REREADS_PER_RUN;
    bool ok = true;
    for (size_t p = 0; p < snapshot->nprocesses && ok; p++) {
        struct hd_process *process = &snapshot->processes[p];
        if (process->zombie || process->kernel_thread || !hd_process_is_python(process))
            continue;
        candidates++;
        if (deadline > 0 && probe_monotonic_now() >= deadline)
            left_out++;
        else
            ok = read_process(snapshot, process, files, &memory, &gil_rereads);
    }
    probe_memory_cache_free(&memory);
    if (ok && left_out > 0)
        ok = hd_snapshot_note(snapshot, HD_NOTE_DEADLINE, 0, 0,
                              "--timeout near: Python stacks of %zu of %zu Python processes not read", left_out,
                              candidates);
    return ok;
}

/* ---- looking again at threads that run in every sample --------------------------------------------------------- */

static bool ran_in_every_sample(const struct hd_thread *thread)
{
    if (thread->state != 'R' || thread->npython_frames == 0 || thread->nearlier == 0)
        return false;
    for (size_t s = 0; s < thread->nearlier; s++)
        if (!thread->earlier[s].present || thread->earlier[s].state != 'R')
            return false;
    return true;
}

static bool has_spinner(const struct hd_process *process)
{
    for (size_t t = 0; process->python.read && t < process->nthreads; t++)
        if (ran_in_every_sample(&process->threads[t]))
            return true;
    return false;
}

static bool same_python_frame(const struct hd_python_frame *a, const struct hd_python_frame *b)
{
    return a->line == b->line && strcmp(a->function, b->function) == 0 && strcmp(a->file, b->file) == 0;
}

/* One more look at `process`: its interpreter read into a copy of the process (threads copied, their Python frames
 * the copy's own; notes into a scratch snapshot), compared with the last sample's innermost frames, then freed. */
static bool look_again(struct hd_process *process, struct symbol_files *files, struct probe_memory_cache *memory)
{
    struct hd_process copy = *process;
    copy.threads = calloc(process->nthreads ? process->nthreads : 1, sizeof *copy.threads);
    if (!copy.threads)
        return false;
    for (size_t t = 0; t < process->nthreads; t++) {
        copy.threads[t] = process->threads[t];
        copy.threads[t].python_frames = NULL;
        copy.threads[t].npython_frames = 0;
    }
    copy.python = (struct hd_python){ 0 };
    struct hd_snapshot scratch = { 0 };
    unsigned gil_rereads = 0;
    bool ok = read_process(&scratch, &copy, files, memory, &gil_rereads);
    for (size_t t = 0; t < process->nthreads; t++) {
        struct hd_thread *thread = &process->threads[t];
        if (!ran_in_every_sample(thread))
            continue;
        const struct hd_thread *again = &copy.threads[t];
        if (!copy.python.read || again->npython_frames == 0)
            continue; /* not read this time: no look */
        thread->python_looks++;
        thread->python_leaf_same &= same_python_frame(&thread->python_frames[0], &again->python_frames[0]);
    }
    for (size_t t = 0; t < process->nthreads; t++)
        hd_python_frames_release(&copy.threads[t]);
    free(copy.threads);
    for (size_t n = 0; n < scratch.nnotes; n++)
        free(scratch.notes[n].text);
    free(scratch.notes);
    return ok;
}

bool probe_look_again_at_python_spinners(struct hd_snapshot *snapshot, unsigned looks, unsigned interval_ms,
                                         double deadline)
{
    bool any = false;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        if (!has_spinner(process))
            continue;
        any = true;
        for (size_t t = 0; t < process->nthreads; t++)
            if (ran_in_every_sample(&process->threads[t])) {
                process->threads[t].python_looks = 1;
                process->threads[t].python_leaf_same = true;
            }
    }
    if (!any)
        return true;
    struct symbol_files *files cleanup_free = calloc(1, sizeof *files);
    struct probe_memory_cache memory;
    if (!files || !probe_memory_cache_init(&memory))
        return false;
    bool ok = true;
    for (unsigned look = 0; look < looks && ok; look++) {
        double wake = probe_monotonic_now() + interval_ms / 1000.0;
        if (deadline > 0 && wake >= deadline)
            break;
        struct timespec pause = { 0, (long)interval_ms * 1000000L };
        nanosleep(&pause, NULL);
        for (size_t p = 0; p < snapshot->nprocesses && ok; p++)
            if (has_spinner(&snapshot->processes[p]))
                ok = look_again(&snapshot->processes[p], files, &memory);
    }
    probe_memory_cache_free(&memory);
    return ok;
}
