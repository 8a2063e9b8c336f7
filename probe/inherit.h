/* Inheritance forensics on a read snapshot: what each fd is, which of a child's fds are its parent's very open
 * files (kcmp), and how each process came to be (fork, exec, Python's spawn and forkserver).
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The class of an fd from its target alone (pure): pipes, sockets, anon inodes, /dev/nvidia*, /dev/dri, shm,
 * memfd, files. Device numbers and socket names refine it (probe_classify_fds). */
enum hd_fd_class probe_fd_class_of_target(const char *target);
/* The class of a unix socket bound to `name` (a path, or "@abstract") */
enum hd_fd_class probe_unix_socket_class(const char *name);

struct probe_unix_socket_table; /* fds.h */

/* Classifies every fd of the snapshot: device numbers of /dev files, names of unix sockets from sock_diag's table
 * (probe_read_unix_sockets, sorted). Notes the processes in another network namespace, whose unix sockets that
 * table cannot hold. */
void probe_classify_fds(struct hd_snapshot *snapshot, const struct probe_unix_socket_table *unix_sockets);
/* Proves with kcmp(KCMP_FILE) which fds of each child are open files of its parent; notes refusals. */
void probe_prove_inherited_fds(struct hd_snapshot *snapshot);

/* Python's multiprocessing: the role of a process from its command line (pure). */
enum hd_python_role probe_python_role_of_cmdline(char *const *argv, size_t argc);
/* Refines origins after the fork/exec decision: spawn and forkserver children, the start method of the tree. */
void probe_refine_origins(struct hd_snapshot *snapshot);
