/* Bounded /proc reads and defensive parsers (procfs.h). */
#include "procfs.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

ssize_t probe_read_file(const char *path, char *buffer, size_t cap)
{
    if (cap == 0)
        return -EINVAL;
    int fd cleanup_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    size_t length = 0;
    while (length < cap - 1) {
        ssize_t got = read(fd, buffer + length, cap - 1 - length);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -errno;
        if (got == 0)
            break;
        length += (size_t)got;
    }
    buffer[length] = '\0';
    return (ssize_t)length;
}

pid_t probe_parent_of(pid_t pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (probe_read_file(path, text, sizeof text) <= 0)
        return 0;
    const char *close = strrchr(text, ')');
    char state;
    int parent;
    if (!close || sscanf(close + 1, " %c %d", &state, &parent) != 2)
        return 0;
    return (pid_t)parent;
}

bool probe_read_comm(pid_t pid, char *comm, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    ssize_t length = probe_read_file(path, comm, size); /* terminated, at most size - 1 bytes */
    if (length < 0) {
        if (size)
            comm[0] = '\0';
        return false;
    }
    if (length > 0 && comm[length - 1] == '\n')
        comm[length - 1] = '\0';
    return true;
}

/* Parses an unsigned decimal or hex field at *cursor, bounded by end; advances past it. */
static bool take_unsigned(const char **cursor, const char *end, int base, unsigned long long *value)
{
    const char *p = *cursor;
    while (p < end && *p == ' ')
        p++;
    if (base == 16 && end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2;
    unsigned long long result = 0;
    const char *digits = p;
    for (; p < end; p++) {
        int digit;
        if (*p >= '0' && *p <= '9')
            digit = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            digit = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            digit = *p - 'A' + 10;
        else
            break;
        if (result > (~0ULL - (unsigned)digit) / (unsigned)base)
            return false; /* overflow: not a number the kernel would write */
        result = result * (unsigned)base + (unsigned)digit;
    }
    if (p == digits)
        return false;
    *cursor = p;
    *value = result;
    return true;
}

/* Skips the spaces and a '-' before a number; says whether there was one. */
static bool take_sign(const char **cursor, const char *end)
{
    const char *p = *cursor;
    while (p < end && *p == ' ')
        p++;
    bool negative = p < end && *p == '-';
    *cursor = negative ? p + 1 : p;
    return negative;
}

static bool take_signed(const char **cursor, const char *end, long long *value)
{
    const char *p = *cursor;
    bool negative = take_sign(&p, end);
    unsigned long long magnitude;
    if (!take_unsigned(&p, end, 10, &magnitude) || magnitude > (unsigned long long)INT64_MAX)
        return false;
    *cursor = p;
    *value = negative ? -(long long)magnitude : (long long)magnitude;
    return true;
}

/* Skips `count` space-separated fields. */
static bool skip_fields(const char **cursor, const char *end, int count)
{
    const char *p = *cursor;
    for (int i = 0; i < count; i++) {
        while (p < end && *p == ' ')
            p++;
        if (p == end)
            return false;
        while (p < end && *p != ' ')
            p++;
    }
    *cursor = p;
    return true;
}

bool probe_parse_stat(const char *text, size_t length, struct probe_stat *out)
{
    *out = (struct probe_stat){ .state = '?', .processor = -1 };
    const char *end = text + length;
    /* The comm may contain anything, ')' and newlines included, so it ends at the last ')' (proc(5)). */
    const char *open = memchr(text, '(', length);
    const char *close = NULL;
    for (const char *p = end; p > text; p--)
        if (p[-1] == ')') {
            close = p - 1;
            break;
        }
    if (!open || !close || close < open)
        return false;
    size_t comm_length = (size_t)(close - open - 1);
    if (comm_length >= HD_COMM_MAX)
        comm_length = HD_COMM_MAX - 1;
    memcpy(out->comm, open + 1, comm_length);
    out->comm[comm_length] = '\0';

    const char *p = close + 1;
    while (p < end && *p == ' ')
        p++;
    if (p == end)
        return false;
    out->state = *p++;
    long long ppid;
    if (!take_signed(&p, end, &ppid))
        return false;
    out->ppid = (pid_t)ppid;
    /* fields 5 and 6 (pgrp session), 7 and 8 (tty_nr tpgid), then 9: flags */
    long long pgrp, session;
    const char *group = p;
    if (take_signed(&p, end, &pgrp) && take_signed(&p, end, &session)) {
        out->has_group = true;
        out->pgrp = (pid_t)pgrp;
        out->session = (pid_t)session;
    } else {
        p = group; /* not numbers: skipped as fields, as the rest of the line may still be read */
        if (!skip_fields(&p, end, 2))
            return true; /* a truncated line still gave comm, state and ppid */
    }
    unsigned long long flags;
    if (!skip_fields(&p, end, 2) || !take_unsigned(&p, end, 10, &flags))
        return true;
    out->flags = (unsigned long)flags;
    /* fields 10..13 (fault counts), then 14 utime, 15 stime */
    unsigned long long user, system;
    if (!skip_fields(&p, end, 4) || !take_unsigned(&p, end, 10, &user) || !take_unsigned(&p, end, 10, &system))
        return true;
    out->has_times = true;
    out->cpu_ticks = user + system;
    /* 16..19 (children's times, priority, nice), 20 num_threads, 21 itrealvalue, 22 starttime */
    long long threads;
    unsigned long long start;
    if (!skip_fields(&p, end, 4) || !take_signed(&p, end, &threads) || !skip_fields(&p, end, 1) ||
        !take_unsigned(&p, end, 10, &start))
        return true;
    out->has_start = true;
    out->thread_count = threads > 0 && threads <= INT32_MAX ? (int)threads : 0;
    out->start_ticks = start;
    /* 23..27, then 28: startstack (0 unless the reader may ptrace the process) */
    unsigned long long start_stack;
    if (!skip_fields(&p, end, 5) || !take_unsigned(&p, end, 10, &start_stack))
        return true;
    out->start_stack = start_stack;
    /* 29..38, then 39: processor */
    long long processor;
    if (!skip_fields(&p, end, 10) || !take_signed(&p, end, &processor))
        return true;
    out->processor = processor >= 0 && processor <= INT32_MAX ? (int)processor : -1;
    /* 40..51, then 52: exit_code */
    long long exit_code;
    if (skip_fields(&p, end, 12) && take_signed(&p, end, &exit_code)) {
        out->has_exit_code = true;
        out->exit_code = (int)exit_code;
    }
    return true;
}

/* Finds "key:" at the start of a line and returns what follows it, or NULL. */
static const char *find_line_value(const char *text, size_t length, const char *key, const char **line_end)
{
    size_t key_length = strlen(key);
    const char *end = text + length;
    for (const char *line = text; line < end;) {
        const char *newline = memchr(line, '\n', (size_t)(end - line));
        const char *stop = newline ? newline : end;
        /* the key must be whole: "nr_switches" is not "nr_switches_foo" */
        if ((size_t)(stop - line) > key_length && memcmp(line, key, key_length) == 0 &&
            (line[key_length] == ' ' || line[key_length] == '\t' || line[key_length] == ':')) {
            const char *value = line + key_length;
            while (value < stop && (*value == ' ' || *value == '\t' || *value == ':'))
                value++;
            *line_end = stop;
            return value;
        }
        line = newline ? newline + 1 : end;
    }
    return NULL;
}

static bool line_unsigned(const char *text, size_t length, const char *key, uint64_t *value)
{
    const char *stop;
    const char *p = find_line_value(text, length, key, &stop);
    unsigned long long parsed;
    if (!p || !take_unsigned(&p, stop, 10, &parsed))
        return false;
    *value = parsed;
    return true;
}

/* "SigIgn:\t0000000000001000": a signal mask in hex, bit n-1 for signal n */
static bool line_mask(const char *text, size_t length, const char *key, uint64_t *mask)
{
    const char *stop;
    const char *p = find_line_value(text, length, key, &stop);
    unsigned long long parsed;
    if (!p || !take_unsigned(&p, stop, 16, &parsed))
        return false;
    *mask = parsed;
    return true;
}

bool probe_parse_status(const char *text, size_t length, struct probe_status *out)
{
    *out = (struct probe_status){ 0 };
    uint64_t tracer;
    if (line_unsigned(text, length, "TracerPid:", &tracer) && tracer <= INT32_MAX) {
        out->has_tracer_pid = true;
        out->tracer_pid = (pid_t)tracer;
    }
    out->has_switches = line_unsigned(text, length, "voluntary_ctxt_switches:", &out->voluntary_switches) &&
                        line_unsigned(text, length, "nonvoluntary_ctxt_switches:", &out->involuntary_switches);
    const char *stop;
    /* "Uid: real effective saved filesystem" */
    const char *uids = find_line_value(text, length, "Uid:", &stop);
    unsigned long long real, effective;
    if (uids && take_unsigned(&uids, stop, 10, &real) && uids < stop && (*uids == '\t' || *uids == ' ')) {
        while (uids < stop && *uids == '\t')
            uids++;
        if (take_unsigned(&uids, stop, 10, &effective) && effective <= UINT32_MAX) {
            out->has_euid = true;
            out->euid = (uid_t)effective;
        }
    }
    out->has_signals_ignored = line_mask(text, length, "SigIgn:", &out->signals_ignored);
    out->has_signals_caught = line_mask(text, length, "SigCgt:", &out->signals_caught);
    out->has_signals_blocked = line_mask(text, length, "SigBlk:", &out->signals_blocked);
    /* "NSpid:\t8696\t2": bounded by the line, each value a pid */
    const char *ids = find_line_value(text, length, "NSpid:", &stop);
    for (unsigned long long id; ids && ids < stop && take_unsigned(&ids, stop, 10, &id) && id <= INT32_MAX;) {
        out->nspid_levels++;
        out->nspid_innermost = (pid_t)id;
        while (ids < stop && (*ids == '\t' || *ids == ' '))
            ids++;
    }
    return out->has_tracer_pid || out->has_switches || out->has_signals_ignored || out->has_signals_caught ||
           out->has_signals_blocked || out->has_euid ||
           out->nspid_levels > 0;
}

unsigned probe_parse_timers(const char *text, size_t length, uint64_t *signals)
{
    *signals = 0;
    unsigned timers = 0;
    unsigned long long signal = 0;
    bool have_signal = false;
    const char *end = text + length;
    for (const char *line = text; line < end;) {
        const char *newline = memchr(line, '\n', (size_t)(end - line));
        const char *stop = newline ? newline : end;
        const char *p = line;
        if (stop - line > 7 && memcmp(line, "signal:", 7) == 0) {
            p += 7;
            while (p < stop && (*p == ' ' || *p == '\t'))
                p++;
            have_signal = take_unsigned(&p, stop, 10, &signal) && signal >= 1 && signal <= 64;
        } else if (stop - line > 7 && memcmp(line, "notify:", 7) == 0) {
            p += 7;
            while (p < stop && (*p == ' ' || *p == '\t'))
                p++;
            /* SIGEV_NONE: the timer runs but tells nobody */
            bool notifies = stop - p < 4 || memcmp(p, "none", 4) != 0;
            if (have_signal && notifies)
                *signals |= 1ULL << (signal - 1);
            timers++;
            have_signal = false;
        }
        line = newline ? newline + 1 : end;
    }
    return timers;
}

/* Parses "123.456789" (the kernel prints milliseconds with six decimals) without locale surprises. */
static bool take_milliseconds(const char **cursor, const char *end, double *value)
{
    const char *p = *cursor;
    bool negative = take_sign(&p, end);
    unsigned long long whole, fraction = 0;
    if (!take_unsigned(&p, end, 10, &whole))
        return false;
    double scale = 1;
    if (p < end && *p == '.') {
        p++;
        const char *digits = p;
        if (!take_unsigned(&p, end, 10, &fraction))
            return false;
        for (const char *d = digits; d < p; d++)
            scale *= 10;
    }
    double result = (double)whole + (double)fraction / scale;
    *value = negative ? -result : result;
    *cursor = p;
    return true;
}

static bool sched_value(const char *text, size_t length, const char *key, double *value)
{
    const char *stop;
    const char *p = find_line_value(text, length, key, &stop);
    return p && take_milliseconds(&p, stop, value);
}

bool probe_parse_sched(const char *text, size_t length, struct probe_sched *out)
{
    *out = (struct probe_sched){ 0 };
    out->has_exec_start = sched_value(text, length, "se.exec_start", &out->exec_start_ms);
    out->has_runtime = sched_value(text, length, "se.sum_exec_runtime", &out->sum_exec_runtime_ms);
    out->has_switches = line_unsigned(text, length, "nr_voluntary_switches", &out->voluntary_switches) &&
                        line_unsigned(text, length, "nr_involuntary_switches", &out->involuntary_switches);
    return out->has_exec_start || out->has_runtime || out->has_switches;
}

bool probe_parse_syscall(const char *text, size_t length, struct hd_syscall *out)
{
    *out = (struct hd_syscall){ .state = HD_SYSCALL_UNREAD, .nr = -1 };
    const char *end = text + length;
    while (end > text && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    if (end - text == 7 && memcmp(text, "running", 7) == 0) {
        out->state = HD_SYSCALL_RUNNING;
        return true;
    }
    const char *p = text;
    long long nr;
    if (!take_signed(&p, end, &nr))
        return false;
    int words = nr < 0 ? 2 : 8; /* "-1 sp pc" or "nr a0..a5 sp pc" */
    uint64_t values[8];
    for (int i = 0; i < words; i++) {
        unsigned long long value;
        if (!take_unsigned(&p, end, 16, &value))
            return false;
        values[i] = value;
    }
    if (p != end)
        return false;
    out->nr = (long)nr;
    if (nr < 0) {
        out->state = HD_SYSCALL_NONE;
        out->stack_pointer = values[0];
        out->program_counter = values[1];
        return true;
    }
    out->state = HD_SYSCALL_IN;
    memcpy(out->args, values, sizeof out->args);
    out->stack_pointer = values[6];
    out->program_counter = values[7];
    return true;
}

static void free_argv(char **argv, size_t argc)
{
    for (size_t i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

bool probe_parse_cmdline(const char *bytes, size_t length, size_t max_args, char ***argv_out, size_t *argc_out,
                         bool *truncated)
{
    *argv_out = NULL;
    *argc_out = 0;
    *truncated = false;
    size_t count = 0;
    for (size_t i = 0; i < length; i++)
        if (bytes[i] == '\0')
            count++;
    if (length > 0 && bytes[length - 1] != '\0')
        count++; /* a last argument without its NUL */
    if (count > max_args) {
        count = max_args;
        *truncated = true;
    }
    char **argv = calloc(count + 1, sizeof *argv);
    if (!argv)
        return false;
    const char *p = bytes, *end = bytes + length;
    for (size_t i = 0; i < count; i++) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        size_t arg_length = nul ? (size_t)(nul - p) : (size_t)(end - p);
        argv[i] = strndup(p, arg_length);
        if (!argv[i]) {
            free_argv(argv, i);
            return false;
        }
        p += arg_length + (nul ? 1 : 0);
    }
    *argv_out = argv;
    *argc_out = count;
    return true;
}
