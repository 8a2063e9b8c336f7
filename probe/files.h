/* Opening a file a target names (a mapping's path, a debug file) without harm: the path is hostile, it may have
 * been swapped for a FIFO (open() would block) or a device node (open() runs the driver: /dev/ptmx allocates a
 * pty, /dev/watchdog arms a watchdog). */
#pragma once

#include "snapshot.h"

/* Opens `path` read-only when it is a regular file and, unless `same_as` is NULL, that mapping's very file (its
 * inode, and its device except on overlayfs and btrfs, whose stat shows another device than maps). The path is
 * opened with O_PATH first (no driver, no FIFO wait), checked with fstat, and only then reopened through
 * /proc/self/fd; a descriptor, or -1. */
int probe_open_regular(const char *path, const struct hd_mapping *same_as);
