/* The Python view in the analysis: each finding about a thread that runs Python names the user's line of code.
 *
 * Pure over the snapshot: the frames come from probe/python.h. A finding about a thread with a Python stack gets
 * the evidence `python` ("__getitem__ (/data/dataset.py:42)", the innermost frame) and its summary ends with the
 * place ("in Python: __getitem__ at dataset.py:42"), so that the first line a user reads points into their code.
 */
#pragma once

#include "analysis.h"

#include <stdbool.h>

/* False only when memory ran out. */
bool report_python_lines(const struct hd_snapshot *snapshot, struct report_analysis *analysis);

/* What a Python thread is to the libraries that started it, from the functions on its stack: "DataLoader worker",
 * "DataLoader main, waiting for a batch", "pin-memory thread", "multiprocessing pool worker", … (static); NULL
 * when no frame says. */
const char *report_python_role(const struct hd_thread *thread);

/* Does `file` end with the path components `suffix` ("multiprocessing/pool.py" matches every install prefix)? */
bool report_python_file_is(const char *file, const char *suffix);
/* A function's own name, without the class a qualified name carries ("Pool._handle_workers": "_handle_workers"). */
const char *report_python_bare_name(const char *function);

/* The innermost frame of a Python thread that is the user's code rather than the standard library's threading or
 * multiprocessing machinery around a wait, or the innermost one when every frame is library code; NULL for a
 * thread without a Python stack. */
const struct hd_python_frame *report_python_place(const struct hd_thread *thread);
/* "function (file.py:12)" for `frame`, the file by its last component; "?" for what the frame lacks. */
void report_python_frame_words(const struct hd_python_frame *frame, char *out, size_t size);
