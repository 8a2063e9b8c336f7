/* Go's goroutines from the runtime's memory (golang.h). */
#include "golang.h"

#include "elf_objects.h"
#include "maps.h"
#include "memory.h"
#include "symbols.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define GOROUTINES_MAX 10000       /* read of one process; the rest is counted as cut */
#define GOROUTINE_FRAMES_MAX 48
#define WAIT_REASONS_MAX 64        /* runtime.waitReasonStrings has 27 (1.19) to about 40 entries */
#define WAIT_REASON_LENGTH_MAX 48
#define VERSION_LENGTH_MAX 32

/* runtime's g status values (runtime/runtime2.go) */
enum { G_RUNNABLE = 1, G_RUNNING = 2, G_SYSCALL = 3, G_WAITING = 4, G_DEAD = 6, G_STATUS_MAX = 9, G_SCAN = 0x1000 };

/* Offsets in runtime.g shared by every layout: stack {lo, hi}, then stackguard0/1, _panic, _defer, m, and sched
 * (a gobuf: sp, pc, g, ctxt, ret, lr, bp). */
enum { G_STACK_LO = 0, G_STACK_HI = 8, G_SCHED_SP = 56, G_SCHED_PC = 64, G_SCHED_G = 72, G_SCHED_BP = 104 };

/* What moves between releases: after sched come syscallsp, syscallpc (and 1.23's syscallbp), stktopsp, param,
 * then atomicstatus, stackLock, goid, schedlink, waitsince, waitreason. */
static const struct g_layout {
    const char *releases;
    unsigned status, goid, wait_reason;
} g_layouts[] = {
    { "go1.17 to go1.22", 144, 152, 176 },
    { "go1.23 and later", 152, 160, 184 },
};
#define G_BYTES_READ 192

/* runtime/sema.go: semtable is 251 semaRoots { lock mutex; treap *sudog; nwait uint32 }, each padded; the waiters
 * of one address hang off a treap node (a sudog: g, next, prev, elem, ..., parent, waitlink) by waitlink. */
#define SEMTABLE_ROOTS 251
#define SEMA_ROOT_BYTES 24
enum { SEMA_ROOT_TREAP = 8, SUDOG_G = 0, SUDOG_NEXT = 8, SUDOG_PREV = 16, SUDOG_ELEM = 24, SUDOG_TICKET = 48,
       SUDOG_WAITLINK = 64 };
#define SUDOGS_MAX (4 * GOROUTINES_MAX)
#define TREAP_DEPTH_MAX 128

struct go_program {
    uint64_t allgs;          /* the slice header's address */
    uint64_t wait_reasons;   /* the array's address */
    size_t nwait_reasons;
    uint64_t build_version;  /* the string header's address */
    uint64_t semtable;       /* the semaphore table: SEMTABLE_ROOTS roots, each padded to a cache line */
    uint64_t sema_root_stride;
    const struct hd_mapping *executable;
};

static uint64_t word_at(const unsigned char *bytes, unsigned offset)
{
    uint64_t value;
    memcpy(&value, bytes + offset, sizeof value);
    return value;
}

static uint32_t u32_at(const unsigned char *bytes, unsigned offset)
{
    uint32_t value;
    memcpy(&value, bytes + offset, sizeof value);
    return value;
}

/* The mapping of the executable's first page. */
static const struct hd_mapping *executable_mapping(const struct hd_process *process)
{
    for (size_t m = 0; process->exe && m < process->nmappings; m++) {
        const struct hd_mapping *mapping = &process->mappings[m];
        if (mapping->offset == 0 && mapping->path && strcmp(mapping->path, process->exe) == 0)
            return mapping;
    }
    return NULL;
}

enum { ALLGS, WAIT_REASONS, BUILD_VERSION, SEMTABLE };

/* Finds the runtime's variables through the executable's symbols; false (and `why`) when it is no Go program
 * (`go->present` stays false) or they cannot be found. */
