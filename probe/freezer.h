/* The cgroup freezer: whether a process is frozen by its cgroup, and by which one.
 *
 * A frozen process is stopped by an outside party (docker pause, systemctl freeze, Kubernetes, a checkpointer),
 * not by its own code: cgroup v2 says so in the cgroup's cgroup.events ("frozen 1"; cgroup.freeze 1 in the cgroup
 * that asked, which may be an ancestor), cgroup v1 in the freezer hierarchy's freezer.state (FROZEN, or FREEZING
 * while tasks are still on their way; freezer.self_freezing 1 in the cgroup that asked). The cgroup paths of
 * /proc/<pid>/cgroup are read against the mounts of hangdoc's own mount namespace (/proc/self/mountinfo); a
 * hierarchy that is not mounted here cannot be read, and the process then counts as not frozen.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PROBE_CGROUP_PATH_MAX 512

/* Where the two hierarchies that can freeze are mounted, from a mountinfo text: the mount point and the cgroup
 * it shows (its root field, "/" outside a cgroup namespace); "" for a hierarchy not mounted. */
struct probe_cgroup_mounts {
    char unified[PROBE_CGROUP_PATH_MAX];      /* cgroup2 */
    char unified_root[PROBE_CGROUP_PATH_MAX];
    char freezer[PROBE_CGROUP_PATH_MAX];      /* cgroup v1 with the freezer controller */
    char freezer_root[PROBE_CGROUP_PATH_MAX];
};
void probe_parse_cgroup_mounts(const char *mountinfo, struct probe_cgroup_mounts *mounts);

/* A process's cgroups from its /proc/<pid>/cgroup text: the v2 one ("0::/path") and the v1 freezer's
 * ("N:freezer:/path", or a line whose controllers include freezer); "" where the text names none. */
struct probe_cgroup_paths {
    char unified[PROBE_CGROUP_PATH_MAX];
    char freezer[PROBE_CGROUP_PATH_MAX];
};
void probe_parse_cgroup_paths(const char *text, struct probe_cgroup_paths *paths);

/* The directory of `cgroup` (a path /proc/<pid>/cgroup names) under the mount at `mount_point` showing
 * `mount_root`, into `out`; false when the mount does not show that cgroup or the path does not fit. */
bool probe_cgroup_directory(const char *mount_point, const char *mount_root, const char *cgroup, char *out,
                            size_t size);

/* Sets process->frozen and the freezer fields from its cgroup files. False when its /proc/<pid>/cgroup could not
 * be read (a note is the caller's); a process not frozen is true with process->frozen false. When a control file
 * of its cgroup could not be read (the cgroup removed meanwhile, a mount gone, no permission), `unknown` says which
 * and why, for a note; "" otherwise. */
bool probe_read_freezer(struct hd_process *process, char *unknown, size_t size);
