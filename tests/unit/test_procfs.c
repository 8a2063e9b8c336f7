/* Unit tests for the /proc parsers and the bounded file reader (probe/procfs.h).
 *
 * Each parser has a table of cases, text in and fields out, run one by one as the parameterized test
 * <parser>::cases: a case is a line of its table, and a failure names it. A field is compared only when the case's
 * `checks` name it; a "has_" flag and its values are one field. Adding a case is adding a line.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "procfs.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The cases of `table` as the runs of the parameterized test Suite::cases. The parameter is a case's index, not a
 * pointer: Criterion runs each case in a fresh image of this program, where this one's addresses mean nothing. */
#define TABLE_OF_CASES(Suite, table)                                                                              \
    ParameterizedTestParameters(Suite, cases)                                                                     \
    {                                                                                                             \
        static size_t indices[COUNT(table)];                                                                      \
        for (size_t i = 0; i < COUNT(indices); i++)                                                               \
            indices[i] = i;                                                                                       \
        return cr_make_param_array(size_t, indices, COUNT(indices));                                              \
    }

/* What a parser must answer: true, false, or either (the case is about the fields alone). */
enum outcome { PARSED, REFUSED, EITHER };

/* The length of a case's text: its own when given, else up to its NUL. */
static size_t text_length(const char *text, size_t length)
{
    return length ? length : strlen(text);
}

static void expect_outcome(const char *name, bool parsed, enum outcome outcome)
{
    if (outcome != EITHER)
        cr_expect_eq(parsed, outcome == PARSED, "%s: the parser said %s", name, parsed ? "yes" : "no");
}

/* ---- probe_parse_stat ---------------------------------------------------------------------------------------- */

/* Fields 10..51 of a real /proc/<pid>/stat line (42 of them), between flags (9) and exit_code (52). */
#define STAT_FIELDS_10_TO_51                                                                                          \
    "98 0 1 0 0 0 0 0 20 0 1 0 79329 3133440 383 18446744073709551615 94232362471424 94232362491305 "                 \
    "140735833835760 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94232362507312 94232362508928 94232762966016 "                  \
    "140735833844354 140735833844374 140735833844374 140735833845739"

/* A complete 52-field stat line with the given comm (raw bytes, no NUL inside), state, ppid, flags and exit code,
 * each a string literal. */
#define STAT_LINE(comm, state, ppid, flags, exit_code)                                                               \
    "5057 (" comm ") " state " " ppid " 5048 3915 0 -1 " flags " " STAT_FIELDS_10_TO_51 " " exit_code "\n"

/* utime 14, stime 15, num_threads 20, starttime 22 and processor 39 with distinct values; the unsigned 64-bit
 * fields between them (rsslim of RLIM_INFINITY) must be skipped, not parsed as signed. */
#define STAT_LINE_DISTINCT                                                                                            \
    "77 (python3) S 1 77 77 0 -1 4194560 10 0 0 0 1234 567 0 0 20 0 17 0 987654321 1 2 "                           \
    "18446744073709551615 1 2 3 0 0 0 0 0 0 0 0 0 17 13 0 0 0 0 0 1 2 3 4 5 6 7 0\n"

enum stat_field {
    STAT_COMM = 1 << 0,
    STAT_STATE = 1 << 1,
    STAT_PPID = 1 << 2,
    STAT_FLAGS = 1 << 3,
    STAT_TIMES = 1 << 4,     /* has_times, cpu_ticks */
    STAT_START = 1 << 5,     /* has_start, thread_count, start_ticks */
    STAT_PROCESSOR = 1 << 6,
    STAT_EXIT = 1 << 7,      /* has_exit_code, exit_code */
    STAT_GROUP = 1 << 8,     /* has_group, pgrp, session */
};

