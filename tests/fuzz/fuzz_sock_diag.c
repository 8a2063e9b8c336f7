/* libFuzzer harness: a datagram of a NETLINK_SOCK_DIAG dump of the unix sockets (probe/fds.h), as the kernel would
 * answer hangdoc's query: netlink messages, each a unix_diag_msg and its attributes (the peer's inode, the name).
 * Every length in it is the fuzzer's; the parser must stay inside the bytes, and what it keeps is then looked up,
 * turned into the snapshot's peers and freed, so that the sanitizers see every name and inode read. */
#include "fds.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly `size` bytes: a read past the end is caught, not hidden by libFuzzer's own buffer */
    uint8_t *datagram = malloc(size ? size : 1);
    if (!datagram)
        return 0;
    memcpy(datagram, data, size);
    struct probe_unix_socket_table table = { 0 };
    int result = probe_parse_unix_diag(datagram, size, &table);
    sink += (uint64_t)(int64_t)result;
    for (size_t i = 0; i < table.count; i++) {
        const struct probe_unix_socket *socket = &table.sockets[i];
        sink += socket->inode + socket->peer_inode + (socket->name ? strlen(socket->name) : 0);
        const struct probe_unix_socket *peer = probe_unix_socket_find(&table, socket->peer_inode);
        sink += peer ? peer->inode : 0;
    }
    struct hd_socket_peer *peers;
    size_t count;
    if (probe_unix_socket_peers(&table, &peers, &count)) {
        for (size_t i = 0; i < count; i++)
            sink += peers[i].inode ^ peers[i].peer_inode;
        free(peers);
    }
    probe_unix_socket_table_release(&table);
    free(datagram);
    return 0;
}
