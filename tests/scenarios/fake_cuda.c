/* A stand-in for the CUDA driver, built as a shared library whose soname is libcuda.so.1: cuInit() starts a thread
 * named cuda-EvtHandlr, as the real driver does, that opens a handle and takes the driver's internal lock in a loop;
 * cuCtxSynchronize() takes the same lock. A child forked while the thread holds it hangs in cuCtxSynchronize().
 * The handle is a file named hangdoc-fake-nvidia-<pid> (deleted at once): tests classify it as an NVIDIA device with
 * --catalogue. */
#include "fake_cuda.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The version field keeps the lock in .data, the library's own file-backed memory, as a driver's globals are */
static struct {
    int version;
    pthread_mutex_t lock;
    volatile int handle;
    volatile pid_t event_thread;
} driver = { 12000, PTHREAD_MUTEX_INITIALIZER, -1, 0 };

static void *event_handler(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "cuda-EvtHandlr");
    char path[96];
    snprintf(path, sizeof path, "/tmp/hangdoc-fake-nvidia-%d", (int)getpid());
    int handle = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    unlink(path);
    driver.event_thread = gettid();
    driver.handle = handle;
    const struct timespec hold = { .tv_nsec = 20 * 1000 * 1000 };
    for (;;) {
        pthread_mutex_lock(&driver.lock);
        nanosleep(&hold, NULL); /* events are handled under the lock */
        pthread_mutex_unlock(&driver.lock);
    }
    return NULL;
}

int cuInit(unsigned flags)
{
    (void)flags;
    pthread_t thread;
    if (pthread_create(&thread, NULL, event_handler, NULL) != 0)
        return 1;
    while (driver.handle < 0)
        usleep(1000);
    return 0;
}

int cuCtxSynchronize(void)
{
    pthread_mutex_lock(&driver.lock);
    pthread_mutex_unlock(&driver.lock);
    return 0;
}

/* For the fixture's ready line: the handle's fd and the event thread's tid */
int fakeCudaHandle(void)
{
    return driver.handle;
}

pid_t fakeCudaEventThread(void)
{
    return driver.event_thread;
}