static const struct {
    const char *name;
    const char *line;
    size_t length; /* 0: the whole line */
    enum outcome outcome;
    unsigned checks;
    struct probe_stat expected;
} stat_cases[] = {
    { "a normal line", STAT_LINE("cat", "R", "5048", "4194304", "0"), 0, PARSED,
      STAT_COMM | STAT_STATE | STAT_PPID | STAT_FLAGS | STAT_TIMES | STAT_START | STAT_PROCESSOR | STAT_EXIT |
          STAT_GROUP,
      { .comm = "cat", .state = 'R', .ppid = 5048, .has_group = true, .pgrp = 5048, .session = 3915,
        .flags = 4194304, .has_times = true, .cpu_ticks = 0,
        .has_start = true, .thread_count = 1, .start_ticks = 79329, .start_stack = 140735833835760, .processor = 1,
        .has_exit_code = true } },
    { "times, threads, start and processor of distinct values", STAT_LINE_DISTINCT, 0, PARSED,
      STAT_TIMES | STAT_START | STAT_PROCESSOR | STAT_EXIT,
      { .has_times = true, .cpu_ticks = 1234 + 567, .has_start = true, .thread_count = 17, .start_ticks = 987654321,
        .start_stack = 3, .processor = 13, .has_exit_code = true } },
    { "cut after the ppid: no group", "77 (python3) S 1", 0, PARSED, STAT_PPID | STAT_GROUP, { .ppid = 1 } },
    { "cut after the times, which it keeps", "77 (python3) S 1 77 77 0 -1 4194560 10 0 0 0 1234 567 0 0", 0, PARSED,
      STAT_TIMES | STAT_START | STAT_PROCESSOR | STAT_EXIT, { .has_times = true, .cpu_ticks = 1801, .processor = -1 } },
    { "comm with spaces", STAT_LINE("Web Content", "S", "77", "0", "0"), 0, PARSED,
      STAT_COMM | STAT_STATE | STAT_PPID | STAT_EXIT,
      { .comm = "Web Content", .state = 'S', .ppid = 77, .has_exit_code = true } },
    { "comm \"x) S 1 (y\" ends early and fakes state S and ppid 1", STAT_LINE("x) S 1 (y", "D", "4242", "64", "0"), 0,
      PARSED, STAT_COMM | STAT_STATE | STAT_PPID | STAT_FLAGS | STAT_EXIT,
      { .comm = "x) S 1 (y", .state = 'D', .ppid = 4242, .flags = 64, .has_exit_code = true } },
    { "comm made of parentheses", STAT_LINE(")) S 1 ", "T", "9", "0", "0"), 0, PARSED,
      STAT_COMM | STAT_STATE | STAT_PPID, { .comm = ")) S 1 ", .state = 'T', .ppid = 9 } },
    { "comm with a newline", STAT_LINE("a\nb", "S", "3", "0", "0"), 0, PARSED,
      STAT_COMM | STAT_STATE | STAT_PPID | STAT_EXIT,
      { .comm = "a\nb", .state = 'S', .ppid = 3, .has_exit_code = true } },
    { "empty comm", STAT_LINE("", "S", "3", "0", "0"), 0, PARSED, STAT_COMM | STAT_STATE,
      { .comm = "", .state = 'S' } },
    { "a long comm is cut to HD_COMM_MAX - 1 bytes", STAT_LINE("abcdefghijklmnopqrstuvwxyz", "S", "3", "0", "0"), 0,
      PARSED, STAT_COMM | STAT_STATE | STAT_PPID, { .comm = "abcdefghijklmno", .state = 'S', .ppid = 3 } },
    { "comm of exactly 15 bytes", STAT_LINE("abcdefghijklmno", "S", "3", "0", "0"), 0, PARSED, STAT_COMM,
      { .comm = "abcdefghijklmno" } },
    /* kthreadd-style flags: PF_KTHREAD | PF_NOFREEZE | PF_FORKNOEXEC | PF_NO_SETAFFINITY... (0x00208040) */
    { "kernel thread flags", STAT_LINE("kworker/0:1H", "I", "2", "2129984", "0"), 0, PARSED,
      STAT_COMM | STAT_STATE | STAT_PPID | STAT_FLAGS,
      { .comm = "kworker/0:1H", .state = 'I', .ppid = 2, .flags = 0x00208040UL } },
    { "zombie that called exit(1)", STAT_LINE("child", "Z", "100", "4227148", "256"), 0, PARSED,
      STAT_STATE | STAT_EXIT, { .state = 'Z', .has_exit_code = true, .exit_code = 256 } },
    { "zombie killed by SIGKILL", STAT_LINE("child", "Z", "100", "4227148", "9"), 0, PARSED, STAT_STATE | STAT_EXIT,
      { .state = 'Z', .has_exit_code = true, .exit_code = 9 } },
    { "line without its newline", STAT_LINE("cat", "S", "1", "0", "139"),
      sizeof STAT_LINE("cat", "S", "1", "0", "139") - 2, PARSED, STAT_EXIT,
      { .has_exit_code = true, .exit_code = 139 } },
    { "44 fields, as before Linux 3.3: no exit code",
      "5057 (cat) S 1 5048 3915 0 -1 4194304 98 0 1 0 0 0 0 0 20 0 1 0 79329 3133440 383 18446744073709551615 "
      "94232362471424 94232362491305 140735833835760 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
      0, PARSED, STAT_FLAGS | STAT_EXIT, { .flags = 4194304 } },
    { "cut after the ppid: comm, state and ppid kept", "1234 (sleepy) S 42 1234", 0, PARSED,
      STAT_COMM | STAT_STATE | STAT_PPID | STAT_FLAGS | STAT_EXIT, { .comm = "sleepy", .state = 'S', .ppid = 42 } },
    { "cut after the flags", "1234 (sleepy) S 42 1234 1234 0 -1 2097152 98 0 1", 0, PARSED,
      STAT_PPID | STAT_FLAGS | STAT_EXIT, { .ppid = 42, .flags = 2097152 } },
    { "a full line of which only the bytes up to the ppid lie within length",
      STAT_LINE("cat", "S", "42", "2097152", "7"), sizeof "5057 (cat) S 42" - 1, PARSED,
      STAT_COMM | STAT_PPID | STAT_FLAGS | STAT_EXIT, { .comm = "cat", .ppid = 42 } },
    { "ppid 0, as init's and kthreadd's", "1 (systemd) S 0 1 1 0 -1 4194560", 0, PARSED, STAT_PPID | STAT_FLAGS,
      { .ppid = 0, .flags = 4194560 } },
    { "empty input", "", 0, REFUSED, STAT_STATE, { .state = '?' } },
    { "no parentheses", "1234 cat S 1 1234 1234 0 -1 0", 0, REFUSED, 0 },
    { "only an opening parenthesis", "1234 (cat S 1 1234", 0, REFUSED, 0 },
    { "only a closing parenthesis", "1234 cat) S 1 1234", 0, REFUSED, 0 },
    { "parentheses in the wrong order", "1234 )cat( S 1", 0, REFUSED, 0 },
    { "nothing after comm", "1234 (cat)", 0, REFUSED, 0 },
    { "only spaces after comm", "1234 (cat)    ", 0, REFUSED, 0 },
    { "a state without ppid", "1234 (cat) S", 0, REFUSED, 0 },
    { "noise", "\xff\xfe\x01 garbage )( \x7f", 0, REFUSED, 0 },
    { "a ppid that is not a number", "1234 (cat) S x 1 2", 0, REFUSED, 0 },
    { "a ppid past any pid", "1234 (cat) S 99999999999999999999999 1 2", 0, REFUSED, 0 },
};

static size_t count_fields(const char *line)
{
    size_t fields = 0;
    bool in_field = false;
    for (const char *p = line; *p; p++) {
        bool separator = *p == ' ' || *p == '\n';
        if (!separator && !in_field)
            fields++;
        in_field = !separator;
    }
    return fields;
}

Test(parse_stat, the_tables_full_lines_have_52_fields)
{
    cr_assert_eq(count_fields(STAT_LINE("cat", "S", "1", "4194304", "0")), 52);
    cr_assert_eq(count_fields(STAT_LINE_DISTINCT), 52);
}

