/* Mapped ELF objects identified from the target's memory (elf_memory.h). */
#include "elf_memory.h"

#include "memory.h"
#include "util.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Bytes read at each object's start in the first batch: the ELF header (64 bytes) and, for every object a linker
 * made, the program headers right after it (56 bytes each, a dozen or so). Tables beyond are read in a second
 * batch. */
#define HEADERS_READ 1024
/* PT_NOTE segments read per object: real ones have one to three (.note.gnu.property, build-id, ABI tag). */
#define NOTE_SEGMENTS_MAX 8

/* static, so that the hundreds of fields converted per object are converted inline */
static uint64_t host_order(uint64_t value, size_t size, bool msb)
{
    if (size == 2)
        return msb ? be16toh((uint16_t)value) : le16toh((uint16_t)value);
    if (size == 4)
        return msb ? be32toh((uint32_t)value) : le32toh((uint32_t)value);
    return msb ? be64toh(value) : le64toh(value);
}

uint64_t probe_elf_host_order(uint64_t value, size_t size, bool msb)
{
    return host_order(value, size, msb);
}

char *probe_build_id_text(const unsigned char *bytes, size_t length)
{
    static const char digits[] = "0123456789abcdef";
    if (length == 0 || length > PROBE_BUILD_ID_MAX)
        return NULL;
    char *text = malloc(length * 2 + 1);
    if (!text)
        return NULL;
    for (size_t i = 0; i < length; i++) {
        text[i * 2] = digits[bytes[i] >> 4];
        text[i * 2 + 1] = digits[bytes[i] & 0xf];
    }
    text[length * 2] = '\0';
    return text;
}

/* One remote range to read into `buffer`; `got` is how many bytes came. */
struct remote_read {
    uint64_t address;
    size_t size;
    unsigned char *buffer;
    size_t got;
    bool in_headers; /* the bytes lie in what the first batch read: `buffer` points there, nothing to read */
};

/* What is known of one object between the batches. */
struct object_work {
    struct probe_elf_object *object;
    bool is64;
    bool msb;
    unsigned char headers[HEADERS_READ];
    struct remote_read headers_read;
    struct remote_read program_headers_read; /* only when the table lies beyond `headers` */
    const unsigned char *program_headers;
    size_t program_header_count;
    uint64_t bias;
    uint64_t low;  /* the lowest PT_LOAD's page, and the end of the highest, in the object's own addresses */
    uint64_t high;
    struct remote_read notes[NOTE_SEGMENTS_MAX];
    size_t note_alignment[NOTE_SEGMENTS_MAX];
    size_t nnotes;
    struct remote_read dynamic;
    struct remote_read soname;
};

/* A field of a structure read from the target, in host order. */
#define HOST(work, field) ((__typeof__(field))host_order((uint64_t)(field), sizeof(field), (work)->msb))

/* Reads the ranges through memory.h's batch reader, which stops each at its first fault: what came is counted in
 * `got`. 0, or the errno that refused the reads (EPERM: another user's process; ESRCH: it is gone). */
static int read_remote(pid_t pid, struct remote_read *const *reads, size_t count)
{
    struct probe_memory_range *ranges cleanup_free = calloc(count ? count : 1, sizeof *ranges);
    if (!ranges)
        return ENOMEM;
    for (size_t i = 0; i < count; i++)
        ranges[i] = (struct probe_memory_range){ .address = reads[i]->address, .buffer = reads[i]->buffer,
                                                 .size = reads[i]->size };
    int error = probe_read_memory_ranges(pid, ranges, count);
    for (size_t i = 0; i < count; i++)
        reads[i]->got = ranges[i].got;
    return -error;
}

/* How many of `wanted` bytes at `address` lie in readable mappings of the object's own file, contiguous from
 * there: reads never cross into another file, a gap or unmapped memory. */
static size_t readable_span(const struct hd_process *process, const struct hd_mapping *first, uint64_t address,
                            size_t wanted)
{
    const struct hd_mapping *mapping = hd_process_find_mapping(process, address);
    const struct hd_mapping *beyond = process->mappings + process->nmappings;
    uint64_t end = address;
    for (; mapping && mapping < beyond && mapping->start <= end && end - address < wanted; mapping++) {
        if (mapping->permissions[0] != 'r' || mapping->inode != first->inode ||
            mapping->device_major != first->device_major || mapping->device_minor != first->device_minor)
            break;
        end = mapping->end;
    }
    return end - address < wanted ? (size_t)(end - address) : wanted;
}

