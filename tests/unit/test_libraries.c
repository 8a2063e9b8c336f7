/* The library identity pass (probe/libraries.h, probe/elf_memory.h) over crafted files: what a hostile ELF costs
 * it, which file it agrees to read for a mapping, and that reading an object from memory says what its file says. */
#include "elf_memory.h"
#include "libraries.h"
#include "maps.h"

#include <criterion/criterion.h>
#include <elf.h>
#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GIB (1024ull * 1024 * 1024)
#define HUGE_OFFSET 4096ull

static long peak_rss_kib(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static const char small_strings[] = "\0libsparse.so";

/* An unlinked, sparse ELF64 of 1 GiB and a few bytes of data: section 1 is `huge_type` spanning the hole; section 2,
 * a real 2-entry .dynamic whose DT_SONAME points into section 3, a string table: the same hole when `huge_strings`,
 * else a small real one that names libsparse.so. */
static int sparse_elf(Elf64_Word huge_type, bool huge_strings)
{
    char path[] = "/tmp/hangdoc-sparse-elf-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path);
    Elf64_Ehdr header = {
        .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
        .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
        .e_ehsize = sizeof(Elf64_Ehdr), .e_shoff = sizeof(Elf64_Ehdr), .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 4,
    };
    Elf64_Dyn dynamic[2] = { { .d_tag = DT_SONAME, .d_un.d_val = 1 }, { .d_tag = DT_NULL } };
    Elf64_Off dynamic_offset = sizeof header + 4 * sizeof(Elf64_Shdr);
    Elf64_Shdr sections[4] = {
        { 0 },
        { .sh_type = huge_type, .sh_offset = HUGE_OFFSET, .sh_size = GIB, .sh_addralign = 1 },
        { .sh_type = SHT_DYNAMIC, .sh_offset = dynamic_offset, .sh_size = sizeof dynamic,
          .sh_entsize = sizeof(Elf64_Dyn), .sh_link = 3, .sh_addralign = 8 },
        { .sh_type = SHT_STRTAB, .sh_offset = HUGE_OFFSET, .sh_size = GIB, .sh_addralign = 1 },
    };
    if (!huge_strings) {
        sections[3].sh_offset = dynamic_offset + sizeof dynamic;
        sections[3].sh_size = sizeof small_strings;
        cr_assert_eq(pwrite(fd, small_strings, sizeof small_strings, (off_t)sections[3].sh_offset),
                     (ssize_t)sizeof small_strings);
    }
    cr_assert_eq(pwrite(fd, &header, sizeof header, 0), (ssize_t)sizeof header);
    cr_assert_eq(pwrite(fd, sections, sizeof sections, sizeof header), (ssize_t)sizeof sections);
    cr_assert_eq(pwrite(fd, dynamic, sizeof dynamic, (off_t)dynamic_offset), (ssize_t)sizeof dynamic);
    cr_assert_eq(ftruncate(fd, (off_t)(HUGE_OFFSET + GIB)), 0);
    return fd;
}

/* Before the cap, libelf malloc'ed and pread the whole GiB of each such section: seconds and a GiB of memory. */
static void assert_cheap_identity(Elf64_Word huge_type, bool huge_strings)
{
    int fd = sparse_elf(huge_type, huge_strings);
    long rss_before = peak_rss_kib();
    double started = seconds_now();
    char *soname, *build_id;
    cr_assert(probe_read_elf_identity(fd, &soname, &build_id), "still an ELF file");
    double took = seconds_now() - started;
    long grew_kib = peak_rss_kib() - rss_before;
    if (huge_strings)
        cr_assert_null(soname, "the soname lies in a string table too large to read");
    else
        cr_assert_str_eq(soname, "libsparse.so", "the small sections are still read");
    free(soname);
    cr_assert_null(build_id);
    cr_assert_lt(grew_kib, 64 * 1024, "reading the identity grew the peak RSS by %ld KiB", grew_kib);
    cr_assert_lt(took, 2.0, "reading the identity took %.1f s", took);
    close(fd);
}

Test(libraries, a_huge_note_section_is_skipped_not_read, .timeout = 60)
{
    assert_cheap_identity(SHT_NOTE, false);
}

Test(libraries, a_huge_dynamic_string_table_is_skipped_not_read, .timeout = 60)
{
    assert_cheap_identity(SHT_PROGBITS, true);
}

/* A file of this process, named through a mapping that cannot be found in map_files, so that only the path through
 * /proc/<pid>/root can open it: with the file's own device it opens, with another device and the same inode it is
 * another filesystem's file (a container's next to the host's) and must not. */
Test(libraries, a_mapped_file_opens_only_with_its_own_device_and_inode)
{
    char path[] = "/tmp/hangdoc-mapped-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    struct stat status;
    cr_assert_eq(fstat(fd, &status), 0);
    struct statfs filesystem;
    cr_assert_eq(fstatfs(fd, &filesystem), 0);
    close(fd);
    if (filesystem.f_type == OVERLAYFS_SUPER_MAGIC || filesystem.f_type == BTRFS_SUPER_MAGIC) {
        unlink(path);
        cr_skip_test("/tmp is on overlayfs or btrfs, whose st_dev may not be the mapping's: there the inode decides");
    }
    struct hd_mapping mapping = { .start = 0x1000, .end = 0x2000, .inode = status.st_ino, .path = path,
                                  .device_major = major(status.st_dev), .device_minor = minor(status.st_dev) };
    int opened = probe_open_mapped_file(getpid(), &mapping);
    cr_assert_geq(opened, 0, "the file with its own device and inode opens");
    close(opened);
    mapping.device_minor += 1;
    opened = probe_open_mapped_file(getpid(), &mapping);
    if (opened >= 0)
        close(opened);
    unlink(path);
    cr_assert_lt(opened, 0, "a file on another device is not the mapping's, whatever its inode number");
}

/* Extended section numbering: e_shnum 0 and the count in section 0's sh_size. libelf sizes its tables by that count
 * at elf_begin and reads every header at the first gelf_getshdr: 16 million of them in a sparse GiB took 13 s and
 * 4 GiB. Such a file is ELF, and nothing of it is read. */
Test(libraries, a_file_declaring_millions_of_sections_is_not_read, .timeout = 60)
{
    char path[] = "/tmp/hangdoc-sections-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path);
    Elf64_Ehdr header = {
        .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
        .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
        .e_ehsize = sizeof(Elf64_Ehdr), .e_shoff = sizeof(Elf64_Ehdr), .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 0,
    };
    Elf64_Shdr first = { .sh_size = (GIB - 2 * sizeof(Elf64_Shdr)) / sizeof(Elf64_Shdr) };
    cr_assert_eq(pwrite(fd, &header, sizeof header, 0), (ssize_t)sizeof header);
    cr_assert_eq(pwrite(fd, &first, sizeof first, sizeof header), (ssize_t)sizeof first);
    cr_assert_eq(ftruncate(fd, (off_t)GIB), 0);
    long rss_before = peak_rss_kib();
    double started = seconds_now();
    char *soname, *build_id;
    cr_assert(probe_read_elf_identity(fd, &soname, &build_id), "still an ELF file");
    double took = seconds_now() - started;
    long grew_kib = peak_rss_kib() - rss_before;
    cr_assert_null(soname);
    cr_assert_null(build_id);
    cr_assert_lt(grew_kib, 64 * 1024, "reading the identity grew the peak RSS by %ld KiB", grew_kib);
    cr_assert_lt(took, 2.0, "reading the identity took %.1f s", took);
    close(fd);
}

/* The mappings of process `pid`, as the probe reads them. */
static struct hd_process process_of(pid_t pid)
{
    struct hd_process process = { .pid = pid };
    bool truncated;
    cr_assert_eq(probe_read_maps(pid, 65536, &process.mappings, &process.nmappings, &truncated), 0);
    return process;
}

static void process_release(struct hd_process *process)
{
    for (size_t i = 0; i < process->nmappings; i++)
        free(process->mappings[i].path);
    free(process->mappings);
    for (size_t i = 0; i < process->nlibraries; i++) {
        free(process->libraries[i].path);
        free(process->libraries[i].soname);
        free(process->libraries[i].build_id);
    }
    free(process->libraries);
}

static bool same_text(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* Every file this process maps, once, with its mapping of file offset 0. */
static size_t mapped_files(const struct hd_process *process, struct probe_elf_object *objects, size_t max)
{
    size_t count = 0;
    for (size_t m = 0; m < process->nmappings; m++) {
        const struct hd_mapping *mapping = &process->mappings[m];
        if (!mapping->path || mapping->path[0] != '/' || mapping->inode == 0 || mapping->offset != 0)
            continue;
        bool seen = false;
        for (size_t i = 0; i < count && !seen; i++)
            seen = objects[i].first->inode == mapping->inode && same_text(objects[i].first->path, mapping->path);
        if (!seen && count < max)
            objects[count++] = (struct probe_elf_object){ .first = mapping };
    }
    return count;
}

/* The fast path reads what the loader mapped; the file path reads the sections. For every object this test
 * process maps (its executable, ld.so, libc, criterion and its dependencies, libelf) they must say the same. */
Test(libraries, memory_and_file_agree_on_every_mapped_object)
{
    struct hd_process process = process_of(getpid());
    struct probe_elf_object objects[512];
    size_t count = mapped_files(&process, objects, 512);
    cr_assert_gt(count, 3);
    cr_assert(probe_read_elf_objects(&process, objects, count));
    size_t sonames_agreed = 0, build_ids_agreed = 0;
    for (size_t i = 0; i < count; i++) {
        const char *path = objects[i].first->path;
        cr_assert_neq(objects[i].verdict, PROBE_ELF_UNDECIDED, "%s: our own memory is readable", path);
        int fd = probe_open_mapped_file(getpid(), objects[i].first);
        cr_assert_geq(fd, 0, "%s opens", path);
        char *soname, *build_id;
        bool is_elf = probe_read_elf_identity(fd, &soname, &build_id);
        close(fd);
        cr_assert_eq(is_elf, objects[i].verdict == PROBE_ELF_ELF, "%s: ELF or not, both say the same", path);
        if (soname && objects[i].soname) {
            cr_assert_str_eq(objects[i].soname, soname, "%s: the soname", path);
            sonames_agreed++;
        }
        if (build_id && objects[i].build_id) {
            cr_assert_str_eq(objects[i].build_id, build_id, "%s: the build-id", path);
            build_ids_agreed++;
        }
        /* one may answer where the other cannot: libcrypto's .dynstr is larger than the file reader reads */
        if (!soname != !objects[i].soname || !build_id != !objects[i].build_id)
            cr_log_info("%s: file soname %s build-id %s, memory soname %s build-id %s", path, soname ? soname : "-",
                        build_id ? build_id : "-", objects[i].soname ? objects[i].soname : "-",
                        objects[i].build_id ? objects[i].build_id : "-");
        free(soname);
        free(build_id);
        free(objects[i].soname);
        free(objects[i].build_id);
    }
    cr_assert_geq(sonames_agreed, 2, "libc and ld.so at least have a soname");
    cr_assert_geq(build_ids_agreed, 2, "and a build-id");
    process_release(&process);
}

/* A child that maps `path` (`protection`, from file offset 0) and waits on a pipe until its parent is done. */
static pid_t child_mapping(const char *path, int protection, int *release)
{
    int ready[2], done[2];
    cr_assert_eq(pipe(ready), 0);
    cr_assert_eq(pipe(done), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        int fd = open(path, O_RDONLY);
        void *mapped = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, protection, MAP_PRIVATE, fd, 0);
        char byte = mapped == MAP_FAILED ? 'n' : 'y';
        close(done[1]);
        if (write(ready[1], &byte, 1) != 1 || read(done[0], &byte, 1) < 0)
            _exit(1);
        _exit(0);
    }
    close(ready[1]);
    close(done[0]);
    char byte = 0;
    cr_assert_eq(read(ready[0], &byte, 1), 1);
    cr_assert_eq(byte, 'y', "the child mapped %s", path);
    close(ready[0]);
    *release = done[1];
    return child;
}

static void child_release(pid_t child, int release)
{
    close(release);
    waitpid(child, NULL, 0);
}

/* The libraries probe_read_libraries lists for process `pid`, in a snapshot of that process alone. */
static struct hd_process libraries_of(pid_t pid)
{
    struct hd_process process = process_of(pid);
    struct hd_snapshot snapshot = { .processes = &process, .nprocesses = 1 };
    cr_assert(probe_read_libraries(&snapshot));
    return process;
}

static const struct hd_library *library_named(const struct hd_process *process, const char *path)
{
    for (size_t i = 0; i < process->nlibraries; i++)
        if (same_text(process->libraries[i].path, path))
            return &process->libraries[i];
    return NULL;
}

static void temporary_copy(const char *from, char *path, const void *prefix, size_t prefix_size)
{
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    if (prefix)
        cr_assert_eq(write(fd, prefix, prefix_size), (ssize_t)prefix_size);
    int source = from ? open(from, O_RDONLY) : -1;
    char buffer[65536];
    ssize_t got;
    while (source >= 0 && (got = read(source, buffer, sizeof buffer)) > 0)
        cr_assert_eq(write(fd, buffer, (size_t)got), got);
    if (source >= 0)
        close(source);
    close(fd);
}

/* Memory that shows no ELF magic at file offset 0 is no object: a mapped data file is not a library. */
Test(libraries, a_mapped_data_file_is_not_listed)
{
    char path[] = "/tmp/hangdoc-data-XXXXXX";
    static const char data[8192] = "not an ELF object";
    temporary_copy(NULL, path, data, sizeof data);
    int release;
    pid_t child = child_mapping(path, PROT_READ, &release);
    struct hd_process process = libraries_of(child);
    child_release(child, release);
    unlink(path);
    cr_assert_null(library_named(&process, path), "the data file is not listed");
    cr_assert_gt(process.nlibraries, 2, "the child's libraries are");
    process_release(&process);
}

/* An ELF file whose offset-0 page the process maps PROT_NONE cannot be read from memory: it is read from the
 * file, and says the same as the original. */
Test(libraries, an_object_unreadable_in_memory_is_read_from_its_file)
{
    char path[] = "/tmp/hangdoc-copy-XXXXXX";
    temporary_copy("/proc/self/exe", path, NULL, 0);
    int release;
    pid_t child = child_mapping(path, PROT_NONE, &release);
    struct hd_process process = libraries_of(child);
    child_release(child, release);
    unlink(path);
    const struct hd_library *copy = library_named(&process, path);
    cr_assert_not_null(copy, "the copy is listed: it is ELF");
    int fd = open("/proc/self/exe", O_RDONLY);
    char *soname, *build_id;
    cr_assert(probe_read_elf_identity(fd, &soname, &build_id));
    close(fd);
    cr_assert_not_null(build_id, "the test binary has a build-id");
    cr_assert_not_null(copy->build_id);
    cr_assert_str_eq(copy->build_id, build_id);
    free(soname);
    free(build_id);
    process_release(&process);
}

/* A one-page ELF image: a PT_LOAD of the whole page, a build-id note, a .dynamic whose DT_STRTAB is left
 * unrelocated (as in objects ld.so did not load), a string table, and a PT_NOTE that claims a GiB. */
struct crafted_image {
    Elf64_Ehdr header;
    Elf64_Phdr segments[4];
    unsigned char notes[40]; /* 36 used: the rest keeps .dynamic aligned */
    Elf64_Dyn dynamic[4];
    char strings[4096 - sizeof(Elf64_Ehdr) - 4 * sizeof(Elf64_Phdr) - 40 - 4 * sizeof(Elf64_Dyn)];
};
_Static_assert(sizeof(struct crafted_image) == 4096, "one page: the string table ends where the mapping does");

static struct crafted_image crafted(void)
{
    struct crafted_image image = {
        .header = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
                    .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
                    .e_ehsize = sizeof(Elf64_Ehdr), .e_phoff = offsetof(struct crafted_image, segments),
                    .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 4 },
        .segments = {
            { .p_type = PT_LOAD, .p_vaddr = 0, .p_filesz = 4096, .p_memsz = 4096, .p_align = 4096 },
            { .p_type = PT_NOTE, .p_vaddr = offsetof(struct crafted_image, notes), .p_filesz = 36, .p_align = 4 },
            { .p_type = PT_NOTE, .p_vaddr = 0, .p_filesz = GIB, .p_align = 4 },
            { .p_type = PT_DYNAMIC, .p_vaddr = offsetof(struct crafted_image, dynamic),
              .p_filesz = 4 * sizeof(Elf64_Dyn), .p_align = 8 },
        },
        .notes = { 4, 0, 0, 0, 20, 0, 0, 0, NT_GNU_BUILD_ID, 0, 0, 0, 'G', 'N', 'U', 0,
                   0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 },
        .dynamic = { { .d_tag = DT_SONAME, .d_un.d_val = 1 },
                     { .d_tag = DT_STRTAB, .d_un.d_ptr = offsetof(struct crafted_image, strings) },
                     { .d_tag = DT_STRSZ, .d_un.d_val = sizeof image.strings },
                     { .d_tag = DT_NULL } },
        .strings = "\0libcrafted.so",
    };
    return image;
}