Test(parse_stat, pf_kthread_is_the_kernels_bit)
{
    cr_assert_eq(PROBE_PF_KTHREAD, 0x00200000UL, "include/linux/sched.h");
    cr_assert_eq(0x00208040UL & PROBE_PF_KTHREAD, PROBE_PF_KTHREAD, "the kernel thread case has it");
}

TABLE_OF_CASES(parse_stat, stat_cases)

ParameterizedTest(size_t *index, parse_stat, cases)
{
    const char *name = stat_cases[*index].name;
    unsigned checks = stat_cases[*index].checks;
    const struct probe_stat *expected = &stat_cases[*index].expected;
    struct probe_stat got;
    bool parsed = probe_parse_stat(stat_cases[*index].line,
                                   text_length(stat_cases[*index].line, stat_cases[*index].length), &got);
    expect_outcome(name, parsed, stat_cases[*index].outcome);
    if (checks & STAT_COMM)
        cr_expect_str_eq(got.comm, expected->comm, "%s: comm", name);
    if (checks & STAT_STATE)
        cr_expect_eq(got.state, expected->state, "%s: state %c", name, got.state);
    if (checks & STAT_PPID)
        cr_expect_eq(got.ppid, expected->ppid, "%s: ppid %d", name, (int)got.ppid);
    if (checks & STAT_FLAGS)
        cr_expect_eq(got.flags, expected->flags, "%s: flags %#lx", name, got.flags);
    if (checks & STAT_GROUP) {
        cr_expect_eq(got.has_group, expected->has_group, "%s: has_group", name);
        if (expected->has_group)
            cr_expect(got.pgrp == expected->pgrp && got.session == expected->session, "%s: pgrp %d session %d", name,
                      (int)got.pgrp, (int)got.session);
    }
    if (checks & STAT_TIMES) {
        cr_expect_eq(got.has_times, expected->has_times, "%s: has_times", name);
        if (expected->has_times)
            cr_expect_eq(got.cpu_ticks, expected->cpu_ticks, "%s: cpu_ticks %llu", name,
                         (unsigned long long)got.cpu_ticks);
    }
    if (checks & STAT_START) {
        cr_expect_eq(got.has_start, expected->has_start, "%s: has_start", name);
        if (expected->has_start) {
            cr_expect_eq(got.thread_count, expected->thread_count, "%s: thread_count %d", name, got.thread_count);
            cr_expect_eq(got.start_ticks, expected->start_ticks, "%s: start_ticks %llu", name,
                         (unsigned long long)got.start_ticks);
        }
        if (checks & STAT_PROCESSOR) /* field 28 lies between 22 and 39 */
            cr_expect_eq(got.start_stack, expected->start_stack, "%s: start_stack %llu", name,
                         (unsigned long long)got.start_stack);
    }
    if (checks & STAT_PROCESSOR)
        cr_expect_eq(got.processor, expected->processor, "%s: processor %d", name, got.processor);
    if (checks & STAT_EXIT) {
        cr_expect_eq(got.has_exit_code, expected->has_exit_code, "%s: has_exit_code", name);
        if (expected->has_exit_code)
            cr_expect_eq(got.exit_code, expected->exit_code, "%s: exit_code %d", name, got.exit_code);
    }
}

Test(parse_stat, own_stat_file)
{
    char buffer[4096];
    ssize_t length = probe_read_file("/proc/self/stat", buffer, sizeof buffer);
    cr_assert_gt(length, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(buffer, (size_t)length, &stat));
    cr_assert_eq(stat.state, 'R');
    cr_assert_eq(stat.ppid, getppid());
    cr_assert_eq(stat.flags & PROBE_PF_KTHREAD, 0UL);
    cr_assert(stat.has_exit_code);
    cr_assert_eq(stat.exit_code, 0);
    cr_assert(stat.has_start);
    cr_assert_geq(stat.thread_count, 1);
    cr_assert_geq(stat.processor, 0);
    /* startstack: where argc lies, on our own initial stack */
    char arguments[65536];
    ssize_t cmdline = probe_read_file("/proc/self/cmdline", arguments, sizeof arguments);
    cr_assert_gt(cmdline, 0);
    long argc = 0;
    for (ssize_t i = 0; i < cmdline; i++)
        argc += arguments[i] == '\0';
    cr_assert_neq(stat.start_stack, 0);
    cr_assert_eq(*(const long *)(uintptr_t)stat.start_stack, argc);
}

/* ---- probe_parse_status -------------------------------------------------------------------------------------- */

#define STATUS_BEFORE_TRACER                                                                                         \
    "Name:\tcat\n"                                                                                                    \
    "Umask:\t0022\n"                                                                                                  \
    "State:\tS (sleeping)\n"                                                                                          \
    "Tgid:\t5057\n"                                                                                                   \
    "Ngid:\t0\n"                                                                                                      \
    "Pid:\t5057\n"                                                                                                    \
    "PPid:\t5048\n"
#define STATUS_TEXT                                                                                                  \
    STATUS_BEFORE_TRACER                                                                                              \
    "TracerPid:\t4321\n"                                                                                              \
    "Uid:\t1000\t1000\t1000\t1000\n"                                                                                  \
    "Threads:\t1\n"                                                                                                   \
    "SigBlk:\t0000000000000000\n"                                                                                     \
    "SigIgn:\t0000000000010004\n"                                                                                     \
    "SigCgt:\t0000000180014a07\n"                                                                                     \
    "voluntary_ctxt_switches:\t12\n"                                                                                  \
    "nonvoluntary_ctxt_switches:\t3\n"

enum status_field {
    STATUS_TRACER = 1 << 0,   /* has_tracer_pid, tracer_pid */
    STATUS_SWITCHES = 1 << 1, /* has_switches, both counters */
    STATUS_SIGIGN = 1 << 2,   /* has_signals_ignored, signals_ignored */
    STATUS_EUID = 1 << 3,     /* has_euid, euid */
    STATUS_NSPID = 1 << 4,    /* nspid_levels, nspid_innermost */
};

