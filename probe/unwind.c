/* libunwind over our own memory and register readers (unwind.h). */
#include "unwind.h"

#include "files.h"
#include "memory.h"
#include "procfs.h"
#include "ptrace_stop.h"
#include "symbols.h"
#include "util.h"

#include <libunwind-ptrace.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#define PAGE_SIZE_ASSUMED 4096u
#define PAGE_SLOTS 64 /* direct-mapped: a few stacks' hot pages and the unwind tables' pages */
#define MODULES_MAX 512

struct page_slot {
    uint64_t page;
    enum { SLOT_EMPTY, SLOT_READ, SLOT_UNREADABLE } state;
};

/* The bytes of the cached pages, apart from the slots and page-aligned, so that a slot in use costs one page fault
 * of ours, not two; kept from one unwinder to the next (one at a time, see unwind.h), so that the processes after
 * the first find them mapped. */
static unsigned char page_bytes[PAGE_SLOTS][PAGE_SIZE_ASSUMED] __attribute__((aligned(PAGE_SIZE_ASSUMED)));

/* libunwind searches a module's .eh_frame_hdr table through our memory reader when told where it is. Exported by
 * libunwind (perf declares it the same way) but not in its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t address_space, unw_word_t ip, unw_dyn_info_t *info,
                                              unw_proc_info_t *procedure, int need_unwind_info, void *argument);

#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

/* A module of the process: its .eh_frame_hdr table when it has one; else a libunwind-ptrace context, whose cache
 * holds one module (it reads /proc/<pid>/maps and maps the file each time that changes). */
struct module_context {
    const struct hd_mapping *first_mapping;
    bool table_looked_up;
    bool has_table;
    unw_dyn_info_t table;
    void *upt;
};

struct probe_unwinder {
    pid_t pid;
    unw_addr_space_t address_space;
    const struct hd_mapping *mappings;
    size_t nmappings;
    struct module_context *modules; /* grown as frames land in modules: a stack touches a handful of them */
    size_t nmodules;
    size_t modules_capacity;
    struct probe_symbols *symbols;
    bool offline; /* a core's process: no libunwind-ptrace, whose /proc/<pid> would be another process's */
    struct user_regs_struct registers; /* of the thread being unwound */
    struct page_slot pages[PAGE_SLOTS];
};

/* _UPT_find_proc_info passes its own context, not ours, down to access_mem: the unwinder being used is found
 * through this instead (one at a time, see unwind.h). */
static struct probe_unwinder *active;

/* ---- memory ------------------------------------------------------------------------------------------------ */

/* The bytes of the target's page at `page`, or NULL when it cannot be read. */
static const unsigned char *page_at(struct probe_unwinder *unwinder, uint64_t page)
{
    size_t index = (size_t)(page / PAGE_SIZE_ASSUMED) % PAGE_SLOTS;
    struct page_slot *slot = &unwinder->pages[index];
    if (slot->state != SLOT_EMPTY && slot->page == page)
        return slot->state == SLOT_READ ? page_bytes[index] : NULL;
    slot->page = page;
    bool read = probe_read_memory(unwinder->pid, page, page_bytes[index], PAGE_SIZE_ASSUMED);
    slot->state = read ? SLOT_READ : SLOT_UNREADABLE;
    return read ? page_bytes[index] : NULL;
}

static bool read_bytes(struct probe_unwinder *unwinder, uint64_t address, void *buffer, size_t size)
{
    unsigned char *out = buffer;
    while (size > 0) {
        uint64_t page = address & ~(uint64_t)(PAGE_SIZE_ASSUMED - 1);
        size_t within = (size_t)(address - page);
        size_t chunk = PAGE_SIZE_ASSUMED - within < size ? PAGE_SIZE_ASSUMED - within : size;
        const unsigned char *bytes = page_at(unwinder, page);
        if (!bytes)
            return false;
        memcpy(out, bytes + within, chunk);
        out += chunk;
        address += chunk;
        size -= chunk;
    }
    return true;
}

static int access_memory(unw_addr_space_t address_space, unw_word_t address, unw_word_t *value, int write,
                         void *argument)
{
    (void)argument;
    if (write || !active || active->address_space != address_space)
        return -UNW_EINVAL; /* never write to the target */
    return read_bytes(active, address, value, sizeof *value) ? 0 : -UNW_EINVAL;
}

/* ---- registers --------------------------------------------------------------------------------------------- */

