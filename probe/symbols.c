/* ELF symbol tables and the names of program counters (symbols.h). */
#include "symbols.h"

#include "rust_demangle.h"

#include "files.h"
#include "probe.h"
#include "util.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

HD_DEFINE_CLEANUP(Elf, elf_end)

#if HANGDOC_STATIC
/* libstdc++'s demangler (cxxabi.h), linked in from libstdc++.a in the static binary */
char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);
#endif

#define SYMBOLS_MAX (8u << 20) /* per file: a hostile section header must not make us allocate without bound */
#define LOADS_MAX 64
#define OVERLAP_SCAN 64        /* symbols scanned back from the nearest start, for ones that nest or overlap */
#define LINEAR_LOOKUPS_MAX 16  /* distinct lookups in one file before its table is sorted */
#define RECENT_LOOKUPS 64
#define DEBUG_ROOT "/usr/lib/debug"
/* Sections are read into memory whole (ELF_C_READ): what one may weigh, by what it is. */
#define NOTE_SECTION_MAX 4096
#define DEBUGLINK_SECTION_MAX 4096
#define SYMBOL_SECTION_MAX ((size_t)SYMBOLS_MAX * sizeof(Elf64_Sym))
/* Symbol tables are read a chunk at a time into one reused buffer, names one at a time. */
#define SYMBOL_CHUNK_BYTES (48u << 10) /* a multiple of both sizeof(Elf32_Sym) and sizeof(Elf64_Sym) */
#define NAME_FIRST_READ 256
#define NAME_MAX_BYTES (64u << 10) /* a longer name (C++ templates can nest deep) is no name */

/* The name is read from the file only for a symbol found (read_name). */
struct symbol {
    uint64_t start;
    uint64_t size;
    uint32_t name;  /* offset in the string table tables[table] */
    uint8_t table;
    bool global;    /* of two names for one function, the global one is what a reader knows */
};

/* Where a symbol table's names lie in its file: read with pread, a name at a time. */
struct string_table {
    int fd;
    uint64_t offset;
    uint64_t size;
};

/* What an address was found to be, with the symbol's name read from the file. */
struct lookup {
    uint64_t address;
    struct symbol symbol;
    bool found;
    bool valid;
    char *name;
};

struct load_segment {
    uint64_t offset;
    uint64_t vaddr;
    uint64_t filesz;
};

struct elf_file {
    char *path;
    uint64_t inode;
    bool loaded;         /* opened, program headers read */
    bool symbols_loaded; /* symbol tables read (maybe none) */
    int fd;
    Elf *elf;
    int debug_fd;
    Elf *debug_elf;
    struct load_segment loads[LOADS_MAX];
    size_t nloads;
    bool has_eh_frame_hdr;
    uint64_t eh_frame_hdr_vaddr;
    struct symbol *symbols; /* sorted by start once `sorted` */
    size_t nsymbols;
    struct string_table tables[3]; /* .symtab (its own or its debug file's), .dynsym */
    size_t ntables;
    bool sorted;
    bool debug_looked_up;
    unsigned lookups;
    /* the last lookups: the threads of a pool share their pcs */
    struct lookup recent[RECENT_LOOKUPS];
    /* the addresses searched for before the table was loaded (probe_symbols_prepare), in one pass over it */
    struct lookup prepared[LINEAR_LOOKUPS_MAX];
    size_t nprepared;
    size_t npending;        /* after those: wanted, not searched for yet */
    bool preparing_refused; /* more addresses than a pass is worth: the table is loaded */
};

struct probe_symbols {
    struct elf_file **files;
    size_t nfiles;
    size_t capacity;
    unsigned char *chunk; /* SYMBOL_CHUNK_BYTES, for reading symbol tables; NULL until the first */
    bool demangler_looked_up;
    bool debug_files; /* look for separate debug files (probe_symbols_use_debug_files) */
    char *(*demangle)(const char *name, char *buffer, size_t *length, int *status);
    void *libstdcxx;
};

struct probe_symbols *probe_symbols_new(void)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return NULL;
    struct probe_symbols *symbols = calloc(1, sizeof *symbols);
    if (symbols)
        symbols->debug_files = true;
    return symbols;
}

bool probe_debug_files_default(void)
{
    /* a switch for whoever must see what a machine without -dbg packages shows: "0" alone, so that a typo does
     * not silently turn the names off */
    const char *chosen = getenv("HANGDOC_DEBUG_FILES");
    return !chosen || strcmp(chosen, "0") != 0;
}

