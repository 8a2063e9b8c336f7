/* The lower-bound search (util.h). */
#include "util.h"

size_t hd_lower_bound(const void *key, const void *base, size_t count, size_t size,
                      int (*compare)(const void *key, const void *element))
{
    const char *elements = base;
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (compare(key, elements + middle * size) > 0)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}
