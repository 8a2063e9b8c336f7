/* The catalogue of runtimes and their fork safety: one row per runtime, data a reviewer reads line by line.
 *
 * A row names a runtime by the libraries it ships (soname or file name patterns), the threads it starts (thread
 * name patterns) and the handles it opens (fd target patterns), says whether a child forked from a process that
 * runs it is safe, why, and what to do. Users extend it with a file (report_catalogue_load; format in hangdoc(1)).
 */
#pragma once

#include "util.h"
#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>

enum report_fork_safety {
    REPORT_FORK_UNSAFE,  /* a forked child that uses it can hang or crash */
    REPORT_FORK_AWARE,   /* it re-initialises itself in the child (pthread_atfork) */
    REPORT_FORK_DEPENDS, /* on its configuration (a backend, an environment variable) */
};

/* What the rules need to know of a runtime beyond its patterns: facts, tested as flags, not names compared. */
enum report_runtime_trait {
    REPORT_RUNTIME_GPU_CONTEXT = 1 << 0,  /* a GPU context whose device handles a child inherits (cuda-inherited) */
    REPORT_RUNTIME_LIBC_INTERNAL = 1 << 1, /* state inside libc itself, not a runtime the program loaded: not listed
                                            * among a process's runtimes */
};

struct report_runtime {
    char *id;        /* stable: "cuda", "gnu-openmp", ... */
    char *name;      /* "NVIDIA CUDA" */
    char *libraries; /* fnmatch patterns, space-separated, over a library's soname and file name */
    char *threads;   /* fnmatch patterns over thread names */
    char *handles;   /* fnmatch patterns over fd targets */
    char *functions; /* fnmatch patterns over the symbols of a waiter's frames: the functions that take the lock
                      * the row names (libc's internal locks, which all lie in one library's data) */
    enum report_fork_safety safety;
    char *reason;    /* one sentence */
    char **remedies; /* what to do, most useful first */
    size_t nremedies;
    unsigned traits; /* enum report_runtime_trait; rows of a --catalogue file have none */
};

struct report_catalogue {
    struct report_runtime *rows;
    size_t nrows;
};

/* The built-in catalogue (a copy the caller owns); NULL when memory ran out. */
struct report_catalogue *report_catalogue_new(void);
void report_catalogue_free(struct report_catalogue *catalogue);
HD_DEFINE_CLEANUP(struct report_catalogue, report_catalogue_free)
/* The built-in catalogue, shared and read-only: for callers that take no file. NULL when memory ran out. */
const struct report_catalogue *report_catalogue_builtin(void);

/* Extends `catalogue` with the rows of a file: a section with a known id adds its patterns to that row and
 * replaces the texts it gives; a new id adds a row. Returns 0, or -errno when the file cannot be read, or a
 * positive line number where it does not parse; `error` says what (NUL-terminated, at most error_size). */
int report_catalogue_load(struct report_catalogue *catalogue, const char *path, char *error, size_t error_size);
/* The same over text in memory (for the tests and the parser). */
int report_catalogue_parse(struct report_catalogue *catalogue, const char *text, char *error, size_t error_size);

/* The row whose library patterns match the library's soname or file name; NULL when none. */
const struct report_runtime *report_catalogue_library(const struct report_catalogue *catalogue,
                                                      const struct hd_library *library);
/* The row whose thread patterns match the name; NULL when none. */
const struct report_runtime *report_catalogue_thread(const struct report_catalogue *catalogue, const char *name);
/* The row whose function patterns match a frame's symbol; NULL when none. */
const struct report_runtime *report_catalogue_function(const struct report_catalogue *catalogue, const char *symbol);
/* The row whose handle patterns match the fd's target; NULL when none. */
const struct report_runtime *report_catalogue_handle(const struct report_catalogue *catalogue,
                                                     const struct hd_fd *fd);
const struct report_runtime *report_catalogue_find(const struct report_catalogue *catalogue, const char *id);
/* The first row with `trait`; NULL when none. */
const struct report_runtime *report_catalogue_with_trait(const struct report_catalogue *catalogue,
                                                         enum report_runtime_trait trait);

const char *report_fork_safety_name(enum report_fork_safety safety); /* "unsafe", "fork-aware", "depends" */
/* "not fork-safe", "fork-aware", "fork safety depends on its configuration" */
const char *report_fork_safety_words(enum report_fork_safety safety);
