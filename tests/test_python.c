/* The Python stack reader (probe/python.c) on real interpreters: tests/scenarios/py_where.py parks threads at
 * lines it marks "# where: NAME", and each CPython found at test time (Debian's /usr/bin/python3, and every pyenv
 * 3.10, 3.11, 3.12 and 3.13 under $PYENV_ROOT, `pyenv root` or ~/.pyenv) runs it while hangdoc reads it: each
 * thread's innermost frame and its callers (function, file, line), and where each stands with the GIL. A version
 * that is not installed is skipped, saying so. Then the cases around it: an interpreter too old to read (one note),
 * a process that is no Python at all (nothing), and the decoders over odd inputs.
 */
#include "harness.h"
#include "python_harness.h"

#include "python_decode.h"
#include "python_offsets.h"

#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCRIPT "py_where.py"
#define READY_TIMEOUT_MS 30000

TestSuite(python, .fini = fixture_stop_all, .timeout = 300);

static void start(struct fixture *fixture, const char *python, const char *mode)
{
    char script[4096];
    snprintf(script, sizeof script, "%s/tests/scenarios/%s", getenv("HANGDOC_SOURCE_ROOT"), SCRIPT);
    cr_log_info("%s %s %s", python, SCRIPT, mode);
    fixture_start_command(fixture, python, (const char *[]){ python, script, mode, NULL }, READY_TIMEOUT_MS);
}

/* The line of scenarios/py_where.py marked "# where: NAME". */
static long marked(const char *name)
{
    return python_marked_line(SCRIPT, name);
}

/* ---- where the threads are ------------------------------------------------------------------------------------- */

/* The text report of the same: the Python frames in the stacks section, each at its line, and the innermost one
 * with the GIL state on the thread lines of the tree (-v lists every thread). */
static void expect_where_in_text(pid_t pid, unsigned minor)
{
    char pid_text[16], path[4096], expected[4300];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    snprintf(path, sizeof path, "%s/tests/scenarios/%s", getenv("HANGDOC_SOURCE_ROOT"), SCRIPT);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "-v", "--samples", "2", "--interval", "100ms", pid_text, NULL });
    static const struct {
        const char *function, *mark;
    } frames[] = { { "inner", "inner" }, { "outer", "outer" }, { "Sleeper.run", "sleeper" },
                   { "take_lock", "locker" }, { "report_when_parked", "reporter" } };
    for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++) {
        snprintf(expected, sizeof expected, " py %s (%s:%ld)\n", python_function_name(frames[f].function, minor), path,
                 marked(frames[f].mark));
        cr_assert(strstr(result.out, expected), "the stacks show '%s':\n%s", expected, result.out);
    }
    snprintf(expected, sizeof expected, "python: %s (%s:%ld), GIL released", python_function_name("Sleeper.run", minor),
             SCRIPT, marked("sleeper"));
    cr_assert(strstr(result.out, expected), "the sleeper's thread line shows '%s':\n%s", expected, result.out);
    cr_assert(strstr(result.out, "python 3."), "the process line names the interpreter:\n%s", result.out);
    run_result_free(&result);
}