#if defined(__x86_64__)
#define REGISTER(unw, field) [unw] = offsetof(struct user_regs_struct, field) + 1
static const size_t register_offsets[] = {
    REGISTER(UNW_X86_64_RAX, rax), REGISTER(UNW_X86_64_RDX, rdx), REGISTER(UNW_X86_64_RCX, rcx),
    REGISTER(UNW_X86_64_RBX, rbx), REGISTER(UNW_X86_64_RSI, rsi), REGISTER(UNW_X86_64_RDI, rdi),
    REGISTER(UNW_X86_64_RBP, rbp), REGISTER(UNW_X86_64_RSP, rsp), REGISTER(UNW_X86_64_R8, r8),
    REGISTER(UNW_X86_64_R9, r9),   REGISTER(UNW_X86_64_R10, r10), REGISTER(UNW_X86_64_R11, r11),
    REGISTER(UNW_X86_64_R12, r12), REGISTER(UNW_X86_64_R13, r13), REGISTER(UNW_X86_64_R14, r14),
    REGISTER(UNW_X86_64_R15, r15), REGISTER(UNW_X86_64_RIP, rip),
};
#elif defined(__aarch64__)
#define REGISTER(unw, field) [unw] = offsetof(struct user_regs_struct, field) + 1
static const size_t register_offsets[] = {
    REGISTER(UNW_AARCH64_X0, regs[0]),   REGISTER(UNW_AARCH64_X1, regs[1]),   REGISTER(UNW_AARCH64_X2, regs[2]),
    REGISTER(UNW_AARCH64_X3, regs[3]),   REGISTER(UNW_AARCH64_X4, regs[4]),   REGISTER(UNW_AARCH64_X5, regs[5]),
    REGISTER(UNW_AARCH64_X6, regs[6]),   REGISTER(UNW_AARCH64_X7, regs[7]),   REGISTER(UNW_AARCH64_X8, regs[8]),
    REGISTER(UNW_AARCH64_X19, regs[19]), REGISTER(UNW_AARCH64_X20, regs[20]), REGISTER(UNW_AARCH64_X21, regs[21]),
    REGISTER(UNW_AARCH64_X22, regs[22]), REGISTER(UNW_AARCH64_X23, regs[23]), REGISTER(UNW_AARCH64_X24, regs[24]),
    REGISTER(UNW_AARCH64_X25, regs[25]), REGISTER(UNW_AARCH64_X26, regs[26]), REGISTER(UNW_AARCH64_X27, regs[27]),
    REGISTER(UNW_AARCH64_X28, regs[28]), REGISTER(UNW_AARCH64_X29, regs[29]), REGISTER(UNW_AARCH64_X30, regs[30]),
    REGISTER(UNW_AARCH64_SP, sp),        REGISTER(UNW_AARCH64_PC, pc),
};
#else
static const size_t register_offsets[] = { 0 };
#endif

static int access_register(unw_addr_space_t address_space, unw_regnum_t number, unw_word_t *value, int write,
                           void *argument)
{
    (void)address_space;
    struct probe_unwinder *unwinder = argument;
    if (write || number < 0 || (size_t)number >= COUNT(register_offsets) ||
        register_offsets[number] == 0)
        return -UNW_EBADREG;
    memcpy(value, (const unsigned char *)&unwinder->registers + register_offsets[number] - 1, sizeof *value);
    return 0;
}

static int access_float_register(unw_addr_space_t address_space, unw_regnum_t number, unw_fpreg_t *value,
                                 int write, void *argument)
{
    (void)address_space, (void)number, (void)value, (void)write, (void)argument;
    return -UNW_EBADREG;
}

/* ---- unwind tables ----------------------------------------------------------------------------------------- */

static const struct hd_mapping *mapping_holding(const struct probe_unwinder *unwinder, uint64_t address)
{
    return hd_mappings_find(unwinder->mappings, unwinder->nmappings, address);
}

/* The first mapping of the file that `mapping` maps: a module's identity within the process. */
static const struct hd_mapping *first_mapping_of(const struct probe_unwinder *unwinder,
                                                 const struct hd_mapping *mapping)
{
    const struct hd_mapping *first = mapping;
    while (first > unwinder->mappings && first[-1].path && first[-1].inode == mapping->inode &&
           strcmp(first[-1].path, mapping->path) == 0)
        first--;
    return first;
}

