/* The integer map (base/int_map.h) keyed by pid or tid: a pid is positive, and these refuse one that is not. */
#pragma once

#include "int_map.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct probe_pid_map {
    struct hd_int_map map;
};

/* Sets the value of `pid` (> 0), adding it when absent. False when it is no pid, or memory ran out. */
static inline bool probe_pid_map_put(struct probe_pid_map *map, pid_t pid, size_t value)
{
    return pid > 0 && hd_int_map_put(&map->map, (uint64_t)pid, value);
}

/* Adds `pid` with `value` when absent and says so; false when it was there already (its value unchanged), is no
 * pid, or memory ran out (*failed then says which, when not NULL). */
static inline bool probe_pid_map_add(struct probe_pid_map *map, pid_t pid, size_t value, bool *failed)
{
    if (pid <= 0) {
        if (failed)
            *failed = false;
        return false;
    }
    return hd_int_map_add(&map->map, (uint64_t)pid, value, failed);
}

/* The value of `pid` in *value; false when absent. */
static inline bool probe_pid_map_get(const struct probe_pid_map *map, pid_t pid, size_t *value)
{
    return pid > 0 && hd_int_map_get(&map->map, (uint64_t)pid, value);
}

static inline void probe_pid_map_remove(struct probe_pid_map *map, pid_t pid)
{
    if (pid > 0)
        hd_int_map_remove(&map->map, (uint64_t)pid);
}

/* Frees what the map holds and empties it. */
static inline void probe_pid_map_clear(struct probe_pid_map *map)
{
    hd_int_map_clear(&map->map);
}
