/* A FUSE file system served by libfuse 3, and its clients, in a mount namespace of their own.
 *   fuse_daemon self    a single-threaded daemon whose getattr of /self stats a file of its own mount: the one
 *                       thread that reads /dev/fuse waits for a request only it would answer (a deadlock through
 *                       the kernel). A client stats /self and waits for the daemon.
 *   fuse_daemon cycle   a multi-threaded daemon whose read of /a takes lock A then B and whose read of /b takes B
 *                       then A, each after the other has its first: two clients read /a and /b and wait for two
 *                       daemon threads in a lock-order deadlock.
 *   fuse_daemon slow    the look-alike: every read of /slow takes 200 ms, and a client reads it again and again.
 *   fuse_daemon idle    a daemon with no request pending and a client that sleeps (nothing waits for it).
 * ready <daemon pid> <client pid>... <daemon thread tids...>: for self, the daemon's thread; for cycle, the two
 * handler threads (lock A's holder first); none for slow and idle.
 *
 * The daemon unshares its mount namespace and mounts a tmpfs on /mnt and the file system on /mnt/hangdoc-fuse, so
 * nothing is left mounted outside when the group is killed: the namespace, and its mounts, go with its last
 * process. Exit 3: no /dev/fuse or no right to mount here (the test skips).
 *
 * The self deadlock cannot be killed: the daemon's thread waits in D for the directory's lock, and a killed client
 * waits in D for the answer its request was sent for. A guard outside the group (a grandchild in its own session)
 * watches the thread that put the scenario in position, which lives until the group is killed, and then aborts the
 * connection (/sys/fs/fuse/connections/N/abort), which fails every request and lets all of them die. Where fusectl
 * is not mounted (no systemd to do it), the guard mounts it in the fixture's own mount namespace, which leaves
 * the machine's, and what hangdoc reads there, as they were.
 */
#define FUSE_USE_VERSION 31
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define MOUNT_POINT "/mnt/hangdoc-fuse"

static const char *mode;
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_first; /* each cycle handler holds its first lock */
static int tid_pipe[2];              /* the cycle handlers' tids, lock A's first */

static const char *const files[] = { "self", "hello", "inner", "a", "b", "slow" };

static bool known_file(const char *path)
{
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (path[0] == '/' && strcmp(path + 1, files[i]) == 0)
            return true;
    return false;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *info)
{
    (void)info;
    memset(st, 0, sizeof *st);
    if (strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        return 0;
    }
    if (!known_file(path))
        return -ENOENT;
    if (strcmp(path, "/self") == 0) {
        /* the deadlock: a request to this very mount, which only this thread would read */
        struct stat inner;
        if (stat(MOUNT_POINT "/inner", &inner) != 0) /* a name no one looked up yet: not in the cache */
            return -EIO;
    }
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = 4096;
    return 0;
}

static int fs_open(const char *path, struct fuse_file_info *info)
{
    if (!known_file(path))
        return -ENOENT;
    info->direct_io = 1; /* every read reaches the daemon: no page cache between */
    return 0;
}

static void report_tid(void)
{
    pid_t tid = fixture_gettid();
    if (write(tid_pipe[1], &tid, sizeof tid) != sizeof tid)
        _exit(1);
}

static int fs_read(const char *path, char *buffer, size_t size, off_t offset, struct fuse_file_info *info)
{
    (void)offset;
    (void)info;
    if (strcmp(path, "/a") == 0 || strcmp(path, "/b") == 0) {
        bool a = path[1] == 'a';
        pthread_mutex_lock(a ? &lock_a : &lock_b);
        report_tid();
        pthread_barrier_wait(&both_first);
        pthread_mutex_lock(a ? &lock_b : &lock_a);
    } else if (strcmp(path, "/slow") == 0) {
        struct timespec pause = { 0, 200 * 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
    size_t n = size < 16 ? size : 16;
    memset(buffer, 'x', n);
    return (int)n;
}

static int fs_readdir(const char *path, void *buffer, fuse_fill_dir_t fill, off_t offset,
                      struct fuse_file_info *info, enum fuse_readdir_flags flags)
{
    (void)offset;
    (void)info;
    (void)flags;
    if (strcmp(path, "/") != 0)
        return -ENOENT;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        fill(buffer, files[i], NULL, 0, 0);
    return 0;
}

static const struct fuse_operations operations = {
    .getattr = fs_getattr,
    .open = fs_open,
    .read = fs_read,
    .readdir = fs_readdir,
};

/* A client: dies with the daemon, then does what its mode says to FILE, forever. */
static pid_t start_client(pid_t daemon, const char *file, bool again_and_again)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    fixture_die_with_parent(daemon);
    char path[128];
    snprintf(path, sizeof path, MOUNT_POINT "/%s", file);
    if (!file[0])
        for (;;)
            pause();
    if (strcmp(file, "self") == 0) {
        struct stat st;
        stat(path, &st);
        _exit(2);
    }
    do {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            _exit(2);
        char buffer[16];
        if (read(fd, buffer, sizeof buffer) < 0)
            _exit(2);
        close(fd);
    } while (again_and_again);
    _exit(2);
}

static bool mount_private_tmpfs(void)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return false;
    if (mount("hangdoc-fixture", "/mnt", "tmpfs", 0, "size=64k") != 0)
        return false;
    return mkdir(MOUNT_POINT, 0755) == 0;
}

/* Waits (bounded) until thread tid of pid sleeps in the FUSE code of the kernel: in the wait for a request's
 * answer (request_wait_answer), or for an inode's lock that a request holds (fuse_lock_inode). */