static struct module_context *module_of(struct probe_unwinder *unwinder, uint64_t address)
{
    const struct hd_mapping *mapping = mapping_holding(unwinder, address);
    if (!mapping || !mapping->path || mapping->path[0] != '/')
        return NULL;
    const struct hd_mapping *first = first_mapping_of(unwinder, mapping);
    for (size_t i = 0; i < unwinder->nmodules; i++)
        if (unwinder->modules[i].first_mapping == first)
            return &unwinder->modules[i];
    if (unwinder->nmodules == unwinder->modules_capacity) {
        size_t capacity = unwinder->modules_capacity ? 2 * unwinder->modules_capacity : 8;
        struct module_context *grown = capacity <= MODULES_MAX
                                           ? realloc(unwinder->modules, capacity * sizeof *grown) : NULL;
        if (!grown)
            return NULL;
        unwinder->modules = grown;
        unwinder->modules_capacity = capacity;
    }
    struct module_context *module = &unwinder->modules[unwinder->nmodules++];
    *module = (struct module_context){ .first_mapping = first };
    return module;
}

/* The end of the module's last mapping. */
static uint64_t module_end(const struct probe_unwinder *unwinder, const struct hd_mapping *first)
{
    const struct hd_mapping *last = first, *beyond = unwinder->mappings + unwinder->nmappings;
    while (last + 1 < beyond && last[1].path && last[1].inode == first->inode && strcmp(last[1].path, first->path) == 0)
        last++;
    return last->end;
}

/* .eh_frame_hdr: version 1, the encodings of eh_frame_ptr, fde_count and the table, then the sorted table of
 * (initial location, FDE address) pairs, both datarel sdata4 (what every linker writes; anything else goes the
 * slow way). */
/* `holding` is the mapping that holds `address`: a linker that does not page-align its segments' file offsets
 * (LLD, which rustc uses) maps the code at a file offset that is not its first mapping's plus the distance, so the
 * load bias is read from where the address is, not from where the module starts. */
