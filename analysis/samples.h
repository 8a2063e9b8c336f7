/* A thread's samples folded: what the earlier samples (hd_thread_sample, as probe read them) and the last one say
 * together. Here, not in probe/, so that the rules can be tested over the sample histories that broke them (a
 * thread caught running between two identical waits). Pure over the snapshot.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stdint.h>

struct report_history {
    unsigned samples_seen; /* the samples that saw the thread, the last one included */
    unsigned samples_in_state_d;
    unsigned samples_in_state_r;
    uint64_t cpu_delta_ns; /* from the first sample that saw it to the last */
    uint64_t switches_delta;
    uint64_t voluntary_switches_delta; /* blocking in the kernel (a wait, a page-in; each ptrace stop adds one) */
    bool syscall_changed;
    /* its CPU time, context switches or system call changed between two samples that both saw it (not counting
     * the way back into the very wait it was in, below), or it ended while read */
    bool progressing;
    /* How many of the samples that saw it (the last one too) found it in a futex wait at the last sample's futex
     * address: all of them, for a thread that wakes on its timeout only to wait there again (a poll in vain). */
    unsigned samples_on_this_futex;
    /* Running in user space: the samples that stopped it and named the function it ran at, whether all named the
     * same place (the same function, or within UNNAMED_LEAF_SPAN bytes of one unnamed module), and the last name
     * (borrowed from the snapshot) */
    unsigned leaf_samples;
    bool leaf_same;
    const char *leaf_function;
    /* The last futex wait an earlier sample saw it in, NULL when none: a thread that wakes every few ms to go back
     * to the same wait (a GIL waiter) may be caught between two by the last sample */
    const struct hd_thread_sample *earlier_futex;
};

void report_fold_samples(const struct hd_thread *thread, struct report_history *out);

/* A zombie in every sample: nobody reaped it while hangdoc watched. */
bool report_zombie_throughout(const struct hd_process *process);
