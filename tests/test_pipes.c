/* Pipes in the wait-for graph on real Python programs (issue 12): the multiprocessing Queue that is joined before it
 * is read, under fork and under spawn, and subprocess.Popen(stdout=PIPE).wait() on a child that writes more than the
 * pipe holds, are deadlocks named full-pipe, never blamed on fork; pipes that are being drained, and an idle spawn
 * pool whose workers read their task pipe, are not hung. The fixtures are Python scripts in scenarios/, run by
 * python_fixture.c, which reports the pids once the writer is blocked in write(2) and the parent in wait4(2).
 * Last, a pipe read to its end (subprocess.run(capture_output=True), bash's $(...)) that a background job left
 * behind keeps open: pipe-held-open, with its look-alikes (scenarios/held_pipe.py). */
#include "harness.h"
#include "python_harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the interpreter starts in well under a second, but a loaded machine is slow to fill a pipe with 1 MiB */
#define PYTHON_READY_TIMEOUT_MS 90000

TestSuite(pipes, .fini = fixture_stop_all, .timeout = 300);

/* Findings that would blame fork(): none of these programs has state inherited through it */

/* Does one value of evidence `name` (a string or an array of them) start with `prefix`? */
static bool evidence_starts_with(json_object *finding, const char *name, const char *prefix)
{
    char key[96];
    snprintf(key, sizeof key, "evidence.%s", name);
    json_object *value = json_at(finding, key);
    if (value && json_object_is_type(value, json_type_string))
        return strncmp(json_object_get_string(value), prefix, strlen(prefix)) == 0;
    for (size_t i = 0; value && json_object_is_type(value, json_type_array) && i < json_object_array_length(value); i++)
        if (strncmp(json_object_get_string(json_object_array_get_idx(value, i)), prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

/* Is one of the finding's remedies about `part`? */
static bool has_remedy(json_object *finding, const char *part)
{
    json_object *remedies = json_at(finding, "remedies");
    for (size_t i = 0; remedies && i < json_object_array_length(remedies); i++)
        if (strstr(json_object_get_string(json_object_array_get_idx(remedies, i)), part))
            return true;
    return false;
}

static void expect_same_string(json_object *first, json_object *second, const char *key)
{
    const char *a = json_string_at(first, key), *b = json_string_at(second, key);
    cr_assert((!a && !b) || (a && b && strcmp(a, b) == 0), "%s: '%s' the first time, '%s' the second", key,
              a ? a : "(none)", b ? b : "(none)");
}

/* How many findings `id` are part of a hang (not informational: an idle thread comes and goes between looks) */
static size_t count_hang_findings(json_object *document, const char *id)
{
    json_object *findings = json_at(document, "findings");
    size_t count = 0;
    for (size_t i = 0; findings && i < json_object_array_length(findings); i++) {
        json_object *finding = json_object_array_get_idx(findings, i);
        count += json_bool_at(finding, "hang") && (!id || strcmp(json_string_at(finding, "id"), id) == 0);
    }
    return count;
}

/* A second look at the same tree gives the same verdict: the hang is for good, and so is the diagnosis. */
static void expect_same_verdict(json_object *first, json_object *second)
{
    cr_expect_eq(json_bool_at(first, "verdict.hung"), json_bool_at(second, "verdict.hung"));
    expect_same_string(first, second, "verdict.cause");
    expect_same_string(first, second, "verdict.root_cause");
    cr_expect_eq(json_int_at(first, "verdict.pid", -1), json_int_at(second, "verdict.pid", -1));
    cr_expect_eq(json_int_at(first, "verdict.tid", -1), json_int_at(second, "verdict.tid", -1));
    json_object *findings = json_at(first, "findings");
    for (size_t i = 0; findings && i < json_object_array_length(findings); i++) {
        const char *id = json_string_at(json_object_array_get_idx(findings, i), "id");
        cr_expect_eq(count_hang_findings(first, id), count_hang_findings(second, id),
                     "'%s' findings differ between two looks: %s\nthen %s", id, findings_text(first),
                     findings_text(second));
    }
    cr_expect_eq(count_hang_findings(first, NULL), count_hang_findings(second, NULL), "%s\nthen %s",
                 findings_text(first), findings_text(second));
}

/* The deadlock on a full pipe: `writer` (a thread of `child`) blocked writing, the parent's main thread its reader,
 * waiting for the child in wait4; the pipe finding is the root cause and names them; `remedy_parts` (any one of them,
 * NULL-terminated) is the Python remedy that fits, and no remedy mentions `other_remedy`, the other case's. */
static void expect_full_pipe(json_object *document, pid_t parent, pid_t child, pid_t writer,
                             const char *const *remedy_parts, const char *other_remedy)
{
    cr_assert(json_bool_at(document, "verdict.hung"), "verdict: %s",
              json_object_to_json_string(json_at(document, "verdict")));
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "deadlock", "findings: %s", findings_text(document));
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "full-pipe", "findings: %s",
                     findings_text(document));
    cr_assert_eq(json_count_findings(document, "full-pipe", 0), 1, "one full-pipe: %s", findings_text(document));
    json_object *hangs = json_at(document, "verdict.hangs");
    cr_expect(!hangs || json_object_array_length(hangs) == 1, "one hang, named once (not again as a wait-cycle): %s",
              json_object_to_json_string(hangs));
    cr_expect_eq(json_count_findings(document, "wait-cycle", 0), 0, "the pipe's cycle is the full-pipe finding's: %s",
                 findings_text(document));
    json_object *pipe = json_first_finding(document, "full-pipe", 0);
    cr_assert_eq(json_int_at(pipe, "pid", -1), child, "%s", json_object_to_json_string(pipe));
    cr_assert_eq(json_int_at(pipe, "tid", -1), writer, "the writer is thread %d: %s", writer,
                 json_object_to_json_string(pipe));
    cr_assert_str_eq(json_string_at(pipe, "confidence"), "certain");

    char prefix[32];
    snprintf(prefix, sizeof prefix, "thread %d ", writer);
    /* the rest each on its own, so that one missing piece does not hide the others */
    cr_expect(evidence_starts_with(pipe, "writer", prefix), "%s", json_object_to_json_string(pipe));
    cr_expect(json_at(pipe, "evidence.pipe"), "the pipe is named: %s", json_object_to_json_string(pipe));
    snprintf(prefix, sizeof prefix, "thread %d ", parent);
    cr_expect(evidence_starts_with(pipe, "reader", prefix), "the parent's main thread is a reader: %s",
              json_object_to_json_string(pipe));
    cr_expect(json_at(pipe, "evidence.cycle"), "the cycle is named: %s", json_object_to_json_string(pipe));
    cr_expect(json_finding_has_member(pipe, writer) && json_finding_has_member(pipe, parent), "writer and parent are in the cycle: %s",
              json_object_to_json_string(pipe));

    bool remedy = false;
    for (const char *const *part = remedy_parts; *part; part++)
        remedy |= has_remedy(pipe, *part);
    cr_expect(remedy, "the Python remedy (%s): %s", remedy_parts[0],
              json_object_to_json_string(json_at(pipe, "remedies")));
    cr_expect(!has_remedy(pipe, other_remedy), "only the remedies that fit, not '%s': %s", other_remedy,
              json_object_to_json_string(json_at(pipe, "remedies")));
    expect_no_fork_finding(document);
}

/* ready <parent> <child> <parent's thread in wait4> <child's thread in write>; the child started as `origin` */
static void expect_deadlock_on_full_pipe_with(const char *python, const char *fixture_name, const char *origin,
                                              const char *const *remedy_parts, const char *other_remedy)
{
    struct fixture fixture;
    if (python) {
        const char *launcher = fixture_path(fixture_name);
        fixture_start_command(&fixture, launcher, (const char *[]){ launcher, python, NULL }, PYTHON_READY_TIMEOUT_MS);
    } else {
        fixture_start_within(&fixture, fixture_name, PYTHON_READY_TIMEOUT_MS);
    }
    cr_assert_eq(fixture.npids, 4, "ready parent child waiter writer");
    pid_t parent = fixture.pids[0], child = fixture.pids[1], waiter = fixture.pids[2], writer = fixture.pids[3];
    cr_assert_eq(waiter, parent, "the parent's main thread waits for the child");

    json_object *first = diagnose_expecting(parent, EXIT_HANG);
    expect_full_pipe(first, parent, child, writer, remedy_parts, other_remedy);
    const char *child_origin = json_string_at(json_process(first, child), "origin");
    cr_expect(child_origin && strcmp(child_origin, origin) == 0, "the child's origin is %s, not %s", origin,
              child_origin ? child_origin : "(none)");
    json_object *second = diagnose_expecting(parent, EXIT_HANG);
    expect_same_verdict(first, second);
    json_object_put(first);
    json_object_put(second);
    fixture_stop(&fixture);
}

/* With Debian's python3 (the launcher's own) */
static void expect_deadlock_on_full_pipe(const char *fixture_name, const char *origin, const char *const *remedy_parts,
                                         const char *other_remedy)
{
    expect_deadlock_on_full_pipe_with(NULL, fixture_name, origin, remedy_parts, other_remedy);
}

static const char *const QUEUE_REMEDY[] = { "cancel_join_thread", "before join", NULL };
static const char *const SUBPROCESS_REMEDY[] = { "communicate()", NULL };

/* The child's feeder thread, started in the child, writes the item; the child's main thread joins it at exit */
Test(pipes, queue_joined_before_it_is_read_under_fork)
{
    expect_deadlock_on_full_pipe("mp_queue_join_fork", "forked", QUEUE_REMEDY, "communicate()");
}

/* The same under spawn: the start method changes nothing, and the report must not say it would */
Test(pipes, queue_joined_before_it_is_read_under_spawn)
{
    expect_deadlock_on_full_pipe("mp_queue_join_spawn", "spawn", QUEUE_REMEDY, "communicate()");
}

/* The process `pid`'s parent, from the report; 0 when it is not in it. */
static pid_t parent_in_report(json_object *document, pid_t pid)
{
    return (pid_t)json_int_at(json_process(document, pid), "ppid", 0);
}

/* Under forkserver, Python 3.14's default: the child is the forkserver's, and the parent polls its sentinel, which
 * only the forkserver writes, once the child has exited and the forkserver (asleep in epoll_wait on its listener,
 * its parent's liveness pipe and the wake-up pipe its SIGCHLD handler writes) has reaped it. The relay must neither
 * hide the deadlock nor become a second one: the same full-pipe as under fork, one hang, the chain through the
 * forkserver. */
static void expect_queue_join_through_the_forkserver(struct fixture *started)
{
    struct fixture fixture = *started;
    cr_assert_eq(fixture.npids, 4, "ready parent child poller writer");
    pid_t parent = fixture.pids[0], child = fixture.pids[1], poller = fixture.pids[2], writer = fixture.pids[3];
    cr_assert_eq(poller, parent, "the parent's main thread polls the child's sentinel");
    for (int look = 0; look < 2; look++) {
        json_object *document = diagnose_expecting(parent, EXIT_HANG);
        pid_t forkserver = parent_in_report(document, child);
        cr_assert(forkserver > 0 && forkserver != parent, "the child is the forkserver's: %d", (int)forkserver);
        cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "full-pipe", "%s", findings_text(document));
        cr_assert_str_eq(json_string_at(document, "verdict.cause"), "deadlock");
        json_object *hangs = json_at(document, "verdict.hangs");
        cr_expect(!hangs || json_object_array_length(hangs) == 1, "one hang: %s", json_object_to_json_string(hangs));
        cr_expect_eq(json_count_findings(document, "wait-cycle", 0), 0, "the relay is no cycle of its own: %s",
                     findings_text(document));
        json_object *pipe = json_first_finding(document, "full-pipe", 0);
        cr_expect_eq(json_int_at(pipe, "pid", -1), child);
        cr_expect_eq(json_int_at(pipe, "tid", -1), writer, "%s", json_object_to_json_string(pipe));
        json_object *chain = json_at(document, "verdict.chain");
        cr_assert(chain && json_object_array_length(chain) == 3, "parent, forkserver, child: %s",
                  json_object_to_json_string(chain));
        cr_expect_eq(json_object_get_int(json_object_array_get_idx(chain, 0)), parent);
        cr_expect_eq(json_object_get_int(json_object_array_get_idx(chain, 1)), forkserver);
        cr_expect_eq(json_object_get_int(json_object_array_get_idx(chain, 2)), child);
        /* the forkserver waits for its child's SIGCHLD: a signal edge, and it names the child, not its parent */
        json_object *relay = json_first_finding(document, "waiting-on-workers", forkserver);
        cr_assert(relay, "the forkserver waits on its child: %s", findings_text(document));
        char workers[32];
        snprintf(workers, sizeof workers, "%d", (int)child);
        cr_expect_str_eq(json_string_at(relay, "evidence.workers"), workers, "%s", json_object_to_json_string(relay));
        expect_no_fork_finding(document);
        json_object_put(document);
    }
    fixture_stop(started);
}

