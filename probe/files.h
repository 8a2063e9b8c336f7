/* Opening a file a target names (a mapping's path, a debug file) without harm: the path is hostile, it may have
 * been swapped for a FIFO (open() would block) or a device node (open() runs the driver: /dev/ptmx allocates a
 * pty, /dev/watchdog arms a watchdog). */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>

/* Opens `path` read-only when it is a regular file and, unless `same_as` is NULL, that mapping's very file (its
 * inode, and its device except on overlayfs and btrfs, whose stat shows another device than maps). The path is
 * opened with O_PATH first (no driver, no FIFO wait), checked with fstat, and only then reopened through
 * /proc/self/fd; a descriptor, or -1. */
int probe_open_regular(const char *path, const struct hd_mapping *same_as);

/* Where the files named by a target that is not running (a core: core_snapshot.h) are on this machine: under
 * `sysroot` (NULL: at their own paths), and the executable `exe_named` (NULL: none given) at `exe`. While it is
 * set, the readers of files (symbols, unwind tables, the Python interpreter's symbols, the pages a core left out)
 * open only probe_files_locate()'s path, never /proc/<pid>/root or map_files, whose pid would be another process
 * here. Set and cleared by the one who reads cores. */
struct probe_offline_files {
    const char *sysroot;
    const char *exe_named;
    const char *exe;
};
void probe_files_set_offline(const struct probe_offline_files *offline);
void probe_files_clear_offline(void);
bool probe_files_offline(void);
/* The path to open for `path` (as the target named it) while offline: `buffer` filled, NULL when it does not
 * fit. */
const char *probe_files_locate(const char *path, char *buffer, size_t size);
