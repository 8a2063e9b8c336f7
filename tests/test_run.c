/* `hangdoc run`: the CI wrapper, on real commands and hung fixtures. */
#include "harness.h"
#include "util.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

TestSuite(run, .fini = fixture_stop_all, .timeout = 120);

static char directory[] = "/tmp/hangdoc-run-test-XXXXXX";

static void make_directory(void)
{
    cr_assert_not_null(mkdtemp(directory));
}

static void remove_directory(void)
{
    char host[256] = "", ranked[320];
    gethostname(host, sizeof host - 1);
    host[strcspn(host, ".")] = '\0';
    snprintf(ranked, sizeof ranked, "%s.3.json", host);
    const char *names[] = { "report.txt", "report.json", "marker", "plain", ranked, "snapshots/hangdoc.1.snapshot" };
    char path[600];
    for (size_t i = 0; i < COUNT(names); i++) {
        snprintf(path, sizeof path, "%s/%s", directory, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/snapshots", directory);
    rmdir(path);
    rmdir(directory);
}

static const char *in_directory(const char *name)
{
    static char paths[4][256];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, 256, "%s/%s", directory, name);
    return path;
}

static bool exists(const char *path)
{
    struct stat status;
    return stat(path, &status) == 0;
}

static char *slurp(const char *path)
{
    char *text = file_text(path);
    cr_assert_not_null(text, "%s exists", path);
    return text;
}

static void expect_gone(pid_t pid)
{
    cr_assert(kill(pid, 0) < 0 && errno == ESRCH, "process %d is gone", pid);
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

Test(run, timeout_diagnoses_writes_both_reports_and_ends_the_tree, .init = make_directory, .fini = remove_directory)
{
    struct spawned spawned;
    const char *report = in_directory("report.txt"), *json = in_directory("report.json");
    const char *snapshots = in_directory("snapshots");
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--timeout", "2s", "--report", report, "--json", json, "--save",
                                              snapshots, "--", fixture_path("inherited_mutex"), NULL });
    cr_assert(spawned_ready(&spawned), "the fixture got into position under hangdoc run");
    pid_t parent = spawned.group.pids[0], holder = spawned.group.pids[1], child = spawned.group.pids[2];
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, 124, "exit 124 as timeout(1); stderr: %s", result.err);
    cr_assert(strstr(result.err, "the command ran past --timeout"), "%s", result.err);
    cr_assert(strstr(result.err, "verdict: HUNG (fork-inheritance)"), "the report goes to stderr: %s", result.err);

    char *text = slurp(report);
    char expected[128];
    snprintf(expected, sizeof expected, "verdict: HUNG (fork-inheritance): thread %d 'locker'", child);
    cr_assert(strstr(text, expected), "%s", text);
    free(text);
    char *document_text = slurp(json);
    json_object *document = json_tokener_parse(document_text);
    cr_assert_not_null(document, "the JSON report parses");
    cr_assert_str_eq(json_string_at(document, "schema"), "hangdoc.report/2");
    json_validate(document_text);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "inherited-lock");
    cr_assert_eq(json_int_at(document, "verdict.tid", -1), child);
    cr_assert_eq(json_int_at(json_thread(json_process(document, child), child), "wait.owner_tid", -1), holder);
    json_object_put(document);

    /* --save kept the snapshot, which hangdoc analyze turns into the JSON report the run wrote */
    char snapshot[300];
    snprintf(snapshot, sizeof snapshot, "%s/snapshots/hangdoc.1.snapshot", directory);
    cr_assert(strstr(result.err, "the snapshot is in"), "%s", result.err);
    struct run_result replayed;
    hangdoc_run(&replayed, (const char *[]){ "analyze", "--json", snapshot, NULL });
    cr_assert_eq(replayed.exit_status, 2, "%s", replayed.err);
    cr_assert_str_eq(replayed.out, document_text);
    run_result_free(&replayed);
    free(document_text);
    expect_gone(parent);
    expect_gone(child);
    run_result_free(&result);
}

Test(run, orphaned_grandchild_is_diagnosed_and_ended, .init = make_directory, .fini = remove_directory)
{
    struct spawned spawned;
    const char *json = in_directory("report.json");
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--timeout", "1500ms", "--json", json, "--",
                                              fixture_path("orphaner"), NULL });
    cr_assert(spawned_ready(&spawned));
    pid_t command = spawned.group.pids[0], orphan = spawned.group.pids[1];
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, 124, "stderr: %s", result.err);
    char *document_text = slurp(json);
    json_object *document = json_tokener_parse(document_text);
    cr_assert_not_null(document);
    json_object *process = json_process(document, orphan);
    cr_assert_not_null(process, "the orphan is in the report although its parent died");
    cr_assert_str_eq(json_string_at(process, "comm"), "orphan");
    cr_assert_neq(json_int_at(process, "ppid", -1), command, "its parent is hangdoc run, the subreaper");
    json_object_put(document);
    free(document_text);
    expect_gone(command);
    expect_gone(orphan);
    run_result_free(&result);
}

