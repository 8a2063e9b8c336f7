/* /proc/<pid>/maps lines, mapping lookup and classification (probe/maps.h, model/snapshot.h), fd targets, fdinfo
 * and unix sockets with their peers and names (probe/fds.h): parsers over hand-written text and hand-built sock_diag
 * datagrams, readers over this test's own process. */
#include "fds.h"
#include "maps.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static bool parse(const char *line, struct hd_mapping *mapping)
{
    return probe_parse_maps_line(line, strlen(line), mapping);
}

/* ---- probe_parse_maps_line ------------------------------------------------------------------------------------ */

Test(maps_line, anonymous)
{
    struct hd_mapping mapping;
    cr_assert(parse("7f0000000000-7f0000021000 rw-p 00000000 00:00 0 ", &mapping));
    cr_assert_eq(mapping.start, 0x7f0000000000ull);
    cr_assert_eq(mapping.end, 0x7f0000021000ull);
    cr_assert_str_eq(mapping.permissions, "rw-p");
    cr_assert_eq(mapping.offset, 0u);
    cr_assert_eq(mapping.device_major, 0u);
    cr_assert_eq(mapping.device_minor, 0u);
    cr_assert_eq(mapping.inode, 0u);
    cr_assert_null(mapping.path);
    cr_assert_eq(hd_mapping_classify(&mapping), HD_MAPPING_ANONYMOUS_PRIVATE);
}

Test(maps_line, anonymous_without_trailing_space_and_with_newline)
{
    struct hd_mapping mapping;
    cr_assert(parse("7f0000000000-7f0000021000 rw-p 00000000 00:00 0\n", &mapping));
    cr_assert_null(mapping.path);
    cr_assert_eq(mapping.end, 0x7f0000021000ull);
}

Test(maps_line, heap)
{
    struct hd_mapping mapping;
    cr_assert(parse("55d2a0c2d000-55d2a0c4e000 rw-p 00000000 00:00 0                          [heap]\n", &mapping));
    cr_assert_eq(mapping.start, 0x55d2a0c2d000ull);
    cr_assert_eq(mapping.end, 0x55d2a0c4e000ull);
    cr_assert_str_eq(mapping.path, "[heap]");
    cr_assert_eq(hd_mapping_classify(&mapping), HD_MAPPING_ANONYMOUS_PRIVATE, "[heap] is anonymous memory");
    free(mapping.path);
}

Test(maps_line, file_path_with_spaces)
{
    struct hd_mapping mapping;
    cr_assert(parse("7f1c2a400000-7f1c2a422000 r-xp 00001000 fd:01 1839237                    "
                    "/opt/my lib/libx.so (deleted)\n",
                    &mapping));
    cr_assert_str_eq(mapping.permissions, "r-xp");
    cr_assert_eq(mapping.offset, 0x1000u);
    cr_assert_eq(mapping.device_major, 0xfdu);
    cr_assert_eq(mapping.device_minor, 1u);
    cr_assert_eq(mapping.inode, 1839237u);
    cr_assert_str_eq(mapping.path, "/opt/my lib/libx.so (deleted)");
    cr_assert_eq(hd_mapping_classify(&mapping), HD_MAPPING_FILE_PRIVATE);
    free(mapping.path);
}

Test(maps_line, shared_mapping)
{
    struct hd_mapping mapping;
    cr_assert(parse("7f1c2a600000-7f1c2a604000 rw-s 00002000 00:1a 4711                       /dev/shm/x\n",
                    &mapping));
    cr_assert_str_eq(mapping.permissions, "rw-s");
    cr_assert_eq(mapping.offset, 0x2000u);
    cr_assert_eq(mapping.device_major, 0u);
    cr_assert_eq(mapping.device_minor, 0x1au);
    cr_assert_eq(mapping.inode, 4711u);
    cr_assert_str_eq(mapping.path, "/dev/shm/x");
    cr_assert_eq(hd_mapping_classify(&mapping), HD_MAPPING_SHARED);
    free(mapping.path);
}

Test(maps_line, shared_anonymous_is_shared)
{
    struct hd_mapping mapping;
    cr_assert(parse("7f1c2a800000-7f1c2a801000 rw-s 00000000 00:01 2049                       /dev/zero (deleted)",
                    &mapping));
    cr_assert_eq(hd_mapping_classify(&mapping), HD_MAPPING_SHARED);
    free(mapping.path);
}

Test(maps_line, vsyscall_sixteen_hex_digits)
{
    struct hd_mapping mapping;
    cr_assert(parse("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n", &mapping));
    cr_assert_eq(mapping.start, 0xffffffffff600000ull);
    cr_assert_eq(mapping.end, 0xffffffffff601000ull);
    cr_assert_str_eq(mapping.path, "[vsyscall]");
    free(mapping.path);
}

