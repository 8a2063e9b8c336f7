/* fds, wait fds and unix socket peers (fds.h). */
#include "fds.h"

#include "memory.h"
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FD_TARGET_MAX 4096

static const struct {
    const char *prefix;
    enum hd_fd_kind kind;
    bool has_inode;
} fd_target_kinds[] = {
    { "pipe:[", HD_FD_PIPE, true },
    { "socket:[", HD_FD_SOCKET, true },
    { "anon_inode:", HD_FD_ANON, false },
    { "/", HD_FD_FILE, false },
};

void probe_classify_fd_target(const char *target, enum hd_fd_kind *kind, uint64_t *inode)
{
    *kind = HD_FD_OTHER;
    *inode = 0;
    for (size_t i = 0; i < sizeof fd_target_kinds / sizeof fd_target_kinds[0]; i++) {
        size_t length = strlen(fd_target_kinds[i].prefix);
        if (strncmp(target, fd_target_kinds[i].prefix, length) != 0)
            continue;
        *kind = fd_target_kinds[i].kind;
        if (fd_target_kinds[i].has_inode) {
            char *end;
            unsigned long long value = strtoull(target + length, &end, 10);
            if (*end == ']')
                *inode = value;
        }
        return;
    }
}

int probe_parse_fdinfo_access_mode(const char *text, size_t length)
{
    const char *end = text + length;
    for (const char *line = text; line < end;) {
        const char *newline = memchr(line, '\n', (size_t)(end - line));
        const char *stop = newline ? newline : end;
        if (stop - line > 6 && memcmp(line, "flags:", 6) == 0) {
            unsigned long flags = 0;
            bool digits = false;
            for (const char *p = line + 6; p < stop; p++) {
                if (*p >= '0' && *p <= '7') {
                    flags = flags << 3 | (unsigned long)(*p - '0');
                    digits = true;
                } else if (digits) {
                    break;
                }
            }
            return digits ? (int)(flags & O_ACCMODE) : -1;
        }
        line = newline ? newline + 1 : end;
    }
    return -1;
}

unsigned probe_parse_epoll_targets(const char *text, size_t length, int *fds, unsigned max, bool *truncated)
{
    unsigned count = 0;
    *truncated = false;
    const char *end = text + length;
    for (const char *line = text; line < end;) {
        const char *newline = memchr(line, '\n', (size_t)(end - line));
        const char *stop = newline ? newline : end;
        if (stop - line > 4 && memcmp(line, "tfd:", 4) == 0) {
            const char *p = line + 4;
            while (p < stop && (*p == ' ' || *p == '\t'))
                p++;
            long fd = 0;
            bool digits = false;
            for (; p < stop && *p >= '0' && *p <= '9' && fd < 1 << 24; p++) {
                fd = fd * 10 + (*p - '0');
                digits = true;
            }
            if (digits) {
                if (count == max) {
                    *truncated = true;
                    break;
                }
                fds[count++] = (int)fd;
            }
        }
        line = newline ? newline + 1 : end;
    }
    return count;
}

static int compare_fds(const void *a, const void *b)
{
    const struct hd_fd *x = a, *y = b;
    return (x->fd > y->fd) - (x->fd < y->fd);
}

static void read_access_mode(pid_t pid, struct hd_fd *fd)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)pid, fd->fd);
    ssize_t length = probe_read_file(path, text, sizeof text);
    fd->access_mode = length > 0 ? probe_parse_fdinfo_access_mode(text, (size_t)length) : -1;
}

