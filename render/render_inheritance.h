/* How the inheritance forensics appear in the reports: the JSON keys of libraries, fds and the parent thread census,
 * and one short text block per process. Called from render_json.c and render_text.c, one place each.
 */
#pragma once

#include "snapshot.h"
#include "buffer.h"
#include "catalogue.h"
#include "json_writer.h"

/* Writes into a process's JSON object: libraries[] (path, soname, build_id, class, safety, in_parent), python_role,
 * python_start_method, device_mappings[], thread_census[]. */
void report_json_process_inheritance(struct report_json *json, const struct hd_snapshot *snapshot,
                                     const struct hd_process *process, const struct report_catalogue *catalogue);
/* Writes into an fd's JSON object: class, inherited_from {pid, fd} or null, device, socket_name, runtime. */
void report_json_fd_inheritance(struct report_json *json, const struct hd_fd *fd,
                                const struct report_catalogue *catalogue);
/* Writes the tree's Python start method to the snapshot header. */
void report_json_snapshot_inheritance(struct report_json *json, const struct hd_snapshot *snapshot);

/* The lines under a process: how it came to be, the runtimes it maps, the handles of note it shares with its
 * parent. Nothing for a process with nothing of note. `indent` is the depth's prefix. */
void report_text_process_inheritance(struct report_buffer *out, const struct hd_snapshot *snapshot,
                                     const struct hd_process *process, const struct report_catalogue *catalogue,
                                     const char *indent);
