/* A fork finding in a child of Python's forkserver (the default start method from Python 3.14 on).
 *
 * A forkserver child is forked from the forkserver, not from the process that asked for it, so it inherits what
 * the forkserver had at that fork: the runtimes it started and the locks its threads held. The forkserver imports
 * the main module (its preload list is ['__main__'] unless set_forkserver_preload() says otherwise) before it forks
 * anything, so a parallel op at the main module's top level starts GNU OpenMP's pool there. The fork rules judge
 * such a child against its parent, the forkserver, as against any parent; this pass says so in each finding's
 * evidence, with what the forkserver preloads (read from its command line), takes away the remedies that propose
 * the forkserver to a child of it, and leads with the remedies for forkserver users (the main guard, spawn).
 */
#pragma once

#include "analysis.h"

/* For each fork finding (inherited-lock, orphaned-wait, fork-unsafe-runtime, cuda-inherited) whose process is a
 * forkserver child: the evidence "forkserver", the forkserver's remedies first and no remedy that proposes the
 * forkserver. False when memory ran out. */
bool report_forkserver_findings(const struct hd_snapshot *snapshot, struct report_analysis *analysis);

/* What the forkserver `server` preloads, from its command line ("import sys; from multiprocessing.forkserver
 * import main; main(9, 11, ['__main__'], ...)"): the list's text without its brackets into `modules` ("'__main__'";
 * "" for none) and the main module's path ('main_path') into `main_path` ("" when not given). False when the
 * command line is not a forkserver's. */
bool report_forkserver_preload(const struct hd_process *server, char *modules, size_t modules_size, char *main_path,
                               size_t main_path_size);