static bool find_program(const struct hd_process *process, struct go_program *program, struct hd_go_runtime *go)
{
    *program = (struct go_program){ .executable = executable_mapping(process) };
    if (!program->executable || process->kernel_thread || process->zombie)
        return false;
    struct probe_elf_object wanted[] = {
        [ALLGS] = { .name = "runtime.allgs", .size_min = 24 },
        [WAIT_REASONS] = { .name = "runtime.waitReasonStrings", .size_min = 16, .optional = true },
        [BUILD_VERSION] = { .name = "runtime.buildVersion", .size_min = 16, .optional = true },
        [SEMTABLE] = { .name = "runtime.semtable", .size_min = SEMTABLE_ROOTS * SEMA_ROOT_BYTES, .optional = true },
    };
    struct probe_elf_file file;
    const char *why = NULL;
    if (!probe_elf_read_objects(process->pid, program->executable, ".go.buildinfo", wanted, COUNT(wanted), &file,
                                &why))
        return false;
    go->present = true;
    uint64_t bias;
    if (!wanted[ALLGS].value) {
        go->why_not = "the executable has no symbol table (built with -ldflags=-s?): runtime.allgs, the list of "
                      "goroutines, cannot be found";
        return false;
    }
    if (!probe_elf_load_bias(&file, program->executable, &bias)) {
        go->why_not = "the executable is not mapped where its headers say";
        return false;
    }
    program->allgs = wanted[ALLGS].value + bias;
    if (wanted[WAIT_REASONS].value) {
        program->wait_reasons = wanted[WAIT_REASONS].value + bias;
        program->nwait_reasons = wanted[WAIT_REASONS].size / 16;
        if (program->nwait_reasons > WAIT_REASONS_MAX)
            program->nwait_reasons = WAIT_REASONS_MAX;
    }
    if (wanted[BUILD_VERSION].value)
        program->build_version = wanted[BUILD_VERSION].value + bias;
    if (wanted[SEMTABLE].value && wanted[SEMTABLE].size % SEMTABLE_ROOTS == 0) {
        program->semtable = wanted[SEMTABLE].value + bias;
        program->sema_root_stride = wanted[SEMTABLE].size / SEMTABLE_ROOTS;
    }
    return true;
}

/* A Go string (pointer, length) at `address`, at most `most` bytes, NUL-terminated: malloc'd, NULL when unread. */
static char *read_go_string(pid_t pid, uint64_t address, size_t most)
{
    uint64_t header[2];
    if (!address || !probe_read_memory(pid, address, header, sizeof header) || header[1] == 0 || !header[0])
        return NULL;
    size_t length = header[1] < most ? (size_t)header[1] : most;
    char *text = calloc(1, length + 1);
    if (text && !probe_read_memory(pid, header[0], text, length)) {
        free(text);
        return NULL;
    }
    return text;
}

/* One goroutine as read: its g's bytes and where they were. */
struct g_read {
    uint64_t address;
    unsigned char bytes[G_BYTES_READ];
};

/* The layout under which the most parked goroutines' saved g points back at them; NULL when none does. */
static const struct g_layout *pick_layout(const struct g_read *gs, size_t count)
{
    const struct g_layout *best = NULL;
    size_t best_votes = 0;
    for (size_t l = 0; l < COUNT(g_layouts); l++) {
        size_t votes = 0;
        for (size_t i = 0; i < count; i++) {
            uint32_t status = u32_at(gs[i].bytes, g_layouts[l].status) & ~(uint32_t)G_SCAN;
            int64_t goid = (int64_t)word_at(gs[i].bytes, g_layouts[l].goid);
            votes += status == G_WAITING && goid > 0 && word_at(gs[i].bytes, G_SCHED_G) == gs[i].address;
        }
        if (votes > best_votes) {
            best = &g_layouts[l];
            best_votes = votes;
        }
    }
    return best;
}

/* Reads the list: every g the slice holds, up to GOROUTINES_MAX; *count of them, *more when cut. */
static struct g_read *read_all_gs(pid_t pid, const struct go_program *program, size_t *count, bool *more)
{
    uint64_t slice[3];
    *count = 0;
    *more = false;
    if (!probe_read_memory(pid, program->allgs, slice, sizeof slice) || !slice[0] || slice[1] > slice[2])
        return NULL;
    size_t length = slice[1];
    if (length > GOROUTINES_MAX) {
        length = GOROUTINES_MAX;
        *more = true;
    }
    uint64_t *pointers = calloc(length ? length : 1, sizeof *pointers);
    struct g_read *gs = calloc(length ? length : 1, sizeof *gs);
    if (!pointers || !gs || !probe_read_memory(pid, slice[0], pointers, length * sizeof *pointers)) {
        free(pointers);
        free(gs);
        return NULL;
    }
    for (size_t i = 0; i < length; i++)
        if (pointers[i] && probe_read_memory(pid, pointers[i], gs[*count].bytes, sizeof gs[*count].bytes))
            gs[(*count)++].address = pointers[i];
    free(pointers);
    return gs;
}

