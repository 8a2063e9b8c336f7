/* A map from pids (or tids) to a number: the index of what the caller keeps about that pid.
 *
 * hangdoc meets a pid again and again (each thread in each sample, each seized thread when it is let go); with
 * 10,000 threads a scan per look-up is 10^8 comparisons a pass. Open addressing with linear probing, grown at
 * half full, so that a look-up costs a probe or two whatever the size; removal shifts the run back, so no
 * tombstones accumulate. Keys are positive: 0 marks an empty slot.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct probe_pid_map {
    pid_t *keys;
    size_t *values;
    size_t capacity; /* a power of two, or 0 before the first put */
    size_t count;
};

/* Sets the value of `pid` (> 0), adding it when absent. False only when memory ran out (the map is unchanged). */
bool probe_pid_map_put(struct probe_pid_map *map, pid_t pid, size_t value);
/* Adds `pid` with `value` when absent and says so; false when it was there already (its value unchanged) or
 * memory ran out (*failed then says which, when not NULL). */
bool probe_pid_map_add(struct probe_pid_map *map, pid_t pid, size_t value, bool *failed);
/* The value of `pid` in *value; false when absent. */
bool probe_pid_map_get(const struct probe_pid_map *map, pid_t pid, size_t *value);
void probe_pid_map_remove(struct probe_pid_map *map, pid_t pid);
/* Frees what the map holds and empties it. */
void probe_pid_map_clear(struct probe_pid_map *map);
