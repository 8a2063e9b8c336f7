/* System call names for each architecture hangdoc knows, and the decoding of what a blocked call waits for.
 *
 * Numbers differ between architectures (x86-64 has poll and wait4 where aarch64 has only ppoll and wait4 at
 * another number); the decoders are keyed by name, so one decoder serves every architecture.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The name of system call `nr` on `arch` (static), or NULL. */
const char *probe_syscall_name(enum hd_arch arch, long nr);
/* restart_syscall(2): how the kernel resumes a sleep a stop interrupted; its argument registers are still the
 * interrupted call's (probe_decode_wait decodes it as that call). */
bool probe_syscall_is_restart(const struct hd_syscall *syscall);

/* The system call an x86-64 thread was in, from its registers (struct user_regs_struct, as PTRACE_GETREGSET and a
 * core's NT_PRSTATUS give them): orig_rax holds the call's number from its entry on (-1 outside a call), rax its
 * result, which for a blocking call a stop, a signal or a core dump interrupted is one of the kernel's restart
 * codes. HD_SYSCALL_IN with the number and arguments then, HD_SYSCALL_NONE otherwise; the name is left unset.
 * False on another architecture. */
bool probe_syscall_from_registers(const void *registers, size_t size, struct hd_syscall *out);

/* Reads `size` bytes of the target's memory at `address`; false when they could not be read. */
typedef bool (*probe_memory_reader)(void *context, uint64_t address, void *buffer, size_t size);

/* Clock readings taken once per sample so that absolute deadlines become remaining time. */
struct probe_clocks {
    int64_t monotonic_ns;
    int64_t realtime_ns;
};

/* Decodes what `syscall` (state HD_SYSCALL_IN, name already set) waits for. Timeouts that the target passed by
 * pointer are read through `read_memory` (may be NULL: the timeout is then "unreadable"). `wchan`, the thread's wait
 * channel (may be NULL), names the call that a restart_syscall resumes: it is decoded as that call, from the same
 * argument registers, with the remaining time of a relative timeout unknown. */
void probe_decode_wait(const struct hd_syscall *syscall, const char *wchan, probe_memory_reader read_memory,
                       void *context, const struct probe_clocks *clocks, struct hd_wait *out);