Test(maps_line, length_bounds_the_line)
{
    const char *text = "400000-401000 r--p 00000000 08:02 77 /usr/bin/cat\n400000-401000 r--p 0 0:0 0 /next";
    const char *newline = strchr(text, '\n');
    struct hd_mapping mapping;
    cr_assert(probe_parse_maps_line(text, (size_t)(newline - text + 1), &mapping));
    cr_assert_str_eq(mapping.path, "/usr/bin/cat");
    cr_assert_eq(mapping.inode, 77u);
    free(mapping.path);
}

Test(maps_line, malformed)
{
    static const char *const lines[] = {
        "7f0000021000-7f0000000000 rw-p 00000000 00:00 0 ", /* end before start */
        "7f0000000000-7f0000021000 rw-p",                   /* no offset, device, inode */
        "7f0000000000-7f0000021000 rw-p 00000000 00:00",    /* no inode */
        "7f0000000000-7f0000021000 rw-p 00000000 0000 0",   /* device without ':' */
        "7f0000000000-7f0000021000 rw-p zz 00:00 0",        /* offset not hex */
        "7f0000000000 rw-p 00000000 00:00 0",               /* no end */
        "-7f0000021000 rw-p 00000000 00:00 0",              /* no start */
        "7f0000000000-7f0000021000rw-p 00000000 00:00 0",   /* no space after the range */
        "7f0000000000-7f0000021000 rw 00000000 00:00 0",    /* short permissions */
        "10000000000000000-10000000000001000 rw-p 00000000 00:00 0", /* 17 hex digits: over 64 bits */
        "hello, world",
        "",
        "\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        struct hd_mapping mapping;
        cr_assert_not(parse(lines[i], &mapping), "accepted \"%s\"", lines[i]);
    }
}

/* ---- classification and lookup ------------------------------------------------------------------------------- */

Test(classify, kinds)
{
    cr_assert_eq(hd_mapping_classify(NULL), HD_MAPPING_UNKNOWN);
    struct hd_mapping anonymous = { .permissions = "rw-p" };
    cr_assert_eq(hd_mapping_classify(&anonymous), HD_MAPPING_ANONYMOUS_PRIVATE);
    char stack[] = "[stack]";
    struct hd_mapping named = { .permissions = "rw-p", .path = stack };
    cr_assert_eq(hd_mapping_classify(&named), HD_MAPPING_ANONYMOUS_PRIVATE);
    char library[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    struct hd_mapping data = { .permissions = "rw-p", .path = library, .inode = 1234, .device_major = 8 };
    cr_assert_eq(hd_mapping_classify(&data), HD_MAPPING_FILE_PRIVATE);
    char shm[] = "/dev/shm/x";
    struct hd_mapping shared = { .permissions = "rw-s", .path = shm, .inode = 4711 };
    cr_assert_eq(hd_mapping_classify(&shared), HD_MAPPING_SHARED);
    struct hd_mapping shared_anonymous = { .permissions = "rw-s" };
    cr_assert_eq(hd_mapping_classify(&shared_anonymous), HD_MAPPING_SHARED);
    cr_assert_str_eq(hd_mapping_kind_name(HD_MAPPING_SHARED), "shared");
    cr_assert_str_eq(hd_mapping_kind_name(HD_MAPPING_ANONYMOUS_PRIVATE), "anonymous-private");
    cr_assert_str_eq(hd_mapping_kind_name(HD_MAPPING_FILE_PRIVATE), "file-private");
    cr_assert_str_eq(hd_mapping_kind_name(HD_MAPPING_UNKNOWN), "unknown");
}

Test(find_mapping, binary_search)
{
    struct hd_mapping mappings[] = {
        { .start = 0x1000, .end = 0x2000, .permissions = "r--p" },
        { .start = 0x3000, .end = 0x5000, .permissions = "rw-p" },
        { .start = 0x5000, .end = 0x6000, .permissions = "rw-s" },
        { .start = 0x8000, .end = 0x9000, .permissions = "rw-p" },
        { .start = 0xa000, .end = 0xb000, .permissions = "rw-p" },
    };
    struct hd_process process = { .pid = 1, .mappings = mappings, .nmappings = 5 };
    cr_assert_eq(hd_process_find_mapping(&process, 0x1800), &mappings[0], "inside");
    cr_assert_eq(hd_process_find_mapping(&process, 0x1000), &mappings[0], "at start");
    cr_assert_eq(hd_process_find_mapping(&process, 0x1fff), &mappings[0], "at end - 1");
    cr_assert_null(hd_process_find_mapping(&process, 0x2000), "at end, before a gap");
    cr_assert_null(hd_process_find_mapping(&process, 0x2800), "in a gap");
    cr_assert_eq(hd_process_find_mapping(&process, 0x4fff), &mappings[1]);
    cr_assert_eq(hd_process_find_mapping(&process, 0x5000), &mappings[2], "the end of one is the next's start");
    cr_assert_null(hd_process_find_mapping(&process, 0x6000));
    cr_assert_eq(hd_process_find_mapping(&process, 0x8000), &mappings[3]);
    cr_assert_eq(hd_process_find_mapping(&process, 0xafff), &mappings[4]);
    cr_assert_null(hd_process_find_mapping(&process, 0xb000), "past the last");
    cr_assert_null(hd_process_find_mapping(&process, 0), "below the first");
    cr_assert_null(hd_process_find_mapping(&process, UINT64_MAX));
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(hd_process_find_mapping(&process, mappings[i].start), &mappings[i]);
        cr_assert_eq(hd_process_find_mapping(&process, mappings[i].end - 1), &mappings[i]);
    }
    struct hd_process empty = { .pid = 2 };
    cr_assert_null(hd_process_find_mapping(&empty, 0x1000));
}