/* The image, written to a file and mapped here from offset 0; read from this process's memory. */
static struct probe_elf_object identify_image(const void *image, size_t size)
{
    char path[] = "/tmp/hangdoc-crafted-XXXXXX";
    temporary_copy(NULL, path, image, size);
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    void *mapped = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    cr_assert_neq(mapped, MAP_FAILED);
    close(fd);
    unlink(path);
    struct hd_process process = process_of(getpid());
    const struct hd_mapping *mapping = hd_process_find_mapping(&process, (uint64_t)(uintptr_t)mapped);
    cr_assert_not_null(mapping);
    struct probe_elf_object object = { .first = mapping };
    cr_assert(probe_read_elf_objects(&process, &object, 1));
    object.first = NULL;
    munmap(mapped, size);
    process_release(&process);
    return object;
}

static struct probe_elf_object identify_crafted(const struct crafted_image *image)
{
    return identify_image(image, sizeof *image);
}

Test(libraries, memory_reads_a_crafted_image_within_its_bounds)
{
    struct crafted_image image = crafted();
    struct probe_elf_object object = identify_crafted(&image);
    cr_assert_eq(object.verdict, PROBE_ELF_ELF);
    cr_assert_str_eq(object.soname, "libcrafted.so", "an unrelocated DT_STRTAB is relocated by the load bias");
    cr_assert_str_eq(object.build_id, "0123456789abcdef000102030405060708090a0b");
    free(object.soname);
    free(object.build_id);
}

