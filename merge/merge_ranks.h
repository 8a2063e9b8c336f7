/* Sets of ranks for `hangdoc merge`: sorted and without repeats, folded into ranges for people, the way STAT labels
 * the branches of its prefix tree ("ranks 0-62,64-127 (126)").
 *
 * Ranks arrive mostly in ascending order (the merge walks its rank table in order), so adding one is an append;
 * an out-of-order rank is inserted in place.
 */
#pragma once

#include "buffer.h"

#include <stdbool.h>
#include <stddef.h>

struct report_rank_set {
    int *ranks; /* ascending, each once */
    size_t count;
    size_t capacity;
};

/* Adds `rank` (>= 0) where it belongs; a rank already there is not added twice. False when memory ran out. */
bool report_rank_set_add(struct report_rank_set *set, int rank);
bool report_rank_set_contains(const struct report_rank_set *set, int rank);
bool report_rank_set_equal(const struct report_rank_set *a, const struct report_rank_set *b);
/* The ranks of [0, world_size) that `seen` lacks, into `missing` (emptied first). False when memory ran out. */
bool report_rank_set_complement(const struct report_rank_set *seen, int world_size, struct report_rank_set *missing);
void report_rank_set_release(struct report_rank_set *set);

/* The next range of consecutive ranks, from `*cursor` (start at 0): false after the last. */
bool report_rank_set_next_range(const struct report_rank_set *set, size_t *cursor, int *first, int *last);
/* "0-62,64-127": at most `max_ranges` ranges (0: all), then ",…" when there are more. */
void report_rank_set_fold(const struct report_rank_set *set, struct report_buffer *out, size_t max_ranges);
/* "rank 63", "ranks 0-62,64-127 (126)", "no rank" */
void report_rank_set_describe(const struct report_rank_set *set, struct report_buffer *out, size_t max_ranges);
