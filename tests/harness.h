/* The scenario harness: start a fixture (scenarios/), wait until it says it is in position, run the real hangdoc
 * binary on it, parse what it printed, and end every process the fixture started, by process group, also when a
 * test fails: Criterion runs the suite's .fini after a failed assertion, and when the test process dies without
 * it (a sanitizer aborts it, a signal), a guard process of each group, which outlives it, kills the group.
 */
#pragma once

#include "exit_codes.h"
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define HARNESS_MAX_PIDS 16

struct fixture {
    pid_t leader; /* also its process group */
    pid_t pids[HARNESS_MAX_PIDS]; /* from its "ready" line */
    size_t npids;
    pid_t guard;    /* kills the group if the test process ends first; 0 when none */
    int guard_pipe; /* its write end: a byte dismisses the guard, end of file makes it kill */
};

/* Closes every fd from `first` on, in a child about to exec: close_range(2) where the kernel has it (5.9), each
 * one otherwise; glibc's wrapper came in 2.34, after Debian 11's. */
void harness_close_from(int first);

/* Starts scenarios/<name> and waits (bounded) for its ready line; aborts the test when it does not come. */
void fixture_start(struct fixture *fixture, const char *name);
/* The same with a deadline of the caller's for the ready line (fixtures that import large Python modules). */
void fixture_start_within(struct fixture *fixture, const char *name, long ready_timeout_ms);
/* The same with a command of the caller's: `path` run with `argv` (NULL-terminated), such as a wrapper that execs
 * the fixture (setarch -R) or a fixture given arguments. */
void fixture_start_command(struct fixture *fixture, const char *path, const char *const *argv, long ready_timeout_ms);
/* The same for a Python scenario of scenarios/ that writes its ready line itself: `script` run with Debian's
 * /usr/bin/python3 and up to two arguments (NULL when fewer). */
void fixture_start_python(struct fixture *fixture, const char *script, const char *first, const char *second,
                          long ready_timeout_ms);
/* The same with the interpreter `python` (a path, or a launcher such as python_modern()'s). */
void fixture_start_python_with(struct fixture *fixture, const char *python, const char *script, const char *first,
                               const char *second, long ready_timeout_ms);
/* Kills the fixture's process group and every pid it reported, and reaps the leader. Idempotent. */
void fixture_stop(struct fixture *fixture);
/* Stops every fixture still running: the suite's .fini. */
void fixture_stop_all(void);

/* The state and parent of `pid` from its stat file; false when it is gone. */
bool process_state(pid_t pid, char *state, pid_t *parent);

struct run_result {
    int exit_status; /* 128 + signal when hangdoc died by one */
    char *out;
    char *err;
};

/* Runs argv[0] with argv (NULL-terminated), bounded by a deadline; `as_uid` >= 0 runs it as that user. */
void program_run_as(struct run_result *result, int as_uid, const char *const *argv);
/* Runs hangdoc with the arguments (NULL-terminated), bounded by a deadline; `as_uid` >= 0 runs it as that user. */
void hangdoc_run_as(struct run_result *result, int as_uid, const char *const *arguments);
/* The same, run twice when the arguments diagnose existing processes (in the plain build; the sanitized one runs
 * it once): the test fails when the second run's exit status, verdict or findings (id, confidence, subject) differ
 * from the first's. The first run's result is kept. */
void hangdoc_run(struct run_result *result, const char *const *arguments);
/* hangdoc_run also saves each diagnosis (--save) and requires `hangdoc analyze` of it to print the same report
 * with the same exit status. With HANGDOC_RECORD_DIR set, the next such snapshot is kept there as <name>.snapshot,
 * with the fixture's pids as <name>.pids (tests/snapshots/record.sh). */
void record_as(const char *name, const struct fixture *fixture);
/* `hangdoc analyze --json` of tests/snapshots/<name>.snapshot, parsed and validated; the test fails unless it
 * exits with `expected_status`. `fixture` gets the pids the fixture reported when it was recorded, and no process:
 * the assertions of the live scenario run on it unchanged. */
json_object *recorded_expecting(const char *name, int expected_status, struct fixture *fixture);
/* Once, for a tree that changes by design (a worker that vanishes during the first run, a 10,000-thread target). */
void hangdoc_run_once(struct run_result *result, const char *const *arguments);
void run_result_free(struct run_result *result);

/* hangdoc --json --samples 3 --interval 100ms PID: parsed; the test fails when it does not parse. */
json_object *hangdoc_json(pid_t pid, int *exit_status);
/* The same, and the test fails unless hangdoc exits with `expected_status` (exit_codes.h: EXIT_NO_HANG,
 * EXIT_HANG, EXIT_HANG_FORK_UNSAFE), saying the verdict and the findings it got. */
json_object *diagnose_expecting(pid_t pid, int expected_status);
/* The findings of the report as one line of text, for a failure's message. */
const char *findings_text(json_object *document);

/* Does finding `id` blame what a child inherited through fork() (its rule names the cause fork-inheritance in the
 * registry, analysis/rules.def)? */
bool is_fork_finding(const char *id);
/* Fails the test when the report has any such finding: nothing came through fork. */
void expect_no_fork_finding(json_object *document);

/* Validates a report against docs/hangdoc.report-2.schema.json with python3-jsonschema; fails the test if not. */
void json_validate(const char *text);
/* The same against docs/<schema_name> (hangdoc.merge-1.schema.json). */
void json_validate_against(const char *text, const char *schema_name);

/* Lookups in the JSON document; NULL when absent. */
json_object *json_process(json_object *document, pid_t pid);
json_object *json_thread(json_object *process, pid_t tid);
json_object *json_at(json_object *object, const char *key); /* "a.b.c" */
const char *json_string_at(json_object *object, const char *key);
long long json_int_at(json_object *object, const char *key, long long missing);
bool json_bool_at(json_object *object, const char *key);
/* Findings with `id` about process `pid` (0: any process): how many, and the first (NULL when none). */
size_t json_count_findings(json_object *document, const char *id, pid_t pid);
json_object *json_first_finding(json_object *document, const char *id, pid_t pid);
/* The one finding with `id` about process `pid` (0: any): the test fails unless there is exactly one. */
json_object *json_only_finding(json_object *document, const char *id, pid_t pid);
/* Is thread `tid` a member of the finding? */
bool json_finding_has_member(json_object *finding, pid_t tid);
/* Fails the test when a finding has an id other than the ones named (a NULL-terminated list). */
void expect_only_findings(json_object *document, const char *const *ids);
/* How many of the finding's remedies contain `part`. */
size_t json_count_remedies(json_object *finding, const char *part);
/* True when a note's text contains `part`. */
bool json_has_note(json_object *document, const char *part);

/* hangdoc started in the background (its own process group, killed by fixture_stop_all too), with a ready pipe
 * on fd 3 that the command it runs inherits. */
struct spawned {
    struct fixture group; /* leader = hangdoc; pids = what the command's fixture reported */
    int out_fd;
    int err_fd;
    int ready_fd;
};
void hangdoc_spawn(struct spawned *spawned, const char *const *arguments);
/* Reads the fixture's ready line into spawned->group.pids; false when it does not come. */
bool spawned_ready(struct spawned *spawned);
/* Collects hangdoc's output and waits for it to exit. */
void spawned_finish(struct spawned *spawned, struct run_result *result);
/* The whole of a file, NUL-terminated (free it); NULL when it cannot be opened. */
char *file_text(const char *path);
/* The same, with its length in *length: a binary file's bytes (a core, a snapshot). */
char *file_bytes(const char *path, size_t *length);
/* The path of a fixture program. */
const char *fixture_path(const char *name);
