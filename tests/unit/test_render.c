/* The text and JSON renderers over a hand-built snapshot (render/report.h, snapshot_builder.h). */
#include "report.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parent 4000 'trainer' (python3 with an escape in its argv) in wait4 for its child 4012, whose comm and thread
 * name hold a newline and a parenthesis, asleep on a futex; the host name holds an escape. */
static struct hd_snapshot *two_process_snapshot(void)
{
    struct hd_snapshot *snapshot = new_snapshot(4000);
    snapshot->samples = 3;
    snapshot->interval_ms = 100;
    snapshot->sampling_s = 0.2;
    strcpy(snapshot->host, "host\x1b[1m");
    strcpy(snapshot->kernel, "6.1.0");

    struct hd_process *parent = add_process(snapshot, 4000, 1, HD_ORIGIN_UNKNOWN, 1);
    strcpy(parent->comm, "trainer");
    parent->argv = calloc(3, sizeof *parent->argv);
    parent->argv[0] = strdup("python3");
    parent->argv[1] = strdup("train\x1b[31m.py");
    parent->argc = 2;
    parent->exe = strdup("/usr/bin/python3.11");
    struct hd_thread *trainer = thread_of(snapshot, 4000);
    strcpy(trainer->name, "trainer");
    in_wait4(trainer, 4012);
    trainer->syscall.nr = 61;
    trainer->syscall.args[0] = 4012;
    trainer->blocked_for_known = true;
    trainer->blocked_for_s = 41;

    struct hd_process *child = add_process(snapshot, 4012, 4000, HD_ORIGIN_UNKNOWN, 1);
    strcpy(child->comm, "w\nrk)er");
    struct hd_thread *worker = thread_of(snapshot, 4012);
    strcpy(worker->name, "w\nrk)er");
    /* a bare futex wait: no mapping or lock read, so that the line shows the wait alone */
    struct hd_wait *wait = asleep_in(worker, "futex", HD_WAIT_FUTEX, "FUTEX_WAIT");
    wait->address = 0x55d2a0c4e040;
    wait->futex_private = true;
    wait->expected = 2;
    worker->syscall.nr = 202;
    worker->syscall.args[0] = 0x55d2a0c4e040;
    worker->syscall.args[1] = 128; /* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */
    worker->syscall.args[2] = 2;
    worker->blocked_for_known = true;
    worker->blocked_for_s = 41;
    hd_snapshot_note(snapshot, HD_NOTE_PROCFS, 4012, 0, "exe: permission denied");
    return snapshot;
}

static char *render(struct hd_snapshot *snapshot, bool json)
{
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    cr_assert_not_null(out);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(json ? report_render_json(snapshot, analysis, out) : report_render_text(snapshot, analysis, NULL, out));
    fclose(out);
    report_analysis_free(analysis);
    return text;
}

Test(render, text_tree_waits_and_escaping)
{
    struct hd_snapshot *snapshot = two_process_snapshot();
    char *text = render(snapshot, false);
    cr_assert(strstr(text, "hangdoc: 2 processes, 2 threads, 3 samples over 0.2 s on host\\e[1m"), "%s", text);
    cr_assert(strncmp(text, "verdict: HUNG (deadlock): thread 4012 'w\\nrk)er', the only thread of process 4012, "
                            "sleeps forever on a futex that records no owner at 0x55d2a0c4e040: nothing is left to "
                            "wake it (the thread that was to, exited or never started, or woke it before it waited) "
                            "[no-waker, certain]\n"
                            "chain: 4000 'trainer' → 4012 'w\\nrk)er'\n"
                            "hangdoc: 2 processes", 300) == 0,
              "the verdict comes first, then the chain: %s", text);
    cr_assert(strstr(text, "\nwaiting-on-workers (certain) · process 4000, thread 4000\n"), "%s", text);
    cr_assert(strstr(text, "process 4000 'trainer' S sleeping, uid 0, 1 thread\n"), "%s", text);
    cr_assert(strstr(text, "    cmdline: python3 train\\e[31m.py\n"), "%s", text);
    cr_assert(strstr(text, "    thread 4000 'trainer' S [wait4, 41 s] wait4 pid 4012, no timeout · no progress · asleep forever\n"),
              "%s", text);
    cr_assert(strstr(text, "└── process 4012 'w\\nrk)er' S"), "the child is drawn under its parent: %s", text);
    cr_assert(strstr(text, "        thread 4012 'w\\nrk)er' S [futex wait, 41 s] futex wait 0x55d2a0c4e040 private, "
                           "expected 2, no timeout · no progress · asleep forever\n"),
              "%s", text);
    cr_assert(strstr(text, "\nnotes:\n  process 4012: exe: permission denied\n"), "%s", text);
    cr_assert_null(strchr(text, 0x1b), "no raw escape byte");
    free(text);
    hd_snapshot_free(snapshot);
}

