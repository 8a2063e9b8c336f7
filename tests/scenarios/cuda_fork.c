/* A process initialises the (fake) CUDA driver, then forks; the child calls into the driver and hangs on the lock
 * that the parent's cuda-EvtHandlr thread held at fork(). The parent forks until a child fails to finish within
 * 200 ms (the thread holds the lock nearly all the time: it takes one fork as a rule).
 * Before forking, the parent also opens handles of the kinds GUI and GPU runtimes hold, at fixed numbers, for the
 * classification: an eventfd, a memfd, the client end of a connection to an X11-named socket, /dev/null; the
 * child reopens /dev/null on its own (the same target, another open file: kcmp must tell them apart).
 * ready <parent pid> <hung child pid> <cuda-EvtHandlr tid> <handle fd> */
#include "fake_cuda.h"
#include "fixture.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

enum { EVENTFD_FD = 20, MEMFD_FD = 21, X11_CLIENT_FD = 22, X11_SERVER_FD = 23, REOPENED_FD = 24, X11_ACCEPTED_FD = 25 };

static bool at(int fd, int number)
{
    return fd >= 0 && dup2(fd, number) == number && close(fd) == 0;
}

/* An abstract socket named like X display 9000 + pid % 1000 (abstract names vanish with their socket) */
static bool open_handles(void)
{
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    int length = snprintf(address.sun_path + 1, sizeof address.sun_path - 1, "/tmp/.X11-unix/X%d",
                          9000 + (int)(getpid() % 1000));
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)length);
    int server = socket(AF_UNIX, SOCK_STREAM, 0), client = socket(AF_UNIX, SOCK_STREAM, 0);
    bool ok = server >= 0 && client >= 0 && bind(server, (struct sockaddr *)&address, size) == 0 &&
              listen(server, 1) == 0 && connect(client, (struct sockaddr *)&address, size) == 0;
    /* an X server accepts its clients: the accepted end is listed under the server's name */
    return ok && at(accept(server, NULL, NULL), X11_ACCEPTED_FD) && at(server, X11_SERVER_FD) &&
           at(client, X11_CLIENT_FD) && at(eventfd(0, 0), EVENTFD_FD) &&
           at(memfd_create("fake-cuda-ipc", 0), MEMFD_FD) && at(open("/dev/null", O_RDONLY), REOPENED_FD);
}

int main(void)
{
    pid_t self = getpid();
    if (!open_handles() || cuInit(0) != 0)
        return 1;
    for (int forks = 1; forks <= 200; forks++) {
        pid_t child = fork();
        if (child < 0)
            return 1;
        if (child == 0) {
            fixture_die_with_parent(self);
            prctl(PR_SET_NAME, "worker");
            if (close(REOPENED_FD) != 0 || !at(open("/dev/null", O_RDONLY), REOPENED_FD))
                _exit(1);
            cuCtxSynchronize();
            _exit(0);
        }
        if (!fixture_child_exits_within(child, 200)) {
            fixture_wait_for_wchan(child, child, "futex");
            fixture_ready("ready %d %d %d %d", (int)self, (int)child, (int)fakeCudaEventThread(), fakeCudaHandle());
            waitpid(child, NULL, 0);
            return 0;
        }
    }
    return 3; /* never reproduced */
}
