/* symbols.h: naming pcs from ELF symbol tables with sizes, and surviving malformed ELF files. */
#include "maps.h"
#include "rust_demangle.h"
#include "symbols.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <link.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
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
    for (int searched_ahead = 0; searched_ahead < 2; searched_ahead++) {
        struct probe_symbols *symbols = probe_symbols_new();
        uint64_t ahead[12];
        for (size_t i = 0; i < sizeof ahead / sizeof ahead[0]; i++)
            ahead[i] = mapping.start + i * 0x777;
        if (searched_ahead) /* the one-pass search over the same hostile tables */
            probe_symbols_prepare(symbols, getpid(), &mapping, 1, ahead, sizeof ahead / sizeof ahead[0]);
        for (uint64_t pc = mapping.start; pc < mapping.end; pc += 0x777) {
            struct hd_frame frame = { .pc = pc };
            cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
            cr_assert_str_eq(frame.module, path);
            release(&frame);
        }
        probe_symbols_free(symbols);
    }
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

/* ---- Rust names ---------------------------------------------------------------------------------------------- */

/* Functions of this test binary under Rust's names, one v0 and one legacy, as a Rust program or a Python extension
 * written in Rust has them. */
__attribute__((noinline, used)) int rust_v0_function(int value) __asm__("_RNvCsgwiwt6F3Sso_3gen4main");
__attribute__((noinline, used)) int rust_v0_function(int value)
{
    return value * 5 + 2;
}
__attribute__((noinline, used)) int rust_legacy_function(int value)
    __asm__("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h34cf9b1a2ab1906aE");
__attribute__((noinline, used)) int rust_legacy_function(int value)
{
    return value * 7 + 3;
}

static void expect_named(void *function, const char *name)
{
    struct probe_symbols *symbols = probe_symbols_new();
    struct own_maps maps = read_own_maps();
    struct hd_frame frame = { .pc = (uint64_t)(uintptr_t)function };
    cr_assert(probe_symbols_resolve(symbols, getpid(), maps.mappings, maps.count, &frame));
    cr_assert_str_eq(frame.symbol, name);
    release(&frame);
    free_maps(&maps);
    probe_symbols_free(symbols);
}

Test(symbols, rust_names_are_demangled_in_both_manglings)
{
    expect_named((void *)rust_v0_function, "gen::main");
    expect_named((void *)rust_legacy_function, "std::rt::lang_start::{{closure}}");
}

/* v0 names as rustc writes them (the standard library's own, and a program's), with what a reader is shown: the
 * crates' hashes and the instantiating crate dropped, closures and shims numbered, impls in angle brackets. */