static const struct {
    const char *name;
    const char *text;
    size_t length; /* 0: the whole text */
    enum outcome outcome;
    unsigned checks;
    struct probe_status expected;
} status_cases[] = {
    { "a real-looking file", STATUS_TEXT, 0, PARSED,
      STATUS_TRACER | STATUS_SWITCHES | STATUS_SIGIGN | STATUS_EUID | STATUS_NSPID,
      { .has_tracer_pid = true, .tracer_pid = 4321, .has_switches = true, .voluntary_switches = 12,
        .involuntary_switches = 3, .has_signals_ignored = true,
        .signals_ignored = 0x10004, /* SIGCHLD (bit 16) and SIGINT (bit 2) ignored */
        .has_signals_caught = true, .signals_caught = 0x180014a07, .has_signals_blocked = true,
        .has_euid = true, .euid = 1000 } },
    /* NSpid: the id in each PID namespace from /proc's down to the task's own; hostile lines stay bounded */
    { "NSpid of one level", "Name:\tcat\nNSpid:\t8696\n", 0, EITHER, STATUS_NSPID,
      { .nspid_levels = 1, .nspid_innermost = 8696 } },
    { "NSpid of two levels", "Name:\tcat\nNSpid:\t8696\t2\nNSsid:\t1\n", 0, EITHER, STATUS_NSPID,
      { .nspid_levels = 2, .nspid_innermost = 2 } },
    { "NSpid nested twice, no final newline", "NSpid:\t8696\t40\t3", 0, EITHER, STATUS_NSPID,
      { .nspid_levels = 3, .nspid_innermost = 3 } },
    { "NSpid past a pid's range stops there", "NSpid:\t8696\t99999999999\t3\n", 0, EITHER, STATUS_NSPID,
      { .nspid_levels = 1, .nspid_innermost = 8696 } },
    { "NSpid not a number", "NSpid:\tx\n", 0, EITHER, STATUS_NSPID },
    { "no NSpid line (kernels before 4.1)", "Name:\tcat\n", 0, EITHER, STATUS_NSPID },
    { "not traced", "Name:\tcat\nTracerPid:\t0\n", 0, PARSED, STATUS_TRACER | STATUS_SWITCHES,
      { .has_tracer_pid = true, .tracer_pid = 0 } },
    { "no TracerPid line", "Name:\tcat\nPPid:\t1\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t6\n", 0,
      PARSED, STATUS_TRACER | STATUS_SWITCHES,
      { .has_switches = true, .voluntary_switches = 5, .involuntary_switches = 6 } },
    { "last line without newline, a counter at UINT64_MAX",
      "TracerPid:\t0\nvoluntary_ctxt_switches:\t18446744073709551615\nnonvoluntary_ctxt_switches:\t7", 0, PARSED,
      STATUS_SWITCHES, { .has_switches = true, .voluntary_switches = UINT64_MAX, .involuntary_switches = 7 } },
    /* "nonvoluntary_ctxt_switches:" ends with "voluntary_ctxt_switches:", but a key must start its line */
    { "only one switch counter", "TracerPid:\t0\nnonvoluntary_ctxt_switches:\t3\n", 0, PARSED, STATUS_SWITCHES },
    { "a key that is a prefix of another does not match",
      "TracerPidNs:\t99\nTracerPid_extra:\t98\nvoluntary_ctxt_switches_total:\t97\nnonvoluntary_ctxt_switches:\t3\n", 0,
      REFUSED, STATUS_TRACER | STATUS_SWITCHES },
    { "a key must start its line", "Name:\tx TracerPid:\t5\n  TracerPid:\t6\n", 0, REFUSED, STATUS_TRACER },
    { "TracerPid past a pid's range", "TracerPid:\t4294967296\n", 0, REFUSED, STATUS_TRACER },
    { "empty input", "", 0, REFUSED, STATUS_TRACER | STATUS_SWITCHES },
    { "cut right after a key: no value", STATUS_TEXT, sizeof(STATUS_BEFORE_TRACER "TracerPid:") - 1, REFUSED,
      STATUS_TRACER },
    { "cut inside a value: only the bytes within length count", STATUS_TEXT,
      sizeof(STATUS_BEFORE_TRACER "TracerPid:") - 1 + 3, PARSED, STATUS_TRACER | STATUS_SWITCHES,
      { .has_tracer_pid = true, .tracer_pid = 43 } },
    { "cut inside a key", "TracerPid:\t1\nvoluntary_ctxt_switches:\t5\nnonvol", 0, PARSED, STATUS_SWITCHES },
    { "values that are not numbers", "TracerPid:\tnone\nvoluntary_ctxt_switches:\t\nnonvoluntary_ctxt_switches:\t3\n",
      0, REFUSED, 0 },
    { "the effective uid is the second number", "Name:\tsu\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n", 0,
      PARSED, STATUS_EUID, { .has_euid = true, .euid = 0 } },
    { "a Uid line of one number", "Uid:\t1000\n", 0, REFUSED, STATUS_EUID },
    { "an effective uid past uid_t", "Uid:\t1\t99999999999\n", 0, EITHER, STATUS_EUID },
};

TABLE_OF_CASES(parse_status, status_cases)

/* /proc/<pid>/timers: a block per POSIX timer; the signals they deliver */
Test(parse_timers, signals_of_the_timers)
{
    static const char text[] = "ID: 0\nsignal: 14/0000000000000000\nnotify: signal/pid.4242\nClockID: 0\n"
                               "ID: 1\nsignal: 10/00007f0000001000\nnotify: thread/tid.4243\nClockID: 1\n"
                               "ID: 2\nsignal: 12/0000000000000000\nnotify: none/pid.4242\nClockID: 1\n";
    uint64_t signals;
    cr_assert_eq(probe_parse_timers(text, sizeof text - 1, &signals), 3u);
    cr_assert_eq(signals, (1ULL << 13) | (1ULL << 9), "SIGALRM and SIGUSR1, not the silent timer's: %#llx",
                 (unsigned long long)signals);
    cr_assert_eq(probe_parse_timers("", 0, &signals), 0u);
    cr_assert_eq(signals, 0u);
    /* hostile numbers: out of range, no digits, a block cut short */
    static const char hostile[] = "signal: 99/0\nnotify: signal/pid.1\nsignal: /0\nnotify: signal\nsignal: 2";
    cr_assert_eq(probe_parse_timers(hostile, sizeof hostile - 1, &signals), 2u);
    cr_assert_eq(signals, 0u);
}