Test(pipes, queue_joined_before_it_is_read_under_forkserver)
{
    struct fixture fixture;
    fixture_start_within(&fixture, "mp_queue_join_forkserver", PYTHON_READY_TIMEOUT_MS);
    expect_queue_join_through_the_forkserver(&fixture);
}

/* The same deadlock on Python 3.14 (Debian's development suite, in its chroot) with no start method named: its
 * default on Linux is the forkserver. */
Test(pipes, queue_joined_before_it_is_read_under_the_default_start_method_of_3_14)
{
    char python[4200];
    python_modern(14, python, sizeof python);
    const char *launcher = fixture_path("mp_queue_join_default_314");
    struct fixture fixture;
    fixture_start_command(&fixture, launcher, (const char *[]){ launcher, python, NULL }, PYTHON_READY_TIMEOUT_MS);
    unlink(python);
    expect_queue_join_through_the_forkserver(&fixture);
}

/* The writer is the child's main thread: subprocess forks and execs, so the child is exec'd, not forked */
Test(pipes, popen_stdout_pipe_waited_for_without_reading)
{
    expect_deadlock_on_full_pipe("subprocess_pipe", "exec", SUBPROCESS_REMEDY, "cancel_join_thread");
}

/* The same with python3.14: its subprocess spawns with vfork or posix_spawn, the child is exec'd all the same */
Test(pipes, popen_stdout_pipe_waited_for_without_reading_on_3_14)
{
    char python[4200];
    python_modern(14, python, sizeof python);
    expect_deadlock_on_full_pipe_with(python, "subprocess_pipe", "exec", SUBPROCESS_REMEDY, "cancel_join_thread");
    unlink(python);
}