Test(find_mapping, own_maps_hold_own_addresses)
{
    struct hd_mapping *mappings;
    size_t count;
    bool truncated;
    cr_assert_eq(probe_read_maps(getpid(), 100000, &mappings, &count, &truncated), 0);
    cr_assert_not(truncated);
    cr_assert(count > 3);
    for (size_t i = 1; i < count; i++)
        cr_assert(mappings[i - 1].end <= mappings[i].start, "mapping %zu out of order", i);
    struct hd_process process = { .pid = getpid(), .mappings = mappings, .nmappings = count };
    static int in_data = 1;
    int on_stack = 2;
    void *on_heap = malloc(64);
    const struct hd_mapping *data = hd_process_find_mapping(&process, (uint64_t)(uintptr_t)&in_data);
    const struct hd_mapping *stack = hd_process_find_mapping(&process, (uint64_t)(uintptr_t)&on_stack);
    const struct hd_mapping *heap = hd_process_find_mapping(&process, (uint64_t)(uintptr_t)on_heap);
    cr_assert_not_null(data);
    cr_assert_not_null(stack);
    cr_assert_not_null(heap);
    cr_assert_eq(hd_mapping_classify(data), HD_MAPPING_FILE_PRIVATE, "%s", data->path ? data->path : "(anonymous)");
    cr_assert_eq(hd_mapping_classify(stack), HD_MAPPING_ANONYMOUS_PRIVATE);
    cr_assert_eq(hd_mapping_classify(heap), HD_MAPPING_ANONYMOUS_PRIVATE);
    free(on_heap);
    for (size_t i = 0; i < count; i++)
        free(mappings[i].path);
    free(mappings);
}

/* ---- fd targets and fdinfo ----------------------------------------------------------------------------------- */