Test(symbols, rust_v0_grammar)
{
    static const struct {
        const char *mangled, *readable;
    } cases[] = {
        { "_RNvMNtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync5mutex5futexNtB2_5Mutex14lock_contended",
          "<std::sys::sync::mutex::futex::Mutex>::lock_contended" },
        { "_RNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0Csgwiwt6F3Sso_3gen", "std::rt::lang_start::<()>::{closure#0}" },
        { "_RNSNvYNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0INtNtNtCsgEmfK2I1SDS_4core3ops8function6FnOnceuE9call_"
          "once6vtableCsgwiwt6F3Sso_3gen",
          "<std::rt::lang_start<()>::{closure#0} as core::ops::function::FnOnce<()>>::call_once::{shim:vtable#0}" },
        { "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace28___rust_begin_short_backtraceFEuuECsgwiwt6F3Sso_3gen",
          "std::sys::backtrace::__rust_begin_short_backtrace::<fn(), ()>" },
        { "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtNtNtCsjrHSEGnQ3l9_3std11collections4hash3map7HashMapNtNtCs"
          "lNYArtu3iFV_5alloc6string6StringINtNtB1F_3vec3VechEEECsgwiwt6F3Sso_3gen",
          "core::ptr::drop_in_place::<std::collections::hash::map::HashMap<alloc::string::String, "
          "alloc::vec::Vec<u8>>>" },
        { "_RNvCsgwiwt6F3Sso_3gen4main.llvm.800640887687376627", "gen::main" },
        { "_RINvNtCs1_4core6escape14escape_unicodeKja_E", "core::escape::escape_unicode::<10>" },
        { "_RINvCs1_1a1fDNtCs2_1b5TraitEL_E", "a::f::<dyn b::Trait>" },
        { "_RINvCs1_1a1fTlRShEE", "a::f::<(i32, &[u8])>" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *readable = probe_rust_demangle_v0(cases[i].mangled);
        cr_assert(readable, "%s", cases[i].mangled);
        cr_assert_str_eq(readable, cases[i].readable);
        free(readable);
    }
}

/* Hostile or broken names give NULL (the name is shown as it is), never a read past the end or a deep recursion. */
Test(symbols, rust_v0_refuses_what_it_cannot_read)
{
    static const char *const names[] = {
        "_R", "_RNv", "_RNvC", "_RNvCs_", "_RNvCs1_3ab", "_RC999999999999999999999x", "_RB_", "_RNvB0_3abc",
        "_RINvCs1_1a1f", "_ZN3foo3barE", "main", "_RXXXXXXXXXX",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *readable = probe_rust_demangle_v0(names[i]);
        cr_assert_null(readable, "%s gave %s", names[i], readable);
    }
    cr_assert_null(probe_rust_demangle_v0("_RNvB5_3abc"), "a backref that points ahead");
    cr_assert_null(probe_rust_demangle_v0("_RNvB_3abc"), "a backref that points at itself");
    /* a thousand nested references: refused at the depth cap, not read to the bottom */
    char deep[1100] = "_RINvCs1_1a1f";
    size_t at = strlen(deep);
    for (int i = 0; i < 1000; i++)
        deep[at++] = 'R';
    memcpy(deep + at, "hE", 3);
    cr_assert_null(probe_rust_demangle_v0(deep));
}

/* Base 62 as v0 writes a backref's position: "_" is 0, else the number - 1 and a closing '_'. */
static size_t put_base_62(char *out, size_t position)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char reversed[16];
    size_t length = 0;
    if (position == 0) {
        out[0] = '_';
        return 1;
    }
    for (size_t value = position - 1;; value /= 62) {
        reversed[length++] = digits[value % 62];
        if (value < 62)
            break;
    }
    for (size_t i = 0; i < length; i++)
        out[i] = reversed[length - 1 - i];
    out[length] = '_';
    return length + 1;
}

/* Tuples of 22 levels, each the previous level four times by backref: about 4^22 types to read from 400 bytes. */
static void fan_out_name(char *name, size_t size, const char *head, const char *tail)
{
    size_t at = (size_t)snprintf(name, size, "%s", head);
    size_t previous = at - 2; /* positions count after "_R" */
    at += (size_t)snprintf(name + at, size - at, "ThhhhE");
    for (int level = 0; level < 22; level++) {
        size_t start = at - 2;
        name[at++] = 'T';
        for (int copy = 0; copy < 4; copy++) {
            name[at++] = 'B';
            at += put_base_62(name + at, previous);
        }
        name[at++] = 'E';
        previous = start;
    }
    snprintf(name + at, size - at, "%s", tail);
}

/* A short hostile name whose backrefs fan out must end at once: cut short where the readable form fills the
 * output, or refused by the budget of steps where nothing is shown (an impl's own path), never read for ever. */
Test(symbols, rust_v0_backrefs_that_fan_out_end_at_once, .timeout = 10)
{
    char name[1024];
    fan_out_name(name, sizeof name, "_RINvCs1_1a1f", "E");
    char *readable = probe_rust_demangle_v0(name);
    cr_assert_not_null(readable);
    cr_assert_eq(strlen(readable), 4095);
    cr_assert_str_eq(readable + 4092, "...");
    free(readable);
    fan_out_name(name, sizeof name, "_RNvMINvCs1_1a1f", "Eu3foo");
    cr_assert_null(probe_rust_demangle_v0(name));
}