/* A daemon's main thread in pause(), which SIGTERM's and SIGHUP's handlers end: not hung, and the verdict says which
 * thread waits by design for what. */
Test(render, not_hung_names_a_thread_that_waits_by_design_for_a_signal)
{
    struct hd_snapshot *snapshot = new_snapshot(900);
    struct hd_process *daemon = add_process(snapshot, 900, 1, HD_ORIGIN_EXEC, 1);
    daemon->signal_dispositions_known = true;
    daemon->signals_caught = (1ULL << (SIGTERM - 1)) | (1ULL << (SIGHUP - 1));
    struct hd_wait *wait = asleep_in(thread_of(snapshot, 900), "pause", HD_WAIT_SIGNAL, "pause");
    wait->signal_set_kind = HD_SIGNAL_SET_BLOCKED;
    wait->signal_set = 0;
    char *text = render(snapshot, false);
    const char *verdict = "verdict: not hung: thread 900 'thread900' of process 900 waits by design for a signal "
                          "(SIGHUP, SIGTERM), and every other thread runs, waits with a timeout or on the outside, or "
                          "can be woken by one that does\n";
    cr_assert(strncmp(text, verdict, strlen(verdict)) == 0, "%s", text);
    free(text);
    hd_snapshot_free(snapshot);
}

/* A hang no rule names, in a Python thread: the verdict still gives the user's line, escaped. The worker waits for
 * a mutex of a thread of its own that waits for a signal nothing will send: a knot no rule of the catalogue
 * explains. */
Test(render, an_unnamed_hang_of_a_python_thread_gives_the_users_line)
{
    struct hd_snapshot *snapshot = two_process_snapshot();
    in_pause(add_thread(snapshot, 4012, 4013));
    struct hd_thread *worker = thread_of(snapshot, 4012);
    worker->wait.lock = (struct hd_lock){ .kind = HD_LOCK_MUTEX, .object_address = 0x55d2a0c4e040, .type = "normal",
                                          .owner_tid = 4013, .owner_pid = 4012,
                                          .owner_whereabouts = HD_OWNER_SAME_PROCESS };
    add_python_frame(worker, "Condition.wait", "/usr/lib/python3.11/threading.py", 320, false);
    add_python_frame(worker, "load\x1b[2J", "/app/data\nset.py", 42, true);
    char *text = render(snapshot, false);
    cr_assert(strstr(text, "no rule of the catalogue names why; in Python: load\\e[2J at data\\nset.py:42\n"
                           "chain: "),
              "%s", text);
    cr_assert_null(strchr(text, 0x1b), "no raw escape byte");
    free(text);
    hd_snapshot_free(snapshot);
}

