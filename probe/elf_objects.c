/* Named objects of an ELF file (elf_objects.h). */
#include "elf_objects.h"

#include "files.h"
#include "util.h"

#include <elf.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The largest symbol table (and its string table) read: libpython's .symtab holds some 11,000 symbols in 260 KiB,
 * its names 300 KiB, a Go binary's 40,000 in 1 MiB; a hostile file could name gigabytes, which elf_getdata would
 * allocate and read. */
#define SYMBOL_SECTION_MAX (32u << 20)
/* libelf allocates a descriptor per section at elf_begin; a real object has a few dozen. */
#define SECTIONS_MAX 1024

/* The ELF header of the file, checked before libelf reads it: a 64-bit object of our byte order whose section
 * count is plain (not extended numbering, which names the count elsewhere) and small. */
static bool header_acceptable(int fd)
{
    Elf64_Ehdr header;
    if (pread(fd, &header, sizeof header, 0) != (ssize_t)sizeof header ||
        memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
        return false;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (header.e_ident[EI_DATA] != ELFDATA2LSB)
        return false;
#else
    if (header.e_ident[EI_DATA] != ELFDATA2MSB)
        return false;
#endif
    return header.e_shnum <= SECTIONS_MAX && (header.e_shnum != 0 || header.e_shoff == 0);
}

/* The file behind `mapping` as the target sees it: through its root directory (another mount namespace), else
 * its map_files entry (a deleted or replaced file; needs CAP_SYS_ADMIN on older kernels). Only the mapping's
 * very file: probe_open_regular checks its inode and device. */
static int open_mapped(pid_t pid, const struct hd_mapping *mapping)
{
    char path[4200];
    if (probe_files_offline()) {
        const char *located = probe_files_locate(mapping->path, path, sizeof path);
        return located ? probe_open_regular(located, NULL) : -1;
    }
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, mapping->path);
    int fd = probe_open_regular(path, mapping);
    if (fd >= 0)
        return fd;
    snprintf(path, sizeof path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, mapping->start, mapping->end);
    return probe_open_regular(path, mapping);
}

static bool section_bounded(Elf *elf, size_t index)
{
    GElf_Shdr header;
    Elf_Scn *section = elf_getscn(elf, index);
    return section && gelf_getshdr(section, &header) && header.sh_size <= SYMBOL_SECTION_MAX;
}

static bool all_found(const struct probe_elf_object *wanted, size_t count, bool required_only)
{
    for (size_t w = 0; w < count; w++)
        if (!wanted[w].value && !(required_only && wanted[w].optional))
            return false;
    return true;
}

static void take_symbol(struct probe_elf_object *wanted, size_t count, const GElf_Sym *symbol, const char *name)
{
    if (symbol->st_shndx == SHN_UNDEF || GELF_ST_TYPE(symbol->st_info) != STT_OBJECT || symbol->st_value == 0)
        return;
    for (size_t w = 0; w < count; w++)
        if (!wanted[w].value && symbol->st_size >= wanted[w].size_min && strcmp(name, wanted[w].name) == 0) {
            wanted[w].value = symbol->st_value;
            wanted[w].size = symbol->st_size;
        }
}

/* Looks for the wanted objects in every section of `type` (SHT_DYNSYM or SHT_SYMTAB). */
static void scan_symbols(Elf *elf, Elf64_Word type, struct probe_elf_object *wanted, size_t nwanted)
{
    size_t entry_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
    for (Elf_Scn *section = elf_nextscn(elf, NULL); section && !all_found(wanted, nwanted, false);
         section = elf_nextscn(elf, section)) {
        GElf_Shdr header;
        if (!gelf_getshdr(section, &header) || header.sh_type != type || header.sh_entsize != entry_size ||
            entry_size == 0 || header.sh_size > SYMBOL_SECTION_MAX || !section_bounded(elf, header.sh_link))
            continue;
        Elf_Data *data = elf_getdata(section, NULL);
        size_t count = data ? data->d_size / entry_size : 0;
        for (size_t i = 1; i < count && !all_found(wanted, nwanted, false); i++) {
            GElf_Sym symbol;
            if (!gelf_getsym(data, (int)i, &symbol) || symbol.st_name == 0)
                continue;
            const char *name = elf_strptr(elf, header.sh_link, symbol.st_name);
            if (name)
                take_symbol(wanted, nwanted, &symbol, name);
        }
    }
}

/* The page-aligned p_vaddr of the PT_LOAD that maps file offset 0. */
static bool read_first_load(Elf *elf, struct probe_elf_file *file)
{
    size_t count;
    if (elf_getphdrnum(elf, &count) != 0)
        return false;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < count && i < 256; i++) {
        GElf_Phdr header;
        if (gelf_getphdr(elf, (int)i, &header) && header.p_type == PT_LOAD && header.p_offset == 0) {
            file->first_load = header.p_vaddr - header.p_vaddr % page;
            return true;
        }
    }
    return false;
}

static bool has_section(Elf *elf, const char *name)
{
    size_t names;
    if (elf_getshdrstrndx(elf, &names) != 0 || !section_bounded(elf, names))
        return false;
    for (Elf_Scn *section = elf_nextscn(elf, NULL); section; section = elf_nextscn(elf, section)) {
        GElf_Shdr header;
        const char *found = gelf_getshdr(section, &header) ? elf_strptr(elf, names, header.sh_name) : NULL;
        if (found && strcmp(found, name) == 0)
            return true;
    }
    return false;
}

static bool read_elf(int fd, const char *only_with_section, struct probe_elf_file *file,
                     struct probe_elf_object *wanted, size_t nwanted, const char **why)
{
    if (elf_version(EV_CURRENT) == EV_NONE || !header_acceptable(fd)) {
        *why = "not a 64-bit ELF file of this machine's byte order with a plain section count";
        return false;
    }
    /* ELF_C_READ, not mmap: a file truncated under us gives a read error, not SIGBUS */
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr header;
    bool ok = elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &header) && read_first_load(elf, file);
    if (ok && only_with_section && !has_section(elf, only_with_section)) {
        *why = "it has no such section";
        ok = false;
    } else if (ok) {
        file->fixed_address = header.e_type == ET_EXEC;
        scan_symbols(elf, SHT_DYNSYM, wanted, nwanted);
        /* the larger .symtab only for what the dynamic table does not export */
        if (!all_found(wanted, nwanted, true))
            scan_symbols(elf, SHT_SYMTAB, wanted, nwanted);
    } else if (!*why) {
        *why = "its ELF headers could not be read";
    }
    if (elf)
        elf_end(elf);
    return ok;
}

bool probe_elf_read_objects(pid_t pid, const struct hd_mapping *mapping, const char *only_with_section,
                            struct probe_elf_object *wanted, size_t nwanted, struct probe_elf_file *file,
                            const char **why)
{
    *why = NULL;
    *file = (struct probe_elf_file){ 0 };
    for (size_t w = 0; w < nwanted; w++)
        wanted[w].value = wanted[w].size = 0;
    int fd = open_mapped(pid, mapping);
    if (fd < 0) {
        *why = "its file could not be opened (gone, replaced since, or not a regular file)";
        return false;
    }
    bool ok = read_elf(fd, only_with_section, file, wanted, nwanted, why);
    close(fd);
    return ok;
}

bool probe_elf_load_bias(const struct probe_elf_file *file, const struct hd_mapping *first, uint64_t *bias)
{
    if (file->fixed_address) {
        *bias = 0;
        return first->start == file->first_load;
    }
    *bias = first->start - file->first_load;
    return first->start >= file->first_load;
}