Test(symbols, rust_legacy_names_lose_their_hash_and_escapes)
{
    static const struct {
        const char *demangled, *readable;
    } cases[] = {
        { "std::rt::lang_start::_$u7b$$u7b$closure$u7d$$u7d$::h34cf9b1a2ab1906a", "std::rt::lang_start::{{closure}}" },
        { "core::ptr::drop_in_place$LT$alloc..vec..Vec$LT$u8$GT$$GT$::hb3500c0c3e18b1b9",
          "core::ptr::drop_in_place<alloc::vec::Vec<u8>>" },
        { "tokenizers::utils::parallelism::get_parallelism::h0123456789abcdef",
          "tokenizers::utils::parallelism::get_parallelism" },
        { "std::exception::~exception()", "std::exception::~exception()" }, /* C++: left alone */
        { "a::hnot_a_hash_at_all", "a::hnot_a_hash_at_all" },
        { "a::$u0$::h0123456789abcdef", "a::$u0$" }, /* no control byte comes out of an escape */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *name = strdup(cases[i].demangled);
        probe_rust_tidy_legacy(name);
        cr_assert_str_eq(name, cases[i].readable);
        free(name);
    }
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

/* ---- symbol tables read right --------------------------------------------------------------------------------- */

/* The functions of a small ELF file written with libelf, whose one PT_LOAD maps vaddr 0 at file offset 0. */
struct written_function {
    const char *name;
    uint64_t start;
    uint64_t size;
    unsigned char type;
    unsigned char bind;
};

static const struct written_function written_functions[] = {
    { "data_not_a_function", 0x1000, 0x100, STT_OBJECT, STB_GLOBAL },
    { "outer_function", 0x1100, 0x200, STT_FUNC, STB_GLOBAL },
    { "inner_local", 0x1180, 0x40, STT_FUNC, STB_LOCAL },
    { "sizeless_function", 0x1400, 0, STT_FUNC, STB_GLOBAL },
    { "resolver_chosen", 0x1500, 0x10, STT_GNU_IFUNC, STB_GLOBAL },
    { "local_alias", 0x1600, 0x30, STT_FUNC, STB_LOCAL },
    { "global_alias", 0x1600, 0x30, STT_FUNC, STB_GLOBAL },
    { "first_alias", 0x1800, 0x20, STT_FUNC, STB_GLOBAL },
    { "second_alias", 0x1800, 0x20, STT_FUNC, STB_GLOBAL },
};
#define NWRITTEN (sizeof written_functions / sizeof written_functions[0])

/* Which name a pc at vaddr `vaddr` must get (NULL: none). */
static const struct {
    uint64_t vaddr;
    const char *name;
} expected_names[] = {
    { 0x1010, NULL },                /* an object, not a function */
    { 0x1104, "outer_function" },
    { 0x1190, "inner_local" },       /* the innermost of nested symbols */
    { 0x11c0, "outer_function" },    /* past the inner one */
    { 0x1400, NULL },                /* a symbol without a size covers nothing */
    { 0x1508, "resolver_chosen" },
    { 0x1610, "global_alias" },      /* of two names for one function, the global one */
    { 0x1700, NULL },
    { 0x1808, "first_alias" },       /* of aliases alike in all, the first name, searched or sorted */
};

static Elf_Scn *add_section(Elf *elf, const char *unused_name, Elf64_Word type, void *bytes, size_t size,
                            Elf_Type data_type, size_t name_offset)
{
    (void)unused_name;
    Elf_Scn *section = elf_newscn(elf);
    Elf_Data *data = elf_newdata(section);
    *data = (Elf_Data){ .d_buf = bytes, .d_size = size, .d_type = data_type, .d_version = EV_CURRENT, .d_align = 8 };
    GElf_Shdr header;
    gelf_getshdr(section, &header);
    header.sh_type = type;
    header.sh_name = (Elf64_Word)name_offset;
    gelf_update_shdr(section, &header);
    return section;
}

/* Writes the ELF file of written_functions[] in `elf_class` and `byte_order` to `path`. */
static void write_elf(const char *path, int elf_class, int byte_order)
{
    int fd = open(path, O_RDWR | O_TRUNC);
    cr_assert_geq(fd, 0);
    cr_assert_neq(elf_version(EV_CURRENT), EV_NONE);
    Elf *elf = elf_begin(fd, ELF_C_WRITE, NULL);
    cr_assert_not_null(elf);
    cr_assert_not_null(gelf_newehdr(elf, elf_class));
    cr_assert_not_null(gelf_newphdr(elf, 1));

    static char section_names[] = "\0.symtab\0.strtab\0.shstrtab";
    char strings[512] = "";
    size_t strings_size = 1;
    size_t symbol_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
    unsigned char *symbols = calloc(NWRITTEN + 1, sizeof(Elf64_Sym));
    Elf_Data table = { .d_buf = symbols, .d_size = (NWRITTEN + 1) * symbol_size, .d_type = ELF_T_SYM,
                       .d_version = EV_CURRENT };
    Elf_Scn *strtab = add_section(elf, ".strtab", SHT_STRTAB, strings, sizeof strings, ELF_T_BYTE, 9);
    Elf_Scn *symtab = add_section(elf, ".symtab", SHT_SYMTAB, symbols, table.d_size, ELF_T_SYM, 1);
    Elf_Scn *shstrtab = add_section(elf, ".shstrtab", SHT_STRTAB, section_names, sizeof section_names, ELF_T_BYTE, 17);
    Elf_Data *symtab_data = elf_getdata(symtab, NULL);
    for (size_t i = 0; i < NWRITTEN; i++) {
        const struct written_function *function = &written_functions[i];
        GElf_Sym symbol = { .st_name = (Elf64_Word)strings_size, .st_value = function->start,
                            .st_size = function->size, .st_info = GELF_ST_INFO(function->bind, function->type),
                            .st_shndx = 1 };
        strcpy(strings + strings_size, function->name);
        strings_size += strlen(function->name) + 1;
        cr_assert(gelf_update_sym(symtab_data, (int)i + 1, &symbol));
    }
    GElf_Shdr header;
    gelf_getshdr(symtab, &header);
    header.sh_link = (Elf64_Word)elf_ndxscn(strtab);
    header.sh_entsize = symbol_size;
    gelf_update_shdr(symtab, &header);

    GElf_Ehdr elf_header;
    gelf_getehdr(elf, &elf_header);
    elf_header.e_ident[EI_DATA] = (unsigned char)byte_order;
    elf_header.e_type = ET_DYN;
    elf_header.e_machine = EM_X86_64;
    elf_header.e_version = EV_CURRENT;
    elf_header.e_shstrndx = (Elf64_Half)elf_ndxscn(shstrtab);
    cr_assert(gelf_update_ehdr(elf, &elf_header));
    GElf_Phdr load = { .p_type = PT_LOAD, .p_offset = 0, .p_vaddr = 0, .p_filesz = 0x10000, .p_memsz = 0x10000,
                       .p_flags = PF_R | PF_X, .p_align = 0x1000 };
    cr_assert(gelf_update_phdr(elf, 0, &load));
    cr_assert_geq(elf_update(elf, ELF_C_WRITE), 0, "elf_update: %s", elf_errmsg(-1));
    elf_end(elf);
    close(fd);
    free(symbols);
}

/* 32- and 64-bit files, in both byte orders: every symbol is read in the file's order and class, not the host's. */
Test(symbols, symbol_tables_of_every_class_and_byte_order_are_read_right)
{
    static const struct {
        int elf_class;
        int byte_order;
    } kinds[] = { { ELFCLASS64, ELFDATA2LSB }, { ELFCLASS64, ELFDATA2MSB }, { ELFCLASS32, ELFDATA2LSB },
                  { ELFCLASS32, ELFDATA2MSB } };
    enum { SCANNED, SEARCHED_AHEAD, SORTED, MODES };
    for (size_t round = 0; round < MODES * sizeof kinds / sizeof kinds[0]; round++) {
        size_t k = round / MODES;
        /* SEARCHED_AHEAD: the pcs searched for in one pass first (probe_symbols_prepare); SORTED: the file asked
         * for more addresses than it is scanned for first, so that its table is sorted */
        int mode = (int)(round % MODES);
        char path[] = "/tmp/hangdoc-test-elf-XXXXXX";
        close(mkstemp(path));
        write_elf(path, kinds[k].elf_class, kinds[k].byte_order);
        struct stat status;
        cr_assert_eq(stat(path, &status), 0);
        struct hd_mapping mapping = { .start = 0x400000, .end = 0x410000, .inode = status.st_ino,
                                      .device_major = major(status.st_dev), .device_minor = minor(status.st_dev),
                                      .permissions = "r-xp", .path = path };
        struct probe_symbols *symbols = probe_symbols_new();
        uint64_t pcs[sizeof expected_names / sizeof expected_names[0]];
        for (size_t e = 0; e < sizeof expected_names / sizeof expected_names[0]; e++)
            pcs[e] = mapping.start + expected_names[e].vaddr;
        if (mode == SEARCHED_AHEAD)
            probe_symbols_prepare(symbols, getpid(), &mapping, 1, pcs, sizeof pcs / sizeof pcs[0]);
        for (uint64_t warm = 0; mode == SORTED && warm < 40; warm++) {
            struct hd_frame frame = { .pc = mapping.start + 0x1100 + warm * 4 };
            cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
            release(&frame);
        }
        for (size_t e = 0; e < sizeof expected_names / sizeof expected_names[0]; e++) {
            struct hd_frame frame = { .pc = mapping.start + expected_names[e].vaddr };
            cr_assert(probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame));
            if (expected_names[e].name)
                cr_assert(frame.symbol && strcmp(frame.symbol, expected_names[e].name) == 0,
                          "class %d order %d mode %d, vaddr 0x%lx: %s, not %s", kinds[k].elf_class,
                          kinds[k].byte_order, mode, (unsigned long)expected_names[e].vaddr, frame.symbol,
                          expected_names[e].name);
            else
                cr_assert_null(frame.symbol, "vaddr 0x%lx: %s", (unsigned long)expected_names[e].vaddr, frame.symbol);
            release(&frame);
        }
        probe_symbols_free(symbols);
        unlink(path);
    }
}

