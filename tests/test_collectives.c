/* A distributed job's ranks in their collectives (issue 42): real torch.distributed on the gloo backend over
 * loopback, 2 to 4 ranks started by tests/scenarios/torch_collectives.py the way torchrun starts them, with
 * Debian's PyTorch and, in the chroot of Debian's development suite, PyTorch 2.x on Python 3.14. Each test asserts
 * the finding, its subject (the odd rank), every rank's collective and call site, and the backend's timeout; the
 * healthy job, whose collectives complete, is not hung. Diagnosed with --stuck-after 1s: the collectives' waits
 * are timed (the fixture's process group gives them an hour), so the rules wait for the threshold. */
#include "harness.h"
#include "python_harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCRIPT "torch_collectives.py"
#define READY_TIMEOUT_MS 120000 /* 4 interpreters importing torch on 2 cores */
#define PG_TIMEOUT_S 3600.0

TestSuite(collectives, .fini = fixture_stop_all, .timeout = 300);

/* The job: the launcher, then each rank's pid, then the extra pid the mode reports (fixture.pids). */
struct job {
    struct fixture fixture;
    int world;
};

static void start_job(struct job *job, const char *python, const char *mode, int world, int odd)
{
    char path[4096], world_text[8], odd_text[8];
    snprintf(path, sizeof path, "%s/tests/scenarios/%s", getenv("HANGDOC_SOURCE_ROOT"), SCRIPT);
    snprintf(world_text, sizeof world_text, "%d", world);
    snprintf(odd_text, sizeof odd_text, "%d", odd);
    fixture_start_command(&job->fixture, python, (const char *[]){ python, path, mode, world_text, odd_text, NULL },
                          READY_TIMEOUT_MS);
    job->world = world;
    cr_assert_geq(job->fixture.npids, (size_t)world + 1, "the launcher reports every rank");
}

static pid_t rank_pid(const struct job *job, int rank)
{
    return job->fixture.pids[1 + rank];
}

static json_object *diagnose(const struct job *job, int expected_status)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)job->fixture.pids[0]);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "--stuck-after", "1s", pid_text, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "hangdoc printed JSON (exit %d): %s", result.exit_status, result.err);
    cr_assert_eq(result.exit_status, expected_status, "exit %d, expected %d; findings %s", result.exit_status,
                 expected_status, findings_text(document));
    json_validate(result.out);
    run_result_free(&result);
    return document;
}

/* Rank `rank`'s collective in its process's JSON: `name`, called at the fixture's line marked `site`, by its main
 * thread, with gloo's thread waiting on a peer under the process group's timeout. */
static void expect_collective(json_object *document, const struct job *job, int rank, const char *name,
                              const char *site)
{
    json_object *process = json_process(document, rank_pid(job, rank));
    json_object *collective = json_at(process, "collective");
    cr_assert(collective && !json_object_is_type(collective, json_type_null), "rank %d is in a collective", rank);
    cr_assert_str_eq(json_string_at(collective, "name"), name, "rank %d's collective", rank);
    cr_assert_eq(json_int_at(collective, "tid", 0), rank_pid(job, rank), "rank %d: its main thread is in it", rank);
    cr_assert(strstr(json_string_at(collective, "file"), "/torch/distributed/"), "rank %d: torch's frame", rank);
    cr_assert(strstr(json_string_at(collective, "site_file"), SCRIPT), "rank %d: the call site is the script's", rank);
    cr_assert_eq(json_int_at(collective, "site_line", 0), python_marked_line(SCRIPT, site), "rank %d's line", rank);
    cr_assert_str_eq(json_string_at(collective, "site_function"), "rank_main");
    cr_assert_str_eq(json_string_at(collective, "backend"), "gloo");
    double timeout = json_object_get_double(json_at(collective, "backend_timeout_s"));
    cr_assert(timeout > PG_TIMEOUT_S - 600 && timeout <= PG_TIMEOUT_S, "rank %d: gloo's wait times out within the "
              "process group's hour, in %.0f s", rank, timeout);
}

static void expect_in_no_collective(json_object *document, const struct job *job, int rank)
{
    json_object *collective = json_at(json_process(document, rank_pid(job, rank)), "collective");
    cr_assert(!collective || json_object_is_type(collective, json_type_null), "rank %d is in no collective", rank);
}

static void expect_members(json_object *finding, const struct job *job, const int *ranks, size_t nranks)
{
    for (size_t r = 0; r < nranks; r++)
        cr_assert(json_finding_has_member(finding, rank_pid(job, ranks[r])), "rank %d's thread is a member", ranks[r]);
}