ParameterizedTest(size_t *index, parse_status, cases)
{
    const char *name = status_cases[*index].name;
    unsigned checks = status_cases[*index].checks;
    const struct probe_status *expected = &status_cases[*index].expected;
    struct probe_status got;
    bool parsed = probe_parse_status(status_cases[*index].text,
                                     text_length(status_cases[*index].text, status_cases[*index].length), &got);
    expect_outcome(name, parsed, status_cases[*index].outcome);
    if (checks & STATUS_TRACER) {
        cr_expect_eq(got.has_tracer_pid, expected->has_tracer_pid, "%s: has_tracer_pid", name);
        if (expected->has_tracer_pid)
            cr_expect_eq(got.tracer_pid, expected->tracer_pid, "%s: tracer_pid %d", name, (int)got.tracer_pid);
    }
    if (checks & STATUS_SWITCHES) {
        cr_expect_eq(got.has_switches, expected->has_switches, "%s: has_switches", name);
        if (expected->has_switches) {
            cr_expect_eq(got.voluntary_switches, expected->voluntary_switches, "%s: voluntary", name);
            cr_expect_eq(got.involuntary_switches, expected->involuntary_switches, "%s: involuntary", name);
        }
    }
    if (checks & STATUS_SIGIGN) {
        cr_expect_eq(got.has_signals_ignored, expected->has_signals_ignored, "%s: has_signals_ignored", name);
        if (expected->has_signals_ignored)
            cr_expect_eq(got.signals_ignored, expected->signals_ignored, "%s: signals_ignored %#llx", name,
                         (unsigned long long)got.signals_ignored);
        cr_expect_eq(got.has_signals_caught, expected->has_signals_caught, "%s: has_signals_caught", name);
        cr_expect_eq(got.signals_caught, expected->signals_caught, "%s: signals_caught %#llx", name,
                     (unsigned long long)got.signals_caught);
        cr_expect_eq(got.has_signals_blocked, expected->has_signals_blocked, "%s: has_signals_blocked", name);
        cr_expect_eq(got.signals_blocked, expected->signals_blocked, "%s: signals_blocked", name);
    }
    if (checks & STATUS_EUID) {
        cr_expect_eq(got.has_euid, expected->has_euid, "%s: has_euid", name);
        if (expected->has_euid)
            cr_expect_eq(got.euid, expected->euid, "%s: euid %u", name, (unsigned)got.euid);
    }
    if (checks & STATUS_NSPID) {
        cr_expect_eq(got.nspid_levels, expected->nspid_levels, "%s: nspid_levels %u", name, got.nspid_levels);
        cr_expect_eq(got.nspid_innermost, expected->nspid_innermost, "%s: nspid_innermost %d", name,
                     (int)got.nspid_innermost);
    }
}

Test(parse_status, own_status_file)
{
    char buffer[8192];
    ssize_t length = probe_read_file("/proc/self/status", buffer, sizeof buffer);
    cr_assert_gt(length, 0);
    struct probe_status status;
    cr_assert(probe_parse_status(buffer, (size_t)length, &status));
    cr_assert(status.has_tracer_pid);
    cr_assert(status.has_switches);
    cr_assert(status.has_euid);
    cr_assert_eq(status.euid, geteuid());
}

/* ---- probe_parse_sched --------------------------------------------------------------------------------------- */

#define SCHED_BEFORE_VALUE                                                                                           \
    "sleeper (5058, #threads: 1)\n"                                                                                   \
    "-------------------------------------------------------------------\n"                                           \
    "se.exec_start                                :         "
#define SCHED_TEXT                                                                                                   \
    SCHED_BEFORE_VALUE "75225.050915\n"                                                                               \
    "se.vruntime                                  :           142.697402\n"                                           \
    "se.sum_exec_runtime                          :             0.866288\n"                                           \
    "se.nr_migrations                             :                    2\n"                                           \
    "nr_switches                                  :                   51\n"                                           \
    "nr_voluntary_switches                        :                   42\n"                                           \
    "nr_involuntary_switches                      :                    9\n"                                           \
    "se.load.weight                               :              1048576\n"                                           \
    "policy                                       :                    0\n"                                           \
    "prio                                         :                  120\n"                                           \
    "clock-delta                                  :                   70\n"
#define SCHED_VALUE_AT (sizeof SCHED_BEFORE_VALUE - 1)

enum sched_field {
    SCHED_EXEC_START = 1 << 0, /* has_exec_start, exec_start_ms */
    SCHED_RUNTIME = 1 << 1,    /* has_runtime, sum_exec_runtime_ms */
    SCHED_SWITCHES = 1 << 2,   /* has_switches, both counters */
};