/* The pcs of a parked goroutine's stack from its saved pc and frame pointer: each frame's base holds the caller's
 * base, and the word above it the return address. Bounded by its stack, and each base above the last. */
static size_t walk_frames(pid_t pid, const unsigned char *g, uint64_t *pcs, size_t most)
{
    uint64_t lo = word_at(g, G_STACK_LO), hi = word_at(g, G_STACK_HI);
    uint64_t pc = word_at(g, G_SCHED_PC), bp = word_at(g, G_SCHED_BP);
    size_t count = 0;
    if (!pc)
        return 0;
    pcs[count++] = pc;
    while (count < most && bp >= lo && bp + 16 <= hi && bp % 8 == 0) {
        uint64_t record[2];
        if (!probe_read_memory(pid, bp, record, sizeof record) || record[1] == 0)
            break;
        pcs[count++] = record[1] - 1; /* the call instruction, as the native stacks name callers */
        if (record[0] <= bp)
            break;
        bp = record[0];
    }
    return count;
}

/* Started by the runtime: the function the goroutine began in (the frame inside runtime.goexit) is the runtime's,
 * and not runtime.main (the main goroutine), as the runtime's own isSystemGoroutine says. */
static bool started_by_the_runtime(const struct hd_goroutine *goroutine)
{
    for (size_t f = 1; f < goroutine->nframes; f++) {
        const char *symbol = goroutine->frames[f].symbol;
        /* runtime.goexit, or its ABI wrapper runtime.goexit.abi0 */
        if (!symbol || (strcmp(symbol, "runtime.goexit") != 0 && strncmp(symbol, "runtime.goexit.", 15) != 0))
            continue;
        const char *start = goroutine->frames[f - 1].symbol;
        return start && strncmp(start, "runtime.", 8) == 0 && strcmp(start, "runtime.main") != 0;
    }
    return false;
}

static bool name_frames(struct probe_symbols *symbols, const struct hd_process *process,
                        struct hd_goroutine *goroutine, const uint64_t *pcs, size_t count)
{
    goroutine->frames = calloc(count ? count : 1, sizeof *goroutine->frames);
    if (!goroutine->frames)
        return false;
    for (size_t f = 0; f < count; f++) {
        goroutine->frames[f].pc = pcs[f];
        goroutine->nframes++;
        if (symbols && !probe_symbols_resolve(symbols, process->pid, process->mappings, process->nmappings,
                                              &goroutine->frames[f]))
            return false;
    }
    goroutine->system = started_by_the_runtime(goroutine);
    return true;
}

static char *wait_reason_of(pid_t pid, const struct go_program *program, unsigned reason)
{
    if (!program->wait_reasons || reason >= program->nwait_reasons)
        return NULL;
    return read_go_string(pid, program->wait_reasons + 16 * (uint64_t)reason, WAIT_REASON_LENGTH_MAX);
}

/* One waiter of the semaphore table: its g and the address it sleeps on. */
struct sema_waiter {
    uint64_t g;
    uint64_t elem;
    uint32_t ticket;
};

/* Every waiter of the semaphore table, walked tree by tree: at most SUDOGS_MAX, a treap no deeper than
 * TREAP_DEPTH_MAX (a real one is some 2 log n deep); *count of them. */
