/* Running a job under watch (`hangdoc run`'s engine): start a command, relay its output, and when it runs past its
 * deadline, stops writing, is sent SIGUSR1 or is cancelled (SIGTERM, SIGINT, SIGHUP), have its whole tree
 * diagnosed, then end the tree.
 *
 * This room owns processes, signals and deadlines, and nothing of what a diagnosis is: the caller's `diagnose`
 * runs in a process the supervisor chooses (the job's parent where it can, so that Yama's ptrace_scope 1 allows
 * the stacks) and returns hangdoc's exit status. cmd/ gives the options and the two hooks; probe/ lists the tree
 * and lets go of what a diagnosis left traced.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The deadlines the supervisor keeps for one diagnosis; past it the diagnosing process is killed. */
#define SUPERVISE_DIAGNOSIS_MS 30000
#define SUPERVISE_QUICK_DIAGNOSIS_MS 5000 /* on a cancel: CI gives a cancelled job a few seconds before it kills */

struct supervise_hooks {
    void *context;
    /* Diagnoses the processes `roots` (the job's top processes now). `from_ancestor` is false when the caller is no
     * longer an ancestor of the job (its stacks then need CAP_SYS_PTRACE under ptrace_scope 1); `quick` asks for a
     * diagnosis that fits in SUPERVISE_QUICK_DIAGNOSIS_MS. `nroots` is 0 when every process of the job had ended.
     * Returns hangdoc's exit status. */
    int (*diagnose)(void *context, const pid_t *roots, size_t nroots, bool from_ancestor, bool quick);
    /* A diagnosis that was killed or never started: leave a report that says `why` about `command`. */
    void (*unfinished)(void *context, pid_t command, const char *why);
};

struct supervise_options {
    char **command;         /* NULL-terminated argv, run with execvp */
    unsigned timeout_ms;    /* 0: none */
    unsigned stall_ms;      /* no output this long is a stall; 0: not watched (the output is then not relayed) */
    unsigned kill_after_ms; /* from end_signal to SIGKILL */
    int end_signal;
    bool keep_running;      /* after a timeout or stall: diagnose, then let it run */
};

/* Runs the command to its end. Returns the command's exit status (128 + signal when a signal ended it), 124 when
 * it was ended on a timeout or stall, 128 + signal when a cancel ended it, 126/127 when it could not be executed,
 * or hangdoc's internal-error status. */
int supervise_run(const struct supervise_options *options, const struct supervise_hooks *hooks);
