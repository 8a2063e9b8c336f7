/* Reading an ELF core file (core_file.h): libelf over the mapped file, every note and segment bounded by it. */
#include "core_file.h"

#include "files.h"
#include "syscalls.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

HD_DEFINE_CLEANUP(Elf, elf_end)

__attribute__((format(printf, 2, 3))) static void problem(struct probe_core *core, const char *format, ...)
{
    if (core->nproblems >= PROBE_CORE_PROBLEMS_MAX)
        return;
    va_list args;
    va_start(args, format);
    char *text = NULL;
    if (vasprintf(&text, format, args) >= 0)
        core->problems[core->nproblems++] = text;
    va_end(args);
}

static bool add_thread(struct probe_core *core, const unsigned char *desc, size_t size)
{
#if defined(__x86_64__)
    struct elf_prstatus status;
    if (size < sizeof status) {
        problem(core, "a thread's registers (NT_PRSTATUS) are %zu bytes, not %zu: skipped", size, sizeof status);
        return true;
    }
    if (core->nthreads >= PROBE_CORE_THREADS_MAX) {
        problem(core, "more than %d threads: the rest are skipped", PROBE_CORE_THREADS_MAX);
        return true;
    }
    memcpy(&status, desc, sizeof status);
    struct probe_core_thread *grown = reallocarray(core->threads, core->nthreads + 1, sizeof *grown);
    if (!grown)
        return false;
    core->threads = grown;
    struct probe_core_thread *thread = &core->threads[core->nthreads++];
    *thread = (struct probe_core_thread){ .tid = status.pr_pid, .signal = status.pr_cursig,
                                          .registers_size = sizeof status.pr_reg };
    _Static_assert(sizeof status.pr_reg <= PROBE_CORE_REGISTERS_MAX, "room for a thread's registers");
    memcpy(thread->registers, &status.pr_reg, sizeof status.pr_reg);
    probe_syscall_from_registers(&status.pr_reg, sizeof status.pr_reg, &thread->syscall);
    thread->syscall.name = thread->syscall.state == HD_SYSCALL_IN
                               ? probe_syscall_name(HD_ARCH_X86_64, thread->syscall.nr) : NULL;
    return true;
#else
    (void)desc;
    (void)size;
    problem(core, "registers of this architecture are not read");
    return true;
#endif
}

static void read_identity(struct probe_core *core, const unsigned char *desc, size_t size)
{
    struct elf_prpsinfo info;
    if (size < sizeof info) {
        problem(core, "the process's identity (NT_PRPSINFO) is %zu bytes, not %zu: not read", size, sizeof info);
        return;
    }
    memcpy(&info, desc, sizeof info);
    core->identity_known = true;
    core->pid = info.pr_pid;
    core->ppid = info.pr_ppid;
    core->pgrp = info.pr_pgrp;
    core->session = info.pr_sid;
    core->uid = info.pr_uid;
    core->state = info.pr_sname;
    memcpy(core->comm, info.pr_fname, sizeof core->comm - 1);
    core->comm[sizeof core->comm - 1] = '\0';
    memcpy(core->args, info.pr_psargs, sizeof core->args - 1);
    core->args[sizeof core->args - 1] = '\0';
}

static bool read_auxv(struct probe_core *core, const unsigned char *desc, size_t size)
{
    size_t pairs = size / 16;
    if (pairs > PROBE_CORE_AUXV_MAX)
        pairs = PROBE_CORE_AUXV_MAX;
    free(core->auxv);
    core->auxv = calloc(pairs ? 2 * pairs : 1, sizeof *core->auxv);
    if (!core->auxv)
        return false;
    memcpy(core->auxv, desc, pairs * 16);
    core->nauxv = pairs;
    return true;
}