void probe_symbols_use_debug_files(struct probe_symbols *symbols, bool use)
{
    symbols->debug_files = use;
}

static void forget_recent(struct elf_file *file)
{
    for (size_t i = 0; i < RECENT_LOOKUPS; i++)
        free(file->recent[i].name);
    memset(file->recent, 0, sizeof file->recent);
}

static void forget_prepared(struct elf_file *file)
{
    for (size_t i = 0; i < file->nprepared; i++)
        free(file->prepared[i].name);
    file->nprepared = 0;
}

static void elf_file_free(struct elf_file *file)
{
    forget_recent(file);
    forget_prepared(file);
    if (file->elf)
        elf_end(file->elf);
    if (file->debug_elf)
        elf_end(file->debug_elf);
    if (file->fd >= 0)
        close(file->fd);
    if (file->debug_fd >= 0)
        close(file->debug_fd);
    free(file->symbols);
    free(file->path);
    free(file);
}

void probe_symbols_free(struct probe_symbols *symbols)
{
    if (!symbols)
        return;
    for (size_t i = 0; i < symbols->nfiles; i++)
        elf_file_free(symbols->files[i]);
    free(symbols->files);
    free(symbols->chunk);
    if (symbols->libstdcxx)
        dlclose(symbols->libstdcxx);
    free(symbols);
}

/* ---- opening ----------------------------------------------------------------------------------------------- */

/* Opens `path` when it is a regular ELF file (and, unless `same_as` is NULL, that mapping's very file): never a
 * FIFO or a device node (files.h). ELF_C_READ, not mmap: a file truncated under hangdoc gives a read error, not
 * SIGBUS; sections are read when asked for, each bounded by its caller. */
static Elf *open_elf(const char *path, const struct hd_mapping *same_as, int *fd_out)
{
    int fd cleanup_fd = probe_open_regular(path, same_as);
    if (fd < 0)
        return NULL;
    Elf *elf hd_cleanup(elf_end) = elf_begin(fd, ELF_C_READ, NULL);
    if (!elf || elf_kind(elf) != ELF_K_ELF)
        return NULL;
    *fd_out = steal_fd(&fd);
    return steal_pointer(&elf);
}

/* The file behind a mapping: by its path, through the target's root (another mount namespace), or through
 * map_files (deleted or replaced files). */
static Elf *open_mapped_file(pid_t pid, const struct hd_mapping *mapping, int *fd)
{
    char path[4200];
    if (probe_files_offline()) {
        const char *located = probe_files_locate(mapping->path, path, sizeof path);
        return located ? open_elf(located, NULL, fd) : NULL;
    }
    const struct hd_mapping *same_as = mapping->inode ? mapping : NULL;
    Elf *elf = open_elf(mapping->path, same_as, fd);
    if (elf)
        return elf;
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, mapping->path);
    if ((elf = open_elf(path, same_as, fd)))
        return elf;
    snprintf(path, sizeof path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, mapping->start, mapping->end);
    return open_elf(path, same_as, fd);
}

/* ---- reading ----------------------------------------------------------------------------------------------- */

static void read_loads(struct elf_file *file)
{
    size_t count;
    if (elf_getphdrnum(file->elf, &count) != 0)
        return;
    for (size_t i = 0; i < count && file->nloads < LOADS_MAX; i++) {
        GElf_Phdr header;
        if (!gelf_getphdr(file->elf, (int)i, &header))
            continue;
        if (header.p_type == PT_GNU_EH_FRAME) {
            file->has_eh_frame_hdr = true;
            file->eh_frame_hdr_vaddr = header.p_vaddr;
        }
        if (header.p_type != PT_LOAD)
            continue;
        file->loads[file->nloads++] = (struct load_segment){
            .offset = header.p_offset, .vaddr = header.p_vaddr, .filesz = header.p_filesz };
    }
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, const char *name)
{
    size_t names;
    if (elf_getshdrstrndx(elf, &names) != 0)
        return NULL;
    for (Elf_Scn *section = elf_nextscn(elf, NULL); section; section = elf_nextscn(elf, section)) {
        GElf_Shdr header;
        if (!gelf_getshdr(section, &header) || header.sh_type != type)
            continue;
        const char *section_name = name ? elf_strptr(elf, names, header.sh_name) : NULL;
        if (!name || (section_name && strcmp(section_name, name) == 0))
            return section;
    }
    return NULL;
}

