/* Rank sets and their folding into ranges (merge_ranks.h). */
#include "merge_ranks.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

/* The index of the first rank >= `rank`. */
HD_KEY_COMPARATOR(compare_int, int, int, )

static size_t lower_bound(const struct report_rank_set *set, int rank)
{
    return hd_lower_bound(&rank, set->ranks, set->count, sizeof *set->ranks, compare_int);
}

bool report_rank_set_add(struct report_rank_set *set, int rank)
{
    size_t at = set->count > 0 && set->ranks[set->count - 1] < rank ? set->count : lower_bound(set, rank);
    if (at < set->count && set->ranks[at] == rank)
        return true;
    if (set->count == set->capacity) {
        size_t capacity = set->capacity ? set->capacity * 2 : 4;
        int *grown = realloc(set->ranks, capacity * sizeof *grown);
        if (!grown)
            return false;
        set->ranks = grown;
        set->capacity = capacity;
    }
    memmove(set->ranks + at + 1, set->ranks + at, (set->count - at) * sizeof *set->ranks);
    set->ranks[at] = rank;
    set->count++;
    return true;
}

bool report_rank_set_contains(const struct report_rank_set *set, int rank)
{
    size_t at = lower_bound(set, rank);
    return at < set->count && set->ranks[at] == rank;
}

bool report_rank_set_equal(const struct report_rank_set *a, const struct report_rank_set *b)
{
    return a->count == b->count && (a->count == 0 || memcmp(a->ranks, b->ranks, a->count * sizeof *a->ranks) == 0);
}

bool report_rank_set_complement(const struct report_rank_set *seen, int world_size, struct report_rank_set *missing)
{
    missing->count = 0;
    size_t next_seen = 0;
    for (int rank = 0; rank < world_size; rank++) {
        while (next_seen < seen->count && seen->ranks[next_seen] < rank)
            next_seen++;
        if (next_seen < seen->count && seen->ranks[next_seen] == rank)
            continue;
        if (!report_rank_set_add(missing, rank))
            return false;
    }
    return true;
}

void report_rank_set_release(struct report_rank_set *set)
{
    free(set->ranks);
    *set = (struct report_rank_set){ 0 };
}

bool report_rank_set_next_range(const struct report_rank_set *set, size_t *cursor, int *first, int *last)
{
    if (*cursor >= set->count)
        return false;
    size_t end = *cursor;
    /* the ranks are distinct and ascending, so a run of consecutive values is a run of +1 steps */
    while (end + 1 < set->count && set->ranks[end + 1] == set->ranks[end] + 1)
        end++;
    *first = set->ranks[*cursor];
    *last = set->ranks[end];
    *cursor = end + 1;
    return true;
}

void report_rank_set_fold(const struct report_rank_set *set, struct report_buffer *out, size_t max_ranges)
{
    size_t cursor = 0, shown = 0;
    int first, last;
    while (report_rank_set_next_range(set, &cursor, &first, &last)) {
        if (max_ranges && shown == max_ranges) {
            report_buffer_puts(out, ",…");
            return;
        }
        report_buffer_printf(out, shown ? ",%d" : "%d", first);
        if (last != first)
            report_buffer_printf(out, "-%d", last);
        shown++;
    }
}

void report_rank_set_describe(const struct report_rank_set *set, struct report_buffer *out, size_t max_ranges)
{
    if (set->count == 0) {
        report_buffer_puts(out, "no rank");
        return;
    }
    report_buffer_puts(out, set->count == 1 ? "rank " : "ranks ");
    report_rank_set_fold(set, out, max_ranges);
    if (set->count > 1)
        report_buffer_printf(out, " (%zu)", set->count);
}
