/* symbols.h: naming pcs from ELF symbol tables with sizes, and surviving malformed ELF files. */
#include "../../probe/maps.h"
#include "../../probe/symbols.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <sys/inotify.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* A function of this test binary with a known name (global, so the optimiser keeps its symbol). */
__attribute__((noinline, used)) int symbols_test_known_function(int value);
__attribute__((noinline, used)) int symbols_test_known_function(int value)
{
    return value * 3 + 1;
}

struct own_maps {
    struct hd_mapping *mappings;
    size_t count;
};

static struct own_maps read_own_maps(void)
{
    struct own_maps maps = { 0 };
    bool truncated;
    cr_assert_eq(probe_read_maps(getpid(), 100000, &maps.mappings, &maps.count, &truncated), 0);
    return maps;
}

static void free_maps(struct own_maps *maps)
{
    for (size_t i = 0; i < maps->count; i++)
        free(maps->mappings[i].path);
    free(maps->mappings);
}

static void release(struct hd_frame *frame)
{
    free(frame->module);
    free(frame->symbol);
    *frame = (struct hd_frame){ 0 };
}

Test(symbols, a_function_of_this_binary_is_named_with_its_offset)
{
    struct probe_symbols *symbols = probe_symbols_new();
    struct own_maps maps = read_own_maps();
    struct hd_frame frame = { .pc = (uint64_t)(uintptr_t)&symbols_test_known_function + 2 };
    cr_assert(probe_symbols_resolve(symbols, getpid(), maps.mappings, maps.count, &frame));
    cr_assert_str_eq(frame.symbol, "symbols_test_known_function");
    cr_assert_eq(frame.symbol_offset, 2);
    cr_assert(frame.module && strstr(frame.module, "test_symbols"), "module %s", frame.module);
    char *name = probe_symbols_frame_name(&frame);
    cr_assert_str_eq(name, "symbols_test_known_function");
    free(name);
    release(&frame);
    free_maps(&maps);
    probe_symbols_free(symbols);
}

/* The ELF header is in the file's first mapping, where no function lives: module+offset, no name. */
Test(symbols, an_address_no_symbol_covers_has_no_name)
{
    struct probe_symbols *symbols = probe_symbols_new();
    struct own_maps maps = read_own_maps();
    const struct hd_mapping *first = NULL;
    for (size_t i = 0; i < maps.count && !first; i++)
        if (maps.mappings[i].path && strstr(maps.mappings[i].path, "test_symbols") && maps.mappings[i].offset == 0)
            first = &maps.mappings[i];
    cr_assert(first);
    struct hd_frame frame = { .pc = first->start + 0x10 };
    cr_assert(probe_symbols_resolve(symbols, getpid(), maps.mappings, maps.count, &frame));
    cr_assert_null(frame.symbol, "no symbol covers the ELF header, got %s", frame.symbol);
    cr_assert_eq(frame.module_offset, 0x10);
    char *name = probe_symbols_frame_name(&frame);
    cr_assert_str_eq(name, "test_symbols+0x10");
    free(name);
    release(&frame);
    free_maps(&maps);
    probe_symbols_free(symbols);
}

Test(symbols, anonymous_memory_has_neither_module_nor_name)
{
    struct probe_symbols *symbols = probe_symbols_new();
    struct hd_mapping anonymous = { .start = 0x1000, .end = 0x2000, .permissions = "r-xp" };
    struct hd_frame frame = { .pc = 0x1800 };
    cr_assert(probe_symbols_resolve(symbols, getpid(), &anonymous, 1, &frame));
    cr_assert_null(frame.module);
    cr_assert_null(frame.symbol);
    char *name = probe_symbols_frame_name(&frame);
    cr_assert_str_eq(name, "0x1800");
    free(name);
    probe_symbols_free(symbols);
}

/* ---- malformed files ------------------------------------------------------------------------------------------ */

static char *copy_of_own_binary(size_t *size)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    cr_assert_geq(fd, 0);
    struct stat status;
    fstat(fd, &status);
    char *bytes = malloc((size_t)status.st_size);
    cr_assert_eq(read(fd, bytes, (size_t)status.st_size), status.st_size);
    close(fd);
    *size = (size_t)status.st_size;
    return bytes;
}

/* Writes `bytes` to a temporary file and resolves a pc in a fake executable mapping of it: no crash, and no name
 * unless the file really says so. */
