/* A block cache over a target's memory (python_memory.h). */
#include "python_memory.h"

#include "memory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* 1 KiB aligned blocks: no page is smaller, so none straddles two. 256 of them: the stacks of a few hundred
 * threads' worth of direct-mapped slots, 256 KiB. */
#define BLOCK 1024u
#define SLOTS 256u
#define EMPTY UINT64_MAX

bool probe_memory_cache_init(struct probe_memory_cache *cache)
{
    *cache = (struct probe_memory_cache){ 0 };
    cache->blocks = malloc(SLOTS * sizeof *cache->blocks);
    cache->data = malloc(SLOTS * BLOCK);
    if (!cache->blocks || !cache->data) {
        probe_memory_cache_free(cache);
        return false;
    }
    probe_memory_cache_forget(cache);
    return true;
}

void probe_memory_cache_free(struct probe_memory_cache *cache)
{
    free(cache->blocks);
    free(cache->data);
    *cache = (struct probe_memory_cache){ 0 };
}

void probe_memory_cache_forget(struct probe_memory_cache *cache)
{
    for (size_t slot = 0; slot < SLOTS; slot++)
        cache->blocks[slot] = EMPTY;
}

void probe_memory_cache_reset(struct probe_memory_cache *cache, pid_t pid)
{
    cache->pid = pid;
    probe_memory_cache_forget(cache);
}

/* The cached copy of the block at `block` (aligned), read now when its slot holds another; NULL with *error set
 * when it cannot be read. */
static const uint8_t *block_at(struct probe_memory_cache *cache, uint64_t block, int *error)
{
    size_t slot = (size_t)(block / BLOCK) % SLOTS;
    uint8_t *data = cache->data + slot * BLOCK;
    if (cache->blocks[slot] == block)
        return data;
    cache->blocks[slot] = EMPTY;
    *error = probe_read_memory_checked(cache->pid, block, data, BLOCK);
    if (*error)
        return NULL;
    cache->blocks[slot] = block;
    return data;
}

int probe_memory_cache_read(struct probe_memory_cache *cache, uint64_t address, void *buffer, size_t size)
{
    if (size > BLOCK || address > UINT64_MAX - size - BLOCK)
        return probe_read_memory_checked(cache->pid, address, buffer, size);
    uint8_t *out = buffer;
    while (size > 0) {
        uint64_t block = address - address % BLOCK;
        size_t within = (size_t)(address - block);
        size_t take = BLOCK - within < size ? BLOCK - within : size;
        int error = 0;
        const uint8_t *data = block_at(cache, block, &error);
        if (!data)
            return error ? error : -EFAULT;
        memcpy(out, data + within, take);
        out += take;
        address += take;
        size -= take;
    }
    return 0;
}
