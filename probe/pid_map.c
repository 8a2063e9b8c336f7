/* Open-addressing pid map (pid_map.h). */
#include "pid_map.h"

#include <stdint.h>
#include <stdlib.h>

#define FIRST_CAPACITY 64

/* Fibonacci hashing: pids come in runs (a pool's threads are consecutive), which this spreads. */
static size_t slot_of(const struct probe_pid_map *map, pid_t pid)
{
    return (size_t)(((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ULL) >> 32) & (map->capacity - 1);
}

/* The slot holding `pid`, or the empty slot where it would go. */
static size_t find_slot(const struct probe_pid_map *map, pid_t pid)
{
    size_t slot = slot_of(map, pid);
    while (map->keys[slot] != 0 && map->keys[slot] != pid)
        slot = (slot + 1) & (map->capacity - 1);
    return slot;
}

static bool grow(struct probe_pid_map *map)
{
    size_t capacity = map->capacity ? 2 * map->capacity : FIRST_CAPACITY;
    struct probe_pid_map grown = { .capacity = capacity, .count = map->count };
    grown.keys = calloc(capacity, sizeof *grown.keys);
    grown.values = malloc(capacity * sizeof *grown.values);
    if (!grown.keys || !grown.values) {
        free(grown.keys);
        free(grown.values);
        return false;
    }
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

bool probe_pid_map_add(struct probe_pid_map *map, pid_t pid, size_t value, bool *failed)
{
    if (failed)
        *failed = false;
    if (pid <= 0)
        return false;
    if (map->capacity && map->keys[find_slot(map, pid)] == pid)
        return false;
    if (2 * (map->count + 1) > map->capacity && !grow(map)) {
        if (failed)
            *failed = true;
        return false;
    }
    size_t slot = find_slot(map, pid);
    map->keys[slot] = pid;
    map->values[slot] = value;
    map->count++;
    return true;
}

bool probe_pid_map_put(struct probe_pid_map *map, pid_t pid, size_t value)
{
    if (pid <= 0)
        return false;
    if (map->capacity) {
        size_t slot = find_slot(map, pid);
        if (map->keys[slot] == pid) {
            map->values[slot] = value;
            return true;
        }
    }
    bool failed;
    probe_pid_map_add(map, pid, value, &failed);
    return !failed;
}

bool probe_pid_map_get(const struct probe_pid_map *map, pid_t pid, size_t *value)
{
    if (!map->capacity || pid <= 0)
        return false;
    size_t slot = find_slot(map, pid);
    if (map->keys[slot] != pid)
        return false;
    *value = map->values[slot];
    return true;
}

void probe_pid_map_remove(struct probe_pid_map *map, pid_t pid)
{
    if (!map->capacity || pid <= 0)
        return;
    size_t hole = find_slot(map, pid);
    if (map->keys[hole] != pid)
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

void probe_pid_map_clear(struct probe_pid_map *map)
{
    free(map->keys);
    free(map->values);
    *map = (struct probe_pid_map){ 0 };
}