/* What a pass over a file's symbol tables does with each function: keep it in the file's table, or only see
 * which of a few addresses it covers. */
struct symbol_pass {
    bool keep;
    size_t capacity;        /* keep: of file->symbols, reserved a table at a time */
    struct lookup *wanted;  /* search: sorted by address, each with its best symbol so far */
    size_t nwanted;
    uint64_t addresses[LINEAR_LOOKUPS_MAX]; /* search: theirs, packed */
};

static bool grow_symbols(struct elf_file *file, size_t more, size_t *capacity)
{
    if (file->nsymbols + more <= *capacity)
        return true;
    size_t wanted = file->nsymbols + more;
    if (wanted > SYMBOLS_MAX)
        return false;
    struct symbol *grown = realloc(file->symbols, wanted * sizeof *grown);
    if (!grown)
        return false;
    file->symbols = grown;
    *capacity = wanted;
    return true;
}

/* The contents of `section` when it holds at most `max` bytes: its header is the file's word, and the whole
 * section is read into memory. */
static Elf_Data *bounded_data(Elf_Scn *section, size_t max)
{
    GElf_Shdr header;
    if (!section || !gelf_getshdr(section, &header) || header.sh_size > max)
        return NULL;
    return elf_getdata(section, NULL);
}

/* Reads `size` bytes at `offset` of the file; false on a short read (a file truncated under us). */
static bool read_exactly(int fd, void *buffer, size_t size, uint64_t offset)
{
    unsigned char *out = buffer;
    while (size > 0) {
        ssize_t got = pread(fd, out, size, (off_t)offset);
        if (got <= 0)
            return false;
        out += got;
        offset += (uint64_t)got;
        size -= (size_t)got;
    }
    return true;
}

/* A section's bytes are somewhere pread can reach: offset + size fits in off_t. */
static bool section_in_reach(const GElf_Shdr *header)
{
    return header->sh_size <= INT64_MAX && header->sh_offset <= (uint64_t)INT64_MAX - header->sh_size;
}

/* Where the names of a symbol table lie: its sh_link, which must be a string table (as elf_strptr demands). */
static bool string_table_of(Elf *elf, int fd, size_t link, struct string_table *table)
{
    GElf_Shdr header;
    Elf_Scn *section = elf_getscn(elf, link);
    if (!section || !gelf_getshdr(section, &header) || header.sh_type != SHT_STRTAB || !section_in_reach(&header))
        return false;
    *table = (struct string_table){ .fd = fd, .offset = header.sh_offset, .size = header.sh_size };
    return true;
}

static GElf_Sym widened(const Elf32_Sym *narrow)
{
    return (GElf_Sym){ .st_name = narrow->st_name, .st_info = narrow->st_info, .st_other = narrow->st_other,
                       .st_shndx = narrow->st_shndx, .st_value = narrow->st_value, .st_size = narrow->st_size };
}

/* Reads `count` symbols at `offset` into `chunk`, in memory order: libelf swaps the bytes of a file of the other
 * byte order (in place: a symbol weighs the same in the file and in memory). */
static bool read_symbol_chunk(Elf *elf, int fd, uint64_t offset, size_t bytes, unsigned char *chunk)
{
    if (!read_exactly(fd, chunk, bytes, offset))
        return false;
    const unsigned char host_order = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
    const char *ident = elf_getident(elf, NULL);
    if (!ident || (unsigned char)ident[EI_DATA] == host_order)
        return ident != NULL;
    Elf_Data data = { .d_buf = chunk, .d_type = ELF_T_SYM, .d_version = EV_CURRENT, .d_size = bytes };
    Elf_Data converted = data;
    return gelf_xlatetom(elf, &converted, &data, (unsigned char)ident[EI_DATA]) != NULL;
}

/* Of two symbols that cover an address, the innermost: the later start, then the smaller size, then the global
 * name; of aliases alike in all that (__pthread_mutex_lock, pthread_mutex_lock), the one of the first table,
 * then the one whose name comes first in its string table, so that a name never depends on whether the file's
 * table was searched once or sorted. The sort order (compare_symbols) agrees. */
static bool better(const struct symbol *candidate, const struct symbol *best)
{
    if (!best || candidate->start != best->start)
        return !best || candidate->start > best->start;
    if (candidate->size != best->size)
        return candidate->size < best->size;
    if (candidate->global != best->global)
        return candidate->global;
    if (candidate->table != best->table)
        return candidate->table < best->table;
    return candidate->name < best->name;
}

