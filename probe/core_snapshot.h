/* A snapshot made of core files instead of live processes (`hangdoc --core CORE...`): one process per core,
 * several cores of one tree (a parent and its workers) one snapshot, so that lock owners are found across them
 * and a child's fork is told from its parent's by AT_RANDOM, as for a live tree.
 *
 * From each core: the process (pid, parent, session, user, name, command line from NT_PRPSINFO), its threads and
 * the system call each was in (registers), what that call waits for, the locks at its futexes and their owners
 * (memory), its mappings and mapped files (PT_LOAD, NT_FILE), and each thread's native stack, unwound from its
 * registers over the core's memory and, for the code the core left out, the files it names. What a core cannot
 * tell is said in a note: wait channels, whether a thread progresses (one sample), fds, pipes and sockets between
 * the processes, thread names, children that were not dumped. Python processes get their Python view from the
 * core's memory and the interpreter's file, as live ones do from theirs.
 *
 * The files a core names (its executable, its libraries) are read as this machine has them, or under --sysroot;
 * nothing about a dumped process is read from /proc, where its pid may be another process.
 */
#pragma once

#include "snapshot.h"

#include <stddef.h>

struct probe_core_options {
    const char *const *paths;
    size_t npaths;
    const char *sysroot; /* --sysroot: the files the cores name are under it (a copy of the machine's); NULL: / */
    const char *exe;     /* --exe: the executable of the first core is this file; NULL: where the core names it */
};

/* 0 with *snapshot set (the caller frees it), or -errno with `error` saying why no core could be read. A core
 * that cannot be read among others that can is a note of the snapshot. */
int probe_core_snapshot(const struct probe_core_options *options, struct hd_snapshot **snapshot, char *error,
                        size_t error_size);
