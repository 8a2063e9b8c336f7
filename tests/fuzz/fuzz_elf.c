/* libFuzzer harness: the ELF identity read from a process's memory (probe/elf_memory.h: ELF and program headers,
 * PT_NOTE build-ids, PT_DYNAMIC and its soname), the reader that takes the most hostile input of all, since a
 * target can map anything. The fuzzer's bytes are an object mapped at file offset 0 in this very process, read
 * through process_vm_readv as a target's would be; every read must stay inside that mapping. */
#include "elf_memory.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define IMAGE_SIZE (64 * 1024)

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char *image;
    if (!image) {
        image = mmap(NULL, IMAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (image == MAP_FAILED)
            abort();
    }
    memset(image, 0, IMAGE_SIZE);
    memcpy(image, data, size < IMAGE_SIZE ? size : IMAGE_SIZE);
    struct hd_mapping mapping = { .start = (uint64_t)(uintptr_t)image, .end = (uint64_t)(uintptr_t)image + IMAGE_SIZE,
                                  .offset = 0, .inode = 4242, .device_major = 254, .device_minor = 1,
                                  .permissions = "r--p", .path = (char *)"/usr/lib/libfuzzed.so.1" };
    struct hd_process process = { .pid = getpid(), .mappings = &mapping, .nmappings = 1 };
    struct probe_elf_object object = { .first = &mapping };
    if (probe_read_elf_objects(&process, &object, 1)) {
        sink += (size_t)object.verdict + (object.soname ? strlen(object.soname) : 0) +
                (object.build_id ? strlen(object.build_id) : 0);
        free(object.soname);
        free(object.build_id);
    }
    return 0;
}