/* Mode "where": ready <pid> <main> <sleeper> <locker> <reporter>; every thread released the GIL, none holds it. */
static void expect_where(const char *python, unsigned minor)
{
    struct fixture fixture;
    start(&fixture, python, "where");
    pid_t pid = fixture.pids[0], main_thread = fixture.pids[1], sleeper = fixture.pids[2], locker = fixture.pids[3];
    pid_t reporter = fixture.pids[4];
    json_object *document = hangdoc_json(pid, NULL);
    expect_python_version(document, pid, &minor);

    json_object *frames = python_frames_of(document, pid, main_thread);
    cr_assert_eq(json_object_array_length(frames), 6, "%s", json_object_to_json_string(frames));
    expect_threading_frame(frames, 0, "Condition.wait", "waiter.acquire()", minor);
    expect_threading_frame(frames, 1, "Event.wait", "self._cond.wait(", minor);
    expect_python_frame(frames, 2, "inner", SCRIPT, marked("inner"), minor);
    expect_python_frame(frames, 3, "outer", SCRIPT, marked("outer"), minor);
    expect_python_frame(frames, 4, "where", SCRIPT, marked("main"), minor);
    expect_python_frame(frames, 5, "<module>", SCRIPT, marked("module"), minor);

    frames = python_frames_of(document, pid, sleeper);
    expect_python_frame(frames, 0, "Sleeper.run", SCRIPT, marked("sleeper"), minor);
    expect_threading_frame(frames, 1, "Thread._bootstrap_inner", "self.run", minor);
    expect_python_frame(frames, 2, "Thread._bootstrap", "threading.py", 0, minor);
    cr_assert_eq(json_object_array_length(frames), 3, "%s", json_object_to_json_string(frames));

    frames = python_frames_of(document, pid, locker);
    expect_python_frame(frames, 0, "take_lock", SCRIPT, marked("locker"), minor);
    expect_python_frame(frames, 1, "Thread.run", "threading.py", 0, minor);
    frames = python_frames_of(document, pid, reporter);
    expect_python_frame(frames, 0, "report_when_parked", SCRIPT, marked("reporter"), minor);

    json_object *process = json_process(document, pid);
    cr_assert_not(json_bool_at(process, "python.gil_locked"), "nobody holds the GIL");
    cr_assert_eq(json_int_at(process, "python.gil_holder", -1), -1, "gil_holder is null");
    pid_t tids[] = { main_thread, sleeper, locker, reporter };
    for (size_t t = 0; t < sizeof tids / sizeof tids[0]; t++)
        expect_gil(document, pid, tids[t], "released");
    json_object_put(document);
    expect_where_in_text(pid, minor);
    fixture_stop(&fixture);
}

Test(python, stacks_of_the_system_python)
{
    python_each_version(0, expect_where);
}

Test(python, stacks_of_cpython_3_10)
{
    python_each_version(10, expect_where);
}

Test(python, stacks_of_cpython_3_11)
{
    python_each_version(11, expect_where);
}

Test(python, stacks_of_cpython_3_12)
{
    python_each_version(12, expect_where);
}

Test(python, stacks_of_cpython_3_13)
{
    python_each_version(13, expect_where);
}

Test(python, stacks_of_cpython_3_14)
{
    python_each_version(14, expect_where);
}

/* ---- who holds the GIL ------------------------------------------------------------------------------------------ */

/* Whether thread `tid` of `pid` sleeps in a futex (the spinner, once it waits for the GIL the hog keeps). */
static bool in_futex(pid_t pid, pid_t tid)
{
    char path[96], text[128] = "";
    snprintf(path, sizeof path, "/proc/%d/task/%d/wchan", (int)pid, (int)tid);
    FILE *file = fopen(path, "re");
    if (!file)
        return false;
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = '\0';
    return strstr(text, "futex") != NULL;
}

/* Mode "gil": ready <pid> <main> <hog> <spinner>. The hog holds the GIL inside a C call; the spinner waits for it
 * on the GIL's condition variable, in timed waits of 5 ms (the switch interval): a sample that catches it between
 * two is taken again. */
static void expect_gil_states(const char *python, unsigned minor)
{
    struct fixture fixture;
    start(&fixture, python, "gil");
    pid_t pid = fixture.pids[0], main_thread = fixture.pids[1], hog = fixture.pids[2], spinner = fixture.pids[3];
    for (int waited_ms = 0; !in_futex(pid, spinner) && waited_ms < 10000; waited_ms += 10)
        usleep(10000);
    json_object *document = NULL;
    for (int attempt = 0; attempt < 3; attempt++) {
        if (document)
            json_object_put(document);
        document = hangdoc_json(pid, NULL);
        const char *gil = json_string_at(json_thread(json_process(document, pid), spinner), "gil");
        if (gil && strcmp(gil, "waits") == 0)
            break;
    }
    expect_python_version(document, pid, &minor);
    json_object *process = json_process(document, pid);
    cr_assert(json_bool_at(process, "python.gil_locked"), "the hog holds the GIL");
    cr_assert_eq(json_int_at(process, "python.gil_holder", -1), hog);
    expect_gil(document, pid, hog, "holds");
    expect_gil(document, pid, spinner, "waits");
    expect_gil(document, pid, main_thread, "released");
    expect_python_frame(python_frames_of(document, pid, hog), 0, "hold_the_gil", SCRIPT, marked("hog"), minor);
    expect_python_frame(python_frames_of(document, pid, spinner), 0, "spin", SCRIPT, marked("spinner"), minor);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python, gil_holder_and_waiter_of_the_system_python)
{
    python_each_version(0, expect_gil_states);
}