static void expect_text(const char *text, const char *part)
{
    cr_assert(text && strstr(text, part), "'%s' in '%s'", part, text ? text : "(null)");
}

/* `before`, the fixture's line marked `site`, then `after`: "rank 1 in broadcast at torch_collectives.py:58". */
static char *at_line(const char *before, const char *site, const char *after)
{
    char *words;
    cr_assert_geq(asprintf(&words, "%s%ld%s", before, python_marked_line(SCRIPT, site), after), 0);
    return words;
}

static void expect_mismatch(const char *python, int world)
{
    struct job job;
    start_job(&job, python, "mismatch", world, 1);
    json_object *document = diagnose(&job, EXIT_HANG);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "deadlock");
    json_object *finding = json_only_finding(document, "collective-mismatch", rank_pid(&job, 1));
    cr_assert_eq(json_int_at(finding, "tid", 0), rank_pid(&job, 1), "the odd rank's main thread is the subject");
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    const char *summary = json_string_at(finding, "summary");
    char *others = at_line(world == 4 ? "ranks 0,2,3 in all_reduce at " SCRIPT ":" : "ranks 0,2 in all_reduce at " SCRIPT ":",
                           "all_reduce", ";");
    char *odd = at_line("rank 1 in broadcast at " SCRIPT ":", "broadcast", "");
    expect_text(summary, "mismatched collectives: ");
    expect_text(summary, others);
    expect_text(summary, odd);
    free(others);
    free(odd);
    expect_text(json_string_at(finding, "evidence.timeout"), "gloo's timeout fires in");
    for (int rank = 0; rank < world; rank++)
        expect_collective(document, &job, rank, rank == 1 ? "broadcast" : "all_reduce",
                          rank == 1 ? "broadcast" : "all_reduce");
    expect_members(finding, &job, (const int[]){ 0, 1, 2, 3 }, (size_t)world);
    json_object_put(document);
    fixture_stop(&job.fixture);
}

/* Rank 1 calls broadcast where ranks 0, 2 and 3 call all_reduce: all four wait until the timeout. */
Test(collectives, mismatched_collectives_name_the_odd_rank_and_every_call_site)
{
    expect_mismatch(SYSTEM_PYTHON, 4);
}

/* The same with PyTorch 2.x on Python 3.14 (Debian's development suite, in its chroot). */
Test(collectives, mismatched_collectives_with_pytorch_2_on_python_3_14)
{
    char launcher[4096];
    python_modern(MODERN_MINOR, launcher, sizeof launcher);
    expect_mismatch(launcher, 3);
}

/* Rank 1 skipped the all_reduce and waits at the barrier after it; ranks 0 and 2 wait in the all_reduce. */
Test(collectives, a_rank_that_skipped_a_collective_waits_at_a_later_barrier)
{
    struct job job;
    start_job(&job, SYSTEM_PYTHON, "skipped", 3, 1);
    json_object *document = diagnose(&job, EXIT_HANG);
    json_object *finding = json_only_finding(document, "collective-mismatch", rank_pid(&job, 1));
    char *odd = at_line("rank 1 in barrier at " SCRIPT ":", "barrier", ";");
    expect_text(json_string_at(finding, "summary"), odd);
    free(odd);
    expect_collective(document, &job, 0, "all_reduce", "all_reduce");
    expect_collective(document, &job, 1, "barrier", "barrier");
    expect_collective(document, &job, 2, "all_reduce", "all_reduce");
    json_object_put(document);
    fixture_stop(&job.fixture);
}

/* Rank 1 exited (status 1) after the group was up; a child it forked keeps its sockets open, so ranks 0 and 2 are
 * not told and wait in all_reduce. The launcher has not reaped it: its zombie is the finding's subject. */
Test(collectives, a_rank_that_exited_is_named_while_the_others_wait)
{
    struct job job;
    start_job(&job, SYSTEM_PYTHON, "dead", 3, 1);
    cr_assert_eq(job.fixture.npids, 5u, "the launcher reports the keeper");
    json_object *document = diagnose(&job, EXIT_HANG);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "worker-died");
    json_object *finding = json_only_finding(document, "rank-exited", rank_pid(&job, 1));
    const char *summary = json_string_at(finding, "summary");
    expect_text(summary, "rank 1 of 3 is gone from this host");
    char *waiting = at_line("ranks 0,2 wait in all_reduce at " SCRIPT ":", "all_reduce", " for ");
    expect_text(summary, waiting);
    free(waiting);
    expect_text(json_string_at(finding, "evidence.exited"), "exited with status 1 and was not reaped");
    expect_collective(document, &job, 0, "all_reduce", "all_reduce");
    expect_collective(document, &job, 2, "all_reduce", "all_reduce");
    expect_members(finding, &job, (const int[]){ 0, 2 }, 2);
    json_object_put(document);
    fixture_stop(&job.fixture);
}

