/* The command line: bad input gets one line on stderr and the documented exit status; --help, --version and
 * `hangdoc demo` work end to end. */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(cli, .fini = fixture_stop_all, .timeout = 120);

static void expect_refusal(const char *const *arguments, int status, const char *message_part)
{
    struct run_result result;
    hangdoc_run(&result, arguments);
    cr_assert_eq(result.exit_status, status, "exit %d, expected %d; stderr: %s", result.exit_status, status,
                 result.err);
    cr_assert_str_eq(result.out, "", "nothing on stdout");
    cr_assert(strncmp(result.err, "hangdoc: ", 9) == 0, "the message names hangdoc: %s", result.err);
    cr_assert(strstr(result.err, message_part), "'%s' in: %s", message_part, result.err);
    const char *first_newline = strchr(result.err, '\n');
    cr_assert_not_null(first_newline);
    run_result_free(&result);
}

Test(cli, non_numeric_pid)
{
    expect_refusal((const char *[]){ "abc", NULL }, 64, "'abc' is not a process id");
}

Test(cli, pid_with_trailing_garbage)
{
    expect_refusal((const char *[]){ "12x", NULL }, 64, "'12x' is not a process id");
}

Test(cli, negative_pid_is_an_unknown_option)
{
    expect_refusal((const char *[]){ "-5", NULL }, 64, "unknown option '-5'");
}

Test(cli, pid_zero)
{
    expect_refusal((const char *[]){ "0", NULL }, 64, "'0' is not a process id");
}

Test(cli, pid_that_does_not_exist)
{
    expect_refusal((const char *[]){ "2147483647", NULL }, 69, "pid 2147483647: no such process");
}

Test(cli, no_pid)
{
    expect_refusal((const char *[]){ NULL }, 64, "no pid given");
}

Test(cli, unknown_option)
{
    expect_refusal((const char *[]){ "--bogus", "1", NULL }, 64, "unknown option '--bogus'");
}

Test(cli, option_without_its_value)
{
    expect_refusal((const char *[]){ "1", "--samples", NULL }, 64, "needs a value");
}

Test(cli, bad_samples_and_interval)
{
    expect_refusal((const char *[]){ "--samples", "0", "1", NULL }, 64, "--samples takes a number");
    expect_refusal((const char *[]){ "--interval", "soon", "1", NULL }, 64, "--interval takes a duration");
}

Test(cli, own_pid)
{
    /* The shell's pid becomes hangdoc's through exec. */
    char command[4096];
    snprintf(command, sizeof command, "exec \"%s\" $$", getenv("HANGDOC_BIN"));
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/bin/sh", "-c", command, NULL });
    cr_assert_eq(result.exit_status, 64, "stderr: %s", result.err);
    cr_assert(strstr(result.err, "is hangdoc itself"), "%s", result.err);
    run_result_free(&result);
}

