/* /proc/<pid>/maps: which mapping holds an address, and whether it is private or shared. */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Parses one line ("start-end perms offset major:minor inode   path"); the path (which may hold spaces) is
 * malloc'd, NULL for anonymous memory. False for a malformed line. */
bool probe_parse_maps_line(const char *line, size_t length, struct hd_mapping *out);

/* Reads every mapping of `pid`, sorted by address, at most `max_mappings`; 0 or -errno. */
int probe_read_maps(pid_t pid, size_t max_mappings, struct hd_mapping **mappings, size_t *count, bool *truncated);