/* A search pass: the symbol is the best so far for the wanted addresses it covers. The first address at or after
 * its start is found by counting those before it, without a branch: a binary search's branches are a coin toss
 * on every symbol. */
static void search_with(struct symbol_pass *pass, const struct symbol *symbol)
{
    size_t low = 0;
    for (size_t i = 0; i < pass->nwanted; i++)
        low += pass->addresses[i] < symbol->start;
    for (size_t i = low; i < pass->nwanted && pass->addresses[i] - symbol->start < symbol->size; i++)
        if (better(symbol, pass->wanted[i].found ? &pass->wanted[i].symbol : NULL)) {
            pass->wanted[i].symbol = *symbol;
            pass->wanted[i].found = true;
        }
}

static void take_if_function(struct elf_file *file, struct symbol_pass *pass, uint8_t table, const GElf_Sym *symbol)
{
    int type = GELF_ST_TYPE(symbol->st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || symbol->st_size == 0 || symbol->st_shndx == SHN_UNDEF ||
        symbol->st_name == 0)
        return;
    struct symbol function = { .start = symbol->st_value, .size = symbol->st_size, .name = symbol->st_name,
                               .table = table, .global = GELF_ST_BIND(symbol->st_info) != STB_LOCAL };
    if (pass->keep)
        file->symbols[file->nsymbols++] = function;
    else
        search_with(pass, &function);
}

/* Adds the function symbols with a size of one symbol table section. The table is read from the file a chunk at a
 * time into one reused buffer (glibc's debug table alone weighs 240 KiB, most of it data and file symbols), each
 * symbol taken straight from the chunk; a table that cannot be read whole adds nothing. */
static void add_symbol_table(struct probe_symbols *symbols, struct elf_file *file, Elf *elf, int fd,
                             Elf_Scn *section, struct symbol_pass *pass)
{
    GElf_Shdr header;
    struct string_table names;
    int class = gelf_getclass(elf);
    size_t symbol_size = class == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
    if ((class != ELFCLASS32 && class != ELFCLASS64) || !gelf_getshdr(section, &header) ||
        header.sh_size > SYMBOL_SECTION_MAX || header.sh_entsize == 0 || !section_in_reach(&header) ||
        file->ntables == COUNT(file->tables) ||
        !string_table_of(elf, fd, header.sh_link, &names))
        return;
    if (!symbols->chunk && !(symbols->chunk = malloc(SYMBOL_CHUNK_BYTES)))
        return;
    /* as gelf_getsym counts them: entries of sh_entsize, but no more than whole symbols in the section */
    size_t count = header.sh_size / header.sh_entsize;
    if (count > header.sh_size / symbol_size)
        count = header.sh_size / symbol_size;
    if (pass->keep && !grow_symbols(file, count, &pass->capacity))
        count = pass->capacity - file->nsymbols;
    uint8_t table = (uint8_t)file->ntables;
    size_t kept_before = file->nsymbols, per_chunk = SYMBOL_CHUNK_BYTES / symbol_size;
    struct lookup found_before[LINEAR_LOOKUPS_MAX];
    if (!pass->keep)
        memcpy(found_before, pass->wanted, pass->nwanted * sizeof *pass->wanted);
    for (size_t first = 0; first < count; first += per_chunk) {
        size_t in_chunk = count - first < per_chunk ? count - first : per_chunk;
        if (!read_symbol_chunk(elf, fd, header.sh_offset + first * symbol_size, in_chunk * symbol_size,
                               symbols->chunk)) {
            file->nsymbols = kept_before;
            if (!pass->keep)
                memcpy(pass->wanted, found_before, pass->nwanted * sizeof *pass->wanted);
            return;
        }
        /* 64-bit symbols are read where they lie (GElf_Sym is Elf64_Sym): a copy of each costs more than the rest */
        const Elf64_Sym *wide = (const void *)symbols->chunk;
        const Elf32_Sym *narrow = (const void *)symbols->chunk;
        for (size_t i = 0; i < in_chunk; i++) {
            GElf_Sym widened_symbol;
            if (class == ELFCLASS32)
                widened_symbol = widened(&narrow[i]);
            take_if_function(file, pass, table, class == ELFCLASS64 ? &wide[i] : &widened_symbol);
        }
    }
    file->tables[file->ntables++] = names;
}

