/* `hangdoc merge` on simulated many-node jobs made from real reports: the real binary diagnoses real fixtures
 * (inherited_mutex: a worker stuck on a mutex its parent held at fork; healthy_pipe: nothing hung), and
 * merge_cluster.py turns those reports into the reports of 64 or 1,024 hosts, with host names, boot ids, pids and
 * ranks varied, synthetic collective stacks on the ranks' main threads, and WORLD_SIZE larger than the ranks seen.
 * The merge must fold the ranks, name the missing ones, list the outlier first, give the merged verdict and its
 * exit status; its JSON validates against docs/hangdoc.merge-1.schema.json, its DOT renders with Graphviz, and its
 * text matches tests/golden/merge.txt once normalised as the other golden files are (golden/normalise.py).
 *
 * The speed of a 1,024-report merge is measured by bench/merge.py, not asserted here.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(merge, .fini = fixture_stop_all, .timeout = 300);

static const char *source_path(const char *relative)
{
    static char paths[4][4096];
    static unsigned next;
    char *path = paths[next++ % 4];
    const char *root = getenv("HANGDOC_SOURCE_ROOT");
    cr_assert_not_null(root, "HANGDOC_SOURCE_ROOT is not set: run the tests through meson test");
    snprintf(path, sizeof paths[0], "%s/%s", root, relative);
    return path;
}

static void write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "we");
    cr_assert_not_null(file, "cannot write %s", path);
    fputs(text, file);
    cr_assert_eq(fclose(file), 0);
}

/* A scratch directory for one test, removed by remove_workspace. */
struct workspace {
    char root[256];
    char healthy[300];  /* healthy_pipe's report */
    char culprit[300];  /* inherited_mutex's report */
    char cluster[300];  /* the simulated hosts' reports */
    struct fixture hung; /* inherited_mutex, kept running for the golden's pid names */
};

static void make_workspace(struct workspace *work)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(work->root, sizeof work->root, "%s/hangdoc-merge-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    cr_assert_not_null(mkdtemp(work->root));
    snprintf(work->healthy, sizeof work->healthy, "%s/healthy.json", work->root);
    snprintf(work->culprit, sizeof work->culprit, "%s/culprit.json", work->root);
    snprintf(work->cluster, sizeof work->cluster, "%s/cluster", work->root);
}

/* Ends the hung fixture and removes the files. (A failed assertion leaves both to the suite's .fini and to the
 * scratch directory's cleaner: the workspaces are static so that the fixture registered with the harness outlives
 * the test's stack frame.) */
static void remove_workspace(struct workspace *work)
{
    fixture_stop(&work->hung);
    struct run_result removed;
    program_run_as(&removed, -1, (const char *[]){ "/bin/rm", "-rf", work->root, NULL });
    run_result_free(&removed);
}

/* The real JSON report of a fixture's first pid, written to `path`: without native stacks, as the golden files
 * take theirs (the rank processes get synthetic Python stacks anyway), with the exit status expected. */
static void real_report(struct fixture *fixture, const char *name, const char *path, int expected_status)
{
    fixture_start(fixture, name);
    usleep(300 * 1000); /* let every thread settle where it sleeps */
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", fixture->pids[0]);
    struct run_result result;
    hangdoc_run_once(&result, (const char *[]){ "--json", "--no-ptrace", "--samples", "3", "--interval", "100ms",
                                                pid_text, NULL });
    cr_assert_eq(result.exit_status, expected_status, "hangdoc on %s exits %d: %s", name, result.exit_status,
                 result.err);
    write_file(path, result.out);
    run_result_free(&result);
}

/* Both real reports; the hung fixture stays up until remove_workspace, for the golden's names of its pids. */
static void take_real_reports(struct workspace *work)
{
    struct fixture healthy;
    real_report(&healthy, "healthy_pipe", work->healthy, 0);
    fixture_stop(&healthy);
    real_report(&work->hung, "inherited_mutex", work->culprit, 2);
}

