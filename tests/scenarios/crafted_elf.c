/* Crafted ELF files mapped into a process, and a thread running code in each, so that hangdoc reads their headers
 * from memory (probe/elf_memory.c), symbolizes a pc in them (probe/symbols.c) and unwinds from there. Each file is
 * an ELF shared object made hostile in one way:
 *   sections  section headers out of the file, 65,535 of them, a section-name index out of range; a bogus
 *             .eh_frame_hdr (PT_GNU_EH_FRAME) claiming two billion entries
 *   symtab    a .symtab and .strtab that point beyond the end of the file, a .dynsym of a size no entry divides
 *   note      a PT_NOTE claiming 4 GiB, whose build-id note claims 4 GiB of descriptor
 *   dynamic   a PT_DYNAMIC larger than the file with no DT_NULL, whose DT_STRTAB is the dynamic section itself and
 *             whose DT_SONAME points out of everything
 * The files are written to the directory given as the argument; the thread in each sits in pause() in a loop of
 * code in the file's second page (x86-64; on other machines the threads sleep in pause() in the fixture itself).
 * ready <pid> <thread in sections> <thread in symtab> <thread in note> <thread in dynamic> */
#include "fixture.h"

#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#define FILE_SIZE 8192
#define CODE_OFFSET 4096
#define DYNAMIC_OFFSET 0x400
#define STRINGS_OFFSET 0x500
#define NOTE_OFFSET 0x300
#define EH_FRAME_HDR_OFFSET 0x600
#define SECTIONS_OFFSET 0x800

enum crafted { SECTIONS, SYMTAB, NOTE, DYNAMIC, CRAFTED_COUNT };
static const char *const file_names[CRAFTED_COUNT] = { "libcrafted-sections.so", "libcrafted-symtab.so",
                                                       "libcrafted-note.so", "libcrafted-dynamic.so" };

#if defined(__x86_64__)
#define MACHINE EM_X86_64
/* mov eax, 34 (pause); syscall; jmp back to the mov */
static const unsigned char pause_loop[] = { 0xb8, 0x22, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xeb, 0xf7 };
#elif defined(__aarch64__)
#define MACHINE EM_AARCH64
#else
#define MACHINE EM_NONE
#endif

static void put(unsigned char *image, size_t offset, const void *bytes, size_t size)
{
    memcpy(image + offset, bytes, size);
}

/* What every variant shares: the ELF header, a PT_LOAD of the whole file, a PT_DYNAMIC with a soname, a build-id
 * note, and the code. */
static void lay_out_common(unsigned char *image, const char *soname, Elf64_Phdr *headers, size_t *count)
{
    Elf64_Ehdr header = {
        .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
        .e_type = ET_DYN, .e_machine = MACHINE, .e_version = EV_CURRENT, .e_phoff = sizeof header,
        .e_ehsize = sizeof header, .e_phentsize = sizeof(Elf64_Phdr), .e_shentsize = sizeof(Elf64_Shdr),
    };
    put(image, 0, &header, sizeof header);
    headers[(*count)++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = FILE_SIZE,
                                        .p_memsz = FILE_SIZE, .p_align = 4096 };
    headers[(*count)++] = (Elf64_Phdr){ .p_type = PT_DYNAMIC, .p_flags = PF_R, .p_offset = DYNAMIC_OFFSET,
                                        .p_vaddr = DYNAMIC_OFFSET, .p_filesz = 4 * sizeof(Elf64_Dyn),
                                        .p_memsz = 4 * sizeof(Elf64_Dyn) };
    Elf64_Dyn dynamic[] = { { DT_STRTAB, { STRINGS_OFFSET } }, { DT_STRSZ, { 256 } }, { DT_SONAME, { 1 } },
                            { DT_NULL, { 0 } } };
    put(image, DYNAMIC_OFFSET, dynamic, sizeof dynamic);
    put(image, STRINGS_OFFSET + 1, soname, strlen(soname) + 1);
    struct {
        Elf64_Nhdr header;
        char name[4];
        unsigned char id[20];
    } note = { { 4, 20, NT_GNU_BUILD_ID }, "GNU", { 0xc4, 0xaf, 0x7e, 0xd0 } };
    put(image, NOTE_OFFSET, &note, sizeof note);
    headers[(*count)++] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R, .p_offset = NOTE_OFFSET,
                                        .p_vaddr = NOTE_OFFSET, .p_filesz = sizeof note, .p_memsz = sizeof note,
                                        .p_align = 4 };
#if defined(__x86_64__)
    put(image, CODE_OFFSET, pause_loop, sizeof pause_loop);
#endif
}

