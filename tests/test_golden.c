/* Golden tests: the text report of each scenario, compared line by line with tests/golden/<scenario>.txt after
 * the volatile values (pids, tids, addresses, durations, CPU figures, host, kernel, wait channels, build paths)
 * are replaced with placeholders by golden/normalise.py.
 *
 * The fixtures' pids get the names of their roles (<parent>, <child>...); the other pids and tids of the tree,
 * read from a JSON report of the same fixture, get <pid1>, <pid2>... in order of appearance. Scenarios whose
 * shape depends on timing (GNU OpenMP: the child sleeps on one of two words) are not here; their JSON tests
 * accept both shapes.
 *
 * The reports are taken with --no-ptrace: see normalised_report().
 *
 * HANGDOC_UPDATE_GOLDEN=1 meson test golden rewrites the expected files from what hangdoc prints now: review
 * the diff before committing it.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(golden, .fini = fixture_stop_all, .timeout = 120);

static const char *source_path(const char *relative)
{
    static char path[4096];
    const char *root = getenv("HANGDOC_SOURCE_ROOT");
    cr_assert_not_null(root, "HANGDOC_SOURCE_ROOT is not set: run the tests through meson test");
    snprintf(path, sizeof path, "%s/%s", root, relative);
    return path;
}

/* Appends " N" for every pid and tid in the JSON report (and each process's parent). */
static void collect_pids(json_object *document, char *out, size_t size)
{
    size_t used = strlen(out);
    json_object *processes = json_at(document, "processes");
    for (size_t p = 0; p < json_object_array_length(processes) && used + 40 < size; p++) {
        json_object *process = json_object_array_get_idx(processes, p);
        used += (size_t)snprintf(out + used, size - used, " %lld %lld", json_int_at(process, "pid", 0),
                                 json_int_at(process, "ppid", 0));
        json_object *threads = json_at(process, "threads");
        for (size_t t = 0; t < json_object_array_length(threads) && used + 20 < size; t++)
            used += (size_t)snprintf(out + used, size - used, " %lld",
                                     json_int_at(json_object_array_get_idx(threads, t), "tid", 0));
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "we");
    cr_assert_not_null(file, "cannot write %s", path);
    fputs(text, file);
    cr_assert_eq(fclose(file), 0);
}

/* The normalised text report of the fixture's first pid. */
static char *normalised_report(const struct fixture *fixture, const char *const *roles)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", fixture->pids[0]);
    /* Without native stacks: their offsets differ between builds (a sanitizer's interceptors add frames), and a
     * stop would turn the next run's timed waits into restart_syscall. tests/test_stacks.c covers the stacks. */
    struct run_result json_run;
    hangdoc_run(&json_run, (const char *[]){ "--json", "--no-ptrace", "--samples", "3", "--interval", "100ms",
                                             pid_text, NULL });
    json_object *document = json_tokener_parse(json_run.out);
    cr_assert_not_null(document, "hangdoc printed no JSON (exit %d): %s", json_run.exit_status, json_run.err);
    run_result_free(&json_run);
    char pid_list[4096] = "";
    collect_pids(document, pid_list, sizeof pid_list);
    json_object_put(document);

    struct run_result report;
    hangdoc_run(&report, (const char *[]){ "--no-ptrace", "--samples", "3", "--interval", "100ms", pid_text, NULL });
    char report_path[] = "/tmp/hangdoc-golden-XXXXXX";
    int fd = mkstemp(report_path);
    cr_assert_geq(fd, 0);
    close(fd);
    write_file(report_path, report.out);
    run_result_free(&report);

    /* argv: the normaliser, its options, a --pid per role, --pid-list and every pid */
    const char *argv[96] = { "/usr/bin/python3", source_path("tests/golden/normalise.py"), "--fixtures",
                             getenv("HANGDOC_FIXTURES"), "--input", report_path };
    size_t argc = 6;
    char role_arguments[HARNESS_MAX_PIDS][64];
    for (size_t i = 0; i < fixture->npids && roles[i]; i++) {
        snprintf(role_arguments[i], sizeof role_arguments[i], "%s=%d", roles[i], fixture->pids[i]);
        argv[argc++] = "--pid";
        argv[argc++] = role_arguments[i];
    }
    argv[argc++] = "--pid-list";
    for (char *pid = strtok(pid_list, " "); pid && argc < 94; pid = strtok(NULL, " "))
        argv[argc++] = pid;
    argv[argc] = NULL;
    struct run_result normalised;
    program_run_as(&normalised, -1, argv);
    unlink(report_path);
    cr_assert_eq(normalised.exit_status, 0, "normalise.py failed: %s", normalised.err);
    char *text = normalised.out;
    free(normalised.err);
    return text;
}

