/* FUSE: which threads wait for a file system's daemon, on which mount, and which process that daemon is.
 *
 * A thread inside a FUSE call sleeps in the kernel's FUSE code (request_wait_answer while its request waits for
 * the daemon's answer; fuse_lock_inode and the like while another request holds what it needs): its kernel stack
 * says so, or, without root, its wait channel. The daemon's own idle read of /dev/fuse (fuse_dev_do_read) is not a
 * call. The mount is told from the call: the fd it works on (fdinfo's mnt_id), else the path it names (read from
 * its memory, joined to its cwd or dirfd, matched against the mount points it sees), else the only FUSE mount its
 * mount namespace has. The connection is the mount's device number (/sys/fs/fuse/connections/N, where fusectl
 * says how many requests wait). The daemon is a process holding /dev/fuse open that sees the same mount; when
 * several do, the one the mount names (its command line holds the mount point, its name is the mount's subtype),
 * or the one with a thread reading /dev/fuse, or the eldest (a client forked from its daemon inherits the fd).
 *
 * Nothing here touches the mount itself: no stat, no open, no path lookup under it (each would wait as the
 * clients do). Stopping a FUSE client interrupts its request (the kernel then waits for the daemon in D, killable
 * only), so a process with a thread in a FUSE call, or a daemon with requests waiting, is never stopped.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a kernel stack (or, when it is NULL, a wait channel) says of a thread's place in FUSE. */
enum probe_fuse_place {
    PROBE_FUSE_NONE,
    PROBE_FUSE_CALL,        /* a file system call: waits for the daemon, or for what one of its requests holds */
    PROBE_FUSE_DAEMON_READ, /* the daemon's read of /dev/fuse: waits for the next request */
};
enum probe_fuse_place probe_fuse_place(const char *kernel_stack, const char *wchan, bool *awaits_answer);

/* One FUSE mount of a mountinfo text. */
struct probe_fuse_mount {
    int mount_id;
    unsigned major, minor;
    char mount_point[512]; /* unescaped (mountinfo writes space, tab, newline and backslash as \ooo) */
    char fs_type[64];
    char source[128];
};
/* The FUSE mounts (fuse, fuseblk, fuse.*, fuseblk.*) of `text`, at most `max`; returns how many. Malformed lines are
 * skipped. */
size_t probe_fuse_parse_mounts(const char *text, struct probe_fuse_mount *mounts, size_t max);
/* The connection number of a mount: the kernel's dev_t as /sys/fs/fuse/connections names it. */
unsigned probe_fuse_connection(unsigned major, unsigned minor);
/* The mount whose mount point is the longest prefix of the absolute `path` (lexically: no symlink is followed);
 * NULL when none is. */
const struct probe_fuse_mount *probe_fuse_mount_of_path(const struct probe_fuse_mount *mounts, size_t count,
                                                        const char *path);

/* For the last sample, before its stacks: each thread's FUSE call (hd_thread.fuse), each process's fuse_daemon
 * and fuse_requests_pending, and a note for what could not be read (fusectl not mounted, a daemon outside the
 * snapshot that could not be told). Looks outside the snapshot for daemons only when a call's daemon is not in it,
 * and not past `deadline` (monotonic seconds, 0 for none). False when memory ran out. */
bool probe_read_fuse(struct hd_snapshot *snapshot, double deadline);

/* Why a process must not be stopped for its stacks because of FUSE (static), or NULL. */
const char *probe_fuse_why_not_stopped(const struct hd_process *process);
