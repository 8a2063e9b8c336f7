/* Runs a Python scenario (a .py file beside this one) with Debian's /usr/bin/python3 and reports its pids when they are in
 * position. The script writes one line "pids PID..." to fd 4 as soon as it knows its processes (a hung process can
 * say nothing later); this launcher then waits until they settle:
 *   futex: every pid but the first sleeps in a futex wait, unchanged for a second (a worker hung for good);
 *   settle: every thread of every pid sleeps (S), unchanged for a second (an idle pool).
 * Built once per scenario with SCRIPT, MODE and POSITION defined. The import of torch takes seconds: the deadlines
 * are generous.
 * ready <pid>... (as the script listed them) */
#include "fixture.h"

#include <dirent.h>
#include <poll.h>
#include <sys/wait.h>

#define PIDS_FD 4
#define PIDS_TIMEOUT_MS 90000
#define SETTLED_MS 1000
#define POSITION_TIMEOUT_MS 60000
#define PIDS_MAX 12

static int read_pids(int fd, char *line, size_t size, pid_t *pids)
{
    size_t length = 0;
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    while (length < size - 1 && !memchr(line, '\n', length)) {
        long left = PIDS_TIMEOUT_MS - fixture_elapsed_ms(&started);
        struct pollfd ready = { .fd = fd, .events = POLLIN };
        if (left <= 0 || poll(&ready, 1, (int)left) != 1)
            return 0;
        ssize_t got = read(fd, line + length, size - 1 - length);
        if (got <= 0)
            return 0;
        length += (size_t)got;
    }
    line[length] = '\0';
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "pids ", 5) != 0)
        return 0;
    int count = 0;
    for (char *cursor = line + 5, *end; count < PIDS_MAX; cursor = end) {
        long pid = strtol(cursor, &end, 10);
        if (end == cursor)
            break;
        pids[count++] = (pid_t)pid;
    }
    return count;
}

/* True when every thread of `pid` is in state S (and, for futex, its main thread's wait channel names a futex) */
static bool in_position(pid_t pid, bool futex)
{
    char path[64], text[1024];
    if (futex && !(fixture_read_task_file(pid, pid, "wchan", text, sizeof text) && strstr(text, "futex")))
        return false;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return false;
    bool sleeping = true;
    struct dirent *entry;
    while (sleeping && (entry = readdir(tasks))) {
        pid_t tid = (pid_t)atoi(entry->d_name);
        if (tid <= 0)
            continue;
        const char *close;
        sleeping = fixture_read_task_file(pid, tid, "stat", text, sizeof text) && (close = strrchr(text, ')')) &&
                   close[1] == ' ' && close[2] == 'S';
    }
    closedir(tasks);
    return sleeping;
}

static bool wait_until_settled(const pid_t *pids, int count, bool futex)
{
    struct timespec started, settled_since;
    clock_gettime(CLOCK_MONOTONIC, &started);
    clock_gettime(CLOCK_MONOTONIC, &settled_since);
    while (fixture_elapsed_ms(&started) < POSITION_TIMEOUT_MS) {
        bool all = true;
        for (int i = futex ? 1 : 0; i < count && all; i++)
            all = in_position(pids[i], futex);
        if (!all)
            clock_gettime(CLOCK_MONOTONIC, &settled_since);
        else if (fixture_elapsed_ms(&settled_since) >= SETTLED_MS)
            return true;
        usleep(20000);
    }
    return false;
}

int main(void)
{
    pid_t self = getpid();
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        return 1;
    pid_t python = fork();
    if (python < 0)
        return 1;
    if (python == 0) {
        fixture_die_with_parent(self);
        close(FIXTURE_READY_FD);
        close(pipe_fds[0]);
        if (dup2(pipe_fds[1], PIDS_FD) < 0)
            _exit(126);
        execl("/usr/bin/python3", "python3", SCRIPT, MODE, (char *)NULL);
        _exit(127);
    }
    close(pipe_fds[1]);
    char line[256];
    pid_t pids[PIDS_MAX];
    int count = read_pids(pipe_fds[0], line, sizeof line, pids);
    if (count == 0 || !wait_until_settled(pids, count, strcmp(POSITION, "futex") == 0)) {
        fprintf(stderr, "python fixture %s %s: never got into position\n", SCRIPT, MODE);
        kill(python, SIGKILL);
        return 2;
    }
    fixture_ready("ready %s", line + 5);
    waitpid(python, NULL, 0);
    return 0;
}
