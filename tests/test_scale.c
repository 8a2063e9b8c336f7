/* Scale (issue 14): thousands of threads and processes, diagnosed by the real hangdoc binary with its default
 * options, within its default --timeout. These assert that the report is complete and right, not how long it took
 * (bench/run.py times it); and that a --timeout far too short for the target still ends in a report.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

TestSuite(scale, .fini = fixture_stop_all, .timeout = 300);

/* Exit statuses of hangdoc (cmd/exit_codes.h) */
enum { RUN_TIMED_OUT = 124 };

/* The sizes the fixtures have by default (scenarios/scale_*.c) */
#define SCALE_THREADS 10000
#define SCALE_TREE_PROCESSES 1000
#define SCALE_TREE_THREADS 10000
/* Under a sanitizer a thousand sanitized processes take half a minute only to start: the tree there is 300 of 10
 * threads, still past every size at which probe/ reads in parallel or grows its tables */
#define SCALE_TREE_PROCESSES_SANITIZED 300
#define SCALE_DEADLOCK_THREADS 2000
/* 10,000 threads take a second or two to start and settle on a 2-core machine, many more under a sanitizer */
#define SCALE_READY_TIMEOUT_MS 120000

static const char *const HEALTHY[] = { "idle", NULL };

struct census {
    size_t processes;
    size_t threads;
};

/* Counts the processes and threads of the tree under `pid` as /proc shows them now: what a complete report has. */
static void count_tree(pid_t pid, struct census *census)
{
    char path[320];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    cr_assert_not_null(tasks, "process %d of the fixture is alive", (int)pid);
    census->processes++;
    struct dirent *entry;
    while ((entry = readdir(tasks))) {
        if (entry->d_name[0] == '.')
            continue;
        census->threads++;
        snprintf(path, sizeof path, "/proc/%d/task/%s/children", (int)pid, entry->d_name);
        FILE *children = fopen(path, "re");
        if (!children)
            continue;
        int child;
        while (fscanf(children, "%d", &child) == 1)
            count_tree((pid_t)child, census);
        fclose(children);
    }
    closedir(tasks);
}

/* hangdoc --json with the default sampling and --timeout, and `extra` arguments (NULL-terminated) before the pid;
 * the report parsed and validated. */
static json_object *diagnose_with(pid_t pid, const char *const *extra, int *exit_status)
{
    const char *arguments[16] = { "--json" };
    size_t count = 1;
    while (extra && *extra && count < 14)
        arguments[count++] = *extra++;
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    arguments[count++] = pid_text;
    arguments[count] = NULL;
    struct timespec started, ended;
    clock_gettime(CLOCK_MONOTONIC, &started);
    struct run_result result;
    hangdoc_run_once(&result, arguments);
    clock_gettime(CLOCK_MONOTONIC, &ended);
    cr_log_info("hangdoc on %d: exit %d after %.2f s, %zu bytes of JSON", (int)pid, result.exit_status,
                (double)(ended.tv_sec - started.tv_sec) + (double)(ended.tv_nsec - started.tv_nsec) / 1e9,
                strlen(result.out));
    json_object *document = json_tokener_parse(result.out);
    if (!document) {
        /* freed before the assertion, which ends the test: nothing left for LeakSanitizer to report */
        char said[2048];
        snprintf(said, sizeof said, "%s", result.err);
        int status = result.exit_status;
        run_result_free(&result);
        cr_assert_fail("hangdoc printed no JSON report (exit %d); stderr:\n%s", status, said);
    }
    json_validate(result.out);
    *exit_status = result.exit_status;
    run_result_free(&result);
    cr_assert_str_eq(json_string_at(document, "schema"), "hangdoc.report/2");
    return document;
}

static json_object *diagnose(pid_t pid, int expected_status)
{
    int status;
    json_object *document = diagnose_with(pid, NULL, &status);
    cr_assert_eq(status, expected_status, "hangdoc exits %d, got %d", expected_status, status);
    return document;
}

/* Every process and every thread is in the report, and so in the graph. */
static void expect_complete(json_object *document, const struct census *census)
{
    json_object *processes = json_at(document, "processes");
    cr_assert_not_null(processes);
    cr_assert_eq(json_object_array_length(processes), census->processes, "%zu processes in the report, %zu in /proc",
                 json_object_array_length(processes), census->processes);
    size_t threads = 0;
    for (size_t i = 0; i < json_object_array_length(processes); i++) {
        json_object *process = json_object_array_get_idx(processes, i);
        size_t listed = json_object_array_length(json_at(process, "threads"));
        cr_assert_eq((long long)listed, json_int_at(process, "thread_count", -1),
                     "process %lld lists %zu of its %lld threads", json_int_at(process, "pid", -1), listed,
                     json_int_at(process, "thread_count", -1));
        threads += listed;
    }
    cr_assert_eq(threads, census->threads, "%zu threads in the report, %zu in /proc", threads, census->threads);
    /* one node per thread; whatever else the graph holds (sets of wakers, say) has no tid of its own */
    json_object *nodes = json_at(document, "graph.nodes");
    cr_assert_not_null(nodes);
    size_t thread_nodes = 0;
    for (size_t i = 0; i < json_object_array_length(nodes); i++)
        thread_nodes += json_int_at(json_object_array_get_idx(nodes, i), "tid", -1) > 0;
    cr_assert_eq(thread_nodes, census->threads, "%zu thread nodes in the graph, %zu threads", thread_nodes,
                 census->threads);
}