/* One file per node and rank in a shared directory: %h and %r in the report's name, from the host's name and the
 * rank the environment gives (a bare RANK here, as a Kubeflow pod's); the job's processes are labelled with it. */
Test(run, report_names_take_the_host_and_the_rank, .init = make_directory, .fini = remove_directory)
{
    char template[320], host[256] = "", expected[600];
    snprintf(template, sizeof template, "%s/%%h.%%r.json", directory);
    gethostname(host, sizeof host - 1);
    host[strcspn(host, ".")] = '\0';
    snprintf(expected, sizeof expected, "%s/%s.3.json", directory, host);
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "4", 1);
    struct spawned spawned;
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--timeout", "1500ms", "--json", template, "--",
                                              fixture_path("inherited_mutex"), NULL });
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    cr_assert(spawned_ready(&spawned));
    pid_t parent = spawned.group.pids[0], child = spawned.group.pids[2];
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, 124, "stderr: %s", result.err);
    char *text = slurp(expected);
    json_object *document = json_tokener_parse(text);
    cr_assert_not_null(document);
    json_object *rank = json_process(document, parent), *worker = json_process(document, child);
    cr_assert_str_eq(json_string_at(rank, "job.role"), "rank");
    cr_assert_eq(json_int_at(rank, "job.rank", -1), 3);
    cr_assert_eq(json_int_at(rank, "job.world_size", -1), 4);
    cr_assert_str_eq(json_string_at(worker, "job.role"), "worker", "the forked child is a worker of rank 3");
    cr_assert_eq(json_int_at(worker, "job.rank_pid", -1), parent);
    json_object_put(document);
    free(text);
    run_result_free(&result);
}

static void expect_own_status(const char *script, int status)
{
    const char *report = in_directory("report.txt"), *json = in_directory("report.json");
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "run", "--timeout", "30s", "--report", report, "--json", json, "--",
                                           "/bin/sh", "-c", script, NULL });
    cr_assert_eq(result.exit_status, status, "'%s': exit %d, expected %d; stderr %s", script, result.exit_status,
                 status, result.err);
    cr_assert_not(exists(report) || exists(json), "no report when the command ends by itself");
    run_result_free(&result);
}

Test(run, the_command_status_passes_through, .init = make_directory, .fini = remove_directory)
{
    expect_own_status("exit 0", 0);
    expect_own_status("exit 3", 3);
    expect_own_status("kill -SEGV $$", 139);
}

Test(run, stall_triggers_when_the_output_stops)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "run", "--stall", "1s", "--", "/bin/sh", "-c",
                                           "echo first; echo second >&2; exec sleep 60", NULL });
    double took = seconds_since(&start);
    cr_assert_eq(result.exit_status, 124, "stderr: %s", result.err);
    cr_assert_str_eq(result.out, "first\n", "stdout passes through");
    cr_assert(strncmp(result.err, "second\n", 7) == 0, "stderr passes through: %s", result.err);
    cr_assert(strstr(result.err, "no output for --stall"), "%s", result.err);
    cr_assert(took >= 1.0, "not before the stall time (%.2f s)", took);
    run_result_free(&result);
}

Test(run, steady_output_is_no_stall)
{
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "run", "--stall", "1s", "--", "/bin/sh", "-c",
                                           "i=0; while [ $i -lt 15 ]; do echo line $i; i=$((i+1)); sleep 0.2; done",
                                           NULL });
    cr_assert_eq(result.exit_status, 0, "stderr: %s", result.err);
    char expected[512] = "";
    for (int i = 0; i < 15; i++)
        snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "line %d\n", i);
    cr_assert_str_eq(result.out, expected, "every line, in order");
    cr_assert_null(strstr(result.err, "diagnosing"), "%s", result.err);
    run_result_free(&result);
}