/* Rank 1 waits for its DataLoader's next batch, which its worker takes an hour to load; ranks 0 and 2 wait in
 * all_reduce for it. Nothing of rank 1 names a root cause (its worker sleeps with a timeout): the verdict is the
 * straggler, cause unknown. */
Test(collectives, a_rank_stuck_in_its_own_data_loading_is_the_one_the_others_wait_for)
{
    struct job job;
    start_job(&job, SYSTEM_PYTHON, "loading", 3, 1);
    json_object *document = diagnose(&job, EXIT_HANG);
    json_object *finding = json_only_finding(document, "collective-straggler", rank_pid(&job, 1));
    cr_assert_eq(json_int_at(finding, "tid", 0), rank_pid(&job, 1));
    char *waiting = at_line("ranks 0,2 wait in all_reduce at " SCRIPT ":", "all_reduce",
                            " for rank 1, which is in no collective");
    expect_text(json_string_at(finding, "summary"), waiting);
    free(waiting);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "unknown");
    expect_in_no_collective(document, &job, 1);
    expect_collective(document, &job, 0, "all_reduce", "all_reduce");
    expect_collective(document, &job, 2, "all_reduce", "all_reduce");
    expect_members(finding, &job, (const int[]){ 0, 2 }, 2);
    json_object_put(document);
    fixture_stop(&job.fixture);
}

/* Every rank calls all_reduce every 50 ms: the collectives complete, and the job is not hung. */
Test(collectives, a_job_whose_collectives_complete_is_not_hung)
{
    struct job job;
    start_job(&job, SYSTEM_PYTHON, "healthy", 2, 1);
    json_object *document = diagnose(&job, EXIT_NO_HANG);
    const char *const allowed[] = { "idle", NULL };
    expect_only_findings(document, allowed);
    json_object_put(document);
    fixture_stop(&job.fixture);
}

/* Below the threshold the ranks' collectives are shown, and no finding is made: a slow collective is not a hang. */
Test(collectives, a_mismatch_younger_than_the_threshold_is_shown_but_not_called_hung)
{
    struct job job;
    start_job(&job, SYSTEM_PYTHON, "mismatch", 2, 1);
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)job.fixture.pids[0]);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--stuck-after", "1h", pid_text, NULL });
    cr_assert_eq(result.exit_status, EXIT_NO_HANG, "exit %d:\n%s", result.exit_status, result.out);
    char *odd = at_line("collective: broadcast at " SCRIPT ":", "broadcast", " (thread ");
    expect_text(result.out, odd);
    free(odd);
    expect_text(result.out, "gloo: ");
    /* the job's table of calls, one line per call */
    expect_text(result.out, "collectives of the job's ranks here (2 of 2, master 127.0.0.1:");
    char *reduce = at_line("\n  all_reduce at " SCRIPT ":", "all_reduce", "  rank 0\n");
    char *broadcast = at_line("\n  broadcast at " SCRIPT ":", "broadcast", "  rank 1\n");
    expect_text(result.out, reduce);
    expect_text(result.out, broadcast);
    free(reduce);
    free(broadcast);
    cr_assert_null(strstr(result.out, "collective-mismatch"), "no finding under the threshold:\n%s", result.out);
    run_result_free(&result);
    fixture_stop(&job.fixture);
}

/* ---- hangdoc merge: one report per rank, as each rank's host would take it ---- */

/* A scratch directory with the JSON report of each rank's own pid (rank.<N>.json), taken one after the other as
 * a job's hosts each diagnose their rank; `skip` (-1: none) has no report, as a host whose rank died has none. */
struct reports {
    char directory[256];
};