/* The function symbols of a file as libelf's gelf_getsym reads them, to check the names against. */
struct reference_symbol {
    uint64_t start;
    uint64_t size;
    bool global;
    char *name;
};

struct reference {
    struct reference_symbol *symbols;
    size_t count;
};

static void add_reference_table(struct reference *reference, Elf *elf, Elf64_Word type)
{
    Elf_Scn *section = NULL;
    GElf_Shdr header;
    while ((section = elf_nextscn(elf, section)))
        if (gelf_getshdr(section, &header) && header.sh_type == type)
            break;
    Elf_Data *data = section ? elf_getdata(section, NULL) : NULL;
    if (!data)
        return;
    size_t count = header.sh_size / header.sh_entsize;
    reference->symbols = realloc(reference->symbols, (reference->count + count) * sizeof *reference->symbols);
    for (size_t i = 0; i < count; i++) {
        GElf_Sym symbol;
        cr_assert(gelf_getsym(data, (int)i, &symbol));
        int kind = GELF_ST_TYPE(symbol.st_info);
        const char *name = elf_strptr(elf, header.sh_link, symbol.st_name);
        if ((kind != STT_FUNC && kind != STT_GNU_IFUNC) || symbol.st_size == 0 || symbol.st_shndx == SHN_UNDEF ||
            !name || !name[0])
            continue;
        reference->symbols[reference->count++] = (struct reference_symbol){
            .start = symbol.st_value, .size = symbol.st_size, .global = GELF_ST_BIND(symbol.st_info) != STB_LOCAL,
            .name = strndup(name, strcspn(name, "@")) };
    }
}

