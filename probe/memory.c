/* process_vm_readv with a /proc/<pid>/mem fallback (memory.h). */
#include "memory.h"

#include "facilities.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

/* 0, or -errno */
static int read_through_proc_mem(pid_t pid, uint64_t address, void *buffer, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t got = pread(fd, buffer, size, (off_t)address);
    int error = got < 0 ? errno : EFAULT;
    close(fd);
    return got == (ssize_t)size ? 0 : -error;
}

static struct offline_memory {
    pid_t pid;
    bool (*read)(void *context, uint64_t address, void *buffer, size_t size);
    void *context;
} offline[PROBE_OFFLINE_MAX];
static size_t noffline;

bool probe_memory_offline(pid_t pid, bool (*read)(void *context, uint64_t address, void *buffer, size_t size),
                          void *context)
{
    if (noffline >= PROBE_OFFLINE_MAX)
        return false;
    offline[noffline++] = (struct offline_memory){ .pid = pid, .read = read, .context = context };
    return true;
}

void probe_memory_forget_offline(void)
{
    noffline = 0;
}

int probe_read_memory_checked(pid_t pid, uint64_t address, void *buffer, size_t size)
{
    if (address > UINT64_MAX - size)
        return -EFAULT;
    for (size_t i = 0; i < noffline; i++)
        if (offline[i].pid == pid)
            return offline[i].read(offline[i].context, address, buffer, size) ? 0 : -EFAULT;
    if (noffline > 0)
        return -ESRCH; /* cores are read: another pid is no process of theirs, whatever this machine runs */
    if (!probe_facilities()->cross_memory_attach)
        return read_through_proc_mem(pid, address, buffer, size);
    struct iovec local = { .iov_base = buffer, .iov_len = size };
    struct iovec remote = { .iov_base = (void *)(uintptr_t)address, .iov_len = size };
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got == (ssize_t)size)
        return 0;
    if (got >= 0)
        return -EFAULT; /* a short read: the range ends in an unmapped page */
    int error = errno;
    /* ENOSYS: no cross-memory attach in this kernel; anything else (EFAULT, ESRCH, EPERM) /proc/<pid>/mem would
     * refuse too. */
    if (error == ENOSYS)
        return read_through_proc_mem(pid, address, buffer, size);
    return -error;
}

bool probe_read_memory(pid_t pid, uint64_t address, void *buffer, size_t size)
{
    return probe_read_memory_checked(pid, address, buffer, size) == 0;
}

bool probe_read_memory_of(void *context, uint64_t address, void *buffer, size_t size)
{
    return probe_read_memory(*(const pid_t *)context, address, buffer, size);
}
