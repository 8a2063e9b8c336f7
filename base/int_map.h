/* A map from non-zero integers to a number (the index of what the caller keeps about that key): pids and tids
 * (probe/pid_map.h views it so), addresses in a target (thread states seen, code objects read).
 *
 * hangdoc meets a key again and again (each thread in each sample, each code object of each frame); with 10,000
 * threads a scan per look-up is 10^8 comparisons a pass. Open addressing with linear probing, grown at half full,
 * so that a look-up costs a probe or two whatever the size; removal shifts the run back, so no tombstones
 * accumulate. 0 marks an empty slot, so it is no key.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hd_int_map {
    uint64_t *keys;
    size_t *values;
    size_t capacity; /* a power of two, or 0 before the first put */
    size_t count;
};

/* Sets the value of `key` (not 0), adding it when absent. False when the key is 0, or memory ran out (the map is
 * then unchanged). */
bool hd_int_map_put(struct hd_int_map *map, uint64_t key, size_t value);
/* Adds `key` with `value` when absent and says so; false when it was there already (its value unchanged), is 0,
 * or memory ran out (*failed then says which, when not NULL). */
bool hd_int_map_add(struct hd_int_map *map, uint64_t key, size_t value, bool *failed);
/* The value of `key` in *value; false when absent. */
bool hd_int_map_get(const struct hd_int_map *map, uint64_t key, size_t *value);
void hd_int_map_remove(struct hd_int_map *map, uint64_t key);
/* Frees what the map holds and empties it. */
void hd_int_map_clear(struct hd_int_map *map);
