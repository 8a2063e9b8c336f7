/* Signals in the wait-for graph (signals.h). */
#include "signals.h"

#include "util.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* glibc's own signals, 32 (SIGCANCEL, pthread_cancel) and 33 (SIGSETXID, setuid across threads): caught in every
 * threaded process, sent by glibc for its own ends, never to end a wait */
#define GLIBC_INTERNAL_SIGNALS (REPORT_SIGNAL_BIT(32) | REPORT_SIGNAL_BIT(33))

uint64_t report_signals_caught(const struct hd_process *process)
{
    return process->signal_dispositions_known ? process->signals_caught & ~GLIBC_INTERNAL_SIGNALS : 0;
}

uint64_t report_timer_signals(const struct hd_process *process)
{
    uint64_t timers = process->timers_known ? process->timer_signals : 0;
    return timers | (report_signals_caught(process) & REPORT_SIGNAL_BIT(SIGALRM));
}

uint64_t report_signals_by_design(const struct hd_process *process, uint64_t signals)
{
    uint64_t design = REPORT_SIGNAL_BIT(SIGTERM) | REPORT_SIGNAL_BIT(SIGHUP) | REPORT_SIGNAL_BIT(SIGQUIT) |
                      REPORT_SIGNAL_BIT(SIGUSR1) | REPORT_SIGNAL_BIT(SIGUSR2);
    if (!process->python.read)
        design |= REPORT_SIGNAL_BIT(SIGINT);
    return signals & design;
}

uint64_t report_signal_wait_ends_on(const struct hd_process *process, const struct hd_thread *thread)
{
    const struct hd_wait *wait = &thread->wait;
    if (wait->kind != HD_WAIT_SIGNAL)
        return 0;
    switch (wait->signal_set_kind) {
    case HD_SIGNAL_SET_WANTED:
        /* the set is blocked while the call waits for it, so even an ignored signal of it stays pending and ends
         * the wait (the kernel ignores only unblocked signals at once) */
        return wait->signal_set & ~GLIBC_INTERNAL_SIGNALS;
    case HD_SIGNAL_SET_BLOCKED:
        return report_signals_caught(process) & ~wait->signal_set;
    case HD_SIGNAL_SET_UNKNOWN:
        /* the mask could not be read: any signal it catches may end the wait, which errs towards "may wake" */
        return report_signals_caught(process);
    }
    return 0;
}

/* The standard signals' names on Linux (x86_64 and aarch64 number them alike), by number: glibc's sigabbrev_np
 * came in 2.32, after the distributions hangdoc builds on (Debian 11: 2.31; RHEL 8: 2.28). */
static const char *const signal_names[] = {
    [SIGHUP] = "HUP",   [SIGINT] = "INT",       [SIGQUIT] = "QUIT", [SIGILL] = "ILL",       [SIGTRAP] = "TRAP",
    [SIGABRT] = "ABRT", [SIGBUS] = "BUS",       [SIGFPE] = "FPE",   [SIGKILL] = "KILL",     [SIGUSR1] = "USR1",
    [SIGSEGV] = "SEGV", [SIGUSR2] = "USR2",     [SIGPIPE] = "PIPE", [SIGALRM] = "ALRM",     [SIGTERM] = "TERM",
    [SIGSTKFLT] = "STKFLT", [SIGCHLD] = "CHLD", [SIGCONT] = "CONT", [SIGSTOP] = "STOP",     [SIGTSTP] = "TSTP",
    [SIGTTIN] = "TTIN", [SIGTTOU] = "TTOU",     [SIGURG] = "URG",   [SIGXCPU] = "XCPU",     [SIGXFSZ] = "XFSZ",
    [SIGVTALRM] = "VTALRM", [SIGPROF] = "PROF", [SIGWINCH] = "WINCH", [SIGIO] = "IO",       [SIGPWR] = "PWR",
    [SIGSYS] = "SYS",
};

const char *report_signal_abbreviation(int number)
{
    return number > 0 && (size_t)number < COUNT(signal_names) ? signal_names[number] : NULL;
}

void report_signal_names(uint64_t signals, char *out, size_t size)
{
    size_t used = 0;
    if (size == 0)
        return;
    out[0] = '\0';
    for (int number = 1; number <= 64 && used < size; number++) {
        if (!(signals & REPORT_SIGNAL_BIT(number)))
            continue;
        const char *abbreviation = report_signal_abbreviation(number);
        int written = abbreviation
                          ? snprintf(out + used, size - used, "%sSIG%s", used ? ", " : "", abbreviation)
                          : snprintf(out + used, size - used, "%ssignal %d", used ? ", " : "", number);
        if (written < 0)
            break;
        used += (size_t)written;
    }
}
