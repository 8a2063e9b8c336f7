/* Bounded reads of /proc files and their parsers.
 *
 * The parsers are pure functions over a buffer, so every odd input (a comm with ')' and newlines, a truncated file,
 * an empty cmdline) is unit-tested without a process. Everything they read comes from the target: they never trust
 * a length, a delimiter or a number to be where it should be.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads at most cap - 1 bytes of a file and NUL-terminates them. Returns the length, or -errno. */
ssize_t probe_read_file(const char *path, char *buffer, size_t cap);

/* The parent of `pid` from its stat file; 0 when it is gone or unreadable. */
pid_t probe_parent_of(pid_t pid);
/* The name of `pid` (/proc/<pid>/comm, without its newline) into `comm`; false, and "" there, when unreadable. */
bool probe_read_comm(pid_t pid, char *comm, size_t size);

/* /proc/<pid>/task/<tid>/stat, the fields hangdoc uses. A line cut short keeps what came before the cut. */
struct probe_stat {
    char comm[HD_COMM_MAX]; /* raw bytes between the first '(' and the last ')' */
    char state;
    pid_t ppid;
    bool has_group;           /* fields 5 and 6 */
    pid_t pgrp;
    pid_t session;
    unsigned long flags;      /* PF_* flags, field 9 */
    bool has_times;           /* fields 14 and 15 */
    uint64_t cpu_ticks;       /* utime + stime, in clock ticks */
    bool has_start;           /* fields 20 and 22 */
    int thread_count;         /* of the whole process */
    uint64_t start_ticks;     /* after boot, in clock ticks */
    uint64_t start_stack;     /* field 28: where argc lies on the initial stack; 0 when hidden or cut short */
    int processor;            /* field 39, the CPU it last ran on; -1 when not given */
    bool has_exit_code;       /* field 52, since Linux 3.5 */
    int exit_code;
};
bool probe_parse_stat(const char *text, size_t length, struct probe_stat *out);

/* PF_KTHREAD from include/linux/sched.h */
#define PROBE_PF_KTHREAD 0x00200000UL

/* /proc/<pid>/status */
struct probe_status {
    bool has_tracer_pid;
    pid_t tracer_pid;
    bool has_switches;
    uint64_t voluntary_switches;
    uint64_t involuntary_switches;
    bool has_signals_ignored;
    uint64_t signals_ignored; /* SigIgn: bit n-1 set when signal n is ignored */
    bool has_signals_caught;
    uint64_t signals_caught;  /* SigCgt: a handler is installed for signal n */
    bool has_signals_blocked;
    uint64_t signals_blocked; /* SigBlk: the task's mask (per thread in /proc/<pid>/task/<tid>/status) */
    bool has_euid;
    uid_t euid;               /* the second number of "Uid:" */
    /* "NSpid:": the id in each PID namespace from the one /proc was mounted in down to the task's own */
    unsigned nspid_levels;    /* 0 when the line is missing (kernels before 4.1) */
    pid_t nspid_innermost;    /* the id in the task's own namespace */
};
bool probe_parse_status(const char *text, size_t length, struct probe_status *out);

/* /proc/<pid>/timers, the process's POSIX timers (timer_create), one block each: "ID:", "signal: 14/<value>",
 * "notify: signal/pid.1234" (or "thread/tid.N", "none/..."), "ClockID:". Sets *signals to the signals the timers
 * deliver (bit n-1 for signal n; a timer that notifies nobody adds none) and returns how many timers it read. The
 * file does not say whether a timer is armed. */
unsigned probe_parse_timers(const char *text, size_t length, uint64_t *signals);

/* /proc/<tid>/sched (kernels with CONFIG_SCHED_DEBUG); times in milliseconds of the scheduler's clock */
struct probe_sched {
    bool has_exec_start;
    double exec_start_ms;
    bool has_runtime;
    double sum_exec_runtime_ms;
    bool has_switches;
    uint64_t voluntary_switches;
    uint64_t involuntary_switches;
};
bool probe_parse_sched(const char *text, size_t length, struct probe_sched *out);

/* /proc/<tid>/syscall: "running", "-1 sp pc", or "nr a0 a1 a2 a3 a4 a5 sp pc" in hex. Fills all but `name`. */
bool probe_parse_syscall(const char *text, size_t length, struct hd_syscall *out);

/* /proc/<pid>/cmdline: NUL-separated arguments, the last one possibly without its NUL (a process may rewrite its
 * argument area). At most max_args arguments are kept; *truncated says whether anything was dropped. Returns false
 * when memory ran out. */
bool probe_parse_cmdline(const char *bytes, size_t length, size_t max_args, char ***argv, size_t *argc,
                         bool *truncated);
