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
#define JAVA_THREAD_BLOCKED_STATE 10 /* HotSpot's _thread_blocked: in a monitor enter, a park or a wait */

/* The exported variables that describe the tables: the fields' table and where in an entry each member lies
 * (required), then the integer constants' and the types' tables (for reading Java objects: optional). */
enum {
    STRUCTS, STRIDE, TYPE_NAME, FIELD_NAME, IS_STATIC, OFFSET, ADDRESS, REQUIRED_EXPORTS,
    INT_CONSTANTS = REQUIRED_EXPORTS, INT_STRIDE, INT_NAME, INT_VALUE, TYPES, TYPES_STRIDE, TYPES_NAME, TYPES_SIZE,
    NEXPORTS
};
static const char *const exported[NEXPORTS] = {
    [STRUCTS] = "gHotSpotVMStructs",
    [STRIDE] = "gHotSpotVMStructEntryArrayStride",
    [TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
    [FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
    [IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
    [OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
    [ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
    [INT_CONSTANTS] = "gHotSpotVMIntConstants",
    [INT_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
    [INT_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
    [INT_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
    [TYPES] = "gHotSpotVMTypes",
    [TYPES_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
    [TYPES_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
    [TYPES_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
};

/* The fields hangdoc reads, by the names the table gives them (JDK 11 to 21 keep these). */
enum {
    THREAD_LIST, LIST_LENGTH, LIST_THREADS, OSTHREAD, THREAD_ID, THREAD_STATE, PENDING_MONITOR, WAITING_MONITOR,
    STACK_BASE, STACK_SIZE, MONITOR_OWNER, MONITOR_OBJECT, KLASS_NAME, SYMBOL_LENGTH, SYMBOL_BODY,
    COMPRESSED_KLASS, KLASS_BASE, KLASS_SHIFT, VM_RELEASE, THREAD_OBJ, IK_FIELDS, IK_JAVA_FIELDS_COUNT,
    IK_CONSTANTS, KLASS_SUPER, U2_ARRAY_DATA, OOP_BASE, OOP_SHIFT, FLAGS, NUM_FLAGS, FLAG_NAME, FLAG_ADDR, NFIELDS
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
    /* for java.util.concurrent's owners: Java objects' fields, found by name in their classes */
    [THREAD_OBJ] = { "JavaThread", "_threadObj", false },
    [IK_FIELDS] = { "InstanceKlass", "_fields", false },
    [IK_JAVA_FIELDS_COUNT] = { "InstanceKlass", "_java_fields_count", false },
    [IK_CONSTANTS] = { "InstanceKlass", "_constants", false },
    [KLASS_SUPER] = { "Klass", "_super", false },
    [U2_ARRAY_DATA] = { "Array<u2>", "_data", false },
    [OOP_BASE] = { "CompressedOops", "_narrow_oop._base", false },
    [OOP_SHIFT] = { "CompressedOops", "_narrow_oop._shift", false },
    [FLAGS] = { "JVMFlag", "flags", false },
    [NUM_FLAGS] = { "JVMFlag", "numFlags", false },
    [FLAG_NAME] = { "JVMFlag", "_name", false },
    [FLAG_ADDR] = { "JVMFlag", "_addr", false },
};

/* The integer constants and type sizes those need (JDK 17's field layout: FieldInfo's six u2 slots). */
enum { FI_ACCESS, FI_NAME, FI_LOW, FI_HIGH, FI_SLOTS, FI_TAG_SIZE, NCONSTANTS };
static const char *const constant_names[NCONSTANTS] = {
    [FI_ACCESS] = "FieldInfo::access_flags_offset", [FI_NAME] = "FieldInfo::name_index_offset",
    [FI_LOW] = "FieldInfo::low_packed_offset", [FI_HIGH] = "FieldInfo::high_packed_offset",
    [FI_SLOTS] = "FieldInfo::field_slots", [FI_TAG_SIZE] = "FIELDINFO_TAG_SIZE",
};
enum { SIZE_CONSTANT_POOL, SIZE_JVM_FLAG, NSIZES };
static const char *const type_names[NSIZES] = { [SIZE_CONSTANT_POOL] = "ConstantPool", [SIZE_JVM_FLAG] = "JVMFlag" };

/* For each field: its offset in its type, or a static's address; `found` when the table has it. Then what reading
 * a Java object's fields takes, `objects` when all of it was found. */
struct vm_layout {
    uint64_t at[NFIELDS];
    bool found[NFIELDS];
    int64_t constants[NCONSTANTS];
    uint64_t sizes[NSIZES];
    bool objects;
    bool compressed_oops;
    uint64_t oop_base;
    uint32_t oop_shift;
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

#define PAGE_BYTES 4096

/* A C string of the JVM's at `address`, into `out` (NUL-terminated); false when unread or empty. A string near the
 * end of its mapping is read up to the page's end when the whole buffer's bytes cannot be. */
static bool read_c_string(pid_t pid, uint64_t address, char *out, size_t size)
{
    size_t length = size - 1;
    if (!address)
        return false;
    if (!probe_read_memory(pid, address, out, length)) {
        length = PAGE_BYTES - (size_t)(address % PAGE_BYTES);
        if (length > size - 1 || !probe_read_memory(pid, address, out, length))
            return false;
    }
    out[length] = '\0';
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
        wanted[e] = (struct probe_elf_object){ .name = exported[e], .size_min = 8,
                                                .optional = e >= REQUIRED_EXPORTS };
    struct probe_elf_file file;
    uint64_t bias;
    if (!probe_elf_read_objects(process->pid, mapping, NULL, wanted, NEXPORTS, &file, why))
        return false;
    if (!probe_elf_load_bias(&file, mapping, &bias)) {
        *why = "libjvm.so is not mapped where its headers say";
        return false;
    }
    for (size_t e = REQUIRED_EXPORTS; e < NEXPORTS; e++)
        if (!wanted[e].value || !read_u64(process->pid, wanted[e].value + bias, &values[e]))
            values[e] = 0;
    for (size_t e = 0; e < REQUIRED_EXPORTS; e++)
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

/* Walks a table of named entries (the integer constants', the types'), `stride` bytes each, whose name pointer
 * lies at `name_at` and value at `value_at` (`value_size` bytes): each of `names` gets its value. */
static void read_named_values(pid_t pid, uint64_t table, uint64_t stride, uint64_t name_at, uint64_t value_at,
                              size_t value_size, const char *const *names, size_t count, int64_t *values,
                              bool *found)
{
    unsigned char entry[256];
    if (!table || stride < 16 || stride > sizeof entry || name_at + 8 > stride || value_at + value_size > stride)
        return;
    for (size_t i = 0; i < VM_STRUCT_ENTRIES_MAX && probe_read_memory(pid, table + i * stride, entry, stride); i++) {
        uint64_t name_pointer;
        memcpy(&name_pointer, entry + name_at, 8);
        char name[VM_NAME_MAX];
        if (!name_pointer)
            break;
        if (!read_c_string(pid, name_pointer, name, sizeof name))
            continue;
        for (size_t n = 0; n < count; n++)
            if (!found[n] && strcmp(name, names[n]) == 0) {
                int64_t value = 0;
                memcpy(&value, entry + value_at, value_size); /* little-endian: the low bytes first */
                if (value_size == 4)
                    value = (int32_t)value;
                values[n] = value;
                found[n] = true;
            }
    }
}

/* The value of the JVM's boolean flag `name` (UseCompressedOops); false when unread. */
static bool flag_set(pid_t pid, const struct vm_layout *layout, const char *name)
{
    uint64_t flags, count;
    if (!read_u64(pid, layout->at[FLAGS], &flags) || !read_u64(pid, layout->at[NUM_FLAGS], &count) ||
        count > 4096 || layout->sizes[SIZE_JVM_FLAG] < 16 || layout->sizes[SIZE_JVM_FLAG] > 256)
        return false;
    for (uint64_t f = 0; f < count; f++) {
        uint64_t entry = flags + f * layout->sizes[SIZE_JVM_FLAG], name_pointer, address;
        char text[VM_NAME_MAX];
        if (!read_u64(pid, entry + layout->at[FLAG_NAME], &name_pointer) ||
            !read_c_string(pid, name_pointer, text, sizeof text) || strcmp(text, name) != 0)
            continue;
        unsigned char value = 0;
        return read_u64(pid, entry + layout->at[FLAG_ADDR], &address) &&
               probe_read_memory(pid, address, &value, 1) && value;
    }
    return false;
}

/* What reading Java objects' fields by name takes: JDK 17's field layout (FieldInfo's slots; JDK 21 packs them
 * in a stream this version does not read), the constant pool's header size, and how references are stored. */
static void read_object_layout(pid_t pid, const uint64_t *exports, struct vm_layout *layout)
{
    bool constants[NCONSTANTS] = { false }, sizes[NSIZES] = { false };
    int64_t size_values[NSIZES] = { 0 };
    read_named_values(pid, exports[INT_CONSTANTS], exports[INT_STRIDE], exports[INT_NAME], exports[INT_VALUE], 4,
                      constant_names, NCONSTANTS, layout->constants, constants);
    read_named_values(pid, exports[TYPES], exports[TYPES_STRIDE], exports[TYPES_NAME], exports[TYPES_SIZE], 8,
                      type_names, NSIZES, size_values, sizes);
    layout->objects = constants[FI_SLOTS] && layout->constants[FI_SLOTS] > 0 && layout->constants[FI_SLOTS] <= 16;
    /* each slot index lies within a field's slots, the tag's width within a word */
    for (size_t c = 0; c < NCONSTANTS; c++)
        layout->objects = layout->objects && constants[c] && layout->constants[c] >= 0 &&
                          (c == FI_SLOTS || c == FI_TAG_SIZE || layout->constants[c] < layout->constants[FI_SLOTS]);
    layout->objects = layout->objects && layout->constants[FI_TAG_SIZE] < 16;
    for (size_t t = 0; t < NSIZES; t++) {
        layout->objects = layout->objects && sizes[t] && size_values[t] > 0 && size_values[t] < 4096;
        layout->sizes[t] = (uint64_t)size_values[t];
    }
    for (size_t f = THREAD_OBJ; f <= FLAG_ADDR; f++)
        layout->objects = layout->objects && layout->found[f];
    if (!layout->objects)
        return;
    layout->compressed_oops = flag_set(pid, layout, "UseCompressedOops");
    if (layout->compressed_oops &&
        (!read_u64(pid, layout->at[OOP_BASE], &layout->oop_base) ||
         !read_u32(pid, layout->at[OOP_SHIFT], &layout->oop_shift) || layout->oop_shift > 8))
        layout->objects = false;
}

/* The reference stored at `address`: a compressed oop (32 bits, decoded) or a plain one. 0 when null or unread. */
static uint64_t read_reference(pid_t pid, const struct vm_layout *layout, uint64_t address)
{
    if (!layout->compressed_oops) {
        uint64_t oop = 0;
        return read_u64(pid, address, &oop) ? oop : 0;
    }
    uint32_t narrow = 0;
    if (!read_u32(pid, address, &narrow) || !narrow)
        return 0;
    return layout->oop_base + ((uint64_t)narrow << layout->oop_shift);
}

/* The klass of the object `object`, through its compressed class pointer; 0 when unread. */
static uint64_t klass_of(pid_t pid, const struct vm_layout *layout, uint64_t object)
{
    uint32_t narrow, shift;
    uint64_t base;
    if (!layout->found[COMPRESSED_KLASS] || !layout->found[KLASS_BASE] || !layout->found[KLASS_SHIFT] ||
        !read_u32(pid, object + layout->at[COMPRESSED_KLASS], &narrow) ||
        !read_u64(pid, layout->at[KLASS_BASE], &base) || !read_u32(pid, layout->at[KLASS_SHIFT], &shift) ||
        shift > 8 || !narrow)
        return 0;
    return base + ((uint64_t)narrow << shift);
}

/* The text of the Symbol at `symbol`, at most `most` bytes: malloc'd, NULL when unread or empty. */
static char *symbol_text(pid_t pid, const struct vm_layout *layout, uint64_t symbol, size_t most)
{
    uint16_t length;
    if (!symbol || !layout->found[SYMBOL_LENGTH] || !layout->found[SYMBOL_BODY] ||
        !probe_read_memory(pid, symbol + layout->at[SYMBOL_LENGTH], &length, sizeof length) || length == 0)
        return NULL;
    size_t size = length < most ? length : most;
    char *text = calloc(1, size + 1);
    if (text && !probe_read_memory(pid, symbol + layout->at[SYMBOL_BODY], text, size)) {
        free(text);
        return NULL;
    }
    return text;
}

static bool klass_named(pid_t pid, const struct vm_layout *layout, uint64_t klass, const char *name)
{
    uint64_t symbol;
    if (!layout->found[KLASS_NAME] || !read_u64(pid, klass + layout->at[KLASS_NAME], &symbol))
        return false;
    char *text = symbol_text(pid, layout, symbol, CLASS_NAME_MAX);
    bool same = text && strcmp(text, name) == 0;
    free(text);
    return same;
}

#define SUPERCLASSES_MAX 16
#define FIELDS_MAX 512
#define ACC_STATIC 0x0008

/* The offset in an instance of the field `field` that class `class_name` (internal form, java/lang/Thread)
 * declares, found from the klass `klass` of an object up its superclasses; 0 when not found. */
static uint64_t field_offset(pid_t pid, const struct vm_layout *layout, uint64_t klass, const char *class_name,
                             const char *field)
{
    for (int depth = 0; klass && depth < SUPERCLASSES_MAX && !klass_named(pid, layout, klass, class_name); depth++)
        if (!read_u64(pid, klass + layout->at[KLASS_SUPER], &klass))
            return 0;
    uint64_t field_infos, constants;
    uint16_t count;
    if (!klass || !read_u64(pid, klass + layout->at[IK_FIELDS], &field_infos) || !field_infos ||
        !probe_read_memory(pid, klass + layout->at[IK_JAVA_FIELDS_COUNT], &count, sizeof count) ||
        count > FIELDS_MAX || !read_u64(pid, klass + layout->at[IK_CONSTANTS], &constants) || !constants)
        return 0;
    size_t slots = (size_t)layout->constants[FI_SLOTS];
    uint16_t info[16];
    for (uint16_t f = 0; f < count && slots <= COUNT(info); f++) {
        if (!probe_read_memory(pid, field_infos + layout->at[U2_ARRAY_DATA] + f * slots * 2, info, slots * 2))
            return 0;
        if (info[layout->constants[FI_ACCESS]] & ACC_STATIC)
            continue;
        uint64_t symbol;
        /* the constant pool's entries follow its header; a field's name entry holds the name's Symbol */
        uint64_t pool_entry =
            constants + layout->sizes[SIZE_CONSTANT_POOL] + 8 * (uint64_t)info[layout->constants[FI_NAME]];
        char *name = read_u64(pid, pool_entry, &symbol) ? symbol_text(pid, layout, symbol, VM_NAME_MAX) : NULL;
        bool match = name && strcmp(name, field) == 0;
        free(name);
        if (match) {
            uint32_t packed = (uint32_t)info[layout->constants[FI_HIGH]] << 16 | info[layout->constants[FI_LOW]];
            return packed >> layout->constants[FI_TAG_SIZE];
        }
    }
    return 0;
}

/* The class name of the object `object` ("java.lang.Object"): malloc'd, NULL when unread. */
static char *class_name_of(pid_t pid, const struct vm_layout *layout, uint64_t object)
{
    uint64_t klass = klass_of(pid, layout, object), symbol;
    if (!klass || !layout->found[KLASS_NAME] || !read_u64(pid, klass + layout->at[KLASS_NAME], &symbol))
        return NULL;
    char *name = symbol_text(pid, layout, symbol, CLASS_NAME_MAX);
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

/* The java.util.concurrent lock each parked thread waits for: LockSupport.park(blocker) leaves the lock's
 * synchronizer in the thread's parkBlocker; an exclusive one (ReentrantLock's, a write lock's) names its owner in
 * AbstractOwnableSynchronizer.exclusiveOwnerThread, a java.lang.Thread whose eetop is its JavaThread. */
static void read_synchronizers(pid_t pid, const struct vm_layout *layout, struct java_thread_read *threads,
                               size_t count)
{
    if (!layout->objects)
        return;
    uint64_t thread_klass = 0, blocker_at = 0, eetop_at = 0;
    for (size_t t = 0; t < count; t++) {
        struct hd_java_thread *thread = &threads[t].thread;
        uint64_t handle, thread_oop, blocker, owner_oop, owner;
        if (thread->state != JAVA_THREAD_BLOCKED_STATE || thread->pending_monitor ||
            !read_u64(pid, threads[t].address + layout->at[THREAD_OBJ], &handle) ||
            !read_u64(pid, handle, &thread_oop) || !thread_oop)
            continue;
        uint64_t klass = klass_of(pid, layout, thread_oop);
        if (klass && klass != thread_klass) { /* most threads are of java.lang.Thread itself */
            thread_klass = klass;
            blocker_at = field_offset(pid, layout, klass, "java/lang/Thread", "parkBlocker");
            eetop_at = field_offset(pid, layout, klass, "java/lang/Thread", "eetop");
        }
        if (!blocker_at || !(blocker = read_reference(pid, layout, thread_oop + blocker_at)))
            continue;
        thread->blocker_object = blocker;
        thread->blocker_class = class_name_of(pid, layout, blocker);
        uint64_t owner_at = field_offset(pid, layout, klass_of(pid, layout, blocker),
                                         "java/util/concurrent/locks/AbstractOwnableSynchronizer",
                                         "exclusiveOwnerThread");
        if (!owner_at || !(owner_oop = read_reference(pid, layout, blocker + owner_at)))
            continue;
        uint64_t owner_klass = klass_of(pid, layout, owner_oop);
        uint64_t owner_eetop = owner_klass == thread_klass ? eetop_at
                               : field_offset(pid, layout, owner_klass, "java/lang/Thread", "eetop");
        if (owner_eetop && read_u64(pid, owner_oop + owner_eetop, &owner))
            for (size_t o = 0; o < count; o++)
                if (threads[o].address == owner)
                    thread->blocker_owner_tid = threads[o].thread.tid;
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
    read_object_layout(pid, exports, &layout);
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
    read_synchronizers(pid, &layout, threads, count);
    jvm->threads = calloc(count ? count : 1, sizeof *jvm->threads);
    if (!jvm->threads) {
        for (size_t t = 0; t < count; t++) {
            free(threads[t].thread.monitor_class);
            free(threads[t].thread.blocker_class);
        }
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