/* merge_cluster.py with the workspace's reports and these further arguments (NULL-terminated). */
static void make_cluster(struct workspace *work, bool with_culprit, const char *const *arguments)
{
    const char *argv[40] = { "/usr/bin/python3", source_path("tests/merge_cluster.py"), "--healthy", work->healthy,
                             "--out", work->cluster };
    size_t argc = 6;
    if (with_culprit) {
        argv[argc++] = "--culprit";
        argv[argc++] = work->culprit;
    }
    for (size_t i = 0; arguments[i] && argc < 39; i++)
        argv[argc++] = arguments[i];
    argv[argc] = NULL;
    struct run_result made;
    program_run_as(&made, -1, argv);
    cr_assert_eq(made.exit_status, 0, "merge_cluster.py failed: %s", made.err);
    run_result_free(&made);
}

static void merge_run(struct run_result *result, const char *option, const char *input)
{
    if (option)
        hangdoc_run_once(result, (const char *[]){ "merge", option, input, NULL });
    else
        hangdoc_run_once(result, (const char *[]){ "merge", input, NULL });
}

/* The JSON of the merge validates against docs/hangdoc.merge-1.schema.json; returns it parsed. */
static json_object *validated_json(struct workspace *work, const char *input)
{
    struct run_result result;
    merge_run(&result, "--json", input);
    char path[320];
    snprintf(path, sizeof path, "%s/merge.json", work->root);
    write_file(path, result.out);
    struct run_result validation;
    program_run_as(&validation, -1, (const char *[]){ "/usr/bin/python3", getenv("HANGDOC_VALIDATOR"),
                                                      source_path("docs/hangdoc.merge-1.schema.json"), path, NULL });
    cr_assert_eq(validation.exit_status, 0, "the merge validates against its JSON Schema:\n%s%s", validation.out,
                 validation.err);
    run_result_free(&validation);
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "the merge's JSON parses");
    run_result_free(&result);
    return document;
}

/* The DOT of the merge renders with Graphviz without a word on stderr. */
static void expect_dot_renders(struct workspace *work, const char *input)
{
    struct run_result result;
    merge_run(&result, "--dot", input);
    cr_assert_eq(result.exit_status, 2, "--dot keeps the verdict's exit status");
    char dot_path[320], svg_path[320];
    snprintf(dot_path, sizeof dot_path, "%s/merge.dot", work->root);
    snprintf(svg_path, sizeof svg_path, "%s/merge.svg", work->root);
    write_file(dot_path, result.out);
    run_result_free(&result);
    struct run_result rendered;
    program_run_as(&rendered, -1, (const char *[]){ "/usr/bin/dot", "-Tsvg", "-o", svg_path, dot_path, NULL });
    cr_assert_eq(rendered.exit_status, 0, "dot -Tsvg fails: %s", rendered.err);
    cr_assert_str_eq(rendered.err, "", "dot -Tsvg warns: %s", rendered.err);
    run_result_free(&rendered);
    char *svg = file_text(svg_path);
    cr_assert_not_null(svg);
    cr_assert_not_null(strstr(svg, "<svg"));
    free(svg);
}

/* `needle` comes before `later` in `text`, both present. */
static void expect_order(const char *text, const char *needle, const char *later)
{
    const char *first = strstr(text, needle), *second = strstr(text, later);
    cr_assert_not_null(first, "the merge says \"%s\":\n%s", needle, text);
    cr_assert_not_null(second, "the merge says \"%s\":\n%s", later, text);
    cr_assert_lt(first, second, "\"%s\" comes before \"%s\"", needle, later);
}

static void expect_line(const char *text, const char *line)
{
    cr_assert_not_null(strstr(text, line), "the merge says \"%s\":\n%s", line, text);
}

