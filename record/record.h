/* Snapshot files: a snapshot saved whole (`hangdoc --save FILE`) and read back (`hangdoc analyze FILE`), so that the
 * rules of this or a later hangdoc judge what was seen after the process is gone.
 *
 * The file is one JSON document (docs/snapshot-format.md), gzip-compressed when larger than RECORD_COMPRESS_FROM:
 *   {"format": "hangdoc-snapshot", "version": 1, "written_by": "hangdoc 0.3.0 (commit ...)",
 *    "analysis": {"stuck_after_s": 60}, "snapshot": {...every member of snapshot.h, by name...}}
 * Target strings are kept exactly: valid UTF-8 as a JSON string, anything else as {"bytes": "<hex>"}.
 *
 * A file is hostile input: its size, its depth, every number's range, every enumeration's value, every string's
 * length and the order the analysis relies on (threads by tid, mappings by address) are checked, and a file that
 * fails any check is refused with the place it failed at, never half-read.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>

#define RECORD_FORMAT "hangdoc-snapshot"
/* Raised whenever what a saved value means changes (fields.c checks the enumerations). */
#define RECORD_FORMAT_VERSION 1
/* Files larger than this are written gzip-compressed; either kind is read. */
#define RECORD_COMPRESS_FROM (1u << 20)
/* The largest file read, and the largest document once decompressed: a 10,000-thread snapshot is about 30 MiB. */
#define RECORD_FILE_MAX (256u << 20)
#define RECORD_DOCUMENT_MAX (512u << 20)
/* And what json-c may build of it: a snapshot of 1,000 threads with stacks over 5 samples holds about 26,000
 * objects and 300,000 values (measured); the budget allows some 100,000 such threads, and bounds json-c's memory
 * to a few GiB whatever the file. */
#define RECORD_THREADS_BUDGET 100000
#define RECORD_OBJECTS_MAX 3000000
#define RECORD_VALUES_MAX 30000000

/* What the analysis of the saved run was told, so that analysing the file gives the report the run printed. */
struct record_analysis {
    double stuck_after_s;
};

/* Writes the snapshot and its analysis settings to `path` ("-": standard output). 0, or -errno after putting what
 * went wrong into `error`. */
int record_save(const char *path, const struct hd_snapshot *snapshot, const struct record_analysis *analysis,
                char *error, size_t error_size);

/* Reads a snapshot file ("-": standard input). 0 with *snapshot set (the caller frees it), or -errno (EINVAL for
 * a file that is not a snapshot this hangdoc reads) with `error` saying why, naming the place in the file. */
int record_load(const char *path, struct hd_snapshot **snapshot, struct record_analysis *analysis, char *error,
                size_t error_size);

/* The same over a file's bytes, compressed or not: what record_load does once it has read the file. */
int record_parse(const void *bytes, size_t length, struct hd_snapshot **snapshot, struct record_analysis *analysis,
                 char *error, size_t error_size);
