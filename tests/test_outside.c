/* Wakers outside the lock graph (issue 40): a cgroup freezer, a timer only the process knows, a signal handler
 * that re-enters a lock, a pseudo-terminal's reader, a FUSE file system's daemon. Each hang beside its healthy look-alike, asserted on finding
 * ids, subjects and evidence. */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(outside, .fini = fixture_stop_all, .timeout = 180);

static json_object *diagnose(pid_t pid, int expected_status)
{
    json_object *document = diagnose_expecting(pid, expected_status);
    cr_assert_not_null(document);
    return document;
}

static bool ends_with(const char *text, const char *end)
{
    size_t length = text ? strlen(text) : 0, end_length = strlen(end);
    return text && length >= end_length && strcmp(text + length - end_length, end) == 0;
}

/* ---- frozen cgroups ------------------------------------------------------------------------------------------ */

/* Where this machine mounts cgroup2 (v2) or the v1 freezer hierarchy, into `out`; false when it does not, or when
 * a cgroup cannot be made there (the test then skips). */
static bool freezer_hierarchy(bool v1, char *out, size_t size)
{
    FILE *mounts = fopen("/proc/self/mounts", "re");
    if (!mounts)
        return false;
    char source[256], point[512], type[64], options[512];
    bool found = false;
    while (!found && fscanf(mounts, "%255s %511s %63s %511s %*d %*d", source, point, type, options) == 4)
        found = v1 ? strcmp(type, "cgroup") == 0 && strstr(options, "freezer") : strcmp(type, "cgroup2") == 0;
    fclose(mounts);
    if (!found)
        return false;
    snprintf(out, size, "%s", point);
    char trial[600];
    snprintf(trial, sizeof trial, "%s/hangdoc-trial-%d", point, (int)getpid());
    if (mkdir(trial, 0755) != 0)
        return false;
    rmdir(trial);
    return true;
}

static void start_frozen(struct fixture *fixture, const char *mode, bool v1)
{
    char hierarchy[512];
    if (!freezer_hierarchy(v1, hierarchy, sizeof hierarchy))
        cr_skip_test("no writable %s hierarchy on this machine", v1 ? "v1 freezer" : "cgroup2");
    fixture_start_command(fixture, fixture_path("frozen_cgroup"),
                          (const char *[]){ "frozen_cgroup", mode, hierarchy, NULL }, 10000);
}

/* The child is frozen, its parent waits for it: "frozen", about the child, naming the cgroup that was frozen and
 * the file that thaws it; no deadlock, no D-state finding, and the frozen child never stopped for its stack. */
static void expect_frozen(bool v1)
{
    struct fixture fixture;
    start_frozen(&fixture, v1 ? "v1" : "v2", v1);
    pid_t parent = fixture.pids[0], child = fixture.pids[1];
    json_object *document = diagnose(parent, EXIT_HANG);
    json_object *finding = json_only_finding(document, "frozen", child);
    expect_only_findings(document, (const char *const[]){ "frozen", "idle", NULL });
    cr_assert_eq(json_int_at(finding, "tid", -1), child);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    char top[64];
    snprintf(top, sizeof top, "/hangdoc-frozen-%d", (int)parent);
    char cgroup[96];
    snprintf(cgroup, sizeof cgroup, "%s%s", top, v1 ? "" : "/inner");
    cr_assert(ends_with(json_string_at(finding, "evidence.cgroup"), cgroup), "%s", json_string_at(finding, "evidence.cgroup"));
    cr_assert(ends_with(json_string_at(finding, "evidence.frozen_by"), top), "v2 froze the parent cgroup: %s",
              json_string_at(finding, "evidence.frozen_by"));
    char control[128];
    snprintf(control, sizeof control, "%s/%s", top, v1 ? "freezer.state" : "cgroup.freeze");
    cr_assert(ends_with(json_string_at(finding, "evidence.control"), control), "%s",
              json_string_at(finding, "evidence.control"));
    cr_assert(strncmp(json_string_at(finding, "evidence.freezer"), v1 ? "cgroup v1" : "cgroup v2", 9) == 0);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "frozen");
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "frozen");
    cr_assert_eq(json_int_at(document, "verdict.pid", -1), child);
    json_object *process = json_process(document, child);
    cr_assert_eq(json_int_at(process, "freezer.version", -1), v1 ? 1 : 2);
    cr_assert(ends_with(json_string_at(process, "freezer.frozen_by"), top));
    cr_assert_null(json_at(json_process(document, parent), "freezer"), "the parent is not frozen");
    json_object *thread = json_thread(process, child);
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "not-taken");
    cr_assert(strstr(json_string_at(thread, "stack.why_not"), "frozen"), "%s", json_string_at(thread, "stack.why_not"));
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(outside, a_child_frozen_by_cgroup_v2_is_frozen_not_deadlocked)
{
    expect_frozen(false);
}