int probe_read_fds(pid_t pid, size_t max_fds, struct hd_fd **fds, size_t *count, bool *truncated)
{
    *fds = NULL;
    *count = 0;
    *truncated = false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *directory = opendir(path);
    if (!directory)
        return -errno;
    size_t cap = 0;
    int result = 0;
    struct dirent *entry;
    while ((entry = readdir(directory))) {
        char *end;
        long number = strtol(entry->d_name, &end, 10);
        if (*end || end == entry->d_name || number < 0)
            continue; /* "." and ".." */
        if (*count == max_fds) {
            *truncated = true;
            break;
        }
        char link[96], target[FD_TARGET_MAX];
        snprintf(link, sizeof link, "/proc/%d/fd/%ld", (int)pid, number);
        ssize_t length = readlink(link, target, sizeof target - 1);
        if (length < 0)
            continue; /* closed meanwhile */
        target[length] = '\0';
        if (*count == cap) {
            cap = cap ? cap * 2 : 16;
            struct hd_fd *grown = reallocarray(*fds, cap, sizeof *grown);
            if (!grown) {
                result = -ENOMEM;
                break;
            }
            *fds = grown;
        }
        struct hd_fd *fd = &(*fds)[*count];
        *fd = (struct hd_fd){ .fd = (int)number, .target = strdup(target), .access_mode = -1 };
        if (!fd->target) {
            result = -ENOMEM;
            break;
        }
        probe_classify_fd_target(target, &fd->kind, &fd->inode);
        if (fd->kind == HD_FD_PIPE || fd->kind == HD_FD_SOCKET)
            read_access_mode(pid, fd);
        (*count)++;
    }
    closedir(directory);
    if (*fds)
        qsort(*fds, *count, sizeof **fds, compare_fds);
    return result;
}

/* ---- what a blocked call waits on ---------------------------------------------------------------------------- */

static void add_wait_fd(struct hd_wait *wait, int fd)
{
    if (wait->nfds_known == HD_WAIT_FDS_MAX) {
        wait->fds_truncated = true;
        return;
    }
    wait->fds[wait->nfds_known++] = fd;
}

static void read_pollfds(pid_t pid, uint64_t address, unsigned nfds, struct hd_wait *wait)
{
    struct {
        int fd;
        short events, revents;
    } entries[HD_WAIT_FDS_MAX];
    unsigned wanted = nfds < HD_WAIT_FDS_MAX ? nfds : HD_WAIT_FDS_MAX;
    if (wanted == 0)
        return;
    if (!probe_read_memory(pid, address, entries, wanted * sizeof entries[0])) {
        wait->fds_truncated = true; /* unknown fds: whatever could wake it is out of sight */
        return;
    }
    for (unsigned i = 0; i < wanted; i++)
        if (entries[i].fd >= 0) /* poll(2) ignores negative fds */
            add_wait_fd(wait, entries[i].fd);
    wait->fds_truncated |= nfds > wanted;
}

static void read_fd_set(pid_t pid, uint64_t address, unsigned nfds, struct hd_wait *wait)
{
    unsigned char bits[128]; /* FD_SETSIZE 1024 bits */
    unsigned bytes = (nfds + 7) / 8;
    if (address == 0 || bytes == 0)
        return;
    if (bytes > sizeof bits)
        bytes = sizeof bits;
    if (!probe_read_memory(pid, address, bits, bytes)) {
        wait->fds_truncated = true;
        return;
    }
    for (unsigned fd = 0; fd < bytes * 8 && fd < nfds; fd++)
        if (bits[fd / 8] & (1u << (fd % 8)))
            add_wait_fd(wait, (int)fd);
}

static void read_epoll_targets(pid_t pid, int epoll_fd, struct hd_wait *wait)
{
    char path[64], text[16384];
    snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)pid, epoll_fd);
    ssize_t length = probe_read_file(path, text, sizeof text);
    if (length <= 0) {
        wait->fds_truncated = true;
        return;
    }
    bool truncated;
    wait->nfds_known = probe_parse_epoll_targets(text, (size_t)length, wait->fds, HD_WAIT_FDS_MAX, &truncated);
    wait->fds_truncated = truncated || (size_t)length == sizeof text - 1;
}