/* The .symtab of `path` or of its debug file by build-id, and its .dynsym; false when neither has a .symtab. */
static bool read_reference(const char *path, struct reference *reference)
{
    cr_assert_neq(elf_version(EV_CURRENT), EV_NONE);
    int fd = open(path, O_RDONLY), debug_fd = -1;
    cr_assert_geq(fd, 0, "%s", path);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL), *debug = NULL;
    size_t before = reference->count;
    add_reference_table(reference, elf, SHT_SYMTAB);
    bool has_symtab = reference->count > before;
    Elf_Scn *section = NULL;
    GElf_Shdr header;
    while (!has_symtab && (section = elf_nextscn(elf, section))) {
        Elf_Data *data = gelf_getshdr(section, &header) && header.sh_type == SHT_NOTE ? elf_getdata(section, NULL)
                                                                                         : NULL;
        GElf_Nhdr note;
        size_t name_offset, description_offset;
        if (!data || !gelf_getnote(data, 0, &note, &name_offset, &description_offset) ||
            note.n_type != NT_GNU_BUILD_ID || note.n_descsz < 2 || note.n_descsz > 64)
            continue;
        char debug_path[256];
        int length = snprintf(debug_path, sizeof debug_path, "/usr/lib/debug/.build-id/");
        const unsigned char *id = (const unsigned char *)data->d_buf + description_offset;
        for (size_t i = 0; i < note.n_descsz; i++)
            length += snprintf(debug_path + length, sizeof debug_path - (size_t)length, i == 1 ? "/%02x" : "%02x",
                               id[i]);
        snprintf(debug_path + length, sizeof debug_path - (size_t)length, ".debug");
        if ((debug_fd = open(debug_path, O_RDONLY)) >= 0 && (debug = elf_begin(debug_fd, ELF_C_READ, NULL))) {
            add_reference_table(reference, debug, SHT_SYMTAB);
            has_symtab = reference->count > before;
        }
        break;
    }
    add_reference_table(reference, elf, SHT_DYNSYM);
    if (debug)
        elf_end(debug);
    if (debug_fd >= 0)
        close(debug_fd);
    elf_end(elf);
    close(fd);
    return has_symtab;
}