/* The queue join under fork, named, on python3.14 */
Test(pipes, queue_joined_before_it_is_read_under_fork_on_3_14)
{
    char python[4200];
    python_modern(14, python, sizeof python);
    expect_deadlock_on_full_pipe_with(python, "mp_queue_join_fork", "forked", QUEUE_REMEDY, "communicate()");
    unlink(python);
}

/* ---- look-alikes that are not hung ---------------------------------------------------------------------------- */

static void expect_not_hung_twice(const char *fixture_name)
{
    struct fixture fixture;
    fixture_start_within(&fixture, fixture_name, PYTHON_READY_TIMEOUT_MS);
    json_object *first = diagnose_expecting(fixture.pids[0], EXIT_NO_HANG);
    cr_assert(!json_bool_at(first, "verdict.hung"), "verdict: %s",
              json_object_to_json_string(json_at(first, "verdict")));
    cr_assert_eq(json_count_findings(first, "full-pipe", 0), 0, "%s", findings_text(first));
    cr_assert_eq(json_count_findings(first, "wait-cycle", 0), 0, "%s", findings_text(first));
    expect_no_fork_finding(first);
    json_object *second = diagnose_expecting(fixture.pids[0], EXIT_NO_HANG);
    expect_same_verdict(first, second);
    json_object_put(first);
    json_object_put(second);
    fixture_stop(&fixture);
}