static void resolve_in_file(const char *bytes, size_t size)
{
    char path[] = "/tmp/hangdoc-test-elf-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, bytes, size), (ssize_t)size);
    struct stat status;
    fstat(fd, &status);
    close(fd);
    struct hd_mapping mapping = { .start = 0x400000, .end = 0x400000 + 0x100000, .offset = 0, .inode = status.st_ino,
                                  .device_major = major(status.st_dev), .device_minor = minor(status.st_dev),
                                  .permissions = "r-xp", .path = path };
    struct probe_symbols *symbols = probe_symbols_new();
    for (uint64_t pc = mapping.start; pc < mapping.end; pc += 0x777) {
        struct hd_frame frame = { .pc = pc };
        cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
        cr_assert_str_eq(frame.module, path);
        release(&frame);
    }
    probe_symbols_free(symbols);
    unlink(path);
}

Test(symbols, malformed_elf_files_give_no_names_and_no_crash)
{
    size_t size;
    char *original = copy_of_own_binary(&size);
    char *bytes = malloc(size);
    Elf64_Ehdr *header = (Elf64_Ehdr *)bytes;

    resolve_in_file("not an ELF file at all", 22);
    resolve_in_file(original, 64); /* the header alone: tables beyond the end of the file */
    resolve_in_file(original, size / 2);

    memcpy(bytes, original, size);
    header->e_shoff = size - 8; /* section headers off the end */
    resolve_in_file(bytes, size);

    memcpy(bytes, original, size);
    header->e_shnum = 0xffff; /* more section headers than there are */
    resolve_in_file(bytes, size);

    memcpy(bytes, original, size);
    header->e_phoff = size + 4096; /* program headers off the end */
    resolve_in_file(bytes, size);

    /* every section header's link and size scrambled: string tables that are not, sizes beyond the file */
    memcpy(bytes, original, size);
    Elf64_Shdr *sections = (Elf64_Shdr *)(bytes + header->e_shoff);
    for (unsigned i = 0; i < header->e_shnum; i++) {
        sections[i].sh_link = (i * 7) % (header->e_shnum + 3);
        sections[i].sh_size *= 1000;
        sections[i].sh_entsize = i % 3 ? sections[i].sh_entsize : 0;
    }
    resolve_in_file(bytes, size);
    free(bytes);
    free(original);
}

/* The section named `name` of the ELF image `bytes`, or NULL. */
static Elf64_Shdr *section_named(char *bytes, const char *name)
{
    Elf64_Ehdr *header = (Elf64_Ehdr *)bytes;
    Elf64_Shdr *sections = (Elf64_Shdr *)(bytes + header->e_shoff);
    const char *names = bytes + sections[header->e_shstrndx].sh_offset;
    for (unsigned i = 0; i < header->e_shnum; i++)
        if (strcmp(names + sections[i].sh_name, name) == 0)
            return &sections[i];
    return NULL;
}

/* A build-id note whose descriptor claims 2 GiB, in a section that (sparsely) is that large: the hex copy of the
 * build-id must be bounded by the buffer, not by the file's word (0x80000000 * 2 + 1 wraps to 1 in 32 bits). */
Test(symbols, a_huge_build_id_note_is_refused)
{
    size_t size;
    char *bytes = copy_of_own_binary(&size);
    Elf64_Shdr *symtab = section_named(bytes, ".symtab");
    Elf64_Shdr *note = section_named(bytes, ".note.gnu.build-id");
    cr_assert_not_null(note, "the test binary has a build-id");
    if (symtab)
        symtab->sh_type = SHT_NULL; /* no symbol table: the build-id names the separate debug file */
    uint64_t note_offset = (size + 7) & ~(uint64_t)7;
    note->sh_offset = note_offset;
    note->sh_size = 0x80000100;
    const uint32_t note_header[4] = { 4, 0x80000000, NT_GNU_BUILD_ID, 0x00554e47 /* "GNU\0" */ };

    char path[] = "/tmp/hangdoc-test-elf-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, bytes, size), (ssize_t)size);
    cr_assert_eq(pwrite(fd, note_header, sizeof note_header, (off_t)note_offset), (ssize_t)sizeof note_header);
    cr_assert_eq(ftruncate(fd, (off_t)(note_offset + note->sh_size)), 0); /* sparse: no disk used */
    struct stat status;
    fstat(fd, &status);
    close(fd);
    struct hd_mapping mapping = { .start = 0x400000, .end = 0x500000, .inode = status.st_ino,
                                  .device_major = major(status.st_dev), .device_minor = minor(status.st_dev),
                                  .permissions = "r-xp", .path = path };
    struct probe_symbols *symbols = probe_symbols_new();
    struct hd_frame frame = { .pc = 0x401000 };
    cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
    cr_assert_str_eq(frame.module, path);
    release(&frame);
    probe_symbols_free(symbols);
    unlink(path);
    free(bytes);
}

