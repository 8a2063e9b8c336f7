/* Kernel facilities, probed once (facilities.h). */
#include "facilities.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

static struct probe_facilities facilities;
static pthread_once_t probed = PTHREAD_ONCE_INIT;

/* Whether `path` of hangdoc's own process opens: any error but "no such file" means it exists. */
static bool proc_file_exists(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno != ENOENT;
    close(fd);
    return true;
}

static void probe_once(void)
{
    facilities.syscall_files = proc_file_exists("/proc/thread-self/syscall") || proc_file_exists("/proc/self/syscall");
    facilities.proc_mem = proc_file_exists("/proc/self/mem");
    int here = 1, copy = 0;
    struct iovec local = { .iov_base = &copy, .iov_len = sizeof copy };
    struct iovec remote = { .iov_base = &here, .iov_len = sizeof here };
    facilities.cross_memory_attach = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) >= 0 || errno != ENOSYS;
}

const struct probe_facilities *probe_facilities(void)
{
    pthread_once(&probed, probe_once);
    return &facilities;
}
