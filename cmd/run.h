/* `hangdoc run [OPTION]... -- CMD [ARG]...`: run CMD as a child; when it times out, stalls, is signalled with
 * SIGUSR1, or CI cancels it (SIGTERM, SIGINT), diagnose its whole tree, write the reports, end the tree. */
#pragma once

#include "options.h"

/* argv[0] is "run". Returns hangdoc's exit status: the command's own (128 + signal when a signal ended it), 124
 * when hangdoc ended it on a timeout or stall, 126/127 when it could not be executed, or a usage error. */
int hangdoc_run(const struct hangdoc_options *diagnosis, int argc, char **argv);