/* The GNU build-id note as hex, or false. */
static bool read_build_id(Elf *elf, char *hex, size_t size)
{
    Elf_Data *data = bounded_data(find_section(elf, SHT_NOTE, ".note.gnu.build-id"), NOTE_SECTION_MAX);
    if (!data)
        return false;
    GElf_Nhdr note;
    size_t name_offset, description_offset;
    size_t offset = gelf_getnote(data, 0, &note, &name_offset, &description_offset);
    /* n_descsz comes from the file: compared in size_t, never multiplied in 32 bits (0x80000000 * 2 + 1 wraps to 1) */
    if (offset == 0 || note.n_type != NT_GNU_BUILD_ID || note.n_descsz < 2 || (size_t)note.n_descsz > (size - 1) / 2 ||
        description_offset > data->d_size || note.n_descsz > data->d_size - description_offset)
        return false;
    const unsigned char *bytes = (const unsigned char *)data->d_buf + description_offset;
    for (size_t i = 0; i < note.n_descsz; i++)
        snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    return true;
}

/* The separate debug file: by build-id, then by .gnu_debuglink next to the file, in .debug/, under DEBUG_ROOT. */
static Elf *open_debug_file(Elf *elf, const char *path, int *fd)
{
    char candidate[4400], build_id[129];
    if (read_build_id(elf, build_id, sizeof build_id)) {
        snprintf(candidate, sizeof candidate, DEBUG_ROOT "/.build-id/%.2s/%s.debug", build_id, build_id + 2);
        Elf *debug = open_elf(candidate, NULL, fd);
        if (debug)
            return debug;
    }
    Elf_Data *data = bounded_data(find_section(elf, SHT_PROGBITS, ".gnu_debuglink"), DEBUGLINK_SECTION_MAX);
    if (!data || data->d_size < 2 || !memchr(data->d_buf, '\0', data->d_size))
        return NULL;
    const char *link = data->d_buf;
    if (strchr(link, '/'))
        return NULL;
    const char *slash = strrchr(path, '/');
    int directory = slash ? (int)(slash - path) : 0;
    /* beside the file, in .debug/ beside it, and under DEBUG_ROOT with the file's directory */
    static const char *const prefixes[] = { "", "", DEBUG_ROOT };
    static const char *const middles[] = { "/", "/.debug/", "/" };
    for (size_t i = 0; i < COUNT(prefixes); i++) {
        snprintf(candidate, sizeof candidate, "%s%.*s%s%s", prefixes[i], directory, path, middles[i], link);
        if (strcmp(candidate, path) == 0)
            continue;
        Elf *debug = open_elf(candidate, NULL, fd);
        if (debug)
            return debug;
    }
    return NULL;
}

static int compare_symbols(const void *a, const void *b)
{
    const struct symbol *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->size != y->size) /* the smallest last: the innermost of nested symbols is found first */
        return x->size > y->size ? -1 : 1;
    if (x->global != y->global) /* the global name last: the lookup scans backwards */
        return (int)x->global - (int)y->global;
    if (x->table != y->table) /* then the first table's, and the first name, last (better() agrees) */
        return x->table > y->table ? -1 : 1;
    return (x->name < y->name) - (x->name > y->name);
}

/* The program headers only: what the unwinder needs while the target is stopped. */
static void open_elf_file(struct elf_file *file, pid_t pid, const struct hd_mapping *mapping)
{
    file->loaded = true;
    file->elf = open_mapped_file(pid, mapping, &file->fd);
    if (file->elf)
        read_loads(file);
}

/* One pass over the file's symbol tables, in the order that decides ties: .symtab (its own or its debug file's),
 * then .dynsym. Each pass registers the string tables again, the same ones at the same places. */
static void pass_over_tables(struct probe_symbols *symbols, struct elf_file *file, struct symbol_pass *pass)
{
    file->ntables = 0;
    Elf_Scn *symtab = find_section(file->elf, SHT_SYMTAB, NULL);
    if (symtab) {
        add_symbol_table(symbols, file, file->elf, file->fd, symtab, pass);
    } else {
        if (!file->debug_looked_up && symbols->debug_files) {
            file->debug_looked_up = true;
            file->debug_elf = open_debug_file(file->elf, file->path, &file->debug_fd);
        }
        Elf_Scn *debug_symtab = file->debug_elf ? find_section(file->debug_elf, SHT_SYMTAB, NULL) : NULL;
        if (debug_symtab)
            add_symbol_table(symbols, file, file->debug_elf, file->debug_fd, debug_symtab, pass);
    }
    Elf_Scn *dynsym = find_section(file->elf, SHT_DYNSYM, NULL);
    if (dynsym)
        add_symbol_table(symbols, file, file->elf, file->fd, dynsym, pass);
}