static int compare_files(const void *a, const void *b)
{
    const struct probe_core_file *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* A list of mapped files and their paths: the one being read, freed unless handed to the core, or the one a later
 * NT_FILE note replaces. */
struct file_list {
    struct probe_core_file *items;
    size_t count;
};

static void file_list_release(struct file_list *list)
{
    for (size_t f = 0; list->items && f < list->count; f++)
        free(list->items[f].path);
    free(list->items);
}

/* NT_FILE: count and page size, `count` (start, end, offset in pages) triples, then `count` NUL-terminated paths. */
static bool read_files(struct probe_core *core, const unsigned char *desc, size_t size)
{
    uint64_t header[2];
    if (size < sizeof header) {
        problem(core, "the list of mapped files (NT_FILE) is cut short: not read");
        return true;
    }
    memcpy(header, desc, sizeof header);
    uint64_t count = header[0], page_size = header[1];
    if (count > PROBE_CORE_FILES_MAX || count * 24 > size - sizeof header || page_size == 0 ||
        page_size > (1u << 30)) {
        problem(core, "the list of mapped files (NT_FILE) does not fit its note: not read");
        return true;
    }
    const unsigned char *names = desc + sizeof header + count * 24, *end = desc + size;
    struct file_list files cleanup_with(file_list_release) = { 0 };
    files.items = calloc(count ? count : 1, sizeof *files.items);
    if (!files.items)
        return false;
    for (uint64_t i = 0; i < count && names < end; i++) {
        uint64_t triple[3];
        memcpy(triple, desc + sizeof header + i * 24, sizeof triple);
        const unsigned char *nul = memchr(names, '\0', (size_t)(end - names));
        if (!nul)
            break;
        if (triple[0] < triple[1] && triple[2] <= UINT64_MAX / page_size) {
            char *path = strndup((const char *)names, (size_t)(nul - names));
            if (!path)
                return false;
            files.items[files.count++] = (struct probe_core_file){ .start = triple[0], .end = triple[1], .fd = -2,
                                                                   .offset = triple[2] * page_size, .path = path };
        }
        names = nul + 1;
    }
    if (files.count < count)
        problem(core, "%zu of the %llu mapped files of NT_FILE could be read", files.count, (unsigned long long)count);
    file_list_release(&(struct file_list){ .items = core->files, .count = core->nfiles });
    qsort(files.items, files.count, sizeof *files.items, compare_files);
    core->files = steal_pointer(&files.items);
    core->nfiles = files.count;
    return true;
}

static bool note_is(const char *name, size_t name_size, const char *wanted)
{
    return name_size == strlen(wanted) + 1 && memcmp(name, wanted, name_size) == 0;
}

static bool read_notes(struct probe_core *core, Elf *elf, const GElf_Phdr *header)
{
    if (header->p_offset > core->length || header->p_filesz > core->length - header->p_offset) {
        core->truncated = true;
        problem(core, "a note segment lies past the end of the file: the core is cut short");
        return true;
    }
    Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)header->p_offset, header->p_filesz, ELF_T_NHDR);
    if (!data)
        return true;
    size_t offset = 0, name_offset, desc_offset;
    GElf_Nhdr note;
    while (offset < data->d_size && (offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
        const char *name = (const char *)data->d_buf + name_offset;
        const unsigned char *desc = (const unsigned char *)data->d_buf + desc_offset;
        if (!note_is(name, note.n_namesz, "CORE"))
            continue;
        bool kept = true;
        switch (note.n_type) {
        case NT_PRSTATUS:
            kept = add_thread(core, desc, note.n_descsz);
            break;
        case NT_PRPSINFO:
            read_identity(core, desc, note.n_descsz);
            break;
        case NT_AUXV:
            kept = read_auxv(core, desc, note.n_descsz);
            break;
        case NT_FILE:
            kept = read_files(core, desc, note.n_descsz);
            break;
        default:
            break;
        }
        if (!kept)
            return false;
    }
    return true;
}

struct tid_at {
    pid_t tid;
    size_t index;
};

static int compare_tid_at(const void *a, const void *b)
{
    const struct tid_at *x = a, *y = b;
    return x->tid != y->tid ? (x->tid < y->tid ? -1 : 1) : (x->index > y->index) - (x->index < y->index);
}

/* A thread whose tid an earlier NT_PRSTATUS already gave (a crafted core): the first one is kept. */
static void drop_repeated_threads(struct probe_core *core)
{
    struct tid_at *order = calloc(core->nthreads ? core->nthreads : 1, sizeof *order);
    bool *repeated = calloc(core->nthreads ? core->nthreads : 1, sizeof *repeated);
    if (order && repeated) {
        for (size_t i = 0; i < core->nthreads; i++)
            order[i] = (struct tid_at){ core->threads[i].tid, i };
        qsort(order, core->nthreads, sizeof *order, compare_tid_at);
        for (size_t i = 1; i < core->nthreads; i++)
            repeated[order[i].index] = order[i].tid == order[i - 1].tid;
        size_t kept = 0, dropped = 0;
        for (size_t i = 0; i < core->nthreads; i++) {
            if (repeated[i]) {
                dropped++;
                continue;
            }
            core->threads[kept++] = core->threads[i];
        }
        core->nthreads = kept;
        if (dropped)
            problem(core, "%zu thread notes repeat the tid of another: only the first of each is read", dropped);
    }
    free(order);
    free(repeated);
}

