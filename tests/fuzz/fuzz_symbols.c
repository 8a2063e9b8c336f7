/* libFuzzer harness: the symbolizer (probe/symbols.h) on a malformed ELF file. A target can map any file, and
 * hangdoc opens the file a mapping names to read its symbol tables, program headers and notes with libelf and its
 * own chunked reads. The fuzzer's bytes are written to a file that this very process maps, as a target's library
 * would be, and pcs inside the mapping are named: every read must stay inside the file, and a file that is no ELF,
 * or a broken one, must give no names rather than a crash. */
#include "symbols.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static volatile size_t sink;
static char path[64];

static void remove_file(void)
{
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/hangdoc-fuzz-symbols-%d.so", (int)getpid());
        atexit(remove_file);
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return 0;
    size_t length = size ? size : 1;
    if (write(fd, data, size) != (ssize_t)size || ftruncate(fd, (off_t)length) != 0) {
        close(fd);
        return 0;
    }
    struct stat status;
    void *image = fstat(fd, &status) == 0 ? mmap(NULL, length, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (image == MAP_FAILED)
        return 0;
    uint64_t start = (uint64_t)(uintptr_t)image, end = start + ((length + 4095) & ~(size_t)4095);
    struct hd_mapping mapping = { .start = start, .end = end, .offset = 0, .inode = status.st_ino,
                                  .device_major = major(status.st_dev), .device_minor = minor(status.st_dev),
                                  .permissions = "r-xp", .path = path };
    struct probe_symbols *symbols = probe_symbols_new();
    if (symbols) {
        uint64_t pcs[4] = { start, start + length / 3, start + length / 2, end - 1 };
        probe_symbols_prepare(symbols, getpid(), &mapping, 1, pcs, 4);
        for (size_t i = 0; i < 4; i++) {
            struct hd_frame frame = { .pc = pcs[i] };
            if (probe_symbols_resolve(symbols, getpid(), &mapping, 1, &frame)) {
                char *name = probe_symbols_frame_name(&frame);
                sink += name ? strlen(name) : 0;
                free(name);
            }
            free(frame.module);
            free(frame.symbol);
        }
        uint64_t table;
        sink += probe_symbols_unwind_table(symbols, getpid(), &mapping, start, &table);
        probe_symbols_free(symbols);
    }
    munmap(image, length);
    return 0;
}