Test(fd_target, kinds_and_inodes)
{
    static const struct {
        const char *target;
        enum hd_fd_kind kind;
        uint64_t inode;
    } cases[] = {
        { "pipe:[123]", HD_FD_PIPE, 123 },
        { "socket:[99]", HD_FD_SOCKET, 99 },
        { "socket:[4026531992]", HD_FD_SOCKET, 4026531992ull },
        { "anon_inode:[eventfd]", HD_FD_ANON, 0 },
        { "anon_inode:inotify", HD_FD_ANON, 0 },
        { "/dev/null", HD_FD_FILE, 0 },
        { "/memfd:y (deleted)", HD_FD_FILE, 0 },
        { "net:[4026531992]", HD_FD_OTHER, 0 },
        { "pipe:[12", HD_FD_PIPE, 0 },
        { "pipe:[]", HD_FD_PIPE, 0 },
        { "", HD_FD_OTHER, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum hd_fd_kind kind;
        uint64_t inode;
        probe_classify_fd_target(cases[i].target, &kind, &inode);
        cr_assert_eq(kind, cases[i].kind, "\"%s\"", cases[i].target);
        cr_assert_eq(inode, cases[i].inode, "\"%s\"", cases[i].target);
    }
}

static int access_mode(const char *text)
{
    return probe_parse_fdinfo_access_mode(text, strlen(text));
}

Test(fdinfo, access_mode)
{
    cr_assert_eq(access_mode("pos:\t0\nflags:\t02\nmnt_id:\t15\n"), O_RDWR);
    cr_assert_eq(access_mode("pos:\t0\nflags:\t0100001\nmnt_id:\t15\nino:\t1057\n"), O_WRONLY);
    cr_assert_eq(access_mode("flags:\t0100001"), O_WRONLY);
    cr_assert_eq(access_mode("flags:\t0100000"), O_RDONLY);
    cr_assert_eq(access_mode("pos:\t0\nflags:\t02004002\n"), O_RDWR);
    cr_assert_eq(access_mode("pos:\t0\nmnt_id:\t15\n"), -1, "no flags line");
    cr_assert_eq(access_mode("mnt_flags:\t01\n"), -1, "only a line that starts with flags: counts");
    cr_assert_eq(access_mode("flags:\t\n"), -1, "no digits");
    cr_assert_eq(access_mode(""), -1);
}

/* A signalfd's fdinfo: "sigmask:" in hex, the signals it reads */
Test(fdinfo, signalfd_mask)
{
    const char *text = "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\nsigmask:\t0000000000014002\n";
    cr_assert_eq(probe_parse_fdinfo_signalfd_mask(text, strlen(text)), 0x14002u);
    cr_assert_eq(probe_parse_fdinfo_signalfd_mask("flags:\t02\n", 10), 0u, "not a signalfd");
    const char *hostile = "sigmask:\tffffffffffffffffffffffff\n";
    cr_assert_eq(probe_parse_fdinfo_signalfd_mask(hostile, strlen(hostile)), UINT64_MAX, "16 digits at most");
}

Test(fdinfo, length_bounds_the_text)
{
    const char *text = "pos:\t0\nflags:\t01\n";
    cr_assert_eq(probe_parse_fdinfo_access_mode(text, 7), -1, "the flags line is past the length");
}

#define EPOLL_FDINFO                                                                                                 \
    "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\n"                                                               \
    "tfd:        5 events:       19 data:                5  pos:0 ino:1234 sdev:d\n"                                 \
    "tfd:        9 events:       19 data:                9  pos:0 ino:1235 sdev:d\n"

Test(epoll, targets)
{
    int fds[16];
    bool truncated = true;
    cr_assert_eq(probe_parse_epoll_targets(EPOLL_FDINFO, strlen(EPOLL_FDINFO), fds, 16, &truncated), 2u);
    cr_assert_eq(fds[0], 5);
    cr_assert_eq(fds[1], 9);
    cr_assert_not(truncated);
}

Test(epoll, exactly_max_is_not_truncated)
{
    int fds[2];
    bool truncated = true;
    cr_assert_eq(probe_parse_epoll_targets(EPOLL_FDINFO, strlen(EPOLL_FDINFO), fds, 2, &truncated), 2u);
    cr_assert_not(truncated);
}

Test(epoll, truncated)
{
    int fds[1];
    bool truncated = false;
    cr_assert_eq(probe_parse_epoll_targets(EPOLL_FDINFO, strlen(EPOLL_FDINFO), fds, 1, &truncated), 1u);
    cr_assert_eq(fds[0], 5);
    cr_assert(truncated);
}

Test(epoll, no_targets)
{
    const char *text = "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\n";
    int fds[4];
    bool truncated = true;
    cr_assert_eq(probe_parse_epoll_targets(text, strlen(text), fds, 4, &truncated), 0u);
    cr_assert_not(truncated);
}

/* ---- the real machine ---------------------------------------------------------------------------------------- */

static uint64_t inode_of(int fd)
{
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    return (uint64_t)st.st_ino;
}

Test(unix_sockets, socketpair_is_listed_with_its_peer)
{
    int pair[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    uint64_t a = inode_of(pair[0]), b = inode_of(pair[1]);
    struct probe_unix_socket_table table;
    int result = probe_read_unix_sockets(&table);
    cr_assert_eq(result, 0, "probe_read_unix_sockets: %s", strerror(-result));
    cr_assert(table.count >= 2);
    for (size_t i = 1; i < table.count; i++)
        cr_assert(table.sockets[i - 1].inode <= table.sockets[i].inode, "entry %zu out of order", i);
    const struct probe_unix_socket *first = probe_unix_socket_find(&table, a),
                                    *second = probe_unix_socket_find(&table, b);
    cr_assert_not_null(first, "socket %llu not listed", (unsigned long long)a);
    cr_assert_not_null(second, "socket %llu not listed", (unsigned long long)b);
    cr_assert_eq(first->peer_inode, b);
    cr_assert_eq(second->peer_inode, a);
    cr_assert_null(first->name, "a socketpair is unnamed");
    struct hd_socket_peer *peers;
    size_t count;
    cr_assert(probe_unix_socket_peers(&table, &peers, &count));
    cr_assert_geq(count, 2);
    for (size_t i = 1; i < count; i++)
        cr_assert(peers[i - 1].inode <= peers[i].inode, "peer %zu out of order", i);
    free(peers);
    probe_unix_socket_table_release(&table);
    cr_assert_eq(table.count, 0u);
    close(pair[0]);
    close(pair[1]);
}

/* A listening socket bound to a path, the connection accepted from it (which has the listener's name, as the
 * kernel gives it) and the client's unnamed end; an abstract name with a NUL byte inside. Names as /proc/net/unix
 * shows them. */
Test(unix_sockets, names_of_bound_and_abstract_sockets)
{
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    snprintf(address.sun_path, sizeof address.sun_path, "/tmp/hangdoc-test-unix-%d", (int)getpid());
    unlink(address.sun_path);
    int listener = socket(AF_UNIX, SOCK_STREAM, 0), client = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_eq(bind(listener, (struct sockaddr *)&address, sizeof address), 0, "bind: %s", strerror(errno));
    cr_assert_eq(listen(listener, 1), 0);
    cr_assert_eq(connect(client, (struct sockaddr *)&address, sizeof address), 0, "connect: %s", strerror(errno));
    int accepted = accept(listener, NULL, NULL);
    cr_assert_geq(accepted, 0);
    unlink(address.sun_path);

    struct sockaddr_un abstract = { .sun_family = AF_UNIX };
    int length = snprintf(abstract.sun_path + 1, sizeof abstract.sun_path - 1, "hangdoc-test-%d_x", (int)getpid());
    abstract.sun_path[length - 1] = '\0'; /* the '_': a NUL inside the name */
    int bound = socket(AF_UNIX, SOCK_DGRAM, 0);
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)length);
    cr_assert_eq(bind(bound, (struct sockaddr *)&abstract, size), 0, "bind: %s", strerror(errno));

    struct probe_unix_socket_table table;
    int result = probe_read_unix_sockets(&table);
    cr_assert_eq(result, 0, "probe_read_unix_sockets: %s", strerror(-result));
    const struct probe_unix_socket *listening = probe_unix_socket_find(&table, inode_of(listener)),
                                    *server_end = probe_unix_socket_find(&table, inode_of(accepted)),
                                    *client_end = probe_unix_socket_find(&table, inode_of(client)),
                                    *named = probe_unix_socket_find(&table, inode_of(bound));
    cr_assert(listening && server_end && client_end && named, "each socket is listed");
    cr_assert_str_eq(listening->name, address.sun_path);
    cr_assert_eq(listening->peer_inode, 0u, "a listening socket has no peer");
    cr_assert_str_eq(server_end->name, address.sun_path, "the accepted socket has the listener's name");
    cr_assert_eq(server_end->peer_inode, inode_of(client));
    cr_assert_null(client_end->name);
    cr_assert_eq(client_end->peer_inode, inode_of(accepted));
    char expected[sizeof abstract.sun_path + 1];
    snprintf(expected, sizeof expected, "@hangdoc-test-%d@x", (int)getpid());
    cr_assert_str_eq(named->name, expected);
    probe_unix_socket_table_release(&table);
    close(bound);
    close(accepted);
    close(client);
    close(listener);
}

