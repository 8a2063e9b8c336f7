/* Native stacks in the reports: the text section that shows each distinct stack once, with the threads that share
 * it (as the poor man's profiler groups them, across threads and processes), and the JSON of one thread's stack.
 *
 * Pure over the snapshot. Modules and symbols come from the target's files: escaped on their way out.
 */
#pragma once

#include "snapshot.h"
#include "buffer.h"
#include "samples.h"

#include "json_writer.h"

/* The "native stacks" section: nothing when no thread has a stack or a reason for lacking one. */
void report_render_stacks(struct report_buffer *out, const struct hd_snapshot *snapshot);

/* The same in two steps, for a renderer that also refers to the stacks elsewhere (the tree's thread lines):
 * group once, number each thread's stack as the section will, render the section. */
struct report_stack_groups;
/* NULL when memory ran out. */
struct report_stack_groups *report_stack_groups_new(const struct hd_snapshot *snapshot);
void report_stack_groups_free(struct report_stack_groups *groups);
/* The number the section gives the thread's stack ("stack 3"), 0 when it has no taken stack. */
size_t report_stack_group_number(const struct report_stack_groups *groups, const struct hd_thread *thread);
void report_render_stack_groups(struct report_buffer *out, const struct hd_snapshot *snapshot,
                                const struct report_stack_groups *groups);

/* A thread's frames[] {pc, module, symbol, offset, module_offset}, innermost first, under `key`. */
void report_frames_json(struct report_json *json, const char *key, const struct hd_thread *thread);
/* The same for any frames (a goroutine's). */
void report_frame_array_json(struct report_json *json, const char *key, const struct hd_frame *frames,
                             size_t nframes);
/* Its stack object {state, truncated, why_not}. */
void report_stack_json(struct report_json *json, const char *key, const struct hd_thread *thread);
/* Its leaf object {samples, same, function}, or null when no sample stopped it in user space. */
void report_leaf_json(struct report_json *json, const char *key, const struct report_history *history);
