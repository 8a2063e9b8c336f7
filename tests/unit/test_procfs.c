/* Unit tests for the /proc parsers and the bounded file reader (probe/procfs.h). */
#include <criterion/criterion.h>

#include "../../probe/procfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- probe_parse_stat ---------------------------------------------------------------------------------------- */

/* Fields 10..51 of a real /proc/<pid>/stat line (42 of them), between flags (9) and exit_code (52). */
#define STAT_FIELDS_10_TO_51                                                                                          \
    "98 0 1 0 0 0 0 0 20 0 1 0 79329 3133440 383 18446744073709551615 94232362471424 94232362491305 "                 \
    "140735833835760 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94232362507312 94232362508928 94232762966016 "                  \
    "140735833844354 140735833844374 140735833844374 140735833845739"

/* A complete 52-field stat line with the given comm (raw bytes, no NUL inside), flags and exit code. */
static size_t stat_line(char *buffer, size_t cap, const char *comm, char state, int ppid, unsigned long flags,
                        int exit_code)
{
    int written = snprintf(buffer, cap, "5057 (%s) %c %d 5048 3915 0 -1 %lu " STAT_FIELDS_10_TO_51 " %d\n", comm,
                           state, ppid, flags, exit_code);
    cr_assert(written > 0 && (size_t)written < cap);
    return (size_t)written;
}

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

Test(parse_stat, helper_line_has_52_fields)
{
    char line[1024];
    stat_line(line, sizeof line, "cat", 'S', 1, 4194304, 0);
    cr_assert_eq(count_fields(line), 52);
}

Test(parse_stat, normal_line)
{
    char line[1024];
    size_t length = stat_line(line, sizeof line, "cat", 'R', 5048, 4194304, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_str_eq(stat.comm, "cat");
    cr_assert_eq(stat.state, 'R');
    cr_assert_eq(stat.ppid, 5048);
    cr_assert_eq(stat.flags, 4194304UL);
    cr_assert_eq(stat.flags & PROBE_PF_KTHREAD, 0UL);
    cr_assert(stat.has_exit_code);
    cr_assert_eq(stat.exit_code, 0);
    cr_assert(stat.has_times);
    cr_assert_eq(stat.cpu_ticks, 0);
    cr_assert(stat.has_start);
    cr_assert_eq(stat.thread_count, 1);
    cr_assert_eq(stat.start_ticks, 79329);
    cr_assert_eq(stat.processor, 1);
}

/* utime 14, stime 15, num_threads 20, starttime 22 and processor 39 from a line with distinct values; the
 * unsigned 64-bit fields between them (rsslim of RLIM_INFINITY) are skipped, not parsed as signed. */
Test(parse_stat, times_threads_start_and_processor)
{
    const char *line = "77 (python3) S 1 77 77 0 -1 4194560 10 0 0 0 1234 567 0 0 20 0 17 0 987654321 1 2 "
                       "18446744073709551615 1 2 3 0 0 0 0 0 0 0 0 0 17 13 0 0 0 0 0 1 2 3 4 5 6 7 0\n";
    struct probe_stat stat;
    cr_assert_eq(count_fields(line), 52);
    cr_assert(probe_parse_stat(line, strlen(line), &stat));
    cr_assert_eq(stat.cpu_ticks, 1234 + 567);
    cr_assert_eq(stat.thread_count, 17);
    cr_assert_eq(stat.start_ticks, 987654321ULL);
    cr_assert_eq(stat.processor, 13);
    cr_assert(stat.has_exit_code);
}

Test(parse_stat, cut_after_the_times_keeps_them)
{
    const char *line = "77 (python3) S 1 77 77 0 -1 4194560 10 0 0 0 1234 567 0 0";
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, strlen(line), &stat));
    cr_assert(stat.has_times);
    cr_assert_eq(stat.cpu_ticks, 1801);
    cr_assert_not(stat.has_start);
    cr_assert_eq(stat.processor, -1);
    cr_assert_not(stat.has_exit_code);
}

