/* Reading a target's memory a block at a time, for the Python stack reader (python.c).
 *
 * A Python stack is a chain of small structs (a thread state, frames of 80 bytes and their locals, the next
 * frame...) that lie close together: a thread's frames share its data stack chunk (3.11+). One process_vm_readv
 * per struct cost the reader 3,600 calls on a 200-thread process, each a system call's worth of time; aligned
 * blocks of 1 KiB, kept in a small direct-mapped cache, cost a quarter of the calls. Larger blocks save fewer calls
 * than their copying costs (measured: 4 KiB pages took longer than 1 KiB blocks), smaller ones more calls. A block
 * never straddles a page, so it is mapped whole or not at all, as a struct read would be.
 *
 * The blocks are read when first touched, so they show the target at slightly different moments, as the struct
 * reads did; forget them to see the memory as it is now.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct probe_memory_cache {
    pid_t pid;
    uint64_t *blocks; /* the address of the block held in each slot; UINT64_MAX: none */
    uint8_t *data;
};

/* False when memory ran out. */
bool probe_memory_cache_init(struct probe_memory_cache *cache);
void probe_memory_cache_free(struct probe_memory_cache *cache);
/* Drops every block and reads `pid`'s memory from now on. */
void probe_memory_cache_reset(struct probe_memory_cache *cache, pid_t pid);
/* Drops every block: the next reads see the memory as it is now. */
void probe_memory_cache_forget(struct probe_memory_cache *cache);
/* Reads exactly `size` bytes at `address` through the cache (memory.h's probe_read_memory_checked for the blocks
 * it does not hold; directly for reads larger than a block). 0, or -errno. */
int probe_memory_cache_read(struct probe_memory_cache *cache, uint64_t address, void *buffer, size_t size);
