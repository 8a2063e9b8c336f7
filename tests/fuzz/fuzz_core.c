/* libFuzzer harness: an ELF core file (probe/core_file.h), hostile input that must be read or refused with a
 * reason, never a crash; what it gives (threads, their system calls, the auxiliary vector, mapped files) is then
 * used as the snapshot builder uses it, memory read at every address it names. */
#include "core_file.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct probe_core *core = NULL;
    char error[256];
    if (probe_core_parse(data, size, &core, error, sizeof error) != 0)
        return 0;
    unsigned char bytes[64];
    for (size_t i = 0; i < core->nthreads; i++) {
        const struct hd_syscall *syscall = &core->threads[i].syscall;
        probe_core_read(core, syscall->stack_pointer, bytes, sizeof bytes);
        for (size_t a = 0; a < 6; a++)
            probe_core_read(core, syscall->args[a], bytes, sizeof bytes);
    }
    uint64_t random;
    if (probe_core_auxv(core, AT_RANDOM, &random))
        probe_core_read(core, random, bytes, 16);
    for (size_t f = 0; f < core->nfiles; f++)
        (void)strlen(core->files[f].path);
    for (size_t s = 0; s < core->nsegments; s++)
        probe_core_read(core, core->segments[s].vaddr + core->segments[s].memsz - 1, bytes, 1);
    probe_core_free(core);
    return 0;
}
