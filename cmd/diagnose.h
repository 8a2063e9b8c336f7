/* The main job: probe the named processes, render the report, choose the exit status. */
#pragma once

#include "options.h"

#include <stdbool.h>
#include <stdio.h>

/* Returns an exit status (exit_codes.h); messages for the user go to stderr. The report goes to stdout, as text or
 * JSON (options->json). */
int hangdoc_diagnose(const struct hangdoc_options *options);

/* Where the reports go: up to two text streams and one JSON stream, each NULL when not wanted. */
struct hangdoc_outputs {
    FILE *text[2];
    FILE *json;
};
int hangdoc_diagnose_into(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs);
/* Loads --catalogue FILE once to check it: 0, or the exit status after saying what is wrong (on stderr). */
int hangdoc_check_catalogue(const char *path);
/* Writes a report that says only why there is no diagnosis (`why`, a note; the verdict "could not tell"): what
 * `hangdoc run` leaves when a diagnosis it started was killed. False when it could not be written. */
bool hangdoc_report_unfinished(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs,
                               const char *why);