/* The parent reads everything with communicate() while the child writes a line now and then, for ever */
Test(pipes, output_read_with_communicate_is_not_hung)
{
    expect_not_hung_twice("healthy_pipe_communicate");
}

/* The child's write() is blocked on a full pipe nearly all the time, but its reader takes from it every 20 ms */
Test(pipes, full_pipe_drained_slowly_is_not_hung)
{
    expect_not_hung_twice("healthy_pipe_slow_reader");
}

/* Idle spawn workers sleep reading their task pipe; its writers are the parent's, which wake with timeouts */
Test(pipes, idle_spawn_pool_reading_its_task_pipe_is_not_hung)
{
    expect_not_hung_twice("mp_pool_spawn");
}

/* ---- a pipe read to its end that a process left behind keeps open (pipe-held-open) ----------------------------- */

/* scenarios/held_pipe.py `mode`, run by Debian's python; ready <reader> <holder> [<consumer>]. The holder is in the
 * fixture's process group, which fixture_stop kills, though it left the tree. */
static void start_held_pipe(struct fixture *fixture, const char *mode)
{
    char script[4096];
    snprintf(script, sizeof script, "%s/tests/scenarios/held_pipe.py", getenv("HANGDOC_SOURCE_ROOT"));
    fixture_start_command(fixture, "/usr/bin/python3", (const char *[]){ "/usr/bin/python3", script, mode, NULL },
                          PYTHON_READY_TIMEOUT_MS);
}

