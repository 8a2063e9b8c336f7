/* Mapped ELF objects (libraries.h). */
#include "libraries.h"

#include "elf_memory.h"
#include "files.h"
#include "util.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define LIBRARIES_MAX 2048
/* elf_getdata (ELF_C_READ) mallocs and preads a whole section: a hostile or sparse file could name a 2 GiB
 * .note or .dynamic and cost that much memory and time. Real ones are a few hundred bytes. */
#define SECTION_READ_MAX PROBE_SECTION_READ_MAX
/* libelf allocates a descriptor for every section at elf_begin and reads all the section headers at the first
 * gelf_getshdr. e_shnum caps them at 65535, but with extended numbering (e_shnum 0) section 0's sh_size holds
 * the count: a sparse file can name millions (seconds and GiBs). Real objects have a few dozen. */
#define SECTIONS_MAX 65535

/* Paths in maps that are not files ld.so or the kernel loaded code from. */
static const char *const not_objects[] = { "/dev/", "/memfd:", "/SYSV", "/dev/shm/" };

static bool may_be_object(const struct hd_mapping *mapping)
{
    if (!mapping->path || mapping->path[0] != '/' || mapping->inode == 0)
        return false;
    for (size_t i = 0; i < COUNT(not_objects); i++)
        if (strncmp(mapping->path, not_objects[i], strlen(not_objects[i])) == 0)
            return false;
    return true;
}

/* elf_strptr loads the whole string table the name lies in: the same cap as for the sections we read ourselves. */
static bool string_table_readable(Elf *elf, size_t index)
{
    GElf_Shdr header;
    Elf_Scn *section = elf_getscn(elf, index);
    return section && gelf_getshdr(section, &header) && header.sh_size <= SECTION_READ_MAX;
}

static char *read_soname(Elf *elf)
{
    Elf_Scn *section = NULL;
    while ((section = elf_nextscn(elf, section))) {
        GElf_Shdr header;
        if (!gelf_getshdr(section, &header) || header.sh_type != SHT_DYNAMIC || header.sh_entsize == 0 ||
            header.sh_size > SECTION_READ_MAX)
            continue;
        Elf_Data *data = elf_getdata(section, NULL);
        size_t count = data ? data->d_size / header.sh_entsize : 0;
        for (size_t i = 0; i < count; i++) {
            GElf_Dyn entry;
            if (!gelf_getdyn(data, (int)i, &entry) || entry.d_tag == DT_NULL)
                break;
            if (entry.d_tag != DT_SONAME)
                continue;
            if (!string_table_readable(elf, header.sh_link))
                return NULL;
            const char *name = elf_strptr(elf, header.sh_link, entry.d_un.d_val);
            return name ? strndup(name, PROBE_SONAME_MAX) : NULL;
        }
    }
    return NULL;
}

static char *read_build_id(Elf *elf)
{
    Elf_Scn *section = NULL;
    while ((section = elf_nextscn(elf, section))) {
        GElf_Shdr header;
        if (!gelf_getshdr(section, &header) || header.sh_type != SHT_NOTE || header.sh_size > SECTION_READ_MAX)
            continue;
        Elf_Data *data = elf_getdata(section, NULL);
        size_t offset = 0, name_offset, descriptor_offset;
        GElf_Nhdr note;
        while (data && (offset = gelf_getnote(data, offset, &note, &name_offset, &descriptor_offset)) > 0) {
            if (note.n_type != NT_GNU_BUILD_ID || note.n_namesz != 4 ||
                memcmp((const char *)data->d_buf + name_offset, "GNU", 4) != 0)
                continue;
            return probe_build_id_text((const unsigned char *)data->d_buf + descriptor_offset, note.n_descsz);
        }
    }
    return NULL;
}

/* How many sections the ELF file on `fd` declares, read from its headers without libelf: e_shnum, or with
 * extended numbering section 0's sh_size. 0 when it is not an ELF header we can read (libelf says why). */
