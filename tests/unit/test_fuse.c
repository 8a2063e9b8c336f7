/* FUSE's parsers (probe/fuse.h): where a kernel stack or a wait channel puts a thread, the FUSE mounts of a
 * mountinfo text (escaped mount points, optional fields, subtypes), the connection number of a device, and the
 * mount a path is under. */
#include "fuse.h"

#include <criterion/criterion.h>
#include <string.h>

Test(fuse, a_request_waiting_for_its_answer_is_a_call)
{
    bool awaits;
    const char *stack = "[<0>] request_wait_answer+0x16a/0x280\n[<0>] __fuse_simple_request+0x120/0x330\n"
                        "[<0>] fuse_lookup_name+0xea/0x250\n[<0>] vfs_statx+0x7a/0x170\n";
    cr_assert_eq(probe_fuse_place(stack, "request_wait_answer", &awaits), PROBE_FUSE_CALL);
    cr_assert(awaits);
}

Test(fuse, a_lock_a_request_holds_is_a_call_that_awaits_no_answer)
{
    bool awaits;
    cr_assert_eq(probe_fuse_place("[<0>] fuse_lock_inode+0x33/0x50\n[<0>] fuse_lookup+0x93/0x1e0\n", NULL, &awaits),
                 PROBE_FUSE_CALL);
    cr_assert_not(awaits);
}

Test(fuse, the_daemons_read_of_dev_fuse_is_not_a_call)
{
    bool awaits;
    cr_assert_eq(probe_fuse_place("[<0>] fuse_dev_do_read+0xa94/0xaf0\n[<0>] fuse_dev_read+0xa3/0xe0\n"
                                  "[<0>] vfs_read+0x2a4/0x3d0\n", "fuse_dev_do_read", &awaits),
                 PROBE_FUSE_DAEMON_READ);
    cr_assert_eq(probe_fuse_place(NULL, "fuse_dev_do_read", &awaits), PROBE_FUSE_DAEMON_READ);
}

Test(fuse, without_a_kernel_stack_the_wait_channel_decides)
{
    bool awaits;
    cr_assert_eq(probe_fuse_place(NULL, "request_wait_answer", &awaits), PROBE_FUSE_CALL);
    cr_assert(awaits);
    cr_assert_eq(probe_fuse_place(NULL, "futex_do_wait", &awaits), PROBE_FUSE_NONE);
    cr_assert_eq(probe_fuse_place(NULL, "", &awaits), PROBE_FUSE_NONE);
    cr_assert_eq(probe_fuse_place("[<0>] futex_do_wait+0x1/0x2\nno bracket here fuse_x\n", NULL, &awaits),
                 PROBE_FUSE_NONE);
}

static const char *const mountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "69 68 0:42 / /mnt/hangdoc-fuse rw,nosuid,nodev,relatime - fuse hangdoc-fixture rw,user_id=0,group_id=0\n"
    "70 22 0:43 / /home/me/remote\\040box rw shared:7 master:3 - fuse.sshfs me@box: rw,user_id=1000\n"
    "71 22 259:3 / /media/usb rw - fuseblk /dev/sdb1 rw\n"
    "72 22 0:44 / /mnt/cut rw - fuse\n"
    "garbage line\n"
    "73 22 0:45 / /proc rw - proc proc rw\n";

Test(fuse, finds_the_fuse_mounts_and_only_them)
{
    struct probe_fuse_mount mounts[8];
    size_t count = probe_fuse_parse_mounts(mountinfo, mounts, 8);
    cr_assert_eq(count, 4);
    cr_assert_eq(mounts[0].mount_id, 69);
    cr_assert_eq(mounts[0].minor, 42);
    cr_assert_str_eq(mounts[0].mount_point, "/mnt/hangdoc-fuse");
    cr_assert_str_eq(mounts[0].source, "hangdoc-fixture");
    cr_assert_str_eq(mounts[1].mount_point, "/home/me/remote box", "\\040 is a space");
    cr_assert_str_eq(mounts[1].fs_type, "fuse.sshfs");
    cr_assert_str_eq(mounts[1].source, "me@box:");
    cr_assert_eq(mounts[2].major, 259);
    cr_assert_str_eq(mounts[3].source, "", "a line cut after its type keeps no source");
}

Test(fuse, stops_at_the_room_it_has)
{
    struct probe_fuse_mount mounts[1];
    cr_assert_eq(probe_fuse_parse_mounts(mountinfo, mounts, 1), 1);
    cr_assert_eq(probe_fuse_parse_mounts("", mounts, 1), 0);
}

Test(fuse, the_connection_is_the_kernels_device_number)
{
    cr_assert_eq(probe_fuse_connection(0, 42), 42u);
    cr_assert_eq(probe_fuse_connection(259, 3), (259u << 20) | 3u);
}

Test(fuse, a_path_is_under_the_longest_mount_point_that_is_a_whole_prefix)
{
    struct probe_fuse_mount mounts[3] = { { .mount_point = "/mnt" }, { .mount_point = "/mnt/a" },
                                          { .mount_point = "/mnt/ab" } };
    cr_assert_eq(probe_fuse_mount_of_path(mounts, 3, "/mnt/a/file"), &mounts[1]);
    cr_assert_eq(probe_fuse_mount_of_path(mounts, 3, "/mnt/a"), &mounts[1]);
    cr_assert_eq(probe_fuse_mount_of_path(mounts, 3, "/mnt/abc"), &mounts[0], "/mnt/ab is not a prefix of /mnt/abc");
    cr_assert_null(probe_fuse_mount_of_path(mounts, 3, "/mn"));
    cr_assert_null(probe_fuse_mount_of_path(mounts, 3, "relative/mnt/a"));
}
