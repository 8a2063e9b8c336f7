/* PID namespaces: a target in a container holds ids of its own namespace in its memory (mutex owners, the
 * pthread_join tid word) and in its system calls (wait4's pid); hangdoc reads /proc in its own. Ids are
 * translated through the NSpid lines of the target's namespace before anything compares them.
 *
 * A process's NSpid line lists its id in every namespace from the one /proc was mounted in down to its own: more
 * than one entry means it lives below hangdoc's namespace (in a container seen from the host). Run inside the
 * container (a sidecar sharing its namespace), the target's ids are hangdoc's and nothing needs translating.
 */
#pragma once

#include "snapshot.h"

#include <stdint.h>
#include <sys/types.h>

/* The inode of the PID namespace of `pid` ("self" for hangdoc), from /proc/<pid>/ns/pid; 0 when unreadable. */
uint64_t probe_pid_namespace_of(const char *pid);
/* The host's initial PID namespace has this inode (PROC_PID_INIT_INO). */
#define PROBE_INITIAL_PID_NAMESPACE 0xEFFFFFFCu

/* Translates the namespace-local ids of every process of the snapshot that lives in another PID namespace: lock
 * owners (owner_ns_tid keeps the id as recorded) and the pid wait4 waits for. An owner not in the snapshot is
 * looked for among the processes of its namespace; one found nowhere is gone. Run before the owners are resolved
 * (locks.h). */
void probe_translate_namespaced_ids(struct hd_snapshot *snapshot);
