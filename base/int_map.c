/* The open-addressing map (int_map.h). */
#include "int_map.h"

#include "util.h"

#include <stdint.h>
#include <stdlib.h>

#define FIRST_CAPACITY 64

/* Fibonacci hashing: pids come in runs (a pool's threads are consecutive) and addresses in strides (objects 16
 * bytes apart), which the multiplication spreads into the high bits taken. */
static size_t slot_of(const struct hd_int_map *map, uint64_t key)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (map->capacity - 1);
}

/* The slot holding `key`, or the empty slot where it would go. */
static size_t find_slot(const struct hd_int_map *map, uint64_t key)
{
    size_t slot = slot_of(map, key);
    while (map->keys[slot] != 0 && map->keys[slot] != key)
        slot = (slot + 1) & (map->capacity - 1);
    return slot;
}

static bool grow(struct hd_int_map *map)
{
    size_t capacity = map->capacity ? 2 * map->capacity : FIRST_CAPACITY;
    uint64_t *keys cleanup_free = calloc(capacity, sizeof *keys);
    size_t *values cleanup_free = malloc(capacity * sizeof *values);
    if (!keys || !values)
        return false;
    struct hd_int_map grown = { .keys = steal_pointer(&keys), .values = steal_pointer(&values), .capacity = capacity,
                                .count = map->count };
    for (size_t i = 0; i < map->capacity; i++)
        if (map->keys[i] != 0) {
            size_t slot = find_slot(&grown, map->keys[i]);
            grown.keys[slot] = map->keys[i];
            grown.values[slot] = map->values[i];
        }
    free(map->keys);
    free(map->values);
    *map = grown;
    return true;
}

bool hd_int_map_add(struct hd_int_map *map, uint64_t key, size_t value, bool *failed)
{
    if (failed)
        *failed = false;
    if (key == 0)
        return false;
    if (map->capacity && map->keys[find_slot(map, key)] == key)
        return false;
    if (2 * (map->count + 1) > map->capacity && !grow(map)) {
        if (failed)
            *failed = true;
        return false;
    }
    size_t slot = find_slot(map, key);
    map->keys[slot] = key;
    map->values[slot] = value;
    map->count++;
    return true;
}

bool hd_int_map_put(struct hd_int_map *map, uint64_t key, size_t value)
{
    if (key == 0)
        return false;
    if (map->capacity) {
        size_t slot = find_slot(map, key);
        if (map->keys[slot] == key) {
            map->values[slot] = value;
            return true;
        }
    }
    bool failed;
    hd_int_map_add(map, key, value, &failed);
    return !failed;
}

bool hd_int_map_get(const struct hd_int_map *map, uint64_t key, size_t *value)
{
    if (!map->capacity || key == 0)
        return false;
    size_t slot = find_slot(map, key);
    if (map->keys[slot] != key)
        return false;
    *value = map->values[slot];
    return true;
}

void hd_int_map_remove(struct hd_int_map *map, uint64_t key)
{
    if (!map->capacity || key == 0)
        return;
    size_t hole = find_slot(map, key);
    if (map->keys[hole] != key)
        return;
    map->keys[hole] = 0;
    map->count--;
    /* Backward-shift deletion: an entry further along the run moves into the hole unless its home slot lies
     * (cyclically) after the hole, where a look-up starting there would no longer pass the hole. */
    size_t mask = map->capacity - 1;
    for (size_t next = (hole + 1) & mask; map->keys[next] != 0; next = (next + 1) & mask) {
        size_t home = slot_of(map, map->keys[next]);
        bool stays = ((next - home) & mask) < ((next - hole) & mask);
        if (stays)
            continue;
        map->keys[hole] = map->keys[next];
        map->values[hole] = map->values[next];
        map->keys[next] = 0;
        hole = next;
    }
}

void hd_int_map_clear(struct hd_int_map *map)
{
    free(map->keys);
    free(map->values);
    *map = (struct hd_int_map){ 0 };
}