Test(run, sigterm_reports_then_reaches_the_command, .init = make_directory, .fini = remove_directory)
{
    struct spawned spawned;
    const char *report = in_directory("report.txt");
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--report", report, "--", fixture_path("poll_timeout"), NULL });
    cr_assert(spawned_ready(&spawned));
    pid_t poller = spawned.group.pids[0];
    kill(spawned.group.leader, SIGTERM);
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, 128 + SIGTERM, "the command died of the SIGTERM passed on; stderr: %s",
                 result.err);
    char *text = slurp(report);
    char expected[64];
    snprintf(expected, sizeof expected, "process %d 'poller'", poller);
    cr_assert(strstr(text, expected), "the report was written first: %s", text);
    cr_assert(strstr(text, "verdict: not hung"), "%s", text);
    free(text);
    expect_gone(poller);
    run_result_free(&result);
}

Test(run, sigusr1_diagnoses_and_keeps_going)
{
    struct spawned spawned;
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--timeout", "4s", "--", fixture_path("poll_timeout"), NULL });
    cr_assert(spawned_ready(&spawned));
    kill(spawned.group.leader, SIGUSR1);
    usleep(2500 * 1000); /* the diagnosis takes about 1 s; the command must still be running after it */
    cr_assert_eq(kill(spawned.group.pids[0], 0), 0, "SIGUSR1 does not end the command");
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, 124);
    const char *first = strstr(result.err, "diagnosing the tree");
    cr_assert(first && strstr(first + 1, "diagnosing the tree"), "two reports: on SIGUSR1 and on --timeout: %s",
              result.err);
    run_result_free(&result);
}

/* The parent of `pid`; 0 when it is gone. */
static pid_t parent_of(pid_t pid)
{
    char state;
    pid_t parent;
    return process_state(pid, &state, &parent) ? parent : 0;
}

/* The diagnosis runs in the command's parent, hangdoc's agent, which is an ancestor of the whole job: what Yama's
 * ptrace_scope 1 (Ubuntu's default, CI runners included) asks of a tracer without CAP_SYS_PTRACE. A sibling of
 * the job, as the diagnosing process used to be, gets no native stacks there. */
Test(run, the_job_is_diagnosed_from_its_parent, .init = make_directory, .fini = remove_directory)
{
    struct spawned spawned;
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--timeout", "2s", "--json", in_directory("report.json"), "--",
                                              fixture_path("inherited_mutex"), NULL });
    cr_assert(spawned_ready(&spawned));
    pid_t command = spawned.group.pids[0], agent = parent_of(command);
    cr_assert_neq(agent, spawned.group.leader, "the command is not the wrapper's own child");
    cr_assert_eq(parent_of(agent), spawned.group.leader, "its parent %d is the wrapper's child", (int)agent);
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, 124);
    char expected[4200];
    snprintf(expected, sizeof expected, "diagnosing the tree of '%s' from its parent (pid %d)",
             fixture_path("inherited_mutex"), (int)agent);
    cr_assert(strstr(result.err, expected), "'%s' in: %s", expected, result.err);
    char *json = slurp(in_directory("report.json"));
    json_object *document = json_tokener_parse(json);
    cr_assert_not_null(document);
    cr_assert(json_bool_at(document, "snapshot.ptrace.used"), "native stacks were taken");
    json_object *thread = json_thread(json_process(document, command), command);
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "taken");
    json_object_put(document);
    free(json);
    run_result_free(&result);
}

/* Without its agent (killed here; in life, one that overran a diagnosis's deadline) the job passes to the wrapper,
 * which still diagnoses it, from a child of its own that says it is no longer the job's ancestor, and ends it. */
Test(run, without_the_agent_the_wrapper_still_diagnoses_and_ends_the_job)
{
    struct spawned spawned;
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--timeout", "2s", "--", fixture_path("inherited_mutex"), NULL });
    cr_assert(spawned_ready(&spawned));
    pid_t command = spawned.group.pids[0], agent = parent_of(command);
    cr_assert_neq(agent, spawned.group.leader);
    cr_assert_eq(kill(agent, SIGKILL), 0);
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, 124, "%s", result.err);
    cr_assert(strstr(result.err, "no longer its ancestor"), "the report says who diagnosed: %s", result.err);
    cr_assert(strstr(result.err, "inherited-lock"), "the job was diagnosed: %s", result.err);
    expect_gone(command);
    run_result_free(&result);
}

/* A diagnosis that does not finish (the agent stopped here; in life, a read that never returns) is killed at its
 * deadline, and the report files still say so: a job that was ended always leaves them (issue 14). Cancelled,
 * the deadline is 5 s. */