/* The symbol tables, the first time a pc of the file is named that no search pass found (after the target was
 * let go). */
static void load_symbols(struct probe_symbols *symbols, struct elf_file *file)
{
    if (file->symbols_loaded || !file->elf)
        return;
    file->symbols_loaded = true;
    struct symbol_pass pass = { .keep = true };
    pass_over_tables(symbols, file, &pass);
}

static struct elf_file *file_for(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mapping)
{
    for (size_t i = 0; i < symbols->nfiles; i++)
        if (symbols->files[i]->inode == mapping->inode && strcmp(symbols->files[i]->path, mapping->path) == 0)
            return symbols->files[i];
    if (symbols->nfiles == symbols->capacity) {
        size_t capacity = symbols->capacity ? 2 * symbols->capacity : 32;
        struct elf_file **grown = realloc(symbols->files, capacity * sizeof *grown);
        if (!grown)
            return NULL;
        symbols->files = grown;
        symbols->capacity = capacity;
    }
    struct elf_file *file cleanup_free = calloc(1, sizeof *file);
    if (!file || !(file->path = strdup(mapping->path)))
        return NULL;
    file->fd = file->debug_fd = -1;
    file->inode = mapping->inode;
    open_elf_file(file, pid, mapping);
    symbols->files[symbols->nfiles++] = file;
    return steal_pointer(&file);
}

/* ---- looking up -------------------------------------------------------------------------------------------- */

/* The ELF virtual address of a byte at `file_offset`, through the PT_LOAD that holds it. */
static bool file_offset_to_vaddr(const struct elf_file *file, uint64_t file_offset, uint64_t *vaddr)
{
    for (size_t i = 0; i < file->nloads; i++) {
        const struct load_segment *load = &file->loads[i];
        if (file_offset >= load->offset && file_offset - load->offset < load->filesz) {
            *vaddr = file_offset - load->offset + load->vaddr;
            return true;
        }
    }
    return false;
}

/* after every symbol that starts at or before it */
static int address_after_start(const void *key, const void *element)
{
    return ((const struct symbol *)element)->start <= *(const uint64_t *)key ? 1 : -1;
}

static const struct symbol *symbol_covering_sorted(const struct elf_file *file, uint64_t address)
{
    /* the first symbol starting after address, then back */
    size_t low = hd_lower_bound(&address, file->symbols, file->nsymbols, sizeof *file->symbols, address_after_start);
    for (size_t i = low, scanned = 0; i > 0 && scanned < OVERLAP_SCAN; i--, scanned++) {
        const struct symbol *symbol = &file->symbols[i - 1];
        if (address - symbol->start < symbol->size)
            return symbol;
    }
    return NULL;
}

/* A stack names a few addresses per file: scanning the table for each is cheaper than sorting it (glibc's debug
 * table has tens of thousands of functions), until a file is asked often. */
static const struct symbol *symbol_covering_uncached(struct elf_file *file, uint64_t address)
{
    if (!file->sorted && ++file->lookups > LINEAR_LOOKUPS_MAX) {
        if (file->nsymbols > 1)
            qsort(file->symbols, file->nsymbols, sizeof *file->symbols, compare_symbols);
        file->sorted = true;
    }
    if (file->sorted)
        return symbol_covering_sorted(file, address);
    const struct symbol *best = NULL;
    for (size_t i = 0; i < file->nsymbols; i++) {
        const struct symbol *symbol = &file->symbols[i];
        if (address - symbol->start < symbol->size && better(symbol, best))
            best = symbol;
    }
    return best;
}

/* The NUL-terminated name at `offset` of a string table, read from the file; NULL when it is empty, runs past
 * the table's end (as elf_strptr refuses it) or past NAME_MAX_BYTES, or cannot be read. */
static char *read_name(const struct string_table *table, uint32_t offset)
{
    if (offset >= table->size)
        return NULL;
    uint64_t left = table->size - offset;
    char *name cleanup_free = NULL;
    for (size_t wanted = NAME_FIRST_READ;; wanted *= 4) {
        size_t length = wanted < left ? wanted : (size_t)left;
        if (length > NAME_MAX_BYTES)
            length = NAME_MAX_BYTES;
        char *grown = realloc(name, length);
        if (!grown)
            return NULL;
        name = grown;
        if (!read_exactly(table->fd, name, length, table->offset + offset))
            return NULL;
        if (memchr(name, '\0', length))
            break;
        if (length == left || length == NAME_MAX_BYTES)
            return NULL;
    }
    if (!name[0])
        return NULL;
    return steal_pointer(&name);
}

