/* The main job: probe the named processes, render the report, choose the exit status. */
#pragma once

#include "analysis.h"
#include "options.h"

#include <stdbool.h>
#include <stdio.h>

/* Returns an exit status (exit_codes.h); messages for the user go to stderr. The report goes to stdout, as text,
 * JSON (options->json), DOT (options->dot) or Markdown (options->markdown); the snapshot to options->save_path too
 * when set. */
int hangdoc_diagnose(const struct hangdoc_options *options);

/* Where the reports go: up to two text streams, one JSON, one DOT and one Markdown summary stream, each NULL when
 * not wanted. */
struct hangdoc_outputs {
    FILE *text[2];
    FILE *json;
    FILE *dot;
    FILE *summary;
};
/* `hangdoc analyze`: the report of a snapshot saved by --save, to stdout as hangdoc_diagnose prints it; the exit
 * status of its verdict, or EXIT_NO_INPUT when the file is not a snapshot this hangdoc reads. */
int hangdoc_analyze(const struct hangdoc_options *options, const char *path);
int hangdoc_diagnose_into(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs);
/* Loads --catalogue FILE once to check it: 0, or the exit status after saying what is wrong (on stderr). */
int hangdoc_check_catalogue(const char *path);
/* Writes a report that says only why there is no diagnosis (`why`, a note; the verdict "could not tell"): what
 * `hangdoc run` leaves when a diagnosis it started was killed. False when it could not be written. */
bool hangdoc_report_unfinished(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs,
                               const char *why);
/* The exit status of a verdict (exit_codes.h): 0 when not hung or not known, 2 for fork inheritance, else 1; the
 * merged verdict of `hangdoc merge` too. */
int hangdoc_exit_for_verdict(enum report_hung hung, enum report_cause cause);