/* ---- probe_parse_unix_diag: datagrams built by hand ---------------------------------------------------------- */

struct datagram {
    unsigned char bytes[1024] __attribute__((aligned(4)));
    size_t length;
    size_t message; /* where the message being written starts */
};

static void append(struct datagram *d, const void *bytes, size_t length)
{
    cr_assert(d->length + length <= sizeof d->bytes);
    memcpy(d->bytes + d->length, bytes, length);
    d->length += length;
}

static void pad(struct datagram *d)
{
    static const unsigned char zeros[4];
    append(d, zeros, NLMSG_ALIGN(d->length) - d->length);
}

/* Starts a netlink message of `type`; its length is set by end_message(). */
static void begin_message(struct datagram *d, uint16_t type)
{
    d->message = d->length;
    struct nlmsghdr header = { .nlmsg_type = type, .nlmsg_flags = NLM_F_MULTI, .nlmsg_seq = 1 };
    append(d, &header, sizeof header);
}

static void end_message(struct datagram *d)
{
    uint32_t length = (uint32_t)(d->length - d->message);
    memcpy(d->bytes + d->message + offsetof(struct nlmsghdr, nlmsg_len), &length, sizeof length);
    pad(d);
}

static void unix_socket(struct datagram *d, uint32_t inode)
{
    begin_message(d, SOCK_DIAG_BY_FAMILY);
    struct unix_diag_msg message = { .udiag_family = AF_UNIX, .udiag_type = SOCK_STREAM, .udiag_ino = inode };
    append(d, &message, sizeof message);
}

