/* Go's goroutines, read from a Go program's memory while it runs, as Delve and the runtime's own traceback see
 * them: the runtime's list of every goroutine (runtime.allgs, found by the executable's symbol table), each one's
 * status, its wait reason in the runtime's own words (runtime.waitReasonStrings), and its stack from the registers
 * it saved when it parked, walked by frame pointers (Go keeps them on amd64 and arm64). Nothing is stopped and no
 * code of the target runs: a goroutine that waits does not touch what is read.
 *
 * The layout of the runtime's g is the one Go 1.17 to 1.22 share, or 1.23's (a word more before the status),
 * checked on the goroutines themselves: a parked goroutine's saved registers point back at it. A binary built
 * with -ldflags=-s has no symbol table to find the list by: the report says so and keeps its generic verdict.
 * Everything read is hostile: counts and lengths are bounded, strings cut and escaped where they are shown.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>

/* The first look, at the first sample: each Go process's goroutines without their stacks, kept in
 * process->go of that sample's snapshot so that the last look can tell which stayed in their waits. */
void probe_go_first_look(struct hd_snapshot *sample);

/* The last look, for every Go process of the final snapshot: process->go with the goroutines, their stacks named
 * by `symbols` (the native stacks' tables, borrowed; NULL: tables of its own, as with --no-ptrace), and
 * `unchanged` where the first look (`first`, NULL when there was none) saw the same wait. False only when memory
 * ran out. */
struct probe_symbols;
bool probe_read_goroutines(struct hd_snapshot *final, const struct hd_snapshot *first,
                           struct probe_symbols *symbols);
