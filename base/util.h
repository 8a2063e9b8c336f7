/* What every room may use (base/, visible to all): the size of an array, scope-bound release of memory, descriptors
 * and objects (the cleanup attribute of gcc and clang, as bubblewrap and systemd use it), and a lower-bound search.
 *
 *     char *text cleanup_free = malloc(size);      freed when `text` goes out of scope, whatever the path out
 *     int fd cleanup_fd = open(path, O_RDONLY);     closed likewise (errno kept); -1 is left alone
 *     return steal_pointer(&text);                  hands it over: the cleanup then frees NULL
 *
 * A type with a release function of its own gets a cleanup with HD_DEFINE_CLEANUP(type, function) next to its
 * declaration, and is declared `struct x *p hd_cleanup(function) = NULL;`.
 */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static inline void hd_free_pointer(void *pointer)
{
    free(*(void **)pointer);
}

static inline void hd_close_fd(const int *fd)
{
    if (*fd < 0)
        return;
    int saved = errno;
    close(*fd);
    errno = saved;
}

#define cleanup_free __attribute__((cleanup(hd_free_pointer)))
#define cleanup_fd __attribute__((cleanup(hd_close_fd)))

static inline void *hd_steal_pointer(void *pointer)
{
    void **slot = pointer;
    void *value = *slot;
    *slot = NULL;
    return value;
}
#define steal_pointer(pointer) ((__typeof__(*(pointer)))hd_steal_pointer(pointer))

static inline int steal_fd(int *fd)
{
    int value = *fd;
    *fd = -1;
    return value;
}

/* A cleanup for `type *` that calls `function` on it unless it is NULL: HD_DEFINE_CLEANUP(struct hd_snapshot,
 * hd_snapshot_free) makes `hd_cleanup(hd_snapshot_free)`. */
#define HD_DEFINE_CLEANUP(type, function)                                                                              \
    static inline void function##_cleanup(type **pointer)                                                           \
    {                                                                                                                \
        if (*pointer)                                                                                                \
            function(*pointer);                                                                                      \
    }
#define hd_cleanup(function) __attribute__((cleanup(function##_cleanup)))

/* A cleanup by a function that takes the variable's address (`void release(struct x *)`) for a structure kept by
 * value: `struct search s cleanup_with(search_release) = { 0 };` */
#define cleanup_with(function) __attribute__((cleanup(function)))

/* A comparator of hd_lower_bound()'s shape, `static int name(const void *key, const void *element)`, for a key of
 * `key_type` against the `member` of an element of `element_type` (`.inode`; nothing for an array of keys):
 *     HD_KEY_COMPARATOR(compare_tid, pid_t, struct hd_thread, .tid) */
#define HD_KEY_COMPARATOR(name, key_type, element_type, member)                                                       \
    static int name(const void *key, const void *element)                                                            \
    {                                                                                                                \
        key_type wanted = *(const key_type *)key, found = (*(const element_type *)element)member;                    \
        return wanted < found ? -1 : wanted > found;                                                                 \
    }

/* The index of the first of `count` sorted elements of `size` bytes at `base` that does not come before `key`;
 * `count` when all do. `compare(key, element)` as bsearch's: negative, zero or positive as the key comes before,
 * at or after the element. */
size_t hd_lower_bound(const void *key, const void *base, size_t count, size_t size,
                      int (*compare)(const void *key, const void *element));
