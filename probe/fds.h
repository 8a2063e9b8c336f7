/* Open files of a process (/proc/<pid>/fd, fdinfo), the fds a blocked call waits on, and unix socket peers. */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* "pipe:[1234]", "socket:[99]", "anon_inode:[eventfd]", "/path": the kind and, for pipes and sockets, the inode. */
void probe_classify_fd_target(const char *target, enum hd_fd_kind *kind, uint64_t *inode);

/* The access mode from an fdinfo text ("flags:\t0100002" is octal): O_RDONLY, O_WRONLY, O_RDWR, or -1. */
int probe_parse_fdinfo_access_mode(const char *text, size_t length);

/* The target fds of an epoll fd's fdinfo ("tfd:        5 events: ..."), at most `max`. */
unsigned probe_parse_epoll_targets(const char *text, size_t length, int *fds, unsigned max, bool *truncated);

/* Reads the open fds of `pid` (at most max_fds), sorted by number; 0 or -errno. */
int probe_read_fds(pid_t pid, size_t max_fds, struct hd_fd **fds, size_t *count, bool *truncated);

/* Fills wait->fds with what `syscall` waits on: read/write's fd, the pollfd array of poll/ppoll and the fd_set
 * of select/pselect6 (read from the target's memory), or the targets of an epoll fd. */
void probe_read_wait_fds(pid_t pid, const struct hd_syscall *syscall, struct hd_wait *wait);

/* All connected unix sockets of the system and their peers, sorted by inode (NETLINK_SOCK_DIAG). 0 or -errno. */
int probe_read_unix_peers(struct hd_socket_peer **peers, size_t *count);