/* C++ names come out demangled: a function of libstdc++ itself, loaded into this process. */
Test(symbols, cxx_names_are_demangled)
{
    void *library = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    cr_assert(library, "libstdc++ is installed with gcc");
    void *function = dlsym(library, "_ZNSt9exceptionD2Ev");
    cr_assert(function);
    struct probe_symbols *symbols = probe_symbols_new();
    struct own_maps maps = read_own_maps();
    struct hd_frame frame = { .pc = (uint64_t)(uintptr_t)function };
    cr_assert(probe_symbols_resolve(symbols, getpid(), maps.mappings, maps.count, &frame));
    cr_assert_str_eq(frame.symbol, "std::exception::~exception()");
    release(&frame);
    free_maps(&maps);
    probe_symbols_free(symbols);
    dlclose(library);
}

/* ---- paths that are not files --------------------------------------------------------------------------------- */

#define OPEN_DEADLINE_S 10

/* The target controls its mappings' paths: one may be a FIFO (open() would block, or wake a writer) or a device
 * node (open() runs the driver: /dev/ptmx allocates a pty, /dev/watchdog arms a watchdog). Resolving a pc in a
 * mapping of `path` (with the identity of what `path` leads to) must never open it for real: inotify sees every
 * real open (IN_OPEN), and none for an O_PATH look. A regression that blocks dies of SIGALRM instead of hanging. */
static void expect_never_opened(const char *path)
{
    struct stat status;
    cr_assert_eq(stat(path, &status), 0);
    int watcher = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    cr_assert_geq(watcher, 0);
    cr_assert_geq(inotify_add_watch(watcher, path, IN_OPEN), 0, "watching %s: %s", path, strerror(errno));
    struct hd_mapping mapping = { .start = 0x400000, .end = 0x500000, .inode = status.st_ino,
                                  .device_major = major(status.st_dev), .device_minor = minor(status.st_dev),
                                  .permissions = "r-xp", .path = (char *)path };
    struct probe_symbols *symbols = probe_symbols_new();
    struct hd_frame frame = { .pc = 0x401000 };
    alarm(OPEN_DEADLINE_S);
    cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
    alarm(0);
    cr_assert_null(frame.symbol);
    release(&frame);
    probe_symbols_free(symbols);
    char events[4096];
    ssize_t got = read(watcher, events, sizeof events);
    cr_assert(got < 0 && errno == EAGAIN, "%s was opened for real (%zd bytes of inotify events)", path, got);
    close(watcher);
}

Test(symbols, a_fifo_in_place_of_a_mapped_file_is_never_opened)
{
    char directory[] = "/tmp/hangdoc-test-fifo-XXXXXX", path[64];
    cr_assert(mkdtemp(directory));
    snprintf(path, sizeof path, "%s/libvictim.so (deleted)", directory);
    cr_assert_eq(mkfifo(path, 0600), 0);
    expect_never_opened(path);
    unlink(path);
    rmdir(directory);
}

/* The reviewer's case: "X (deleted)" a symlink to a character device. A node of hangdoc's own (the null
 * device's numbers), so that no other process's open of /dev/null can be mistaken for one; /dev/null itself where
 * nodes cannot be made (no CAP_MKNOD), then only the absence of a hang and a crash is checked. */
Test(symbols, a_symlink_to_a_device_in_place_of_a_mapped_file_is_never_opened)
{
    char directory[] = "/tmp/hangdoc-test-device-XXXXXX", node[64], path[96];
    cr_assert(mkdtemp(directory));
    snprintf(node, sizeof node, "%s/null", directory);
    snprintf(path, sizeof path, "%s/libvictim.so (deleted)", directory);
    bool own_node = mknod(node, S_IFCHR | 0600, makedev(1, 3)) == 0;
    cr_assert_eq(symlink(own_node ? node : "/dev/null", path), 0);
    if (own_node) {
        expect_never_opened(path);
    } else {
        struct stat status;
        cr_assert_eq(stat(path, &status), 0);
        struct hd_mapping mapping = { .start = 0x400000, .end = 0x500000, .inode = status.st_ino,
                                      .device_major = major(status.st_dev), .device_minor = minor(status.st_dev),
                                      .permissions = "r-xp", .path = path };
        struct probe_symbols *symbols = probe_symbols_new();
        struct hd_frame frame = { .pc = 0x401000 };
        alarm(OPEN_DEADLINE_S);
        cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
        alarm(0);
        release(&frame);
        probe_symbols_free(symbols);
    }
    unlink(path);
    unlink(node);
    rmdir(directory);
}

