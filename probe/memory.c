/* process_vm_readv with a /proc/<pid>/mem fallback, a range or a batch of them (memory.h). */
#include "memory.h"

#include "facilities.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

/* Remote ranges per process_vm_readv: the kernel refuses more than UIO_MAXIOV (1024, IOV_MAX). */
#define RANGES_PER_CALL 1024

/* Each range through /proc/<pid>/mem, which stops at a fault as process_vm_readv does. 0, or -errno when the file
 * could not be opened. */
static int read_through_proc_mem(pid_t pid, struct probe_memory_range *ranges, size_t count)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd cleanup_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    for (size_t i = 0; i < count; i++) {
        ssize_t got = pread(fd, ranges[i].buffer, ranges[i].size, (off_t)ranges[i].address);
        ranges[i].got = got < 0 ? 0 : (size_t)got;
    }
    return 0;
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

int probe_read_memory_ranges(pid_t pid, struct probe_memory_range *ranges, size_t count)
{
    bool offline_pid = false;
    for (size_t i = 0; i < noffline && !offline_pid; i++) {
        if (offline[i].pid != pid)
            continue;
        offline_pid = true;
        for (size_t r = 0; r < count; r++)
            ranges[r].got = ranges[r].address <= UINT64_MAX - ranges[r].size &&
                                    offline[i].read(offline[i].context, ranges[r].address, ranges[r].buffer,
                                                    ranges[r].size)
                                ? ranges[r].size
                                : 0;
    }
    if (offline_pid)
        return 0;
    if (noffline > 0)
        return -ESRCH; /* cores are read: another pid is no process of theirs, whatever this machine runs */
    if (!probe_facilities()->cross_memory_attach)
        return read_through_proc_mem(pid, ranges, count);
    struct iovec local[RANGES_PER_CALL], remote[RANGES_PER_CALL];
    size_t next = 0;
    while (next < count) {
        size_t chunk = count - next < RANGES_PER_CALL ? count - next : RANGES_PER_CALL;
        for (size_t i = 0; i < chunk; i++) {
            local[i] = (struct iovec){ .iov_base = ranges[next + i].buffer, .iov_len = ranges[next + i].size };
            remote[i] = (struct iovec){ .iov_base = (void *)(uintptr_t)ranges[next + i].address,
                                        .iov_len = ranges[next + i].size };
        }
        ssize_t got = process_vm_readv(pid, local, chunk, remote, chunk, 0);
        /* ENOSYS: no cross-memory attach in this kernel; anything else but a fault (ESRCH, EPERM) /proc/<pid>/mem
         * would refuse too */
        if (got < 0 && errno == ENOSYS)
            return read_through_proc_mem(pid, ranges + next, count - next);
        if (got < 0 && errno != EFAULT)
            return -errno;
        /* the call stops at the first range that faults: those before it came whole, that one as far as it went,
         * and the next call starts after it */
        size_t left = got < 0 ? 0 : (size_t)got, done = 0;
        for (; done < chunk && left >= ranges[next + done].size; done++) {
            ranges[next + done].got = ranges[next + done].size;
            left -= ranges[next + done].size;
        }
        if (done < chunk)
            ranges[next + done++].got = left;
        next += done;
    }
    return 0;
}

int probe_read_memory_checked(pid_t pid, uint64_t address, void *buffer, size_t size)
{
    if (address > UINT64_MAX - size)
        return -EFAULT;
    struct probe_memory_range range = { .address = address, .buffer = buffer, .size = size };
    int error = probe_read_memory_ranges(pid, &range, 1);
    if (error)
        return error;
    return range.got == size ? 0 : -EFAULT; /* a short read: the range ends in an unmapped page */
}

bool probe_read_memory(pid_t pid, uint64_t address, void *buffer, size_t size)
{
    return probe_read_memory_checked(pid, address, buffer, size) == 0;
}

bool probe_read_memory_of(void *context, uint64_t address, void *buffer, size_t size)
{
    return probe_read_memory(*(const pid_t *)context, address, buffer, size);
}