void probe_read_wait_fds(pid_t pid, const struct hd_syscall *syscall, struct hd_wait *wait)
{
    /* the call the wait decoded as: a restart_syscall's is the call it resumes (syscalls.h) */
    const char *name = wait->operation ? wait->operation : "";
    switch (wait->kind) {
    case HD_WAIT_READ:
    case HD_WAIT_WRITE:
    case HD_WAIT_ACCEPT:
    case HD_WAIT_CONNECT:
        add_wait_fd(wait, wait->fd);
        return;
    case HD_WAIT_POLL:
        if (strcmp(name, "poll") == 0 || strcmp(name, "ppoll") == 0)
            read_pollfds(pid, syscall->args[0], (unsigned)syscall->args[1], wait);
        else if (strcmp(name, "select") == 0 || strcmp(name, "pselect6") == 0)
            read_fd_set(pid, syscall->args[1], (unsigned)syscall->args[0], wait);
        else
            read_epoll_targets(pid, wait->fd, wait);
        return;
    default:
        return;
    }
}

/* ---- unix socket peers --------------------------------------------------------------------------------------- */

static int compare_peers(const void *a, const void *b)
{
    const struct hd_socket_peer *x = a, *y = b;
    return (x->inode > y->inode) - (x->inode < y->inode);
}

static bool add_peer(struct hd_socket_peer **peers, size_t *count, size_t *cap, uint64_t inode, uint64_t peer)
{
    if (*count == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        struct hd_socket_peer *grown = reallocarray(*peers, *cap, sizeof *grown);
        if (!grown)
            return false;
        *peers = grown;
    }
    (*peers)[(*count)++] = (struct hd_socket_peer){ .inode = inode, .peer_inode = peer };
    return true;
}

/* Walks one netlink answer; returns 1 when the dump is done, 0 to read more, -errno on error. */
static int parse_unix_diag(const char *buffer, ssize_t length, struct hd_socket_peer **peers, size_t *count,
                           size_t *cap)
{
    for (const struct nlmsghdr *header = (const void *)buffer; NLMSG_OK(header, (unsigned)length);
         header = NLMSG_NEXT(header, length)) {
        if (header->nlmsg_type == NLMSG_DONE)
            return 1;
        if (header->nlmsg_type == NLMSG_ERROR)
            return -EPROTO;
        if (header->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
            continue;
        const struct unix_diag_msg *message = NLMSG_DATA(header);
        int attributes_length = (int)(header->nlmsg_len - NLMSG_LENGTH(sizeof *message));
        for (const struct nlattr *attribute = (const void *)(message + 1);
             attributes_length >= (int)sizeof *attribute && attribute->nla_len >= sizeof *attribute &&
             attribute->nla_len <= attributes_length;
             attributes_length -= NLA_ALIGN(attribute->nla_len),
                                 attribute = (const void *)((const char *)attribute + NLA_ALIGN(attribute->nla_len))) {
            if (attribute->nla_type != UNIX_DIAG_PEER || attribute->nla_len < NLA_HDRLEN + sizeof(uint32_t))
                continue;
            uint32_t peer;
            memcpy(&peer, (const char *)attribute + NLA_HDRLEN, sizeof peer);
            if (!add_peer(peers, count, cap, message->udiag_ino, peer))
                return -ENOMEM;
        }
    }
    return 0;
}

int probe_read_unix_peers(struct hd_socket_peer **peers, size_t *count)
{
    *peers = NULL;
    *count = 0;
    int sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (sock < 0)
        return -errno;
    /* A bounded wait: sock_diag answers at once, but hangdoc never blocks without a deadline. */
    struct timeval timeout = { .tv_sec = 2 };
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    struct {
        struct nlmsghdr header;
        struct unix_diag_req request;
    } query = {
        .header = { .nlmsg_len = sizeof query, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                    .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
        .request = { .sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_PEER },
    };
    int result = 0;
    if (send(sock, &query, sizeof query, 0) < 0)
        result = -errno;
    size_t cap = 0;
    static char buffer[32768] __attribute__((aligned(8)));
    while (result == 0) {
        ssize_t length = recv(sock, buffer, sizeof buffer, 0);
        if (length < 0 && errno == EINTR)
            continue;
        if (length <= 0) {
            result = length < 0 ? -errno : -EPROTO;
            break;
        }
        result = parse_unix_diag(buffer, length, peers, count, &cap);
    }
    close(sock);
    if (result < 0) {
        free(*peers);
        *peers = NULL;
        *count = 0;
        return result;
    }
    qsort(*peers, *count, sizeof **peers, compare_peers);
    return 0;
}
