/* Signals in the wait-for graph: which signals end a thread's wait, and which of them the snapshot can tell the
 * sender of.
 *
 * A thread waits on signals in pause(2) or rt_sigsuspend(2) (a handler runs for a signal its mask lets through),
 * rt_sigtimedwait(2) (a signal of its set arrives), a read or poll of a signalfd (a signal of its mask), and a poll
 * or read of a pipe only its own process writes: the self-pipe a signal handler writes to wake a loop (Python's
 * signal.set_wakeup_fd, libuv, GLib, Python's forkserver). Of the signals that end such a wait, two have senders
 * the snapshot shows: SIGCHLD, sent by the kernel when a child exits, and the signal a POSIX timer of the process
 * delivers (/proc/<pid>/timers), which makes the wait a timed one. Any other signal comes from outside, as it
 * always could (the text report says so once).
 */
#pragma once

#include "snapshot.h"

#include <stdint.h>

#define REPORT_SIGNAL_BIT(number) (1ULL << ((number) - 1))

/* The signals that end the signal wait (pause, rt_sigsuspend, rt_sigtimedwait) of `thread`: those its wait does
 * not block and that `process` catches, or those of the wait's set. 0 when not a signal wait, or when what decides
 * it could not be read. */
uint64_t report_signal_wait_ends_on(const struct hd_process *process, const struct hd_thread *thread);

/* The signals whose handler may write a self-pipe of `process`: those it catches (0 when unknown). */
uint64_t report_signals_caught(const struct hd_process *process);

/* The signals a timer of `process` may deliver: those of its POSIX timers (/proc/<pid>/timers), and SIGALRM when it
 * catches it, which alarm(2) and setitimer(ITIMER_REAL) send and no /proc file shows. A wait one of them ends is a
 * timed wait: a heartbeat's self-pipe, an alarm()-then-pause() sleep. SIGVTALRM and SIGPROF are left out: their
 * timers count only the CPU time the process spends, and a process asleep forever spends none. */
uint64_t report_timer_signals(const struct hd_process *process);

/* The signals a program catches to be told from outside what to do (SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1,
 * SIGUSR2) among `signals`, the signals that end a wait of a thread of `process`: a wait that one of them ends is
 * one by design, a service waiting to be stopped or reloaded, as pause() is. SIGINT does not count in a Python
 * process, whose interpreter catches it itself; neither do SIGCHLD and a timer's signal, whose senders the graph
 * has, nor the faults a crash handler catches. */
uint64_t report_signals_by_design(const struct hd_process *process, uint64_t signals);

/* "SIGCHLD, SIGALRM" into out (at most `size` bytes, NUL-terminated); "" for an empty set. */
void report_signal_names(uint64_t signals, char *out, size_t size);
/* "KILL" for 9, and so on for the standard signals; NULL for a real-time or unknown one. */
const char *report_signal_abbreviation(int number);