/* Plans reading `size` bytes at `address` of the object when all of them are readable: from what the first batch
 * read when they lie there (the notes of most objects, the string table of small ones), else into a buffer of
 * their own. Else nothing: `read` stays empty. False only when memory ran out. */
static bool plan_read(const struct hd_process *process, const struct object_work *work, struct remote_read *read,
                      uint64_t address, size_t size)
{
    const struct remote_read *headers = &work->headers_read;
    uint64_t offset = address - headers->address;
    if (size == 0)
        return true;
    if (offset < headers->got && size <= headers->got - offset) {
        *read = (struct remote_read){ .address = address, .size = size, .buffer = headers->buffer + offset,
                                      .got = size, .in_headers = true };
        return true;
    }
    if (readable_span(process, work->object->first, address, size) < size)
        return true;
    unsigned char *buffer = malloc(size);
    if (!buffer)
        return false;
    *read = (struct remote_read){ .address = address, .size = size, .buffer = buffer };
    return true;
}

/* After the first batch: ELF magic or not, a class and byte order we read, and where the program headers are. */
static void read_elf_header(struct object_work *work)
{
    const struct remote_read *read = &work->headers_read;
    if (read->got < SELFMAG)
        return; /* the offset-0 page is unreadable: undecided */
    if (memcmp(work->headers, ELFMAG, SELFMAG) != 0) {
        work->object->verdict = PROBE_ELF_NOT_ELF;
        return;
    }
    unsigned char class = work->headers[EI_CLASS], data = work->headers[EI_DATA];
    if ((class != ELFCLASS32 && class != ELFCLASS64) || (data != ELFDATA2LSB && data != ELFDATA2MSB))
        return;
    work->is64 = class == ELFCLASS64;
    work->msb = data == ELFDATA2MSB;
    uint64_t table, entry_size, entries;
    if (work->is64 && read->got >= sizeof(Elf64_Ehdr)) {
        Elf64_Ehdr header;
        memcpy(&header, work->headers, sizeof header);
        table = HOST(work, header.e_phoff);
        entry_size = HOST(work, header.e_phentsize);
        entries = HOST(work, header.e_phnum);
    } else if (!work->is64 && read->got >= sizeof(Elf32_Ehdr)) {
        Elf32_Ehdr header;
        memcpy(&header, work->headers, sizeof header);
        table = HOST(work, header.e_phoff);
        entry_size = HOST(work, header.e_phentsize);
        entries = HOST(work, header.e_phnum);
    } else {
        return;
    }
    /* PN_XNUM (extended numbering) and odd entry sizes are layouts the loader would not map: the file decides */
    uint64_t mapped = work->object->first->end - work->object->first->start;
    if (entry_size != (work->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || entries == 0 || entries >= PN_XNUM ||
        table > mapped || entries * entry_size > mapped - table)
        return;
    work->program_header_count = (size_t)entries;
    if (table + entries * entry_size <= read->got)
        work->program_headers = work->headers + table;
    else
        work->program_headers_read = (struct remote_read){ .address = work->object->first->start + table,
                                                           .size = (size_t)(entries * entry_size) };
}

static Elf64_Phdr program_header(const struct object_work *work, size_t index)
{
    if (work->is64) {
        Elf64_Phdr raw;
        memcpy(&raw, work->program_headers + index * sizeof raw, sizeof raw);
        return (Elf64_Phdr){ .p_type = HOST(work, raw.p_type), .p_offset = HOST(work, raw.p_offset),
                             .p_vaddr = HOST(work, raw.p_vaddr), .p_filesz = HOST(work, raw.p_filesz),
                             .p_memsz = HOST(work, raw.p_memsz), .p_align = HOST(work, raw.p_align) };
    }
    Elf32_Phdr raw;
    memcpy(&raw, work->program_headers + index * sizeof raw, sizeof raw);
    return (Elf64_Phdr){ .p_type = HOST(work, raw.p_type), .p_offset = HOST(work, raw.p_offset),
                         .p_vaddr = HOST(work, raw.p_vaddr), .p_filesz = HOST(work, raw.p_filesz),
                         .p_memsz = HOST(work, raw.p_memsz), .p_align = HOST(work, raw.p_align) };
}

/* The load bias, as ld.so computes it (l_addr = where the first segment was mapped minus its page-truncated
 * p_vaddr): from the lowest PT_LOAD, which must be the one mapped from file offset 0. Non-PIE executables get 0. */
static bool find_load_bias(struct object_work *work)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    bool found = false;
    Elf64_Phdr lowest = { 0 };
    work->high = 0;
    for (size_t i = 0; i < work->program_header_count; i++) {
        Elf64_Phdr segment = program_header(work, i);
        if (segment.p_type != PT_LOAD)
            continue;
        if (segment.p_vaddr > UINT64_MAX - segment.p_memsz)
            return false;
        if (!found || segment.p_vaddr < lowest.p_vaddr)
            lowest = segment;
        found = true;
        if (segment.p_vaddr + segment.p_memsz > work->high)
            work->high = segment.p_vaddr + segment.p_memsz;
    }
    if (!found || lowest.p_offset >= page)
        return false;
    work->low = lowest.p_vaddr & ~(page - 1);
    work->bias = work->object->first->start - work->low;
    return true;
}

