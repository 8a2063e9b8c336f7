/* libFuzzer harness: the walk of a CPython interpreter's structures (probe/python.h, probe_read_python_at): the main
 * interpreter in _PyRuntime's list, its thread states matched to the process's threads (3.10: through glibc's
 * struct pthread), the GIL, every thread's frames and their code objects, strings and line tables, all read with
 * process_vm_readv from memory whose every pointer is hostile.
 *
 * The fuzzer's bytes are a forged interpreter's memory, copied into whole pages mapped at IMAGE_ADDRESS of this very
 * process, which is the target: a hand-built snapshot gives it its threads. The addresses the ELF symbols would
 * give lie at fixed offsets of the image (enum image_offset), after a header that sets up the snapshot: which
 * libpython the file is named after (3.10 has no Py_Version and is known by that name), the process's PID
 * namespace, fork and threads. The tids the image records are fixed ones of the process's own namespace, so that
 * an input walks the same in every run; in a PID namespace, thread 0 is this harness's own thread.
 *
 * HANGDOC_FUZZ_WRITE_SEEDS=DIR ./fuzz_python_walk writes the seed corpus (tests/fuzz/corpus/python_walk/): forged
 * interpreters of 3.10 to 3.13 laid out with the very offsets of probe/python_offsets.h's layouts, each walked
 * first and written only when it yields the frames, lines and GIL states it forged; exit 1 when one does not. A
 * seed that no longer walks would leave the fuzzer exploring failure paths only: rewrite them when a layout
 * changes. */
#include "gil.h"
#include "python.h"
#include "python_offsets.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <uchar.h>
#include <unistd.h>

/* Above ASan's shadow memory (which ends at 0x10007fff7fff on x86-64), far below the stacks and libraries the
 * kernel places near the top of the address space. */
#define IMAGE_ADDRESS 0x200000000000ull
#define IMAGE_MAX (1u << 20)

/* Where the image holds what the ELF symbols and the snapshot would give. */
enum image_offset {
    HEADER_FILE_MINOR = 0,   /* u8: the file is libpython3.(10 + value % 4); bit 2 flips whether Py_Version is
                              * given (by default for 3.11+ only, as their files have it) */
    HEADER_FLAGS = 1,        /* u8: enum process_flag */
    HEADER_THREADS = 2,      /* u8: 1 + value % THREADS_MAX threads */
    HEADER_RUNTIME_SIZE = 4, /* u32: _PyRuntime's st_size; 0: unknown */
    PY_VERSION = 8,          /* u32: Py_Version */
    HEADER_FUTEX = 12,       /* u32: the offset in the image of the futex the threads of the flags wait on */
    PYCODE_TYPE = 16,        /* PyCode_Type: only its address counts */
    PYRUNTIME = 64,          /* _PyRuntime (3.13: its _Py_DebugOffsets and interpreters.head take 640 bytes) */
    FORGED_FROM = 1024,      /* where the seed writer lays out the interpreter's other structs */
};

enum process_flag {
    IN_PID_NAMESPACE = 1,  /* its memory holds the tids of its own PID namespace, where its pid is OWN_TID_BASE */
    FORKED = 2,            /* forked, not exec'd since; its parent is this very process, which maps the image too */
    WAITING_FOR_FUTEX = 4, /* threads 1.. sleep in a futex wait at the header's futex */
    BETWEEN_WAITS = 8,     /* threads 1.. run, and an earlier sample saw them waiting at the header's futex */
};

#define THREADS_MAX 4
#define OWN_TID_BASE 4242 /* thread i's tid as the target's memory records it: OWN_TID_BASE + i */
#define GLIBC_TID_OFFSET 0x2d0 /* offsetof(struct pthread, tid) of x86-64 glibc: the first offset python.c tries */
#define PTHREAD_BYTES 1024     /* what python.c reads of a struct pthread */

static volatile size_t sink;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t u32_at(const uint8_t *bytes)
{
    uint32_t value;
    memcpy(&value, bytes, sizeof value);
    return value;
}

/* ---- the target: this process, with the image mapped and a hand-built snapshot ---------------------------------- */

static void *allocated(size_t count, size_t size)
{
    void *memory = calloc(count ? count : 1, size);
    if (!memory)
        abort();
    return memory;
}