static const struct {
    const char *name;
    const char *text;
    size_t length; /* 0: the whole text */
    enum outcome outcome;
    unsigned checks;
    struct probe_sched expected;
} sched_cases[] = {
    { "a real-looking file", SCHED_TEXT, 0, PARSED, SCHED_EXEC_START | SCHED_RUNTIME | SCHED_SWITCHES,
      { .has_exec_start = true, .exec_start_ms = 75225.050915, .has_runtime = true, .sum_exec_runtime_ms = 0.866288,
        .has_switches = true, .voluntary_switches = 42, .involuntary_switches = 9 } },
    { "a fraction with leading zeros, and an integer", "se.exec_start : 12.000001\nse.sum_exec_runtime : 7\n", 0,
      PARSED, SCHED_EXEC_START | SCHED_RUNTIME,
      { .has_exec_start = true, .exec_start_ms = 12.000001, .has_runtime = true, .sum_exec_runtime_ms = 7.0 } },
    { "a negative value", "se.exec_start : -3.500000\n", 0, PARSED, SCHED_EXEC_START,
      { .has_exec_start = true, .exec_start_ms = -3.5 } },
    { "missing keys: the switches need both counters",
      "se.exec_start                                :         75225.050915\n"
      "nr_voluntary_switches                        :                   42\n",
      0, PARSED, SCHED_EXEC_START | SCHED_RUNTIME | SCHED_SWITCHES,
      { .has_exec_start = true, .exec_start_ms = 75225.050915 } },
    { "no known key", "se.vruntime : 1.0\npolicy : 0\n", 0, REFUSED,
      SCHED_EXEC_START | SCHED_RUNTIME | SCHED_SWITCHES },
    { "a key that is a prefix of another does not match",
      "se.exec_start_time                           :                 1.5\n"
      "se.sum_exec_runtime_total                    :                 2.5\n"
      "nr_voluntary_switches_total                  :                   3\n"
      "nr_involuntary_switches                      :                   4\n",
      0, REFUSED, SCHED_EXEC_START | SCHED_RUNTIME | SCHED_SWITCHES },
    { "cut before the value: nothing", SCHED_TEXT, SCHED_VALUE_AT, REFUSED, 0 },
    { "cut inside the whole part", SCHED_TEXT, SCHED_VALUE_AT + 3, PARSED, SCHED_EXEC_START | SCHED_RUNTIME,
      { .has_exec_start = true, .exec_start_ms = 752.0 } },
    { "cut inside the fraction", SCHED_TEXT, SCHED_VALUE_AT + 8, PARSED, SCHED_EXEC_START,
      { .has_exec_start = true, .exec_start_ms = 75225.05 } },
    { "a decimal point with no digits after it is no number", SCHED_TEXT, SCHED_VALUE_AT + 6, REFUSED, 0 },
    { "empty input", "", 0, REFUSED, 0 },
    { "not numbers", "se.exec_start : abc\nse.sum_exec_runtime : .5\n", 0, REFUSED, 0 },
};

/* Decimal fractions in binary: equal to 12 significant digits, as exact as the values the kernel prints */
static bool about(double got, double expected)
{
    double difference = got > expected ? got - expected : expected - got;
    double scale = expected < -1.0 ? -expected : expected > 1.0 ? expected : 1.0;
    return difference <= 1e-12 * scale;
}

TABLE_OF_CASES(parse_sched, sched_cases)

ParameterizedTest(size_t *index, parse_sched, cases)
{
    const char *name = sched_cases[*index].name;
    unsigned checks = sched_cases[*index].checks;
    const struct probe_sched *expected = &sched_cases[*index].expected;
    struct probe_sched got;
    bool parsed = probe_parse_sched(sched_cases[*index].text,
                                    text_length(sched_cases[*index].text, sched_cases[*index].length), &got);
    expect_outcome(name, parsed, sched_cases[*index].outcome);
    if (checks & SCHED_EXEC_START) {
        cr_expect_eq(got.has_exec_start, expected->has_exec_start, "%s: has_exec_start", name);
        if (expected->has_exec_start)
            cr_expect(about(got.exec_start_ms, expected->exec_start_ms), "%s: exec_start_ms %.9f", name,
                      got.exec_start_ms);
    }
    if (checks & SCHED_RUNTIME) {
        cr_expect_eq(got.has_runtime, expected->has_runtime, "%s: has_runtime", name);
        if (expected->has_runtime)
            cr_expect(about(got.sum_exec_runtime_ms, expected->sum_exec_runtime_ms), "%s: sum_exec_runtime_ms %.9f",
                      name, got.sum_exec_runtime_ms);
    }
    if (checks & SCHED_SWITCHES) {
        cr_expect_eq(got.has_switches, expected->has_switches, "%s: has_switches", name);
        if (expected->has_switches) {
            cr_expect_eq(got.voluntary_switches, expected->voluntary_switches, "%s: voluntary", name);
            cr_expect_eq(got.involuntary_switches, expected->involuntary_switches, "%s: involuntary", name);
        }
    }
}

/* ---- probe_parse_syscall ------------------------------------------------------------------------------------- */

enum syscall_field {
    SYSCALL_STATE = 1 << 0,
    SYSCALL_NR = 1 << 1,
    SYSCALL_ARGS = 1 << 2, /* all six */
    SYSCALL_SP = 1 << 3,
    SYSCALL_PC = 1 << 4,
    SYSCALL_NO_NAME = 1 << 5, /* the parser leaves `name` to the caller: NULL */
};

