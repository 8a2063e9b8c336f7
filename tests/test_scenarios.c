/* Scenario tests: real hung (and healthy) programs from scenarios/, diagnosed by the real hangdoc binary. */
#include "harness.h"
#include "python_harness.h"

#include <criterion/criterion.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(scenarios, .fini = fixture_stop_all, .timeout = 120);

/* The syscall a thread of the fixture sleeps in, named for the build's architecture. */
#if defined(__x86_64__)
#define POLL_SYSCALL "poll"
#else
#define POLL_SYSCALL "ppoll"
#endif

/* Exit statuses of hangdoc (cmd/exit_codes.h) */

/* The text report says the same as the JSON one: every finding, with its subject, and the same exit status. */
static void expect_same_findings_in_text(pid_t pid, json_object *document, int expected_status)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "-v", "--samples", "3", "--interval", "100ms", pid_text, NULL });
    cr_assert_eq(result.exit_status, expected_status, "text run exits %d: %s", result.exit_status, result.err);
    json_object *findings = json_at(document, "findings");
    for (size_t i = 0; i < json_object_array_length(findings); i++) {
        json_object *finding = json_object_array_get_idx(findings, i);
        char heading[160];
        snprintf(heading, sizeof heading, "\n%s (%s) · process %lld, thread %lld\n", json_string_at(finding, "id"),
                 json_string_at(finding, "confidence"), json_int_at(finding, "pid", -1), json_int_at(finding, "tid", -1));
        cr_assert(strstr(result.out, heading), "the text report has '%s': %s", heading + 1, result.out);
    }
    run_result_free(&result);
}

static json_object *diagnose(pid_t pid, int expected_status)
{
    int status = -1;
    json_object *document = hangdoc_json(pid, &status);
    cr_assert_eq(status, expected_status, "hangdoc exits %d, got %d", expected_status, status);
    expect_same_findings_in_text(pid, document, expected_status);
    return document;
}

/* The findings with `id`; fails the test unless there are exactly `count` of them. Returns the first. */
static json_object *expect_findings(json_object *document, const char *id, size_t count)
{
    size_t found = json_count_findings(document, id, 0);
    cr_assert_eq(found, count, "%zu '%s' findings, expected %zu: %s", found, id, count,
                 json_object_to_json_string(json_at(document, "findings")));
    return json_first_finding(document, id, 0);
}

static void expect_verdict(json_object *document, bool hung, const char *cause, const char *root_cause, pid_t tid)
{
    json_object *verdict = json_at(document, "verdict");
    cr_assert(json_object_is_type(json_at(verdict, "hung"), json_type_boolean), "hung is a boolean");
    cr_assert_eq(json_bool_at(verdict, "hung"), hung, "verdict: %s", json_object_to_json_string(verdict));
    cr_assert_str_eq(json_string_at(verdict, "cause"), cause);
    if (root_cause)
        cr_assert_str_eq(json_string_at(verdict, "root_cause"), root_cause);
    else
        cr_assert_null(json_at(verdict, "root_cause"));
    if (tid)
        cr_assert_eq(json_int_at(verdict, "tid", -1), tid);
}

static bool asleep_forever(json_object *document, pid_t tid)
{
    json_object *nodes = json_at(document, "graph.nodes");
    for (size_t i = 0; i < json_object_array_length(nodes); i++) {
        json_object *node = json_object_array_get_idx(nodes, i);
        if (json_int_at(node, "tid", -1) == tid)
            return json_bool_at(node, "asleep_forever");
    }
    cr_assert_fail("thread %d is not a node of the graph", tid);
    return false;
}

static const char *const HEALTHY[] = { "idle", NULL };

/* ---- scenarios checked live and on their recorded snapshots ----------------------------------------------- */

/* The assertions of a scenario over its report, given the pids its fixture reported. */
typedef void scenario_check(json_object *document, const struct fixture *fixture);

/* Starts `fixture_name`, lets it settle `settle_ms`, diagnoses its first pid (keeping the snapshot as
 * tests/snapshots/<name> when tests/snapshots/record.sh records) and runs `check` on the report. */