static void set_thread(struct hd_thread *thread, size_t index, unsigned flags, uint64_t futex)
{
    bool namespaced = flags & IN_PID_NAMESPACE;
    thread->tid = namespaced ? gettid() + (pid_t)index : OWN_TID_BASE + (pid_t)index;
    thread->ns_tid = namespaced ? OWN_TID_BASE + (pid_t)index : 0;
    thread->state = 'S';
    thread->wait.fd = -1;
    snprintf(thread->name, sizeof thread->name, "python3");
    if (index == 0)
        return;
    if (flags & WAITING_FOR_FUTEX) {
        thread->syscall = (struct hd_syscall){ .state = HD_SYSCALL_IN, .nr = 202, .name = "futex", .args = { futex } };
        thread->wait.kind = HD_WAIT_FUTEX;
        thread->wait.operation = "FUTEX_WAIT";
        thread->wait.address = futex;
    } else if (flags & BETWEEN_WAITS) {
        thread->syscall.state = HD_SYSCALL_RUNNING;
        thread->state = 'R';
        /* an earlier sample saw it in the futex wait */
        thread->earlier = allocated(1, sizeof *thread->earlier);
        thread->nearlier = 1;
        thread->earlier[0] = (struct hd_thread_sample){
            .present = true, .state = 'S', .syscall = { .state = HD_SYSCALL_IN, .nr = 202, .args = { futex } },
            .wait_kind = HD_WAIT_FUTEX, .wait_address = futex, .wait_operation = "FUTEX_WAIT" };
    }
}

/* One process, this one, whose threads the image's header describes; its one mapping the image's `mapped` bytes. */
static struct hd_snapshot *snapshot_of_image(const uint8_t *image, size_t mapped)
{
    struct hd_snapshot *snapshot = allocated(1, sizeof *snapshot);
    struct hd_process *process = allocated(1, sizeof *process);
    unsigned flags = image[HEADER_FLAGS];
    uint64_t futex = IMAGE_ADDRESS + u32_at(image + HEADER_FUTEX);
    process->nthreads = 1 + image[HEADER_THREADS] % THREADS_MAX;
    process->threads = allocated(process->nthreads, sizeof *process->threads);
    for (size_t t = 0; t < process->nthreads; t++)
        set_thread(&process->threads[t], t, flags, futex);
    process->pid = getpid();
    process->ppid = flags & FORKED ? getpid() : 1;
    process->origin = flags & FORKED ? HD_ORIGIN_FORKED : HD_ORIGIN_EXEC;
    process->ns_pid = flags & IN_PID_NAMESPACE ? OWN_TID_BASE : 0;
    process->state = 'S';
    process->thread_count = (int)process->nthreads;
    process->arch = HD_ARCH_X86_64;
    process->mappings = allocated(1, sizeof *process->mappings);
    process->mappings[0] = (struct hd_mapping){ .start = IMAGE_ADDRESS, .end = IMAGE_ADDRESS + mapped,
                                                .permissions = "rw-p" };
    process->nmappings = 1;
    snprintf(process->comm, sizeof process->comm, "python3");
    snapshot->processes = process;
    snapshot->nprocesses = 1;
    return snapshot;
}

static struct probe_python_addresses addresses_of_image(const uint8_t *image)
{
    static const char *const files[] = {
        "/usr/lib/libpython3.10.so.1.0", "/usr/lib/libpython3.11.so.1.0",
        "/usr/lib/libpython3.12.so.1.0", "/usr/lib/libpython3.13.so.1.0",
    };
    unsigned choice = image[HEADER_FILE_MINOR];
    bool version_given = (choice % 4 != 0) != ((choice & 4) != 0);
    return (struct probe_python_addresses){
        .file = files[choice % 4],
        .runtime = IMAGE_ADDRESS + PYRUNTIME,
        .runtime_size = u32_at(image + HEADER_RUNTIME_SIZE),
        .version = version_given ? IMAGE_ADDRESS + PY_VERSION : 0,
        .code_type = IMAGE_ADDRESS + PYCODE_TYPE,
    };
}