Test(libraries, a_soname_without_its_nul_before_the_mapping_ends_is_not_taken)
{
    struct crafted_image image = crafted();
    size_t last = sizeof image.strings - 8;
    memcpy(image.strings + last, "noending", 8);
    image.dynamic[0].d_un.d_val = last;
    image.dynamic[2].d_tag = DT_DEBUG; /* no DT_STRSZ: only the mapping's end bounds the read */
    struct probe_elf_object object = identify_crafted(&image);
    cr_assert_eq(object.verdict, PROBE_ELF_ELF);
    cr_assert_null(object.soname);
    cr_assert_not_null(object.build_id);
    free(object.build_id);
}

Test(libraries, a_string_table_outside_the_object_gives_no_soname)
{
    struct crafted_image image = crafted();
    image.dynamic[1].d_un.d_ptr = 0x7fff00000000;
    struct probe_elf_object object = identify_crafted(&image);
    cr_assert_eq(object.verdict, PROBE_ELF_ELF);
    cr_assert_null(object.soname);
    free(object.build_id);
}

Test(libraries, program_headers_beyond_the_mapping_leave_the_object_to_its_file)
{
    struct crafted_image image = crafted();
    image.header.e_phoff = 4096 - 2 * sizeof(Elf64_Phdr);
    struct probe_elf_object object = identify_crafted(&image);
    cr_assert_eq(object.verdict, PROBE_ELF_UNDECIDED);
    cr_assert_null(object.soname);
    cr_assert_null(object.build_id);
    image.header.e_phnum = PN_XNUM;
    image.header.e_phoff = offsetof(struct crafted_image, segments);
    object = identify_crafted(&image);
    cr_assert_eq(object.verdict, PROBE_ELF_UNDECIDED, "extended program header numbering is the file's to read");
}