static void attribute(struct datagram *d, uint16_t type, const void *value, size_t length)
{
    struct nlattr header = { .nla_len = (uint16_t)(NLA_HDRLEN + length), .nla_type = type };
    append(d, &header, sizeof header);
    append(d, value, length);
    pad(d);
}

static void done(struct datagram *d)
{
    begin_message(d, NLMSG_DONE);
    int zero = 0;
    append(d, &zero, sizeof zero);
    end_message(d);
}

static int parse_datagram(const struct datagram *d, struct probe_unix_socket_table *table)
{
    *table = (struct probe_unix_socket_table){ 0 };
    return probe_parse_unix_diag(d->bytes, d->length, table);
}

Test(unix_diag, peers_and_names_as_proc_net_unix_shows_them)
{
    struct datagram d = { .length = 0 };
    unix_socket(&d, 1001);
    attribute(&d, UNIX_DIAG_NAME, "/tmp/.X11-unix/X0", sizeof "/tmp/.X11-unix/X0"); /* with its NUL */
    end_message(&d);
    unix_socket(&d, 1002);
    uint32_t peer = 1003;
    attribute(&d, UNIX_DIAG_PEER, &peer, sizeof peer);
    end_message(&d);
    unix_socket(&d, 1004);
    attribute(&d, UNIX_DIAG_NAME, "\0dbus\0abstract", 14); /* abstract, a NUL inside */
    attribute(&d, UNIX_DIAG_NAME, "/second", 8);           /* a second name: the first stays */
    end_message(&d);
    unix_socket(&d, 1005); /* neither bound nor connected */
    end_message(&d);
    size_t before_done = d.length;
    done(&d);

    struct probe_unix_socket_table table;
    cr_assert_eq(parse_datagram(&d, &table), 1, "NLMSG_DONE ends the dump");
    cr_assert_eq(table.count, 4u);
    cr_assert_eq(table.sockets[0].inode, 1001u);
    cr_assert_str_eq(table.sockets[0].name, "/tmp/.X11-unix/X0");
    cr_assert_eq(table.sockets[0].peer_inode, 0u);
    cr_assert_eq(table.sockets[1].peer_inode, 1003u);
    cr_assert_null(table.sockets[1].name);
    cr_assert_str_eq(table.sockets[2].name, "@dbus@abstract");
    cr_assert_eq(table.sockets[3].inode, 1005u);
    struct hd_socket_peer *peers;
    size_t count;
    cr_assert(probe_unix_socket_peers(&table, &peers, &count));
    cr_assert_eq(count, 1u);
    cr_assert_eq(peers[0].inode, 1002u);
    cr_assert_eq(peers[0].peer_inode, 1003u);
    free(peers);
    cr_assert_eq(probe_unix_socket_find(&table, 1004), &table.sockets[2], "sorted already");
    cr_assert_null(probe_unix_socket_find(&table, 0), "inode 0 is no socket");
    probe_unix_socket_table_release(&table);

    d.length = before_done;
    cr_assert_eq(parse_datagram(&d, &table), 0, "no NLMSG_DONE: more is to come");
    cr_assert_eq(table.count, 4u);
    probe_unix_socket_table_release(&table);
}

