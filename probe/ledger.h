/* The wait ledger: each long wait keeps its clock across hangdoc's own ptrace stop.
 *
 * How long a thread has been blocked is read from the kernel's clock of its last run (se.exec_start). Stopping a
 * process for its stacks makes every sleeping thread run for a moment (into the stop, then back into its wait), so
 * a second diagnosis would see every wait begin at the first one's stop, and a hang seen twice would look younger
 * the second time. After the threads are let go, the ledger writes down, for each thread that had waited long,
 * how long it had waited and what it looks like now that it sleeps again: its system call and arguments, its CPU
 * time to the nanosecond, its switch counts and its last run; only for a thread whose switches since the sample
 * are the stop's own (into it and back into its wait), so that a wait that began again meanwhile is not carried. A later diagnosis that finds a thread exactly so
 * (it has not run since: not a nanosecond of CPU time) adds the wait from before the stop to its blocked-for.
 *
 * One small file per process (<pid>-<start time>), in a directory of hangdoc's user only: /run/hangdoc for root,
 * $XDG_RUNTIME_DIR/hangdoc otherwise, or HANGDOC_LEDGER_DIR; both are emptied at boot, and a file whose process is
 * gone is removed by the next diagnosis. The files are read as hostile input: bounded, parsed defensively, and a
 * line that does not match a thread exactly changes nothing.
 */
#pragma once

#include "snapshot.h"

#include "probe.h" /* probe_ledger_default_dir() */

/* Adds to each thread of `snapshot` whose wait the ledger in `dir` recorded, exactly as it is now, the time it had
 * waited before that diagnosis stopped it (hd_thread's waited_before_s, earlier_stop_at, and its blocked_for_s). */
void probe_ledger_apply(struct hd_snapshot *snapshot, const char *dir);

/* After the stops: writes down the long waits of the processes hangdoc stopped (stopped_for_s > 0), reading each
 * thread's scheduler state once more now that it sleeps again, and removes files of processes that are gone.
 * An unsafe directory (not hangdoc's user's, or writable by others, or a link) is refused with a note. */
void probe_ledger_record(struct hd_snapshot *snapshot, const char *dir);

/* The parser, for tests and the fuzzer: one ledger line into its fields; false when it is not one. */
struct probe_ledger_entry {
    pid_t tid;
    long nr;
    uint64_t args[6];
    uint64_t cpu_time_ns;
    uint64_t voluntary_switches;
    uint64_t involuntary_switches;
    double last_ran_ms;     /* the scheduler clock of its last run, when it slept again after the stop */
    double waited_s;        /* how long it had waited when it was stopped */
    double stopped_at;      /* when (seconds since the epoch) */
};
bool probe_ledger_parse_line(const char *line, struct probe_ledger_entry *entry);
