/* Words for the facts of a snapshot: what a thread waits on, how long, in the form both renderers share. */
#pragma once

#include "snapshot.h"
#include "buffer.h"

#include <stdbool.h>
#include <stddef.h>

/* Go-style duration: "0.4 s", "41 s", "3 min", "2 h 5 min", "3 d 4 h". */
void report_format_duration(double seconds, char *out, size_t size);

/* Short name of the wait, as in "[futex wait, 41 s]": "futex wait", "poll", "wait4", "running", ... (static) */
const char *report_wait_label(const struct hd_thread *thread);

/* The wait in words: "futex wait 0x55d2a0c4e040 private, expected 2, no timeout", "poll 3 fds, 5000 ms timeout",
 * "wait4 pid 4242, no timeout". */
void report_describe_wait(struct report_buffer *out, const struct hd_thread *thread);

/* Takes the next line of *text (without its newline) into line/length and moves *text past it; false at the end.
 * For multi-line target text such as kernel stacks. */
bool report_next_line(const char **text, const char **line, size_t *length);

/* Full name of a thread state letter: "sleeping", "disk sleep (uninterruptible)", ... (static) */
const char *report_state_name(char state);

/* What a lock is called in a sentence: "mutex", "rwlock", "Python GIL" (static). */
const char *report_lock_noun(const struct hd_lock *lock);

/* A process's part in a distributed job, one line without its newline: "rank 3 of 8 (RANK, local 1 of 4) · Slurm
 * job 1234 step 0 · torchrun run abc · master 10.0.0.1:29500", "worker of rank 3 (process 4711)". Strings from
 * the environment are escaped. */
void report_describe_job(struct report_buffer *out, const struct hd_job *job);