/* A regular file with the mapping's inode number on another (real) device is another file: not read. The
 * control: the same mapping with the right device names the function. */
static char *name_in_copy(const char *path, const struct stat *status, unsigned device_major, uint64_t function_offset)
{
    struct hd_mapping mapping = { .start = 0x400000, .end = 0x400000 + (uint64_t)status->st_size,
                                  .inode = status->st_ino,
                                  .device_major = device_major, .device_minor = minor(status->st_dev),
                                  .permissions = "r-xp", .path = (char *)path };
    struct probe_symbols *symbols = probe_symbols_new();
    struct hd_frame frame = { .pc = mapping.start + function_offset };
    cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
    char *name = frame.symbol ? strdup(frame.symbol) : NULL;
    release(&frame);
    probe_symbols_free(symbols);
    return name;
}

Test(symbols, a_file_with_the_same_inode_on_another_device_is_not_the_mapped_file)
{
    struct own_maps maps = read_own_maps();
    uint64_t base = 0;
    for (size_t i = 0; i < maps.count && !base; i++)
        if (maps.mappings[i].path && strstr(maps.mappings[i].path, "test_symbols") && maps.mappings[i].offset == 0)
            base = maps.mappings[i].start;
    free_maps(&maps);
    cr_assert(base);
    size_t size;
    char *bytes = copy_of_own_binary(&size);
    char path[] = "/tmp/hangdoc-test-elf-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, bytes, size), (ssize_t)size);
    struct stat status;
    fstat(fd, &status);
    close(fd);
    struct statfs filesystem;
    cr_assert_eq(statfs(path, &filesystem), 0);
    if (filesystem.f_type == OVERLAYFS_SUPER_MAGIC || filesystem.f_type == BTRFS_SUPER_MAGIC) {
        unlink(path);
        free(bytes);
        cr_skip_test("/tmp is on overlayfs or btrfs, where the inode alone decides");
    }
    uint64_t offset = (uint64_t)(uintptr_t)&symbols_test_known_function - base;
    char *name = name_in_copy(path, &status, major(status.st_dev), offset);
    cr_assert(name && strcmp(name, "symbols_test_known_function") == 0, "control: %s", name);
    free(name);
    name = name_in_copy(path, &status, major(status.st_dev) + 1, offset);
    cr_assert_null(name, "a name from another device's file: %s", name);
    unlink(path);
    free(bytes);
}

/* A file truncated under hangdoc after it was opened (a library rebuilt in place): the names are read with
 * pread, so the next lookup gives a name or none, never SIGBUS (a mmap'd image loses its pages past the end). */
Test(symbols, a_file_truncated_after_opening_gives_no_sigbus)
{
    struct own_maps maps = read_own_maps();
    uint64_t base = 0;
    for (size_t i = 0; i < maps.count && !base; i++)
        if (maps.mappings[i].path && strstr(maps.mappings[i].path, "test_symbols") && maps.mappings[i].offset == 0)
            base = maps.mappings[i].start;
    free_maps(&maps);
    cr_assert(base);
    size_t size;
    char *bytes = copy_of_own_binary(&size);
    char path[] = "/tmp/hangdoc-test-elf-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, bytes, size), (ssize_t)size);
    struct stat status;
    fstat(fd, &status);
    struct hd_mapping mapping = { .start = 0x400000, .end = 0x400000 + size, .inode = status.st_ino,
                                  .device_major = major(status.st_dev), .device_minor = minor(status.st_dev),
                                  .permissions = "r-xp", .path = path };
    uint64_t offset = (uint64_t)(uintptr_t)&symbols_test_known_function - base;
    struct probe_symbols *symbols = probe_symbols_new();
    struct hd_frame frame = { .pc = mapping.start + offset };
    cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
    cr_assert_str_eq(frame.symbol, "symbols_test_known_function");
    release(&frame);
    cr_assert_eq(ftruncate(fd, 0), 0);
    close(fd);
    frame = (struct hd_frame){ .pc = mapping.start + offset + 1 };
    cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
    release(&frame);
    probe_symbols_free(symbols);
    unlink(path);
    free(bytes);
}