static void expect_golden(const char *fixture_name, const char *const *roles)
{
#if !defined(__x86_64__)
    /* the expected files were recorded on x86-64: other architectures name some system calls differently (ppoll
     * for poll, clone for vfork) */
    cr_skip_test("golden files are recorded on x86-64");
#endif
    struct fixture fixture;
    fixture_start(&fixture, fixture_name);
    usleep(300 * 1000); /* let every thread of the fixture settle where it sleeps */
    char *actual = normalised_report(&fixture, roles);
    fixture_stop(&fixture);
    char relative[256];
    snprintf(relative, sizeof relative, "tests/golden/%s.txt", fixture_name);
    const char *expected_path = source_path(relative);
    const char *update = getenv("HANGDOC_UPDATE_GOLDEN");
    if (update && *update) {
        write_file(expected_path, actual);
        free(actual);
        return;
    }
    char *expected = file_text(expected_path);
    cr_assert_not_null(expected, "no expected file %s: run with HANGDOC_UPDATE_GOLDEN=1 to create it", expected_path);
    if (strcmp(actual, expected) != 0) {
        char actual_path[300];
        snprintf(actual_path, sizeof actual_path, "%s/%s.actual", getenv("HANGDOC_FIXTURES"), fixture_name);
        write_file(actual_path, actual);
        struct run_result diff;
        program_run_as(&diff, -1, (const char *[]){ "/usr/bin/diff", "-u", expected_path, actual_path, NULL });
        cr_assert_fail("the text report of %s differs from %s:\n%s", fixture_name, expected_path, diff.out);
    }
    free(expected);
    free(actual);
}

#define ROLES(...) ((const char *const[]){ __VA_ARGS__, NULL })

Test(golden, inherited_mutex) { expect_golden("inherited_mutex", ROLES("parent", "holder", "child")); }
Test(golden, pipe_waiter) { expect_golden("pipe_waiter", ROLES("parent", "holder", "child")); }
Test(golden, lock_cycle) { expect_golden("lock_cycle", ROLES("main", "first", "second")); }
Test(golden, abandoned_lock) { expect_golden("abandoned_lock", ROLES("main", "quitter")); }
Test(golden, pi_mutex) { expect_golden("pi_mutex", ROLES("waiter", "holder")); }
Test(golden, vfork_parent) { expect_golden("vfork_parent", ROLES("parent", "child")); }
Test(golden, worker_died) { expect_golden("worker_died", ROLES("parent", "worker")); }
Test(golden, worker_crashed) { expect_golden("worker_crashed", ROLES("parent", "worker")); }
Test(golden, atexit_fork) { expect_golden("atexit_fork", ROLES("parent", "child")); }
Test(golden, python_fork_lock) { expect_golden("python_fork_lock", ROLES("parent", "child")); }
Test(golden, healthy_pipe) { expect_golden("healthy_pipe", ROLES("parent", "writer")); }
Test(golden, idle_pool) { expect_golden("idle_pool", ROLES("main", "first", "second", "producer")); }
Test(golden, poll_timeout) { expect_golden("poll_timeout", ROLES("poller", "ticker")); }
Test(golden, zombie) { expect_golden("zombie", ROLES("parent", "zombie")); }
