/* Open files of a process (/proc/<pid>/fd, fdinfo), the fds a blocked call waits on, and the unix sockets of the
 * system with their peers and names. */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* "pipe:[1234]", "socket:[99]", "anon_inode:[eventfd]", "/path": the kind and, for pipes and sockets, the inode. */
void probe_classify_fd_target(const char *target, enum hd_fd_kind *kind, uint64_t *inode);

/* The access mode from an fdinfo text ("flags:\t0100002" is octal): O_RDONLY, O_WRONLY, O_RDWR, or -1. */
int probe_parse_fdinfo_access_mode(const char *text, size_t length);
/* The "sigmask:" of a signalfd's fdinfo (the signals it reads, bit n-1 for signal n); 0 when there is none. */
uint64_t probe_parse_fdinfo_signalfd_mask(const char *text, size_t length);
/* A pty master's index from its fdinfo ("tty-index:\t3", Linux 4.13 on); -1 when absent. */
int probe_parse_fdinfo_tty_index(const char *text, size_t length);
/* N of a pty slave's path "/dev/pts/N"; -1 for any other path. */
int probe_pty_slave_index(const char *target);

/* The target fds of an epoll fd's fdinfo ("tfd:        5 events: ..."), at most `max`. */
unsigned probe_parse_epoll_targets(const char *text, size_t length, int *fds, unsigned max, bool *truncated);

/* Reads the open fds of `pid` (at most max_fds), sorted by number; 0 or -errno. */
int probe_read_fds(pid_t pid, size_t max_fds, struct hd_fd **fds, size_t *count, bool *truncated);

/* Fills wait->fds with what `syscall` waits on: read/write's fd, the pollfd array of poll/ppoll and the fd_set
 * of select/pselect6 (read from the target's memory), or the targets of an epoll fd. */
void probe_read_wait_fds(pid_t pid, const struct hd_syscall *syscall, struct hd_wait *wait);

/* ---- unix sockets (NETLINK_SOCK_DIAG) ---- */

/* A unix socket as sock_diag lists it. */
struct probe_unix_socket {
    uint64_t inode;      /* first: sorted and searched by it */
    uint64_t peer_inode; /* the other end of a connected socket; 0 when not connected */
    char *name;          /* the bound path, "@name" for an abstract one (each NUL byte of it as '@'); NULL: unbound */
};

/* Every unix socket of one sock_diag dump, sorted by inode once the dump is read. */
struct probe_unix_socket_table {
    struct probe_unix_socket *sockets;
    size_t count;
    size_t capacity;
};

/* All unix sockets of hangdoc's network namespace, their peers and names, from one dump (sock_diag sees no other
 * namespace). 0 or -errno; on error the table is empty. */
int probe_read_unix_sockets(struct probe_unix_socket_table *table);
/* Adds the sockets one netlink datagram of such a dump lists, unsorted: 1 when the datagram ends the dump, 0 when
 * more is to come, -errno for an error answer (the kernel's errno), a malformed datagram (-EPROTO) or no memory.
 * Any bytes: every length is checked against `length`. */
int probe_parse_unix_diag(const void *datagram, size_t length, struct probe_unix_socket_table *table);
/* The socket `inode` of a sorted table, or NULL. */
const struct probe_unix_socket *probe_unix_socket_find(const struct probe_unix_socket_table *table, uint64_t inode);
/* The connected sockets of a sorted table and their peers, as the snapshot keeps them (sorted by inode). False
 * when memory ran out; *peers is NULL when there are none. */
bool probe_unix_socket_peers(const struct probe_unix_socket_table *table, struct hd_socket_peer **peers,
                             size_t *count);
/* Frees the names and the array and empties the table. */
void probe_unix_socket_table_release(struct probe_unix_socket_table *table);