static void wait_in_fuse(pid_t pid, pid_t tid)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    char wchan[128];
    while (!fixture_read_task_file(pid, tid, "wchan", wchan, sizeof wchan) ||
           !(strstr(wchan, "fuse") || strstr(wchan, "request_wait_answer"))) {
        if (fixture_elapsed_ms(&started) > FIXTURE_POSITION_TIMEOUT_MS)
            _exit(1);
        usleep(2000);
    }
}

static bool task_alive(pid_t pid, pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d", (int)pid, (int)tid);
    return access(path, F_OK) == 0;
}

/* The guard (see the top): aborts the connection once thread `watched` of `daemon` is gone, then waits (bounded) for
 * the daemon to go. */
static void start_guard(pid_t daemon, pid_t watched, unsigned connection)
{
    pid_t child = fork();
    if (child < 0)
        _exit(1);
    if (child > 0) {
        waitpid(child, NULL, 0);
        return;
    }
    if (fork() != 0)
        _exit(0);
    setsid();
    char abort_path[96];
    snprintf(abort_path, sizeof abort_path, "/sys/fs/fuse/connections/%u/abort", connection);
    if (access(abort_path, W_OK) != 0)
        mount("none", "/sys/fs/fuse/connections", "fusectl", 0, NULL);
    for (int fd = 3; fd < 1024; fd++)
        close(fd); /* not a holder of /dev/fuse, nor of the harness's ready pipe */
    while (task_alive(daemon, watched))
        usleep(20000);
    int fd = open(abort_path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, "1", 1) != 1)
            _exit(1);
        close(fd);
    }
    for (int tries = 0; tries < 500 && kill(daemon, 0) == 0; tries++)
        usleep(10000);
    _exit(0);
}

/* The client's threads and the daemon's are in position; runs in a thread of the daemon beside its loop. */
static pid_t daemon_pid, self_tid;
static void *position(void *unused)
{
    (void)unused;
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    /* the mount is up once its root answers */
    struct stat st;
    while (stat(MOUNT_POINT "/hello", &st) != 0) {
        if (fixture_elapsed_ms(&started) > FIXTURE_POSITION_TIMEOUT_MS)
            _exit(1);
        usleep(5000);
    }
    struct stat root;
    if (stat(MOUNT_POINT, &root) != 0)
        _exit(1);
    start_guard(daemon_pid, fixture_gettid(), (major(root.st_dev) << 20) | minor(root.st_dev));
    if (strcmp(mode, "self") == 0) {
        pid_t client = start_client(daemon_pid, "self", false);
        wait_in_fuse(client, client);
        wait_in_fuse(daemon_pid, self_tid);
        fixture_ready("ready %d %d %d", (int)daemon_pid, (int)client, (int)self_tid);
    } else if (strcmp(mode, "cycle") == 0) {
        pid_t client_a = start_client(daemon_pid, "a", false);
        pid_t first;
        if (read(tid_pipe[0], &first, sizeof first) != sizeof first)
            _exit(1);
        pid_t client_b = start_client(daemon_pid, "b", false);
        pid_t second;
        if (read(tid_pipe[0], &second, sizeof second) != sizeof second)
            _exit(1);
        fixture_wait_for_wchan(daemon_pid, first, "futex");
        fixture_wait_for_wchan(daemon_pid, second, "futex");
        wait_in_fuse(client_a, client_a);
        wait_in_fuse(client_b, client_b);
        fixture_ready("ready %d %d %d %d %d", (int)daemon_pid, (int)client_a, (int)client_b, (int)first,
                      (int)second);
    } else if (strcmp(mode, "slow") == 0) {
        pid_t client = start_client(daemon_pid, "slow", true);
        wait_in_fuse(client, client);
        fixture_ready("ready %d %d", (int)daemon_pid, (int)client);
    } else {
        pid_t client = start_client(daemon_pid, "", false);
        fixture_ready("ready %d %d", (int)daemon_pid, (int)client);
    }
    /* the clients die with this thread (PR_SET_PDEATHSIG is a thread's): it stays, asleep */
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "";
    bool single = strcmp(mode, "self") == 0;
    if (!single && strcmp(mode, "cycle") != 0 && strcmp(mode, "slow") != 0 && strcmp(mode, "idle") != 0) {
        fprintf(stderr, "usage: fuse_daemon self|cycle|slow|idle\n");
        return 2;
    }
    if (access("/dev/fuse", R_OK | W_OK) != 0 || !mount_private_tmpfs())
        return 3;
    if (pipe(tid_pipe) != 0 || pthread_barrier_init(&both_first, NULL, 2) != 0)
        return 1;
    daemon_pid = getpid();
    self_tid = fixture_gettid();

    static char program[] = "fuse_daemon", option[] = "-o", name[] = "fsname=hangdoc-fixture";
    char *fuse_argv[] = { program, option, name, NULL };
    struct fuse_args args = FUSE_ARGS_INIT(3, fuse_argv);
    struct fuse *fuse = fuse_new(&args, &operations, sizeof operations, NULL);
    if (!fuse || fuse_mount(fuse, MOUNT_POINT) != 0)
        return 3;
    pthread_t positioner;
    if (pthread_create(&positioner, NULL, position, NULL) != 0)
        return 1;
    if (single)
        fuse_loop(fuse);
    else
        fuse_loop_mt(fuse, 0); /* 3.1's form, also in Debian 11's 3.10: a new worker whenever none is idle */
    return 0;
}