/* What `address` of the file is: searched for ahead (probe_symbols_prepare), remembered (the threads of a pool
 * share their pcs), or else looked up in the table, which is loaded now if it was not. */
static const struct lookup *lookup_of(struct probe_symbols *symbols, struct elf_file *file, uint64_t address)
{
    for (size_t i = 0; i < file->nprepared; i++)
        if (file->prepared[i].address == address)
            return &file->prepared[i];
    struct lookup *recent = &file->recent[(size_t)(address ^ (address >> 7)) % RECENT_LOOKUPS];
    if (recent->valid && recent->address == address)
        return recent;
    load_symbols(symbols, file);
    bool was_sorted = file->sorted;
    const struct symbol *symbol = symbol_covering_uncached(file, address);
    if (file->sorted != was_sorted) /* what was remembered came from the unsorted scan: ask the sorted table */
        forget_recent(file);
    free(recent->name);
    *recent = (struct lookup){ .address = address, .valid = true };
    if (symbol) {
        recent->symbol = *symbol;
        recent->found = true;
        recent->name = read_name(&file->tables[symbol->table], symbol->name);
    }
    return recent;
}

static char *demangled(struct probe_symbols *symbols, const char *name)
{
    /* glibc's internal aliases: __GI___clone3 is __clone3 to a reader */
    if (strncmp(name, "__GI_", 5) == 0 && name[5])
        name += 5;
    /* a symbol version (pthread_mutex_lock@GLIBC_2.2.5, in debug files' tables) names no other function */
    size_t length = strcspn(name, "@");
    /* LLVM's suffix of a function it made local (name.llvm.123): the C++ demangler does not take it */
    const char *llvm = strstr(name, ".llvm.");
    if (llvm && (size_t)(llvm - name) < length)
        length = (size_t)(llvm - name);
    if (strncmp(name, "_R", 2) == 0) {
        char *rust = probe_rust_demangle_v0(name);
        if (rust)
            return rust;
    }
    if (strncmp(name, "_Z", 2) != 0)
        return strndup(name, length);
    if (!symbols->demangler_looked_up) {
        symbols->demangler_looked_up = true;
#if HANGDOC_STATIC
        symbols->demangle = __cxa_demangle; /* linked in from libstdc++.a: a static binary loads nothing */
#else
        /* libstdc++ has the demangler; loading it only when a C++ name shows up keeps C targets cheap */
        symbols->libstdcxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (symbols->libstdcxx)
            *(void **)&symbols->demangle = dlsym(symbols->libstdcxx, "__cxa_demangle");
#endif
    }
    char *unversioned = strndup(name, length);
    int status = -1;
    char *readable = symbols->demangle && unversioned ? symbols->demangle(unversioned, NULL, NULL, &status) : NULL;
    if (readable && status == 0) {
        free(unversioned);
        probe_rust_tidy_legacy(readable); /* a Rust name in C++'s mangling: its hash and escapes go */
        return readable;
    }
    free(readable);
    return unversioned;
}

/* Where a pc lies: its mapping, the file's offset, and (when the file is ELF and a PT_LOAD holds the offset) the
 * ELF address. */
struct place {
    const struct hd_mapping *mapping;
    uint64_t file_offset;
    struct elf_file *file; /* NULL when memory ran out */
    bool has_vaddr;
    uint64_t vaddr;
};

/* False for a pc that no file backs: anonymous memory, JIT code, [vdso]. */
static bool locate(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mappings, size_t nmappings,
                   uint64_t pc, struct place *place)
{
    const struct hd_mapping *mapping = hd_mappings_find(mappings, nmappings, pc);
    if (!mapping || !mapping->path || mapping->path[0] != '/')
        return false;
    *place = (struct place){ .mapping = mapping, .file_offset = pc - mapping->start + mapping->offset };
    place->file = file_for(symbols, pid, mapping);
    place->has_vaddr = place->file && place->file->elf &&
                       file_offset_to_vaddr(place->file, place->file_offset, &place->vaddr);
    return true;
}