/* No thread but those listed (a 0-terminated list; may be empty) is asleep forever. */
static void expect_asleep_forever_only(json_object *document, const pid_t *allowed)
{
    json_object *nodes = json_at(document, "graph.nodes");
    for (size_t i = 0; i < json_object_array_length(nodes); i++) {
        json_object *node = json_object_array_get_idx(nodes, i);
        if (!json_bool_at(node, "asleep_forever"))
            continue;
        pid_t tid = (pid_t)json_int_at(node, "tid", -1);
        bool expected = false;
        for (const pid_t *known = allowed; *known; known++)
            expected |= *known == tid;
        cr_assert(expected, "thread %d is asleep forever: %s", (int)tid, json_object_to_json_string(node));
    }
}

/* The only findings that say "hang" are the ones with `id` (NULL: none at all). */
static void expect_no_hang_but(json_object *document, const char *id)
{
    json_object *findings = json_at(document, "findings");
    for (size_t i = 0; findings && i < json_object_array_length(findings); i++) {
        json_object *finding = json_object_array_get_idx(findings, i);
        if (!json_bool_at(finding, "hang"))
            continue;
        cr_assert(id && strcmp(json_string_at(finding, "id"), id) == 0, "an idle thread reported hung: %s",
                  json_object_to_json_string(finding));
    }
}

static void expect_not_hung(json_object *document)
{
    cr_assert(json_object_is_type(json_at(document, "verdict.hung"), json_type_boolean), "hung is a boolean");
    cr_assert_not(json_bool_at(document, "verdict.hung"), "verdict: %s",
                  json_object_to_json_string(json_at(document, "verdict")));
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "none");
    expect_only_findings(document, HEALTHY);
    expect_no_hang_but(document, NULL);
    expect_asleep_forever_only(document, (const pid_t[]){ 0 });
}

Test(scale, ten_thousand_idle_threads_of_one_process_are_all_reported_and_none_is_hung)
{
    struct fixture fixture;
    fixture_start_within(&fixture, "scale_threads", SCALE_READY_TIMEOUT_MS);
    pid_t pid = fixture.pids[0];
    struct census census = { 0 };
    count_tree(pid, &census);
    cr_assert_eq(census.threads, SCALE_THREADS, "the fixture has its %d threads", SCALE_THREADS);
    json_object *document = diagnose(pid, EXIT_NO_HANG);
    expect_complete(document, &census);
    expect_not_hung(document);
    json_object_put(document);
    fixture_stop(&fixture);
}

static bool sanitized(void)
{
    const char *sanitize = getenv("HANGDOC_SANITIZE");
    return sanitize && strcmp(sanitize, "none") != 0;
}

Test(scale, a_tree_of_a_thousand_processes_is_all_reported_and_none_is_hung)
{
    struct fixture fixture;
    size_t processes = sanitized() ? SCALE_TREE_PROCESSES_SANITIZED : SCALE_TREE_PROCESSES;
    char count[16];
    snprintf(count, sizeof count, "%zu", processes);
    fixture_start_command(&fixture, fixture_path("scale_tree"), (const char *[]){ "scale_tree", count, NULL },
                          SCALE_READY_TIMEOUT_MS);
    pid_t parent = fixture.pids[0];
    struct census census = { 0 };
    count_tree(parent, &census);
    cr_assert_eq(census.processes, processes);
    cr_assert_eq(census.threads, processes * (SCALE_TREE_THREADS / SCALE_TREE_PROCESSES));
    json_object *document = diagnose(parent, EXIT_NO_HANG);
    expect_complete(document, &census);
    expect_not_hung(document);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(scale, a_lock_cycle_hidden_among_two_thousand_idle_threads_is_found_and_nothing_else_is_hung)
{
    struct fixture fixture;
    fixture_start_within(&fixture, "scale_deadlock", SCALE_READY_TIMEOUT_MS);
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    struct census census = { 0 };
    count_tree(pid, &census);
    cr_assert_eq(census.threads, SCALE_DEADLOCK_THREADS);
    json_object *document = diagnose(pid, EXIT_HANG);
    expect_complete(document, &census);

    cr_assert(json_bool_at(document, "verdict.hung"), "verdict: %s",
              json_object_to_json_string(json_at(document, "verdict")));
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "deadlock");
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "lock-cycle");
    long long subject = json_int_at(document, "verdict.tid", -1);
    cr_assert(subject == first || subject == second, "the verdict names a thread of the cycle, not %lld", subject);
    cr_assert_eq(json_count_findings(document, "lock-cycle", 0), 1, "one lock cycle: %s",
                 json_object_to_json_string(json_at(document, "findings")));
    json_object *cycle = json_first_finding(document, "lock-cycle", pid);
    cr_assert_not_null(cycle);
    cr_assert_eq(json_object_array_length(json_at(cycle, "members")), 2, "%s", json_object_to_json_string(cycle));
    cr_assert(json_finding_has_member(cycle, first) && json_finding_has_member(cycle, second), "its members are %d and %d: %s", (int)first,
              (int)second, json_object_to_json_string(cycle));
    json_object *process = json_process(document, pid);
    cr_assert_eq(json_int_at(json_thread(process, first), "wait.owner_tid", -1), second);
    cr_assert_eq(json_int_at(json_thread(process, second), "wait.owner_tid", -1), first);

    expect_only_findings(document, (const char *const[]){ "lock-cycle", "idle", NULL });
    expect_no_hang_but(document, "lock-cycle");
    expect_asleep_forever_only(document, (const pid_t[]){ first, second, 0 });
    json_object_put(document);
    fixture_stop(&fixture);
}