static int compare_segments(const void *a, const void *b)
{
    const struct probe_core_segment *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static bool read_headers(struct probe_core *core, Elf *elf, char *error, size_t error_size)
{
    GElf_Ehdr header;
    if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &header)) {
        snprintf(error, error_size, "not an ELF file");
        return false;
    }
    if (header.e_type != ET_CORE) {
        snprintf(error, error_size, "an ELF file, but not a core file (type %u)", (unsigned)header.e_type);
        return false;
    }
    if (gelf_getclass(elf) != ELFCLASS64 || header.e_machine != EM_X86_64) {
        snprintf(error, error_size, "a core of another architecture (ELF machine %u): hangdoc reads x86-64 cores",
                 (unsigned)header.e_machine);
        return false;
    }
    core->arch = HD_ARCH_X86_64;
    return true;
}

static int parse(struct probe_core *core, char *error, size_t error_size)
{
    elf_version(EV_CURRENT);
    Elf *elf hd_cleanup(elf_end) = elf_memory((char *)(uintptr_t)core->bytes, core->length);
    if (!elf || !read_headers(core, elf, error, error_size)) {
        if (!elf)
            snprintf(error, error_size, "not an ELF file");
        return -EINVAL;
    }
    size_t count;
    if (elf_getphdrnum(elf, &count) != 0) {
        snprintf(error, error_size, "a core without program headers");
        return -EINVAL;
    }
    core->segments = calloc(count ? count : 1, sizeof *core->segments);
    if (!core->segments)
        return -ENOMEM;
    for (size_t i = 0; i < count; i++) {
        GElf_Phdr header;
        if (!gelf_getphdr(elf, (int)i, &header))
            continue;
        if (header.p_type == PT_NOTE && !read_notes(core, elf, &header))
            return -ENOMEM;
        if (header.p_type != PT_LOAD || header.p_memsz == 0 || header.p_vaddr + header.p_memsz < header.p_vaddr)
            continue;
        struct probe_core_segment segment = { .vaddr = header.p_vaddr, .memsz = header.p_memsz,
                                              .filesz = header.p_filesz, .offset = header.p_offset,
                                              .flags = header.p_flags };
        if (segment.filesz > segment.memsz)
            segment.filesz = segment.memsz;
        if (segment.offset > core->length || segment.filesz > core->length - segment.offset) {
            core->truncated = true;
            segment.filesz = segment.offset > core->length ? 0 : core->length - segment.offset;
        }
        core->segments[core->nsegments++] = segment;
    }
    if (core->truncated)
        problem(core, "the core is cut short: memory past its end is missing");
    if (!core->identity_known)
        problem(core, "no NT_PRPSINFO note: the process's parent, user and command line are unknown");
    if (core->nfiles == 0)
        problem(core, "no NT_FILE note: the files it mapped are unknown, so no frame is named and no Python "
                      "interpreter found");
    if (core->nauxv == 0)
        problem(core, "no NT_AUXV note: whether it was forked or exec'd cannot be told");
    qsort(core->segments, core->nsegments, sizeof *core->segments, compare_segments);
    if (core->nthreads == 0) {
        snprintf(error, error_size, "a core with no thread's registers (no NT_PRSTATUS note)");
        return -EINVAL;
    }
    drop_repeated_threads(core);
    if (!core->identity_known || core->pid <= 0)
        core->pid = core->threads[0].tid; /* the kernel writes the dumping thread first: the process's main one */
    if (core->pid <= 0) {
        snprintf(error, error_size, "a core whose process id is %d", (int)core->pid);
        return -EINVAL;
    }
    return 0;
}

int probe_core_parse(const void *bytes, size_t length, struct probe_core **out, char *error, size_t error_size)
{
    *out = NULL;
    struct probe_core *core hd_cleanup(probe_core_free) = calloc(1, sizeof *core);
    if (!core)
        return -ENOMEM;
    core->bytes = bytes;
    core->length = length;
    int parsed = parse(core, error, error_size);
    if (parsed == -ENOMEM)
        snprintf(error, error_size, "out of memory");
    if (parsed != 0)
        return parsed;
    *out = steal_pointer(&core);
    return 0;
}

int probe_core_open(const char *path, struct probe_core **out, char *error, size_t error_size)
{
    *out = NULL;
    int fd cleanup_fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat status;
    if (fd < 0 || fstat(fd, &status) != 0) {
        int cause = errno;
        snprintf(error, error_size, "cannot open %s: %s", path, strerror(cause));
        return -cause;
    }
    if (!S_ISREG(status.st_mode) || status.st_size == 0) {
        snprintf(error, error_size, "%s is not a core file (%s)", path,
                 S_ISREG(status.st_mode) ? "empty" : "not a regular file");
        return -EINVAL;
    }
    void *bytes = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (bytes == MAP_FAILED) {
        int cause = errno;
        snprintf(error, error_size, "cannot map %s: %s", path, strerror(cause));
        return -cause;
    }
    char why[256];
    int parsed = probe_core_parse(bytes, (size_t)status.st_size, out, why, sizeof why);
    if (parsed != 0) {
        munmap(bytes, (size_t)status.st_size);
        snprintf(error, error_size, "%s: %s", path, why);
        return parsed;
    }
    (*out)->mapped = true;
    return 0;
}

