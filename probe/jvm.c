/* HotSpot's Java threads and monitors from its VMStructs (jvm.h). */
#include "jvm.h"

#include "elf_objects.h"
#include "memory.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define VM_STRUCT_ENTRIES_MAX 8192 /* JDK 17 has some 800 */
#define VM_NAME_MAX 80
#define JAVA_THREADS_MAX 8192
#define CLASS_NAME_MAX 200
#define RELEASE_MAX 80

/* The exported variables that describe the table: the table itself, then where in an entry each member lies. */
enum { STRUCTS, STRIDE, TYPE_NAME, FIELD_NAME, IS_STATIC, OFFSET, ADDRESS, NEXPORTS };
static const char *const exported[NEXPORTS] = {
    [STRUCTS] = "gHotSpotVMStructs",
    [STRIDE] = "gHotSpotVMStructEntryArrayStride",
    [TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
    [FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
    [IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
    [OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
    [ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
};

/* The fields hangdoc reads, by the names the table gives them (JDK 11 to 21 keep these). */
enum {
    THREAD_LIST, LIST_LENGTH, LIST_THREADS, OSTHREAD, THREAD_ID, THREAD_STATE, PENDING_MONITOR, WAITING_MONITOR,
    STACK_BASE, STACK_SIZE, MONITOR_OWNER, MONITOR_OBJECT, KLASS_NAME, SYMBOL_LENGTH, SYMBOL_BODY,
    COMPRESSED_KLASS, KLASS_BASE, KLASS_SHIFT, VM_RELEASE, NFIELDS
};
static const struct {
    const char *type, *field;
    bool required;
} fields[NFIELDS] = {
    [THREAD_LIST] = { "ThreadsSMRSupport", "_java_thread_list", true },
    [LIST_LENGTH] = { "ThreadsList", "_length", true },
    [LIST_THREADS] = { "ThreadsList", "_threads", true },
    [OSTHREAD] = { "JavaThread", "_osthread", true },
    [THREAD_ID] = { "OSThread", "_thread_id", true },
    [THREAD_STATE] = { "JavaThread", "_thread_state", true },
    [PENDING_MONITOR] = { "JavaThread", "_current_pending_monitor", true },
    [WAITING_MONITOR] = { "JavaThread", "_current_waiting_monitor", false },
    [STACK_BASE] = { "JavaThread", "_stack_base", false },
    [STACK_SIZE] = { "JavaThread", "_stack_size", false },
    [MONITOR_OWNER] = { "ObjectMonitor", "_owner", true },
    [MONITOR_OBJECT] = { "ObjectMonitor", "_object", false },
    [KLASS_NAME] = { "Klass", "_name", false },
    [SYMBOL_LENGTH] = { "Symbol", "_length", false },
    [SYMBOL_BODY] = { "Symbol", "_body", false },
    [COMPRESSED_KLASS] = { "oopDesc", "_metadata._compressed_klass", false },
    [KLASS_BASE] = { "CompressedKlassPointers", "_narrow_klass._base", false },
    [KLASS_SHIFT] = { "CompressedKlassPointers", "_narrow_klass._shift", false },
    [VM_RELEASE] = { "Abstract_VM_Version", "_s_vm_release", false },
};

/* For each field: its offset in its type, or a static's address; `found` when the table has it. */
struct vm_layout {
    uint64_t at[NFIELDS];
    bool found[NFIELDS];
};

struct java_thread_read {
    uint64_t address; /* the JavaThread */
    uint64_t stack_low, stack_high;
    struct hd_java_thread thread;
};

static bool read_u64(pid_t pid, uint64_t address, uint64_t *value)
{
    return address && probe_read_memory(pid, address, value, sizeof *value);
}

static bool read_u32(pid_t pid, uint64_t address, uint32_t *value)
{
    return address && probe_read_memory(pid, address, value, sizeof *value);
}

/* A C string of the JVM's at `address`, into `out` (NUL-terminated); false when unread or empty. */
static bool read_c_string(pid_t pid, uint64_t address, char *out, size_t size)
{
    if (!address || !probe_read_memory(pid, address, out, size - 1))
        return false;
    out[size - 1] = '\0';
    return out[0] != '\0';
}

static const struct hd_mapping *libjvm_mapping(const struct hd_process *process)
{
    for (size_t m = 0; m < process->nmappings; m++) {
        const struct hd_mapping *mapping = &process->mappings[m];
        if (mapping->offset == 0 && mapping->path && mapping->path[0] == '/' &&
            strcmp(hd_basename(mapping->path), "libjvm.so") == 0)
            return mapping;
    }
    return NULL;
}

/* The table's location and its entries' shape, from libjvm's exported variables. */
static bool read_exports(const struct hd_process *process, const struct hd_mapping *mapping, uint64_t *values,
                         const char **why)
{
    struct probe_elf_object wanted[NEXPORTS];
    for (size_t e = 0; e < NEXPORTS; e++)
        wanted[e] = (struct probe_elf_object){ .name = exported[e], .size_min = 8 };
    struct probe_elf_file file;
    uint64_t bias;
    if (!probe_elf_read_objects(process->pid, mapping, NULL, wanted, NEXPORTS, &file, why))
        return false;
    if (!probe_elf_load_bias(&file, mapping, &bias)) {
        *why = "libjvm.so is not mapped where its headers say";
        return false;
    }
    for (size_t e = 0; e < NEXPORTS; e++)
        if (!wanted[e].value || !read_u64(process->pid, wanted[e].value + bias, &values[e])) {
            *why = "libjvm.so exports no gHotSpotVMStructs table (not HotSpot, or a build without "
                   "serviceability)";
            return false;
        }
    return true;
}

/* Walks the table for the wanted fields. */
static bool read_layout(pid_t pid, const uint64_t *exports, struct vm_layout *layout, const char **why)
{
    *layout = (struct vm_layout){ 0 };
    uint64_t stride = exports[STRIDE];
    if (stride < 16 || stride > 256 || !exports[STRUCTS]) {
        *why = "its VMStructs table has a shape this version does not know";
        return false;
    }
    unsigned char entry[256];
    for (size_t i = 0; i < VM_STRUCT_ENTRIES_MAX; i++) {
        if (!probe_read_memory(pid, exports[STRUCTS] + i * stride, entry, stride)) {
            *why = "its VMStructs table could not be read";
            return false;
        }
        uint64_t type_at, field_at, offset, address;
        int32_t is_static;
        if (exports[TYPE_NAME] + 8 > stride || exports[FIELD_NAME] + 8 > stride || exports[OFFSET] + 8 > stride ||
            exports[ADDRESS] + 8 > stride || exports[IS_STATIC] + 4 > stride)
            break;
        memcpy(&type_at, entry + exports[TYPE_NAME], 8);
        if (!type_at)
            break; /* the table ends with an entry of no type */
        memcpy(&field_at, entry + exports[FIELD_NAME], 8);
        memcpy(&offset, entry + exports[OFFSET], 8);
        memcpy(&address, entry + exports[ADDRESS], 8);
        memcpy(&is_static, entry + exports[IS_STATIC], 4);
        char type[VM_NAME_MAX], field[VM_NAME_MAX];
        if (!read_c_string(pid, type_at, type, sizeof type) || !read_c_string(pid, field_at, field, sizeof field))
            continue;
        for (size_t f = 0; f < NFIELDS; f++)
            if (!layout->found[f] && strcmp(type, fields[f].type) == 0 && strcmp(field, fields[f].field) == 0) {
                layout->at[f] = is_static ? address : offset;
                layout->found[f] = true;
            }
    }
    for (size_t f = 0; f < NFIELDS; f++)
        if (fields[f].required && !layout->found[f]) {
            *why = "its VMStructs table lacks a field this version reads (an unknown JDK)";
            return false;
        }
    return true;
}

/* The class name of the object `object` ("java.lang.Object"), through its compressed class pointer. */
static char *class_name_of(pid_t pid, const struct vm_layout *layout, uint64_t object)
{
    if (!layout->found[COMPRESSED_KLASS] || !layout->found[KLASS_BASE] || !layout->found[KLASS_SHIFT] ||
        !layout->found[KLASS_NAME] || !layout->found[SYMBOL_LENGTH] || !layout->found[SYMBOL_BODY])
        return NULL;
    uint32_t narrow, shift;
    uint64_t base, klass, symbol;
    uint16_t length;
    if (!read_u32(pid, object + layout->at[COMPRESSED_KLASS], &narrow) ||
        !read_u64(pid, layout->at[KLASS_BASE], &base) || !read_u32(pid, layout->at[KLASS_SHIFT], &shift) ||
        shift > 8 || !narrow)
        return NULL;
    klass = base + ((uint64_t)narrow << shift);
    if (!read_u64(pid, klass + layout->at[KLASS_NAME], &symbol) ||
        !probe_read_memory(pid, symbol + layout->at[SYMBOL_LENGTH], &length, sizeof length) || length == 0)
        return NULL;
    size_t size = length < CLASS_NAME_MAX ? length : CLASS_NAME_MAX;
    char *name = calloc(1, size + 1);
    if (name && !probe_read_memory(pid, symbol + layout->at[SYMBOL_BODY], name, size)) {
        free(name);
        return NULL;
    }
    for (char *c = name; c && *c; c++)
        if (*c == '/')
            *c = '.'; /* the JVM's internal form, java/lang/Object */
    return name;
}

/* The owner of the monitor: a JavaThread of the list, or the one whose stack holds the lock record. */
static pid_t owner_of(uint64_t owner, const struct java_thread_read *threads, size_t count)
{
    for (size_t t = 0; owner && t < count; t++)
        if (threads[t].address == owner)
            return threads[t].thread.tid;
    for (size_t t = 0; owner && t < count; t++)
        if (threads[t].stack_low < threads[t].stack_high && owner >= threads[t].stack_low &&
            owner < threads[t].stack_high)
            return threads[t].thread.tid;
    return 0;
}

static bool read_thread(pid_t pid, const struct vm_layout *layout, uint64_t address, struct java_thread_read *out)
{
    uint64_t osthread;
    uint32_t tid;
    *out = (struct java_thread_read){ .address = address };
    if (!read_u64(pid, address + layout->at[OSTHREAD], &osthread) || !osthread ||
        !read_u32(pid, osthread + layout->at[THREAD_ID], &tid) || tid == 0 || tid > 4194304 ||
        !read_u32(pid, address + layout->at[THREAD_STATE], &out->thread.state) ||
        !read_u64(pid, address + layout->at[PENDING_MONITOR], &out->thread.pending_monitor))
        return false;
    out->thread.tid = (pid_t)tid;
    if (layout->found[WAITING_MONITOR])
        read_u64(pid, address + layout->at[WAITING_MONITOR], &out->thread.waiting_monitor);
    uint64_t base = 0, size = 0;
    if (layout->found[STACK_BASE] && layout->found[STACK_SIZE] &&
        read_u64(pid, address + layout->at[STACK_BASE], &base) &&
        read_u64(pid, address + layout->at[STACK_SIZE], &size) && size < base) {
        out->stack_low = base - size;
        out->stack_high = base;
    }
    return true;
}

/* The monitor each thread waits to enter: its owner, its object and the object's class. */
static void read_monitors(pid_t pid, const struct vm_layout *layout, struct java_thread_read *threads, size_t count)
{
    for (size_t t = 0; t < count; t++) {
        struct hd_java_thread *thread = &threads[t].thread;
        uint64_t owner = 0, handle = 0, object = 0;
        if (!thread->pending_monitor || !read_u64(pid, thread->pending_monitor + layout->at[MONITOR_OWNER], &owner))
            continue;
        thread->owner_tid = owner_of(owner, threads, count);
        /* the monitor's object is a weak handle: a pointer to the slot that holds the oop */
        if (layout->found[MONITOR_OBJECT] && read_u64(pid, thread->pending_monitor + layout->at[MONITOR_OBJECT],
                                                      &handle) && read_u64(pid, handle, &object) && object) {
            thread->monitor_object = object;
            thread->monitor_class = class_name_of(pid, layout, object);
        }
    }
}

static bool read_jvm(struct hd_process *process, const struct hd_mapping *mapping)
{
    struct hd_jvm *jvm = &process->jvm;
    uint64_t exports[NEXPORTS];
    struct vm_layout layout;
    pid_t pid = process->pid;
    jvm->present = true;
    if (!read_exports(process, mapping, exports, &jvm->why_not) ||
        !read_layout(pid, exports, &layout, &jvm->why_not))
        return true;
    uint64_t release = 0;
    char text[RELEASE_MAX];
    if (layout.found[VM_RELEASE] && read_u64(pid, layout.at[VM_RELEASE], &release) &&
        read_c_string(pid, release, text, sizeof text))
        jvm->release = strdup(text);
    uint64_t list, threads_at;
    uint32_t length;
    if (!read_u64(pid, layout.at[THREAD_LIST], &list) || !list ||
        !read_u32(pid, list + layout.at[LIST_LENGTH], &length) || length > JAVA_THREADS_MAX ||
        !read_u64(pid, list + layout.at[LIST_THREADS], &threads_at) || (length && !threads_at)) {
        jvm->why_not = "its list of Java threads could not be read";
        return true;
    }
    uint64_t *addresses = calloc(length ? length : 1, sizeof *addresses);
    struct java_thread_read *threads = calloc(length ? length : 1, sizeof *threads);
    if (!addresses || !threads) {
        free(addresses);
        free(threads);
        return false;
    }
    size_t count = 0;
    if (length && !probe_read_memory(pid, threads_at, addresses, length * sizeof *addresses))
        jvm->why_not = "its list of Java threads could not be read";
    else
        for (uint32_t t = 0; t < length; t++)
            count += addresses[t] && read_thread(pid, &layout, addresses[t], &threads[count]);
    read_monitors(pid, &layout, threads, count);
    jvm->threads = calloc(count ? count : 1, sizeof *jvm->threads);
    if (!jvm->threads) {
        for (size_t t = 0; t < count; t++)
            free(threads[t].thread.monitor_class);
        free(addresses);
        free(threads);
        return false;
    }
    for (size_t t = 0; t < count; t++)
        jvm->threads[jvm->nthreads++] = threads[t].thread;
    free(addresses);
    free(threads);
    return true;
}

bool probe_read_jvms(struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        const struct hd_mapping *mapping = process->zombie ? NULL : libjvm_mapping(process);
        if (!mapping)
            continue;
        if (!read_jvm(process, mapping))
            return false;
        if (process->jvm.why_not)
            hd_snapshot_note(snapshot, HD_NOTE_STACKS, process->pid, 0, "JVM: Java threads not read: %s",
                             process->jvm.why_not);
    }
    return true;
}