static struct sema_waiter *read_sema_waiters(pid_t pid, const struct go_program *program, size_t *count)
{
    *count = 0;
    if (!program->semtable || program->sema_root_stride < SEMA_ROOT_BYTES)
        return NULL;
    struct sema_waiter *waiters = calloc(SUDOGS_MAX, sizeof *waiters);
    if (!waiters)
        return NULL;
    for (size_t r = 0; r < SEMTABLE_ROOTS && *count < SUDOGS_MAX; r++) {
        uint64_t pending[TREAP_DEPTH_MAX], root;
        size_t depth = 0;
        if (!probe_read_memory(pid, program->semtable + r * program->sema_root_stride + SEMA_ROOT_TREAP, &root,
                               sizeof root) || !root)
            continue;
        pending[depth++] = root;
        while (depth > 0 && *count < SUDOGS_MAX) {
            uint64_t node = pending[--depth];
            unsigned char sudog[SUDOG_WAITLINK + 8];
            if (!probe_read_memory(pid, node, sudog, sizeof sudog))
                continue;
            for (unsigned child = SUDOG_NEXT; child <= SUDOG_PREV; child += 8)
                if (word_at(sudog, child) && depth < TREAP_DEPTH_MAX)
                    pending[depth++] = word_at(sudog, child);
            /* the node and the waiters queued behind it on the same address */
            uint64_t elem = word_at(sudog, SUDOG_ELEM);
            for (size_t link = 0; node && link < GOROUTINES_MAX && *count < SUDOGS_MAX; link++) {
                waiters[(*count)++] =
                    (struct sema_waiter){ word_at(sudog, SUDOG_G), elem, u32_at(sudog, SUDOG_TICKET) };
                node = word_at(sudog, SUDOG_WAITLINK);
                if (node && !probe_read_memory(pid, node, sudog, sizeof sudog))
                    break;
            }
        }
    }
    return waiters;
}

static const struct sema_waiter *semaphore_of(const struct sema_waiter *waiters, size_t count, uint64_t g)
{
    for (size_t i = 0; i < count; i++)
        if (waiters[i].g == g)
            return &waiters[i];
    return NULL;
}

/* The goroutine of the first look with `goid`, or NULL. */
static const struct hd_goroutine *seen_first(const struct hd_go_runtime *first, int64_t goid)
{
    for (size_t g = 0; first && g < first->ngoroutines; g++)
        if (first->goroutines[g].goid == goid)
            return &first->goroutines[g];
    return NULL;
}

static bool same_wait(const struct hd_goroutine *then, const struct hd_goroutine *now)
{
    return then && then->status == G_WAITING && now->status == G_WAITING && then->saved_sp == now->saved_sp &&
           then->saved_pc == now->saved_pc && then->semaphore == now->semaphore &&
           then->sema_ticket == now->sema_ticket && (then->wait_reason == NULL) == (now->wait_reason == NULL) &&
           (!now->wait_reason || strcmp(then->wait_reason, now->wait_reason) == 0);
}

/* Reads process `process`'s goroutines into process->go: with stacks named by `symbols`, or (NULL: a first look)
 * without them. False only when memory ran out. */
static bool read_process(struct hd_process *process, struct probe_symbols *symbols, const struct hd_go_runtime *first)
{
    struct go_program program;
    struct hd_go_runtime *go = &process->go;
    if (!find_program(process, &program, go))
        return true;
    if (program.build_version)
        go->version = read_go_string(process->pid, program.build_version, VERSION_LENGTH_MAX);
    size_t count;
    struct g_read *gs = read_all_gs(process->pid, &program, &count, &go->truncated);
    if (!gs) {
        go->why_not = "the list of goroutines (runtime.allgs) could not be read";
        return true;
    }
    const struct g_layout *layout = pick_layout(gs, count);
    if (!layout) {
        go->why_not = "no goroutine matched a layout of the runtime this version knows (Go 1.17 and later)";
        free(gs);
        return true;
    }
    go->goroutines = calloc(count ? count : 1, sizeof *go->goroutines);
    if (!go->goroutines) {
        free(gs);
        return false;
    }
    size_t nwaiters = 0;
    struct sema_waiter *waiters = read_sema_waiters(process->pid, &program, &nwaiters);
    bool ok = true;
    for (size_t i = 0; i < count && ok; i++) {
        const unsigned char *g = gs[i].bytes;
        uint32_t status = u32_at(g, layout->status) & ~(uint32_t)G_SCAN;
        int64_t goid = (int64_t)word_at(g, layout->goid);
        if (status == G_DEAD || status > G_STATUS_MAX || goid <= 0)
            continue; /* a dead g waits in the list for reuse */
        struct hd_goroutine *goroutine = &go->goroutines[go->ngoroutines++];
        *goroutine = (struct hd_goroutine){ .goid = goid, .status = status, .saved_sp = word_at(g, G_SCHED_SP),
                                            .saved_pc = word_at(g, G_SCHED_PC) };
        if (status == G_WAITING) {
            goroutine->wait_reason = wait_reason_of(process->pid, &program, g[layout->wait_reason]);
            const struct sema_waiter *waiter = semaphore_of(waiters, nwaiters, gs[i].address);
            goroutine->semaphore = waiter ? waiter->elem : 0;
            goroutine->sema_ticket = waiter ? waiter->ticket : 0;
        }
        if (!symbols)
            continue;
        /* a running goroutine's saved registers are stale: only a parked or runnable one's say where it is */
        uint64_t pcs[GOROUTINE_FRAMES_MAX];
        size_t npcs = status == G_WAITING || status == G_RUNNABLE ? walk_frames(process->pid, g, pcs, COUNT(pcs))
                                                                   : 0;
        ok = name_frames(symbols, process, goroutine, pcs, npcs);
        goroutine->unchanged = same_wait(seen_first(first, goid), goroutine);
    }
    free(waiters);
    free(gs);
    return ok;
}