Test(cli, one_missing_pid_among_good_ones_is_reported_and_the_rest_diagnosed)
{
    /* a healthy fixture, not pid 1: the whole machine may hold hung processes (other tests' fixtures) */
    struct fixture fixture;
    fixture_start(&fixture, "poll_timeout");
    char pid[16], expected[64];
    snprintf(pid, sizeof pid, "%d", fixture.pids[0]);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--samples", "1", "2147483647", pid, NULL });
    cr_assert_eq(result.exit_status, 0, "stderr: %s", result.err);
    cr_assert(strstr(result.err, "pid 2147483647: no such process"), "%s", result.err);
    snprintf(expected, sizeof expected, "process %s 'poller'", pid);
    cr_assert(strstr(result.out, expected), "the good pid is diagnosed: %s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}

Test(cli, help_lists_options_and_exit_codes)
{
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--help", NULL });
    cr_assert_eq(result.exit_status, 0);
    for (const char *part = "--json\0--samples\0--interval\0--timeout\0Exit status\0  69  \0  77  \0demo\0"; *part;
         part += strlen(part) + 1)
        cr_assert(strstr(result.out, part), "--help mentions '%s'", part);
    run_result_free(&result);
}

Test(cli, version)
{
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--version", NULL });
    cr_assert_eq(result.exit_status, 0);
    /* with the commit it was built from, when built from a git checkout */
    const char *expected = HANGDOC_COMMIT[0] ? "hangdoc " HANGDOC_VERSION " (commit " HANGDOC_COMMIT ")\n"
                                             : "hangdoc " HANGDOC_VERSION "\n";
    cr_assert_str_eq(result.out, expected);
    run_result_free(&result);
}

Test(cli, demo_diagnoses_its_tree_and_ends_it)
{
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "demo", "--samples", "2", "--interval", "100ms", NULL });
    cr_assert_eq(result.exit_status, 2, "a hang caused by fork inheritance; stderr: %s", result.err);
    int trainer = 0, worker = 0;
    const char *intro = strstr(result.out, "started demo-trainer (pid ");
    cr_assert_not_null(intro, "%s", result.out);
    cr_assert_eq(sscanf(intro, "started demo-trainer (pid %d)", &trainer), 1);
    const char *worker_intro = strstr(result.out, "demo-worker (pid ");
    cr_assert_not_null(worker_intro);
    cr_assert_eq(sscanf(worker_intro, "demo-worker (pid %d)", &worker), 1);
    char expected[128];
    snprintf(expected, sizeof expected, "thread %d 'demo-worker' S [futex wait, ", worker);
    cr_assert(strstr(result.out, expected), "the worker's futex wait with its duration: %s", result.out);
    cr_assert(strstr(result.out, "no timeout"), "%s", result.out);
    snprintf(expected, sizeof expected, "wait4 pid %d", worker);
    cr_assert(strstr(result.out, expected), "%s", result.out);
    snprintf(expected, sizeof expected, "\nverdict: HUNG (fork-inheritance): thread %d 'demo-worker' waits for mutex 0x",
             worker);
    cr_assert(strstr(result.out, expected), "the demo ends with the verdict: %s", result.out);
    cr_assert(strstr(result.out, "'demo-loader' of parent"), "%s", result.out);
    cr_assert(strstr(result.out, "fix: Do not fork() while other threads may hold locks"), "%s", result.out);
    /* ... and ends with it again, with the fix, as the last lines on the screen */
    const char *recap = strstr(result.out, "\nIn short:\nverdict: HUNG (fork-inheritance): ");
    cr_assert_not_null(recap, "%s", result.out);
    snprintf(expected, sizeof expected, "\nchain: %d 'demo-trainer' → %d 'demo-worker'\nfix: Do not fork() ", trainer,
             worker);
    cr_assert(strstr(recap, expected), "%s", recap);
    size_t length = strlen(recap);
    cr_assert(length > 1 && recap[length - 1] == '\n');
    const char *last_line = recap + length - 1;
    while (last_line > recap && last_line[-1] != '\n')
        last_line--;
    cr_assert(strncmp(last_line, "fix: ", 5) == 0, "the output ends with the fix: %s", recap);
    /* The demo ended its tree: neither pid names a process any more. */
    cr_assert(kill(trainer, 0) < 0 && errno == ESRCH, "demo-trainer %d is gone", trainer);
    cr_assert(kill(worker, 0) < 0 && errno == ESRCH, "demo-worker %d is gone", worker);
    run_result_free(&result);
}

Test(cli, demo_json_is_a_document)
{
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "demo", "--json", "--samples", "1", NULL });
    cr_assert_eq(result.exit_status, 2, "stderr: %s", result.err);
    cr_assert(strstr(result.err, "started demo-trainer"), "the introduction goes to stderr with --json");
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "%s", result.out);
    json_validate(result.out);
    cr_assert_str_eq(json_string_at(document, "schema"), "hangdoc.report/2");
    cr_assert_eq(json_object_array_length(json_at(document, "processes")), 2);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "inherited-lock");
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "fork-inheritance");
    json_object_put(document);
    run_result_free(&result);
}

/* ---- the harness itself ---------------------------------------------------------------------------------------- */

/* Whether `pid` is gone (or a zombie nobody needs to kill). */
static bool gone(pid_t pid)
{
    char state;
    pid_t parent;
    return !process_state(pid, &state, &parent) || state == 'Z';
}

/* A test process that dies without stopping its fixture (a sanitizer's abort skips Criterion's .fini) leaves
 * nothing behind: the group's guard kills the DataLoader's workers too, which PyTorch forked, which no
 * PR_SET_PDEATHSIG reaches, and which, hung, never notice that their parent is gone. */
Test(cli, a_fixture_dies_with_a_test_process_that_never_stopped_it)
{
    int pids_pipe[2];
    cr_assert_eq(pipe(pids_pipe), 0);
    pid_t test_process = fork();
    cr_assert_geq(test_process, 0);
    if (test_process == 0) {
        close(pids_pipe[0]);
        struct fixture fixture;
        fixture_start_within(&fixture, "torch_dataloader_hang", 120000);
        ssize_t ignored = write(pids_pipe[1], fixture.pids, fixture.npids * sizeof *fixture.pids);
        (void)ignored;
        _exit(0); /* as a crash: no fixture_stop, no .fini */
    }
    close(pids_pipe[1]);
    pid_t reported[HARNESS_MAX_PIDS];
    ssize_t got = read(pids_pipe[0], reported, sizeof reported);
    close(pids_pipe[0]);
    cr_assert_eq(waitpid(test_process, NULL, 0), test_process);
    size_t count = got > 0 ? (size_t)got / sizeof *reported : 0;
    cr_assert_geq(count, 2, "the DataLoader started in the child test process");
    bool all_gone = false;
    for (int waited = 0; waited < 5000 && !all_gone; waited += 20) {
        all_gone = true;
        for (size_t i = 0; i < count; i++)
            all_gone &= gone(reported[i]);
        if (!all_gone)
            usleep(20000);
    }
    for (size_t i = 0; i < count && !all_gone; i++)
        kill(reported[i], SIGKILL); /* before failing: this test must not leak what it tests for */
    cr_assert(all_gone, "a process of the DataLoader outlived the test process that started it");
}
