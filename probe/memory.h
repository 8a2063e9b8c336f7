/* Reading a target's memory without stopping it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads exactly `size` bytes at `address` of process `pid`: process_vm_readv(2), or /proc/<pid>/mem where that
 * is refused (kernels built without CONFIG_CROSS_MEMORY_ATTACH). False when the bytes could not all be read. */
bool probe_read_memory(pid_t pid, uint64_t address, void *buffer, size_t size);
/* The same, saying why not: 0, or -errno (-EPERM: no ptrace access, -ESRCH: gone, -EFAULT: not mapped). */
int probe_read_memory_checked(pid_t pid, uint64_t address, void *buffer, size_t size);

/* One range of a batch: `size` bytes at `address` into `buffer`; `got` says how many came. */
struct probe_memory_range {
    uint64_t address;
    void *buffer;
    size_t size;
    size_t got;
};
/* Reads each of `count` ranges of process `pid` as far as it is mapped: process_vm_readv(2) with as many ranges a
 * call as the kernel takes, each range that faults keeping what it gave and the next call starting after it; or
 * through /proc/<pid>/mem where the kernel has no cross-memory attach. 0, or -errno when the process refused them
 * (-EPERM: no ptrace access, -ESRCH: gone). */
int probe_read_memory_ranges(pid_t pid, struct probe_memory_range *ranges, size_t count);

/* The same, shaped as a probe_memory_reader (syscalls.h): `context` points to the pid. */
bool probe_read_memory_of(void *context, uint64_t address, void *buffer, size_t size);

/* A process whose memory is not the kernel's to give: one read from a core file (core_snapshot.h). Until
 * probe_memory_forget_offline(), every read of `pid` above goes to `read(context, ...)` instead, so that the
 * decoders of locks, join words and Python see a core as they see a live process. At most PROBE_OFFLINE_MAX. */
#define PROBE_OFFLINE_MAX 256
bool probe_memory_offline(pid_t pid, bool (*read)(void *context, uint64_t address, void *buffer, size_t size),
                          void *context);
void probe_memory_forget_offline(void);
