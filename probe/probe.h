/* The probe's entry point: sample a process tree and return one snapshot (snapshot.h).
 *
 * Reads /proc (procfs.h; libproc2 where the kernel lacks children files) and, for timeouts passed by pointer, the target's memory with
 * process_vm_readv. Unless `no_ptrace`, it then stops each process for a moment to take its threads' native stacks
 * (stacks.h), and in the other samples stops threads in state R alone to read the function they run.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PROBE_DEFAULT_SAMPLES 5
#define PROBE_DEFAULT_INTERVAL_MS 250
#define PROBE_SAMPLES_MAX 1000

struct probe_options {
    const pid_t *pids; /* what the user named: processes, or threads (their process is taken) */
    size_t npids;
    unsigned samples;     /* >= 1 */
    unsigned interval_ms; /* between samples */
    bool no_ptrace;       /* never stop a process: no native stacks, no leaf functions */
    bool no_python;       /* do not read CPython interpreters (probe/python.h): no Python stacks, no GIL */
    /* name native frames from the files' own symbol tables only, never from separate debug files (symbols.h):
     * what a machine without -dbg packages shows */
    bool no_debug_files;
    /* CLOCK_MONOTONIC seconds from which nothing more is taken, so that a report still comes out in time (0: no
     * deadline). Then the earlier samples not taken yet are left out, and so are the native stacks of the
     * processes not stopped yet (of the threads not unwound yet, in the process stopped when it comes) and the
     * kernel stacks, blocked-for times and switch counts of the threads the last sample has not reached yet (it
     * still reads their waits). Notes beginning
     * "--timeout near:" say what was left out. */
    double deadline;
    /* Later still, before the hard end of the run: from then on the last sample reads no more of a thread than its
     * stat file, so that it ends at once (those threads' waits are unread, and noted). 0: none. */
    double last_call;
    /* The wait ledger's directory (ledger.h), NULL for none: each long wait keeps its clock across hangdoc's own
     * stops, so that a second diagnosis sees the same waits as the first. */
    const char *ledger_dir;
};

/* Reads the tree. 0: *out holds the snapshot (free with hd_snapshot_free). Else -errno: -ESRCH when none of the
 * pids names a process (*out still holds the notes that say why each was refused), -ENOMEM when memory ran out,
 * another when /proc could not be listed (the error of that listing). */
int probe_snapshot(const struct probe_options *options, struct hd_snapshot **out);

enum probe_pid_problem {
    PROBE_PID_OK,
    PROBE_PID_INVALID,    /* zero or negative */
    PROBE_PID_SELF,       /* hangdoc itself, or one of its threads */
    PROBE_PID_GONE,       /* no such process */
    PROBE_PID_PERMISSION, /* /proc refuses it (hidepid, another user's namespace) */
    PROBE_PID_UNREADABLE, /* another error reading /proc */
};

/* What is wrong with `pid` as a target; it may name a thread (then its process is diagnosed). */
enum probe_pid_problem probe_check_pid(pid_t pid);
/* The problem in words (static). */
const char *probe_pid_problem_text(enum probe_pid_problem problem);

/* The processes of this host that belong to Slurm job `job_id` (its cgroup names job_<id>, or SLURM_JOB_ID is in
 * their environment), the topmost of each tree only (job.c): into *pids (free it). Returns how many, or -errno. */
long probe_find_job_processes(const char *job_id, pid_t **pids);
/* The rank hangdoc's own environment gives (job.c, the same launchers' variables), -1 when none: what `hangdoc run`
 * on one node of a job puts in a report's file name. */
int probe_own_rank(void);

/* The directory to keep the wait ledger in (ledger.h), for this user: HANGDOC_LEDGER_DIR when set ("" turns the
 * ledger off), else /run/hangdoc as root, else $XDG_RUNTIME_DIR/hangdoc; NULL when there is none. */
const char *probe_ledger_default_dir(void);

/* Whether separate debug files may name native frames, for this user: not when HANGDOC_DEBUG_FILES is "0". */
bool probe_debug_files_default(void);

/* Lets go of every thread a snapshot still holds stopped, at once. Async-signal-safe: for a deadline's handler
 * that is about to end hangdoc (the kernel would let them go on exit too, but only once hangdoc is gone). */
void probe_release_stopped(void);

/* ---- for `hangdoc run`'s supervisor (supervise/), which reaches probe/ through this header alone ---- */

/* A process of a tree as the listing saw it. */
struct probe_relative {
    pid_t pid;
    pid_t ppid;
    char state;
};

/* The descendants of `ancestor` right now, each parent before its children, without `exclude` and what descends
 * from it; at most `max`. Returns how many, or -errno. */
ssize_t probe_list_descendants(pid_t ancestor, pid_t exclude, struct probe_relative *out, size_t max);

/* A wait of the caller's own for any child (`hangdoc run`'s agent) took `status` of `tid`, a thread still seized
 * here that stopped (or ended) only after its diagnosis let it linger: tracees report to their tracer whatever it
 * waits for. A stop is let go at once (its pending signal given back), and the thread forgotten. False when `tid`
 * is not seized here. */
bool probe_stop_reported_elsewhere(pid_t tid, int status);

/* Whether a wait here took the end of `pid` (a seized thread that exited before it stopped or was let go), and its
 * wait status, once. When the caller is also the process's parent, that wait reaped it: its parent's waitpid()
 * will never see it (`hangdoc run`'s agent and its command). */
bool probe_stop_took_end(pid_t pid, int *status);