/* After the headers: the object is ELF; plan the reads of its notes and .dynamic. Segments larger than
 * PROBE_SECTION_READ_MAX are skipped, as the file reader skips such sections; ones not readable in memory give
 * nothing. False only when memory ran out. */
static bool plan_segments(const struct hd_process *process, struct object_work *work)
{
    if (!work->program_headers || !find_load_bias(work))
        return true; /* undecided */
    work->object->verdict = PROBE_ELF_ELF;
    for (size_t i = 0; i < work->program_header_count; i++) {
        Elf64_Phdr segment = program_header(work, i);
        if (segment.p_filesz > PROBE_SECTION_READ_MAX)
            continue;
        uint64_t address = work->bias + segment.p_vaddr;
        if (segment.p_type == PT_NOTE && work->nnotes < NOTE_SEGMENTS_MAX) {
            if (!plan_read(process, work, &work->notes[work->nnotes], address, (size_t)segment.p_filesz))
                return false;
            /* notes in a segment aligned to 8 (.note.gnu.property) are padded to 8, as libelf reads them */
            if (work->notes[work->nnotes].size != 0)
                work->note_alignment[work->nnotes++] = segment.p_align == 8 ? 8 : 4;
        } else if (segment.p_type == PT_DYNAMIC && work->dynamic.size == 0) {
            if (!plan_read(process, work, &work->dynamic, address, (size_t)segment.p_filesz))
                return false;
        }
    }
    return true;
}

static size_t aligned(size_t value, size_t alignment)
{
    return (value + alignment - 1) & ~(alignment - 1);
}

/* The first NT_GNU_BUILD_ID note named "GNU" among the notes read, bounded as libelf's gelf_getnote bounds them. */
static bool find_build_id(const struct object_work *work, const struct remote_read *notes, size_t alignment,
                          char **build_id)
{
    size_t offset = 0, size = notes->got;
    while (offset <= size && size - offset >= 3 * sizeof(uint32_t)) {
        uint32_t words[3];
        memcpy(words, notes->buffer + offset, sizeof words);
        size_t name_size = HOST(work, words[0]), descriptor_size = HOST(work, words[1]);
        uint32_t type = HOST(work, words[2]);
        size_t name_offset = offset + sizeof words;
        if (name_size > size - name_offset)
            return false;
        size_t descriptor_offset = aligned(name_offset + name_size, alignment);
        size_t padded_size = aligned(descriptor_size, alignment);
        if (descriptor_offset > size || size - descriptor_offset < padded_size)
            return false;
        if (type == NT_GNU_BUILD_ID && name_size == 4 && memcmp(notes->buffer + name_offset, "GNU", 4) == 0) {
            *build_id = probe_build_id_text(notes->buffer + descriptor_offset, descriptor_size);
            return true;
        }
        offset = descriptor_offset + padded_size;
    }
    return false;
}

