/* The library identity pass (probe/libraries.h) over crafted files: what a hostile ELF costs it, and which file it
 * agrees to read for a mapping. */
#include "../../probe/libraries.h"

#include <criterion/criterion.h>
#include <elf.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
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