Test(parse_stat, comm_with_spaces)
{
    char line[1024];
    size_t length = stat_line(line, sizeof line, "Web Content", 'S', 77, 0, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_str_eq(stat.comm, "Web Content");
    cr_assert_eq(stat.state, 'S');
    cr_assert_eq(stat.ppid, 77);
    cr_assert(stat.has_exit_code);
}

Test(parse_stat, comm_with_closing_parenthesis_and_fake_fields)
{
    /* The comm "x) S 1 (y" tries to end the field early and fake state S and ppid 1. */
    char line[1024];
    size_t length = stat_line(line, sizeof line, "x) S 1 (y", 'D', 4242, 64, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_str_eq(stat.comm, "x) S 1 (y");
    cr_assert_eq(stat.state, 'D');
    cr_assert_eq(stat.ppid, 4242);
    cr_assert_eq(stat.flags, 64UL);
    cr_assert(stat.has_exit_code);
}

Test(parse_stat, comm_made_of_parentheses)
{
    char line[1024];
    size_t length = stat_line(line, sizeof line, ")) S 1 ", 'T', 9, 0, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_str_eq(stat.comm, ")) S 1 ");
    cr_assert_eq(stat.state, 'T');
    cr_assert_eq(stat.ppid, 9);
}

Test(parse_stat, comm_with_newline)
{
    char line[1024];
    size_t length = stat_line(line, sizeof line, "a\nb", 'S', 3, 0, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_str_eq(stat.comm, "a\nb");
    cr_assert_eq(stat.state, 'S');
    cr_assert_eq(stat.ppid, 3);
    cr_assert(stat.has_exit_code);
}

Test(parse_stat, empty_comm)
{
    char line[1024];
    size_t length = stat_line(line, sizeof line, "", 'S', 3, 0, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_str_eq(stat.comm, "");
    cr_assert_eq(stat.state, 'S');
}

Test(parse_stat, long_comm_is_truncated)
{
    char line[1024];
    size_t length = stat_line(line, sizeof line, "abcdefghijklmnopqrstuvwxyz", 'S', 3, 0, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_eq(strlen(stat.comm), HD_COMM_MAX - 1);
    cr_assert_str_eq(stat.comm, "abcdefghijklmno");
    cr_assert_eq(stat.state, 'S');
    cr_assert_eq(stat.ppid, 3);
}

Test(parse_stat, comm_of_exactly_15_bytes)
{
    char line[1024];
    size_t length = stat_line(line, sizeof line, "abcdefghijklmno", 'S', 3, 0, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_str_eq(stat.comm, "abcdefghijklmno");
}

Test(parse_stat, kernel_thread_flags)
{
    char line[1024];
    /* kthreadd-style flags: PF_KTHREAD | PF_NOFREEZE | PF_FORKNOEXEC | PF_NO_SETAFFINITY... */
    unsigned long flags = 0x00208040UL;
    size_t length = stat_line(line, sizeof line, "kworker/0:1H", 'I', 2, flags, 0);
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_str_eq(stat.comm, "kworker/0:1H");
    cr_assert_eq(stat.state, 'I');
    cr_assert_eq(stat.ppid, 2);
    cr_assert_eq(stat.flags, flags);
    cr_assert_eq(stat.flags & PROBE_PF_KTHREAD, PROBE_PF_KTHREAD);
    cr_assert_eq(PROBE_PF_KTHREAD, 0x00200000UL);
}

Test(parse_stat, zombie_exit_code)
{
    char line[1024];
    size_t length = stat_line(line, sizeof line, "child", 'Z', 100, 4227148, 256); /* exit(1) */
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_eq(stat.state, 'Z');
    cr_assert(stat.has_exit_code);
    cr_assert_eq(stat.exit_code, 256);

    length = stat_line(line, sizeof line, "child", 'Z', 100, 4227148, 9); /* killed by SIGKILL */
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert(stat.has_exit_code);
    cr_assert_eq(stat.exit_code, 9);
}

Test(parse_stat, line_without_trailing_newline)
{
    char line[1024];
    size_t length = stat_line(line, sizeof line, "cat", 'S', 1, 0, 139);
    line[--length] = '\0';
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert(stat.has_exit_code);
    cr_assert_eq(stat.exit_code, 139);
}

Test(parse_stat, line_of_a_kernel_without_exit_code)
{
    /* 44 fields, as before Linux 3.3: no field 52 */
    const char *line = "5057 (cat) S 1 5048 3915 0 -1 4194304 98 0 1 0 0 0 0 0 20 0 1 0 79329 3133440 383 "
                       "18446744073709551615 94232362471424 94232362491305 140735833835760 0 0 0 0 0 0 0 0 0 17 1 "
                       "0 0 0 0 0\n";
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, strlen(line), &stat));
    cr_assert_eq(stat.flags, 4194304UL);
    cr_assert_not(stat.has_exit_code);
}

Test(parse_stat, truncated_line_keeps_comm_state_ppid)
{
    const char *line = "1234 (sleepy) S 42 1234";
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, strlen(line), &stat));
    cr_assert_str_eq(stat.comm, "sleepy");
    cr_assert_eq(stat.state, 'S');
    cr_assert_eq(stat.ppid, 42);
    cr_assert_eq(stat.flags, 0UL);
    cr_assert_not(stat.has_exit_code);
}

Test(parse_stat, truncated_after_flags)
{
    const char *line = "1234 (sleepy) S 42 1234 1234 0 -1 2097152 98 0 1";
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, strlen(line), &stat));
    cr_assert_eq(stat.ppid, 42);
    cr_assert_eq(stat.flags, 2097152UL);
    cr_assert_not(stat.has_exit_code);
}

Test(parse_stat, length_bounds_the_parse)
{
    /* The buffer holds a full line, but only the bytes up to the ppid are inside `length`. */
    char line[1024];
    stat_line(line, sizeof line, "cat", 'S', 42, 2097152, 7);
    size_t length = (size_t)(strstr(line, " 42 ") - line) + 3;
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, length, &stat));
    cr_assert_str_eq(stat.comm, "cat");
    cr_assert_eq(stat.ppid, 42);
    cr_assert_eq(stat.flags, 0UL);
    cr_assert_not(stat.has_exit_code);
}