static uint64_t declared_sections(int fd)
{
    union {
        unsigned char ident[EI_NIDENT];
        Elf32_Ehdr elf32;
        Elf64_Ehdr elf64;
    } header;
    if (pread(fd, &header, sizeof header, 0) != (ssize_t)sizeof header || memcmp(header.ident, ELFMAG, SELFMAG) != 0 ||
        (header.ident[EI_CLASS] != ELFCLASS32 && header.ident[EI_CLASS] != ELFCLASS64))
        return 0;
    bool is64 = header.ident[EI_CLASS] == ELFCLASS64, msb = header.ident[EI_DATA] == ELFDATA2MSB;
    uint64_t count = is64 ? header.elf64.e_shnum : header.elf32.e_shnum;
    uint64_t offset = is64 ? header.elf64.e_shoff : header.elf32.e_shoff;
    count = probe_elf_host_order(count, 2, msb);
    offset = probe_elf_host_order(offset, is64 ? 8 : 4, msb);
    if (count != 0 || offset == 0)
        return count;
    union {
        Elf32_Shdr elf32;
        Elf64_Shdr elf64;
    } first;
    size_t size = is64 ? sizeof first.elf64 : sizeof first.elf32;
    if (offset > INT64_MAX || pread(fd, &first, size, (off_t)offset) != (ssize_t)size)
        return 0;
    return is64 ? probe_elf_host_order(first.elf64.sh_size, 8, msb)
                : probe_elf_host_order(first.elf32.sh_size, 4, msb);
}

bool probe_read_elf_identity(int fd, char **soname, char **build_id)
{
    *soname = NULL;
    *build_id = NULL;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return false;
    /* before libelf, which sizes its tables by the count at elf_begin: an ELF file, but none we read */
    if (declared_sections(fd) > SECTIONS_MAX)
        return true;
    /* ELF_C_READ, not mmap: a file truncated under us must give a read error, not SIGBUS */
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    if (!elf)
        return false;
    bool is_elf = elf_kind(elf) == ELF_K_ELF;
    if (is_elf) {
        *soname = read_soname(elf);
        *build_id = read_build_id(elf);
    }
    elf_end(elf);
    return is_elf;
}

/* What one file said, shared by every process that maps it. */
struct identity {
    char *path;
    uint64_t inode;
    unsigned device_major;
    unsigned device_minor;
    bool is_elf;
    char *soname;
    char *build_id;
    /* while the process that first maps the file is read: its mapping of file offset 0 and the first one seen */
    const struct hd_mapping *offset_zero;
    const struct hd_mapping *seen;
};

struct identities {
    struct identity *items;
    size_t count;
};

/* Opens the file the way the target sees it: through its mapping (works for deleted files, needs
 * CAP_SYS_ADMIN), else through its root directory (another mount namespace). The same device and inode only: a
 * file replaced since it was mapped is another file. */
int probe_open_mapped_file(pid_t pid, const struct hd_mapping *mapping)
{
    char path[4200];
    snprintf(path, sizeof path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, mapping->start, mapping->end);
    int fd = probe_open_regular(path, mapping);
    if (fd < 0) {
        snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, mapping->path);
        fd = probe_open_regular(path, mapping);
    }
    return fd;
}

static bool same_file(const struct identity *identity, const struct hd_mapping *mapping)
{
    return identity->inode == mapping->inode && identity->device_major == mapping->device_major &&
           identity->device_minor == mapping->device_minor && strcmp(identity->path, mapping->path) == 0;
}

/* The identity of `mapping`'s file, or NULL. `last` is the one found for the mapping before: a file's mappings lie
 * next to each other. */
static struct identity *find_identity(const struct identities *known, const struct hd_mapping *mapping,
                                      struct identity *last)
{
    if (last && same_file(last, mapping))
        return last;
    for (size_t i = 0; i < known->count; i++)
        if (same_file(&known->items[i], mapping))
            return &known->items[i];
    return NULL;
}

static struct identity *add_identity(struct identities *known, const struct hd_mapping *mapping)
{
    struct identity *grown = reallocarray(known->items, known->count + 1, sizeof *grown);
    if (!grown)
        return NULL;
    known->items = grown;
    struct identity *identity = &known->items[known->count];
    *identity = (struct identity){ .path = strdup(mapping->path),
                                   .inode = mapping->inode,
                                   .device_major = mapping->device_major,
                                   .device_minor = mapping->device_minor,
                                   .seen = mapping };
    if (!identity->path)
        return NULL;
    known->count++;
    return identity;
}

static void identify_from_file(struct identity *identity, pid_t pid)
{
    int fd = probe_open_mapped_file(pid, identity->seen);
    if (fd >= 0) {
        identity->is_elf = probe_read_elf_identity(fd, &identity->soname, &identity->build_id);
        close(fd);
    }
}

/* Identifies the files `process` maps that no process before it did: from its memory (probe_read_elf_objects),
 * and from the file only what memory could not decide. False when memory ran out. */