static void live_scenario(const char *name, const char *fixture_name, unsigned settle_ms, int status,
                          scenario_check *check)
{
    struct fixture fixture;
    fixture_start(&fixture, fixture_name);
    if (settle_ms)
        usleep(settle_ms * 1000);
    record_as(name, &fixture);
    json_object *document = diagnose(fixture.pids[0], status);
    check(document, &fixture);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The same assertions on the snapshot recorded from the scenario: no process started, the analysis and the JSON
 * renderer checked in milliseconds (`meson test --suite recorded`). */
static void recorded_scenario(const char *name, int status, scenario_check *check)
{
    struct fixture fixture;
    json_object *document = recorded_expecting(name, status, &fixture);
    check(document, &fixture);
    json_object_put(document);
}

TestSuite(recorded, .timeout = 60);

static void check_inherited_mutex(json_object *document, const struct fixture *fixture)
{
    pid_t parent = fixture->pids[0], holder = fixture->pids[1], child = fixture->pids[2];

    json_object *child_process = json_process(document, child);
    cr_assert_not_null(child_process, "the child %d is in the tree of %d", child, parent);
    cr_assert_eq(json_int_at(child_process, "ppid", -1), parent);
    json_object *locker = json_thread(child_process, child);
    cr_assert_not_null(locker);
    cr_assert_str_eq(json_string_at(locker, "name"), "locker");
    cr_assert_str_eq(json_string_at(locker, "state"), "S");
    cr_assert_str_eq(json_string_at(locker, "syscall.name"), "futex");
    cr_assert_str_eq(json_string_at(locker, "wait.kind"), "futex");
    cr_assert_str_eq(json_string_at(locker, "wait.operation"), "FUTEX_WAIT");
    cr_assert(json_bool_at(locker, "wait.private"), "glibc's mutex waits are FUTEX_PRIVATE");
    cr_assert_eq(json_int_at(locker, "wait.expected", -1), 2, "a contended glibc lock word is 2");
    cr_assert_str_eq(json_string_at(locker, "wait.timeout.kind"), "none");
    cr_assert_not(json_bool_at(locker, "progressing"));
    cr_assert_eq(json_int_at(locker, "samples.seen", -1), 3);
    json_object *blocked_for = json_at(locker, "blocked_for_s");
    cr_assert_not_null(blocked_for);
    /* measured in the task clock of the CPU it last ran on, which leaves out time stolen by a hypervisor and IRQ
     * time: about the 1.5 s we waited (a few percent less on a busy VM), at most that plus hangdoc's own run */
    cr_assert(json_object_get_double(blocked_for) > 1.3 && json_object_get_double(blocked_for) < 10,
              "blocked for %.3f s", json_object_get_double(blocked_for));

    /* The owner is still a thread of the parent: it holds the lock and pauses. */
    json_object *parent_process = json_process(document, parent);
    cr_assert_not_null(parent_process);
    json_object *holder_thread = json_thread(parent_process, holder);
    cr_assert_not_null(holder_thread, "the holder thread %d is listed", holder);
    cr_assert_str_eq(json_string_at(holder_thread, "name"), "holder");
    cr_assert_str_eq(json_string_at(holder_thread, "syscall.name"), "pause");
    json_object *main_thread = json_thread(parent_process, parent);
    cr_assert_str_eq(json_string_at(main_thread, "wait.kind"), "child");
    cr_assert_eq(json_int_at(main_thread, "wait.pid", -1), child);
    cr_assert_eq(json_int_at(parent_process, "thread_count", -1), 2);

    /* The lock forensics: the mutex, its owner in the parent, and the findings that follow from it. */
    cr_assert_str_eq(json_string_at(locker, "wait.lock.kind"), "mutex");
    cr_assert_str_eq(json_string_at(locker, "wait.lock.type"), "normal");
    cr_assert_str_eq(json_string_at(locker, "wait.lock.word"), "0x2");
    cr_assert_eq(json_int_at(locker, "wait.owner_tid", -1), holder);
    cr_assert_eq(json_int_at(locker, "wait.owner_pid", -1), parent);
    cr_assert_str_eq(json_string_at(locker, "wait.lock.owner_whereabouts"), "other-process");
    cr_assert_neq(strcmp(json_string_at(locker, "wait.mapping.kind"), "shared"), 0, "a private mapping");
    cr_assert_str_eq(json_string_at(child_process, "origin"), "forked");
    json_object *inherited = expect_findings(document, "inherited-lock", 1);
    cr_assert_eq(json_int_at(inherited, "pid", -1), child);
    cr_assert_eq(json_int_at(inherited, "tid", -1), child);
    cr_assert_str_eq(json_string_at(inherited, "confidence"), "certain");
    char owner[16];
    snprintf(owner, sizeof owner, "%d", holder);
    cr_assert_str_eq(json_string_at(inherited, "evidence.owner_tid"), owner);
    json_object *workers = expect_findings(document, "waiting-on-workers", 1);
    cr_assert_eq(json_int_at(workers, "tid", -1), parent);
    cr_assert(json_finding_has_member(workers, child));
    expect_only_findings(document, (const char *const[]){ "inherited-lock", "waiting-on-workers", NULL });
    expect_verdict(document, true, "fork-inheritance", "inherited-lock", child);
    json_object *chain = json_at(document, "verdict.chain");
    cr_assert_eq(json_object_array_length(chain), 2);
    cr_assert_eq(json_object_get_int(json_object_array_get_idx(chain, 0)), parent);
    cr_assert_eq(json_object_get_int(json_object_array_get_idx(chain, 1)), child);
    cr_assert(asleep_forever(document, child) && asleep_forever(document, parent));
}

Test(scenarios, child_blocked_on_mutex_inherited_locked_through_fork)
{
    /* the child has slept at least 1.5 s when hangdoc looks */
    live_scenario("inherited_mutex", "inherited_mutex", 1500, EXIT_HANG_FORK_UNSAFE, check_inherited_mutex);
}

Test(recorded, child_blocked_on_mutex_inherited_locked_through_fork)
{
    recorded_scenario("inherited_mutex", EXIT_HANG_FORK_UNSAFE, check_inherited_mutex);
}

Test(scenarios, text_report_shows_the_futex_wait_with_its_duration)
{
    struct fixture fixture;
    fixture_start(&fixture, "inherited_mutex");
    char pid[16], expected[128];
    snprintf(pid, sizeof pid, "%d", fixture.pids[0]);
    const char *arguments[] = { "--samples", "2", "--interval", "50ms", pid, NULL };
    struct run_result result;
    hangdoc_run(&result, arguments);
    cr_assert_eq(result.exit_status, EXIT_HANG_FORK_UNSAFE, "stderr: %s", result.err);
    snprintf(expected, sizeof expected, "thread %d 'locker' S [futex wait, ", fixture.pids[2]);
    cr_assert(strstr(result.out, expected), "text names the wait: %s", result.out);
    cr_assert(strstr(result.out, "private, expected 2, no timeout"), "%s", result.out);
    snprintf(expected, sizeof expected, "verdict: HUNG (fork-inheritance): thread %d 'locker' waits for mutex 0x",
             fixture.pids[2]);
    cr_assert(strncmp(result.out, expected, strlen(expected)) == 0, "the verdict comes first: %s", result.out);
    snprintf(expected, sizeof expected, "held by thread %d 'holder' of parent %d at fork()", fixture.pids[1],
             fixture.pids[0]);
    cr_assert(strstr(result.out, expected), "%s", result.out);
    cr_assert(strstr(result.out, "[inherited-lock, certain]\n"), "%s", result.out);
    snprintf(expected, sizeof expected, "\nFound a lock held across fork():\n  thread %d 'locker' of process %d waits "
             "for normal mutex 0x", fixture.pids[2], fixture.pids[2]);
    cr_assert(strstr(result.out, expected), "jstack-style block: %s", result.out);
    snprintf(expected, sizeof expected, "    held by thread %d 'holder' of its parent %d, which is not in this process\n",
             fixture.pids[1], fixture.pids[0]);
    cr_assert(strstr(result.out, expected), "%s", result.out);
    snprintf(expected, sizeof expected, "wait4 pid %d, no timeout", fixture.pids[2]);
    cr_assert(strstr(result.out, expected), "%s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}

Test(scenarios, vfork_parent_is_in_uninterruptible_sleep)
{
    struct fixture fixture;
    fixture_start(&fixture, "vfork_parent");
    pid_t parent = fixture.pids[0], child = fixture.pids[1];
    json_object *document = diagnose(parent, EXIT_HANG);
    json_object *process = json_process(document, parent);
    cr_assert_str_eq(json_string_at(process, "state"), "D");
    json_object *finding = expect_findings(document, "uninterruptible", 1);
    cr_assert_eq(json_int_at(finding, "tid", -1), parent);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    char child_text[16];
    snprintf(child_text, sizeof child_text, "%d", child);
    cr_assert_str_eq(json_string_at(finding, "evidence.vfork_child"), child_text, "the kernel wait is vfork()'s");
    expect_only_findings(document, (const char *const[]){ "uninterruptible", NULL });
    expect_verdict(document, true, "kernel", "uninterruptible", parent);
    json_object *thread = json_thread(process, parent);
    cr_assert_str_eq(json_string_at(thread, "state"), "D");
    cr_assert_eq(json_int_at(thread, "samples.in_state_d", -1), 3, "D in every sample");
#if defined(__x86_64__)
    cr_assert_str_eq(json_string_at(thread, "syscall.name"), "vfork");
#endif
    cr_assert_not(json_bool_at(thread, "progressing"));
    cr_assert_not_null(json_at(thread, "kernel_stack"), "root reads the kernel stack");
    json_object *child_process = json_process(document, child);
    cr_assert_not_null(child_process, "the vfork child is in the tree");
    cr_assert_str_eq(json_string_at(json_thread(child_process, child), "syscall.name"), "pause");
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(scenarios, sigstopped_process_is_in_state_t)
{
    struct fixture fixture;
    fixture_start(&fixture, "sigstopped");
    pid_t stopped = fixture.pids[0];
    json_object *document = diagnose(fixture.leader, EXIT_HANG);
    json_object *finding = expect_findings(document, "stopped", 1);
    cr_assert_eq(json_int_at(finding, "pid", -1), stopped);
    cr_assert_str_eq(json_string_at(finding, "evidence.state"), "T");
    char command[64];
    snprintf(command, sizeof command, "kill -CONT %d", stopped);
    cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(json_at(finding, "remedies"), 0)), command);
    expect_verdict(document, true, "stopped", "stopped", stopped);
    json_object *process = json_process(document, stopped);
    cr_assert_not_null(process);
    cr_assert_str_eq(json_string_at(process, "state"), "T");
    json_object *thread = json_thread(process, stopped);
    cr_assert_str_eq(json_string_at(thread, "state"), "T");
    cr_assert_str_eq(json_string_at(thread, "name"), "stopped");
    cr_assert_not(json_bool_at(thread, "progressing"));
    cr_assert_null(json_at(process, "tracer_pid"), "stopped by a signal, not by a tracer");
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(scenarios, busy_loop_is_spinning_in_one_function)
{
    struct fixture fixture;
    fixture_start(&fixture, "busy_loop");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose(pid, EXIT_HANG);
    json_object *thread = json_thread(json_process(document, pid), pid);
    cr_assert_not_null(thread);
    cr_assert_str_eq(json_string_at(thread, "name"), "spinner");
    cr_assert(json_bool_at(thread, "progressing"), "CPU time grows between samples");
    json_object *cpu_delta = json_at(thread, "samples.cpu_delta_s");
    cr_assert(cpu_delta && json_object_get_double(cpu_delta) > 0.01, "it used CPU while sampled");
    cr_assert_eq(json_int_at(thread, "samples.in_state_r", 0), 3);
    /* stopped at each sample, it was in main() every time: the loop never leaves it */
    json_object *spinning = expect_findings(document, "spinning", 1);
    expect_only_findings(document, (const char *const[]){ "spinning", NULL });
    cr_assert_eq(json_int_at(spinning, "tid", -1), pid);
    cr_assert_str_eq(json_string_at(spinning, "confidence"), "likely", "sampling cannot tell a busy wait from work");
    cr_assert_str_eq(json_string_at(spinning, "evidence.function"), "main");
    expect_verdict(document, true, "busy-loop", "spinning", pid);
    json_object_put(document);

    /* without stopping it, hangdoc cannot tell where it runs: no finding, not hung */
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "--no-ptrace", "-n", "3", "-i", "100ms", pid_text, NULL });
    cr_assert_eq(result.exit_status, EXIT_NO_HANG, "%s", result.err);
    document = json_tokener_parse(result.out);
    expect_only_findings(document, HEALTHY);
    json_object_put(document);
    run_result_free(&result);
    fixture_stop(&fixture);
}

Test(scenarios, healthy_poll_with_timeout)
{
    struct fixture fixture;
    fixture_start(&fixture, "poll_timeout");
    pid_t pid = fixture.pids[0], ticker = fixture.pids[1];
    json_object *document = diagnose(pid, EXIT_NO_HANG);
    expect_only_findings(document, HEALTHY);
    expect_verdict(document, false, "none", NULL, 0);
    json_object *process = json_process(document, pid);
    json_object *poller = json_thread(process, pid);
    cr_assert_str_eq(json_string_at(poller, "syscall.name"), POLL_SYSCALL);
    cr_assert_str_eq(json_string_at(poller, "wait.kind"), "poll");
    cr_assert_str_eq(json_string_at(poller, "wait.timeout.kind"), "finite");
    json_object *remaining = json_at(poller, "wait.timeout.remaining_s");
    cr_assert(remaining && json_object_get_double(remaining) > 4.9 && json_object_get_double(remaining) <= 5.0,
              "poll's 5000 ms timeout is read from its argument");
    json_object *ticking = json_thread(process, ticker);
    cr_assert(json_bool_at(ticking, "progressing"), "the ticker wakes every 20 ms");
    cr_assert_gt(json_int_at(ticking, "samples.switches_delta", 0), 3);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(scenarios, zombie_child_with_its_exit_status)
{
    struct fixture fixture;
    fixture_start(&fixture, "zombie");
    pid_t zombie = fixture.pids[1];
    json_object *document = diagnose(fixture.pids[0], EXIT_NO_HANG);
    json_object *process = json_process(document, zombie);
    cr_assert_not_null(process);
    cr_assert_str_eq(json_string_at(process, "state"), "Z");
    cr_assert_eq(json_int_at(process, "exit_status", -1), 3 << 8, "exit(3) as a wait status");
    cr_assert_eq(json_object_array_length(json_at(process, "cmdline")), 0);
    cr_assert_not(json_has_note(document, "exe:"), "a zombie without exe is normal, not a note");
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(scenarios, hostile_names_are_escaped_in_text_and_exact_in_json)
{
    struct fixture fixture;
    fixture_start(&fixture, "weird_names");
    pid_t pid = fixture.pids[0];
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", pid);
    const char *arguments[] = { "--samples", "1", pid_text, NULL };
    struct run_result result;
    hangdoc_run(&result, arguments);
    cr_assert_eq(result.exit_status, EXIT_NO_HANG);
    for (const unsigned char *p = (const unsigned char *)result.out; *p; p++)
        cr_assert(*p >= 0x20 || *p == '\n', "no control byte 0x%02x in the text report", *p);
    cr_assert_null(strstr(result.out, "\xe2\x80\xae"), "no right-to-left override");
    cr_assert(strstr(result.out, "'\\e]0;x\\x07) S\\n'"), "comm shown escaped: %s", result.out);
    cr_assert(strstr(result.out, "weird\\e[2J bad\\xff\\xfe rlo\\u{202E}txt tab\\there"), "%s", result.out);
    run_result_free(&result);

    /* the JSON holds the exact values: a dashboard must not mistake an escape hangdoc added for the target's own
     * backslash; bytes that are not UTF-8 as U+DC00 + byte (Python's surrogateescape), which json-c reads as
     * U+FFFD */
    hangdoc_run(&result, (const char *[]){ "--json", "--samples", "1", pid_text, NULL });
    cr_assert(strstr(result.out, "\"bad\\udcff\\udcfe\""), "%s", result.out);
    cr_assert(strstr(result.out, "\"\\u001b]0;x\\u0007) S\\n\""), "%s", result.out);
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document);
    json_validate(result.out);
    run_result_free(&result);
    json_object *process = json_process(document, pid);
    cr_assert_str_eq(json_string_at(process, "comm"), "\x1b]0;x\x07) S\n");
    json_object *cmdline = json_at(process, "cmdline");
    cr_assert_eq(json_object_array_length(cmdline), 4);
    cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(cmdline, 1)), "bad\xef\xbf\xbd\xef\xbf\xbd");
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(scenarios, threads_and_processes_that_come_and_go)
{
    struct fixture fixture;
    fixture_start(&fixture, "churn");
    pid_t pid = fixture.pids[0];
    /* hangdoc_json(), not diagnose(): a text run taken a moment later sees other children, and other findings
     * about them (idle ones), by design */
    for (int run = 0; run < 3; run++) {
        int status = -1;
        json_object *document = hangdoc_json(pid, &status);
        cr_assert_eq(status, EXIT_NO_HANG, "run %d: a churning tree is not hung: %s", run,
                     json_object_to_json_string(json_at(document, "verdict")));
        json_object *process = json_process(document, pid);
        cr_assert_not_null(process, "the churning process itself is always there");
        cr_assert_not_null(json_thread(process, pid));
        json_object_put(document);
    }
    fixture_stop(&fixture);
}

Test(scenarios, kernel_thread_has_no_user_side)
{
    json_object *document = diagnose(2, EXIT_NO_HANG); /* kthreadd: every kernel thread descends from it */
    json_object *process = json_process(document, 2);
    cr_assert_not_null(process);
    cr_assert(json_bool_at(process, "kernel_thread"));
    cr_assert_eq(json_object_array_length(json_at(process, "cmdline")), 0);
    cr_assert_null(json_at(process, "exe"));
    cr_assert_not(json_has_note(document, "exe:"), "no exe for a kernel thread is normal");
    cr_assert_not(json_has_note(document, "syscall:"), "no syscall file reading is noted for kernel threads");
    json_object_put(document);
}

Test(scenarios, another_users_process_gets_notes_not_a_failure)
{
    struct fixture fixture;
    fixture_start(&fixture, "inherited_mutex");
    char pid[16];
    snprintf(pid, sizeof pid, "%d", fixture.pids[2]);
    const char *arguments[] = { "--json", "--samples", "1", pid, NULL };
    struct run_result result;
    hangdoc_run_as(&result, 65534, arguments); /* nobody, reading root's process */
    cr_assert_eq(result.exit_status, EXIT_NO_HANG, "no lock can be read, so no verdict; stderr: %s", result.err);
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document);
    json_validate(result.out);
    json_object *process = json_process(document, fixture.pids[2]);
    cr_assert_not_null(process, "/proc still shows the process");
    cr_assert_str_eq(json_string_at(json_thread(process, fixture.pids[2]), "state"), "S");
    cr_assert(json_has_note(document, "syscall: permission denied"), "%s", result.out);
    cr_assert(json_has_note(document, "exe: permission denied"), "%s", result.out);
    cr_assert_str_eq(json_string_at(json_thread(process, fixture.pids[2]), "syscall.state"), "unread");
    json_object_put(document);
    run_result_free(&result);
    fixture_stop(&fixture);
}

