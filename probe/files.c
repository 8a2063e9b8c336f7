/* Opening files a target names, never running a driver (files.h). */
#include "files.h"

#include "util.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Filesystems whose st_dev is not the device /proc/<pid>/maps names for the same file: overlayfs (maps may name
 * the real layer's device) and btrfs (maps names the filesystem's, stat a subvolume's). There the inode, which
 * both take from the real file, has to do. */
static const unsigned long devices_differ[] = { OVERLAYFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC };

/* Whether `status` (of `handle`) is the file a mapping names. The inode number alone is not: another filesystem
 * (a container's next to the host's) has the same numbers. */
static bool same_file(int handle, const struct stat *status, const struct hd_mapping *mapping)
{
    if (status->st_ino != mapping->inode)
        return false;
    if (major(status->st_dev) == mapping->device_major && minor(status->st_dev) == mapping->device_minor)
        return true;
    struct statfs filesystem;
    if (fstatfs(handle, &filesystem) != 0)
        return false;
    for (size_t i = 0; i < COUNT(devices_differ); i++)
        if ((unsigned long)filesystem.f_type == devices_differ[i])
            return true;
    return false;
}

int probe_open_regular(const char *path, const struct hd_mapping *same_as)
{
    int handle = open(path, O_PATH | O_CLOEXEC);
    if (handle < 0)
        return -1;
    struct stat status;
    int fd = -1;
    if (fstat(handle, &status) == 0 && S_ISREG(status.st_mode) && (!same_as || same_file(handle, &status, same_as))) {
        char again[64];
        snprintf(again, sizeof again, "/proc/self/fd/%d", handle);
        fd = open(again, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    }
    close(handle);
    return fd;
}

static struct probe_offline_files offline_files;
static bool offline;

void probe_files_set_offline(const struct probe_offline_files *files)
{
    offline_files = *files;
    offline = true;
}

void probe_files_clear_offline(void)
{
    offline_files = (struct probe_offline_files){ 0 };
    offline = false;
}

bool probe_files_offline(void)
{
    return offline;
}

const char *probe_files_locate(const char *path, char *buffer, size_t size)
{
    int written;
    if (offline_files.exe_named && offline_files.exe && strcmp(path, offline_files.exe_named) == 0)
        written = snprintf(buffer, size, "%s", offline_files.exe);
    else
        written = snprintf(buffer, size, "%s%s", offline_files.sysroot ? offline_files.sysroot : "", path);
    return written >= 0 && (size_t)written < size ? buffer : NULL;
}
