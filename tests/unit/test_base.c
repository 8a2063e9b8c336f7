/* The integer map (base/int_map.h) and its pid view (probe/pid_map.h): look-ups, updates and removals that keep
 * every other key findable, at the sizes hangdoc meets (10,000 threads) and with the runs of consecutive tids a
 * thread pool has. */
#include "pid_map.h"
#include "util.h"

#include <criterion/criterion.h>
#include <stdint.h>

Test(pid_map, empty_map_finds_nothing_and_refuses_non_pids)
{
    struct probe_pid_map map = { 0 };
    size_t value = 7;
    cr_assert_not(probe_pid_map_get(&map, 1, &value));
    probe_pid_map_remove(&map, 1); /* nothing to remove: no crash */
    cr_assert_not(probe_pid_map_put(&map, 0, 1), "0 is no pid (it marks an empty slot)");
    cr_assert_not(probe_pid_map_put(&map, -5, 1));
    cr_assert_eq(map.map.count, 0);
    cr_assert_eq(value, 7, "untouched when absent");
    probe_pid_map_clear(&map);
}

Test(pid_map, put_updates_add_does_not)
{
    struct probe_pid_map map = { 0 };
    cr_assert(probe_pid_map_put(&map, 42, 1));
    cr_assert(probe_pid_map_put(&map, 42, 2));
    size_t value = 0;
    cr_assert(probe_pid_map_get(&map, 42, &value) && value == 2);
    bool failed = true;
    cr_assert_not(probe_pid_map_add(&map, 42, 3, &failed), "already there");
    cr_assert_not(failed);
    cr_assert(probe_pid_map_get(&map, 42, &value) && value == 2, "add keeps the old value");
    cr_assert(probe_pid_map_add(&map, 43, 3, NULL));
    cr_assert_eq(map.map.count, 2);
    probe_pid_map_clear(&map);
    cr_assert_eq(map.map.count, 0);
    cr_assert_not(probe_pid_map_get(&map, 42, &value));
}

/* 10,000 consecutive tids (a pool), then every third removed: the rest must still be found through the runs that
 * the removals shifted back, and the removed ones not at all. */
Test(pid_map, ten_thousand_tids_with_removals)
{
    enum { FIRST = 30000, COUNT = 10000 };
    struct probe_pid_map map = { 0 };
    for (size_t i = 0; i < COUNT; i++)
        cr_assert(probe_pid_map_put(&map, (pid_t)(FIRST + i), i));
    cr_assert_eq(map.map.count, COUNT);
    for (size_t i = 0; i < COUNT; i += 3)
        probe_pid_map_remove(&map, (pid_t)(FIRST + i));
    for (size_t i = 0; i < COUNT; i++) {
        size_t value = SIZE_MAX;
        bool found = probe_pid_map_get(&map, (pid_t)(FIRST + i), &value);
        if (i % 3 == 0)
            cr_assert_not(found, "tid %zu was removed", FIRST + i);
        else
            cr_assert(found && value == i, "tid %zu is still there with its value", FIRST + i);
    }
    /* and the slots freed are taken again */
    for (size_t i = 0; i < COUNT; i += 3)
        cr_assert(probe_pid_map_add(&map, (pid_t)(FIRST + i), i + 1, NULL));
    cr_assert_eq(map.map.count, COUNT);
    size_t value;
    cr_assert(probe_pid_map_get(&map, FIRST, &value) && value == 1);
    probe_pid_map_clear(&map);
}

/* Keys spread over the whole pid range (distinct: 7919 is prime to 2^22), removed in another order than they
 * came, down to none. */
Test(pid_map, scattered_keys_removed_to_empty)
{
    enum { COUNT = 5000 };
    static pid_t keys[COUNT];
    struct probe_pid_map map = { 0 };
    for (size_t i = 0; i < COUNT; i++) {
        keys[i] = (pid_t)(1 + (i * 7919) % 4194304);
        probe_pid_map_put(&map, keys[i], (size_t)keys[i]);
    }
    for (size_t i = COUNT; i-- > 0;) {
        size_t value;
        cr_assert(probe_pid_map_get(&map, keys[i], &value) && value == (size_t)keys[i]);
        probe_pid_map_remove(&map, keys[i]);
        cr_assert_not(probe_pid_map_get(&map, keys[i], &value));
    }
    cr_assert_eq(map.map.count, 0);
    probe_pid_map_clear(&map);
}

/* The same map keyed by addresses in a target (base/int_map.h): objects 16 bytes apart in a high mapping, as
 * CPython's code objects and thread states are; address 0 is no key. */
Test(int_map, addresses_in_strides)
{
    enum { COUNT = 10000 };
    const uint64_t base = 0x7f3a5c000000ull;
    struct hd_int_map map = { 0 };
    cr_assert_not(hd_int_map_put(&map, 0, 1), "0 marks an empty slot");
    for (size_t i = 0; i < COUNT; i++)
        cr_assert(hd_int_map_add(&map, base + 16 * i, i, NULL));
    cr_assert_not(hd_int_map_add(&map, base, 99, NULL), "already there");
    for (size_t i = 0; i < COUNT; i += 2)
        hd_int_map_remove(&map, base + 16 * i);
    for (size_t i = 0; i < COUNT; i++) {
        size_t value = SIZE_MAX;
        cr_assert_eq(hd_int_map_get(&map, base + 16 * i, &value), i % 2 == 1, "address %zu", i);
        if (i % 2 == 1)
            cr_assert_eq(value, i);
    }
    cr_assert_eq(map.count, COUNT / 2);
    hd_int_map_clear(&map);
    cr_assert_eq(map.count, 0);
}

static int compare_ints(const void *key, const void *element)
{
    int a = *(const int *)key, b = *(const int *)element;
    return a < b ? -1 : a > b;
}

/* The first element that does not come before the key: the key's own place among equals, the end past them all. */
Test(lower_bound, the_first_not_before_the_key)
{
    static const int sorted[] = { 2, 4, 4, 4, 9 };
    const struct {
        int key;
        size_t at;
    } cases[] = { { 1, 0 }, { 2, 0 }, { 3, 1 }, { 4, 1 }, { 5, 4 }, { 9, 4 }, { 10, 5 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(hd_lower_bound(&cases[i].key, sorted, 5, sizeof *sorted, compare_ints), cases[i].at, "key %d",
                     cases[i].key);
    int key = 3;
    cr_assert_eq(hd_lower_bound(&key, sorted, 0, sizeof *sorted, compare_ints), 0u, "nothing to search");
}
