/* Who holds the file lock a thread waits for (flock(2), fcntl F_SETLKW / F_OFD_SETLKW), from /proc/locks.
 *
 * /proc/locks lists every lock of the system with the pid of its owner, in hangdoc's own PID namespace, and the
 * device and inode of its file; a waiter's file is its fd's (stat of /proc/<pid>/fd/<n>, which opens nothing). An
 * OFD lock has no owning process (-1): its holder stays unknown. The file is the kernel's, bounded all the same.
 */
#pragma once

#include "snapshot.h"

/* Fills wait.lock (kind HD_LOCK_FILE, owner_tid and owner_pid the holding process, whereabouts left for
 * probe_resolve_owners) for every thread of the snapshot that waits for a file lock another process holds. Run
 * after the PID namespace translation: the pids of /proc/locks are hangdoc's already. */
void probe_resolve_file_locks(struct hd_snapshot *snapshot);
