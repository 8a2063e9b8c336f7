/* Stopping a process for a moment, safely: PTRACE_SEIZE + PTRACE_INTERRUPT, a bounded wait, PTRACE_DETACH.
 *
 * All threads of one process are stopped together, so that what their stacks show is one instant (a lock owner
 * and its waiters agree). A thread that does not stop in time (uninterruptible sleep) keeps its kernel stack and
 * loses its user stack; threads in D are not even asked. Every seized thread is in a registry that signal
 * handlers (SIGINT, SIGTERM, SIGHUP, SIGPIPE) and probe_stop_release_all() detach before hangdoc dies; if hangdoc
 * is killed outright, PTRACE_SEIZE lets the kernel detach and resume every tracee (no stop signal is left behind).
 */
#pragma once

#include "probe.h"
#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROBE_STOP_WHY_MAX 200

struct probe_stopped_thread {
    pid_t tid;
    bool seized;
    bool stopped;           /* in a ptrace stop now: registers can be read */
    bool gone;              /* exited while being stopped */
    int pending_signal;     /* a signal it was about to take, given back at detach */
    char why_not[PROBE_STOP_WHY_MAX]; /* when not stopped */
};

struct probe_stopped_process {
    pid_t pid;
    struct probe_stopped_thread *threads;
    size_t nthreads;
    double stopped_at; /* monotonic seconds, when the first thread was asked to stop */
};

enum probe_stop_result {
    PROBE_STOP_OK,        /* at least one thread is stopped */
    PROBE_STOP_REFUSED,   /* the kernel refused; `why` says exactly why */
    PROBE_STOP_GONE,      /* the process exited */
    PROBE_STOP_NO_MEMORY,
};

/* Installs the signal handlers that detach on SIGINT, SIGTERM, SIGHUP and SIGPIPE (an ignored signal stays
 * ignored); probe_stop_uninstall() restores what was there. */
void probe_stop_install(void);
void probe_stop_uninstall(void);

/* Why ptrace cannot be used at all (Yama ptrace_scope 3), or NULL (static). */
const char *probe_stop_globally_refused(void);

/* The state letters of threads the caller has just read (`states[i]` of `tids[i]`, tids sorted), which spares
 * reading /proc/<pid>/task/<tid>/stat again for each; NULL when none. */
struct probe_stop_hint {
    const pid_t *tids;
    const char *states;
    size_t count;
};

/* Seizes and stops every thread of `pid` (re-listing /proc/<pid>/task until no new thread appears), waiting at
 * most `wait_ms` for them to stop. When only some threads stopped, the others say why in their why_not. */
enum probe_stop_result probe_stop_process(pid_t pid, unsigned wait_ms, const struct probe_stop_hint *hint,
                                          struct probe_stopped_process *out, char *why, size_t why_size);
/* Stops only the thread `tid` of `pid` (to read its pc). */
enum probe_stop_result probe_stop_thread(pid_t pid, pid_t tid, unsigned wait_ms, struct probe_stopped_process *out,
                                         char *why, size_t why_size);
/* Detaches every thread, gives back pending signals, frees the list; returns how long the process was stopped. */
double probe_stop_release(struct probe_stopped_process *stopped);

/* Threads that were asked to stop but did not in time (an uninterruptible sleep, a starved thread) cannot be
 * detached until they stop: detaches those that have stopped since; returns how many are still seized. A later
 * probe_stop_process() or probe_stop_thread() takes such a thread as its own again (no refusal). hangdoc's exit
 * releases whatever is left. */
size_t probe_stop_retry_lingering(void);

/* probe_stop_reported_elsewhere() and probe_stop_took_end(), for hangdoc run's supervisor: in probe.h. */

/* Detaches every seized thread now. Async-signal-safe: for signal handlers and the --timeout handler. */
void probe_stop_release_all(void);

/* The ancestors of hangdoc (never stopped: the shell waiting for it, `hangdoc run`'s wrapper). */
bool probe_stop_is_ancestor(pid_t pid);

/* Reads the registers of a stopped thread: its pc and sp, and the whole user_regs_struct into `registers`
 * (`size` bytes). False when the thread is not stopped. */
bool probe_stop_read_registers(pid_t tid, void *registers, size_t size, uint64_t *pc, uint64_t *sp);
/* The system call a stopped thread `tid` was in when it stopped, from its registers: what /proc/<tid>/syscall would
 * have said before the stop (the number, the arguments, sp and pc), for a thread whose syscall file hangdoc may not
 * open (CAP_SYS_PTRACE without CAP_DAC_READ_SEARCH). A thread stopped inside a blocking call left it with
 * -ERESTART*: only then is it HD_SYSCALL_IN (the kernel resumes the call when the thread is let go). x86-64 only
 * (elsewhere, and on any failure: false). Fills all but `name`. */
bool probe_stop_read_syscall(pid_t tid, struct hd_syscall *out);
