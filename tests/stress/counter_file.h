/* The counter file of a stress target: kill_at_random creates it, the target maps it MAP_SHARED and counts in it,
 * one counter per thread (or kind of work), so that kill_at_random can tell from outside that each part of the
 * target still makes progress, and name the one that stopped. busy_target.py writes the same layout with struct
 * and ctypes: change both together.
 *
 *   line 0       the magic "hdcount1", then how many counters are in use (uint64), written before the ready line
 *   lines 1..63  one counter each: a uint64 its one writer increments, then its name (NUL-terminated)
 *
 * Each counter has a 64-byte line of its own: spinners counting side by side would share a cache line otherwise.
 */
#pragma once

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define COUNTER_FILE_MAGIC "hdcount1"
#define COUNTER_FILE_SIZE 4096
#define COUNTER_NAME_MAX 56
#define COUNTERS_MAX 63

struct counter_line {
    uint64_t count;
    char name[COUNTER_NAME_MAX];
};

struct counter_file {
    char magic[8];
    uint64_t ncounters;
    char unused[48];
    struct counter_line counters[COUNTERS_MAX];
};

_Static_assert(sizeof(struct counter_line) == 64, "one counter per cache line");
_Static_assert(sizeof(struct counter_file) == COUNTER_FILE_SIZE, "the layout busy_target.py writes");

/* Maps the counter file at `path` (which must be COUNTER_FILE_SIZE bytes long) shared; NULL when it cannot. */
static inline struct counter_file *counter_file_map(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    void *mapped = mmap(NULL, COUNTER_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return mapped == MAP_FAILED ? NULL : mapped;
}

static inline uint64_t counter_read(const struct counter_line *line)
{
    return __atomic_load_n(&line->count, __ATOMIC_RELAXED);
}

/* Relaxed: only the count's rising matters, never its order against other memory. */
static inline void counter_add(struct counter_line *line)
{
    __atomic_fetch_add(&line->count, 1, __ATOMIC_RELAXED);
}
