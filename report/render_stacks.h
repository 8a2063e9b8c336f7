/* Native stacks in the reports: the text section that shows each distinct stack once, with the threads that share
 * it (as the poor man's profiler groups them, across threads and processes), and the JSON of one thread's stack.
 *
 * Pure over the snapshot. Modules and symbols come from the target's files: escaped on their way out.
 */
#pragma once

#include "../probe/snapshot.h"
#include "buffer.h"

#include <json-c/json.h>

/* The "native stacks" section: nothing when no thread has a stack or a reason for lacking one. */
void report_render_stacks(struct report_buffer *out, const struct hd_snapshot *snapshot);

/* A thread's frames[] {pc, module, symbol, offset, module_offset}, innermost first. */
json_object *report_frames_json(const struct hd_thread *thread);
/* Its stack object {state, truncated, why_not}. */
json_object *report_stack_json(const struct hd_thread *thread);
/* Its leaf object {samples, same, function}, or NULL when no sample stopped it in user space. */
json_object *report_leaf_json(const struct hd_thread *thread);