/* Whether `name` is what hangdoc must call `vaddr`: the name of one of the innermost symbols that cover it (the
 * latest start, then the smallest size, then a global name; what is left is a tie either name may win). */
static bool acceptable_name(const struct reference *reference, uint64_t vaddr, const char *name, uint64_t offset)
{
    const struct reference_symbol *best = NULL;
    for (size_t i = 0; i < reference->count; i++) {
        const struct reference_symbol *symbol = &reference->symbols[i];
        if (vaddr - symbol->start >= symbol->size)
            continue;
        if (!best || symbol->start > best->start ||
            (symbol->start == best->start &&
             (symbol->size < best->size || (symbol->size == best->size && symbol->global && !best->global))))
            best = symbol;
    }
    if (!best || !name || offset != vaddr - best->start)
        return !best && !name;
    for (size_t i = 0; i < reference->count; i++) {
        const struct reference_symbol *symbol = &reference->symbols[i];
        const char *plain = strncmp(symbol->name, "__GI_", 5) == 0 && symbol->name[5] ? symbol->name + 5
                                                                                         : symbol->name;
        if (symbol->start == best->start && symbol->size == best->size && symbol->global == best->global &&
            strcmp(plain, name) == 0)
            return true;
    }
    return false;
}

struct loaded_module {
    const char *wanted; /* a part of its path; "" for the executable */
    uint64_t bias;
    char path[4096];
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *argument)
{
    (void)size;
    struct loaded_module *module = argument;
    bool executable = !module->wanted[0] && !info->dlpi_name[0];
    if (!executable && !(module->wanted[0] && strstr(info->dlpi_name, module->wanted)))
        return 0;
    module->bias = info->dlpi_addr;
    snprintf(module->path, sizeof module->path, "%s", executable ? "/proc/self/exe" : info->dlpi_name);
    return 1;
}