Test(merge, sixty_four_hosts_one_rank_never_joined)
{
    static struct workspace work;
    make_workspace(&work);
    take_real_reports(&work);
    make_cluster(&work, true, (const char *[]){ "--hosts", "64", "--world-size", "66", "--culprit-rank", "17",
                                                "--pid-offsets", NULL });
    struct run_result result;
    merge_run(&result, NULL, work.cluster);
    cr_assert_eq(result.exit_status, 2, "a hang by fork inheritance exits 2: %s", result.err);
    expect_line(result.out, "hangdoc merge: 64 reports from 64 hosts");
    expect_line(result.out, "ranks: 64 seen of WORLD_SIZE 66 (the rank from RANK): ranks 0-63 (64)\n");
    expect_line(result.out, "missing: ranks 64-65 (2): no report shows a process with these ranks\n");
    expect_order(result.out, "  rank 17 · outlier · main thread waits for a DataLoader batch",
                 "  ranks 0-16,18-63 (63) · the most common · main thread waits in all_reduce");
    char verdict[512];
    snprintf(verdict, sizeof verdict,
             "verdict: HUNG (fork-inheritance): 63 ranks wait in all_reduce ← rank 17 never joined the "
             "all_reduce ← its main thread waits for a DataLoader batch ← worker %d waits for a mutex its parent "
             "held at fork [inherited-lock, certain]\n",
             work.hung.pids[2]);
    expect_line(result.out, verdict);
    char culprit[128];
    snprintf(culprit, sizeof culprit, "    rank 17 on node-0017, pid %d: HUNG (fork-inheritance): inherited-lock",
             work.hung.pids[0]);
    expect_line(result.out, culprit);
    expect_line(result.out, "  also: ranks 64-65 (2) of WORLD_SIZE 66 never reported\n");
    run_result_free(&result);

    json_object *merged = validated_json(&work, work.cluster);
    cr_assert_str_eq(json_string_at(merged, "verdict.kind"), "rank-hung");
    cr_assert_eq(json_int_at(merged, "verdict.culprit.rank", -1), 17);
    cr_assert_str_eq(json_string_at(merged, "verdict.culprit.host"), "node-0017");
    cr_assert_eq(json_int_at(merged, "verdict.culprit.local_verdict.pid", -1), work.hung.pids[2]);
    json_object *job = json_object_array_get_idx(json_at(merged, "jobs"), 0);
    cr_assert_str_eq(json_string_at(job, "missing.folded"), "64-65");
    cr_assert_eq(json_object_array_length(json_at(job, "classes")), 2u);
    json_object_put(merged);
    expect_dot_renders(&work, work.cluster);

    /* the same reports as one stream on standard input */
    char command[600];
    snprintf(command, sizeof command, "cat '%s'/*.json | '%s' merge -", work.cluster, getenv("HANGDOC_BIN"));
    struct run_result streamed;
    program_run_as(&streamed, -1, (const char *[]){ "/bin/sh", "-c", command, NULL });
    cr_assert_eq(streamed.exit_status, 2, "%s", streamed.err);
    expect_line(streamed.out, "hangdoc merge: 64 reports from 64 hosts");
    expect_line(streamed.out, "verdict: HUNG (fork-inheritance): 63 ranks wait in all_reduce ← rank 17 never joined");
    run_result_free(&streamed);
    remove_workspace(&work);
}

