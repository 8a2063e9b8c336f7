/* Runs a Python scenario (a .py file beside this one) with Debian's /usr/bin/python3, or the interpreter its first
 * argument names, and reports its pids when they are in position. The script writes one line "pids PID..." to fd 4
 * as soon as it knows its processes (a hung process can say nothing later); this launcher then waits until they
 * settle:
 *   futex: every pid but the first sleeps in a futex wait, unchanged for a second (a worker hung for good);
 *   settle: every thread of every pid sleeps (S), unchanged for a second (an idle pool);
 *   stuck:SYSCALL,...: the nth pid has a thread blocked in the nth system call named ("-": any state), and every
 *          thread of it sleeps (S), the same threads for a second (a writer blocked on a full pipe, a parent in
 *          wait4); the ready line adds the tid of each of those threads.
 * Built once per scenario with SCRIPT, MODE and POSITION defined. The import of torch takes seconds: the deadlines
 * are generous.
 * ready <pid>... (as the script listed them) [<tid in position>...] */
#include "fixture.h"

#include <dirent.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define PIDS_FD 4
#define PIDS_TIMEOUT_MS 90000
#define SETTLED_MS 1000
#define POSITION_TIMEOUT_MS 60000
#define PIDS_MAX 12
#define STUCK_PREFIX "stuck:"

/* The system calls a "stuck:" position may name; /proc/<pid>/task/<tid>/syscall starts with the number while the
 * thread is blocked in one (proc(5)), "running" otherwise. */
static const struct {
    const char *name;
    long number;
} syscall_names[] = {
    { "read", SYS_read },
    { "write", SYS_write },
    { "wait4", SYS_wait4 },
    { "poll", SYS_poll }, /* a multiprocessing sentinel waited for (forkserver's Popen.wait) */
    { "futex", SYS_futex },
};
#define NO_SYSCALL (-1L)

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
static long syscall_number(const char *name, size_t length)
{
    for (size_t i = 0; i < sizeof syscall_names / sizeof syscall_names[0]; i++)
        if (strlen(syscall_names[i].name) == length && strncmp(syscall_names[i].name, name, length) == 0)
            return syscall_names[i].number;
    return NO_SYSCALL;
}

/* "stuck:wait4,write" -> { SYS_wait4, SYS_write }; "-" is NO_SYSCALL. How many, or -1 for a name not in the table. */
static int parse_stuck(const char *position, long *numbers, int max)
{
    int count = 0;
    for (const char *cursor = position + strlen(STUCK_PREFIX); *cursor && count < max;) {
        size_t length = strcspn(cursor, ",");
        if (length == 1 && *cursor == '-')
            numbers[count] = NO_SYSCALL;
        else if ((numbers[count] = syscall_number(cursor, length)) == NO_SYSCALL)
            return -1;
        count++;
        cursor += length + (cursor[length] == ',');
    }
    return count;
}

/* True when every thread of `pid` sleeps (S) and, unless `number` is NO_SYSCALL, one of them is blocked in system
 * call `number`: that one in *tid. */
static bool stuck_in(pid_t pid, long number, pid_t *tid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return false;
    bool sleeping = true;
    *tid = 0;
    struct dirent *entry;
    while (sleeping && (entry = readdir(tasks))) {
        pid_t task = (pid_t)atoi(entry->d_name);
        if (task <= 0)
            continue;
        const char *close;
        sleeping = fixture_read_task_file(pid, task, "stat", text, sizeof text) && (close = strrchr(text, ')')) &&
                   close[1] == ' ' && close[2] == 'S';
        char *end;
        if (sleeping && number != NO_SYSCALL && !*tid &&
            fixture_read_task_file(pid, task, "syscall", text, sizeof text) &&
            strtol(text, &end, 10) == number && end != text)
            *tid = task;
    }
    closedir(tasks);
    return sleeping && (number == NO_SYSCALL || *tid);
}

/* Every thread of `pid` sleeps; with `futex`, its main thread in futex(2). */
static bool in_position(pid_t pid, bool futex)
{
    char text[1024];
    if (futex && !(fixture_read_task_file(pid, pid, "wchan", text, sizeof text) && strstr(text, "futex")))
        return false;
    pid_t tid;
    return stuck_in(pid, NO_SYSCALL, &tid);
}

/* Waits until each pid with a system call named is stuck in it, with the same threads for SETTLED_MS. */
static bool wait_until_stuck(const pid_t *pids, int count, const long *numbers, int nnumbers, pid_t *tids)
{
    struct timespec started, settled_since;
    clock_gettime(CLOCK_MONOTONIC, &started);
    clock_gettime(CLOCK_MONOTONIC, &settled_since);
    while (fixture_elapsed_ms(&started) < POSITION_TIMEOUT_MS) {
        bool all = nnumbers <= count;
        for (int i = 0; i < nnumbers && all; i++) {
            pid_t tid = 0;
            all = numbers[i] == NO_SYSCALL || (stuck_in(pids[i], numbers[i], &tid) && (!tids[i] || tids[i] == tid));
            tids[i] = tid;
        }
        if (!all) {
            memset(tids, 0, (size_t)nnumbers * sizeof *tids);
            clock_gettime(CLOCK_MONOTONIC, &settled_since);
        } else if (fixture_elapsed_ms(&settled_since) >= SETTLED_MS) {
            return true;
        }
        usleep(20000);
    }
    return false;
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

/* Waits for the position POSITION names; the ready line's tail (the tids in position, if any) in `tail`. */
static bool wait_for_position(const pid_t *pids, int count, char *tail, size_t size)
{
    *tail = '\0';
    if (strncmp(POSITION, STUCK_PREFIX, strlen(STUCK_PREFIX)) != 0)
        return wait_until_settled(pids, count, strcmp(POSITION, "futex") == 0);
    long numbers[PIDS_MAX];
    pid_t tids[PIDS_MAX] = { 0 };
    int nnumbers = parse_stuck(POSITION, numbers, PIDS_MAX);
    if (nnumbers <= 0 || !wait_until_stuck(pids, count, numbers, nnumbers, tids))
        return false;
    for (int i = 0, length = 0; i < nnumbers; i++)
        if (numbers[i] != NO_SYSCALL && length < (int)size)
            length += snprintf(tail + length, size - (size_t)length, " %d", (int)tids[i]);
    return true;
}

int main(int argc, char **argv)
{
    const char *interpreter = argc > 1 ? argv[1] : "/usr/bin/python3";
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
        /* argv[0] a full path: Python finds sys.executable, which spawn and subprocess run, from argv[0], and a bare
         * "python3" would be looked up in PATH (a pyenv shim, another build) */
        execl(interpreter, interpreter, SCRIPT, MODE, (char *)NULL);
        _exit(127);
    }
    close(pipe_fds[1]);
    char line[256];
    pid_t pids[PIDS_MAX];
    int count = read_pids(pipe_fds[0], line, sizeof line, pids);
    char tail[128];
    if (count == 0 || !wait_for_position(pids, count, tail, sizeof tail)) {
        fprintf(stderr, "python fixture %s %s: never got into position\n", SCRIPT, MODE);
        kill(python, SIGKILL);
        return 2;
    }
    fixture_ready("ready %s%s", line + 5, tail);
    waitpid(python, NULL, 0);
    return 0;
}