Test(render, json_contract_keys)
{
    struct hd_snapshot *snapshot = two_process_snapshot();
    char *text = render(snapshot, true);
    json_object *document = json_tokener_parse(text);
    cr_assert_not_null(document, "%s", text);
    json_object *value;
    cr_assert(json_object_object_get_ex(document, "schema", &value));
    cr_assert_str_eq(json_object_get_string(value), "hangdoc.report/2");
    json_object *verdict;
    cr_assert(json_object_object_get_ex(document, "verdict", &verdict));
    cr_assert(json_object_object_get_ex(verdict, "hung", &value) && json_object_get_boolean(value));
    cr_assert(json_object_object_get_ex(verdict, "cause", &value));
    cr_assert_str_eq(json_object_get_string(value), "deadlock", "the worker's knot");
    cr_assert(json_object_object_get_ex(verdict, "root_cause", &value));
    cr_assert_str_eq(json_object_get_string(value), "no-waker", "nothing is left in the worker to wake it");
    cr_assert(json_object_object_get_ex(verdict, "hangs", &value));
    cr_assert_eq(json_object_array_length(value), 1);
    json_object *hang = json_object_array_get_idx(value, 0), *field;
    cr_assert(json_object_object_get_ex(hang, "tid", &field) && json_object_get_int(field) == 4012);
    cr_assert(json_object_object_get_ex(hang, "finding", &field) && field != NULL);
    for (const char *key = "root_cause\0pid\0tid\0chain\0"; *key; key += strlen(key) + 1)
        cr_assert(json_object_object_get_ex(verdict, key, NULL), "verdict.%s", key);
    for (const char *key = "findings\0processes\0graph\0notes\0snapshot\0"; *key; key += strlen(key) + 1)
        cr_assert(json_object_object_get_ex(document, key, NULL), "%s", key);

    json_object *processes;
    json_object_object_get_ex(document, "processes", &processes);
    cr_assert_eq(json_object_array_length(processes), 2);
    json_object *child = json_object_array_get_idx(processes, 1);
    for (const char *key = "pid\0ppid\0comm\0cmdline\0exe\0state\0origin\0libraries\0fds\0threads\0"; *key;
         key += strlen(key) + 1)
        cr_assert(json_object_object_get_ex(child, key, NULL), "processes[].%s", key);
    json_object_object_get_ex(child, "comm", &value);
    cr_assert_str_eq(json_object_get_string(value), "w\nrk)er", "the exact name, not the text report's escape");
    json_object *threads, *thread, *wait;
    json_object_object_get_ex(child, "threads", &threads);
    thread = json_object_array_get_idx(threads, 0);
    for (const char *key = "tid\0name\0state\0wchan\0syscall\0blocked_for_s\0progressing\0wait\0frames\0python_frames\0";
         *key; key += strlen(key) + 1)
        cr_assert(json_object_object_get_ex(thread, key, NULL), "threads[].%s", key);
    json_object_object_get_ex(thread, "wait", &wait);
    json_object_object_get_ex(wait, "address", &value);
    cr_assert_str_eq(json_object_get_string(value), "0x55d2a0c4e040", "addresses are hex strings");
    json_object_object_get_ex(wait, "kind", &value);
    cr_assert_str_eq(json_object_get_string(value), "futex");
    for (const char *key = "owner_tid\0owner_pid\0"; *key; key += strlen(key) + 1)
        cr_assert(json_object_object_get_ex(wait, key, NULL), "wait.%s", key);
    json_object_object_get_ex(thread, "blocked_for_s", &value);
    cr_assert_float_eq(json_object_get_double(value), 41.0, 1e-9);
    json_object_put(document);
    free(text);
    hd_snapshot_free(snapshot);
}

/* ---- width, colour, healthy threads ---------------------------------------------------------------------------- */

#include "buffer.h"
#include "wrap.h"

static char *wrapped(const char *text, unsigned width)
{
    struct report_buffer out = { 0 };
    report_wrap(&out, text, strlen(text), width);
    cr_assert_not(out.failed);
    return out.data ? out.data : strdup("");
}

