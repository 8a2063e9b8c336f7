/* Opening files a target names, never running a driver (files.h). */
#include "files.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Devices are compared only when both are real block devices (major not 0): overlayfs and btrfs show one device
 * in /proc/<pid>/maps and another to stat(), as unwind.c's check of the same file knows. */
static bool is_that_file(const struct stat *status, const struct hd_mapping *same_as)
{
    if (!S_ISREG(status->st_mode))
        return false;
    if (!same_as)
        return true;
    if (status->st_ino != same_as->inode)
        return false;
    bool both_real = major(status->st_dev) != 0 && same_as->device_major != 0;
    return !both_real ||
           (major(status->st_dev) == same_as->device_major && minor(status->st_dev) == same_as->device_minor);
}

int probe_open_regular(const char *path, const struct hd_mapping *same_as)
{
    int handle = open(path, O_PATH | O_CLOEXEC);
    if (handle < 0)
        return -1;
    struct stat status;
    int fd = -1;
    if (fstat(handle, &status) == 0 && is_that_file(&status, same_as)) {
        char again[64];
        snprintf(again, sizeof again, "/proc/self/fd/%d", handle);
        fd = open(again, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    }
    close(handle);
    return fd;
}
