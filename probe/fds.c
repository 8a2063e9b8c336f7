/* fds, wait fds and unix sockets (fds.h). */
#include "fds.h"

#include "memory.h"
#include "procfs.h"
#include "util.h"

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
    for (size_t i = 0; i < COUNT(fd_target_kinds); i++) {
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

uint64_t probe_parse_fdinfo_signalfd_mask(const char *text, size_t length)
{
    const char *end = text + length;
    for (const char *line = text; line < end;) {
        const char *newline = memchr(line, '\n', (size_t)(end - line));
        const char *stop = newline ? newline : end;
        if (stop - line > 8 && memcmp(line, "sigmask:", 8) == 0) {
            uint64_t mask = 0;
            unsigned digits = 0;
            for (const char *p = line + 8; p < stop && digits < 16; p++) {
                int value = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
                if (value < 0 && digits)
                    break;
                if (value < 0)
                    continue;
                mask = mask << 4 | (uint64_t)value;
                digits++;
            }
            return mask;
        }
        line = newline ? newline + 1 : end;
    }
    return 0;
}

int probe_parse_fdinfo_tty_index(const char *text, size_t length)
{
    const char *end = text + length;
    for (const char *line = text; line < end;) {
        const char *newline = memchr(line, '\n', (size_t)(end - line));
        const char *stop = newline ? newline : end;
        if (stop - line > 10 && memcmp(line, "tty-index:", 10) == 0) {
            long index = -1;
            for (const char *p = line + 10; p < stop; p++) {
                if (*p >= '0' && *p <= '9')
                    index = (index < 0 ? 0 : index) * 10 + (*p - '0');
                else if (index >= 0 || (*p != ' ' && *p != '\t'))
                    break;
                if (index > 1 << 20)
                    return -1;
            }
            return (int)index;
        }
        line = newline ? newline + 1 : end;
    }
    return -1;
}

int probe_pty_slave_index(const char *target)
{
    static const char prefix[] = "/dev/pts/";
    if (strncmp(target, prefix, sizeof prefix - 1) != 0)
        return -1;
    long index = 0;
    const char *p = target + sizeof prefix - 1;
    if (!*p)
        return -1;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || index > 1 << 20)
            return -1; /* "ptmx", a name with " (deleted)" */
        index = index * 10 + (*p - '0');
    }
    return (int)index;
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
    if (length > 0 && fd->target && strcmp(fd->target, "anon_inode:[signalfd]") == 0)
        fd->signalfd_mask = probe_parse_fdinfo_signalfd_mask(text, (size_t)length);
    if (length > 0 && fd->pty_master) {
        fd->pty_index = probe_parse_fdinfo_tty_index(text, (size_t)length);
        fd->pty = fd->pty_index >= 0;
    }
}

static bool is_pty_master(const char *target)
{
    return strcmp(target, "/dev/ptmx") == 0 || strcmp(target, "/dev/pts/ptmx") == 0;
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
        fd->pty_index = probe_pty_slave_index(target);
        fd->pty = fd->pty_index >= 0;
        fd->pty_master = is_pty_master(target);
        /* a signalfd's fdinfo says which signals it reads: a wait on it is a signal wait; a pty master's, which
         * terminal it is the master of */
        if (fd->kind == HD_FD_PIPE || fd->kind == HD_FD_SOCKET || fd->pty_master ||
            strcmp(target, "anon_inode:[signalfd]") == 0)
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
    case HD_WAIT_NONE:
    case HD_WAIT_OTHER:
    case HD_WAIT_FUTEX:
    case HD_WAIT_SLEEP:
    case HD_WAIT_SIGNAL:
    case HD_WAIT_CHILD:
    case HD_WAIT_LOCK:
        return; /* no descriptor to read */
    }
}

/* ---- unix sockets ---------------------------------------------------------------------------------------------- */

/* A datagram of the dump: the kernel fills at most max_recvmsg_len, which it caps at 32 KiB (net/netlink/af_netlink.c,
 * netlink_recvmsg), so a bigger one was not the kernel's. */
#define UNIX_DIAG_DATAGRAM_MAX 32768
/* sizeof(((struct sockaddr_un *)0)->sun_path): a longer name is no address the kernel binds */
#define SUN_PATH_MAX 108
/* The errno an NLMSG_ERROR or NLMSG_DONE may carry: the kernel's are below 4096 (include/linux/err.h, MAX_ERRNO) */
#define ERRNO_MAX 4095

