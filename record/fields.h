/* The snapshot file's fields: one table per structure of the model (snapshot.h), naming each member, its key in
 * the file and how it is held. The writer and the reader (record.c) walk the same tables, so a member is saved and
 * read back by adding one line; test_record checks that every byte of every structure is a member of its table or
 * the padding the compiler put before the next one, so that a member added to snapshot.h and not here fails a test
 * instead of being silently lost by every saved snapshot.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum record_kind {
    RECORD_BOOL,
    RECORD_CHAR,     /* one byte, saved as a string of at most one byte */
    RECORD_INT,      /* int, pid_t */
    RECORD_UNSIGNED, /* unsigned, uint32_t, uid_t */
    RECORD_LONG,     /* long, int64_t */
    RECORD_U64,      /* saved as "0x..." text: JSON numbers lose precision past 2^53 */
    RECORD_DOUBLE,   /* null for NaN */
    RECORD_ENUM,     /* an int-sized enum: values from 0 to `limit` - 1 */
    RECORD_TEXT,     /* char[size], NUL-terminated: a target's bytes */
    RECORD_STRING,   /* char *, owned: a target's bytes, or NULL */
    RECORD_STATIC,   /* const char *, static in a snapshot probe made: kept by the snapshot read (snapshot.h) */
    RECORD_U64S,     /* uint64_t[limit] */
    RECORD_INTS,     /* int[limit] */
    RECORD_STRUCT,   /* a structure held in place: `element` */
    RECORD_ARRAY,    /* a pointer to `count` elements of `element`, the count a size_t at `count_offset` */
    RECORD_OPTIONAL, /* a pointer to one `element`, or NULL */
    RECORD_PIDS,     /* a pointer to `count` pid_t */
    RECORD_ARGV,     /* char **, NULL-terminated, with `count` strings */
    RECORD_CAPACITY, /* not saved: the room of the array whose count is at `count_offset`, set to the count */
    RECORD_DERIVED,  /* not saved: made again once read (an index), or what the reading itself keeps */
};

struct record_struct;

struct record_field {
    const char *key;
    enum record_kind kind;
    size_t offset;
    size_t size; /* of the member: the test checks it against the kind */
    size_t align;
    long limit;  /* RECORD_ENUM: the number of values; RECORD_U64S, RECORD_INTS: the number of elements;
                  * RECORD_UNSIGNED: when not 0, one more than its largest value (a count of a fixed array) */
    bool required; /* RECORD_STRING: never NULL in a snapshot probe makes, and the analysis relies on it */
    size_t count_offset; /* RECORD_ARRAY, RECORD_PIDS, RECORD_ARGV, RECORD_CAPACITY */
    const struct record_struct *element;
};

struct record_struct {
    const char *name;
    size_t size;
    size_t align;
    const struct record_field *fields;
    size_t nfields;
};

/* The snapshot itself, and from it every structure it holds. */
extern const struct record_struct record_snapshot_struct;
/* Every table, for the test that checks their coverage. */
extern const struct record_struct *const record_all_structs[];
extern const size_t record_nall_structs;
