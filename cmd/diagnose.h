/* The main job: probe the named processes, render the report, choose the exit status. */
#pragma once

#include "options.h"

/* Returns an exit status (exit_codes.h); messages for the user go to stderr. */
int hangdoc_diagnose(const struct hangdoc_options *options);