Test(parse_stat, negative_ppid_field)
{
    /* ppid is a signed decimal; 0 for init and kthreadd */
    const char *line = "1 (systemd) S 0 1 1 0 -1 4194560";
    struct probe_stat stat;
    cr_assert(probe_parse_stat(line, strlen(line), &stat));
    cr_assert_eq(stat.ppid, 0);
    cr_assert_eq(stat.flags, 4194560UL);
}

Test(parse_stat, empty_input)
{
    struct probe_stat stat;
    cr_assert_not(probe_parse_stat("", 0, &stat));
    cr_assert_eq(stat.state, '?');
}

Test(parse_stat, no_parentheses)
{
    const char *line = "1234 cat S 1 1234 1234 0 -1 0";
    struct probe_stat stat;
    cr_assert_not(probe_parse_stat(line, strlen(line), &stat));
}

Test(parse_stat, only_opening_parenthesis)
{
    const char *line = "1234 (cat S 1 1234";
    struct probe_stat stat;
    cr_assert_not(probe_parse_stat(line, strlen(line), &stat));
}

Test(parse_stat, only_closing_parenthesis)
{
    const char *line = "1234 cat) S 1 1234";
    struct probe_stat stat;
    cr_assert_not(probe_parse_stat(line, strlen(line), &stat));
}

Test(parse_stat, parentheses_in_the_wrong_order)
{
    const char *line = "1234 )cat( S 1";
    struct probe_stat stat;
    cr_assert_not(probe_parse_stat(line, strlen(line), &stat));
}

Test(parse_stat, nothing_after_comm)
{
    const char *line = "1234 (cat)";
    struct probe_stat stat;
    cr_assert_not(probe_parse_stat(line, strlen(line), &stat));
    const char *spaces = "1234 (cat)    ";
    cr_assert_not(probe_parse_stat(spaces, strlen(spaces), &stat));
}

Test(parse_stat, state_without_ppid)
{
    const char *line = "1234 (cat) S";
    struct probe_stat stat;
    cr_assert_not(probe_parse_stat(line, strlen(line), &stat));
}

Test(parse_stat, garbage)
{
    struct probe_stat stat;
    const char *noise = "\xff\xfe\x01 garbage )( \x7f";
    cr_assert_not(probe_parse_stat(noise, strlen(noise), &stat));
    const char *not_a_number = "1234 (cat) S x 1 2";
    cr_assert_not(probe_parse_stat(not_a_number, strlen(not_a_number), &stat));
    const char *huge_ppid = "1234 (cat) S 99999999999999999999999 1 2";
    cr_assert_not(probe_parse_stat(huge_ppid, strlen(huge_ppid), &stat));
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
}

/* ---- probe_parse_status -------------------------------------------------------------------------------------- */

static const char status_text[] = "Name:\tcat\n"
                                  "Umask:\t0022\n"
                                  "State:\tS (sleeping)\n"
                                  "Tgid:\t5057\n"
                                  "Ngid:\t0\n"
                                  "Pid:\t5057\n"
                                  "PPid:\t5048\n"
                                  "TracerPid:\t4321\n"
                                  "Uid:\t1000\t1000\t1000\t1000\n"
                                  "Threads:\t1\n"
                                  "SigBlk:\t0000000000000000\n"
                                  "SigIgn:\t0000000000010004\n"
                                  "voluntary_ctxt_switches:\t12\n"
                                  "nonvoluntary_ctxt_switches:\t3\n";

