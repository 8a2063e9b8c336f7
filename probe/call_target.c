/* The function a call instruction called (call_target.h). */
#include "call_target.h"

#include "memory.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CALL_REL32 0xe8        /* call rel32: 5 bytes */
#define CALL_RIP_INDIRECT 0x15 /* ff 15 disp32: call *disp32(%rip), 6 bytes */
#define PLT_STUB_READ 16
#define STUB_HOPS_MAX 2        /* a PLT stub, and the function it jumps to */

static int32_t rel32(const uint8_t *bytes)
{
    int32_t value;
    memcpy(&value, bytes, sizeof value);
    return value;
}

/* The address held in the GOT slot at `slot`; 0 when unreadable. */
static uint64_t through_slot(pid_t pid, uint64_t slot)
{
    uint64_t target = 0;
    return probe_read_memory(pid, slot, &target, sizeof target) ? target : 0;
}

/* Where the PLT stub at `stub` jumps: `jmp *disp32(%rip)`, after an endbr64 and a bnd prefix when the stub has
 * them (.plt.sec of a binary built for IBT); 0 when the bytes are no such stub. */
static uint64_t plt_stub_target(pid_t pid, uint64_t stub)
{
    uint8_t bytes[PLT_STUB_READ];
    if (!probe_read_memory(pid, stub, bytes, sizeof bytes))
        return 0;
    static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
    size_t at = 0;
    if (memcmp(bytes, endbr64, sizeof endbr64) == 0)
        at += sizeof endbr64;
    if (bytes[at] == 0xf2) /* bnd */
        at++;
    if (bytes[at] != 0xff || bytes[at + 1] != 0x25)
        return 0;
    uint64_t next = stub + at + 6;
    return through_slot(pid, next + (uint64_t)(int64_t)rel32(bytes + at + 2));
}

/* The symbol that starts exactly at `address`, malloc'd; NULL when none does. */
static char *function_at(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mappings, size_t nmappings,
                         uint64_t address)
{
    struct hd_frame frame = { .pc = address };
    char *name = NULL;
    if (probe_symbols_resolve(symbols, pid, mappings, nmappings, &frame) && frame.symbol && frame.symbol_offset == 0)
        name = frame.symbol, frame.symbol = NULL;
    free(frame.module);
    free(frame.symbol);
    return name;
}

char *probe_call_target_name(struct probe_symbols *symbols, pid_t pid, const struct hd_mapping *mappings,
                             size_t nmappings, uint64_t return_address)
{
    uint8_t call[6];
    if (return_address < sizeof call || !probe_read_memory(pid, return_address - sizeof call, call, sizeof call))
        return NULL;
    uint64_t target = 0;
    if (call[1] == CALL_REL32)
        target = return_address + (uint64_t)(int64_t)rel32(call + 2);
    else if (call[0] == 0xff && call[1] == CALL_RIP_INDIRECT)
        target = through_slot(pid, return_address + (uint64_t)(int64_t)rel32(call + 2));
    for (int hop = 0; target && hop < STUB_HOPS_MAX; hop++) {
        char *name = function_at(symbols, pid, mappings, nmappings, target);
        if (name)
            return name;
        target = plt_stub_target(pid, target);
    }
    return NULL;
}