Test(merge, a_thousand_hosts_fold_their_ranks)
{
    static struct workspace work;
    make_workspace(&work);
    take_real_reports(&work);
    /* 1,024 hosts of two ranks each, eight ranks (four hosts' worth) never reported */
    make_cluster(&work, true, (const char *[]){ "--hosts", "1024", "--ranks-per-host", "2", "--world-size", "2056",
                                                "--culprit-rank", "1029", "--pid-offsets", NULL });
    struct run_result result;
    merge_run(&result, NULL, work.cluster);
    cr_assert_eq(result.exit_status, 2, "%s", result.err);
    expect_line(result.out, "hangdoc merge: 1024 reports from 1024 hosts");
    expect_line(result.out, "ranks: 2048 seen of WORLD_SIZE 2056 (the rank from RANK): ranks 0-2047 (2048)\n");
    expect_line(result.out, "missing: ranks 2048-2055 (8)");
    expect_order(result.out, "  rank 1029 · outlier", "  ranks 0-1028,1030-2047 (2047) · the most common");
    expect_line(result.out, "verdict: HUNG (fork-inheritance): 2047 ranks wait in all_reduce ← rank 1029 never "
                            "joined the all_reduce ← its main thread waits for a DataLoader batch ← worker ");
    expect_line(result.out, "    rank 1029 on node-0514, pid ");
    run_result_free(&result);
    json_object *merged = validated_json(&work, work.cluster);
    json_object *job = json_object_array_get_idx(json_at(merged, "jobs"), 0);
    cr_assert_eq(json_object_array_length(json_at(job, "ranks")), 2048u);
    cr_assert_str_eq(json_string_at(job, "seen.folded"), "0-2047");
    cr_assert_eq(json_int_at(merged, "verdict.culprit.rank", -1), 1029);
    json_object_put(merged);
    expect_dot_renders(&work, work.cluster);
    remove_workspace(&work);
}

Test(merge, every_rank_alike_names_no_culprit)
{
    static struct workspace work;
    make_workspace(&work);
    take_real_reports(&work);
    make_cluster(&work, false, (const char *[]){ "--hosts", "64", "--pid-offsets", NULL });
    struct run_result result;
    merge_run(&result, NULL, work.cluster);
    cr_assert_eq(result.exit_status, 0, "could not tell: exit 0 (%s)", result.err);
    expect_line(result.out, "missing: none\n");
    expect_line(result.out, "verdict: could not tell: all 64 ranks wait in all_reduce; no rank is hung by itself");
    expect_line(result.out, "TORCH_NCCL_TRACE_BUFFER_SIZE=");
    expect_line(result.out, "TORCH_NCCL_DUMP_ON_TIMEOUT=1");
    cr_assert_null(strstr(result.out, "outlier"), "no culprit is named:\n%s", result.out);
    run_result_free(&result);
    json_object *merged = validated_json(&work, work.cluster);
    cr_assert_str_eq(json_string_at(merged, "verdict.kind"), "uniform");
    cr_assert_null(json_at(merged, "verdict.culprit"), "no culprit");
    json_object_put(merged);
    remove_workspace(&work);
}

Test(merge, missing_ranks_are_the_answer_when_nothing_is_hung)
{
    static struct workspace work;
    make_workspace(&work);
    take_real_reports(&work);
    make_cluster(&work, false, (const char *[]){ "--hosts", "64", "--world-size", "72", NULL });
    struct run_result result;
    merge_run(&result, NULL, work.cluster);
    cr_assert_eq(result.exit_status, 0, "%s", result.err);
    expect_line(result.out, "verdict: could not tell: all 64 ranks wait in all_reduce ← ranks 64-71 (8) of "
                            "WORLD_SIZE 72 never reported: no report shows their processes\n");
    run_result_free(&result);
    json_object *merged = validated_json(&work, work.cluster);
    cr_assert_str_eq(json_string_at(merged, "verdict.kind"), "missing-ranks");
    json_object_put(merged);
    remove_workspace(&work);
}

Test(merge, reports_over_time_show_which_stacks_moved)
{
    static struct workspace work;
    make_workspace(&work);
    take_real_reports(&work);
    make_cluster(&work, false, (const char *[]){ "--hosts", "8", "--samples", "3", "--moving-rank", "3", NULL });
    json_object *merged = validated_json(&work, work.cluster);
    json_object *job = json_object_array_get_idx(json_at(merged, "jobs"), 0);
    json_object *ranks = json_at(job, "ranks");
    cr_assert_eq(json_object_array_length(ranks), 8u, "three reports of each rank are one rank");
    for (size_t r = 0; r < 8; r++) {
        json_object *rank = json_object_array_get_idx(ranks, r);
        cr_assert_eq(json_int_at(rank, "reports", -1), 3);
        cr_assert_eq(json_bool_at(rank, "stack_unchanged"), r != 3, "rank %zu", r);
    }
    cr_assert_str_eq(json_string_at(merged, "verdict.kind"), "outlier");
    cr_assert_eq(json_int_at(merged, "verdict.culprit.rank", -1), 3);
    json_object_put(merged);
    remove_workspace(&work);
}