Test(wrap, breaks_at_spaces_with_a_hanging_indent)
{
    char *text = wrapped("  fix: one two three four five six seven\nshort\n", 20);
    cr_assert_str_eq(text, "  fix: one two three\n"
                           "       four five six\n"
                           "       seven\n"
                           "short\n");
    free(text);
    text = wrapped("  · name: alpha beta gamma\n", 16);
    cr_assert_str_eq(text, "  · name: alpha\n    beta gamma\n", "the middle dot is one column");
    free(text);
    text = wrapped("    thread 1 'x' S [wait4, 1 s] wait4 pid 2\n", 24);
    cr_assert_str_eq(text, "    thread 1 'x' S\n      [wait4, 1 s] wait4\n      pid 2\n", "no prefix: two deeper");
    free(text);
}

Test(wrap, colours_take_no_columns_and_long_words_stay_whole)
{
    char *text = wrapped("\x1b[1;31mHUNG\x1b[0m: abc def\n", 12);
    cr_assert_str_eq(text, "\x1b[1;31mHUNG\x1b[0m: abc\n  def\n");
    free(text);
    text = wrapped("see /a/very/long/path/that/does/not/fit here\n", 10);
    cr_assert_str_eq(text, "see\n  /a/very/long/path/that/does/not/fit\n  here\n");
    free(text);
    text = wrapped("unchanged line that is long\n", 0);
    cr_assert_str_eq(text, "unchanged line that is long\n", "width 0: no wrapping");
    free(text);
}

static char *render_with(struct hd_snapshot *snapshot, const struct report_text_options *options)
{
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    cr_assert_not_null(out);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(report_render_text(snapshot, analysis, options, out));
    fclose(out);
    report_analysis_free(analysis);
    return text;
}

Test(render, colour_only_when_asked_and_target_escapes_stay_escaped)
{
    struct hd_snapshot *snapshot = two_process_snapshot();
    char *plain = render_with(snapshot, &(struct report_text_options){ 0 });
    cr_assert_null(strchr(plain, 0x1b));
    char *coloured = render_with(snapshot, &(struct report_text_options){ .colour = true });
    const char *verdict = "verdict: \x1b[1;31mHUNG (deadlock)\x1b[0m: ";
    cr_assert(strncmp(coloured, verdict, strlen(verdict)) == 0, "%s", coloured);
    cr_assert(strstr(coloured, "\x1b[31masleep forever\x1b[0m"), "%s", coloured);
    cr_assert(strstr(coloured, "on host\\e[1m"), "the target's escape is still escaped: %s", coloured);
    free(plain);
    free(coloured);
    hd_snapshot_free(snapshot);
}

Test(render, healthy_threads_are_summarised_unless_verbose)
{
    struct hd_snapshot *snapshot = two_process_snapshot();
    for (pid_t tid = 4001; tid < 4005; tid++)
        strcpy(add_thread(snapshot, 4000, tid)->name, "pool");
    char *text = render_with(snapshot, &(struct report_text_options){ 0 });
    cr_assert(strstr(text, "    thread 4000 'trainer' S [wait4, 41 s]"), "the relevant thread is listed: %s", text);
    cr_assert_null(strstr(text, "thread 4001 "), "%s", text);
    cr_assert(strstr(text, "\n    + 4 healthy threads: 4 running (-v lists them)\n"), "%s", text);
    free(text);
    text = render_with(snapshot, &(struct report_text_options){ .verbose = true });
    cr_assert(strstr(text, "    thread 4004 'pool' R [running]"), "%s", text);
    cr_assert_null(strstr(text, "healthy threads:"));
    free(text);
    hd_snapshot_free(snapshot);
}

Test(render, recap_repeats_the_verdict_at_the_end)
{
    struct hd_snapshot *snapshot = two_process_snapshot();
    char *text = render_with(snapshot, &(struct report_text_options){ .recap = true });
    const char *recap = strstr(text, "\nIn short:\nverdict: HUNG (deadlock): thread 4012");
    cr_assert_not_null(recap, "%s", text);
    cr_assert(strstr(recap, "\nchain: 4000 'trainer' → 4012 'w\\nrk)er'\n"), "%s", recap);
    free(text);
    hd_snapshot_free(snapshot);
}
