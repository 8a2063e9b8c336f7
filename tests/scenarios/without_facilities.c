/* Runs a program as on a kernel that lacks some of what hangdoc reads, the way old kernels and sandboxes such as
 * gVisor do, with a seccomp filter on this kernel (no mock: the program meets the real refusals):
 *   without_facilities [--no-syscall-files] [--no-cross-memory-attach] [--no-proc-mem] -- PROGRAM [ARGUMENT...]
 * --no-cross-memory-attach makes process_vm_readv(2) fail with ENOSYS, as without CONFIG_CROSS_MEMORY_ATTACH.
 * --no-syscall-files and --no-proc-mem make opening /proc/.../syscall or /proc/.../mem fail with ENOENT, as without
 * CONFIG_HAVE_ARCH_TRACEHOOK or in gVisor: the filter hands each open to this process (seccomp user notification),
 * which reads the path from the program's memory and refuses those, letting every other open go on.
 * This process stays the program's parent and exits with its status (128 + N when signal N ended it). */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct refusals {
    bool syscall_files, cross_memory_attach, proc_mem;
};

static bool ends_with(const char *text, const char *end)
{
    size_t length = strlen(text), end_length = strlen(end);
    return length >= end_length && strcmp(text + length - end_length, end) == 0;
}

/* The filter: process_vm_readv refused with ENOSYS, open and openat handed to the supervisor. */
static int install_filter(const struct refusals *refusals)
{
    bool notify = refusals->syscall_files || refusals->proc_mem;
    struct sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, refusals->cross_memory_attach ? SECCOMP_RET_ERRNO | ENOSYS : SECCOMP_RET_ALLOW),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog filter = { .len = sizeof program / sizeof program[0], .filter = program };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0,
                        &filter);
}

/* One byte of data and room for one descriptor: what passes the listener from the child to this process. */
struct fd_message {
    char data;
    struct iovec iov;
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr header;
};

static void fd_message_init(struct fd_message *message)
{
    *message = (struct fd_message){ .data = 'f' };
    message->iov = (struct iovec){ .iov_base = &message->data, .iov_len = 1 };
    message->header = (struct msghdr){ .msg_iov = &message->iov, .msg_iovlen = 1,
                                       .msg_control = message->control.buffer,
                                       .msg_controllen = sizeof message->control.buffer };
}

static void send_fd(int socket, int fd)
{
    struct fd_message message;
    fd_message_init(&message);
    struct cmsghdr *header = CMSG_FIRSTHDR(&message.header);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &fd, sizeof fd);
    if (sendmsg(socket, &message.header, 0) != 1)
        _exit(125);
}

static int receive_fd(int socket)
{
    struct fd_message message;
    fd_message_init(&message);
    if (recvmsg(socket, &message.header, 0) != 1)
        return -1;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message.header);
    if (!header || header->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(header), sizeof fd);
    return fd;
}

/* The path an open or openat of `pid` names, from its memory; "" when it cannot be read. */
static void read_path(pid_t pid, uint64_t address, char *path, size_t size)
{
    char file[64];
    snprintf(file, sizeof file, "/proc/%d/mem", (int)pid);
    path[0] = '\0';
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t got = pread(fd, path, size - 1, (off_t)address);
    close(fd);
    path[got > 0 ? (size_t)got : 0] = '\0';
}

static bool refused(const struct refusals *refusals, const char *path)
{
    if (strncmp(path, "/proc/", 6) != 0)
        return false;
    return (refusals->syscall_files && ends_with(path, "/syscall")) || (refusals->proc_mem && ends_with(path, "/mem"));
}

/* Answers the program's opens until it exits. */
static void supervise(int listener, pid_t child, const struct refusals *refusals)
{
    struct seccomp_notif_sizes sizes;
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0)
        return;
    struct seccomp_notif *request = calloc(1, sizes.seccomp_notif);
    struct seccomp_notif_resp *response = calloc(1, sizes.seccomp_notif_resp);
    if (!request || !response)
        return;
    for (;;) {
        struct pollfd ready = { .fd = listener, .events = POLLIN };
        int polled = poll(&ready, 1, 100);
        if (polled < 0 && errno != EINTR)
            break;
        if (polled <= 0 || !(ready.revents & POLLIN)) {
            siginfo_t ended = { .si_pid = 0 };
            if (ready.revents & (POLLHUP | POLLERR) ||
                (waitid(P_PID, (id_t)child, &ended, WEXITED | WNOHANG | WNOWAIT) == 0 && ended.si_pid != 0))
                break;
            continue;
        }
        memset(request, 0, sizes.seccomp_notif);
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, request) != 0)
            continue; /* the caller was interrupted or is gone */
        char path[4096];
        uint64_t path_address = request->data.nr == SYS_openat ? request->data.args[1] : request->data.args[0];
        read_path((pid_t)request->pid, path_address, path, sizeof path);
        memset(response, 0, sizes.seccomp_notif_resp);
        response->id = request->id;
        if (refused(refusals, path))
            response->error = -ENOENT;
        else
            response->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response); /* ENOENT: the caller is gone */
    }
    free(request);
    free(response);
}

int main(int argc, char **argv)
{
    struct refusals refusals = { false, false, false };
    int first = 1;
    for (; first < argc && strcmp(argv[first], "--") != 0; first++) {
        if (strcmp(argv[first], "--no-syscall-files") == 0)
            refusals.syscall_files = true;
        else if (strcmp(argv[first], "--no-cross-memory-attach") == 0)
            refusals.cross_memory_attach = true;
        else if (strcmp(argv[first], "--no-proc-mem") == 0)
            refusals.proc_mem = true;
        else {
            fprintf(stderr, "without_facilities: unknown option %s\n", argv[first]);
            return 125;
        }
    }
    if (first + 1 >= argc) {
        fprintf(stderr, "usage: without_facilities [--no-...] -- PROGRAM [ARGUMENT...]\n");
        return 125;
    }
    int sockets[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
        return 125;
    pid_t child = fork();
    if (child < 0)
        return 125;
    if (child == 0) {
        close(sockets[0]);
        int listener = install_filter(&refusals);
        if (listener < 0) {
            fprintf(stderr, "without_facilities: seccomp: %s\n", strerror(errno));
            _exit(125);
        }
        if (refusals.syscall_files || refusals.proc_mem) {
            send_fd(sockets[1], listener);
            close(listener);
        }
        close(sockets[1]);
        execvp(argv[first + 1], argv + first + 1);
        _exit(127);
    }
    close(sockets[1]);
    if (refusals.syscall_files || refusals.proc_mem) {
        int listener = receive_fd(sockets[0]);
        if (listener >= 0) {
            supervise(listener, child, &refusals);
            close(listener);
        }
    }
    close(sockets[0]);
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            return 125;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