bool probe_symbols_resolve(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mappings,
                           size_t nmappings, struct hd_frame *frame)
{
    struct place place;
    if (!locate(symbols, pid, mappings, nmappings, frame->pc, &place))
        return true;
    if (!place.file || !(frame->module = strdup(place.mapping->path)))
        return false;
    frame->module_offset = place.has_vaddr ? place.vaddr : place.file_offset;
    if (!place.has_vaddr)
        return true;
    const struct lookup *found = lookup_of(symbols, place.file, place.vaddr);
    if (!found->name)
        return true;
    frame->symbol = demangled(symbols, found->name);
    frame->symbol_offset = place.vaddr - found->symbol.start;
    return frame->symbol != NULL;
}

/* ---- searching ahead --------------------------------------------------------------------------------------- */

/* Notes `address` of a file whose table is not loaded, to be searched for in one pass; past LINEAR_LOOKUPS_MAX
 * addresses, the table is worth loading (as many lookups in a loaded table sort it). */
static void want(struct elf_file *file, uint64_t address)
{
    if (file->symbols_loaded || file->preparing_refused)
        return;
    size_t known = file->nprepared + file->npending;
    for (size_t i = 0; i < known; i++)
        if (file->prepared[i].address == address)
            return;
    if (known == LINEAR_LOOKUPS_MAX) {
        file->preparing_refused = true;
        file->npending = 0;
        return;
    }
    file->prepared[known] = (struct lookup){ .address = address };
    file->npending++;
}

static int compare_lookups(const void *a, const void *b)
{
    const struct lookup *x = a, *y = b;
    return x->address < y->address ? -1 : x->address > y->address;
}

static void search_pending(struct probe_symbols *symbols, struct elf_file *file)
{
    if (file->npending == 0)
        return;
    struct lookup *pending = &file->prepared[file->nprepared];
    qsort(pending, file->npending, sizeof *pending, compare_lookups);
    struct symbol_pass pass = { .keep = false, .wanted = pending, .nwanted = file->npending };
    for (size_t i = 0; i < file->npending; i++)
        pass.addresses[i] = pending[i].address;
    pass_over_tables(symbols, file, &pass);
    for (size_t i = 0; i < file->npending; i++) {
        pending[i].valid = true;
        if (pending[i].found)
            pending[i].name = read_name(&file->tables[pending[i].symbol.table], pending[i].symbol.name);
    }
    file->lookups += (unsigned)file->npending;
    file->nprepared += file->npending;
    file->npending = 0;
}

void probe_symbols_prepare(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mappings,
                           size_t nmappings, const uint64_t *pcs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        struct place place;
        if (locate(symbols, pid, mappings, nmappings, pcs[i], &place) && place.has_vaddr)
            want(place.file, place.vaddr);
    }
    for (size_t f = 0; f < symbols->nfiles; f++)
        search_pending(symbols, symbols->files[f]);
}

bool probe_symbols_unwind_table(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mapping,
                                uint64_t address, uint64_t *eh_frame_hdr)
{
    if (!mapping->path || mapping->path[0] != '/')
        return false;
    struct elf_file *file = file_for(symbols, pid, mapping);
    if (!file || !file->elf || !file->has_eh_frame_hdr)
        return false;
    uint64_t vaddr, file_offset = address - mapping->start + mapping->offset;
    if (!file_offset_to_vaddr(file, file_offset, &vaddr))
        return false;
    *eh_frame_hdr = file->eh_frame_hdr_vaddr + (address - vaddr); /* plus the load bias */
    return true;
}

char *probe_symbols_frame_name(const struct hd_frame *frame)
{
    char *name = NULL;
    int length;
    if (frame->symbol) {
        length = asprintf(&name, "%s", frame->symbol);
    } else if (frame->module) {
        const char *slash = strrchr(frame->module, '/');
        length = asprintf(&name, "%s+0x%" PRIx64, slash ? slash + 1 : frame->module, frame->module_offset);
    } else {
        length = asprintf(&name, "0x%" PRIx64, frame->pc);
    }
    return length < 0 ? NULL : name;
}

void probe_symbols_set_leaf(struct hd_thread *thread, const struct hd_frame *frame)
{
    free(thread->leaf_function);
    free(thread->leaf_module);
    thread->leaf_function = frame ? probe_symbols_frame_name(frame) : NULL;
    thread->leaf_module = frame && !frame->symbol && frame->module ? strdup(frame->module) : NULL;
    thread->leaf_module_offset = thread->leaf_module ? frame->module_offset : 0;
}