/* Lengths the kernel would never send: the parser reads only inside the datagram, and says what it made of it. */
Test(unix_diag, hostile_lengths_stay_inside_the_datagram)
{
    static const char long_name[200] = "/tmp/long";
    static const struct {
        const char *name;
        int message_length_delta; /* added to the message's true length */
        uint16_t attribute_length; /* 0: the attribute's true length */
        size_t value_length;
        const void *value;
        int result;
        size_t sockets;
        bool named;
    } cases[] = {
        { "a sound message", 0, 0, 5, "/a/b", 0, 1, true },
        { "message longer than the datagram", 4, 0, 5, "/a/b", -EPROTO, 0, false },
        { "message shorter than its header", -30, 0, 0, "", -EPROTO, 0, false },
        { "message too short for unix_diag_msg", -8, 0, 0, "", -EPROTO, 0, false },
        { "attribute longer than the message", 0, 200, 5, "/a/b", 0, 1, false },
        { "attribute shorter than its header", 0, 2, 5, "/a/b", 0, 1, false },
        { "name longer than sun_path", 0, 0, sizeof long_name, long_name, 0, 1, false },
        { "empty name", 0, 0, 0, "", 0, 1, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct datagram d = { .length = 0 };
        unix_socket(&d, 77);
        size_t attribute_at = d.length;
        attribute(&d, UNIX_DIAG_NAME, cases[i].value, cases[i].value_length);
        if (cases[i].attribute_length)
            memcpy(d.bytes + attribute_at, &cases[i].attribute_length, sizeof cases[i].attribute_length);
        end_message(&d);
        uint32_t length = (uint32_t)((int)(d.length - d.message) + cases[i].message_length_delta);
        if (cases[i].message_length_delta)
            memcpy(d.bytes + d.message, &length, sizeof length);
        struct probe_unix_socket_table table;
        cr_assert_eq(parse_datagram(&d, &table), cases[i].result, "%s", cases[i].name);
        cr_assert_eq(table.count, cases[i].sockets, "%s", cases[i].name);
        if (cases[i].sockets)
            cr_assert_eq(table.sockets[0].name != NULL, cases[i].named, "%s", cases[i].name);
        probe_unix_socket_table_release(&table);
    }
}

Test(unix_diag, errors_peers_too_short_and_other_messages)
{
    struct datagram d = { .length = 0 };
    begin_message(&d, NLMSG_NOOP); /* another type: passed over */
    end_message(&d);
    unix_socket(&d, 5);
    uint16_t short_peer = 9;
    attribute(&d, UNIX_DIAG_PEER, &short_peer, sizeof short_peer); /* two bytes: no inode */
    end_message(&d);
    append(&d, "\1\2\3", 3); /* a tail too short for a header: the datagram ends there */
    struct probe_unix_socket_table table;
    cr_assert_eq(parse_datagram(&d, &table), 0);
    cr_assert_eq(table.count, 1u);
    cr_assert_eq(table.sockets[0].peer_inode, 0u);
    probe_unix_socket_table_release(&table);

    static const struct {
        int error;
        int result;
    } errors[] = { { -EPERM, -EPERM }, { INT_MIN, -EPROTO }, { 0, -EPROTO }, { 5, -EPROTO } };
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        d = (struct datagram){ .length = 0 };
        begin_message(&d, NLMSG_ERROR);
        append(&d, &errors[i].error, sizeof errors[i].error);
        end_message(&d);
        cr_assert_eq(parse_datagram(&d, &table), errors[i].result, "NLMSG_ERROR %d", errors[i].error);
        probe_unix_socket_table_release(&table);
    }
    d = (struct datagram){ .length = 0 };
    begin_message(&d, NLMSG_ERROR); /* no room for the errno */
    end_message(&d);
    cr_assert_eq(parse_datagram(&d, &table), -EPROTO);
    d = (struct datagram){ .length = 0 };
    begin_message(&d, NLMSG_DONE); /* the dump failed midway: the kernel's error in NLMSG_DONE */
    int failed = -ENOBUFS;
    append(&d, &failed, sizeof failed);
    end_message(&d);
    cr_assert_eq(parse_datagram(&d, &table), -ENOBUFS);
    d = (struct datagram){ .length = 0 };
    begin_message(&d, NLMSG_DONE); /* without the int: done all the same */
    end_message(&d);
    cr_assert_eq(parse_datagram(&d, &table), 1);
    cr_assert_eq(probe_parse_unix_diag(d.bytes, 0, &table), 0, "nothing: more is to come");
}

