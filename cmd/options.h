/* Command-line parsing: the options shared by every subcommand, and the number formats they take. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum hangdoc_colour { HANGDOC_COLOUR_AUTO, HANGDOC_COLOUR_ALWAYS, HANGDOC_COLOUR_NEVER };

struct hangdoc_options {
    bool json;
    bool dot; /* --dot: the wait-for graph for Graphviz instead of text (not with --json) */
    bool markdown; /* --markdown: the Markdown summary instead of text (what hangdoc run --summary appends) */
    bool verbose;
    bool no_ptrace; /* never stop a process: no native stacks */
    bool no_python; /* do not read Python interpreters */
    bool no_ledger; /* keep no wait ledger: a later diagnosis sees waits begin at this one's stop (probe/ledger.h) */
    enum hangdoc_colour colour; /* auto: on a terminal, unless NO_COLOR is set and not empty */
    bool recap;                 /* the text report ends with the verdict and fix again (hangdoc demo) */
    unsigned samples;
    unsigned interval_ms;
    unsigned timeout_ms; /* bound on the whole run; 0: none */
    /* --stuck-after: a thread asleep without timeout this long whose only wakers wake on timers is likely hung;
     * 0: half the age of the oldest process diagnosed, at most HANGDOC_STUCK_AFTER_DEFAULT_MS (hangdoc run, where
     * the job's age says what "long" is) */
    unsigned stuck_after_ms;
    bool stuck_after_given; /* --stuck-after was on the command line: `hangdoc analyze` uses it, not the saved one */
    const char *save_path;  /* --save: the snapshot is written there too (record.h); NULL: not saved */
    const char **core_paths; /* --core: diagnose these core files instead of processes (core_snapshot.h) */
    size_t ncore_paths;
    const char *sysroot;     /* --sysroot: where the files the cores name are; NULL: at their own paths */
    const char *exe;         /* --exe: the first core's executable; NULL: where the core names it */
    double deadline;     /* when that bound ends, in CLOCK_MONOTONIC seconds (set when it is armed); 0: none */
    pid_t *pids;
    size_t npids;
    const char *catalogue_path; /* --catalogue: rows that extend the runtime catalogue; NULL: the built-in one */
    const char *job_id;         /* --job: diagnose this Slurm job's processes on this host instead of pids */
};

#define HANGDOC_STUCK_AFTER_DEFAULT_MS 60000
#define HANGDOC_STUCK_AFTER_MIN_MS 1000

/* The --stuck-after threshold in seconds for a run with these options over a tree whose oldest process is
 * `oldest_age_s` old. */
double hangdoc_stuck_after_s(unsigned stuck_after_ms, double oldest_age_s);

/* Parses "42" as a pid: decimal, positive, no sign, no trailing bytes. */
bool hangdoc_parse_pid(const char *text, pid_t *pid);

/* Parses a duration: "250ms", "90s", "30m", "1h", or a plain number of seconds. */
bool hangdoc_parse_duration_ms(const char *text, unsigned *milliseconds);

/* The whole seconds alarm(2) needs to cover a --timeout of this many milliseconds, rounded up; 0 only for 0.
 * Computed wide so that a timeout near UINT_MAX milliseconds cannot wrap round to alarm(0), which means no deadline. */
unsigned hangdoc_deadline_seconds(unsigned timeout_ms);

/* The time left for the analysis and the report of a run bounded by `timeout_ms`: a quarter of it, at most 5 s.
 * Reading 10,000 threads takes about a second, their report about as long; a 30 s --timeout stops probing at 25 s,
 * a 2 s one at 1.5 s. */
#define HANGDOC_REPORT_RESERVE_MAX_MS 5000
unsigned hangdoc_report_reserve_ms(unsigned timeout_ms);
/* When the probe stops taking new things (probe_options.deadline) for a run that must be done by `deadline`
 * (monotonic seconds) and was given `timeout_ms` in all; 0 when there is no deadline. */
double hangdoc_probe_deadline(double deadline, unsigned timeout_ms);
/* When the probe reads no more than each remaining thread's state (probe_options.last_call): half-way from the
 * probe's deadline to the run's, so that the last sample of a target too large for the time given still ends
 * before the run must; 0 when there is no deadline. */
double hangdoc_probe_last_call(double deadline, unsigned timeout_ms);