static Elf64_Dyn dynamic_entry(const struct object_work *work, size_t index)
{
    if (work->is64) {
        Elf64_Dyn raw;
        memcpy(&raw, work->dynamic.buffer + index * sizeof raw, sizeof raw);
        return (Elf64_Dyn){ .d_tag = HOST(work, raw.d_tag), .d_un.d_val = HOST(work, raw.d_un.d_val) };
    }
    Elf32_Dyn raw;
    memcpy(&raw, work->dynamic.buffer + index * sizeof raw, sizeof raw);
    return (Elf64_Dyn){ .d_tag = HOST(work, raw.d_tag), .d_un.d_val = HOST(work, raw.d_un.d_val) };
}

/* Where DT_STRTAB points in the process. glibc's ld.so adds l_addr to it in place (elf_get_dynamic_info), but not
 * where .dynamic is read-only (MIPS, RISC-V) nor in objects it did not load: a value inside the loaded image is
 * taken as it is, one inside the object's own address range is relocated, anything else is not believed. */
static bool string_table_address(const struct object_work *work, uint64_t string_table, uint64_t *address)
{
    uint64_t span = work->high - work->low, loaded = work->object->first->start;
    if (string_table - loaded < span)
        *address = string_table;
    else if (string_table - work->low < span)
        *address = work->bias + string_table;
    else
        return false;
    return true;
}

/* After .dynamic: plan the read of the soname, at most PROBE_SONAME_MAX bytes and never past the string table
 * (DT_STRSZ) or the readable mappings of the object's file. False only when memory ran out. */
static bool plan_soname(const struct hd_process *process, struct object_work *work)
{
    size_t entry_size = work->is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
    uint64_t soname = 0, string_table = 0, string_table_size = UINT64_MAX;
    bool have_soname = false, have_string_table = false;
    for (size_t i = 0; i < work->dynamic.got / entry_size; i++) {
        Elf64_Dyn entry = dynamic_entry(work, i);
        if (entry.d_tag == DT_NULL)
            break;
        if (entry.d_tag == DT_SONAME && !have_soname) {
            soname = entry.d_un.d_val;
            have_soname = true;
        } else if (entry.d_tag == DT_STRTAB && !have_string_table) {
            string_table = entry.d_un.d_ptr;
            have_string_table = true;
        } else if (entry.d_tag == DT_STRSZ && string_table_size == UINT64_MAX) {
            string_table_size = entry.d_un.d_val;
        }
    }
    uint64_t address;
    if (!have_soname || !have_string_table || soname >= string_table_size ||
        !string_table_address(work, string_table, &address) || address > UINT64_MAX - soname)
        return true;
    uint64_t size = string_table_size - soname < PROBE_SONAME_MAX ? string_table_size - soname : PROBE_SONAME_MAX;
    size = readable_span(process, work->object->first, address + soname, (size_t)size);
    return plan_read(process, work, &work->soname, address + soname, (size_t)size);
}

static void take_soname(struct object_work *work)
{
    const struct remote_read *read = &work->soname;
    if (read->got > 0 && memchr(read->buffer, '\0', read->got))
        work->object->soname = strdup((const char *)read->buffer);
}

/* A batch the process refused (it exited, or we may not read it) decides nothing: the file is read instead. */
static void undecide(struct object_work *work)
{
    work->object->verdict = PROBE_ELF_UNDECIDED;
    free(work->object->soname);
    free(work->object->build_id);
    work->object->soname = NULL;
    work->object->build_id = NULL;
}

/* Batch 1: the first HEADERS_READ bytes of every object (less where its offset-0 mapping is shorter). */
static void read_headers(pid_t pid, struct object_work *works, size_t count, struct remote_read **reads)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        const struct hd_mapping *first = works[i].object->first;
        if (!first || first->offset != 0 || first->permissions[0] != 'r' || first->end <= first->start)
            continue;
        size_t size = first->end - first->start < HEADERS_READ ? (size_t)(first->end - first->start) : HEADERS_READ;
        works[i].headers_read = (struct remote_read){ .address = first->start, .size = size, .buffer = works[i].headers };
        reads[n++] = &works[i].headers_read;
    }
    if (read_remote(pid, reads, n) == 0)
        for (size_t i = 0; i < count; i++)
            read_elf_header(&works[i]);
}

