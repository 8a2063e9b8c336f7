/* libFuzzer harness: Rust symbol names (probe/rust_demangle.h), which come out of the target's files. The v0 reader
 * must end on every input, within its bounds, and give a name with no control byte; the legacy tidy must only
 * shrink the text. */
#include "rust_demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 3);
    if (!name)
        return 0;
    memcpy(name, "_R", 2);
    memcpy(name + 2, data, size);
    name[size + 2] = '\0';
    char *readable = probe_rust_demangle_v0(name);
    if (readable) {
        size_t length = strlen(readable);
        if (length == 0 || length >= 4096)
            abort();
        for (size_t i = 0; i < length; i++)
            if ((unsigned char)readable[i] < 0x20 || readable[i] == 0x7f)
                abort();
        free(readable);
    }
    size_t before = strlen(name + 2);
    probe_rust_tidy_legacy(name + 2);
    if (strlen(name + 2) > before)
        abort();
    free(name);
    return 0;
}