Test(merge, golden_text)
{
#if !defined(__x86_64__)
    cr_skip_test("golden files are recorded on x86-64");
#endif
    static struct workspace work;
    make_workspace(&work);
    take_real_reports(&work);
    /* 8 hosts of 2 ranks, WORLD_SIZE 18; rank 5's host is the culprit's, whose pids stay the fixture's */
    make_cluster(&work, true, (const char *[]){ "--hosts", "8", "--ranks-per-host", "2", "--world-size", "18",
                                                "--culprit-rank", "5", NULL });
    struct run_result result;
    merge_run(&result, NULL, work.cluster);
    cr_assert_eq(result.exit_status, 2, "%s", result.err);
    char report_path[320];
    snprintf(report_path, sizeof report_path, "%s/merge.txt", work.root);
    write_file(report_path, result.out);
    run_result_free(&result);
    char roles[3][48];
    static const char *const names[] = { "parent", "holder", "child" };
    for (size_t i = 0; i < 3; i++)
        snprintf(roles[i], sizeof roles[i], "%s=%d", names[i], work.hung.pids[i]);
    struct run_result normalised;
    program_run_as(&normalised, -1, (const char *[]){ "/usr/bin/python3", source_path("tests/golden/normalise.py"),
                                                      "--fixtures", work.cluster, "--input", report_path,
                                                      "--pid", roles[0], "--pid", roles[1], "--pid", roles[2],
                                                      "--pid-list", NULL });
    cr_assert_eq(normalised.exit_status, 0, "normalise.py failed: %s", normalised.err);
    const char *expected_path = source_path("tests/golden/merge.txt");
    const char *update = getenv("HANGDOC_UPDATE_GOLDEN");
    if (update && *update) {
        write_file(expected_path, normalised.out);
    } else {
        char *expected = file_text(expected_path);
        cr_assert_not_null(expected, "no %s: run with HANGDOC_UPDATE_GOLDEN=1 to create it", expected_path);
        if (strcmp(expected, normalised.out) != 0) {
            char actual_path[320];
            snprintf(actual_path, sizeof actual_path, "%s/merge.actual", getenv("HANGDOC_FIXTURES"));
            write_file(actual_path, normalised.out);
            struct run_result diff;
            program_run_as(&diff, -1, (const char *[]){ "/usr/bin/diff", "-u", expected_path, actual_path, NULL });
            cr_assert_fail("the merge's text differs from %s:\n%s", expected_path, diff.out);
        }
        free(expected);
    }
    run_result_free(&normalised);
    remove_workspace(&work);
}

Test(merge, usage_and_inputs_that_cannot_be_read)
{
    struct run_result result;
    hangdoc_run_once(&result, (const char *[]){ "merge", NULL });
    cr_assert_eq(result.exit_status, 64, "no report: a usage error");
    run_result_free(&result);
    hangdoc_run_once(&result, (const char *[]){ "merge", "--json", "--dot", "x.json", NULL });
    cr_assert_eq(result.exit_status, 64);
    run_result_free(&result);
    hangdoc_run_once(&result, (const char *[]){ "merge", "/nonexistent/hangdoc-merge.json", NULL });
    cr_assert_eq(result.exit_status, 66, "nothing could be read: %s", result.err);
    cr_assert_not_null(strstr(result.err, "no report could be read"));
    run_result_free(&result);
    hangdoc_run_once(&result, (const char *[]){ "merge", "--help", NULL });
    cr_assert_eq(result.exit_status, 0);
    cr_assert_not_null(strstr(result.out, "hangdoc.merge/1"));
    run_result_free(&result);
}