/* The bytes as a target's memory: mapped, walked, unmapped. The snapshot is the caller's to free. */
static struct hd_snapshot *walk_image(const uint8_t *data, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t length = size < IMAGE_MAX ? size : IMAGE_MAX;
    size_t mapped = length ? (length + page - 1) / page * page : page;
    uint8_t *image = mmap((void *)(uintptr_t)IMAGE_ADDRESS, mapped, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    /* a kernel before 4.17 takes the flag for a hint and may place the mapping elsewhere */
    if (image != (void *)(uintptr_t)IMAGE_ADDRESS) {
        fprintf(stderr, "fuzz_python_walk: cannot map the image at %#llx: %s\n", IMAGE_ADDRESS, strerror(errno));
        abort();
    }
    memcpy(image, data, length);
    struct hd_snapshot *snapshot = snapshot_of_image(image, mapped);
    struct probe_python_addresses where = addresses_of_image(image);
    if (!probe_read_python_at(snapshot, &snapshot->processes[0], &where)) {
        fprintf(stderr, "fuzz_python_walk: probe_read_python_at() says memory ran out\n");
        abort();
    }
    munmap(image, mapped);
    return snapshot;
}

/* Touches every string the walk left (a missing NUL is then a finding) and holds python.h's contract: a process
 * read (with at most the one note that names its sub-interpreters), or one note that says why not. */
static void consume(const struct hd_snapshot *snapshot)
{
    const struct hd_process *process = &snapshot->processes[0];
    size_t notes = 0;
    for (size_t n = 0; n < snapshot->nnotes; n++) {
        notes += snapshot->notes[n].kind == HD_NOTE_PYTHON;
        sink += strlen(snapshot->notes[n].text);
    }
    if (process->python.read ? notes > 1 : notes != 1) {
        fprintf(stderr, "fuzz_python_walk: python.read %d with %zu notes\n", process->python.read, notes);
        abort();
    }
    sink += strlen(process->python.version) + (size_t)process->python.gil_holder;
    for (size_t t = 0; t < process->nthreads; t++) {
        const struct hd_thread *thread = &process->threads[t];
        sink += (size_t)thread->gil + (size_t)thread->wait.lock.owner_tid;
        for (size_t f = 0; f < thread->npython_frames; f++)
            sink += strlen(thread->python_frames[f].function) + strlen(thread->python_frames[f].file) +
                    (size_t)thread->python_frames[f].line;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hd_snapshot *snapshot = walk_image(data, size);
    consume(snapshot);
    hd_snapshot_free(snapshot);
    return 0;
}

/* ---- the seed corpus: interpreters forged with probe/python_offsets.h's layouts ---------------------------------- */

#define SEED_MAX (64 * 1024)
#define RUNTIME_SIZE (FORGED_FROM - PYRUNTIME)
#define PARENT_NATIVE_TID 999 /* a thread of the parent, which stayed there at fork */

/* A function of the forged program: its code object's names and first line. */
struct forged_function {
    const char *name;     /* co_name: what 3.10 shows */
    const char *qualname; /* co_qualname: what 3.11+ show */
    int first_line;
};

/* The stacks of the forged threads, innermost first: the GIL's holder, a thread released it, and (forked seeds)
 * the thread that forked, whose state still records its id in the parent. */
static const struct forged_function stack_holder[] = {
    { "inner", "Worker.inner", 40 }, { "middle", "Worker.middle", 30 }, { "<module>", "<module>", 1 } };
static const struct forged_function stack_released[] = {
    { "wait_for_work", "Pool.wait_for_work", 70 }, { "middle", "Worker.middle", 30 } };
static const struct forged_function stack_forking[] = { { "child_main", "child_main", 90 } };

static const struct forged_stack {
    const struct forged_function *functions;
    size_t depth;
} forged_stacks[] = {
    { stack_holder, sizeof stack_holder / sizeof stack_holder[0] },
    { stack_released, sizeof stack_released / sizeof stack_released[0] },
    { stack_forking, sizeof stack_forking / sizeof stack_forking[0] },
};

/* Every frame runs the instruction whose line is its function's first line + LINE_DELTA in these tables. 3.10
 * (PEP 626 pairs of bytecode and line deltas): bytes [0, 4) on line + 1, [4, 204) on line + 3; f_lasti 5 is byte
 * 10. 3.11+ (location entries): 8 code units without columns at line + 1, then 8 on one line 2 further, columns 4
 * to 20; the instruction 20 bytes into co_code_adaptive is code unit 10. */
static const uint8_t line_table_310[] = { 4, 1, 200, 2 };
static const uint8_t line_table_311[] = { 0x80 | 13 << 3 | 7, 1 << 1, 0x80 | 12 << 3 | 7, 4, 20 };
#define LASTI_310 5
#define INSTRUCTION_311 20
#define LINE_DELTA 3

#define FILE_ASCII "/srv/app/jobs.py"
static const char16_t file_wide[] = u"/srv/app/\u03c0.py"; /* a UCS-2 str */
#define FILE_WIDE_UTF8 "/srv/app/\xcf\x80.py"

/* PyASCIIObject.state's first byte: kind (bits 2-4), compact (5), ascii (6) */
#define STATE_COMPACT_ASCII (1 << 2 | 1 << 5 | 1 << 6)
#define STATE_COMPACT_UCS2 (2 << 2 | 1 << 5)

/* 3.13: where the GIL's state lies inside the interpreter that ceval.gil points to, and the size the table gives
 * the interpreter: past the last field of the layout. */
#define GIL_INLINE_313 7424
#define INTERPRETER_SIZE_313 7680

struct seed {
    const char *name;
    unsigned minor;
    unsigned flags;         /* enum process_flag */
    unsigned threads;       /* of the snapshot */
    bool subinterpreter;    /* another interpreter, of id 1, heads the list */
    bool forking_state;     /* a third thread state: the forking thread's, recording its id in the parent */
    bool wide_file;         /* the file name a UCS-2 str */
    bool frame_loop;        /* the GIL holder's outermost frame calls back to its innermost: a stack that changed
                             * under the reader, kept as far as it was consistent and marked truncated */
};

static const struct seed seeds[] = {
    { "walk-3.10", 10, 0, 2, .subinterpreter = true },
    { "walk-3.10-namespace-forked", 10, IN_PID_NAMESPACE | FORKED | WAITING_FOR_FUTEX, 3, .forking_state = true,
      .wide_file = true },
    { "walk-3.11", 11, 0, 2, .subinterpreter = true },
    { "walk-3.11-forked-waiting", 11, FORKED | WAITING_FOR_FUTEX, 3, .forking_state = true },
    { "walk-3.11-frame-loop", 11, 0, 2, .frame_loop = true },
    { "walk-3.12", 12, WAITING_FOR_FUTEX, 2, .wide_file = true },
    { "walk-3.12-frame-loop", 12, 0, 2, .frame_loop = true },
    { "walk-3.12-namespace-between-waits", 12, IN_PID_NAMESPACE | BETWEEN_WAITS, 3, .subinterpreter = true },
    { "walk-3.13", 13, 0, 2, .subinterpreter = true },
    { "walk-3.13-namespace-forked", 13, IN_PID_NAMESPACE | FORKED | WAITING_FOR_FUTEX, 3, .forking_state = true,
      .wide_file = true },
};

/* Py_Version of each minor: a final release (3.10's is not read: its files have no such symbol) */
static const uint32_t py_versions[] = { [10] = 0x030a0df0, [11] = 0x030b07f0, [12] = 0x030c01f0, [13] = 0x030d00f0 };
static const char *const version_names[] = { [10] = "3.10", [11] = "3.11.7", [12] = "3.12.1", [13] = "3.13.0" };

struct forge {
    uint8_t bytes[SEED_MAX];
    size_t end; /* the image's length: the end of the last struct laid out */
    struct probe_python_layout layout;
    struct probe_python_spans spans;
};

/* Room for `size` bytes, 16-aligned as malloc's: its address in the image. */
static uint64_t forge_alloc(struct forge *forge, size_t size)
{
    size_t at = (forge->end + 15) & ~(size_t)15;
    if (at + size > sizeof forge->bytes)
        abort();
    forge->end = at + size;
    return IMAGE_ADDRESS + at;
}

/* `size` bytes of `value` at `offset` of the struct at `address`; nothing for a field the version does not have. */
static void forge_put(struct forge *forge, uint64_t address, uint32_t offset, const void *value, size_t size)
{
    if (offset == PROBE_PYTHON_ABSENT)
        return;
    uint64_t at = address - IMAGE_ADDRESS + offset;
    if (address < IMAGE_ADDRESS || at + size > forge->end)
        abort();
    memcpy(forge->bytes + at, value, size);
}

static void put_u64(struct forge *forge, uint64_t address, uint32_t offset, uint64_t value)
{
    forge_put(forge, address, offset, &value, sizeof value);
}

static void put_u32(struct forge *forge, uint64_t address, uint32_t offset, uint32_t value)
{
    forge_put(forge, address, offset, &value, sizeof value);
}

static void put_u8(struct forge *forge, uint64_t address, uint32_t offset, uint8_t value)
{
    forge_put(forge, address, offset, &value, sizeof value);
}

static uint64_t forge_ascii(struct forge *forge, const char *text)
{
    const struct probe_python_layout *layout = &forge->layout;
    size_t length = strlen(text);
    uint64_t address = forge_alloc(forge, layout->unicode_ascii_size + length + 1);
    put_u64(forge, address, layout->unicode_length, length);
    put_u8(forge, address, layout->unicode_state, STATE_COMPACT_ASCII);
    forge_put(forge, address, layout->unicode_ascii_size, text, length);
    return address;
}

static uint64_t forge_ucs2(struct forge *forge, const char16_t *units, size_t count)
{
    const struct probe_python_layout *layout = &forge->layout;
    uint64_t address = forge_alloc(forge, layout->unicode_compact_size + (count + 1) * sizeof *units);
    put_u64(forge, address, layout->unicode_length, count);
    put_u8(forge, address, layout->unicode_state, STATE_COMPACT_UCS2);
    forge_put(forge, address, layout->unicode_compact_size, units, count * sizeof *units);
    return address;
}

static uint64_t forge_bytes(struct forge *forge, const uint8_t *data, size_t size)
{
    const struct probe_python_layout *layout = &forge->layout;
    uint64_t address = forge_alloc(forge, layout->bytes_data + size + 1);
    put_u64(forge, address, layout->bytes_size, size);
    forge_put(forge, address, layout->bytes_data, data, size);
    return address;
}

static uint64_t forge_code(struct forge *forge, const struct forged_function *function, uint64_t file)
{
    const struct probe_python_layout *layout = &forge->layout;
    bool lines_310 = layout->line_table == PROBE_PYTHON_LINES_310;
    size_t size = forge->spans.code;
    if (layout->code_adaptive != PROBE_PYTHON_ABSENT)
        size = layout->code_adaptive + 64; /* the instructions, inside the code object */
    uint64_t address = forge_alloc(forge, size);
    put_u64(forge, address, layout->object_type, IMAGE_ADDRESS + PYCODE_TYPE);
    put_u64(forge, address, layout->code_filename, file);
    put_u64(forge, address, layout->code_name, forge_ascii(forge, function->name));
    if (layout->code_qualname != PROBE_PYTHON_ABSENT)
        put_u64(forge, address, layout->code_qualname, forge_ascii(forge, function->qualname));
    put_u64(forge, address, layout->code_linetable,
            lines_310 ? forge_bytes(forge, line_table_310, sizeof line_table_310)
                      : forge_bytes(forge, line_table_311, sizeof line_table_311));
    put_u32(forge, address, layout->code_firstlineno, (uint32_t)function->first_line);
    return address;
}

/* A frame running `code`, called from `previous` (0: none); `entry`: the first of its run of the eval loop. */
static uint64_t forge_frame(struct forge *forge, uint64_t code, uint64_t previous, bool entry)
{
    const struct probe_python_layout *layout = &forge->layout;
    uint64_t address = forge_alloc(forge, forge->spans.frame);
    put_u64(forge, address, layout->frame_previous, previous);
    put_u64(forge, address, layout->frame_code, code);
    if (layout->frame_kind == PROBE_PYTHON_FRAME_OBJECT)
        put_u32(forge, address, layout->frame_instruction, LASTI_310);
    else
        put_u64(forge, address, layout->frame_instruction, code + layout->code_adaptive + INSTRUCTION_311);
    put_u8(forge, address, layout->frame_owner, 0); /* FRAME_OWNED_BY_THREAD */
    put_u8(forge, address, layout->frame_is_entry, entry);
    return address;
}

/* The innermost frame of a stack of `functions`; the outermost is the first of its run of the eval loop (3.12+:
 * the loop's own frame, owned by the C stack, lies under it), and calls back to the innermost when `looped`. Code
 * objects already forged for a function are taken again from `codes` (one per function of all the stacks). */
static uint64_t forge_stack(struct forge *forge, const struct forged_stack *stack, uint64_t file, bool looped,
                            const struct forged_function **forged, uint64_t *codes, size_t *ncodes)
{
    const struct probe_python_layout *layout = &forge->layout;
    uint64_t previous = 0, outermost = 0;
    if (layout->owned_by_c_stack >= 0) {
        previous = outermost = forge_alloc(forge, forge->spans.frame);
        put_u8(forge, previous, layout->frame_owner, (uint8_t)layout->owned_by_c_stack);
    }
    for (size_t f = stack->depth; f-- > 0;) {
        const struct forged_function *function = &stack->functions[f];
        size_t c = 0;
        while (c < *ncodes && strcmp(forged[c]->qualname, function->qualname) != 0)
            c++;
        if (c == *ncodes) {
            forged[c] = function;
            codes[c] = forge_code(forge, function, file);
            ++*ncodes;
        }
        previous = forge_frame(forge, codes[c], previous, f + 1 == stack->depth);
        if (!outermost)
            outermost = previous;
    }
    if (looped)
        put_u64(forge, outermost, layout->frame_previous, previous);
    return previous;
}

/* The struct pthread of a thread whose tid is `tid` (what 3.10 reads, and 3.11+ after a fork CPython missed). */
static uint64_t forge_pthread(struct forge *forge, int32_t tid)
{
    uint64_t address = forge_alloc(forge, PTHREAD_BYTES);
    forge_put(forge, address, GLIBC_TID_OFFSET, &tid, sizeof tid);
    return address;
}

/* Thread state `index` of the interpreter at `interpreter`, whose stack is forged_stacks[index], and its frames;
 * `next` the next state of the list. */
static uint64_t forge_thread_state(struct forge *forge, const struct seed *seed, size_t index, uint64_t interpreter,
                                   uint64_t next, uint64_t file, const struct forged_function **forged,
                                   uint64_t *codes, size_t *ncodes)
{
    const struct probe_python_layout *layout = &forge->layout;
    bool forking = index == 2;
    uint64_t frame =
        forge_stack(forge, &forged_stacks[index], file, seed->frame_loop && index == 0, forged, codes, ncodes);
    uint64_t address = forge_alloc(forge, forge->spans.tstate);
    put_u64(forge, address, layout->tstate_next, next);
    put_u64(forge, address, layout->tstate_interp, interpreter);
    put_u64(forge, address, layout->tstate_thread_id, forge_pthread(forge, OWN_TID_BASE + (int32_t)index));
    put_u64(forge, address, layout->tstate_native_thread_id, forking ? PARENT_NATIVE_TID : OWN_TID_BASE + index);
    put_u64(forge, address, layout->tstate_frame, frame);
    if (layout->tstate_cframe != PROBE_PYTHON_ABSENT) {
        uint64_t cframe = forge_alloc(forge, layout->cframe_current_frame + 8);
        put_u64(forge, cframe, layout->cframe_current_frame, frame);
        put_u64(forge, address, layout->tstate_cframe, cframe);
    }
    return address;
}

/* _Py_DebugOffsets of 3.13 (internal/pycore_runtime.h): the cookie, then uint64_t values in this order. */
enum debug_slot {
    DEBUG_COOKIE, DEBUG_VERSION, DEBUG_FREE_THREADED,
    RUNTIME_STATE_SIZE, RUNTIME_FINALIZING, RUNTIME_INTERPRETERS_HEAD,
    INTERP_SIZE, INTERP_ID, INTERP_NEXT, INTERP_THREADS_HEAD, INTERP_GC, INTERP_IMPORTS_MODULES, INTERP_SYSDICT,
    INTERP_BUILTINS, INTERP_CEVAL_GIL, INTERP_GIL_RUNTIME_STATE, INTERP_GIL_ENABLED, INTERP_GIL_LOCKED,
    INTERP_GIL_HOLDER,
    TSTATE_SIZE, TSTATE_PREV, TSTATE_NEXT, TSTATE_INTERP, TSTATE_CURRENT_FRAME, TSTATE_THREAD_ID,
    TSTATE_NATIVE_THREAD_ID, TSTATE_DATASTACK_CHUNK, TSTATE_STATUS,
    FRAME_SIZE, FRAME_PREVIOUS, FRAME_EXECUTABLE, FRAME_INSTR_PTR, FRAME_LOCALSPLUS, FRAME_OWNER,
    CODE_SIZE, CODE_FILENAME, CODE_NAME, CODE_QUALNAME, CODE_LINETABLE, CODE_FIRSTLINENO, CODE_ARGCOUNT,
    CODE_LOCALSPLUSNAMES, CODE_LOCALSPLUSKINDS, CODE_ADAPTIVE,
    PYOBJECT_SIZE, PYOBJECT_TYPE,
    TYPE_SIZE, TYPE_NAME, TYPE_REPR, TYPE_FLAGS,
    TUPLE_SIZE, TUPLE_ITEM, TUPLE_OB_SIZE,
    LIST_SIZE, LIST_ITEM, LIST_OB_SIZE,
    DICT_SIZE, DICT_KEYS, DICT_VALUES,
    FLOAT_SIZE, FLOAT_VALUE,
    LONG_SIZE, LONG_TAG, LONG_DIGIT,
    BYTES_SIZE, BYTES_OB_SIZE, BYTES_SVAL,
    UNICODE_SIZE, UNICODE_STATE, UNICODE_LENGTH, UNICODE_ASCII_SIZE,
    DEBUG_SLOTS
};

/* The table of the 3.13 headers' layout at the start of _PyRuntime, and the layout read back from it as python.c
 * will (the seed is laid out with that). False when python_offsets.c does not take it. */
static bool forge_debug_offsets(struct forge *forge)
{
    const struct probe_python_layout *l = probe_python_layout_for(13);
    const struct { enum debug_slot slot; uint64_t value; } values[] = {
        { DEBUG_VERSION, py_versions[13] }, { RUNTIME_STATE_SIZE, RUNTIME_SIZE },
        { RUNTIME_INTERPRETERS_HEAD, l->runtime_interpreters_head },
        { INTERP_SIZE, INTERPRETER_SIZE_313 }, { INTERP_ID, l->interp_id }, { INTERP_NEXT, l->interp_next },
        { INTERP_THREADS_HEAD, l->interp_threads_head }, { INTERP_CEVAL_GIL, l->interp_gil_pointer },
        { INTERP_GIL_RUNTIME_STATE, GIL_INLINE_313 }, { INTERP_GIL_LOCKED, GIL_INLINE_313 + l->gil_locked },
        { INTERP_GIL_HOLDER, GIL_INLINE_313 + l->gil_last_holder },
        { TSTATE_SIZE, probe_python_layout_spans(l).tstate }, { TSTATE_NEXT, l->tstate_next },
        { TSTATE_INTERP, l->tstate_interp }, { TSTATE_CURRENT_FRAME, l->tstate_frame },
        { TSTATE_THREAD_ID, l->tstate_thread_id }, { TSTATE_NATIVE_THREAD_ID, l->tstate_native_thread_id },
        { FRAME_SIZE, probe_python_layout_spans(l).frame + 1 }, { FRAME_PREVIOUS, l->frame_previous },
        { FRAME_EXECUTABLE, l->frame_code }, { FRAME_INSTR_PTR, l->frame_instruction },
        { FRAME_OWNER, l->frame_owner },
        { CODE_SIZE, l->code_adaptive }, { CODE_FILENAME, l->code_filename }, { CODE_NAME, l->code_name },
        { CODE_QUALNAME, l->code_qualname }, { CODE_LINETABLE, l->code_linetable },
        { CODE_FIRSTLINENO, l->code_firstlineno }, { CODE_ADAPTIVE, l->code_adaptive },
        { PYOBJECT_SIZE, 16 }, { PYOBJECT_TYPE, l->object_type },
        { BYTES_SIZE, l->bytes_data + 8 }, { BYTES_OB_SIZE, l->bytes_size }, { BYTES_SVAL, l->bytes_data },
        { UNICODE_SIZE, l->unicode_compact_size }, { UNICODE_STATE, l->unicode_state },
        { UNICODE_LENGTH, l->unicode_length }, { UNICODE_ASCII_SIZE, l->unicode_ascii_size },
    };
    uint8_t *table = forge->bytes + PYRUNTIME;
    const char *why = NULL;
    if (DEBUG_SLOTS * sizeof(uint64_t) != probe_python_debug_offsets_size(13))
        return false;
    memcpy(table, "xdebugpy", 8);
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++)
        memcpy(table + values[v].slot * sizeof(uint64_t), &values[v].value, sizeof(uint64_t));
    forge->layout = *l;
    if (!probe_python_layout_from_debug_offsets(table, DEBUG_SLOTS * sizeof(uint64_t), 13, &forge->layout, &why)) {
        fprintf(stderr, "fuzz_python_walk: the forged _Py_DebugOffsets are refused: %s\n", why);
        return false;
    }
    return true;
}

/* The GIL's state, locked by the thread state at `holder`; where it lies depends on the version. */
static uint64_t forge_gil(struct forge *forge, uint64_t interpreter, uint64_t holder)
{
    const struct probe_python_layout *layout = &forge->layout;
    uint64_t gil;
    if (layout->runtime_gil != PROBE_PYTHON_ABSENT)
        gil = IMAGE_ADDRESS + PYRUNTIME + layout->runtime_gil; /* 3.10, 3.11: inside _PyRuntime */
    else if (layout->minor == 13)
        gil = interpreter + GIL_INLINE_313; /* the interpreter's own _gil */
    else
        gil = forge_alloc(forge, layout->gil_size);
    put_u64(forge, interpreter, layout->interp_gil_pointer, gil);
    put_u32(forge, gil, layout->gil_locked, 1);
    put_u64(forge, gil, layout->gil_last_holder, holder);
    return gil;
}

static uint64_t forge_interpreter(struct forge *forge, int64_t id, uint64_t next)
{
    const struct probe_python_layout *layout = &forge->layout;
    uint64_t address = forge_alloc(forge, layout->minor == 13 ? INTERPRETER_SIZE_313 : forge->spans.interp);
    put_u64(forge, address, layout->interp_id, (uint64_t)id);
    put_u64(forge, address, layout->interp_next, next);
    put_u64(forge, address, layout->interp_runtime, IMAGE_ADDRESS + PYRUNTIME);
    return address;
}

static void forge_header(struct forge *forge, const struct seed *seed, uint64_t gil)
{
    forge->bytes[HEADER_FILE_MINOR] = (uint8_t)(seed->minor - 10);
    forge->bytes[HEADER_FLAGS] = (uint8_t)seed->flags;
    forge->bytes[HEADER_THREADS] = (uint8_t)(seed->threads - 1);
    put_u32(forge, IMAGE_ADDRESS, HEADER_RUNTIME_SIZE, RUNTIME_SIZE);
    put_u32(forge, IMAGE_ADDRESS, PY_VERSION, py_versions[seed->minor]);
    /* where a thread waiting for the GIL sleeps: inside its state */
    put_u32(forge, IMAGE_ADDRESS, HEADER_FUTEX, (uint32_t)(gil - IMAGE_ADDRESS) + 32);
}

static bool forge_seed(struct forge *forge, const struct seed *seed)
{
    *forge = (struct forge){ .end = FORGED_FROM };
    if (seed->minor == 13 ? !forge_debug_offsets(forge) : !probe_python_layout_for(seed->minor))
        return false;
    if (seed->minor != 13)
        forge->layout = *probe_python_layout_for(seed->minor);
    forge->spans = probe_python_layout_spans(&forge->layout);
    const struct probe_python_layout *layout = &forge->layout;
    uint64_t interpreter = forge_interpreter(forge, 0, 0);
    uint64_t head = seed->subinterpreter ? forge_interpreter(forge, 1, interpreter) : interpreter;
    put_u64(forge, IMAGE_ADDRESS + PYRUNTIME, layout->runtime_interpreters_head, head);
    uint64_t file = seed->wide_file ? forge_ucs2(forge, file_wide, sizeof file_wide / sizeof file_wide[0] - 1)
                                    : forge_ascii(forge, FILE_ASCII);
    const struct forged_function *forged[8];
    uint64_t codes[8], state = 0;
    size_t ncodes = 0;
    for (size_t s = seed->forking_state ? 3 : 2; s-- > 0;)
        state = forge_thread_state(forge, seed, s, interpreter, state, file, forged, codes, &ncodes);
    put_u64(forge, interpreter, layout->interp_threads_head, state);
    forge_header(forge, seed, forge_gil(forge, interpreter, state));
    return true;
}

/* ---- what a seed must walk to ---- */

static bool expect(bool condition, const struct seed *seed, const char *what)
{
    if (!condition)
        fprintf(stderr, "fuzz_python_walk: seed %s: %s\n", seed->name, what);
    return condition;
}

static bool frames_as_forged(const struct seed *seed, const struct hd_thread *thread, const struct forged_stack *stack,
                             bool truncated)
{
    bool qualified = seed->minor >= 11;
    const char *file = seed->wide_file ? FILE_WIDE_UTF8 : FILE_ASCII;
    bool ok = expect(thread->npython_frames == stack->depth, seed, "frame count") &&
              expect(thread->python_truncated == truncated, seed, "truncated");
    for (size_t f = 0; ok && f < stack->depth; f++) {
        const struct hd_python_frame *frame = &thread->python_frames[f];
        const struct forged_function *function = &stack->functions[f];
        /* 3.10 runs each frame in an eval loop of its own; 3.11+ mark the outermost of the run */
        bool entry = seed->minor == 10 || f + 1 == stack->depth;
        ok = expect(strcmp(frame->function, qualified ? function->qualname : function->name) == 0, seed,
                    "function name") &&
             expect(strcmp(frame->file, file) == 0, seed, "file name") &&
             expect(frame->line == function->first_line + LINE_DELTA, seed, "line") &&
             expect(frame->entry == entry, seed, "entry");
    }
    return ok;
}

/* Thread 0 holds the GIL; the others with a thread state released it, or wait for it when the flags say so (a
 * thread without one waits when it sleeps on the GIL's futex). One caught between two waits is read as it was
 * caught (released); the analysis takes it to wait (analysis/gil.h), which is checked as well. */
static enum hd_gil_state gil_as_forged(const struct seed *seed, size_t thread, bool has_state)
{
    if (thread == 0)
        return HD_GIL_HOLDS;
    if (seed->flags & WAITING_FOR_FUTEX || (has_state && seed->flags & BETWEEN_WAITS))
        return HD_GIL_WAITS;
    return has_state ? HD_GIL_RELEASED : HD_GIL_NONE;
}

/* The thread as the analysis takes it: the probe's, or the GIL waiter it was caught between two waits of. */
static const struct hd_thread *taken(const struct hd_process *process, const struct hd_thread *thread,
                                     struct hd_thread *copy)
{
    return report_gil_wait_resumed(process, thread, copy) ? copy : thread;
}

static bool walks_as_forged(const struct seed *seed, const struct hd_snapshot *snapshot)
{
    const struct hd_process *process = &snapshot->processes[0];
    size_t states = seed->forking_state ? 3 : 2;
    bool ok = expect(process->python.read, seed, snapshot->nnotes ? snapshot->notes[0].text : "not read") &&
              expect(strcmp(process->python.version, version_names[seed->minor]) == 0, seed, "version") &&
              expect(process->python.gil_locked && process->python.gil_holder == process->threads[0].tid, seed,
                     "GIL holder") &&
              expect(process->nthreads == seed->threads, seed, "threads");
    for (size_t t = 0; ok && t < process->nthreads; t++) {
        struct hd_thread copy;
        const struct hd_thread *thread = taken(process, &process->threads[t], &copy);
        enum hd_gil_state gil = gil_as_forged(seed, t, t < states);
        ok = (t < states ? frames_as_forged(seed, thread, &forged_stacks[t], seed->frame_loop && t == 0)
                         : expect(thread->npython_frames == 0, seed, "frames of a thread without a state")) &&
             expect(thread->gil == gil, seed, "GIL state") &&
             expect(gil != HD_GIL_WAITS ||
                        (thread->wait.lock.kind == HD_LOCK_GIL && thread->wait.lock.owner_tid == OWN_TID_BASE),
                    seed, "GIL waiter's lock");
    }
    return ok;
}

static bool write_seed(const char *directory, const struct seed *seed, const struct forge *forge)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, seed->name);
    FILE *file = fopen(path, "wb");
    bool written = file && fwrite(forge->bytes, 1, forge->end, file) == forge->end;
    if (file && fclose(file) != 0)
        written = false;
    if (!written)
        fprintf(stderr, "fuzz_python_walk: %s: %s\n", path, strerror(errno));
    return written;
}

static int write_seeds(const char *directory)
{
    static struct forge forge;
    int status = 0;
    if (mkdir(directory, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "fuzz_python_walk: %s: %s\n", directory, strerror(errno));
        return 1;
    }
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        if (!forge_seed(&forge, &seeds[s])) {
            status = 1;
            continue;
        }
        struct hd_snapshot *snapshot = walk_image(forge.bytes, forge.end);
        bool walks = walks_as_forged(&seeds[s], snapshot);
        hd_snapshot_free(snapshot);
        if (!walks || !write_seed(directory, &seeds[s], &forge))
            status = 1;
    }
    return status;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *directory = getenv("HANGDOC_FUZZ_WRITE_SEEDS");
    if (directory)
        exit(write_seeds(directory));
    return 0;
}
