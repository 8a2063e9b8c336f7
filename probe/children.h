/* The processes of a tree, found from the top down: /proc/<pid>/task/<tid>/children of each of its threads.
 *
 * Listing every process of the system to find a tree's members costs four system calls per process (a busy
 * machine has thousands); reading the children files of the tree's own threads costs one file per thread of the
 * tree. The files exist where the kernel was built with CONFIG_PROC_CHILDREN (Debian's is, as are most); where
 * they do not, the caller lists every process instead (proctree.c, through libproc2).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether this kernel has the children files (asked once, of hangdoc's own thread). */
bool probe_children_files_exist(void);

/* The thread ids of process `pid`, sorted, in a malloc'ed array (none when it is gone); false only when memory ran
 * out. */
bool probe_list_threads(pid_t pid, pid_t **tids, size_t *count);

/* Appends to *pids (grown with realloc, *count entries, *cap allocated) the pid of every child of every thread of
 * process `pid`, sorted, without duplicates. A process that is gone has no children. Returns false only when
 * memory ran out. */
bool probe_read_children(pid_t pid, pid_t **pids, size_t *count, size_t *cap);