Test(libraries, a_soname_that_ends_with_the_mapping_is_read_whole)
{
    struct crafted_image image = crafted();
    size_t last = sizeof image.strings - 4;
    memcpy(image.strings + last, "end", 4);
    image.dynamic[0].d_un.d_val = last;
    image.dynamic[2].d_tag = DT_DEBUG;
    struct probe_elf_object object = identify_crafted(&image);
    cr_assert_str_eq(object.soname, "end", "the read stops at the mapping's end instead of faulting past it");
    free(object.soname);
    free(object.build_id);
}

/* process_vm_readv refused (ESRCH here; EPERM for another user's process) decides nothing: every object is left
 * to its file. */
Test(libraries, objects_of_a_process_memory_cannot_be_read_from_are_undecided)
{
    struct hd_process process = process_of(getpid());
    struct probe_elf_object objects[512];
    size_t count = mapped_files(&process, objects, 512);
    pid_t gone = fork();
    cr_assert_geq(gone, 0);
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    process.pid = gone;
    cr_assert(probe_read_elf_objects(&process, objects, count));
    for (size_t i = 0; i < count; i++) {
        cr_assert_eq(objects[i].verdict, PROBE_ELF_UNDECIDED, "%s", objects[i].first->path);
        cr_assert_null(objects[i].soname);
        cr_assert_null(objects[i].build_id);
    }
    process_release(&process);
}