Test(scenarios, a_thread_id_diagnoses_its_process)
{
    struct fixture fixture;
    fixture_start(&fixture, "inherited_mutex");
    pid_t holder = fixture.pids[1];
    json_object *document = diagnose(holder, EXIT_HANG_FORK_UNSAFE);
    cr_assert_not_null(json_process(document, fixture.pids[0]));
    cr_assert(json_has_note(document, "is a thread of process"));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ---- lock forensics and the wait-for graph ---------------------------------------------------------------- */

/* The lock-variant fixtures: the child waits for a lock a thread of its parent held at fork(). */
static void check_inherited_lock(json_object *document, const struct fixture *fixture, const char *kind,
                                 const char *type, bool robust)
{
    pid_t parent = fixture->pids[0], holder = fixture->pids[1], child = fixture->pids[2];
    json_object *locker = json_thread(json_process(document, child), child);
    cr_assert_str_eq(json_string_at(locker, "wait.lock.kind"), kind);
    cr_assert_str_eq(json_string_at(locker, "wait.lock.type"), type);
    cr_assert_eq(json_bool_at(locker, "wait.lock.robust"), robust);
    cr_assert_eq(json_int_at(locker, "wait.owner_tid", -1), holder);
    cr_assert_eq(json_int_at(locker, "wait.owner_pid", -1), parent);
    json_object *finding = expect_findings(document, "inherited-lock", 1);
    cr_assert_eq(json_int_at(finding, "tid", -1), child);
    expect_verdict(document, true, "fork-inheritance", "inherited-lock", child);
}

static void check_inherited_robust(json_object *document, const struct fixture *fixture)
{
    check_inherited_lock(document, fixture, "mutex", "normal", true);
}

static void check_inherited_rwlock(json_object *document, const struct fixture *fixture)
{
    check_inherited_lock(document, fixture, "rwlock", "writer", false);
}

Test(scenarios, robust_mutex_inherited_locked)
{
    live_scenario("inherited_robust", "inherited_robust", 0, EXIT_HANG_FORK_UNSAFE, check_inherited_robust);
}

Test(recorded, robust_mutex_inherited_locked)
{
    recorded_scenario("inherited_robust", EXIT_HANG_FORK_UNSAFE, check_inherited_robust);
}

Test(scenarios, rwlock_write_held_at_fork)
{
    live_scenario("inherited_rwlock", "inherited_rwlock", 0, EXIT_HANG_FORK_UNSAFE, check_inherited_rwlock);
}

Test(recorded, rwlock_write_held_at_fork)
{
    recorded_scenario("inherited_rwlock", EXIT_HANG_FORK_UNSAFE, check_inherited_rwlock);
}

Test(scenarios, priority_inheritance_mutex_owner_is_read_from_the_lock_word)
{
    struct fixture fixture;
    fixture_start(&fixture, "pi_mutex");
    pid_t pid = fixture.pids[0], holder = fixture.pids[1];
    json_object *document = hangdoc_json(pid, NULL);
    json_object *waiter = json_thread(json_process(document, pid), pid);
    cr_assert_str_eq(json_string_at(waiter, "wait.operation"), "FUTEX_LOCK_PI");
    cr_assert_str_eq(json_string_at(waiter, "wait.lock.kind"), "mutex");
    cr_assert(json_bool_at(waiter, "wait.lock.priority_inheritance"));
    cr_assert_eq(json_int_at(waiter, "wait.owner_tid", -1), holder);
    cr_assert_str_eq(json_string_at(waiter, "wait.lock.owner_whereabouts"), "same-process");
    /* The owner waits for a signal, so the waiter is asleep forever; no rule of the catalogue names why, but
     * nobody who could wake it can run: a deadlock without a root-cause finding. */
    cr_assert(asleep_forever(document, pid));
    expect_verdict(document, true, "deadlock", NULL, pid);
    cr_assert_eq(json_object_array_length(json_at(document, "verdict.hangs")), 1);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* Starts the fixture `name` (built without sanitizers) in the chroot of Debian's development suite, over its glibc:
 * 2.43's pthread_join() sleeps on a state word in the joined thread's descriptor, no longer on its tid word. */
static void fixture_start_in_sid(struct fixture *fixture, const char *name)
{
    python_modern_root(); /* skips the test, saying why, when there is no chroot */
    char launcher[4096], program[4096];
    snprintf(launcher, sizeof launcher, "%s/tests/modern/in_sid", getenv("HANGDOC_SOURCE_ROOT"));
    snprintf(program, sizeof program, "%s/%s", getenv("HANGDOC_FIXTURES"), name);
    fixture_start_command(fixture, launcher, (const char *[]){ name, program, NULL }, 30000);
}

static void check_lock_order_deadlock(json_object *document, const struct fixture *fixture)
{
    pid_t pid = fixture->pids[0], first = fixture->pids[1], second = fixture->pids[2];
    json_object *cycle = expect_findings(document, "lock-cycle", 1);
    cr_assert(json_finding_has_member(cycle, first) && json_finding_has_member(cycle, second), "both threads are in the cycle");
    cr_assert_eq(json_object_array_length(json_at(cycle, "members")), 2);
    json_object *process = json_process(document, pid);
    cr_assert_eq(json_int_at(json_thread(process, first), "wait.owner_tid", -1), second);
    cr_assert_eq(json_int_at(json_thread(process, second), "wait.owner_tid", -1), first);
    /* the main thread joins the first: a join edge, and asleep forever too */
    cr_assert_str_eq(json_string_at(json_thread(process, pid), "wait.lock.kind"), "join");
    cr_assert_eq(json_int_at(json_thread(process, pid), "wait.owner_tid", -1), first);
    cr_assert(asleep_forever(document, pid));
    expect_only_findings(document, (const char *const[]){ "lock-cycle", NULL });
    expect_verdict(document, true, "deadlock", "lock-cycle", 0);
}

static void expect_lock_order_deadlock(struct fixture *fixture, const char *recording)
{
    pid_t pid = fixture->pids[0], first = fixture->pids[1], second = fixture->pids[2];
    if (recording)
        record_as(recording, fixture);
    json_object *document = diagnose(pid, EXIT_HANG);
    check_lock_order_deadlock(document, fixture);
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--samples", "1", pid_text, NULL });
    cr_assert_eq(result.exit_status, EXIT_HANG);
    char expected[256];
    snprintf(expected, sizeof expected, "\nFound one deadlock (lock cycle):\n  thread %d 'takes-a-then-b' of process %d "
             "waits for normal mutex 0x", first, pid);
    cr_assert(strstr(result.out, expected), "%s", result.out);
    snprintf(expected, sizeof expected, "    held by thread %d 'takes-b-then-a' of the same process\n", second);
    cr_assert(strstr(result.out, expected), "%s", result.out);
    run_result_free(&result);
    json_object_put(document);
}

Test(scenarios, lock_order_deadlock)
{
    struct fixture fixture;
    fixture_start(&fixture, "lock_cycle");
    expect_lock_order_deadlock(&fixture, "lock_cycle");
    fixture_stop(&fixture);
}

Test(recorded, lock_order_deadlock)
{
    recorded_scenario("lock_cycle", EXIT_HANG, check_lock_order_deadlock);
}

Test(scenarios, lock_order_deadlock_over_glibc_2_43_of_the_development_suite)
{
    struct fixture fixture;
    fixture_start_in_sid(&fixture, "lock_cycle_plain");
    expect_lock_order_deadlock(&fixture, "lock_cycle_glibc_2_43");
    fixture_stop(&fixture);
}

/* The same lock order deadlock with locks that record no owner (as Rust's std Mutex): no lock-cycle can be drawn,
 * but the main thread's join and the futex waits leave every thread asleep forever. The evidence says who could
 * wake the futex waiter (any thread of the process, all asleep forever), never that the main thread is its waker. */
static void expect_lock_order_deadlock_without_owners(struct fixture *fixture)
{
    pid_t pid = fixture->pids[0], first = fixture->pids[1], second = fixture->pids[2];
    json_object *document = diagnose(pid, EXIT_HANG);
    json_object *cycle = expect_findings(document, "wait-cycle", 1);
    cr_assert_eq(json_int_at(cycle, "tid", -1), pid);
    cr_assert(json_finding_has_member(cycle, pid) && json_finding_has_member(cycle, first), "the joiner and the joined");
    json_object *process = json_process(document, pid);
    cr_assert(asleep_forever(document, pid) && asleep_forever(document, first) && asleep_forever(document, second));
    cr_assert_str_eq(json_string_at(json_thread(process, first), "wait.lock.kind"), "unknown");
    json_object *steps = json_at(cycle, "evidence.cycle");
    cr_assert(steps && json_object_array_length(steps) == 2, "%s", json_object_to_json_string(cycle));
    char expected[256];
    snprintf(expected, sizeof expected, "thread %d 'takes-a-then-b' of process %d (futex wait) waits on a futex with "
             "no owner recorded: only a thread of process %d could wake it, and none of its 2 other threads can run",
             first, pid, pid);
    bool said = false;
    for (size_t i = 0; i < json_object_array_length(steps); i++) {
        const char *step = json_object_get_string(json_object_array_get_idx(steps, i));
        said |= strstr(step, expected) == step;
        cr_assert_null(strstr(step, "waits through a futex for"), "%s", step);
    }
    cr_assert(said, "%s", json_object_to_json_string(steps));
    expect_only_findings(document, (const char *const[]){ "wait-cycle", NULL });
    expect_verdict(document, true, "deadlock", "wait-cycle", pid);
    json_object_put(document);
}

Test(recorded, lock_order_deadlock_over_glibc_2_43_of_the_development_suite)
{
    recorded_scenario("lock_cycle_glibc_2_43", EXIT_HANG, check_lock_order_deadlock);
}

Test(scenarios, lock_order_deadlock_with_locks_that_record_no_owner)
{
    struct fixture fixture;
    fixture_start(&fixture, "unowned_lock_cycle");
    expect_lock_order_deadlock_without_owners(&fixture);
    fixture_stop(&fixture);
}

Test(scenarios, lock_order_deadlock_with_locks_that_record_no_owner_over_glibc_2_43)
{
    struct fixture fixture;
    fixture_start_in_sid(&fixture, "unowned_lock_cycle_plain");
    expect_lock_order_deadlock_without_owners(&fixture);
    fixture_stop(&fixture);
}

Test(scenarios, thread_exited_holding_a_mutex)
{
    struct fixture fixture;
    fixture_start(&fixture, "abandoned_lock");
    pid_t pid = fixture.pids[0], quitter = fixture.pids[1];
    json_object *document = diagnose(pid, EXIT_HANG);
    json_object *waiter = json_thread(json_process(document, pid), pid);
    cr_assert_eq(json_int_at(waiter, "wait.owner_tid", -1), quitter);
    cr_assert_str_eq(json_string_at(waiter, "wait.lock.owner_whereabouts"), "gone");
    json_object *finding = expect_findings(document, "abandoned-lock", 1);
    cr_assert_eq(json_int_at(finding, "tid", -1), pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    expect_only_findings(document, (const char *const[]){ "abandoned-lock", NULL });
    expect_verdict(document, true, "deadlock", "abandoned-lock", pid);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ready <pid> <signaller tid>: the main thread waits on a condition variable while it holds the mutex that the
 * thread which was to signal it waits for. */
Test(scenarios, condition_wait_holding_the_signallers_mutex)
{
    struct fixture fixture;
    fixture_start(&fixture, "no_waker");
    pid_t pid = fixture.pids[0], signaller = fixture.pids[1];
    json_object *document = diagnose(pid, EXIT_HANG);
    json_object *waiting = json_thread(json_process(document, pid), signaller);
    cr_assert_eq(json_int_at(waiting, "wait.owner_tid", -1), pid, "the main thread owns the mutex it waits for");
    json_object *finding = expect_findings(document, "no-waker", 1);
    cr_assert_eq(json_int_at(finding, "tid", -1), pid);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    cr_assert(json_finding_has_member(finding, pid) && json_finding_has_member(finding, signaller));
    cr_assert_str_eq(json_string_at(finding, "evidence.waits_in"), "a condition variable (pthread_cond_wait)");
    char expected[256];
    snprintf(expected, sizeof expected, "thread %d 'no_waker' holds the mutex %s that thread %d 'signaller' waits for",
             (int)pid, json_string_at(waiting, "wait.lock.object_address"), (int)signaller);
    cr_assert_str_eq(json_string_at(finding, "evidence.held_lock"), expected);
    snprintf(expected, sizeof expected, "thread %d 'signaller' of process %d could wake it, but is asleep forever "
             "itself, waiting for the mutex %s that thread %d holds", (int)signaller, (int)pid,
             json_string_at(waiting, "wait.lock.object_address"), (int)pid);
    cr_assert_str_eq(json_string_at(finding, "evidence.waker"), expected);
    expect_only_findings(document, (const char *const[]){ "no-waker", NULL });
    expect_verdict(document, true, "deadlock", "no-waker", pid);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ready <pid>: the only thread left waits in sem_wait() for a post that the thread which returned early never
 * made. */
Test(scenarios, semaphore_whose_poster_returned)
{
    struct fixture fixture;
    fixture_start(&fixture, "no_waker_sem");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose(pid, EXIT_HANG);
    json_object *finding = expect_findings(document, "no-waker", 1);
    cr_assert_eq(json_int_at(finding, "tid", -1), pid);
    cr_assert_str_eq(json_string_at(finding, "evidence.waits_in"), "a semaphore (sem_wait)");
    char expected[256];
    snprintf(expected, sizeof expected, "none: no other thread could (it is the only thread of process %d, and "
             "nothing another process holds or shares can end its wait)", (int)pid);
    cr_assert_str_eq(json_string_at(finding, "evidence.waker"), expected);
    cr_assert_null(json_at(finding, "evidence.held_lock"));
    expect_only_findings(document, (const char *const[]){ "no-waker", NULL });
    expect_verdict(document, true, "deadlock", "no-waker", pid);
    json_object_put(document);
    fixture_stop(&fixture);
}

static void check_openmp_fork(json_object *document, const struct fixture *fixture)
{
    pid_t parent = fixture->pids[0], child = fixture->pids[1];
    json_object *worker = json_thread(json_process(document, child), child);
    cr_assert_str_eq(json_string_at(worker, "wait.kind"), "futex");
    cr_assert(json_bool_at(worker, "wait.private"));
    cr_assert_str_eq(json_string_at(worker, "wait.lock.kind"), "unknown", "libgomp's barrier records no owner");
    json_object *orphaned = expect_findings(document, "orphaned-wait", 1);
    cr_assert_eq(json_int_at(orphaned, "pid", -1), child);
    cr_assert_eq(json_int_at(orphaned, "tid", -1), child);
    /* Depending on timing the child's main thread sleeps on the very word the parent's pool threads dock on, or
     * on another word of the pool: both are orphaned waits, the first with the parent's waiters as evidence. */
    const char *why = json_string_at(orphaned, "evidence.fork_evidence");
    cr_assert_not_null(why, "says what shows the wait came with fork");
    if (strcmp(why, "threads of the parent sleep at the same address") == 0)
        cr_assert_not_null(json_at(orphaned, "evidence.parent_waiter"), "the parent's waiters are named");
    else
        cr_assert_str_eq(why, "the wait is inside a runtime whose threads run in the parent");
    /* attributed to GNU OpenMP: libgomp makes its futex calls itself, so the system call's caller names it */
    cr_assert_str_eq(json_string_at(orphaned, "evidence.runtime"), "gnu-openmp");
    cr_assert_str_eq(json_string_at(orphaned, "evidence.runtime_text"), "inside libgomp.so.1, GNU OpenMP, not fork-safe");
    json_object *runtime = expect_findings(document, "fork-unsafe-runtime", 1);
    cr_assert_eq(json_int_at(runtime, "pid", -1), child);
    cr_assert_str_eq(json_string_at(runtime, "evidence.runtime"), "gnu-openmp");
    cr_assert_not_null(json_at(runtime, "evidence.parent_thread"), "the parent's pool threads are named");
    json_object *waiting = expect_findings(document, "waiting-on-workers", 1);
    cr_assert_eq(json_int_at(waiting, "tid", -1), parent);
    expect_only_findings(document,
                         (const char *const[]){ "orphaned-wait", "fork-unsafe-runtime", "waiting-on-workers", NULL });
    expect_verdict(document, true, "fork-inheritance", "orphaned-wait", child);
}

Test(scenarios, gnu_openmp_parallel_region_after_fork)
{
    live_scenario("openmp_fork", "openmp_fork", 0, EXIT_HANG_FORK_UNSAFE, check_openmp_fork);
}

Test(recorded, gnu_openmp_parallel_region_after_fork)
{
    recorded_scenario("openmp_fork", EXIT_HANG_FORK_UNSAFE, check_openmp_fork);
}

static void check_pipe_waiter(json_object *document, const struct fixture *fixture)
{
    pid_t parent = fixture->pids[0], child = fixture->pids[2];
    json_object *reader = json_thread(json_process(document, parent), parent);
    cr_assert_str_eq(json_string_at(reader, "wait.kind"), "read");
    json_object *waiting = expect_findings(document, "waiting-on-workers", 1);
    cr_assert_eq(json_int_at(waiting, "pid", -1), parent);
    cr_assert_eq(json_int_at(waiting, "tid", -1), parent);
    cr_assert(json_finding_has_member(waiting, child));
    char child_text[16];
    snprintf(child_text, sizeof child_text, "%d", child);
    cr_assert_str_eq(json_string_at(waiting, "evidence.workers"), child_text);
    /* the root cause is in the child, not in the waiting parent */
    expect_findings(document, "inherited-lock", 1);
    expect_verdict(document, true, "fork-inheritance", "inherited-lock", child);
    bool pipe_edge = false;
    json_object *sets = json_at(document, "graph.wait_sets");
    for (size_t i = 0; i < json_object_array_length(sets); i++) {
        json_object *set = json_object_array_get_idx(sets, i);
        json_object *processes = json_at(set, "any_thread_of");
        if (json_int_at(set, "from", -1) != parent || strcmp(json_string_at(set, "kind"), "pipe") != 0)
            continue;
        for (size_t p = 0; p < json_object_array_length(processes); p++)
            pipe_edge |= json_object_get_int(json_object_array_get_idx(processes, p)) == child;
    }
    cr_assert(pipe_edge, "a pipe wait set from the reader to the child holding the write end: %s",
              json_object_to_json_string(json_at(document, "graph")));
}

Test(scenarios, parent_reading_a_pipe_from_a_hung_child)
{
    live_scenario("pipe_waiter", "pipe_waiter", 0, EXIT_HANG_FORK_UNSAFE, check_pipe_waiter);
}

Test(recorded, parent_reading_a_pipe_from_a_hung_child)
{
    recorded_scenario("pipe_waiter", EXIT_HANG_FORK_UNSAFE, check_pipe_waiter);
}

Test(scenarios, healthy_idle_pool_with_live_producer)
{
    struct fixture fixture;
    fixture_start(&fixture, "idle_pool");
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    json_object *document = diagnose(pid, EXIT_NO_HANG);
    expect_only_findings(document, HEALTHY);
    expect_verdict(document, false, "none", NULL, 0);
    json_object *findings = json_at(document, "findings");
    size_t idle_workers = 0;
    for (size_t i = 0; i < json_object_array_length(findings); i++) {
        pid_t tid = (pid_t)json_int_at(json_object_array_get_idx(findings, i), "tid", -1);
        idle_workers += tid == first || tid == second;
    }
    cr_assert_eq(idle_workers, 2, "both workers are idle, not hung");
    cr_assert_not(asleep_forever(document, first));
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(scenarios, healthy_reader_of_a_pipe_with_a_live_writer)
{
    struct fixture fixture;
    fixture_start(&fixture, "healthy_pipe");
    pid_t parent = fixture.pids[0], writer = fixture.pids[1];
    json_object *document = diagnose(parent, EXIT_NO_HANG);
    expect_only_findings(document, HEALTHY);
    json_object *idle = expect_findings(document, "idle", 1);
    cr_assert_eq(json_int_at(idle, "tid", -1), parent);
    cr_assert(json_finding_has_member(idle, writer), "the writer can wake the reader");
    expect_verdict(document, false, "none", NULL, 0);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* How a glibc lock's function is named: by libc6-dbg's symbols (the static function that takes it), or, with
 * separate debug files off as on a machine without libc6-dbg, by what the program called to reach it (the
 * exported function whose tail call leads there). The finding is the same either way. */
#define BY_DEBUG_FILES "the memory its futex lies in, and the function of its stack that takes that lock"
#define BY_THE_CALL "the memory its futex lies in, and the function its stack called to take that lock"

static void expect_atexit_lock_held_at_fork(const char *attributed_by, const char *function, const char *or_function)
{
    /* glibc leaves __exit_funcs_lock as it was at fork(); the fixture forks until a child hangs in atexit()
     * (it took 2 forks in every run seen) */
    struct fixture fixture;
    fixture_start(&fixture, "atexit_fork");
    pid_t parent = fixture.pids[0], child = fixture.pids[1];
    json_object *document = diagnose(parent, EXIT_HANG_FORK_UNSAFE);
    json_object *thread = json_thread(json_process(document, child), child);
    cr_assert_str_eq(json_string_at(thread, "wait.kind"), "futex");
    cr_assert_str_eq(json_string_at(thread, "wait.lock.kind"), "unknown", "a libc low-level lock records no owner");
    /* the lock lives in libc's data (.bss from glibc 2.34, .data before): private memory, the child's own copy */
    const char *mapping = json_string_at(thread, "wait.mapping.kind");
    cr_assert(mapping && (strcmp(mapping, "anonymous-private") == 0 || strcmp(mapping, "file-private") == 0),
              "private memory: %s", mapping ? mapping : "(none)");
    json_object *orphaned = expect_findings(document, "orphaned-wait", 1);
    cr_assert_eq(json_int_at(orphaned, "tid", -1), child);
    /* the futex lies in libc's .bss, and the child's stack is in the function that takes the atexit lock */
    cr_assert_str_eq(json_string_at(orphaned, "evidence.runtime"), "glibc-atexit");
    const char *named = json_string_at(orphaned, "evidence.function");
    cr_assert(named && (strcmp(named, function) == 0 || (or_function && strcmp(named, or_function) == 0)),
              "the lock named by %s%s%s: %s", function, or_function ? " or " : "", or_function ? or_function : "",
              named ? named : "(none)");
    cr_assert_str_eq(json_string_at(orphaned, "evidence.attributed_by"), attributed_by);
    json_object *runtime = expect_findings(document, "fork-unsafe-runtime", 1);
    cr_assert_eq(json_int_at(runtime, "tid", -1), child);
    expect_only_findings(document,
                         (const char *const[]){ "orphaned-wait", "fork-unsafe-runtime", "waiting-on-workers", NULL });
    expect_verdict(document, true, "fork-inheritance", "orphaned-wait", child);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The names libc6-dbg gives are checked where it is installed (setup.sh installs it on Debian 12). */
static void need_libc_debug_files(void)
{
    if (system("dpkg-query -W -f='${Status}' libc6-dbg 2>/dev/null | grep -q 'install ok installed'") != 0)
        cr_skip_test("libc6-dbg is not installed: the names of glibc's static functions are not there to check");
}

Test(scenarios, atexit_lock_held_at_fork)
{
    need_libc_debug_files();
    expect_atexit_lock_held_at_fork(BY_DEBUG_FILES, "__internal_atexit", NULL); /* libc6-dbg names it */
}

/* Without libc6-dbg: the fixture's atexit() (linked into it from libc_nonshared) is what the child's frame in
 * libc was reached through; under AddressSanitizer, whose interceptor takes the atexit call, libc's __cxa_atexit */
Test(scenarios, atexit_lock_held_at_fork_without_debug_files)
{
    setenv("HANGDOC_DEBUG_FILES", "0", 1);
    expect_atexit_lock_held_at_fork(BY_THE_CALL, "atexit", "__cxa_atexit");
    unsetenv("HANGDOC_DEBUG_FILES");
}

/* glibc's time-zone lock, held by the parent's logging thread at fork(): the child's stack names the lock
 * (__tz_convert, from localtime_r), and so do the finding, its runtime and its remedies; not the atexit lock, though
 * both lie in libc's data (issue 13) */
static void expect_time_zone_lock_held_at_fork(const char *function)
{
    struct fixture fixture;
    fixture_start(&fixture, "tz_fork");
    pid_t parent = fixture.pids[0], child = fixture.pids[1];
    json_object *document = diagnose(parent, EXIT_HANG_FORK_UNSAFE);
    json_object *orphaned = expect_findings(document, "orphaned-wait", 1);
    cr_assert_eq(json_int_at(orphaned, "tid", -1), child);
    cr_assert_str_eq(json_string_at(orphaned, "evidence.runtime"), "glibc-tz");
    cr_assert_str_eq(json_string_at(orphaned, "evidence.function"), function);
    char words[128];
    snprintf(words, sizeof words, "inside libc.so.6, glibc's time-zone lock, in %s, not fork-safe", function);
    cr_assert_str_eq(json_string_at(orphaned, "evidence.runtime_text"), words);
    cr_assert_eq(json_count_remedies(orphaned, "convert no time before exec"), 1);
    cr_assert_eq(json_count_remedies(orphaned, "atexit"), 0, "not the atexit lock");
    json_object *runtime = expect_findings(document, "fork-unsafe-runtime", 1);
    cr_assert_eq(json_int_at(runtime, "tid", -1), child);
    cr_assert_str_eq(json_string_at(runtime, "evidence.runtime"), "glibc-tz");
    expect_only_findings(document,
                         (const char *const[]){ "orphaned-wait", "fork-unsafe-runtime", "waiting-on-workers", NULL });
    expect_verdict(document, true, "fork-inheritance", "orphaned-wait", child);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(scenarios, libc_time_zone_lock_held_at_fork_is_named_by_the_function_that_takes_it)
{
    need_libc_debug_files();
    expect_time_zone_lock_held_at_fork("__tz_convert"); /* libc6-dbg names it */
}

/* Without libc6-dbg: localtime_r, which the child called through its PLT and which tail-calls __tz_convert */
Test(scenarios, libc_time_zone_lock_held_at_fork_is_named_without_debug_files)
{
    setenv("HANGDOC_DEBUG_FILES", "0", 1);
    expect_time_zone_lock_held_at_fork("localtime_r");
    unsetenv("HANGDOC_DEBUG_FILES");
}

/* ---- dead workers and busy loops ---------------------------------------------------------------------------- */

/* `confidence`: certain when the parent sleeps for ever; likely when it waits in a timed loop, which could be a
 * parent that reaps between two timeouts (the zombie stayed through every sample, so it did not). */
static void check_worker_died(json_object *document, const struct fixture *fixture, const char *exit_text,
                              const char *wait_kind, const char *confidence)
{
    pid_t parent = fixture->pids[0], worker = fixture->pids[1];
    json_object *zombie = json_process(document, worker);
    cr_assert_not_null(zombie, "the dead worker is still in the tree, as a zombie");
    cr_assert_str_eq(json_string_at(zombie, "state"), "Z");
    json_object *waiter = json_thread(json_process(document, parent), parent);
    cr_assert_str_eq(json_string_at(waiter, "wait.kind"), wait_kind);
    json_object *died = expect_findings(document, "worker-died", 1);
    cr_assert_eq(json_int_at(died, "pid", -1), worker);
    cr_assert_str_eq(json_string_at(died, "confidence"), confidence);
    cr_assert(strstr(json_string_at(died, "evidence.exit"), exit_text), "%s", json_string_at(died, "evidence.exit"));
    cr_assert(json_finding_has_member(died, parent), "the waiting parent is named");
    expect_only_findings(document, (const char *const[]){ "worker-died", NULL });
    expect_verdict(document, true, "worker-died", "worker-died", worker);
    cr_assert_eq(json_object_array_length(json_at(document, "verdict.hangs")), 1,
                 "the parent left waiting is part of the same hang: %s",
                 json_object_to_json_string(json_at(document, "verdict.hangs")));
    json_object *chain = json_at(document, "verdict.chain");
    cr_assert_eq(json_object_array_length(chain), 2);
    cr_assert_eq(json_object_get_int(json_object_array_get_idx(chain, 1)), worker);
}

static void check_worker_killed(json_object *document, const struct fixture *fixture)
{
    check_worker_died(document, fixture, "killed by SIGKILL (9)", "poll", "likely");
}

static void check_worker_crashed(json_object *document, const struct fixture *fixture)
{
    check_worker_died(document, fixture, "killed by SIGSEGV (11)", "read", "certain");
}

Test(scenarios, worker_killed_while_its_parent_polls_the_result_pipe)
{
    live_scenario("worker_died", "worker_died", 0, EXIT_HANG, check_worker_killed);
}

Test(recorded, worker_killed_while_its_parent_polls_the_result_pipe)
{
    recorded_scenario("worker_died", EXIT_HANG, check_worker_killed);
}

Test(scenarios, worker_that_vanished_during_sampling_while_its_parent_polls)
{
    /* The worker dies 400 ms after the ready line and the kernel reaps it at once (SIGCHLD ignored): hangdoc must
     * see it in an early sample and miss it in the last. A machine too loaded to start hangdoc within 400 ms gets
     * two more tries. */
    for (int attempt = 0; attempt < 3; attempt++) {
        struct fixture fixture;
        fixture_start(&fixture, "worker_vanished");
        pid_t parent = fixture.pids[0], worker = fixture.pids[1];
        char pid_text[16], note[64];
        snprintf(pid_text, sizeof pid_text, "%d", parent);
        snprintf(note, sizeof note, "process %d exited during sampling", worker);
        struct run_result result;
        hangdoc_run_once(&result, (const char *[]){ "--json", "-n", "6", "-i", "200ms", pid_text, NULL });
        json_object *document = json_tokener_parse(result.out);
        cr_assert_not_null(document, "%s", result.err);
        if (!json_has_note(document, note)) {
            json_object_put(document);
            run_result_free(&result);
            fixture_stop(&fixture);
            continue;
        }
        json_validate(result.out);
        cr_assert_eq(result.exit_status, EXIT_HANG);
        cr_assert_null(json_process(document, worker), "gone by the last sample");
        json_object *died = expect_findings(document, "worker-died", 1);
        cr_assert_eq(json_int_at(died, "pid", -1), worker);
        cr_assert_str_eq(json_string_at(died, "confidence"), "likely", "how it ended is unknown");
        cr_assert(json_finding_has_member(died, parent));
        expect_verdict(document, true, "worker-died", "worker-died", worker);
        json_object *chain = json_at(document, "verdict.chain");
        cr_assert_eq(json_object_array_length(chain), 2);
        cr_assert_eq(json_object_get_int(json_object_array_get_idx(chain, 0)), parent);
        cr_assert_eq(json_object_get_int(json_object_array_get_idx(chain, 1)), worker);
        json_object_put(document);
        run_result_free(&result);
        fixture_stop(&fixture);
        return;
    }
    cr_assert_fail("hangdoc never saw the worker before it vanished, in 3 tries");
}

Test(scenarios, worker_crashed_while_its_parent_reads_the_result_pipe)
{
    live_scenario("worker_crashed", "worker_crashed", 0, EXIT_HANG, check_worker_crashed);
}

Test(recorded, worker_crashed_while_its_parent_reads_the_result_pipe)
{
    recorded_scenario("worker_crashed", EXIT_HANG, check_worker_crashed);
}

/* A Python parent that runs short children one after the other with subprocess.run (each reaped by its own
 * waitpid) while another thread rests in a timed Event wait: the children that vanish during sampling were reaped
 * by their parent, and the timed wait does not wait for them. Not hung, whatever the samples catch. */
Test(scenarios, healthy_python_loop_of_short_subprocesses_is_not_a_dead_worker)
{
    struct fixture fixture;
    fixture_start(&fixture, "python_subprocess_loop");
    pid_t parent = fixture.pids[0];
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", parent);
    struct run_result result;
    /* 1.2 s of samples: several children come, are reaped and vanish in that time */
    hangdoc_run(&result, (const char *[]){ "--json", "-n", "7", "-i", "200ms", pid_text, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "%s", result.err);
    json_validate(result.out);
    cr_assert_eq(json_count_findings(document, "worker-died", 0), 0, "%s",
                 json_object_to_json_string(json_at(document, "findings")));
    expect_only_findings(document, HEALTHY);
    expect_verdict(document, false, "none", NULL, 0);
    cr_assert_eq(result.exit_status, EXIT_NO_HANG);
    json_object_put(document);
    run_result_free(&result);
    hangdoc_run(&result, (const char *[]){ "-n", "7", "-i", "200ms", pid_text, NULL });
    cr_assert_eq(result.exit_status, EXIT_NO_HANG, "%s", result.out);
    cr_assert_null(strstr(result.out, "worker-died"), "%s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}

/* ---- remedies specific to what was found ---------------------------------------------------------------------- */

static void check_python_fork_lock(json_object *document, const struct fixture *fixture)
{
    pid_t child = fixture->pids[1];
    json_object *orphaned = expect_findings(document, "orphaned-wait", 1);
    cr_assert_eq(json_int_at(orphaned, "tid", -1), child);
    expect_verdict(document, true, "fork-inheritance", "orphaned-wait", child);
    /* a Python process: the start-method remedies, with the exact code, and their caveats */
    cr_assert_eq(json_count_remedies(orphaned, "if __name__ == '__main__': "
                                         "torch.multiprocessing.set_start_method('spawn', force=True)"), 1);
    cr_assert_eq(json_count_remedies(orphaned, "context has already been set"), 1);
    cr_assert_eq(json_count_remedies(orphaned, "no lambdas"), 1);
    cr_assert_eq(json_count_remedies(orphaned, "imports the main module again"), 1);
    cr_assert_eq(json_count_remedies(orphaned, "atexit"), 0, "the lock is Python's, not libc's");
    cr_assert_eq(json_count_remedies(orphaned, "OpenMP"), 0);
}

Test(scenarios, python_child_forked_while_a_thread_holds_a_lock)
{
    live_scenario("python_fork_lock", "python_fork_lock", 0, EXIT_HANG_FORK_UNSAFE, check_python_fork_lock);
}

Test(recorded, python_child_forked_while_a_thread_holds_a_lock)
{
    recorded_scenario("python_fork_lock", EXIT_HANG_FORK_UNSAFE, check_python_fork_lock);
}

Test(scenarios, remedies_name_atexit_for_libcs_lock_and_openmp_for_libgomp)
{
    struct fixture fixture;
    fixture_start(&fixture, "atexit_fork");
    json_object *document = hangdoc_json(fixture.pids[0], NULL);
    json_object *orphaned = expect_findings(document, "orphaned-wait", 1);
    cr_assert_eq(json_count_remedies(orphaned, "do not register atexit handlers"), 1, "the lock lies in libc's data");
    cr_assert_eq(json_count_remedies(orphaned, "set_start_method"), 0, "not a Python process");
    cr_assert_eq(json_count_remedies(orphaned, "OpenMP"), 0);
    json_object_put(document);
    fixture_stop(&fixture);

    fixture_start(&fixture, "openmp_fork");
    document = hangdoc_json(fixture.pids[0], NULL);
    orphaned = expect_findings(document, "orphaned-wait", 1);
    cr_assert_eq(json_count_remedies(orphaned, "OMP_NUM_THREADS=1"), 1);
    cr_assert_eq(json_count_remedies(orphaned, "atexit"), 0);
    cr_assert_eq(json_count_remedies(orphaned, "set_start_method"), 0);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ---- several hangs; the text report on a terminal --------------------------------------------------------------- */

Test(scenarios, two_independent_hangs_are_reported_each_with_its_root_cause)
{
    struct fixture inherited, died;
    fixture_start(&inherited, "inherited_mutex");
    fixture_start(&died, "worker_died");
    char first[16], second[16];
    snprintf(first, sizeof first, "%d", inherited.pids[0]);
    snprintf(second, sizeof second, "%d", died.pids[0]);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "-n", "3", "-i", "100ms", first, second, NULL });
    cr_assert_eq(result.exit_status, EXIT_HANG_FORK_UNSAFE, "the first hang decides the status; stderr: %s", result.err);
    json_validate(result.out);
    json_object *document = json_tokener_parse(result.out);
    expect_verdict(document, true, "fork-inheritance", "inherited-lock", inherited.pids[2]);
    json_object *hangs = json_at(document, "verdict.hangs");
    cr_assert_eq(json_object_array_length(hangs), 2, "%s", json_object_to_json_string(hangs));
    json_object *other = json_object_array_get_idx(hangs, 1);
    cr_assert_str_eq(json_string_at(other, "cause"), "worker-died");
    cr_assert_str_eq(json_string_at(other, "root_cause"), "worker-died");
    cr_assert_eq(json_int_at(other, "pid", -1), died.pids[1]);
    json_object *chain = json_at(other, "chain");
    cr_assert_eq(json_object_array_length(chain), 2);
    cr_assert_eq(json_object_get_int(json_object_array_get_idx(chain, 0)), died.pids[0]);
    json_object *finding = json_object_array_get_idx(json_at(document, "findings"),
                                                     (size_t)json_int_at(other, "finding", -1));
    cr_assert_str_eq(json_string_at(finding, "id"), "worker-died");
    json_object_put(document);
    run_result_free(&result);

    hangdoc_run(&result, (const char *[]){ "-n", "2", "-i", "50ms", first, second, NULL });
    cr_assert(strstr(result.out, "\n2 independent hangs, each with its own root cause:\n  2. likely HUNG (worker-died): worker "),
              "%s", result.out);
    run_result_free(&result);
    fixture_stop(&died);
    fixture_stop(&inherited);
}

/* Runs hangdoc with its standard output on a pseudo-terminal `columns` wide; NO_COLOR as given (NULL: unset). */
static char *hangdoc_on_terminal(const char *const *arguments, const char *no_colour, unsigned short columns)
{
    struct winsize size = { .ws_row = 50, .ws_col = columns };
    int terminal;
    pid_t child = forkpty(&terminal, NULL, NULL, &size);
    cr_assert_geq(child, 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (no_colour)
            setenv("NO_COLOR", no_colour, 1);
        else
            unsetenv("NO_COLOR");
        unsetenv("COLUMNS");
        const char *argv[16] = { getenv("HANGDOC_BIN") };
        for (size_t i = 0; arguments[i] && i < 14; i++)
            argv[i + 1] = arguments[i];
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    char chunk[4096];
    ssize_t got;
    while ((got = read(terminal, chunk, sizeof chunk)) > 0) /* EIO once hangdoc has exited */
        fwrite(chunk, 1, (size_t)got, out);
    fclose(out);
    close(terminal);
    int status;
    waitpid(child, &status, 0);
    return text;
}

/* The longest line, in columns (code points; colour sequences and the terminal's \r take none), leaving out lines
 * that hold a path of the build directory: a word longer than the line is never broken, and its length depends on
 * where the tests run. */
static size_t widest_line(const char *text)
{
    size_t widest = 0, columns = 0;
    const char *fixtures = getenv("HANGDOC_FIXTURES"), *line = text;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            bool path = fixtures && memmem(line, (size_t)(p - line), fixtures, strlen(fixtures));
            widest = columns > widest && !path ? columns : widest;
            columns = 0;
            line = p + 1;
        } else if (*p == '\x1b') {
            while (*p && *p != 'm')
                p++;
        } else if (*p != '\r' && ((unsigned char)*p & 0xc0) != 0x80) {
            columns++;
        }
    }
    return widest;
}

Test(scenarios, on_a_terminal_colour_unless_no_color_and_wrapped_to_its_width)
{
    struct fixture fixture;
    fixture_start(&fixture, "inherited_mutex");
    char pid[16];
    snprintf(pid, sizeof pid, "%d", fixture.pids[0]);
    const char *arguments[] = { "-n", "2", "-i", "50ms", pid, NULL };
    char *text = hangdoc_on_terminal(arguments, NULL, 72);
    cr_assert(strstr(text, "verdict: \x1b[1;31mHUNG (fork-inheritance)\x1b[0m: "), "colour on a terminal: %s", text);
    cr_assert_leq(widest_line(text), 72, "wrapped to the terminal's 72 columns (long paths aside): %s", text);
    cr_assert_gt(widest_line(text), 50);
    free(text);
    text = hangdoc_on_terminal(arguments, "1", 200);
    cr_assert_null(strchr(text, '\x1b'), "NO_COLOR: no colour: %s", text);
    free(text);
    text = hangdoc_on_terminal(arguments, "", 200);
    cr_assert_not_null(strchr(text, '\x1b'), "an empty NO_COLOR does not count");
    free(text);
    const char *always[] = { "--color=always", "-n", "2", "-i", "50ms", pid, NULL };
    text = hangdoc_on_terminal(always, "1", 200);
    cr_assert_not_null(strchr(text, '\x1b'), "--color=always wins over NO_COLOR");
    free(text);
    struct run_result result;
    hangdoc_run(&result, arguments);
    cr_assert_null(strchr(result.out, '\x1b'), "no colour into a pipe");
    cr_assert_gt(widest_line(result.out), 100, "and no wrapping without COLUMNS");
    run_result_free(&result);
    setenv("COLUMNS", "60", 1);
    program_run_as(&result, -1, (const char *[]){ getenv("HANGDOC_BIN"), "-n", "2", "-i", "50ms", pid, NULL });
    unsetenv("COLUMNS");
    cr_assert_leq(widest_line(result.out), 60, "COLUMNS wraps a pipe: %s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}