Test(run, a_diagnosis_killed_at_its_deadline_still_leaves_report_files, .init = make_directory,
     .fini = remove_directory)
{
    struct spawned spawned;
    const char *report = in_directory("report.txt"), *json = in_directory("report.json");
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--report", report, "--json", json, "--",
                                              fixture_path("poll_timeout"), NULL });
    cr_assert(spawned_ready(&spawned));
    pid_t poller = spawned.group.pids[0], agent = parent_of(poller);
    cr_assert_neq(agent, spawned.group.leader);
    cr_assert_eq(kill(agent, SIGSTOP), 0);
    kill(spawned.group.leader, SIGTERM);
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert(strstr(result.err, "did not finish in time"), "%s", result.err);
    char *text = slurp(report);
    cr_assert(strncmp(text, "verdict: could not tell", 23) == 0, "%s", text);
    cr_assert(strstr(text, "killed"), "the report says why there is none: %s", text);
    free(text);
    char *document_text = slurp(json);
    json_validate(document_text);
    json_object *document = json_tokener_parse(document_text);
    cr_assert_not_null(document);
    cr_assert(json_object_is_type(json_at(document, "verdict.hung"), json_type_null), "could not tell: %s",
              document_text);
    cr_assert(json_has_note(document, "did not finish"), "%s", document_text);
    json_object_put(document);
    free(document_text);
    expect_gone(poller);
    run_result_free(&result);
}

static void expect_refused(const char *const *arguments, int status, const char *message)
{
    struct run_result result;
    hangdoc_run(&result, arguments);
    cr_assert_eq(result.exit_status, status, "exit %d, expected %d: %s", result.exit_status, status, result.err);
    cr_assert(strstr(result.err, message), "'%s' in: %s", message, result.err);
    run_result_free(&result);
}

Test(run, bad_input, .init = make_directory, .fini = remove_directory)
{
    expect_refused((const char *[]){ "run", NULL }, 64, "no command given");
    expect_refused((const char *[]){ "run", "--bogus", "--", "true", NULL }, 64, "unknown option '--bogus'");
    expect_refused((const char *[]){ "run", "--timeout", "soon", "--", "true", NULL }, 64, "not a duration");
    expect_refused((const char *[]){ "run", "--signal", "NOPE", "--", "true", NULL }, 64, "--signal");
    expect_refused((const char *[]){ "run", "--", "/nonexistent/command", NULL }, 127, "cannot execute");
    const char *plain = in_directory("plain");
    FILE *file = fopen(plain, "we");
    cr_assert_not_null(file);
    fputs("not a program\n", file);
    fclose(file);
    chmod(plain, 0644);
    expect_refused((const char *[]){ "run", "--", plain, NULL }, 126, "cannot execute");
    /* an unwritable report path is refused before the command starts */
    const char *marker = in_directory("marker");
    char script[300];
    snprintf(script, sizeof script, "touch %s", marker);
    expect_refused((const char *[]){ "run", "--json", "/nonexistent/dir/r.json", "--", "/bin/sh", "-c", script, NULL },
                   73, "cannot write a report to '/nonexistent/dir/r.json'");
    cr_assert_not(exists(marker), "the command did not run");
    expect_refused((const char *[]){ "run", "--save", "/nonexistent/dir/snapshots", "--", "/bin/sh", "-c", script,
                                     NULL },
                   73, "cannot make the directory '/nonexistent/dir/snapshots' for snapshots");
    expect_refused((const char *[]){ "run", "--save", plain, "--", "/bin/sh", "-c", script, NULL }, 73,
                   "not a directory");
    cr_assert_not(exists(marker), "the command did not run");
}

Test(run, keep_running_reports_and_lets_the_command_finish)
{
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "run", "--timeout", "500ms", "--keep-running", "--", "/bin/sh", "-c",
                                           "sleep 2.5; exit 5", NULL });
    cr_assert_eq(result.exit_status, 5, "the command's own status, not 124: %s", result.err);
    cr_assert(strstr(result.err, "diagnosing the tree"), "a report at the timeout: %s", result.err);
    run_result_free(&result);
}

/* The command ends while the agent waits for it to stop (it takes the interrupt late and is killed meanwhile):
 * the wait that sees its end reaps it, the agent being its parent too, and the agent must still report that
 * end, not leave the wrapper waiting for the --timeout. */
Test(run, a_command_that_ends_while_being_stopped_gives_its_status)
{
    struct spawned spawned;
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--timeout", "20s", "--", fixture_path("late_ender"), NULL });
    cr_assert(spawned_ready(&spawned));
    kill(spawned.group.leader, SIGUSR1);
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, 128 + SIGKILL, "the command's status, not the --timeout's: %d\n%s",
                 result.exit_status, result.err);
    run_result_free(&result);
}