/* The same image as a 32-bit big-endian object (a MIPS library, say): every field is converted from its byte
 * order and class. */
struct crafted_image32 {
    Elf32_Ehdr header;
    Elf32_Phdr segments[3];
    unsigned char notes[36];
    Elf32_Dyn dynamic[4];
    char strings[4096 - sizeof(Elf32_Ehdr) - 3 * sizeof(Elf32_Phdr) - 36 - 4 * sizeof(Elf32_Dyn)];
};
_Static_assert(sizeof(struct crafted_image32) == 4096, "one page");

Test(libraries, memory_reads_a_32_bit_big_endian_image)
{
    static struct crafted_image32 image;
    memset(&image, 0, sizeof image);
    memcpy(image.header.e_ident, (const unsigned char[]){ ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS32,
                                                          ELFDATA2MSB, EV_CURRENT }, 7);
    image.header.e_type = htobe16(ET_DYN);
    image.header.e_machine = htobe16(EM_MIPS);
    image.header.e_phoff = htobe32(offsetof(struct crafted_image32, segments));
    image.header.e_phentsize = htobe16(sizeof(Elf32_Phdr));
    image.header.e_phnum = htobe16(3);
    image.segments[0] = (Elf32_Phdr){ .p_type = htobe32(PT_LOAD), .p_filesz = htobe32(4096),
                                      .p_memsz = htobe32(4096), .p_align = htobe32(4096) };
    image.segments[1] = (Elf32_Phdr){ .p_type = htobe32(PT_NOTE), .p_align = htobe32(4), .p_filesz = htobe32(36),
                                      .p_vaddr = htobe32(offsetof(struct crafted_image32, notes)) };
    image.segments[2] = (Elf32_Phdr){ .p_type = htobe32(PT_DYNAMIC), .p_align = htobe32(4),
                                      .p_filesz = htobe32(sizeof image.dynamic),
                                      .p_vaddr = htobe32(offsetof(struct crafted_image32, dynamic)) };
    uint32_t note_header[3] = { htobe32(4), htobe32(4), htobe32(NT_GNU_BUILD_ID) };
    memcpy(image.notes, note_header, sizeof note_header);
    memcpy(image.notes + 12, "GNU\0\xde\xad\xbe\xef", 8);
    image.dynamic[0] = (Elf32_Dyn){ .d_tag = (Elf32_Sword)htobe32(DT_SONAME), .d_un.d_val = htobe32(1) };
    image.dynamic[1] = (Elf32_Dyn){ .d_tag = (Elf32_Sword)htobe32(DT_STRTAB),
                                    .d_un.d_ptr = htobe32(offsetof(struct crafted_image32, strings)) };
    image.dynamic[2] = (Elf32_Dyn){ .d_tag = (Elf32_Sword)htobe32(DT_STRSZ), .d_un.d_val = htobe32(16) };
    memcpy(image.strings, "\0libmips.so", 12);
    struct probe_elf_object object = identify_image(&image, sizeof image);
    cr_assert_eq(object.verdict, PROBE_ELF_ELF);
    cr_assert_str_eq(object.soname, "libmips.so");
    cr_assert_str_eq(object.build_id, "deadbeef");
    free(object.soname);
    free(object.build_id);
}
