/* A child frozen by the cgroup freezer (what docker pause does) while its parent waits for it in waitpid().
 *   frozen_cgroup v2|v1 DIRECTORY   freeze the cgroup DIRECTORY/hangdoc-frozen-PID (its child "inner" holds the
 *                                   child: v2 freezes a cgroup's descendants with it), through cgroup.freeze (v2)
 *                                   or freezer.state (v1, DIRECTORY on the freezer hierarchy)
 *   frozen_cgroup thawed DIRECTORY  the look-alike: the same cgroup frozen and thawed again, the child ticking
 * ready <parent pid> <child pid>
 *
 * A frozen task ignores even SIGKILL until it is thawed (v1), so the harness's kill of the group is not enough: a
 * guard outside the group and the tree (a grandchild that the parent's death orphans) waits for the parent to end,
 * then thaws the cgroup, waits for it to empty and removes it. Exit 3: the hierarchy cannot be written here (the
 * test skips). */
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

static char top[512], inner[600];
static int guard_write_fd = -1; /* the parent's alone: its end is what sets the guard going */

static bool write_file(const char *directory, const char *file, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", directory, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool written = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return written;
}

static bool cgroup_empty(const char *directory)
{
    char path[700], buffer[64];
    snprintf(path, sizeof path, "%s/cgroup.procs", directory);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;
    ssize_t got = read(fd, buffer, sizeof buffer);
    close(fd);
    return got <= 0;
}

/* Thaws, waits (bounded) for the killed child to leave, removes both cgroups. */
static void thaw_and_remove(bool v1)
{
    write_file(top, v1 ? "freezer.state" : "cgroup.freeze", v1 ? "THAWED" : "0");
    for (int tries = 0; tries < 500 && !(cgroup_empty(inner) && cgroup_empty(top)); tries++)
        usleep(10000);
    rmdir(inner);
    rmdir(top);
}

/* The guard: a grandchild in its own session, which the parent's end (its pipe's end of file) sets going. */
static void start_guard(bool v1)
{
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        _exit(1);
    pid_t middle = fork();
    if (middle == 0) {
        setsid();
        if (fork() != 0)
            _exit(0);
        /* nothing of the harness's stays open in the guard, which outlives the test's group */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int fd = 0; fd < 3; fd++)
            dup2(null, fd);
        for (int fd = 3; fd < 1024; fd++)
            if (fd != pipe_fds[0])
                close(fd);
        char byte;
        while (read(pipe_fds[0], &byte, 1) < 0 && errno == EINTR)
            ;
        thaw_and_remove(v1);
        _exit(0);
    }
    waitpid(middle, NULL, 0);
    close(pipe_fds[0]);
    guard_write_fd = pipe_fds[1];
}

static bool move_into(const char *directory, pid_t pid)
{
    char text[32];
    snprintf(text, sizeof text, "%d", (int)pid);
    return write_file(directory, "cgroup.procs", text);
}

/* Waits until the cgroup says it is frozen (v2 cgroup.events, v1 freezer.state). */
static void wait_frozen(bool v1)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    char path[700], text[256];
    snprintf(path, sizeof path, "%s/%s", v1 ? top : inner, v1 ? "freezer.state" : "cgroup.events");
    while (fixture_elapsed_ms(&started) < FIXTURE_POSITION_TIMEOUT_MS) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
        if (fd >= 0)
            close(fd);
        text[got > 0 ? got : 0] = '\0';
        if (v1 ? strncmp(text, "FROZEN", 6) == 0 : strstr(text, "frozen 1") != NULL)
            return;
        usleep(5000);
    }
    _exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 64;
    const char *mode = argv[1];
    bool v1 = strcmp(mode, "v1") == 0, thawed = strcmp(mode, "thawed") == 0;
    snprintf(top, sizeof top, "%s/hangdoc-frozen-%d", argv[2], (int)getpid());
    snprintf(inner, sizeof inner, "%s/inner", top);
    if (mkdir(top, 0755) != 0)
        return 3;
    if (!v1 && mkdir(inner, 0755) != 0) {
        rmdir(top);
        return 3;
    }
    if (v1)
        snprintf(inner, sizeof inner, "%s", top); /* v1 freezes its own tasks: the child goes in the top */
    start_guard(v1);

    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        fixture_die_with_parent(parent);
        close(guard_write_fd); /* the frozen child must not keep the guard waiting: it cannot die before the thaw */
        prctl(PR_SET_NAME, "frozen-child");
        for (;;)
            if (thawed)
                usleep(100000); /* ticks: a live process in a cgroup that is not frozen */
            else
                pause();
    }
    if (!move_into(inner, child))
        return 3;
    if (!write_file(top, v1 ? "freezer.state" : "cgroup.freeze", v1 ? "FROZEN" : "1"))
        return 3;
    wait_frozen(v1);
    if (thawed && !write_file(top, "cgroup.freeze", "0"))
        return 1;
    fixture_ready("ready %d %d", (int)parent, (int)child);
    int status;
    waitpid(child, &status, 0);
    return 0;
}