static void report_each_rank(struct reports *reports, const struct job *job, int skip)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(reports->directory, sizeof reports->directory, "%s/hangdoc-collectives-XXXXXX",
             tmp && *tmp ? tmp : P_tmpdir);
    cr_assert_not_null(mkdtemp(reports->directory));
    for (int rank = 0; rank < job->world; rank++) {
        if (rank == skip)
            continue;
        char pid_text[16], path[512];
        snprintf(pid_text, sizeof pid_text, "%d", (int)rank_pid(job, rank));
        snprintf(path, sizeof path, "%s/rank.%d.json", reports->directory, rank);
        struct run_result result;
        hangdoc_run_once(&result, (const char *[]){ "--json", "--stuck-after", "1s", pid_text, NULL });
        FILE *file = fopen(path, "we");
        cr_assert_not_null(file);
        fputs(result.out, file);
        cr_assert_eq(fclose(file), 0);
        run_result_free(&result);
    }
}

static json_object *merge_reports(const struct reports *reports, int expected_status, char **text)
{
    struct run_result result;
    hangdoc_run_once(&result, (const char *[]){ "merge", reports->directory, NULL });
    cr_assert_eq(result.exit_status, expected_status, "merge exits %d, got %d:\n%s", expected_status,
                 result.exit_status, result.out);
    *text = strdup(result.out);
    run_result_free(&result);
    hangdoc_run_once(&result, (const char *[]){ "merge", "--json", reports->directory, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "merge --json printed JSON: %s", result.err);
    json_validate_against(result.out, "hangdoc.merge-1.schema.json");
    run_result_free(&result);
    return document;
}

static void remove_reports(struct reports *reports)
{
    struct run_result removed;
    program_run_as(&removed, -1, (const char *[]){ "/bin/rm", "-rf", reports->directory, NULL });
    run_result_free(&removed);
}

/* Each rank's host sees one rank, not hung by itself (a collective's wait is on its peers); the merge sees the
 * mismatch: its table of collectives, and the odd rank as the culprit. */
Test(collectives, merge_names_mismatched_collectives_across_hosts)
{
    struct job job;
    start_job(&job, SYSTEM_PYTHON, "mismatch", 4, 1);
    struct reports reports;
    report_each_rank(&reports, &job, -1);
    char *text;
    json_object *document = merge_reports(&reports, EXIT_HANG, &text);
    char *verdict = at_line("verdict: HUNG (deadlock): mismatched collectives: ranks 0,2-3 (3) in all_reduce at "
                            SCRIPT ":", "all_reduce", "; ");
    char *odd = at_line("rank 1 in broadcast at " SCRIPT ":", "broadcast", " ← rank 1 makes the odd call");
    expect_text(text, verdict);
    expect_text(text, odd);
    expect_text(text, "[collective-mismatch, likely]");
    expect_text(text, "collectives of the ranks");
    free(verdict);
    free(odd);
    free(text);
    json_object *final = json_at(document, "verdict");
    cr_assert_str_eq(json_string_at(final, "kind"), "mismatch");
    cr_assert_eq(json_int_at(final, "culprit.rank", -1), 1);
    json_object *calls = json_at(json_object_array_get_idx(json_at(document, "jobs"), 0), "collectives");
    cr_assert_eq(json_object_array_length(calls), 2u);
    cr_assert_str_eq(json_string_at(json_object_array_get_idx(calls, 0), "name"), "all_reduce");
    cr_assert_str_eq(json_string_at(json_object_array_get_idx(calls, 0), "ranks.folded"), "0,2-3");
    cr_assert_str_eq(json_string_at(json_object_array_get_idx(calls, 1), "name"), "broadcast");
    cr_assert_str_eq(json_string_at(json_object_array_get_idx(calls, 1), "ranks.folded"), "1");
    json_object_put(document);
    remove_reports(&reports);
    fixture_stop(&job.fixture);
}

/* Rank 1 died; its host has no report to give: the merge names it missing while ranks 0 and 2 wait in one call. */
Test(collectives, merge_names_the_rank_that_exited_missing)
{
    struct job job;
    start_job(&job, SYSTEM_PYTHON, "dead", 3, 1);
    struct reports reports;
    report_each_rank(&reports, &job, 1);
    char *text;
    json_object *document = merge_reports(&reports, EXIT_NO_HANG, &text);
    expect_text(text, "missing: rank 1");
    free(text);
    cr_assert_str_eq(json_string_at(json_at(document, "verdict"), "kind"), "missing-ranks");
    json_object *calls = json_at(json_object_array_get_idx(json_at(document, "jobs"), 0), "collectives");
    cr_assert_eq(json_object_array_length(calls), 1u);
    cr_assert_str_eq(json_string_at(json_object_array_get_idx(calls, 0), "ranks.folded"), "0,2");
    json_object_put(document);
    remove_reports(&reports);
    fixture_stop(&job.fixture);
}