static void craft(enum crafted which, unsigned char *image)
{
    Elf64_Phdr headers[8];
    size_t count = 0;
    lay_out_common(image, file_names[which], headers, &count);
    Elf64_Ehdr *header = (Elf64_Ehdr *)image;
    switch (which) {
    case SECTIONS: {
        header->e_shoff = UINT64_MAX - 15;
        header->e_shnum = 0xffff;
        header->e_shstrndx = 0xfffe;
        /* version 1, pointer encodings that are not DW_EH_PE_omit, a table of 2^31 entries */
        const unsigned char eh_frame_hdr[] = { 1, 0x1b, 0x03, 0x3b, 0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
        put(image, EH_FRAME_HDR_OFFSET, eh_frame_hdr, sizeof eh_frame_hdr);
        headers[count++] = (Elf64_Phdr){ .p_type = PT_GNU_EH_FRAME, .p_flags = PF_R,
                                         .p_offset = EH_FRAME_HDR_OFFSET, .p_vaddr = EH_FRAME_HDR_OFFSET,
                                         .p_filesz = sizeof eh_frame_hdr, .p_memsz = sizeof eh_frame_hdr };
        break;
    }
    case SYMTAB: {
        static const char names[] = "\0.symtab\0.strtab\0.shstrtab\0.dynsym";
        put(image, SECTIONS_OFFSET + 5 * sizeof(Elf64_Shdr), names, sizeof names);
        Elf64_Shdr sections[5] = {
            [1] = { .sh_name = 1, .sh_type = SHT_SYMTAB, .sh_offset = 0x7ffffff0, .sh_size = 0x10000000,
                    .sh_link = 2, .sh_entsize = sizeof(Elf64_Sym) },
            [2] = { .sh_name = 9, .sh_type = SHT_STRTAB, .sh_offset = UINT64_MAX - 8, .sh_size = 0x1000 },
            [3] = { .sh_name = 17, .sh_type = SHT_STRTAB, .sh_offset = SECTIONS_OFFSET + 5 * sizeof(Elf64_Shdr),
                    .sh_size = sizeof names },
            [4] = { .sh_name = 27, .sh_type = SHT_DYNSYM, .sh_offset = CODE_OFFSET, .sh_size = 100,
                    .sh_link = 77, .sh_entsize = sizeof(Elf64_Sym) },
        };
        put(image, SECTIONS_OFFSET, sections, sizeof sections);
        header->e_shoff = SECTIONS_OFFSET;
        header->e_shnum = 5;
        header->e_shstrndx = 3;
        break;
    }
    case NOTE: {
        Elf64_Nhdr note = { 4, 0xfffffff0, NT_GNU_BUILD_ID };
        put(image, NOTE_OFFSET, &note, sizeof note);
        headers[2].p_filesz = headers[2].p_memsz = 0x100000000ull;
        break;
    }
    case DYNAMIC: {
        Elf64_Dyn looping[] = { { DT_STRTAB, { DYNAMIC_OFFSET } }, { DT_SONAME, { 0xfffffff0 } },
                                { DT_NEEDED, { 0xffffffff } }, { DT_STRSZ, { UINT64_MAX } } };
        for (size_t offset = DYNAMIC_OFFSET; offset + sizeof looping <= CODE_OFFSET; offset += sizeof looping)
            put(image, offset, looping, sizeof looping);
        headers[1].p_filesz = headers[1].p_memsz = 0x7fffffff;
        break;
    }
    case CRAFTED_COUNT:
        break;
    }
    header->e_phnum = (Elf64_Half)count;
    put(image, sizeof *header, headers, count * sizeof headers[0]);
}

static void *code[CRAFTED_COUNT];
static _Atomic pid_t tids[CRAFTED_COUNT];

static void *run_in_crafted_code(void *which)
{
    size_t index = (size_t)which;
    tids[index] = fixture_gettid();
#if defined(__x86_64__)
    ((void (*)(void))code[index])();
#endif
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    pid_t self = getpid();
    for (size_t which = 0; which < CRAFTED_COUNT; which++) {
        static unsigned char image[FILE_SIZE];
        memset(image, 0, sizeof image);
        craft(which, image);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], file_names[which]);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, image, sizeof image) != (ssize_t)sizeof image)
            return 1;
        void *mapped = mmap(NULL, FILE_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
        close(fd);
        if (mapped == MAP_FAILED)
            return 1;
        code[which] = (unsigned char *)mapped + CODE_OFFSET;
        pthread_t thread;
        pthread_create(&thread, NULL, run_in_crafted_code, (void *)which);
    }
    for (size_t which = 0; which < CRAFTED_COUNT; which++) {
        while (!tids[which])
            usleep(1000);
        fixture_wait_for_wchan(self, tids[which], "pause");
    }
    fixture_ready("ready %d %d %d %d %d", (int)self, (int)tids[SECTIONS], (int)tids[SYMTAB], (int)tids[NOTE],
                  (int)tids[DYNAMIC]);
    for (;;)
        pause();
}