/* Batch 1b, for the rare object whose program headers lie beyond HEADERS_READ. */
static bool read_distant_program_headers(pid_t pid, struct object_work *works, size_t count,
                                         struct remote_read **reads)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        struct remote_read *read = &works[i].program_headers_read;
        if (read->size == 0)
            continue;
        if (!(read->buffer = malloc(read->size)))
            return false;
        reads[n++] = read;
    }
    if (n == 0 || read_remote(pid, reads, n) != 0)
        return true;
    for (size_t i = 0; i < count; i++)
        if (works[i].program_headers_read.size != 0 &&
            works[i].program_headers_read.got == works[i].program_headers_read.size)
            works[i].program_headers = works[i].program_headers_read.buffer;
    return true;
}

/* Batch 2: the notes and .dynamic of every ELF object; then its build-id, and where its soname lies. */
static bool read_segments(const struct hd_process *process, struct object_work *works, size_t count,
                          struct remote_read **reads)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        struct object_work *work = &works[i];
        if (work->object->verdict != PROBE_ELF_UNDECIDED)
            continue;
        if (!plan_segments(process, work))
            return false;
        for (size_t note = 0; note < work->nnotes; note++)
            if (!work->notes[note].in_headers)
                reads[n++] = &work->notes[note];
        if (work->dynamic.size != 0 && !work->dynamic.in_headers)
            reads[n++] = &work->dynamic;
    }
    bool refused = read_remote(process->pid, reads, n) != 0;
    for (size_t i = 0; i < count; i++) {
        struct object_work *work = &works[i];
        if (work->object->verdict != PROBE_ELF_ELF)
            continue;
        if (refused) {
            undecide(work);
            continue;
        }
        for (size_t note = 0; note < work->nnotes && !work->object->build_id; note++)
            if (find_build_id(work, &work->notes[note], work->note_alignment[note], &work->object->build_id))
                break;
        if (!plan_soname(process, work))
            return false;
    }
    return true;
}

/* Batch 3: the sonames. */
static void read_sonames(pid_t pid, struct object_work *works, size_t count, struct remote_read **reads)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (works[i].soname.size != 0 && !works[i].soname.in_headers)
            reads[n++] = &works[i].soname;
    bool refused = read_remote(pid, reads, n) != 0;
    for (size_t i = 0; i < count; i++) {
        if (works[i].soname.size == 0)
            continue;
        if (refused)
            undecide(&works[i]);
        else
            take_soname(&works[i]);
    }
}

static void release_read(struct remote_read *read)
{
    if (!read->in_headers)
        free(read->buffer);
}

static void release_work(struct object_work *work)
{
    release_read(&work->program_headers_read);
    for (size_t note = 0; note < work->nnotes; note++)
        release_read(&work->notes[note]);
    release_read(&work->dynamic);
    release_read(&work->soname);
}

bool probe_read_elf_objects(const struct hd_process *process, struct probe_elf_object *objects, size_t count)
{
    for (size_t i = 0; i < count; i++)
        objects[i] = (struct probe_elf_object){ .first = objects[i].first };
    if (count == 0)
        return true;
    struct object_work *works = calloc(count, sizeof *works);
    struct remote_read **reads = calloc(count * (NOTE_SEGMENTS_MAX + 1), sizeof *reads);
    bool ok = works && reads;
    for (size_t i = 0; ok && i < count; i++)
        works[i].object = &objects[i];
    if (ok) {
        read_headers(process->pid, works, count, reads);
        ok = read_distant_program_headers(process->pid, works, count, reads) &&
             read_segments(process, works, count, reads);
    }
    if (ok)
        read_sonames(process->pid, works, count, reads);
    for (size_t i = 0; works && i < count; i++) {
        release_work(&works[i]);
        if (!ok)
            undecide(&works[i]);
    }
    free(works);
    free(reads);
    return ok;
}