Test(parse_status, tracer_and_switches)
{
    struct probe_status status;
    cr_assert(probe_parse_status(status_text, strlen(status_text), &status));
    cr_assert(status.has_tracer_pid);
    cr_assert_eq(status.tracer_pid, 4321);
    cr_assert(status.has_switches);
    cr_assert_eq(status.voluntary_switches, 12);
    cr_assert_eq(status.involuntary_switches, 3);
    cr_assert(status.has_signals_ignored);
    cr_assert_eq(status.signals_ignored, 0x10004, "SIGCHLD (bit 16) and SIGINT (bit 2) ignored");
}

/* NSpid: the id in each PID namespace from /proc's down to the task's own; hostile lines stay bounded */
Test(parse_status, pid_namespace_ids)
{
    static const struct {
        const char *text;
        unsigned levels;
        pid_t innermost;
    } cases[] = {
        { "Name:\tcat\nNSpid:\t8696\n", 1, 8696 },
        { "Name:\tcat\nNSpid:\t8696\t2\nNSsid:\t1\n", 2, 2 },
        { "NSpid:\t8696\t40\t3", 3, 3 },                 /* nested twice, no final newline */
        { "NSpid:\t8696\t99999999999\t3\n", 1, 8696 },  /* past a pid's range: stops there */
        { "NSpid:\tx\n", 0, 0 },
        { "Name:\tcat\n", 0, 0 },                         /* kernels before 4.1 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct probe_status status;
        probe_parse_status(cases[i].text, strlen(cases[i].text), &status);
        cr_assert_eq(status.nspid_levels, cases[i].levels, "case %zu", i);
        cr_assert_eq(status.nspid_innermost, cases[i].innermost, "case %zu", i);
    }
}

Test(parse_status, not_traced)
{
    const char *text = "Name:\tcat\nTracerPid:\t0\n";
    struct probe_status status;
    cr_assert(probe_parse_status(text, strlen(text), &status));
    cr_assert(status.has_tracer_pid);
    cr_assert_eq(status.tracer_pid, 0);
    cr_assert_not(status.has_switches);
}

Test(parse_status, tracer_pid_absent)
{
    const char *text = "Name:\tcat\nPPid:\t1\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t6\n";
    struct probe_status status;
    cr_assert(probe_parse_status(text, strlen(text), &status));
    cr_assert_not(status.has_tracer_pid);
    cr_assert(status.has_switches);
    cr_assert_eq(status.voluntary_switches, 5);
    cr_assert_eq(status.involuntary_switches, 6);
}

Test(parse_status, last_line_without_newline)
{
    const char *text = "TracerPid:\t0\nvoluntary_ctxt_switches:\t18446744073709551615\nnonvoluntary_ctxt_switches:\t7";
    struct probe_status status;
    cr_assert(probe_parse_status(text, strlen(text), &status));
    cr_assert(status.has_switches);
    cr_assert_eq(status.voluntary_switches, UINT64_MAX);
    cr_assert_eq(status.involuntary_switches, 7);
}

Test(parse_status, only_one_switch_counter)
{
    /* "nonvoluntary_ctxt_switches:" ends with "voluntary_ctxt_switches:", but the key must start its line. */
    const char *text = "TracerPid:\t0\nnonvoluntary_ctxt_switches:\t3\n";
    struct probe_status status;
    cr_assert(probe_parse_status(text, strlen(text), &status));
    cr_assert_not(status.has_switches);
}

Test(parse_status, key_that_is_a_prefix_of_another_does_not_match)
{
    const char *text = "TracerPidNs:\t99\n"
                       "TracerPid_extra:\t98\n"
                       "voluntary_ctxt_switches_total:\t97\n"
                       "nonvoluntary_ctxt_switches:\t3\n";
    struct probe_status status;
    cr_assert_not(probe_parse_status(text, strlen(text), &status));
    cr_assert_not(status.has_tracer_pid);
    cr_assert_not(status.has_switches);
}

Test(parse_status, key_must_start_the_line)
{
    const char *text = "Name:\tx TracerPid:\t5\n  TracerPid:\t6\n";
    struct probe_status status;
    cr_assert_not(probe_parse_status(text, strlen(text), &status));
    cr_assert_not(status.has_tracer_pid);
}

Test(parse_status, tracer_pid_out_of_range)
{
    const char *text = "TracerPid:\t4294967296\n";
    struct probe_status status;
    cr_assert_not(probe_parse_status(text, strlen(text), &status));
    cr_assert_not(status.has_tracer_pid);
}

Test(parse_status, empty_input)
{
    struct probe_status status;
    cr_assert_not(probe_parse_status("", 0, &status));
    cr_assert_not(status.has_tracer_pid);
    cr_assert_not(status.has_switches);
}

Test(parse_status, truncated_input)
{
    struct probe_status status;
    /* cut right after the key: no value */
    size_t cut = (size_t)(strstr(status_text, "TracerPid:") - status_text) + strlen("TracerPid:");
    cr_assert_not(probe_parse_status(status_text, cut, &status));
    cr_assert_not(status.has_tracer_pid);
    /* cut inside the value: only the bytes within length count */
    cr_assert(probe_parse_status(status_text, cut + 3, &status));
    cr_assert(status.has_tracer_pid);
    cr_assert_eq(status.tracer_pid, 43);
    cr_assert_not(status.has_switches);
    /* cut inside a key */
    const char *text = "TracerPid:\t1\nvoluntary_ctxt_switches:\t5\nnonvol";
    cr_assert(probe_parse_status(text, strlen(text), &status));
    cr_assert_not(status.has_switches);
}

Test(parse_status, value_not_a_number)
{
    const char *text = "TracerPid:\tnone\nvoluntary_ctxt_switches:\t\nnonvoluntary_ctxt_switches:\t3\n";
    struct probe_status status;
    cr_assert_not(probe_parse_status(text, strlen(text), &status));
}

Test(parse_status, effective_uid_is_the_second_number)
{
    const char *text = "Name:\tsu\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n";
    struct probe_status status;
    cr_assert(probe_parse_status(text, strlen(text), &status));
    cr_assert(status.has_euid);
    cr_assert_eq(status.euid, 0);
    const char *one_number = "Uid:\t1000\n";
    cr_assert_not(probe_parse_status(one_number, strlen(one_number), &status));
    cr_assert_not(status.has_euid);
    const char *too_big = "Uid:\t1\t99999999999\n";
    probe_parse_status(too_big, strlen(too_big), &status);
    cr_assert_not(status.has_euid);
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

static const char sched_text[] = "sleeper (5058, #threads: 1)\n"
                                 "-------------------------------------------------------------------\n"
                                 "se.exec_start                                :         75225.050915\n"
                                 "se.vruntime                                  :           142.697402\n"
                                 "se.sum_exec_runtime                          :             0.866288\n"
                                 "se.nr_migrations                             :                    2\n"
                                 "nr_switches                                  :                   51\n"
                                 "nr_voluntary_switches                        :                   42\n"
                                 "nr_involuntary_switches                      :                    9\n"
                                 "se.load.weight                               :              1048576\n"
                                 "policy                                       :                    0\n"
                                 "prio                                         :                  120\n"
                                 "clock-delta                                  :                   70\n";

Test(parse_sched, real_looking_file)
{
    struct probe_sched sched;
    cr_assert(probe_parse_sched(sched_text, strlen(sched_text), &sched));
    cr_assert(sched.has_exec_start);
    cr_assert_float_eq(sched.exec_start_ms, 75225.050915, 1e-9);
    cr_assert(sched.has_runtime);
    cr_assert_float_eq(sched.sum_exec_runtime_ms, 0.866288, 1e-12);
    cr_assert(sched.has_switches);
    cr_assert_eq(sched.voluntary_switches, 42);
    cr_assert_eq(sched.involuntary_switches, 9);
}

Test(parse_sched, fraction_with_leading_zeros_and_integers)
{
    const char *text = "se.exec_start : 12.000001\nse.sum_exec_runtime : 7\n";
    struct probe_sched sched;
    cr_assert(probe_parse_sched(text, strlen(text), &sched));
    cr_assert_float_eq(sched.exec_start_ms, 12.000001, 1e-12);
    cr_assert_float_eq(sched.sum_exec_runtime_ms, 7.0, 1e-12);
}

Test(parse_sched, negative_value)
{
    const char *text = "se.exec_start : -3.500000\n";
    struct probe_sched sched;
    cr_assert(probe_parse_sched(text, strlen(text), &sched));
    cr_assert_float_eq(sched.exec_start_ms, -3.5, 1e-12);
}

Test(parse_sched, missing_keys)
{
    const char *text = "se.exec_start                                :         75225.050915\n"
                       "nr_voluntary_switches                        :                   42\n";
    struct probe_sched sched;
    cr_assert(probe_parse_sched(text, strlen(text), &sched));
    cr_assert(sched.has_exec_start);
    cr_assert_not(sched.has_runtime);
    cr_assert_not(sched.has_switches); /* needs both counters */
}

Test(parse_sched, no_known_key)
{
    const char *text = "se.vruntime : 1.0\npolicy : 0\n";
    struct probe_sched sched;
    cr_assert_not(probe_parse_sched(text, strlen(text), &sched));
    cr_assert_not(sched.has_exec_start);
    cr_assert_not(sched.has_runtime);
    cr_assert_not(sched.has_switches);
}

Test(parse_sched, key_that_is_a_prefix_of_another_does_not_match)
{
    const char *text = "se.exec_start_time                           :                 1.5\n"
                       "se.sum_exec_runtime_total                    :                 2.5\n"
                       "nr_voluntary_switches_total                  :                   3\n"
                       "nr_involuntary_switches                      :                   4\n";
    struct probe_sched sched;
    cr_assert_not(probe_parse_sched(text, strlen(text), &sched));
    cr_assert_not(sched.has_exec_start);
    cr_assert_not(sched.has_runtime);
    cr_assert_not(sched.has_switches);
}

Test(parse_sched, truncated)
{
    struct probe_sched sched;
    const char *key = strstr(sched_text, "se.exec_start");
    size_t value = (size_t)(strstr(key, "75225") - sched_text);
    /* cut before the value: nothing */
    cr_assert_not(probe_parse_sched(sched_text, value, &sched));
    /* cut inside the whole part, then inside the fraction */
    cr_assert(probe_parse_sched(sched_text, value + 3, &sched));
    cr_assert_float_eq(sched.exec_start_ms, 752.0, 1e-12);
    cr_assert_not(sched.has_runtime);
    cr_assert(probe_parse_sched(sched_text, value + 8, &sched));
    cr_assert_float_eq(sched.exec_start_ms, 75225.05, 1e-9);
    /* a decimal point with no digits after it is not a number */
    cr_assert_not(probe_parse_sched(sched_text, value + 6, &sched));
}

Test(parse_sched, empty_input)
{
    struct probe_sched sched;
    cr_assert_not(probe_parse_sched("", 0, &sched));
}

Test(parse_sched, not_a_number)
{
    const char *text = "se.exec_start : abc\nse.sum_exec_runtime : .5\n";
    struct probe_sched sched;
    cr_assert_not(probe_parse_sched(text, strlen(text), &sched));
}

/* ---- probe_parse_syscall ------------------------------------------------------------------------------------- */

Test(parse_syscall, running)
{
    struct hd_syscall syscall;
    cr_assert(probe_parse_syscall("running", 7, &syscall));
    cr_assert_eq(syscall.state, HD_SYSCALL_RUNNING);
    cr_assert_null(syscall.name);
}

Test(parse_syscall, running_with_newline)
{
    struct hd_syscall syscall;
    cr_assert(probe_parse_syscall("running\n", 8, &syscall));
    cr_assert_eq(syscall.state, HD_SYSCALL_RUNNING);
}

Test(parse_syscall, running_with_suffix_is_not_running)
{
    struct hd_syscall syscall;
    cr_assert_not(probe_parse_syscall("runningx\n", 9, &syscall));
    cr_assert_not(probe_parse_syscall("running 1\n", 10, &syscall));
    cr_assert_not(probe_parse_syscall("runnin", 6, &syscall));
}

Test(parse_syscall, not_in_a_syscall)
{
    const char *text = "-1 0x7ffd 0x7f12\n";
    struct hd_syscall syscall;
    cr_assert(probe_parse_syscall(text, strlen(text), &syscall));
    cr_assert_eq(syscall.state, HD_SYSCALL_NONE);
    cr_assert_eq(syscall.nr, -1);
    cr_assert_eq(syscall.stack_pointer, 0x7ffd);
    cr_assert_eq(syscall.program_counter, 0x7f12);
}

Test(parse_syscall, full_line)
{
    const char *text = "202 0x55d2a0c4e040 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2\n";
    struct hd_syscall syscall;
    cr_assert(probe_parse_syscall(text, strlen(text), &syscall));
    cr_assert_eq(syscall.state, HD_SYSCALL_IN);
    cr_assert_eq(syscall.nr, 202);
    cr_assert_null(syscall.name);
    cr_assert_eq(syscall.args[0], 0x55d2a0c4e040ULL);
    cr_assert_eq(syscall.args[1], 0x80);
    cr_assert_eq(syscall.args[2], 0x2);
    cr_assert_eq(syscall.args[3], 0);
    cr_assert_eq(syscall.args[4], 0);
    cr_assert_eq(syscall.args[5], 0);
    cr_assert_eq(syscall.stack_pointer, 0x7ffd1);
    cr_assert_eq(syscall.program_counter, 0x7f2);
}

Test(parse_syscall, full_width_values)
{
    const char *text = "0 0xffffffffffffffff 0xABCDEF 0x7fffffffffffffff 0x1 0x2 0x3 0x7ffe6105a6c8 0x7f1e20ddd2ad";
    struct hd_syscall syscall;
    cr_assert(probe_parse_syscall(text, strlen(text), &syscall));
    cr_assert_eq(syscall.state, HD_SYSCALL_IN);
    cr_assert_eq(syscall.nr, 0);
    cr_assert_eq(syscall.args[0], UINT64_MAX);
    cr_assert_eq(syscall.args[1], 0xabcdef);
    cr_assert_eq(syscall.args[2], 0x7fffffffffffffffULL);
    cr_assert_eq(syscall.args[5], 3);
    cr_assert_eq(syscall.stack_pointer, 0x7ffe6105a6c8ULL);
    cr_assert_eq(syscall.program_counter, 0x7f1e20ddd2adULL);
}

Test(parse_syscall, too_few_fields)
{
    struct hd_syscall syscall;
    const char *in_call = "202 0x55d2a0c4e040 0x80 0x2 0x0 0x0 0x0 0x7ffd1\n";
    cr_assert_not(probe_parse_syscall(in_call, strlen(in_call), &syscall));
    cr_assert_eq(syscall.state, HD_SYSCALL_UNREAD);
    const char *not_in_call = "-1 0x7ffd\n";
    cr_assert_not(probe_parse_syscall(not_in_call, strlen(not_in_call), &syscall));
    cr_assert_not(probe_parse_syscall("202", 3, &syscall));
    cr_assert_not(probe_parse_syscall("-1", 2, &syscall));
}

Test(parse_syscall, trailing_garbage)
{
    struct hd_syscall syscall;
    const char *extra_field = "202 0x55d2a0c4e040 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2 0x9\n";
    cr_assert_not(probe_parse_syscall(extra_field, strlen(extra_field), &syscall));
    cr_assert_eq(syscall.state, HD_SYSCALL_UNREAD);
    const char *junk = "202 0x55d2a0c4e040 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2zz\n";
    cr_assert_not(probe_parse_syscall(junk, strlen(junk), &syscall));
    const char *none_extra = "-1 0x7ffd 0x7f12 0x1\n";
    cr_assert_not(probe_parse_syscall(none_extra, strlen(none_extra), &syscall));
    const char *not_hex = "202 0xg 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2\n";
    cr_assert_not(probe_parse_syscall(not_hex, strlen(not_hex), &syscall));
}

Test(parse_syscall, overflowing_hex)
{
    struct hd_syscall syscall;
    const char *text = "202 0x1ffffffffffffffff 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2\n";
    cr_assert_not(probe_parse_syscall(text, strlen(text), &syscall));
    cr_assert_eq(syscall.state, HD_SYSCALL_UNREAD);
    const char *pc = "-1 0x7ffd 0x1ffffffffffffffff\n";
    cr_assert_not(probe_parse_syscall(pc, strlen(pc), &syscall));
}

Test(parse_syscall, overflowing_number)
{
    struct hd_syscall syscall;
    const char *text = "99999999999999999999 0x1 0x80 0x2 0x0 0x0 0x0 0x7ffd1 0x7f2\n";
    cr_assert_not(probe_parse_syscall(text, strlen(text), &syscall));
}

Test(parse_syscall, length_bounds_the_parse)
{
    /* only "-1 0x7ffd" lies within length */
    const char *text = "-1 0x7ffd 0x7f12\n";
    struct hd_syscall syscall;
    cr_assert_not(probe_parse_syscall(text, 9, &syscall));
    /* "runn" is not "running" even if the buffer goes on */
    cr_assert_not(probe_parse_syscall("running", 4, &syscall));
}

Test(parse_syscall, empty)
{
    struct hd_syscall syscall;
    cr_assert_not(probe_parse_syscall("", 0, &syscall));
    cr_assert_eq(syscall.state, HD_SYSCALL_UNREAD);
    cr_assert_eq(syscall.nr, -1);
    cr_assert_not(probe_parse_syscall("\n", 1, &syscall));
    cr_assert_not(probe_parse_syscall("   \n", 4, &syscall));
}

/* ---- probe_parse_cmdline ------------------------------------------------------------------------------------- */

static void free_args(char **argv, size_t argc)
{
    for (size_t i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

Test(parse_cmdline, normal)
{
    char **argv;
    size_t argc;
    bool truncated = true;
    cr_assert(probe_parse_cmdline("a\0b\0", 4, 64, &argv, &argc, &truncated));
    cr_assert_eq(argc, 2);
    cr_assert_str_eq(argv[0], "a");
    cr_assert_str_eq(argv[1], "b");
    cr_assert_null(argv[2]);
    cr_assert_not(truncated);
    free_args(argv, argc);
}

Test(parse_cmdline, realistic)
{
    static const char bytes[] = "/usr/bin/python3\0-m\0http.server\0" "8000\0";
    char **argv;
    size_t argc;
    bool truncated;
    cr_assert(probe_parse_cmdline(bytes, sizeof bytes - 1, 64, &argv, &argc, &truncated));
    cr_assert_eq(argc, 4);
    cr_assert_str_eq(argv[0], "/usr/bin/python3");
    cr_assert_str_eq(argv[1], "-m");
    cr_assert_str_eq(argv[2], "http.server");
    cr_assert_str_eq(argv[3], "8000");
    cr_assert_null(argv[4]);
    cr_assert_not(truncated);
    free_args(argv, argc);
}

Test(parse_cmdline, empty)
{
    char **argv;
    size_t argc = 99;
    bool truncated = true;
    cr_assert(probe_parse_cmdline("", 0, 64, &argv, &argc, &truncated));
    cr_assert_eq(argc, 0);
    cr_assert_not_null(argv);
    cr_assert_null(argv[0]);
    cr_assert_not(truncated);
    free_args(argv, argc);
}

Test(parse_cmdline, last_argument_without_nul)
{
    char **argv;
    size_t argc;
    bool truncated;
    cr_assert(probe_parse_cmdline("a\0bc", 4, 64, &argv, &argc, &truncated));
    cr_assert_eq(argc, 2);
    cr_assert_str_eq(argv[0], "a");
    cr_assert_str_eq(argv[1], "bc");
    cr_assert_null(argv[2]);
    free_args(argv, argc);
}

Test(parse_cmdline, rewritten_title_without_any_nul)
{
    /* setproctitle() style: one string, no NUL at all */
    const char *title = "nginx: worker process";
    char **argv;
    size_t argc;
    bool truncated;
    cr_assert(probe_parse_cmdline(title, strlen(title), 64, &argv, &argc, &truncated));
    cr_assert_eq(argc, 1);
    cr_assert_str_eq(argv[0], title);
    cr_assert_null(argv[1]);
    free_args(argv, argc);
}

Test(parse_cmdline, consecutive_nuls_give_empty_arguments)
{
    char **argv;
    size_t argc;
    bool truncated;
    cr_assert(probe_parse_cmdline("a\0\0b\0\0", 6, 64, &argv, &argc, &truncated));
    cr_assert_eq(argc, 4);
    cr_assert_str_eq(argv[0], "a");
    cr_assert_str_eq(argv[1], "");
    cr_assert_str_eq(argv[2], "b");
    cr_assert_str_eq(argv[3], "");
    cr_assert_null(argv[4]);
    free_args(argv, argc);
}

Test(parse_cmdline, single_nul)
{
    char **argv;
    size_t argc;
    bool truncated;
    cr_assert(probe_parse_cmdline("\0", 1, 64, &argv, &argc, &truncated));
    cr_assert_eq(argc, 1);
    cr_assert_str_eq(argv[0], "");
    cr_assert_null(argv[1]);
    free_args(argv, argc);
}

Test(parse_cmdline, max_args_truncates)
{
    char **argv;
    size_t argc;
    bool truncated = false;
    cr_assert(probe_parse_cmdline("a\0b\0c\0d\0", 8, 2, &argv, &argc, &truncated));
    cr_assert(truncated);
    cr_assert_eq(argc, 2);
    cr_assert_str_eq(argv[0], "a");
    cr_assert_str_eq(argv[1], "b");
    cr_assert_null(argv[2]);
    free_args(argv, argc);
}

Test(parse_cmdline, exactly_max_args_is_not_truncated)
{
    char **argv;
    size_t argc;
    bool truncated = true;
    cr_assert(probe_parse_cmdline("a\0b\0c", 5, 3, &argv, &argc, &truncated));
    cr_assert_not(truncated);
    cr_assert_eq(argc, 3);
    cr_assert_str_eq(argv[2], "c");
    cr_assert_null(argv[3]);
    free_args(argv, argc);
}

Test(parse_cmdline, max_args_zero)
{
    char **argv;
    size_t argc;
    bool truncated = false;
    cr_assert(probe_parse_cmdline("a\0", 2, 0, &argv, &argc, &truncated));
    cr_assert(truncated);
    cr_assert_eq(argc, 0);
    cr_assert_null(argv[0]);
    free_args(argv, argc);
}

Test(parse_cmdline, hostile_bytes_kept_raw)
{
    static const char bytes[] = "\x1b[31m\0\n\xff\0";
    char **argv;
    size_t argc;
    bool truncated;
    cr_assert(probe_parse_cmdline(bytes, sizeof bytes - 1, 64, &argv, &argc, &truncated));
    cr_assert_eq(argc, 2);
    cr_assert_str_eq(argv[0], "\x1b[31m");
    cr_assert_str_eq(argv[1], "\n\xff");
    free_args(argv, argc);
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