/* hangdoc --json --stuck-after 1s on `pid` (twice, as every diagnosis: harness.h), once the reader has waited that
 * long: the finding wants the reader asleep for the threshold; fails unless it exits with `expected_status`. */
static json_object *diagnose_stuck_after_a_second(pid_t pid, int expected_status)
{
    usleep(1200 * 1000);
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "--samples", "3", "--interval", "100ms", "--stuck-after", "1s",
                                           pid_text, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "hangdoc printed JSON (exit %d): %s", result.exit_status, result.err);
    json_validate(result.out);
    cr_assert_eq(result.exit_status, expected_status, "hangdoc exits %d, expected %d; findings %s",
                 result.exit_status, expected_status, findings_text(document));
    run_result_free(&result);
    return document;
}

/* The evidence pipe names each of the `pipes` pipes the reader reads: a fd of the reader's that is that pipe. */
static void expect_pipes_read(json_object *document, json_object *finding, pid_t reader, size_t pipes)
{
    json_object *values = json_at(finding, "evidence.pipe");
    cr_assert_not_null(values, "%s", json_object_to_json_string(finding));
    bool many = json_object_is_type(values, json_type_array);
    cr_assert_eq(many ? json_object_array_length(values) : 1, pipes, "%s", json_object_to_json_string(values));
    json_object *fds = json_at(json_process(document, reader), "fds");
    for (size_t i = 0; i < pipes; i++) {
        const char *value = json_object_get_string(many ? json_object_array_get_idx(values, i) : values);
        int fd = -1;
        unsigned long long inode = 0;
        cr_assert_eq(sscanf(value, "fd %d of process %*d, pipe %llu", &fd, &inode), 2, "%s", value);
        char expected[128], target[64];
        snprintf(expected, sizeof expected, "fd %d of process %d, pipe %llu, read with no timeout", fd, (int)reader,
                 inode);
        cr_assert_str_eq(value, expected);
        snprintf(target, sizeof target, "pipe:[%llu]", inode);
        bool found = false;
        for (size_t f = 0; fds && f < json_object_array_length(fds); f++) {
            json_object *entry = json_object_array_get_idx(fds, f);
            found |= json_int_at(entry, "fd", -1) == fd && strcmp(json_string_at(entry, "target"), target) == 0;
        }
        cr_assert(found, "fd %d of process %d is %s: %s", fd, (int)reader, target, json_object_to_json_string(fds));
    }
}