/* v1's frozen tasks sleep in D (__refrigerator): not "uninterruptible", the freezer */
Test(outside, a_child_frozen_by_the_v1_freezer_is_frozen_not_in_d)
{
    expect_frozen(true);
}

/* The look-alike: the same cgroup frozen and thawed again, its child ticking. */
Test(outside, a_child_in_a_thawed_cgroup_is_not_hung)
{
    struct fixture fixture;
    start_frozen(&fixture, "thawed", false);
    pid_t parent = fixture.pids[0], child = fixture.pids[1];
    json_object *document = diagnose(parent, EXIT_NO_HANG);
    cr_assert_eq(json_count_findings(document, "frozen", 0), 0, "%s", findings_text(document));
    cr_assert_null(json_at(json_process(document, child), "freezer"));
    cr_assert_str_eq(json_string_at(json_thread(json_process(document, child), child), "stack.state"), "taken");
    json_object_put(document);
    fixture_stop(&fixture);
}

/* A cgroup control file that hangdoc may not read (cgroup.events made unreadable, hangdoc run as nobody on a
 * process of nobody's in that cgroup): a note names the file and the error, the process counts as not frozen, and
 * the rest of the report stands. */
Test(outside, an_unreadable_cgroup_file_is_a_note_and_the_rest_of_the_report)
{
    char hierarchy[512], cgroup[600], events[700], script[1600];
    if (!freezer_hierarchy(false, hierarchy, sizeof hierarchy))
        cr_skip_test("no writable cgroup2 hierarchy on this machine");
    snprintf(cgroup, sizeof cgroup, "%s/hangdoc-unreadable-%d", hierarchy, (int)getpid());
    cr_assert_eq(mkdir(cgroup, 0755), 0, "%s", cgroup);
    snprintf(events, sizeof events, "%s/cgroup.events", cgroup);
    snprintf(script, sizeof script,
             "echo $$ > '%s/cgroup.procs' && chmod 000 '%s' && exec /usr/bin/setpriv --reuid=65534 --regid=65534 "
             "--clear-groups /bin/sh -c 'echo ready $$ >&3; exec 3>&-; exec sleep 600'",
             cgroup, events);
    struct fixture fixture;
    fixture_start_command(&fixture, "/bin/sh", (const char *[]){ "sh", "-c", script, NULL }, 10000);
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)fixture.pids[0]);
    struct run_result result;
    hangdoc_run_as(&result, 65534, (const char *const[]){ "--json", "-n", "2", "-i", "50ms", pid_text, NULL });
    cr_assert_eq(result.exit_status, EXIT_NO_HANG, "%s", result.err);
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document);
    cr_assert_not_null(json_process(document, fixture.pids[0]), "the rest of the report");
    cr_assert_null(json_at(json_process(document, fixture.pids[0]), "freezer"));
    json_object *notes = json_at(document, "notes");
    bool noted = false;
    for (size_t i = 0; notes && i < json_object_array_length(notes); i++) {
        const char *text = json_string_at(json_object_array_get_idx(notes, i), "text");
        noted |= text && strstr(text, "cgroup freezer: ") && strstr(text, "/cgroup.events unreadable (Permission denied)");
    }
    cr_assert(noted, "a note names the file: %s", json_object_to_json_string(notes));
    json_object_put(document);
    run_result_free(&result);
    fixture_stop(&fixture);
    for (int tries = 0; tries < 200 && rmdir(cgroup) != 0; tries++)
        usleep(10000);
}

/* ---- timers only the process knows --------------------------------------------------------------------------- */