static bool identify_new_files(struct identities *known, const struct hd_process *process)
{
    size_t first_new = known->count;
    struct identity *last = NULL;
    for (size_t m = 0; m < process->nmappings; m++) {
        const struct hd_mapping *mapping = &process->mappings[m];
        if (!may_be_object(mapping))
            continue;
        last = find_identity(known, mapping, last);
        if (!last && !(last = add_identity(known, mapping)))
            return false;
        if (last >= known->items + first_new && mapping->offset == 0 && !last->offset_zero)
            last->offset_zero = mapping;
    }
    size_t count = known->count - first_new;
    struct probe_elf_object *objects = calloc(count ? count : 1, sizeof *objects);
    if (!objects)
        return false;
    for (size_t i = 0; i < count; i++)
        objects[i].first = known->items[first_new + i].offset_zero;
    bool ok = probe_read_elf_objects(process, objects, count);
    for (size_t i = 0; ok && i < count; i++) {
        struct identity *identity = &known->items[first_new + i];
        identity->is_elf = objects[i].verdict == PROBE_ELF_ELF;
        identity->soname = objects[i].soname;
        identity->build_id = objects[i].build_id;
        if (objects[i].verdict == PROBE_ELF_UNDECIDED)
            identify_from_file(identity, process->pid);
        identity->offset_zero = identity->seen = NULL;
    }
    free(objects);
    return ok;
}

static void identities_release(struct identities *known)
{
    for (size_t i = 0; i < known->count; i++) {
        free(known->items[i].path);
        free(known->items[i].soname);
        free(known->items[i].build_id);
    }
    free(known->items);
}

/* Searched from the last one added: a file's mappings lie next to each other. */
static struct hd_library *find_by_path(struct hd_process *process, const struct hd_mapping *mapping)
{
    for (size_t i = process->nlibraries; i-- > 0;)
        if (process->libraries[i].inode == mapping->inode && strcmp(process->libraries[i].path, mapping->path) == 0)
            return &process->libraries[i];
    return NULL;
}

static bool add_library(struct hd_process *process, const struct hd_mapping *mapping, const struct identity *identity)
{
    if (process->nlibraries == LIBRARIES_MAX)
        return true;
    struct hd_library *grown = reallocarray(process->libraries, process->nlibraries + 1, sizeof *grown);
    if (!grown)
        return false;
    process->libraries = grown;
    struct hd_library *library = &process->libraries[process->nlibraries++];
    *library = (struct hd_library){
        .path = strdup(mapping->path),
        .soname = identity->soname ? strdup(identity->soname) : NULL,
        .build_id = identity->build_id ? strdup(identity->build_id) : NULL,
        .start = mapping->start,
        .end = mapping->end,
        .inode = mapping->inode,
    };
    return library->path && (!identity->soname || library->soname) && (!identity->build_id || library->build_id);
}

static bool read_process_libraries(struct identities *known, struct hd_process *process)
{
    if (!identify_new_files(known, process))
        return false;
    struct identity *last = NULL;
    for (size_t m = 0; m < process->nmappings; m++) {
        const struct hd_mapping *mapping = &process->mappings[m];
        if (!may_be_object(mapping))
            continue;
        struct hd_library *library = find_by_path(process, mapping);
        if (library) {
            library->start = mapping->start < library->start ? mapping->start : library->start;
            library->end = mapping->end > library->end ? mapping->end : library->end;
            continue;
        }
        last = find_identity(known, mapping, last);
        if (!last)
            return false;
        const struct identity *identity = last;
        /* unreadable files stay listed when their name says shared object: the path alone still classifies */
        if ((identity->is_elf || strstr(hd_basename(mapping->path), ".so")) && !add_library(process, mapping, identity))
            return false;
    }
    return true;
}

static void mark_inherited(const struct hd_snapshot *snapshot, struct hd_process *process)
{
    const struct hd_process *parent = hd_snapshot_find_process(snapshot, process->ppid);
    for (size_t i = 0; parent && i < process->nlibraries; i++) {
        struct hd_library *library = &process->libraries[i];
        const struct hd_library *theirs = hd_process_find_library(parent, library->start);
        library->in_parent = theirs && theirs->start == library->start && theirs->inode == library->inode &&
                             strcmp(theirs->path, library->path) == 0;
    }
}

bool probe_read_libraries(struct hd_snapshot *snapshot)
{
    struct identities known = { 0 };
    bool ok = true;
    for (size_t p = 0; p < snapshot->nprocesses && ok; p++)
        ok = read_process_libraries(&known, &snapshot->processes[p]);
    for (size_t p = 0; p < snapshot->nprocesses && ok; p++)
        mark_inherited(snapshot, &snapshot->processes[p]);
    identities_release(&known);
    return ok;
}