static bool read_table(struct probe_unwinder *unwinder, const struct hd_mapping *first,
                       const struct hd_mapping *holding, uint64_t address, unw_dyn_info_t *table)
{
    uint64_t header;
    unsigned char bytes[12];
    if (!unwinder->symbols ||
        !probe_symbols_unwind_table(unwinder->symbols, unwinder->pid, holding, address, &header))
        return false;
    if (!read_bytes(unwinder, header, bytes, sizeof bytes) || bytes[0] != 1 ||
        bytes[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || bytes[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) ||
        (bytes[2] != DW_EH_PE_udata4 && bytes[2] != DW_EH_PE_sdata4))
        return false;
    uint32_t fde_count;
    memcpy(&fde_count, bytes + 8, sizeof fde_count);
    *table = (unw_dyn_info_t){ .format = UNW_INFO_FORMAT_REMOTE_TABLE, .gp = 0 };
    table->start_ip = first->start;
    table->end_ip = module_end(unwinder, first);
    table->u.rti.segbase = header;
    table->u.rti.table_data = header + sizeof bytes;
    table->u.rti.table_len = (unw_word_t)fde_count * 8 / sizeof(unw_word_t);
    return fde_count > 0;
}

/* Is the file at the mapping's path still the very file mapped there? libunwind-ptrace opens that path with a
 * blocking open() while the target is stopped and (holding its cache lock) every signal of ours is blocked: a FIFO
 * or a device put there by the target ("/x (deleted)" is a name anyone can create) would hang hangdoc with the
 * target stopped. probe_open_regular() decides with O_PATH, which runs no driver and waits for no writer. */
static bool mapped_file_still_there(const struct hd_mapping *mapping)
{
    int fd = probe_open_regular(mapping->path, mapping);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

static int find_procedure_info(unw_addr_space_t address_space, unw_word_t ip, unw_proc_info_t *info,
                               int need_unwind_info, void *argument)
{
    struct probe_unwinder *unwinder = argument;
    struct module_context *module = module_of(unwinder, ip);
    if (!module)
        return -UNW_ENOINFO;
    if (!module->table_looked_up) {
        module->table_looked_up = true;
        module->has_table =
            read_table(unwinder, module->first_mapping, mapping_holding(unwinder, ip), ip, &module->table);
    }
    if (module->has_table)
        return UNW_OBJ(dwarf_search_unwind_table)(address_space, ip, &module->table, info, need_unwind_info,
                                                  unwinder);
    if (!module->upt && (unwinder->offline || !mapped_file_still_there(module->first_mapping) ||
                         !(module->upt = _UPT_create(unwinder->pid))))
        return -UNW_ENOINFO;
    return _UPT_find_proc_info(address_space, ip, info, need_unwind_info, module->upt);
}

static void put_unwind_info(unw_addr_space_t address_space, unw_proc_info_t *info, void *argument)
{
    (void)argument;
    _UPT_put_unwind_info(address_space, info, NULL); /* frees info->unwind_info; ignores its context */
}

static int no_dynamic_info(unw_addr_space_t address_space, unw_word_t *address, void *argument)
{
    (void)address_space, (void)address, (void)argument;
    return -UNW_ENOINFO;
}

static int no_resume(unw_addr_space_t address_space, unw_cursor_t *cursor, void *argument)
{
    (void)address_space, (void)cursor, (void)argument;
    return -UNW_EINVAL;
}

/* Names come from symbols.c, with symbol sizes: libunwind's guess is the nearest exported symbol. */
static int no_procedure_name(unw_addr_space_t address_space, unw_word_t address, char *buffer, size_t size,
                             unw_word_t *offset, void *argument)
{
    (void)address_space, (void)address, (void)buffer, (void)size, (void)offset, (void)argument;
    return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_procedure_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = no_dynamic_info,
    .access_mem = access_memory,
    .access_reg = access_register,
    .access_fpreg = access_float_register,
    .resume = no_resume,
    .get_proc_name = no_procedure_name,
};

/* ---- the unwinder ------------------------------------------------------------------------------------------ */

struct probe_unwinder *probe_unwind_begin(pid_t pid, const struct hd_mapping *mappings, size_t nmappings,
                                          struct probe_symbols *symbols)
{
    struct probe_unwinder *unwinder cleanup_free = calloc(1, sizeof *unwinder);
    if (!unwinder)
        return NULL;
    unwinder->pid = pid;
    unwinder->mappings = mappings;
    unwinder->nmappings = nmappings;
    unwinder->symbols = symbols;
    unwinder->address_space = unw_create_addr_space(&accessors, 0);
    if (!unwinder->address_space)
        return NULL;
    unw_set_caching_policy(unwinder->address_space, UNW_CACHE_GLOBAL);
    active = unwinder;
    return steal_pointer(&unwinder);
}

void probe_unwind_end(struct probe_unwinder *unwinder)
{
    if (!unwinder)
        return;
    unw_destroy_addr_space(unwinder->address_space);
    for (size_t i = 0; i < unwinder->nmodules; i++)
        if (unwinder->modules[i].upt)
            _UPT_destroy(unwinder->modules[i].upt);
    free(unwinder->modules);
    if (active == unwinder)
        active = NULL;
    free(unwinder);
}

struct frame_seen {
    unw_word_t ip;
    unw_word_t sp;
};

void probe_unwind_offline(struct probe_unwinder *unwinder)
{
    unwinder->offline = true;
}

static bool unwind_from_registers(struct probe_unwinder *unwinder, pid_t tid, uint64_t pc, uint64_t *pcs,
                                  int *signals, size_t max, size_t *count, bool *truncated, const char **why);

bool probe_unwind_thread(struct probe_unwinder *unwinder, pid_t tid, uint64_t *pcs, int *signals, size_t max,
                         size_t *count, bool *truncated, const char **why)
{
    *count = 0;
    *truncated = false;
    *why = NULL;
    uint64_t pc, sp;
    if (!probe_stop_read_registers(tid, &unwinder->registers, sizeof unwinder->registers, &pc, &sp)) {
        *why = "its registers could not be read";
        return false;
    }
    return unwind_from_registers(unwinder, tid, pc, pcs, signals, max, count, truncated, why);
}

bool probe_unwind_registers(struct probe_unwinder *unwinder, const void *registers, size_t size, uint64_t *pcs,
                            int *signals, size_t max, size_t *count, bool *truncated, const char **why)
{
    *count = 0;
    *truncated = false;
    *why = NULL;
#if defined(__x86_64__)
    if (size < sizeof unwinder->registers) {
        *why = "its registers were not all in the core";
        return false;
    }
    memcpy(&unwinder->registers, registers, sizeof unwinder->registers);
    return unwind_from_registers(unwinder, 0, unwinder->registers.rip, pcs, signals, max, count, truncated, why);
#else
    (void)registers, (void)size, (void)pcs, (void)signals, (void)max;
    *why = "registers of this architecture are not read from a core";
    return false;
#endif
}

/* Which signal a trampoline's handler runs for. x86_64's kernel builds struct rt_sigframe { pretcode; struct ucontext
 * uc; struct siginfo info; } on the stack (arch/x86/include/asm/sigframe.h), and the handler's return pops pretcode,
 * so the trampoline's frame starts at uc: its uc_sigmask, 296 bytes in (flags 8, link 8, stack_t 24, sigcontext 256),
 * is the mask the interrupted code ran with, and the kernel blocks the signal (with sa_mask) while its handler runs.
 * So the signals blocked inside the handler and not before are the signal, where that is one signal; the siginfo
 * after the ucontext (304 bytes in) holds it only for an SA_SIGINFO handler, and then decides. `blocked_inside` is
 * the mask inside this handler: the thread's own for the innermost trampoline, the inner trampoline's saved one for
 * the next; 0 when unknown (a core). Returns the signal, or -1, and sets *blocked_before. */
static int signal_of_trampoline(struct probe_unwinder *unwinder, uint64_t stack_pointer, uint64_t blocked_inside,
                                uint64_t *blocked_before)
{
#if defined(__x86_64__)
    uint64_t before = 0;
    int32_t siginfo_number = 0;
    bool mask_read = read_bytes(unwinder, stack_pointer + 296, &before, sizeof before);
    *blocked_before = mask_read ? before : 0;
    uint64_t added = mask_read ? blocked_inside & ~before : 0;
    if (read_bytes(unwinder, stack_pointer + 304, &siginfo_number, sizeof siginfo_number) && siginfo_number >= 1 &&
        siginfo_number <= 64 && (added >> (siginfo_number - 1)) & 1)
        return siginfo_number;
    if (added && (added & (added - 1)) == 0)
        return __builtin_ctzll(added) + 1;
    return -1;
#else
    (void)unwinder, (void)stack_pointer, (void)blocked_inside;
    *blocked_before = 0;
    return -1;
#endif
}

/* The signals `tid` blocks now (SigBlk of its status); 0 when unread. */
static uint64_t blocked_now(pid_t tid)
{
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid); /* a thread's own status, by its tid */
    if (tid <= 0 || probe_read_file(path, text, sizeof text) <= 0)
        return 0;
    const char *line = strstr(text, "\nSigBlk:");
    return line ? strtoull(line + 8, NULL, 16) : 0;
}

static bool unwind_from_registers(struct probe_unwinder *unwinder, pid_t tid, uint64_t pc, uint64_t *pcs,
                                  int *signals, size_t max, size_t *count, bool *truncated, const char **why)
{
    active = unwinder;
    unw_cursor_t cursor;
    if (unw_init_remote(&cursor, unwinder->address_space, unwinder) != 0) {
        if (signals)
            signals[*count] = 0;
        pcs[(*count)++] = pc;
        *why = "libunwind could not start from its registers";
        return true;
    }
    struct frame_seen seen[PROBE_UNWIND_DEPTH_MAX];
    /* libunwind marks the frame a signal interrupted (its registers came from a sigcontext): its pc is where it was,
     * not a return address, and so is the pc of the frame before it, the trampoline the handler returns to */
    bool blocked_known = false;
    uint64_t blocked_inside = 0;
    while (*count < max && *count < PROBE_UNWIND_DEPTH_MAX) {
        unw_word_t ip = 0, stack_pointer = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0)
            return true;
        unw_get_reg(&cursor, UNW_REG_SP, &stack_pointer);
        for (size_t i = 0; i < *count; i++)
            if (seen[i].ip == ip && seen[i].sp == stack_pointer) {
                *truncated = true;
                *why = "the unwind went round in a loop";
                return true;
            }
        seen[*count] = (struct frame_seen){ ip, stack_pointer };
        bool interrupted = *count > 0 && unw_is_signal_frame(&cursor) > 0;
        pcs[*count] = *count == 0 || interrupted ? ip : ip - 1;
        if (signals)
            signals[*count] = 0;
        if (interrupted) {
            size_t trampoline = *count - 1;
            pcs[trampoline] = seen[trampoline].ip;
            if (!blocked_known) {
                blocked_inside = blocked_now(tid);
                blocked_known = true;
            }
            uint64_t blocked_before = 0;
            int number = signal_of_trampoline(unwinder, seen[trampoline].sp, blocked_inside, &blocked_before);
            if (signals)
                signals[trampoline] = number;
            blocked_inside = blocked_before;
        }
        (*count)++;
        if (unw_step(&cursor) <= 0)
            return true;
    }
    *truncated = true;
    *why = "deeper than the depth cap";
    return true;
}