static json_object *graph_node(json_object *document, pid_t tid)
{
    json_object *nodes = json_at(document, "graph.nodes");
    for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
        json_object *node = json_object_array_get_idx(nodes, i);
        if (json_int_at(node, "tid", -1) == tid)
            return node;
    }
    cr_assert_fail("no graph node for thread %d", (int)tid);
    return NULL;
}

/* Is `signal` among the signals that end the node's wait? (A sanitized build catches SIGBUS, SIGFPE and SIGSEGV
 * too, which end a self-pipe's wait as any caught signal does.) */
static bool ends_on(json_object *node, const char *signal)
{
    json_object *signals = json_at(node, "ends_on_signals");
    for (size_t i = 0; signals && i < json_object_array_length(signals); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(signals, i)), signal) == 0)
            return true;
    return false;
}

static void start_self_timer(struct fixture *fixture, const char *mode)
{
    fixture_start_command(fixture, fixture_path("self_timer"), (const char *[]){ "self_timer", mode, NULL }, 10000);
    usleep(200000); /* into its wait */
}

/* A heartbeat: setitimer() every 5 s, whose SIGALRM handler writes the self-pipe the only thread polls. Nothing in
 * /proc shows the timer, and in a second of sampling it may not fire: a timed wait, never a deadlock. */