void probe_core_free(struct probe_core *core)
{
    if (!core)
        return;
    for (size_t i = 0; i < core->nfiles; i++) {
        free(core->files[i].path);
        if (core->files[i].fd >= 0)
            close(core->files[i].fd);
    }
    for (size_t i = 0; i < core->nproblems; i++)
        free(core->problems[i]);
    free(core->files);
    free(core->threads);
    free(core->auxv);
    free(core->segments);
    if (core->mapped)
        munmap((void *)(uintptr_t)core->bytes, core->length);
    free(core);
}

const struct probe_core_segment *probe_core_segment_at(const struct probe_core *core, uint64_t address)
{
    size_t low = 0, high = core->nsegments;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        const struct probe_core_segment *segment = &core->segments[middle];
        if (address < segment->vaddr)
            high = middle;
        else if (address - segment->vaddr >= segment->memsz)
            low = middle + 1;
        else
            return segment;
    }
    return NULL;
}

/* The bytes at `address` from the file mapped there, when the core names one: at most `size`, 0 when none. Only a
 * regular file is opened (probe_open_regular): a core names any path it likes. */
const struct probe_core_file *probe_core_file_at(const struct probe_core *core, uint64_t address)
{
    size_t low = 0, high = core->nfiles;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (core->files[middle].start <= address)
            low = middle + 1;
        else
            high = middle;
    }
    /* the last entry that starts at or before the address */
    return low > 0 && address < core->files[low - 1].end ? &core->files[low - 1] : NULL;
}

/* A core may name thousands of mappings: no more than PROBE_CORE_OPEN_FILES of their files are held open at once
 * (when that many are, all are closed, to be opened again as needed). */
static void open_file(struct probe_core *core, struct probe_core_file *file)
{
    if (core->open_files >= PROBE_CORE_OPEN_FILES) {
        for (size_t i = 0; i < core->nfiles; i++)
            if (core->files[i].fd >= 0) {
                close(core->files[i].fd);
                core->files[i].fd = -2;
            }
        core->open_files = 0;
    }
    char located[4200];
    file->fd = file->path[0] == '/' && probe_files_locate(file->path, located, sizeof located)
                   ? probe_open_regular(located, NULL) : -1;
    core->open_files += file->fd >= 0;
}

static size_t read_from_file(struct probe_core *core, uint64_t address, unsigned char *out, size_t size)
{
    struct probe_core_file *file = (struct probe_core_file *)probe_core_file_at(core, address);
    if (!file)
        return 0;
    if (file->fd == -2)
        open_file(core, file);
    if (file->fd < 0)
        return 0;
    size_t chunk = file->end - address < size ? (size_t)(file->end - address) : size;
    uint64_t offset = file->offset + (address - file->start);
    if (offset < file->offset || offset > (uint64_t)INT64_MAX)
        return 0;
    ssize_t got = pread(file->fd, out, chunk, (off_t)offset);
    return got > 0 ? (size_t)got : 0;
}

bool probe_core_read(void *context, uint64_t address, void *buffer, size_t size)
{
    struct probe_core *core = context;
    unsigned char *out = buffer;
    while (size > 0) {
        const struct probe_core_segment *segment = probe_core_segment_at(core, address);
        if (!segment || address - segment->vaddr >= segment->filesz) {
            /* not dumped: a file's pages, read from the file */
            size_t got = read_from_file(core, address, out, size);
            if (got == 0)
                return false;
            out += got;
            address += got;
            size -= got;
            continue;
        }
        uint64_t within = address - segment->vaddr;
        size_t chunk = segment->filesz - within < size ? (size_t)(segment->filesz - within) : size;
        memcpy(out, core->bytes + segment->offset + within, chunk);
        out += chunk;
        address += chunk;
        size -= chunk;
    }
    return true;
}

bool probe_core_auxv(const struct probe_core *core, uint64_t type, uint64_t *value)
{
    for (size_t i = 0; i < core->nauxv; i++)
        if (core->auxv[2 * i] == type) {
            *value = core->auxv[2 * i + 1];
            return true;
        }
    return false;
}