#define EXECUTABLES_REMEMBERED 64
#define FIRST_LOOK_MAPPINGS_MAX 65536

/* The executables known not to be Go programs, by device and inode: a tree of a thousand workers of one
 * interpreter costs one look at its ELF headers. */
struct not_go {
    dev_t device[EXECUTABLES_REMEMBERED];
    ino_t inode[EXECUTABLES_REMEMBERED];
    size_t count;
};

static bool known_not_go(const struct not_go *known, dev_t device, ino_t inode)
{
    for (size_t i = 0; i < known->count; i++)
        if (known->device[i] == device && known->inode[i] == inode)
            return true;
    return false;
}

static void remember_not_go(struct not_go *known, dev_t device, ino_t inode)
{
    if (known->count < EXECUTABLES_REMEMBERED) {
        known->device[known->count] = device;
        known->inode[known->count++] = inode;
    }
}

/* An earlier sample reads neither executables nor mappings: the first look reads them for itself. */
static void first_look_at(struct hd_process *process, struct not_go *known)
{
    char path[64], target[4096];
    struct stat status;
    snprintf(path, sizeof path, "/proc/%d/exe", (int)process->pid);
    if (process->kernel_thread || process->zombie || stat(path, &status) != 0 ||
        known_not_go(known, status.st_dev, status.st_ino))
        return;
    ssize_t length = readlink(path, target, sizeof target - 1);
    if (length <= 0)
        return;
    target[length] = '\0';
    struct hd_process look = { .pid = process->pid, .exe = target };
    bool truncated;
    if (probe_read_maps(process->pid, FIRST_LOOK_MAPPINGS_MAX, &look.mappings, &look.nmappings, &truncated) != 0)
        return;
    if (read_process(&look, NULL, NULL))
        process->go = look.go;
    else
        hd_go_runtime_release(&look.go);
    if (!process->go.present)
        remember_not_go(known, status.st_dev, status.st_ino);
    for (size_t m = 0; m < look.nmappings; m++)
        free(look.mappings[m].path);
    free(look.mappings);
}

void probe_go_first_look(struct hd_snapshot *sample)
{
    struct not_go known = { .count = 0 };
    for (size_t p = 0; p < sample->nprocesses; p++)
        first_look_at(&sample->processes[p], &known);
}

bool probe_read_goroutines(struct hd_snapshot *final, const struct hd_snapshot *first,
                           struct probe_symbols *shared_symbols)
{
    struct probe_symbols *symbols = shared_symbols;
    struct not_go known = { .count = 0 };
    bool ok = true;
    for (size_t p = 0; p < final->nprocesses && ok; p++) {
        struct hd_process *process = &final->processes[p];
        const struct hd_mapping *executable = executable_mapping(process);
        if (!executable)
            continue;
        dev_t device = makedev(executable->device_major, executable->device_minor);
        if (known_not_go(&known, device, (ino_t)executable->inode))
            continue;
        if (!symbols && !(symbols = probe_symbols_new()))
            return false;
        const struct hd_process *then = first ? hd_snapshot_find_process(first, process->pid) : NULL;
        ok = read_process(process, symbols, then ? &then->go : NULL);
        if (!process->go.present)
            remember_not_go(&known, device, (ino_t)executable->inode);
        if (process->go.present && process->go.why_not)
            hd_snapshot_note(final, HD_NOTE_STACKS, process->pid, 0, "Go program: goroutines not read: %s",
                             process->go.why_not);
    }
    if (symbols != shared_symbols)
        probe_symbols_free(symbols);
    return ok;
}