Test(outside, a_heartbeat_whose_sigalrm_handler_writes_its_self_pipe_is_not_hung)
{
    struct fixture fixture;
    start_self_timer(&fixture, "heartbeat");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose(pid, EXIT_NO_HANG);
    cr_assert_not(json_bool_at(document, "verdict.hung"));
    json_object *node = graph_node(document, pid);
    cr_assert_str_eq(json_string_at(node, "wake"), "timed wait");
    cr_assert(ends_on(node, "SIGALRM"), "%s", json_object_to_json_string(node));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* alarm(60), then pause(): how sleep() was written */
Test(outside, an_alarm_then_pause_is_a_timed_wait)
{
    struct fixture fixture;
    start_self_timer(&fixture, "alarm");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose(pid, EXIT_NO_HANG);
    cr_assert_str_eq(json_string_at(graph_node(document, pid), "wake"), "timed wait");
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The hang beside them: the same poll of a pipe only its own process holds, with no handler to write it. */
Test(outside, a_self_pipe_no_handler_writes_is_asleep_forever)
{
    struct fixture fixture;
    start_self_timer(&fixture, "deaf");
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose(pid, EXIT_HANG);
    cr_assert(json_bool_at(document, "verdict.hung"));
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "deadlock");
    cr_assert_eq(json_int_at(document, "verdict.tid", -1), pid);
    json_object *node = graph_node(document, pid);
    cr_assert_str_eq(json_string_at(node, "wake"), "asleep forever");
    cr_assert_not(ends_on(node, "SIGALRM"), "%s", json_object_to_json_string(node));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ---- a signal handler that re-enters a lock ------------------------------------------------------------------ */

static void start_reentry(struct fixture *fixture, const char *mode)
{
    fixture_start_command(fixture, fixture_path("signal_reentry"), (const char *[]){ "signal_reentry", mode, NULL },
                          15000);
}

/* The handler's frames, the kernel's trampoline with the signal, the interrupted frames: the stack says it. */
static void expect_trampoline(json_object *document, pid_t tid, const char *signal)
{
    json_object *frames = json_at(json_thread(json_process(document, tid), tid), "frames");
    size_t trampolines = 0;
    for (size_t f = 0; frames && f < json_object_array_length(frames); f++) {
        json_object *frame = json_object_array_get_idx(frames, f);
        if (!json_bool_at(frame, "signal_frame"))
            continue;
        trampolines++;
        cr_assert_gt(f, 0, "the handler's frames come before the trampoline");
        cr_assert_lt(f + 1, json_object_array_length(frames), "the interrupted frames after it");
        cr_assert_str_eq(json_string_at(frame, "signal"), signal);
    }
    cr_assert_eq(trampolines, 1, "one signal trampoline in %s", json_object_to_json_string(frames));
}

/* localtime() in a SIGALRM handler while the main loop is inside localtime(): glibc's time zone lock records no
 * owner, so the evidence is the function entered on both sides of the trampoline. Without debug symbols too (the
 * stripped libc's unnamed __tz_convert is reached through localtime). */
static void expect_localtime_reentry(bool debug_files)
{
    struct fixture fixture;
    start_reentry(&fixture, "localtime");
    pid_t child = fixture.pids[0];
    if (!debug_files)
        setenv("HANGDOC_DEBUG_FILES", "0", 1);
    json_object *document = diagnose(child, EXIT_HANG);
    unsetenv("HANGDOC_DEBUG_FILES");
    json_object *finding = json_only_finding(document, "signal-reentry", child);
    cr_assert_eq(json_int_at(finding, "tid", -1), child);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely", "the lock records no owner");
    cr_assert_str_eq(json_string_at(finding, "evidence.signal"), "SIGALRM");
    cr_assert(strncmp(json_string_at(finding, "evidence.handler"), "on_alarm_localtime ", 19) == 0, "%s",
              json_string_at(finding, "evidence.handler"));
    const char *reentered = json_string_at(finding, "evidence.reentered");
    cr_assert(reentered && (strstr(reentered, "localtime") || strstr(reentered, "__tz_convert")) &&
                  strstr(reentered, "(libc.so.6)"),
              "%s", reentered);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "signal-reentry");
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "deadlock");
    cr_assert_eq(json_count_findings(document, "no-waker", 0), 0, "%s", findings_text(document));
    expect_trampoline(document, child, "SIGALRM");
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(outside, localtime_in_a_sigalrm_handler_deadlocks_on_the_interrupted_localtime)
{
    expect_localtime_reentry(true);
}

Test(outside, localtime_reentry_is_named_without_debug_symbols)
{
    expect_localtime_reentry(false);
}

/* The handler logs while the interrupted code holds the log mutex: its owner is the thread itself (certain), and
 * it is not called a lock taken twice. */
Test(outside, a_handler_that_locks_the_mutex_its_interrupted_code_holds_is_signal_reentry)
{
    struct fixture fixture;
    start_reentry(&fixture, "mutex");
    pid_t child = fixture.pids[0];
    json_object *document = diagnose(child, EXIT_HANG);
    json_object *finding = json_only_finding(document, "signal-reentry", child);
    expect_only_findings(document, (const char *const[]){ "signal-reentry", NULL });
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    cr_assert_str_eq(json_string_at(finding, "evidence.signal"), "SIGALRM");
    cr_assert(strncmp(json_string_at(finding, "evidence.handler"), "on_alarm_log ", 13) == 0 ||
                  strncmp(json_string_at(finding, "evidence.handler"), "log_line ", 9) == 0,
              "%s", json_string_at(finding, "evidence.handler"));
    cr_assert(strncmp(json_string_at(finding, "evidence.interrupted"), "run_mutex ", 10) == 0, "%s",
              json_string_at(finding, "evidence.interrupted"));
    char owner[48];
    snprintf(owner, sizeof owner, "%d (the thread itself)", (int)child);
    cr_assert_str_eq(json_string_at(finding, "evidence.owner_tid"), owner);
    expect_trampoline(document, child, "SIGALRM");
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The look-alike: a handler waits for a mutex another thread holds and will let go. */
Test(outside, a_handler_waiting_for_a_lock_another_live_thread_holds_is_not_hung)
{
    struct fixture fixture;
    start_reentry(&fixture, "elsewhere");
    pid_t child = fixture.pids[0], holder = fixture.pids[1];
    json_object *document = diagnose(child, EXIT_NO_HANG);
    cr_assert_eq(json_count_findings(document, "signal-reentry", 0), 0, "%s", findings_text(document));
    cr_assert_eq(json_int_at(json_thread(json_process(document, child), child), "wait.owner_tid", -1), holder);
    expect_trampoline(document, child, "SIGALRM");
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ---- pseudo-terminals ---------------------------------------------------------------------------------------- */

static void start_pexpect(struct fixture *fixture, const char *mode)
{
    char script[4096];
    snprintf(script, sizeof script, "%s/tests/scenarios/pexpect_pty.py", getenv("HANGDOC_SOURCE_ROOT"));
    fixture_start_command(fixture, "/usr/bin/python3", (const char *[]){ "/usr/bin/python3", script, mode, NULL },
                          60000);
    usleep(300000); /* the parent into its wait */
}

/* pexpect's spawn.wait() without reading: `yes` fills its terminal and blocks writing, and the only reader of the
 * pty's master is the parent, which waits for `yes` to exit: a cycle through the pty. */
Test(outside, pexpect_wait_on_a_child_that_fills_its_pty_is_a_cycle_through_the_pty)
{
    struct fixture fixture;
    start_pexpect(&fixture, "wait");
    pid_t parent = fixture.pids[0], child = fixture.pids[1];
    json_object *document = diagnose(parent, EXIT_HANG);
    json_object *finding = json_only_finding(document, "full-pipe", child);
    cr_assert_eq(json_int_at(finding, "tid", -1), child);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    const char *pty = json_string_at(finding, "evidence.pty");
    cr_assert(pty && strncmp(pty, "fd 1 /dev/pts/", 14) == 0 && strstr(pty, "(the slave "), "%s", pty);
    char master[64];
    snprintf(master, sizeof master, " of process %d '", (int)parent);
    cr_assert(strstr(json_string_at(finding, "evidence.pty_master"), master), "%s",
              json_string_at(finding, "evidence.pty_master"));
    char reader[96];
    snprintf(reader, sizeof reader, "thread %d '", (int)parent);
    cr_assert(strncmp(json_string_at(finding, "evidence.reader"), reader, strlen(reader)) == 0, "%s",
              json_string_at(finding, "evidence.reader"));
    cr_assert(strstr(json_string_at(finding, "evidence.reader"), "wait4"), "the reader waits in wait4 instead");
    cr_assert_eq(json_count_remedies(finding, "pexpect.EOF"), 1);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "full-pipe");
    cr_assert_eq(json_int_at(document, "verdict.pid", -1), child);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The look-alike: the parent reads the master (expect(EOF)) while `yes` writes. */
Test(outside, pexpect_reading_its_childs_pty_is_not_hung)
{
    struct fixture fixture;
    start_pexpect(&fixture, "expect");
    pid_t parent = fixture.pids[0];
    json_object *document = diagnose(parent, EXIT_NO_HANG);
    cr_assert_eq(json_count_findings(document, "full-pipe", 0), 0, "%s", findings_text(document));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ---- stopped by job control ---------------------------------------------------------------------------------- */

/* A shell's shape on a real terminal: its background job read the terminal and the kernel stopped it with SIGTTIN,
 * while the session leader waits for it: "stopped", naming the signal, what it means, the waiter and the fix. */
static void expect_job_stopped(const char *mode, const char *signal, const char *remedy)
{
    struct fixture fixture;
    fixture_start_command(&fixture, fixture_path("job_stopped"), (const char *[]){ "job_stopped", mode, NULL }, 10000);
    pid_t leader = fixture.pids[0], job = fixture.pids[1];
    json_object *document = diagnose(leader, EXIT_HANG);
    json_object *finding = json_only_finding(document, "stopped", job);
    cr_assert_str_eq(json_string_at(finding, "evidence.state"), "T");
    cr_assert_str_eq(json_string_at(finding, "evidence.signal"), signal);
    char waiter[96];
    snprintf(waiter, sizeof waiter, "thread %d 'session' of process %d waits for it through wait4", (int)leader,
             (int)leader);
    cr_assert_str_eq(json_string_at(finding, "evidence.waiter"), waiter);
    char resume[32];
    snprintf(resume, sizeof resume, "kill -CONT %d", (int)job);
    cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(json_at(finding, "remedies"), 0)), resume);
    cr_assert_eq(json_count_remedies(finding, remedy), 1, "%s", json_object_to_json_string(finding));
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "stopped");
    cr_assert_eq(json_int_at(document, "verdict.pid", -1), job);
    cr_assert_null(json_at(json_process(document, job), "tracer_cmdline"));
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(outside, a_background_job_that_read_its_terminal_is_stopped_by_sigttin)
{
    expect_job_stopped("ttin", "SIGTTIN", "(fg)");
}

Test(outside, a_job_suspended_as_by_ctrl_z_is_stopped_by_sigtstp)
{
    expect_job_stopped("tstp", "SIGTSTP", "fg (or bg)");
}

/* The look-alike: the job stopped so and was continued (bg); it works on while the leader waits for it. */
Test(outside, a_stopped_job_that_was_continued_is_not_hung)
{
    struct fixture fixture;
    fixture_start_command(&fixture, fixture_path("job_stopped"), (const char *[]){ "job_stopped", "continued", NULL },
                          10000);
    pid_t leader = fixture.pids[0];
    json_object *document = diagnose(leader, EXIT_NO_HANG);
    cr_assert_eq(json_count_findings(document, "stopped", 0), 0, "%s", findings_text(document));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ---- stuck in one call --------------------------------------------------------------------------------------- */

/* A worker loops in one function without a system call while the main thread joins it: spinning, about the
 * worker, naming the function and the main thread as its waiter (through the join). (A Python regular expression
 * that backtracks for ever is the same hang, told by its Python frame: tests/test_python_hangs.c.) */
Test(outside, a_loop_that_never_ends_holds_up_the_thread_that_joins_it)
{
    struct fixture fixture;
    fixture_start(&fixture, "stuck_call");
    pid_t pid = fixture.pids[0], worker = fixture.pids[1];
    json_object *document = diagnose(pid, EXIT_HANG);
    json_object *finding = json_only_finding(document, "spinning", pid);
    cr_assert_eq(json_int_at(finding, "tid", -1), worker, "%s", findings_text(document));
    cr_assert_str_eq(json_string_at(finding, "confidence"), "likely");
    cr_assert_str_eq(json_string_at(finding, "evidence.function"), "converge");
    char waiter[96];
    snprintf(waiter, sizeof waiter, "thread %d 'stuck_call' of process %d waits for it (", (int)pid, (int)pid);
    const char *named = json_string_at(finding, "evidence.waiter");
    cr_assert(named && strncmp(named, waiter, strlen(waiter)) == 0, "%s", json_object_to_json_string(finding));
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "busy-loop");
    cr_assert_eq(json_int_at(document, "verdict.tid", -1), worker);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The look-alike: as long a computation without a system call, but through four functions in turn: each sample
 * stops it in another, so it is not one place; not hung. */
Test(outside, a_native_computation_that_moves_on_is_not_hung)
{
    struct fixture fixture;
    fixture_start_command(&fixture, fixture_path("stuck_call"), (const char *[]){ "stuck_call", "moving", NULL },
                          10000);
    json_object *document = diagnose(fixture.pids[0], EXIT_NO_HANG);
    cr_assert_eq(json_count_findings(document, "spinning", 0), 0, "%s", findings_text(document));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* ---- FUSE ------------------------------------------------------------------------------------------------------ */

#define FUSE_MOUNT_POINT "/mnt/hangdoc-fuse"

/* A libfuse 3 daemon and its clients in a mount namespace of their own (tests/scenarios/fuse_daemon.c). */
static void start_fuse(struct fixture *fixture, const char *mode)
{
    const char *path = fixture_path("fuse_daemon");
    if (access(path, X_OK) != 0)
        cr_skip_test("the FUSE fixture is not built (no libfuse3 where the suite was built)");
    if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0)
        cr_skip_test("mounting a FUSE file system needs root and /dev/fuse");
    fixture_start_command(fixture, path, (const char *[]){ "fuse_daemon", mode, NULL }, 15000);
}

static size_t hang_count(json_object *document)
{
    json_object *hangs = json_at(document, "verdict.hangs");
    return hangs ? json_object_array_length(hangs) : 0;
}

static bool has_edge_of_kind(json_object *document, pid_t from, pid_t to, const char *kind)
{
    json_object *edges = json_at(document, "graph.edges");
    for (size_t i = 0; edges && i < json_object_array_length(edges); i++) {
        json_object *edge = json_object_array_get_idx(edges, i);
        if (json_int_at(edge, "from", -1) == from && json_int_at(edge, "to", -1) == to &&
            strcmp(json_string_at(edge, "kind"), kind) == 0)
            return true;
    }
    return false;
}

/* fusectl's count of the requests waiting, where hangdoc's mount namespace has fusectl mounted (systemd mounts
 * it); else a note that says it could not be read, and no count. */
static void expect_waiting_or_its_note(json_object *document, json_object *finding, pid_t daemon)
{
    struct stat connections;
    char path[96];
    snprintf(path, sizeof path, "/sys/fs/fuse/connections/%s", json_string_at(finding, "evidence.connection"));
    *strchr(path + strlen("/sys/fs/fuse/connections/"), ' ') = '\0';
    if (stat(path, &connections) == 0) {
        cr_assert_str_eq(json_string_at(finding, "evidence.waiting"), "1");
        return;
    }
    cr_assert_null(json_at(finding, "evidence.waiting"), "no count without fusectl");
    json_object *notes = json_at(document, "notes");
    bool noted = false;
    for (size_t i = 0; notes && i < json_object_array_length(notes); i++) {
        const char *text = json_string_at(json_object_array_get_idx(notes, i), "text");
        noted |= text && strstr(text, "/waiting unreadable") && strstr(text, "fusectl is not mounted");
    }
    cr_assert(noted, "a note says why the count is missing (daemon %d)", (int)daemon);
}

/* A thread's FUSE call as the report has it: on the fixture's mount, for `daemon`; its stack read without a stop. */
static void expect_fuse_client(json_object *document, pid_t pid, pid_t tid, pid_t daemon)
{
    json_object *thread = json_thread(json_process(document, pid), tid);
    cr_assert_not_null(json_at(thread, "fuse"), "thread %d is in a FUSE call", (int)tid);
    cr_assert_str_eq(json_string_at(thread, "fuse.mount_point"), FUSE_MOUNT_POINT);
    cr_assert_eq(json_int_at(thread, "fuse.daemon_pid", -1), daemon);
    cr_assert_str_eq(json_string_at(thread, "fuse.source"), "hangdoc-fixture");
    cr_assert_gt(json_int_at(thread, "fuse.connection", 0), 0);
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "taken");
    cr_assert(json_bool_at(thread, "stack.unstopped"), "a FUSE client is never stopped for its stack");
}

/* A single-threaded daemon whose getattr stats a file of its own mount: its one thread waits for a directory lock
 * that the client's lookup holds while it waits for the daemon. fuse-deadlock about the daemon's thread, naming the
 * mount, the call, that nobody reads /dev/fuse, and the client; no "uninterruptible", no unexplained knot. The
 * harness checks that the client is still in S after the diagnosis (a stop would have put it in D for good). */
Test(outside, a_fuse_daemon_that_stats_its_own_mount_deadlocks_through_the_kernel)
{
    struct fixture fixture;
    start_fuse(&fixture, "self");
    pid_t daemon = fixture.pids[0], client = fixture.pids[1], worker = fixture.pids[2];
    json_object *document = diagnose(daemon, EXIT_HANG);
    json_object *finding = json_only_finding(document, "fuse-deadlock", daemon);
    expect_only_findings(document, (const char *const[]){ "fuse-deadlock", "idle", NULL });
    cr_assert_eq(json_int_at(finding, "tid", -1), worker);
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    cr_assert_str_eq(json_string_at(finding, "evidence.mount_point"), FUSE_MOUNT_POINT);
    cr_assert_str_eq(json_string_at(finding, "evidence.source"), "hangdoc-fixture");
    cr_assert(strncmp(json_string_at(finding, "evidence.call"), "newfstatat by thread", 20) == 0, "%s",
              json_string_at(finding, "evidence.call"));
    cr_assert(strstr(json_string_at(finding, "evidence.call"), "the path it names"), "told from the path argument");
    cr_assert_str_eq(json_string_at(finding, "evidence.readers"), "0 threads reading /dev/fuse");
    expect_waiting_or_its_note(document, finding, daemon);
    char client_words[64];
    snprintf(client_words, sizeof client_words, "thread %d '", (int)client);
    cr_assert(strncmp(json_string_at(finding, "evidence.client"), client_words, strlen(client_words)) == 0, "%s",
              json_string_at(finding, "evidence.client"));
    cr_assert_eq(json_count_remedies(finding, "/abort"), 1);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "fuse-deadlock");
    cr_assert_eq(hang_count(document), 1, "the client's wait is the daemon's hang");
    expect_fuse_client(document, client, client, daemon);
    expect_fuse_client(document, daemon, worker, daemon);
    cr_assert(json_bool_at(json_process(document, daemon), "fuse_daemon"));
    cr_assert(has_edge_of_kind(document, client, worker, "fuse"));
    cr_assert(json_bool_at(graph_node(document, client), "asleep_forever"));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* Two daemon threads in a lock-order deadlock, each holding a client's read: lock-cycle about the daemon, the
 * clients' waits on it (edges "fuse" to the two workers, not to libfuse's idle reader or its loop's thread), one
 * hang, and no client called "uninterruptible". */
Test(outside, fuse_clients_wait_for_the_daemon_workers_in_a_lock_cycle)
{
    struct fixture fixture;
    start_fuse(&fixture, "cycle");
    pid_t daemon = fixture.pids[0], client_a = fixture.pids[1], client_b = fixture.pids[2];
    pid_t first = fixture.pids[3], second = fixture.pids[4];
    json_object *document = diagnose(daemon, EXIT_HANG);
    json_object *finding = json_only_finding(document, "lock-cycle", daemon);
    expect_only_findings(document, (const char *const[]){ "lock-cycle", "idle", NULL });
    pid_t subject = (pid_t)json_int_at(finding, "tid", -1);
    cr_assert(subject == first || subject == second, "the cycle's thread %d", (int)subject);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "lock-cycle");
    cr_assert_eq(hang_count(document), 1, "the clients' waits are the daemon's hang");
    for (pid_t client = client_a; client <= client_b; client = client == client_a ? client_b : client_b + 1) {
        expect_fuse_client(document, client, client, daemon);
        cr_assert(has_edge_of_kind(document, client, first, "fuse"));
        cr_assert(has_edge_of_kind(document, client, second, "fuse"));
        cr_assert(!has_edge_of_kind(document, client, daemon, "fuse"), "libfuse's loop thread answers no request");
        cr_assert(json_bool_at(graph_node(document, client), "asleep_forever"));
    }
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The look-alike: a daemon that answers every read after 200 ms, a client reading again and again: not hung, and
 * neither stopped (its request pending) nor in D afterwards. */
Test(outside, a_slow_but_steady_fuse_daemon_is_not_hung)
{
    struct fixture fixture;
    start_fuse(&fixture, "slow");
    pid_t daemon = fixture.pids[0];
    json_object *document = diagnose(daemon, EXIT_NO_HANG);
    cr_assert_eq(json_count_findings(document, "fuse-deadlock", 0), 0, "%s", findings_text(document));
    cr_assert_eq(json_count_findings(document, "uninterruptible", 0), 0, "%s", findings_text(document));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* A daemon with nothing pending is stopped for its stacks as any process is: only a FUSE call or a request waiting
 * keeps hangdoc from stopping it. */
Test(outside, an_idle_fuse_daemon_is_not_hung_and_is_stopped_as_usual)
{
    struct fixture fixture;
    start_fuse(&fixture, "idle");
    pid_t daemon = fixture.pids[0];
    json_object *document = diagnose(daemon, EXIT_NO_HANG);
    json_object *process = json_process(document, daemon);
    cr_assert(json_bool_at(process, "fuse_daemon"));
    json_object *thread = json_thread(process, daemon);
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "taken");
    cr_assert(!json_bool_at(thread, "stack.unstopped"), "stopped as usual");
    cr_assert_null(json_at(thread, "fuse"));
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The client diagnosed alone: its daemon is outside the tree (its parent), and the client, forked from it, holds
 * /dev/fuse too. The daemon is still told right (the holder the client was forked from), and a wait for a process
 * outside the tree is a wait on the outside: not hung, the daemon named on the client's thread. */
Test(outside, a_fuse_client_diagnosed_alone_names_its_daemon_outside_the_tree)
{
    struct fixture fixture;
    start_fuse(&fixture, "self");
    pid_t daemon = fixture.pids[0], client = fixture.pids[1];
    json_object *document = diagnose(client, EXIT_NO_HANG);
    cr_assert_eq(json_count_findings(document, "fuse-deadlock", 0), 0, "%s", findings_text(document));
    expect_fuse_client(document, client, client, daemon);
    json_object *thread = json_thread(json_process(document, client), client);
    cr_assert(strstr(json_string_at(thread, "fuse.daemon_found_by"), "forked from"), "%s",
              json_string_at(thread, "fuse.daemon_found_by"));
    cr_assert_str_eq(json_string_at(graph_node(document, client), "wake"), "waits on the outside");
    json_object_put(document);
    fixture_stop(&fixture);
}