/* The reader's thread is the subject; each of the pipes it reads has the holder as evidence; a reaped child or a
 * zombie as `child` says (0: reaped); the remedies say how to give the background job its own output. */
static void expect_pipe_held_open(const char *mode, const char *reader_name, const char *child_comm, size_t pipes)
{
    struct fixture fixture;
    start_held_pipe(&fixture, mode);
    pid_t reader = fixture.pids[0], holder = fixture.pids[1];
    json_object *document = diagnose_stuck_after_a_second(reader, EXIT_HANG);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "pipe-held-open", "%s", findings_text(document));
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "pipe-held-open");
    cr_assert_eq(json_count_findings(document, "pipe-held-open", 0), 1, "%s", findings_text(document));
    json_object *finding = json_first_finding(document, "pipe-held-open", reader);
    cr_assert_not_null(finding, "%s", findings_text(document));
    cr_assert_eq(json_int_at(finding, "tid", 0), reader);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    cr_assert_str_eq(json_string_at(json_thread(json_process(document, reader), reader), "name"), reader_name);
    expect_pipes_read(document, finding, reader, pipes);
    char part[160];
    json_object *holders = json_at(finding, "evidence.holder");
    size_t nholders = json_object_is_type(holders, json_type_array) ? json_object_array_length(holders) : 1;
    cr_assert_eq(nholders, pipes, "%s", json_object_to_json_string(finding));
    snprintf(part, sizeof part, "process %d 'python3' holds the write end of pipe ", (int)holder);
    cr_assert(evidence_starts_with(finding, "holder", part), "%s", json_object_to_json_string(finding));
    cr_assert(strstr(json_object_to_json_string(holders), "(its own parent exited), in the session of process"),
              "%s", json_object_to_json_string(holders));
    if (child_comm) {
        snprintf(part, sizeof part, "'%s' exited and is not reaped yet", child_comm);
        cr_assert(strstr(json_string_at(finding, "evidence.exited_child"), part), "%s",
                  json_object_to_json_string(finding));
    } else {
        cr_assert_null(json_at(finding, "evidence.exited_child"));
    }
    cr_assert(has_remedy(finding, ">/dev/null 2>&1 &"), "%s", json_object_to_json_string(finding));
    expect_no_fork_finding(document);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* subprocess.run(capture_output=True) of a command that leaves a background job holding its stdout and stderr: the
 * reader polls both pipes for ever, its child sh a zombie */
Test(pipes, captured_output_held_open_by_a_background_job)
{
    expect_pipe_held_open("subprocess", "python3", "sh", 2);
}

/* bash's $(...) of the same: bash reaps sh at once (its SIGCHLD handler), and reads for ever */
Test(pipes, command_substitution_held_open_by_a_background_job)
{
    expect_pipe_held_open("bash", "bash", NULL, 1);
}

/* The look-alikes: the child itself still holds the pipe (a writer at work, in the tree); a pipeline's consumer,
 * diagnosed alone, reading from its sibling (the shell that started both is its parent, not an adopter) */
static void expect_no_held_pipe(const char *mode, size_t diagnosed)
{
    struct fixture fixture;
    start_held_pipe(&fixture, mode);
    json_object *document = diagnose_stuck_after_a_second(fixture.pids[diagnosed], EXIT_NO_HANG);
    cr_assert_eq(json_count_findings(document, "pipe-held-open", 0), 0, "%s", findings_text(document));
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(pipes, a_child_still_writing_its_captured_output_is_not_a_held_pipe)
{
    expect_no_held_pipe("working", 0);
}

Test(pipes, a_pipeline_consumer_reading_its_working_producer_is_not_a_held_pipe)
{
    expect_no_held_pipe("pipeline", 2);
}

/* Its look-alike: the forkserver's child works on while the parent joins it; the relay passes its exit on when it
 * comes */
Test(pipes, forkserver_child_that_works_on_is_not_hung)
{
    expect_not_hung_twice("mp_forkserver_working");
}