static const struct {
    const char *name;
    const char *text;
    size_t length; /* 0: the whole text */
    enum outcome outcome;
    unsigned checks;
    struct hd_syscall expected;
} syscall_cases[] = {
    { "running", "running", 0, PARSED, SYSCALL_STATE | SYSCALL_NO_NAME, { .state = HD_SYSCALL_RUNNING } },
    { "running with a newline", "running\n", 0, PARSED, SYSCALL_STATE, { .state = HD_SYSCALL_RUNNING } },
    { "running with a suffix is not running", "runningx\n", 0, REFUSED, 0 },
    { "running and a number is not running", "running 1\n", 0, REFUSED, 0 },
    { "a prefix of running is not running", "runnin", 0, REFUSED, 0 },
    { "not in a system call", "-1 0x7ffd 0x7f12\n", 0, PARSED, SYSCALL_STATE | SYSCALL_NR | SYSCALL_SP | SYSCALL_PC,
      { .state = HD_SYSCALL_NONE, .nr = -1, .stack_pointer = 0x7ffd, .program_counter = 0x7f12 } },
    { "in a system call", "202 0x55d2a0c4e040 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2\n", 0, PARSED,
      SYSCALL_STATE | SYSCALL_NR | SYSCALL_ARGS | SYSCALL_SP | SYSCALL_PC | SYSCALL_NO_NAME,
      { .state = HD_SYSCALL_IN, .nr = 202, .args = { 0x55d2a0c4e040ULL, 0x80, 0x2, 0, 0, 0 },
        .stack_pointer = 0x7ffd1, .program_counter = 0x7f2 } },
    { "full-width values",
      "0 0xffffffffffffffff 0xABCDEF 0x7fffffffffffffff 0x1 0x2 0x3 0x7ffe6105a6c8 0x7f1e20ddd2ad", 0, PARSED,
      SYSCALL_STATE | SYSCALL_NR | SYSCALL_ARGS | SYSCALL_SP | SYSCALL_PC,
      { .state = HD_SYSCALL_IN, .nr = 0, .args = { UINT64_MAX, 0xabcdef, 0x7fffffffffffffffULL, 1, 2, 3 },
        .stack_pointer = 0x7ffe6105a6c8ULL, .program_counter = 0x7f1e20ddd2adULL } },
    { "a call without its pc", "202 0x55d2a0c4e040 0x80 0x2 0x0 0x0 0x0 0x7ffd1\n", 0, REFUSED, SYSCALL_STATE,
      { .state = HD_SYSCALL_UNREAD } },
    { "no call, without its pc", "-1 0x7ffd\n", 0, REFUSED, 0 },
    { "a number alone", "202", 0, REFUSED, 0 },
    { "-1 alone", "-1", 0, REFUSED, 0 },
    { "one field too many", "202 0x55d2a0c4e040 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2 0x9\n", 0, REFUSED, SYSCALL_STATE,
      { .state = HD_SYSCALL_UNREAD } },
    { "junk after the pc", "202 0x55d2a0c4e040 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2zz\n", 0, REFUSED, 0 },
    { "no call, one field too many", "-1 0x7ffd 0x7f12 0x1\n", 0, REFUSED, 0 },
    { "not hex", "202 0xg 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2\n", 0, REFUSED, 0 },
    { "an argument past 64 bits", "202 0x1ffffffffffffffff 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2\n", 0, REFUSED,
      SYSCALL_STATE, { .state = HD_SYSCALL_UNREAD } },
    { "a pc past 64 bits", "-1 0x7ffd 0x1ffffffffffffffff\n", 0, REFUSED, 0 },
    { "a number past 64 bits", "99999999999999999999 0x1 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2\n", 0, REFUSED, 0 },
    { "only \"-1 0x7ffd\" lies within length", "-1 0x7ffd 0x7f12\n", 9, REFUSED, 0 },
    { "\"runn\" is not running, however the buffer goes on", "running", 4, REFUSED, 0 },
    { "empty", "", 0, REFUSED, SYSCALL_STATE | SYSCALL_NR, { .state = HD_SYSCALL_UNREAD, .nr = -1 } },
    { "a newline alone", "\n", 0, REFUSED, 0 },
    { "spaces", "   \n", 0, REFUSED, 0 },
};

TABLE_OF_CASES(parse_syscall, syscall_cases)

ParameterizedTest(size_t *index, parse_syscall, cases)
{
    const char *name = syscall_cases[*index].name;
    unsigned checks = syscall_cases[*index].checks;
    const struct hd_syscall *expected = &syscall_cases[*index].expected;
    struct hd_syscall got;
    bool parsed = probe_parse_syscall(syscall_cases[*index].text,
                                      text_length(syscall_cases[*index].text, syscall_cases[*index].length), &got);
    expect_outcome(name, parsed, syscall_cases[*index].outcome);
    if (checks & SYSCALL_STATE)
        cr_expect_eq(got.state, expected->state, "%s: state %d", name, (int)got.state);
    if (checks & SYSCALL_NR)
        cr_expect_eq(got.nr, expected->nr, "%s: nr %ld", name, (long)got.nr);
    for (size_t a = 0; (checks & SYSCALL_ARGS) && a < 6; a++)
        cr_expect_eq(got.args[a], expected->args[a], "%s: args[%zu] %#llx", name, a, (unsigned long long)got.args[a]);
    if (checks & SYSCALL_SP)
        cr_expect_eq(got.stack_pointer, expected->stack_pointer, "%s: sp %#llx", name,
                     (unsigned long long)got.stack_pointer);
    if (checks & SYSCALL_PC)
        cr_expect_eq(got.program_counter, expected->program_counter, "%s: pc %#llx", name,
                     (unsigned long long)got.program_counter);
    if (checks & SYSCALL_NO_NAME)
        cr_expect_null(got.name, "%s: name", name);
}

/* ---- probe_parse_cmdline ------------------------------------------------------------------------------------- */

/* Bytes with NULs in them, and their length */
#define BYTES(literal) .bytes = literal, .length = sizeof literal - 1

static const struct {
    const char *name;
    const char *bytes;
    size_t length;
    size_t max_args;
    size_t argc;
    const char *argv[4];
    bool truncated;
} cmdline_cases[] = {
    { "two arguments", BYTES("a\0b\0"), 64, 2, { "a", "b" }, false },
    { "realistic", BYTES("/usr/bin/python3\0-m\0http.server\0" "8000\0"), 64, 4,
      { "/usr/bin/python3", "-m", "http.server", "8000" }, false },
    { "empty: a kernel thread's", BYTES(""), 64, 0, { NULL }, false },
    { "the last argument without its NUL", BYTES("a\0bc"), 64, 2, { "a", "bc" }, false },
    { "a title rewritten setproctitle() style, no NUL at all", BYTES("nginx: worker process"), 64, 1,
      { "nginx: worker process" }, false },
    { "consecutive NULs give empty arguments", BYTES("a\0\0b\0\0"), 64, 4, { "a", "", "b", "" }, false },
    { "a single NUL", BYTES("\0"), 64, 1, { "" }, false },
    { "max_args cuts it short", BYTES("a\0b\0c\0d\0"), 2, 2, { "a", "b" }, true },
    { "exactly max_args is not cut", BYTES("a\0b\0c"), 3, 3, { "a", "b", "c" }, false },
    { "max_args 0", BYTES("a\0"), 0, 0, { NULL }, true },
    { "hostile bytes are kept raw", BYTES("\x1b[31m\0\n\xff\0"), 64, 2, { "\x1b[31m", "\n\xff" }, false },
};