Test(python, gil_holder_and_waiter_of_cpython_3_10)
{
    python_each_version(10, expect_gil_states);
}

Test(python, gil_holder_and_waiter_of_cpython_3_11)
{
    python_each_version(11, expect_gil_states);
}

Test(python, gil_holder_and_waiter_of_cpython_3_12)
{
    python_each_version(12, expect_gil_states);
}

Test(python, gil_holder_and_waiter_of_cpython_3_13)
{
    python_each_version(13, expect_gil_states);
}

Test(python, gil_holder_and_waiter_of_cpython_3_14)
{
    python_each_version(14, expect_gil_states);
}

/* ---- an idle pool -------------------------------------------------------------------------------------------- */

/* Mode "pool": ready <pid> <main> <4 workers>; an idle ThreadPoolExecutor is not hung, and its workers say so. */
static void expect_idle_pool(const char *python, unsigned minor)
{
    struct fixture fixture;
    start(&fixture, python, "pool");
    pid_t pid = fixture.pids[0], main_thread = fixture.pids[1];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    expect_python_version(document, pid, &minor);
    cr_assert_eq(status, 0, "an idle pool is not hung: exit %d", status);
    cr_assert_not(json_bool_at(document, "verdict.hung"));
    expect_python_frame(python_frames_of(document, pid, main_thread), 0, "pool", SCRIPT, marked("between-batches"),
                        minor);
    for (size_t w = 2; w < fixture.npids; w++) {
        json_object *thread = json_thread(json_process(document, pid), fixture.pids[w]);
        cr_assert_str_eq(json_string_at(thread, "role"), "ThreadPoolExecutor worker");
        expect_python_frame(json_at(thread, "python_frames"), 0, "_worker", "thread.py", 0, minor);
        expect_gil(document, pid, fixture.pids[w], "released");
    }
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python, idle_pool_of_the_system_python)
{
    python_each_version(0, expect_idle_pool);
}

Test(python, idle_pool_of_cpython_3_10)
{
    python_each_version(10, expect_idle_pool);
}

Test(python, idle_pool_of_cpython_3_11)
{
    python_each_version(11, expect_idle_pool);
}

Test(python, idle_pool_of_cpython_3_12)
{
    python_each_version(12, expect_idle_pool);
}

Test(python, idle_pool_of_cpython_3_13)
{
    python_each_version(13, expect_idle_pool);
}

Test(python, idle_pool_of_cpython_3_14)
{
    python_each_version(14, expect_idle_pool);
}

/* ---- a process that changes while it is read ------------------------------------------------------------------ */

/* Mode "churn": ready <pid> <main> <deep>. Threads start and end while hangdoc reads the process, and one thread is
 * deeper than the reader goes: every run ends with a valid report, the deep stack is cut short at 512 frames with
 * its innermost frames kept. */