/* A --timeout far too short for 10,000 threads and 5 samples: hangdoc stops taking what it has not taken yet, says
 * so in notes, and still gives its verdict on what it read, with a verdict's exit status. */
Test(scale, a_timeout_far_too_short_still_ends_in_a_report_that_says_what_was_skipped)
{
    struct fixture fixture;
    fixture_start_within(&fixture, "scale_threads", SCALE_READY_TIMEOUT_MS);
    pid_t pid = fixture.pids[0];
    int status;
    json_object *document = diagnose_with(pid, (const char *const[]){ "--timeout", "1s", NULL }, &status);
    cr_assert_neq(status, EXIT_INTERNAL, "a report, not a give-up");
    cr_assert(status == EXIT_NO_HANG || status == EXIT_HANG || status == EXIT_HANG_FORK_UNSAFE, "a verdict's exit status: %d", status);
    cr_assert(json_object_is_type(json_at(document, "verdict.hung"), json_type_boolean), "a verdict: %s",
              json_object_to_json_string(json_at(document, "verdict")));
    cr_assert_not_null(json_at(document, "processes"));
    cr_assert(json_has_note(document, "--timeout"), "a note says what the --timeout cut short: %s",
              json_object_to_json_string(json_at(document, "notes")));
    json_object_put(document);

    /* the text report too: never an empty output */
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run_once(&result, (const char *[]){ "--timeout", "1s", pid_text, NULL });
    cr_assert_neq(result.exit_status, EXIT_INTERNAL, "stderr: %s", result.err);
    cr_assert(strncmp(result.out, "verdict: ", 9) == 0, "the verdict comes first: %.500s", result.out);
    cr_assert(strstr(result.out, "--timeout"), "the text says what the --timeout cut short: %.2000s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}

static char directory[] = "/tmp/hangdoc-scale-test-XXXXXX";

static void make_directory(void)
{
    cr_assert_not_null(mkdtemp(directory));
}

static const char *in_directory(const char *name)
{
    static char paths[2][256];
    static int next;
    char *path = paths[next++ % 2];
    snprintf(path, 256, "%s/%s", directory, name);
    return path;
}

static void remove_directory(void)
{
    unlink(in_directory("report.txt"));
    unlink(in_directory("report.json"));
    rmdir(directory);
}

static char *slurp(const char *path)
{
    char *text = file_text(path);
    cr_assert_not_null(text, "%s exists: hangdoc run left a report", path);
    return text;
}

/* The same through hangdoc run: a job of 10,000 threads ended on a short --timeout leaves both reports. */
Test(scale, hangdoc_run_ending_a_job_of_ten_thousand_threads_leaves_a_report, .init = make_directory,
     .fini = remove_directory)
{
    const char *report = in_directory("report.txt"), *json = in_directory("report.json");
    struct spawned spawned;
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--timeout", "5s", "--report", report, "--json", json, "--",
                                              fixture_path("scale_threads"), NULL });
    cr_assert(spawned_ready(&spawned), "the fixture got into position under hangdoc run");
    pid_t command = spawned.group.pids[0];
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, RUN_TIMED_OUT, "exit 124 as timeout(1); stderr: %.2000s", result.err);

    char *text = slurp(report);
    cr_assert(strstr(text, "verdict: "), "the text report has a verdict: %.500s", text);
    free(text);
    char *document_text = slurp(json);
    json_object *document = json_tokener_parse(document_text);
    cr_assert_not_null(document, "the JSON report parses");
    cr_assert_str_eq(json_string_at(document, "schema"), "hangdoc.report/2");
    cr_assert(json_object_is_type(json_at(document, "verdict.hung"), json_type_boolean), "a verdict");
    cr_assert_not_null(json_process(document, command), "the command is in the report");
    json_object_put(document);
    free(document_text);
    cr_assert(kill(command, 0) < 0 && errno == ESRCH, "the command %d is gone", (int)command);
    run_result_free(&result);
}