TABLE_OF_CASES(parse_cmdline, cmdline_cases)

ParameterizedTest(size_t *index, parse_cmdline, cases)
{
    const char *name = cmdline_cases[*index].name;
    size_t expected_argc = cmdline_cases[*index].argc;
    bool expected_truncated = cmdline_cases[*index].truncated;
    char **argv = NULL;
    size_t argc = 99;
    bool truncated = !expected_truncated; /* the parser must set it either way */
    cr_assert(probe_parse_cmdline(cmdline_cases[*index].bytes, cmdline_cases[*index].length,
                                  cmdline_cases[*index].max_args, &argv, &argc, &truncated),
              "%s", name);
    cr_assert_not_null(argv, "%s: argv", name);
    cr_expect_eq(truncated, expected_truncated, "%s: truncated", name);
    cr_assert_eq(argc, expected_argc, "%s: argc %zu", name, argc);
    for (size_t i = 0; i < argc; i++)
        cr_expect_str_eq(argv[i], cmdline_cases[*index].argv[i], "%s: argv[%zu]", name, i);
    cr_expect_null(argv[argc], "%s: argv[argc] ends the array", name);
    for (size_t i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

/* ---- probe_read_file ----------------------------------------------------------------------------------------- */

static char temp_path[64];

static void create_temp(const char *content, size_t length)
{
    strcpy(temp_path, "/tmp/hangdoc-test-procfs-XXXXXX");
    int fd = mkstemp(temp_path);
    cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
    size_t written = 0;
    while (written < length) {
        ssize_t got = write(fd, content + written, length - written);
        cr_assert_gt(got, 0, "write: %s", strerror(errno));
        written += (size_t)got;
    }
    close(fd);
}

static void remove_temp(void)
{
    if (temp_path[0])
        unlink(temp_path);
    temp_path[0] = '\0';
}

static void setup_small(void) { create_temp("hello world\n", 12); }

Test(read_file, whole_file, .init = setup_small, .fini = remove_temp)
{
    char buffer[64];
    memset(buffer, 'X', sizeof buffer);
    cr_assert_eq(probe_read_file(temp_path, buffer, sizeof buffer), 12);
    cr_assert_str_eq(buffer, "hello world\n");
}

Test(read_file, cap_smaller_than_file, .init = setup_small, .fini = remove_temp)
{
    char buffer[64];
    memset(buffer, 'X', sizeof buffer);
    cr_assert_eq(probe_read_file(temp_path, buffer, 6), 5);
    cr_assert_str_eq(buffer, "hello");
    cr_assert_eq(buffer[6], 'X'); /* nothing written past cap */
}

Test(read_file, cap_equal_to_file_length, .init = setup_small, .fini = remove_temp)
{
    char buffer[12];
    cr_assert_eq(probe_read_file(temp_path, buffer, sizeof buffer), 11);
    cr_assert_str_eq(buffer, "hello world");
}

Test(read_file, cap_one, .init = setup_small, .fini = remove_temp)
{
    char buffer[4] = "XXX";
    cr_assert_eq(probe_read_file(temp_path, buffer, 1), 0);
    cr_assert_eq(buffer[0], '\0');
    cr_assert_eq(buffer[1], 'X');
}

Test(read_file, cap_zero, .init = setup_small, .fini = remove_temp)
{
    char buffer[4] = "XXX";
    cr_assert_eq(probe_read_file(temp_path, buffer, 0), -EINVAL);
    cr_assert_eq(buffer[0], 'X');
}

static void setup_empty(void) { create_temp("", 0); }

Test(read_file, empty_file, .init = setup_empty, .fini = remove_temp)
{
    char buffer[8] = "XXXXXXX";
    cr_assert_eq(probe_read_file(temp_path, buffer, sizeof buffer), 0);
    cr_assert_str_eq(buffer, "");
}

#define LARGE_SIZE 100000
static void setup_large(void)
{
    char *content = malloc(LARGE_SIZE);
    cr_assert_not_null(content);
    for (size_t i = 0; i < LARGE_SIZE; i++)
        content[i] = (char)('a' + i % 26);
    create_temp(content, LARGE_SIZE);
    free(content);
}

Test(read_file, large_file_in_several_reads, .init = setup_large, .fini = remove_temp)
{
    char *buffer = malloc(LARGE_SIZE + 100);
    cr_assert_not_null(buffer);
    cr_assert_eq(probe_read_file(temp_path, buffer, LARGE_SIZE + 100), LARGE_SIZE);
    cr_assert_eq(buffer[LARGE_SIZE], '\0');
    for (size_t i = 0; i < LARGE_SIZE; i++)
        cr_assert_eq(buffer[i], (char)('a' + i % 26), "byte %zu", i);
    cr_assert_eq(probe_read_file(temp_path, buffer, 1001), 1000);
    cr_assert_eq(strlen(buffer), 1000);
    free(buffer);
}

Test(read_file, missing_file)
{
    char buffer[16];
    cr_assert_eq(probe_read_file("/tmp/hangdoc-test-procfs-does-not-exist/nothing", buffer, sizeof buffer),
                 -ENOENT);
}

Test(read_file, directory)
{
    char buffer[16];
    cr_assert_eq(probe_read_file("/tmp", buffer, sizeof buffer), -EISDIR);
}

Test(read_file, proc_file)
{
    char buffer[64];
    ssize_t length = probe_read_file("/proc/self/comm", buffer, sizeof buffer);
    cr_assert_gt(length, 0);
    cr_assert_eq(buffer[length - 1], '\n');
    cr_assert_eq(strlen(buffer), (size_t)length);
}