static void expect_churn_survived(const char *python, unsigned minor)
{
    struct fixture fixture;
    start(&fixture, python, "churn");
    pid_t pid = fixture.pids[0], deep = fixture.pids[2];
    for (int run = 0; run < 3; run++) {
        char pid_text[16];
        snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
        struct run_result result;
        hangdoc_run_once(&result, (const char *[]){ "--json", "--samples", "2", "--interval", "50ms", pid_text,
                                                    NULL });
        cr_assert(result.exit_status == 0 || result.exit_status == 1, "exit %d: %s", result.exit_status,
                  result.err);
        json_validate(result.out);
        json_object *document = json_tokener_parse(result.out);
        cr_assert_not_null(document);
        expect_python_version(document, pid, &minor);
        json_object *thread = json_thread(json_process(document, pid), deep);
        json_object *frames = json_at(thread, "python_frames");
        cr_assert_eq(json_object_array_length(frames), 512, "%zu frames", json_object_array_length(frames));
        cr_assert(json_bool_at(thread, "python_truncated"));
        expect_python_frame(frames, 0, "recurse", SCRIPT, marked("deep"), minor);
        json_object_put(document);
        run_result_free(&result);
    }
    fixture_stop(&fixture);
}

Test(python, a_changing_process_of_the_system_python)
{
    python_each_version(0, expect_churn_survived);
}

Test(python, a_changing_process_of_cpython_3_13)
{
    python_each_version(13, expect_churn_survived);
}

Test(python, a_changing_process_of_cpython_3_14)
{
    python_each_version(14, expect_churn_survived);
}

/* ---- the GIL read after the samples ------------------------------------------------------------------------------ */

/* Mode "contend": ready <pid> <main>. Threads pass the GIL around all the time. The GIL is read after the last
 * sample, so a thread the sample saw waiting for it may hold it by then: that must never become a thread waiting
 * for a GIL it holds itself, a "certain" lock-cycle in a healthy process (before the fix, 2 of 60 runs here; the
 * runs vary samples and interval to land at other moments). */
static void expect_no_deadlock_while_contending(const char *python, unsigned minor)
{
    (void)minor;
    struct fixture fixture;
    start(&fixture, python, "contend");
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)fixture.pids[0]);
    static const char *const samples[] = { "1", "2", "3" }, *const intervals[] = { "2ms", "5ms", "11ms" };
    for (int run = 0; run < 60; run++) {
        struct run_result result;
        hangdoc_run_once(&result, (const char *[]){ "--json", "--samples", samples[run % 3], "--interval",
                                                    intervals[run / 3 % 3], pid_text, NULL });
        json_object *document = json_tokener_parse(result.out);
        cr_assert_not_null(document, "run %d: exit %d: %s", run, result.exit_status, result.err);
        cr_assert_eq(json_count_findings(document, "lock-cycle", 0), 0, "run %d: a healthy process in a knot: %s",
                     run, json_object_to_json_string(json_at(document, "findings")));
        cr_assert_neq(result.exit_status, 2, "run %d", run);
        json_object_put(document);
        run_result_free(&result);
    }
    fixture_stop(&fixture);
}

Test(python, threads_passing_the_gil_around_are_never_a_gil_deadlock)
{
    python_each_version(0, expect_no_deadlock_while_contending);
}

/* ---- what is not read ------------------------------------------------------------------------------------------ */

