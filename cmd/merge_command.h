/* `hangdoc merge [--json | --dot] [-o FILE] REPORT...`: the JSON reports of every host of a distributed job merged
 * into one answer (merge/merge.h). Reads no process: only the reports. */
#pragma once

/* argv[0] is "merge". Returns the exit status of the merged verdict (as a single report's: 0, 1 or 2), 64 on a
 * usage error, 66 when no report could be read, 73 when -o FILE cannot be written, 70 when memory ran out. */
int hangdoc_merge(int argc, char **argv);
