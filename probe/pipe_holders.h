/* Who else holds the pipes that threads of the snapshot read.
 *
 * A thread that reads a pipe to its end (subprocess.run with capture_output, a shell's $(...), popen) waits for
 * every holder of the write end to close it. When no process of the snapshot holds it, the wait looks like one on
 * the outside world; but the holder is often a background job of a child that has exited, which inherited the
 * child's stdout and keeps it open for as long as it lives (`sh -c 'daemon & echo started'`). Such a holder is
 * outside the tree: its parent exited and it was reparented (to init, or to a subreaper). Only then, and only for
 * those pipes, and only when every process of the tree had its fds read, the rest of the system is searched for
 * the write end: /proc/<pid>/fd of every other process, within a budget of time and processes. A search that
 * could not read some process's fds (another user's), or that was cut short, says so: a writer may be missing.
 */
#pragma once

#include "snapshot.h"

/* Fills snapshot->outside_pipe_holders for the pipes that threads of the snapshot wait to read and that no process
 * of the snapshot can write to, and outside_pipe_holders_complete when no process was missed. `deadline`
 * (CLOCK_MONOTONIC seconds, 0: none) bounds the search; a search cut short is noted. False only when memory ran
 * out. */
bool probe_find_outside_pipe_holders(struct hd_snapshot *snapshot, double deadline);