/* CPython 3.9 is older than the layouts hangdoc knows: one note says so, no python object, no frames. */
Test(python, an_interpreter_too_old_gets_one_note)
{
    struct pythons found;
    python_pyenv_versions(9, &found);
    struct fixture fixture;
    start(&fixture, found.paths[0], "where");
    pid_t pid = fixture.pids[0];
    json_object *document = hangdoc_json(pid, NULL);
    json_object *process = json_process(document, pid);
    cr_assert_null(json_at(process, "python"));
    json_object *notes = json_at(document, "notes");
    size_t python_notes = 0;
    for (size_t n = 0; n < json_object_array_length(notes); n++) {
        json_object *note = json_object_array_get_idx(notes, n);
        const char *kind = json_string_at(note, "kind");
        if (kind && strcmp(kind, "python") == 0) {
            python_notes++;
            cr_assert_eq(json_int_at(note, "pid", -1), pid);
            cr_assert(strstr(json_string_at(note, "text"), "3.9"), "%s", json_string_at(note, "text"));
        }
    }
    cr_assert_eq(python_notes, 1, "one note: %s", json_object_to_json_string(notes));
    cr_assert_eq(json_object_array_length(python_frames_of(document, pid, fixture.pids[1])), 0);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* Process `pid` has no python object, no note of kind python, and no thread a GIL state or a Python frame. */
static void expect_no_python_view(json_object *document, pid_t pid)
{
    json_object *process = json_process(document, pid);
    cr_assert_null(json_at(process, "python"));
    cr_assert_not(has_python_note(document));
    json_object *threads = json_at(process, "threads");
    for (size_t t = 0; t < json_object_array_length(threads); t++) {
        json_object *thread = json_object_array_get_idx(threads, t);
        cr_assert_null(json_at(thread, "gil"));
        cr_assert_eq(json_object_array_length(json_at(thread, "python_frames")), 0);
    }
}

/* A C program: no python object, no note, no GIL state, no Python frames. */
/* Sub-interpreters (3.14's concurrent.interpreters) are not read: one note says so, and the main interpreter's view
 * stands. */
Test(python, sub_interpreters_get_a_note_of_their_own)
{
    char python[4200], script[4096];
    python_modern(14, python, sizeof python);
    snprintf(script, sizeof script, "%s/tests/scenarios/py_subinterpreter.py", getenv("HANGDOC_SOURCE_ROOT"));
    struct fixture fixture;
    fixture_start_command(&fixture, python, (const char *[]){ python, script, NULL }, READY_TIMEOUT_MS);
    unlink(python);
    pid_t pid = fixture.pids[0];
    json_object *document = hangdoc_json(pid, NULL);
    json_object *notes = json_at(document, "notes");
    size_t said = 0;
    for (size_t n = 0; notes && n < json_object_array_length(notes); n++) {
        json_object *note = json_object_array_get_idx(notes, n);
        said += strcmp(json_string_at(note, "kind"), "python") == 0 && json_int_at(note, "pid", -1) == pid &&
                strstr(json_string_at(note, "text"), "1 sub-interpreter besides the main one: only the main "
                                                     "interpreter's threads are read") != NULL;
    }
    cr_assert_eq(said, 1, "%s", json_object_to_json_string(notes));
    const char *version = json_string_at(json_process(document, pid), "python.version");
    cr_assert(version && strncmp(version, "3.14.", 5) == 0, "the main interpreter is read: %s",
              version ? version : "(none)");
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(python, a_process_that_is_not_python_gets_nothing)
{
    struct fixture fixture;
    fixture_start(&fixture, "idle_pool");
    pid_t pid = fixture.pids[0];
    json_object *document = hangdoc_json(pid, NULL);
    expect_no_python_view(document, pid);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* --no-python: the interpreter is left alone: no python object, no frames, no GIL states, no note. */
Test(python, no_python_reads_no_interpreter)
{
    struct fixture fixture;
    start(&fixture, SYSTEM_PYTHON, "where");
    pid_t pid = fixture.pids[0];
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "--samples", "2", "--interval", "100ms", "--no-python", pid_text,
                                           NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "%s", result.err);
    expect_no_python_view(document, pid);
    json_object_put(document);
    run_result_free(&result);
    fixture_stop(&fixture);
}

/* ---- the decoders ------------------------------------------------------------------------------------------------ */

/* 3.10 (PEP 626): (bytecode delta, line delta) pairs from co_firstlineno 10. */
Test(python, line_table_of_3_10)
{
    const uint8_t table[] = {
        4, 0,          /* [0, 4): line 10 */
        6, 1,          /* [4, 10): line 11 */
        0, 3,          /* covers nothing: the line moves to 14 */
        8, 0x80,       /* [10, 18): -128, no line (the running line stays 14) */
        2, 2,          /* [18, 20): line 16 */
        200,           /* half a pair: ignored */
    };
    cr_assert_eq(probe_python_line_310(table, sizeof table, 10, 0), 10);
    cr_assert_eq(probe_python_line_310(table, sizeof table, 10, 5), 11);
    cr_assert_eq(probe_python_line_310(table, sizeof table, 10, 10), 0, "no line");
    cr_assert_eq(probe_python_line_310(table, sizeof table, 10, 18), 16);
    cr_assert_eq(probe_python_line_310(table, sizeof table, 10, 20), 0, "past the table");
    cr_assert_eq(probe_python_line_310(table, sizeof table, 10, -1), 10, "not started: the first line");
    cr_assert_eq(probe_python_line_310(table, 0, 10, 0), 0, "empty");
}

/* 3.11+: one entry of each kind, lengths in code units of two bytes, from co_firstlineno 10. */
Test(python, location_table_of_3_11)
{
    const uint8_t table[] = {
        0x81, 0x12,             /* short form (kind 0), 2 units: [0, 4) line 10 */
        0xd8, 0x04, 0x09,       /* one-line form, kind 11: +1, 1 unit: [4, 6) line 11 */
        0xea, 0x03,             /* no columns (13), svarint -1, 3 units: [6, 12) line 10 */
        0xf0, 0x48, 0x03, 0x00, 0x01, 0x02, /* long form (14), svarint +100, end line, columns: [12, 14) 110 */
        0xf8,                   /* no location (15), 1 unit: [14, 16) no line */
        0x80, 0x00,             /* short form: [16, 18) line 110 still */
    };
    cr_assert_eq(probe_python_line_311(table, sizeof table, 10, 0), 10);
    cr_assert_eq(probe_python_line_311(table, sizeof table, 10, 3), 10);
    cr_assert_eq(probe_python_line_311(table, sizeof table, 10, 4), 11);
    cr_assert_eq(probe_python_line_311(table, sizeof table, 10, 11), 10);
    cr_assert_eq(probe_python_line_311(table, sizeof table, 10, 12), 110);
    cr_assert_eq(probe_python_line_311(table, sizeof table, 10, 14), 0, "no location");
    cr_assert_eq(probe_python_line_311(table, sizeof table, 10, 16), 110);
    cr_assert_eq(probe_python_line_311(table, sizeof table, 10, 18), 0, "past the table");
    cr_assert_eq(probe_python_line_311(table, sizeof table, 10, -2), 10, "before the first instruction");
}

Test(python, location_table_that_lies)
{
    const uint8_t no_entry[] = { 0x05, 0x81 };
    cr_assert_eq(probe_python_line_311(no_entry, sizeof no_entry, 10, 0), 0, "not an entry's first byte");
    const uint8_t cut_varint[] = { 0xe8, 0x40 };
    cr_assert_eq(probe_python_line_311(cut_varint, sizeof cut_varint, 10, 0), 0, "a varint cut by the end");
    const uint8_t endless_varint[] = { 0xe8, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x01 };
    cr_assert_eq(probe_python_line_311(endless_varint, sizeof endless_varint, 10, 0), 0, "a varint too long");
    const uint8_t backwards[] = { 0xe8, 0x15 }; /* -10 from line 10: no line 0 */
    cr_assert_eq(probe_python_line_311(backwards, sizeof backwards, 10, 0), 0);
    const uint8_t empty[] = { 0 };
    cr_assert_eq(probe_python_line_311(empty, 0, 10, 0), 0);
}

Test(python, strings_of_every_width)
{
    char out[32];
    const uint8_t latin1[] = { 'c', 'a', 'f', 0xe9 };
    cr_assert_eq(probe_python_text_utf8(latin1, 4, 1, out, sizeof out), 5);
    cr_assert_str_eq(out, "caf\xc3\xa9");
    const uint16_t ucs2[] = { 0x3b1, 0xd800, 0 }; /* alpha, a lone surrogate, NUL */
    probe_python_text_utf8((const uint8_t *)ucs2, 3, 2, out, sizeof out);
    cr_assert_str_eq(out, "\xce\xb1\xef\xbf\xbd\xef\xbf\xbd");
    const uint32_t ucs4[] = { 0x1f600, 0x110000 };
    probe_python_text_utf8((const uint8_t *)ucs4, 2, 4, out, sizeof out);
    cr_assert_str_eq(out, "\xf0\x9f\x98\x80\xef\xbf\xbd");
    cr_assert_eq(probe_python_text_utf8(latin1, 4, 1, out, 4), 3, "cut before a character that does not fit");
    cr_assert_str_eq(out, "caf");
    cr_assert_eq(probe_python_text_utf8(latin1, 4, 3, out, sizeof out), 0, "no such width");
    cr_assert_str_eq(out, "");
}

/* ---- 3.13's own table ---------------------------------------------------------------------------------------- */

/* _Py_DebugOffsets as 3.13.0 fills it: 71 uint64_t (internal/pycore_runtime.h), the values of its
 * pycore_runtime_init.h on x86-64. */
static void debug_offsets_313(uint64_t table[71])
{
    memset(table, 0, 71 * sizeof table[0]);
    memcpy(table, "xdebugpy", 8);
    table[1] = 0x030d00f0; /* 3.13.0 final */
    const struct {
        size_t index;
        uint64_t value;
    } values[] = {
        { 3, 283320 }, { 5, 632 },                                     /* runtime: size, interpreters_head */
        { 6, 194968 }, { 7, 7272 }, { 8, 7264 }, { 9, 7344 },          /* interpreter: size, id, next, threads */
        { 14, 16 }, { 15, 7752 }, { 17, 7768 }, { 18, 7760 },          /* ceval.gil, _gil, locked, last_holder */
        { 19, 304 }, { 21, 8 }, { 22, 16 }, { 23, 72 }, { 24, 152 }, { 25, 160 }, /* thread state */
        { 28, 80 }, { 29, 8 }, { 30, 0 }, { 31, 56 }, { 33, 70 },      /* interpreter frame */
        { 34, 208 }, { 35, 112 }, { 36, 120 }, { 37, 128 }, { 38, 136 }, { 39, 68 }, { 43, 200 }, /* code */
        { 44, 16 }, { 45, 8 },                                         /* PyObject */
        { 64, 40 }, { 65, 16 }, { 66, 32 },                            /* bytes */
        { 67, 64 }, { 68, 32 }, { 69, 16 }, { 70, 40 },                /* unicode: size, state, length, ascii */
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        table[values[i].index] = values[i].value;
}

Test(python, debug_offsets_of_3_13)
{
    uint64_t table[71];
    cr_assert_eq(probe_python_debug_offsets_size(13), sizeof table);
    debug_offsets_313(table);
    struct probe_python_layout layout = *probe_python_layout_for(13);
    const char *why = NULL;
    cr_assert(probe_python_layout_from_debug_offsets((const uint8_t *)table, sizeof table, 13, &layout, &why),
              "%s", why);
    const struct probe_python_layout *headers = probe_python_layout_for(13);
    cr_assert_eq(layout.interp_runtime, PROBE_PYTHON_ABSENT, "not in the table");
    layout.interp_runtime = headers->interp_runtime;
    cr_assert_eq(memcmp(&layout, headers, sizeof layout), 0, "the table says what the 3.13 headers say");
    cr_assert_eq(layout.gil_locked, 16);
    cr_assert_eq(layout.gil_last_holder, 8);
}

/* _Py_DebugOffsets as Debian's 3.14.10 fills it: 81 uint64_t up to the unicode group (internal/
 * pycore_debug_offsets.h; 3.14 added fields in the middle of the groups, so the same names lie elsewhere). */
static void debug_offsets_314(uint64_t table[81])
{
    memset(table, 0, 81 * sizeof table[0]);
    memcpy(table, "xdebugpy", 8);
    table[1] = 0x030e0af0; /* 3.14.10 final */
    const struct {
        size_t index;
        uint64_t value;
    } values[] = {
        { 3, 100000 }, { 5, 808 },                                      /* runtime: size, interpreters_head */
        { 6, 200000 }, { 7, 7280 }, { 8, 7272 }, { 9, 7344 },           /* interpreter: size, id, next, threads */
        { 15, 16 }, { 16, 7784 }, { 18, 7800 }, { 19, 7792 },           /* ceval.gil, _gil, locked, last_holder */
        { 22, 304 }, { 24, 8 }, { 25, 16 }, { 26, 72 }, { 27, 152 }, { 28, 160 }, /* thread state */
        { 31, 88 }, { 32, 8 }, { 33, 0 }, { 34, 56 }, { 36, 74 },       /* interpreter frame */
        { 39, 224 }, { 40, 112 }, { 41, 120 }, { 42, 128 }, { 43, 136 }, { 44, 68 }, { 48, 208 }, /* code */
        { 50, 16 }, { 51, 8 },                                          /* PyObject */
        { 74, 40 }, { 75, 16 }, { 76, 32 },                             /* bytes */
        { 77, 64 }, { 78, 32 }, { 79, 16 }, { 80, 40 },                 /* unicode: size, state, length, ascii */
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        table[values[i].index] = values[i].value;
}

Test(python, debug_offsets_of_3_14)
{
    uint64_t table[81];
    cr_assert_eq(probe_python_debug_offsets_size(14), sizeof table);
    debug_offsets_314(table);
    struct probe_python_layout layout = *probe_python_layout_for(14);
    const char *why = NULL;
    cr_assert(probe_python_layout_from_debug_offsets((const uint8_t *)table, sizeof table, 14, &layout, &why),
              "%s", why);
    const struct probe_python_layout *headers = probe_python_layout_for(14);
    cr_assert_eq(layout.interp_runtime, PROBE_PYTHON_ABSENT, "not in the table");
    layout.interp_runtime = headers->interp_runtime;
    cr_assert_eq(memcmp(&layout, headers, sizeof layout), 0, "the table says what the 3.14 headers say");
    cr_assert_eq(layout.frame_owner, 74);
    cr_assert_eq(layout.frame_code_tag, 3, "f_executable is a tagged _PyStackRef");
    /* read with 3.13's shape, the same bytes are refused: its version is not 3.13 */
    layout = *probe_python_layout_for(13);
    cr_assert_not(probe_python_layout_from_debug_offsets((const uint8_t *)table, sizeof table, 13, &layout, &why));
    /* a table of a version hangdoc has no shape for */
    cr_assert_eq(probe_python_debug_offsets_size(15), 0);
    cr_assert_not(probe_python_layout_from_debug_offsets((const uint8_t *)table, sizeof table, 15, &layout, &why));
}

Test(python, debug_offsets_that_lie)
{
    uint64_t table[71];
    struct probe_python_layout layout;
    const char *why;
    debug_offsets_313(table);
    memcpy(table, "xdebugpz", 8);
    layout = *probe_python_layout_for(13);
    cr_assert_not(probe_python_layout_from_debug_offsets((const uint8_t *)table, sizeof table, 13, &layout, &why));
    debug_offsets_313(table);
    table[1] = 0x030e00f0; /* 3.14 */
    cr_assert_not(probe_python_layout_from_debug_offsets((const uint8_t *)table, sizeof table, 13, &layout, &why));
    debug_offsets_313(table);
    table[2] = 1; /* free-threaded */
    cr_assert_not(probe_python_layout_from_debug_offsets((const uint8_t *)table, sizeof table, 13, &layout, &why));
    debug_offsets_313(table);
    table[23] = 400; /* current_frame past the thread state's 304 bytes */
    cr_assert_not(probe_python_layout_from_debug_offsets((const uint8_t *)table, sizeof table, 13, &layout, &why));
    debug_offsets_313(table);
    table[28] = UINT64_MAX; /* a frame of 2^64 bytes */
    cr_assert_not(probe_python_layout_from_debug_offsets((const uint8_t *)table, sizeof table, 13, &layout, &why));
    cr_assert_not(probe_python_layout_from_debug_offsets((const uint8_t *)table, 100, 13, &layout, &why), "short");
    cr_assert_null(probe_python_layout_for(9));
    cr_assert_null(probe_python_layout_for(15));
    cr_assert_eq(probe_python_debug_offsets_size(12), 0, "3.12 publishes no table");
}