/* Every function of the module (every `stride`-th), named at its middle, against libelf's reading of its tables;
 * the first `ahead` of them searched for in one pass first (probe_symbols_prepare). */
/* C++ and Rust names are shown demangled, not as the symbol table has them */
static bool mangled(const char *name)
{
    return strncmp(name, "_Z", 2) == 0 || strncmp(name, "_R", 2) == 0;
}

static void compare_names_in(const char *wanted, size_t stride, size_t ahead)
{
    struct loaded_module module = { .wanted = wanted };
    cr_assert(dl_iterate_phdr(find_loaded, &module), "%s is loaded", wanted);
    struct reference reference = { 0 };
    if (!read_reference(module.path, &reference) && wanted[0]) {
        /* info, not a warning: Criterion 2.3 (Debian 11) exits 1 after a warning of a test that passed */
        cr_log_info("%s has no .symtab and no debug file by build-id here: not compared", module.path);
        return;
    }
    struct probe_symbols *symbols = probe_symbols_new();
    struct own_maps maps = read_own_maps();
    uint64_t pcs[32];
    size_t nahead = 0;
    for (size_t i = 0; i < reference.count && nahead < ahead && nahead < 32; i += stride)
        if (!mangled(reference.symbols[i].name))
            pcs[nahead++] = module.bias + reference.symbols[i].start + reference.symbols[i].size / 2;
    probe_symbols_prepare(symbols, getpid(), maps.mappings, maps.count, pcs, nahead);
    size_t compared = 0;
    for (size_t i = 0; i < reference.count; i += stride) {
        const struct reference_symbol *symbol = &reference.symbols[i];
        if (mangled(symbol->name))
            continue; /* demangled: another test's matter */
        uint64_t vaddr = symbol->start + symbol->size / 2;
        struct hd_frame frame = { .pc = module.bias + vaddr };
        cr_assert(probe_symbols_resolve(symbols, getpid(), maps.mappings, maps.count, &frame));
        cr_assert(acceptable_name(&reference, vaddr, frame.symbol, frame.symbol_offset),
                  "%s vaddr 0x%lx (in %s): named %s+0x%lx", module.path, (unsigned long)vaddr, symbol->name,
                  frame.symbol, (unsigned long)frame.symbol_offset);
        release(&frame);
        compared++;
    }
    cr_assert_gt(compared, 16, "more than the unsorted lookups of a file were compared");
    free_maps(&maps);
    probe_symbols_free(symbols);
    for (size_t i = 0; i < reference.count; i++)
        free(reference.symbols[i].name);
    free(reference.symbols);
}

Test(symbols, names_in_this_binary_and_libc_agree_with_libelf)
{
    compare_names_in("", 1, 0);
    compare_names_in("libc.so", 5, 0);
}

/* As many addresses as a search pass takes, then more than it takes (the table is loaded instead). */
Test(symbols, names_searched_ahead_agree_with_libelf)
{
    compare_names_in("", 1, 12);
    compare_names_in("libc.so", 5, 12);
    compare_names_in("libc.so", 3, 30);
}