Test(read_fds, socketpair_and_pipe)
{
    int pair[2], ends[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    cr_assert_eq(pipe(ends), 0);
    uint64_t a = inode_of(pair[0]), b = inode_of(pair[1]), pipe_inode = inode_of(ends[0]);
    cr_assert_eq(inode_of(ends[1]), pipe_inode);
    struct hd_fd *fds;
    size_t count;
    bool truncated;
    int result = probe_read_fds(getpid(), 4096, &fds, &count, &truncated);
    cr_assert_eq(result, 0, "probe_read_fds: %s", strerror(-result));
    cr_assert_not(truncated);
    for (size_t i = 1; i < count; i++)
        cr_assert(fds[i - 1].fd < fds[i].fd, "fd entry %zu out of order", i);
    struct hd_process process = { .pid = getpid(), .fds = fds, .nfds = count };
    const struct hd_fd *s0 = hd_process_find_fd(&process, pair[0]), *s1 = hd_process_find_fd(&process, pair[1]);
    const struct hd_fd *reader = hd_process_find_fd(&process, ends[0]), *writer = hd_process_find_fd(&process, ends[1]);
    cr_assert_not_null(s0);
    cr_assert_not_null(s1);
    cr_assert_not_null(reader);
    cr_assert_not_null(writer);
    cr_assert_eq(s0->kind, HD_FD_SOCKET);
    cr_assert_eq(s1->kind, HD_FD_SOCKET);
    cr_assert_eq(s0->inode, a);
    cr_assert_eq(s1->inode, b);
    cr_assert_eq(s0->access_mode, O_RDWR);
    cr_assert_eq(reader->kind, HD_FD_PIPE);
    cr_assert_eq(writer->kind, HD_FD_PIPE);
    cr_assert_eq(reader->inode, pipe_inode);
    cr_assert_eq(writer->inode, pipe_inode);
    cr_assert_eq(reader->access_mode, O_RDONLY);
    cr_assert_eq(writer->access_mode, O_WRONLY);
    cr_assert_not_null(reader->target);
    cr_assert(strncmp(reader->target, "pipe:[", 6) == 0, "%s", reader->target);
    cr_assert_null(hd_process_find_fd(&process, 100000));
    for (size_t i = 0; i < count; i++)
        free(fds[i].target);
    free(fds);
    close(pair[0]);
    close(pair[1]);
    close(ends[0]);
    close(ends[1]);
}

Test(read_fds, max_fds_truncates)
{
    int ends[2];
    cr_assert_eq(pipe(ends), 0);
    struct hd_fd *fds;
    size_t count;
    bool truncated;
    cr_assert_eq(probe_read_fds(getpid(), 1, &fds, &count, &truncated), 0);
    cr_assert_eq(count, 1u);
    cr_assert(truncated);
    for (size_t i = 0; i < count; i++)
        free(fds[i].target);
    free(fds);
    close(ends[0]);
    close(ends[1]);
}

Test(read_fds, no_such_process)
{
    struct hd_fd *fds = (struct hd_fd *)1;
    size_t count = 7;
    bool truncated = true;
    cr_assert(probe_read_fds(0x3fffffff, 16, &fds, &count, &truncated) < 0);
    cr_assert_null(fds);
    cr_assert_eq(count, 0u);
}

Test(fdinfo, a_pty_masters_index)
{
    const char *text = "pos:\t0\nflags:\t0100002\nmnt_id:\t24\nino:\t90\ntty-index:\t17\n";
    cr_assert_eq(probe_parse_fdinfo_tty_index(text, strlen(text)), 17);
    cr_assert_eq(probe_parse_fdinfo_tty_index("flags:\t02\n", 10), -1, "not a master");
    cr_assert_eq(probe_parse_fdinfo_tty_index("tty-index:\tx3\n", 14), -1, "garbage");
    const char *huge = "tty-index:\t99999999999999999999\n";
    cr_assert_eq(probe_parse_fdinfo_tty_index(huge, strlen(huge)), -1, "bounded");
}

Test(fdinfo, a_pty_slaves_index_from_its_path)
{
    cr_assert_eq(probe_pty_slave_index("/dev/pts/0"), 0);
    cr_assert_eq(probe_pty_slave_index("/dev/pts/42"), 42);
    cr_assert_eq(probe_pty_slave_index("/dev/pts/ptmx"), -1, "the master's other name");
    cr_assert_eq(probe_pty_slave_index("/dev/pts/3 (deleted)"), -1);
    cr_assert_eq(probe_pty_slave_index("/dev/pts/"), -1);
    cr_assert_eq(probe_pty_slave_index("/dev/tty1"), -1);
}

/* A real pty: the master's fd names its index, the slave's path the same one. */
Test(read_fds, a_pty_master_and_its_slave)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    cr_assert_geq(master, 0);
    cr_assert_eq(grantpt(master), 0);
    cr_assert_eq(unlockpt(master), 0);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    cr_assert_geq(slave, 0);
    struct hd_fd *fds;
    size_t count;
    bool truncated;
    cr_assert_eq(probe_read_fds(getpid(), 256, &fds, &count, &truncated), 0);
    const struct hd_fd *master_fd = NULL, *slave_fd = NULL;
    for (size_t i = 0; i < count; i++) {
        if (fds[i].fd == master)
            master_fd = &fds[i];
        if (fds[i].fd == slave)
            slave_fd = &fds[i];
    }
    cr_assert(master_fd && master_fd->pty && master_fd->pty_master);
    cr_assert(slave_fd && slave_fd->pty && !slave_fd->pty_master);
    cr_assert_eq(master_fd->pty_index, slave_fd->pty_index);
    for (size_t i = 0; i < count; i++)
        free(fds[i].target);
    free(fds);
    close(slave);
    close(master);
}