static int compare_inodes(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Messages and attributes start on 4-byte boundaries (NLMSG_ALIGN, NLA_ALIGN), computed in size_t: the macros'
 * unsigned int mask would cut a length near 4 GiB to a step of 0. */
static size_t align4(size_t length)
{
    return (length + 3) & ~(size_t)3;
}

/* UNIX_DIAG_NAME is the socket's sun_path as it was bound, as long as the address is (net/unix/diag.c,
 * sk_diag_dump_name): a path with its terminating NUL, or an abstract name, a NUL byte and then bytes that may
 * hold NULs. Shown as /proc/net/unix shows it (net/unix/af_unix.c, unix_seq_show): a path up to its NUL; an
 * abstract name as '@' and the rest, each NUL as '@'. NULL for an empty name (no address), or memory ran out
 * (*failed). */
static char *unix_socket_name(const unsigned char *path, size_t length, bool *failed)
{
    if (length == 0)
        return NULL;
    char *name = path[0] ? strndup((const char *)path, length) : malloc(length + 1);
    if (!name) {
        *failed = true;
        return NULL;
    }
    if (path[0] == '\0') {
        for (size_t i = 0; i < length; i++)
            name[i] = path[i] ? (char)path[i] : '@';
        name[length] = '\0';
    }
    return name;
}

static bool add_socket(struct probe_unix_socket_table *table, const struct probe_unix_socket *socket)
{
    if (table->count == table->capacity) {
        size_t capacity = table->capacity ? table->capacity * 2 : 256;
        struct probe_unix_socket *grown = reallocarray(table->sockets, capacity, sizeof *grown);
        if (!grown)
            return false;
        table->sockets = grown;
        table->capacity = capacity;
    }
    table->sockets[table->count++] = *socket;
    return true;
}

/* The attributes after a unix_diag_msg: the peer's inode and the name; an attribute whose length runs past the
 * message ends the walk, keeping what came before. False when memory ran out. */
static bool read_attributes(const unsigned char *bytes, size_t length, struct probe_unix_socket *socket)
{
    bool failed = false;
    size_t offset = 0;
    while (length - offset >= NLA_HDRLEN) {
        struct nlattr attribute;
        memcpy(&attribute, bytes + offset, sizeof attribute);
        if (attribute.nla_len < NLA_HDRLEN || attribute.nla_len > length - offset)
            break;
        const unsigned char *value = bytes + offset + NLA_HDRLEN;
        size_t value_length = attribute.nla_len - NLA_HDRLEN;
        uint16_t type = attribute.nla_type & NLA_TYPE_MASK;
        if (type == UNIX_DIAG_PEER && value_length >= sizeof(uint32_t)) {
            uint32_t peer;
            memcpy(&peer, value, sizeof peer);
            socket->peer_inode = peer;
        } else if (type == UNIX_DIAG_NAME && !socket->name && value_length <= SUN_PATH_MAX) {
            socket->name = unix_socket_name(value, value_length, &failed);
        }
        size_t step = align4(attribute.nla_len);
        if (step > length - offset)
            break;
        offset += step;
    }
    return !failed;
}

/* One SOCK_DIAG_BY_FAMILY message: a unix_diag_msg, then its attributes. */
static int read_socket(const unsigned char *payload, size_t length, struct probe_unix_socket_table *table)
{
    struct unix_diag_msg message;
    if (length < sizeof message)
        return -EPROTO;
    memcpy(&message, payload, sizeof message);
    struct probe_unix_socket socket = { .inode = message.udiag_ino };
    size_t attributes = align4(sizeof message);
    if (length > attributes && !read_attributes(payload + attributes, length - attributes, &socket))
        return -ENOMEM;
    if (!add_socket(table, &socket)) {
        free(socket.name);
        return -ENOMEM;
    }
    return 0;
}

/* The int after the header of an NLMSG_ERROR or NLMSG_DONE: a negative errno (for NLMSG_DONE the dump's own,
 * net/netlink/af_netlink.c, netlink_dump_done), 0, or `absent` when there is none. Bounded: it is negated for
 * strerror() later. */
static int answer_errno(const unsigned char *payload, size_t length, int absent)
{
    int error;
    if (length < sizeof error)
        return absent;
    memcpy(&error, payload, sizeof error);
    return error <= 0 && error >= -ERRNO_MAX ? error : -EPROTO;
}

int probe_parse_unix_diag(const void *datagram, size_t length, struct probe_unix_socket_table *table)
{
    const unsigned char *bytes = datagram;
    size_t offset = 0;
    /* Copied out with memcpy, never read in place: the bytes need not be aligned (a fuzzer's are not). */
    while (length - offset >= NLMSG_HDRLEN) {
        struct nlmsghdr header;
        memcpy(&header, bytes + offset, sizeof header);
        if (header.nlmsg_len < NLMSG_HDRLEN || header.nlmsg_len > length - offset)
            return -EPROTO;
        const unsigned char *payload = bytes + offset + NLMSG_HDRLEN;
        size_t payload_length = header.nlmsg_len - NLMSG_HDRLEN;
        if (header.nlmsg_type == NLMSG_DONE) {
            int error = answer_errno(payload, payload_length, 0);
            return error < 0 ? error : 1; /* a dump that failed midway ends too: what came is not the whole */
        }
        if (header.nlmsg_type == NLMSG_ERROR) {
            int error = answer_errno(payload, payload_length, -EPROTO);
            return error < 0 ? error : -EPROTO; /* 0 acknowledges a request: it ends no dump */
        }
        if (header.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
            int result = read_socket(payload, payload_length, table);
            if (result < 0)
                return result;
        }
        size_t step = align4(header.nlmsg_len);
        if (step > length - offset)
            break;
        offset += step;
    }
    return 0;
}

void probe_unix_socket_table_release(struct probe_unix_socket_table *table)
{
    for (size_t i = 0; i < table->count; i++)
        free(table->sockets[i].name);
    free(table->sockets);
    *table = (struct probe_unix_socket_table){ 0 };
}

/* The dump: datagrams until NLMSG_DONE. 0 or -errno. */
static int read_dump(int sock, struct probe_unix_socket_table *table)
{
    static unsigned char datagram[UNIX_DIAG_DATAGRAM_MAX] __attribute__((aligned(8)));
    for (;;) {
        /* MSG_TRUNC: the datagram's whole length, so that one cut short is noticed, not parsed as if whole */
        ssize_t length = recv(sock, datagram, sizeof datagram, MSG_TRUNC);
        if (length < 0 && errno == EINTR)
            continue;
        if (length < 0)
            return -errno;
        if (length == 0)
            return -EPROTO;
        if ((size_t)length > sizeof datagram)
            return -EMSGSIZE;
        int result = probe_parse_unix_diag(datagram, (size_t)length, table);
        if (result != 0)
            return result < 0 ? result : 0;
    }
}

int probe_read_unix_sockets(struct probe_unix_socket_table *table)
{
    *table = (struct probe_unix_socket_table){ 0 };
    int sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (sock < 0)
        return -errno;
    /* A bounded wait: sock_diag answers at once, but hangdoc never blocks without a deadline. */
    struct timeval timeout = { .tv_sec = 2 };
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    /* the peers and the names in one dump: one consistent view of the namespace's sockets */
    struct {
        struct nlmsghdr header;
        struct unix_diag_req request;
    } query = {
        .header = { .nlmsg_len = sizeof query, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                    .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
        .request = { .sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_PEER | UDIAG_SHOW_NAME },
    };
    int result = send(sock, &query, sizeof query, 0) < 0 ? -errno : read_dump(sock, table);
    close(sock);
    if (result < 0) {
        probe_unix_socket_table_release(table);
        return result;
    }
    if (table->count)
        qsort(table->sockets, table->count, sizeof *table->sockets, compare_inodes);
    return 0;
}

const struct probe_unix_socket *probe_unix_socket_find(const struct probe_unix_socket_table *table, uint64_t inode)
{
    /* bsearch() must not be given a NULL array, even of no element */
    return inode && table->count ? bsearch(&inode, table->sockets, table->count, sizeof *table->sockets,
                                           compare_inodes)
                                 : NULL;
}

bool probe_unix_socket_peers(const struct probe_unix_socket_table *table, struct hd_socket_peer **peers,
                             size_t *count)
{
    size_t connected = 0;
    for (size_t i = 0; i < table->count; i++)
        connected += table->sockets[i].peer_inode != 0;
    *peers = NULL;
    *count = 0;
    if (connected == 0)
        return true;
    *peers = calloc(connected, sizeof **peers);
    if (!*peers)
        return false;
    for (size_t i = 0; i < table->count; i++)
        if (table->sockets[i].peer_inode)
            (*peers)[(*count)++] = (struct hd_socket_peer){ .inode = table->sockets[i].inode,
                                                            .peer_inode = table->sockets[i].peer_inode };
    return true;
}
