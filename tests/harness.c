/* Scenario harness (harness.h). */
#include "harness.h"

#include "registry.h"
#include "exit_codes.h"
#include "util.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void harness_close_from(int first)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, ~0U, 0) == 0)
        return;
#endif
    long last = sysconf(_SC_OPEN_MAX);
    for (long fd = first; fd < (last > 0 ? last : 1024); fd++)
        close((int)fd);
}

#define READY_TIMEOUT_MS 15000
#define HANGDOC_TIMEOUT_MS 60000
#define MAX_RUNNING 8

/* Copies of the running fixtures, by leader: a failed assertion leaves the test function, whose fixture lived on
 * its stack, before the suite's .fini stops what it started; a copy still names every pid the fixture reported
 * (those that left its group too: a wrapper's job in a group of its own). */
static struct fixture running[MAX_RUNNING];

static const char *environment_or_die(const char *name)
{
    const char *value = getenv(name);
    if (!value)
        cr_assert_fail("%s is not set: run the tests through meson test", name);
    return value;
}

static long elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* Keeps (or brings up to date) the copy of a running fixture. */
static void remember(const struct fixture *fixture)
{
    size_t free_slot = MAX_RUNNING;
    for (size_t i = 0; i < MAX_RUNNING; i++) {
        if (running[i].leader == fixture->leader) {
            running[i] = *fixture;
            return;
        }
        if (!running[i].leader && free_slot == MAX_RUNNING)
            free_slot = i;
    }
    if (free_slot < MAX_RUNNING)
        running[free_slot] = *fixture;
}

static void forget(const struct fixture *fixture)
{
    for (size_t i = 0; i < MAX_RUNNING; i++)
        if (running[i].leader == fixture->leader)
            running[i] = (struct fixture){ 0 };
}

/* Reads the ready line; false on timeout, EOF or a malformed line. */
static bool read_ready_line_within(int fd, struct fixture *fixture, long timeout_ms)
{
    char line[512];
    size_t length = 0;
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    while (length < sizeof line - 1 && !memchr(line, '\n', length)) {
        long left = timeout_ms - elapsed_ms(&started);
        struct pollfd ready = { .fd = fd, .events = POLLIN };
        if (left <= 0 || poll(&ready, 1, (int)left) != 1)
            return false;
        ssize_t got = read(fd, line + length, sizeof line - 1 - length);
        if (got <= 0)
            return false;
        length += (size_t)got;
    }
    line[length] = '\0';
    if (strncmp(line, "ready", 5) != 0)
        return false;
    char *cursor = line + 5;
    for (;;) {
        char *end;
        long pid = strtol(cursor, &end, 10);
        if (end == cursor || fixture->npids == HARNESS_MAX_PIDS)
            break;
        fixture->pids[fixture->npids++] = (pid_t)pid;
        cursor = end;
    }
    return fixture->npids > 0;
}

static bool read_ready_line(int fd, struct fixture *fixture)
{
    return read_ready_line_within(fd, fixture, READY_TIMEOUT_MS);
}

/* Forks and execs `path` in a process group of its own that dies with us; the fds given (-1: keep ours) become
 * its stdout, stderr and fd 3. */
static pid_t spawn_in_own_group(const char *path, const char *const *argv, int out_fd, int err_fd, int ready_fd)
{
    pid_t test_process = getpid();
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != test_process)
            _exit(127);
        /* dup2 clears O_CLOEXEC on the copies */
        if (out_fd >= 0)
            dup2(out_fd, 1);
        if (err_fd >= 0)
            dup2(err_fd, 2);
        if (ready_fd >= 0)
            dup2(ready_fd, 3);
        /* nothing else of the test runner's (Criterion's shared-memory arenas, other tests' pipes) leaks into the
         * fixture: what a forked child inherits is part of what hangdoc reports */
        harness_close_from(ready_fd >= 0 ? 4 : 3);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    setpgid(child, child); /* also here: the group exists before we might have to kill it */
    return child;
}

/* The guard of a process group: a process of its own group that waits on a pipe only the test process can write.
 * A byte means the test stopped the group itself; end of file means the test process died first (no .fini ran),
 * and the guard kills the group, so that nothing the test started outlives it. */
static void guard_group(struct fixture *group)
{
    int pipe_fds[2];
    cr_assert_eq(pipe2(pipe_fds, O_CLOEXEC), 0);
    pid_t guard = fork();
    cr_assert_geq(guard, 0);
    if (guard == 0) {
        setpgid(0, 0); /* not ended with the test's own group */
        if (dup2(pipe_fds[0], 3) != 3)
            _exit(1);
        harness_close_from(4); /* no other guard's write end, no pipe of the test's */
        char byte;
        ssize_t got;
        while ((got = read(3, &byte, 1)) < 0 && errno == EINTR)
            ;
        if (got == 0)
            kill(-group->leader, SIGKILL);
        _exit(0);
    }
    close(pipe_fds[0]);
    group->guard = guard;
    group->guard_pipe = pipe_fds[1];
}

static void dismiss_guard(struct fixture *group)
{
    if (!group->guard)
        return;
    ssize_t ignored = write(group->guard_pipe, "x", 1);
    (void)ignored;
    close(group->guard_pipe);
    while (waitpid(group->guard, NULL, 0) < 0 && errno == EINTR)
        ;
    group->guard = 0;
}

void fixture_start(struct fixture *fixture, const char *name)
{
    fixture_start_within(fixture, name, READY_TIMEOUT_MS);
}

void fixture_start_within(struct fixture *fixture, const char *name, long ready_timeout_ms)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", environment_or_die("HANGDOC_FIXTURES"), name);
    fixture_start_command(fixture, path, (const char *[]){ name, NULL }, ready_timeout_ms);
}

void fixture_start_command(struct fixture *fixture, const char *path, const char *const *argv, long ready_timeout_ms)
{
    *fixture = (struct fixture){ 0 };
    const char *name = argv[0];
    int pipe_fds[2];
    cr_assert_eq(pipe2(pipe_fds, O_CLOEXEC), 0);
    pid_t child = spawn_in_own_group(path, argv, -1, -1, pipe_fds[1]);
    close(pipe_fds[1]);
    fixture->leader = child;
    guard_group(fixture);
    remember(fixture);
    bool ready = read_ready_line_within(pipe_fds[0], fixture, ready_timeout_ms);
    close(pipe_fds[0]);
    remember(fixture); /* with the pids it reported */
    if (!ready) {
        fixture_stop(fixture);
        cr_assert_fail("fixture %s did not report that it is in position within %ld ms", name, ready_timeout_ms);
    }
}

void fixture_start_python_with(struct fixture *fixture, const char *python, const char *script, const char *first,
                               const char *second, long ready_timeout_ms)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/scenarios/%s", environment_or_die("HANGDOC_SOURCE_ROOT"), script);
    fixture_start_command(fixture, python, (const char *[]){ python, path, first, second, NULL }, ready_timeout_ms);
}

void fixture_start_python(struct fixture *fixture, const char *script, const char *first, const char *second,
                          long ready_timeout_ms)
{
    fixture_start_python_with(fixture, "/usr/bin/python3", script, first, second, ready_timeout_ms);
}

void fixture_stop(struct fixture *fixture)
{
    if (!fixture->leader)
        return;
    kill(-fixture->leader, SIGKILL);
    for (size_t i = 0; i < fixture->npids; i++)
        if (fixture->pids[i] > 0)
            kill(fixture->pids[i], SIGKILL); /* in case one left the group; a dead pid is harmless here */
    while (waitpid(fixture->leader, NULL, 0) < 0 && errno == EINTR)
        ;
    forget(fixture); /* by its leader: before that is cleared */
    fixture->leader = 0;
    dismiss_guard(fixture);
}

bool process_state(pid_t pid, char *state, pid_t *parent)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *stream = fopen(path, "re");
    if (!stream)
        return false;
    size_t length = fread(text, 1, sizeof text - 1, stream);
    fclose(stream);
    text[length] = '\0';
    const char *close = strrchr(text, ')'); /* the comm may hold anything: it ends at the last ')' */
    int ppid;
    if (!close || sscanf(close + 1, " %c %d", state, &ppid) != 2)
        return false;
    *parent = (pid_t)ppid;
    return true;
}

void fixture_stop_all(void)
{
    for (size_t i = 0; i < MAX_RUNNING; i++)
        if (running[i].leader) {
            struct fixture copy = running[i];
            fixture_stop(&copy);
        }
}

/* Reads both pipes until hangdoc closes them or the deadline passes. */
static void collect_output(int out_fd, int err_fd, struct run_result *result, pid_t child)
{
    char *buffers[2] = { NULL, NULL };
    size_t lengths[2] = { 0, 0 }, capacities[2] = { 0, 0 };
    int fds[2] = { out_fd, err_fd };
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    while (fds[0] >= 0 || fds[1] >= 0) {
        long left = HANGDOC_TIMEOUT_MS - elapsed_ms(&started);
        if (left <= 0) {
            kill(child, SIGKILL);
            cr_log_error("hangdoc did not finish within %d ms: killed", HANGDOC_TIMEOUT_MS);
            break;
        }
        struct pollfd polled[2] = { { .fd = fds[0], .events = POLLIN }, { .fd = fds[1], .events = POLLIN } };
        if (poll(polled, 2, (int)left) < 0 && errno != EINTR)
            break;
        for (int k = 0; k < 2; k++) {
            if (fds[k] < 0 || !(polled[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[65536];
            ssize_t got = read(fds[k], chunk, sizeof chunk);
            if (got <= 0) {
                close(fds[k]);
                fds[k] = -1;
                continue;
            }
            /* doubled, not grown by each read: a 25 MB report read 4 KiB at a time would copy gigabytes (and
             * under AddressSanitizer, whose realloc always moves, hold hangdoc's writes past its --timeout) */
            if (lengths[k] + (size_t)got + 1 > capacities[k]) {
                capacities[k] = 2 * (lengths[k] + (size_t)got + 1);
                buffers[k] = realloc(buffers[k], capacities[k]);
                cr_assert_not_null(buffers[k]);
            }
            memcpy(buffers[k] + lengths[k], chunk, (size_t)got);
            lengths[k] += (size_t)got;
            buffers[k][lengths[k]] = '\0';
        }
    }
    for (int k = 0; k < 2; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    result->out = buffers[0] ? buffers[0] : strdup("");
    result->err = buffers[1] ? buffers[1] : strdup("");
}

void program_run_as(struct run_result *result, int as_uid, const char *const *argv)
{
    int out_pipe[2], err_pipe[2];
    cr_assert_eq(pipe2(out_pipe, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(err_pipe, O_CLOEXEC), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
        if (as_uid >= 0 && (setgroups(0, NULL) != 0 || setgid((gid_t)as_uid) != 0 || setuid((uid_t)as_uid) != 0))
            _exit(126);
        harness_close_from(3);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    collect_output(out_pipe[0], err_pipe[0], result, child);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    result->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* HANGDOC_BIN followed by `arguments`, NULL-terminated; free() it. */
static const char **hangdoc_argv(const char *const *arguments)
{
    size_t count = 0;
    while (arguments[count])
        count++;
    const char **argv = calloc(count + 2, sizeof *argv);
    cr_assert_not_null(argv);
    argv[0] = environment_or_die("HANGDOC_BIN");
    memcpy(argv + 1, arguments, count * sizeof *argv);
    return argv;
}

void hangdoc_run_as(struct run_result *result, int as_uid, const char *const *arguments)
{
    /* the tests read the report one fact per line: no wrapping to a width the environment happens to set */
    unsetenv("COLUMNS");
    const char **argv = hangdoc_argv(arguments);
    program_run_as(result, as_uid, argv);
    free(argv);
}

void hangdoc_run_once(struct run_result *result, const char *const *arguments)
{
    hangdoc_run_as(result, -1, arguments);
}

/* Whether these arguments diagnose processes that exist (not `run`, `demo`, `analyze`, --help or --version). */
/* ---- a diagnosis changes nothing (issue 40) ------------------------------------------------------------------ */

#define STATES_MAX 4096
#define LATE_D_LOOKS 4

struct thread_state {
    pid_t pid;
    pid_t tid;
    char state;
    pid_t tracer;
};

struct tree_states {
    struct thread_state threads[STATES_MAX];
    size_t count;
};

/* State: and TracerPid: of /proc/<pid>/task/<tid>/status; false when the thread is gone. */
static bool read_thread_state(pid_t pid, pid_t tid, char *state, pid_t *tracer)
{
    char path[96], text[4096];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0)
        return false;
    text[got] = '\0';
    const char *line = strstr(text, "\nState:");
    const char *traced = strstr(text, "\nTracerPid:");
    if (!line || !traced)
        return false;
    line += 8;
    while (*line == ' ' || *line == '\t')
        line++;
    *state = *line;
    *tracer = (pid_t)strtol(traced + 12, NULL, 10);
    return true;
}

/* Every thread of `pid` and of its descendants (their children files), depth first. */
static void collect_states(struct tree_states *states, pid_t pid, unsigned depth)
{
    char path[96], exe[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    if (readlink(path, exe, sizeof exe) < 0)
        return; /* a kernel thread (its workers pass through D on their own) or a zombie */
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks || depth > 64)
        goto done;
    struct dirent *entry;
    while ((entry = readdir(tasks)) && states->count < STATES_MAX) {
        pid_t tid = (pid_t)strtol(entry->d_name, NULL, 10);
        struct thread_state *thread = &states->threads[states->count];
        if (tid <= 0 || !read_thread_state(pid, tid, &thread->state, &thread->tracer))
            continue;
        thread->pid = pid;
        thread->tid = tid;
        states->count++;
        char children_path[128], children[4096];
        snprintf(children_path, sizeof children_path, "/proc/%d/task/%d/children", (int)pid, (int)tid);
        int fd = open(children_path, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd >= 0 ? read(fd, children, sizeof children - 1) : -1;
        if (fd >= 0)
            close(fd);
        children[got > 0 ? got : 0] = '\0';
        for (char *cursor = children, *end; *cursor; cursor = end) {
            long child = strtol(cursor, &end, 10);
            if (end == cursor)
                break;
            if (child > 0)
                collect_states(states, (pid_t)child, depth + 1);
        }
    }
done:
    if (tasks)
        closedir(tasks);
}

/* Is arguments[i] a pid to diagnose: a number, not the value of an option that takes one ("--samples 3")? */
static bool names_a_target(const char *const *arguments, size_t i)
{
    static const char *const flags[] = { "--json", "-j", "--verbose", "-v", "--no-ptrace", "--no-python", "--dot",
                                         "--no-ledger", "--markdown" };
    char *end;
    long pid = strtol(arguments[i], &end, 10);
    if (end == arguments[i] || *end != '\0' || pid <= 0)
        return false;
    if (i == 0 || arguments[i - 1][0] != '-')
        return true;
    for (size_t f = 0; f < COUNT(flags); f++)
        if (strcmp(arguments[i - 1], flags[f]) == 0)
            return true;
    return false;
}

static void collect_tree_states(struct tree_states *states, const char *const *arguments)
{
    states->count = 0;
    for (size_t i = 0; arguments[i]; i++)
        if (names_a_target(arguments, i))
            collect_states(states, (pid_t)strtol(arguments[i], NULL, 10), 0);
}

/* After a diagnosis every thread is as it was: none stopped or traced that was not, none moved into D for good (a
 * FUSE daemon stopped for its stack puts its clients there), looked at a few times, since a thread may pass
 * through D or a stop of its own on the way. */
static void expect_states_unchanged(const struct tree_states *before)
{
    for (size_t i = 0; i < before->count; i++) {
        const struct thread_state *was = &before->threads[i];
        if (strchr("DTtZX", was->state) || was->tracer)
            continue;
        char state = '?';
        pid_t tracer = 0;
        bool changed = true;
        for (int look = 0; look < LATE_D_LOOKS && changed; look++) {
            if (look)
                usleep(50000);
            if (!read_thread_state(was->pid, was->tid, &state, &tracer))
                return; /* gone: it ran to its end */
            changed = strchr("DTt", state) || tracer;
        }
        cr_assert_not(changed, "thread %d of process %d was in %c before the diagnosis, and is in %c%s after it",
                      (int)was->tid, (int)was->pid, was->state, state, tracer ? " and traced" : "");
    }
}

static bool diagnoses_a_tree(const char *const *arguments)
{
    static const char *const not_a_diagnosis[] = { "run", "demo", "analyze", "merge", "--help", "-h", "--version" };
    for (size_t i = 0; arguments[i]; i++)
        for (size_t n = 0; n < COUNT(not_a_diagnosis); n++)
            if (strcmp(arguments[i], not_a_diagnosis[n]) == 0)
                return false;
    return true;
}

/* What must not change from one diagnosis to the next: the verdict, and each hang finding's id, subject and
 * confidence. Informational findings ("idle": a healthy thread and who can wake it) follow the moment's state. */
static char *verdict_signature(const char *report)
{
    json_object *document = json_tokener_parse(report);
    if (!document)
        return NULL;
    char *signature = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&signature, &length);
    cr_assert_not_null(out);
    /* the verdict and its hangs without the findings' indexes, which informational findings shift */
    json_object *verdict = json_at(document, "verdict");
    static const char *const keys[] = { "hung", "cause", "root_cause", "pid", "tid", "chain" };
    for (size_t k = 0; verdict && k < COUNT(keys); k++)
        fprintf(out, "verdict.%s %s\n", keys[k], json_object_to_json_string_ext(json_at(verdict, keys[k]),
                                                                                 JSON_C_TO_STRING_PLAIN));
    json_object *hangs = verdict ? json_at(verdict, "hangs") : NULL;
    for (size_t h = 0; hangs && h < json_object_array_length(hangs); h++)
        for (size_t k = 1; k < COUNT(keys); k++)
            fprintf(out, "hang %zu.%s %s\n", h, keys[k],
                    json_object_to_json_string_ext(json_at(json_object_array_get_idx(hangs, h), keys[k]),
                                                   JSON_C_TO_STRING_PLAIN));
    json_object *findings = json_at(document, "findings");
    for (size_t f = 0; findings && f < json_object_array_length(findings); f++) {
        json_object *finding = json_object_array_get_idx(findings, f);
        if (!json_bool_at(finding, "hang"))
            continue;
        fprintf(out, "%s %s %lld/%lld\n", json_string_at(finding, "id"), json_string_at(finding, "confidence"),
                json_int_at(finding, "pid", -1), json_int_at(finding, "tid", -1));
    }
    fclose(out);
    json_object_put(document);
    return signature;
}

/* Every diagnosis in the tests runs twice on the same tree, and the second must say what the first said: a
 * diagnosis must not change what the next one sees (a wait its ptrace stop interrupted is restarted by the
 * kernel as restart_syscall, which must still read as the same wait). */
/* ---- every diagnosis also saved and analysed offline ------------------------------------------------------- */

static bool is_one_of(const char *argument, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(argument, names[i]) == 0)
            return true;
    return false;
}

/* The arguments of `hangdoc analyze` that print the report `arguments` printed from the snapshot it saved: the
 * report's options kept, those of reading processes (and the pids) dropped. */
static const char **analyze_arguments(const char *const *arguments, const char *snapshot)
{
    static const char *const reading_with_value[] = { "--samples", "-n", "--interval", "-i", "--timeout", "-t",
                                                      "--job", "--slurm-job", "--core", "--exe", "--sysroot" };
    static const char *const reading_flags[] = { "--no-ptrace", "--no-python", "--no-ledger" };
    static const char *const report_with_value[] = { "--catalogue", "--stuck-after" };
    size_t count = 0;
    while (arguments[count])
        count++;
    const char **analyze = calloc(count + 3, sizeof *analyze);
    cr_assert_not_null(analyze);
    size_t used = 0;
    analyze[used++] = "analyze";
    for (size_t i = 0; i < count; i++) {
        const char *argument = arguments[i];
        if (is_one_of(argument, reading_with_value, COUNT(reading_with_value)))
            i++;
        else if (is_one_of(argument, report_with_value, COUNT(report_with_value)) && i + 1 < count) {
            analyze[used++] = argument;
            analyze[used++] = arguments[++i];
        } else if (argument[0] == '-' && !is_one_of(argument, reading_flags, COUNT(reading_flags)) &&
                   strncmp(argument, "--samples=", 10) != 0 && strncmp(argument, "--interval=", 11) != 0 &&
                   strncmp(argument, "--timeout=", 10) != 0)
            analyze[used++] = argument;
    }
    analyze[used++] = snapshot;
    return analyze;
}

static char recording_name[64];
static pid_t recording_pids[HARNESS_MAX_PIDS];
static size_t recording_npids;

void record_as(const char *name, const struct fixture *fixture)
{
    snprintf(recording_name, sizeof recording_name, "%s", name);
    recording_npids = fixture->npids;
    memcpy(recording_pids, fixture->pids, sizeof recording_pids);
}

/* With HANGDOC_RECORD_DIR set (tests/snapshots/record.sh), the snapshot of the diagnosis a test named with
 * record_as() is kept there, with the pids its fixture reported. */
static void keep_recording(const char *snapshot)
{
    const char *directory = getenv("HANGDOC_RECORD_DIR");
    if (!directory || !recording_name[0])
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.snapshot", directory, recording_name);
    size_t length = 0;
    FILE *in = fopen(snapshot, "re"), *out = fopen(path, "we");
    cr_assert(in && out, "cannot copy the snapshot to %s", path);
    char chunk[65536];
    while ((length = fread(chunk, 1, sizeof chunk, in)) > 0)
        fwrite(chunk, 1, length, out);
    fclose(in);
    cr_assert_eq(fclose(out), 0);
    snprintf(path, sizeof path, "%s/%s.pids", directory, recording_name);
    out = fopen(path, "we");
    cr_assert_not_null(out);
    for (size_t i = 0; i < recording_npids; i++)
        fprintf(out, "%s%d", i ? " " : "", (int)recording_pids[i]);
    fprintf(out, "\n");
    cr_assert_eq(fclose(out), 0);
    recording_name[0] = '\0';
}

/* The first run of a diagnosis saves its snapshot (--save); `hangdoc analyze` of it must print the very report
 * and exit with the very status: record and replay, checked on every tree of the suite. */
static void run_saved_and_replayed(struct run_result *result, const char *const *arguments)
{
    char snapshot[] = "/tmp/hangdoc-test-snapshot-XXXXXX";
    int fd = mkstemp(snapshot);
    cr_assert_geq(fd, 0);
    close(fd);
    size_t count = 0;
    while (arguments[count])
        count++;
    const char **saving = calloc(count + 3, sizeof *saving);
    cr_assert_not_null(saving);
    saving[0] = "--save";
    saving[1] = snapshot;
    memcpy(saving + 2, arguments, count * sizeof *saving);
    hangdoc_run_as(result, -1, saving);
    free(saving);
    if (result->exit_status > EXIT_HANG_FORK_UNSAFE) {
        unlink(snapshot); /* no verdict: nothing was saved to replay */
        return;
    }
    const char **analyze = analyze_arguments(arguments, snapshot);
    struct run_result replayed;
    hangdoc_run_as(&replayed, -1, analyze);
    free(analyze);
    keep_recording(snapshot);
    unlink(snapshot);
    cr_assert_eq(replayed.exit_status, result->exit_status,
                 "hangdoc analyze of the saved snapshot exits %d, the live run %d; its stderr:\n%s",
                 replayed.exit_status, result->exit_status, replayed.err);
    cr_assert(strcmp(replayed.out, result->out) == 0,
              "hangdoc analyze of the saved snapshot printed another report:\n%s\nthe live run printed:\n%s",
              replayed.out, result->out);
    run_result_free(&replayed);
}

json_object *recorded_expecting(const char *name, int expected_status, struct fixture *fixture)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tests/snapshots/%s.pids", environment_or_die("HANGDOC_SOURCE_ROOT"), name);
    FILE *pids = fopen(path, "re");
    cr_assert_not_null(pids, "no recorded snapshot %s (tests/snapshots/record.sh makes them)", path);
    *fixture = (struct fixture){ .guard_pipe = -1 };
    int pid;
    while (fixture->npids < HARNESS_MAX_PIDS && fscanf(pids, "%d", &pid) == 1)
        fixture->pids[fixture->npids++] = pid;
    fclose(pids);
    snprintf(path, sizeof path, "%s/tests/snapshots/%s.snapshot", environment_or_die("HANGDOC_SOURCE_ROOT"), name);
    const char *arguments[] = { "analyze", "--json", path, NULL };
    struct run_result result;
    hangdoc_run_as(&result, -1, arguments);
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "hangdoc analyze %s printed no JSON (exit %d): %s", path, result.exit_status,
                       result.err);
    cr_assert_eq(result.exit_status, expected_status, "hangdoc analyze %s exits %d, got %d; findings %s", path,
                 expected_status, result.exit_status, findings_text(document));
    run_result_free(&result);
    json_validate(json_object_to_json_string(document));
    return document;
}

void hangdoc_run(struct run_result *result, const char *const *arguments)
{
    static struct tree_states before;
    if (diagnoses_a_tree(arguments)) {
        collect_tree_states(&before, arguments);
        run_saved_and_replayed(result, arguments);
        expect_states_unchanged(&before);
    } else
        hangdoc_run_as(result, -1, arguments);
    const char *sanitize = getenv("HANGDOC_SANITIZE");
    if (!diagnoses_a_tree(arguments) || (sanitize && strcmp(sanitize, "none") != 0))
        return;
    struct run_result again;
    hangdoc_run_as(&again, -1, arguments);
    cr_assert_eq(again.exit_status, result->exit_status,
                 "a second run on the same tree exits %d, the first %d; second stdout:\n%s\nfirst stdout:\n%s",
                 again.exit_status, result->exit_status, again.out, result->out);
    char *first = verdict_signature(result->out), *second = verdict_signature(again.out);
    if (first && second)
        cr_assert_str_eq(second, first, "a second run on the same tree says otherwise:\n%s\nthe first:\n%s", second,
                         first);
    free(first);
    free(second);
    run_result_free(&again);
}

void run_result_free(struct run_result *result)
{
    free(result->out);
    free(result->err);
    *result = (struct run_result){ 0 };
}

json_object *hangdoc_json(pid_t pid, int *exit_status)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    const char *arguments[] = { "--json", "--samples", "3", "--interval", "100ms", pid_text, NULL };
    struct run_result result;
    hangdoc_run(&result, arguments);
    json_object *document = json_tokener_parse(result.out);
    if (!document)
        cr_log_error("hangdoc printed no JSON (exit %d); stderr:\n%s", result.exit_status, result.err);
    if (exit_status)
        *exit_status = result.exit_status;
    run_result_free(&result);
    cr_assert_not_null(document, "hangdoc --json printed a document");
    cr_assert_str_eq(json_string_at(document, "schema"), "hangdoc.report/2");
    json_validate(json_object_to_json_string(document));
    return document;
}

json_object *diagnose_expecting(pid_t pid, int expected_status)
{
    int status = -1;
    json_object *document = hangdoc_json(pid, &status);
    cr_assert_eq(status, expected_status, "hangdoc exits %d, got %d; verdict %s; findings %s", expected_status, status,
                 json_object_to_json_string(json_at(document, "verdict")), findings_text(document));
    return document;
}

const char *findings_text(json_object *document)
{
    json_object *findings = json_at(document, "findings");
    return findings ? json_object_to_json_string(findings) : "(none)";
}

bool is_fork_finding(const char *id)
{
    enum report_finding_id parsed;
    return id && report_finding_id_parse(id, &parsed) &&
           report_rule(parsed)->cause == REPORT_CAUSE_FORK_INHERITANCE;
}

void expect_no_fork_finding(json_object *document)
{
    json_object *findings = json_at(document, "findings");
    for (size_t i = 0; findings && i < json_object_array_length(findings); i++) {
        const char *id = json_string_at(json_object_array_get_idx(findings, i), "id");
        cr_assert_not(is_fork_finding(id), "no fork finding (%s): nothing came through fork: %s", id,
                      findings_text(document));
    }
}

static void json_validate_with(const char *text, const char *schema);

void json_validate(const char *text)
{
    json_validate_with(text, environment_or_die("HANGDOC_SCHEMA"));
}

void json_validate_against(const char *text, const char *schema_name)
{
    char schema[4096];
    snprintf(schema, sizeof schema, "%s/docs/%s", environment_or_die("HANGDOC_SOURCE_ROOT"), schema_name);
    json_validate_with(text, schema);
}

static void json_validate_with(const char *text, const char *schema)
{
    char path[] = "/tmp/hangdoc-report-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    size_t length = strlen(text);
    cr_assert_eq(write(fd, text, length), (ssize_t)length);
    close(fd);
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/usr/bin/python3", environment_or_die("HANGDOC_VALIDATOR"),
                                                  schema, path, NULL });
    unlink(path);
    cr_assert_eq(result.exit_status, 0, "the document validates against %s:\n%s%s", schema, result.out,
                 result.err);
    run_result_free(&result);
}

static json_object *find_by_id(json_object *array, const char *key, pid_t id)
{
    size_t count = array ? json_object_array_length(array) : 0;
    for (size_t i = 0; i < count; i++) {
        json_object *item = json_object_array_get_idx(array, i);
        if (json_int_at(item, key, -1) == id)
            return item;
    }
    return NULL;
}

json_object *json_process(json_object *document, pid_t pid)
{
    return find_by_id(json_at(document, "processes"), "pid", pid);
}

json_object *json_thread(json_object *process, pid_t tid)
{
    return find_by_id(json_at(process, "threads"), "tid", tid);
}

json_object *json_at(json_object *object, const char *key)
{
    char path[256];
    snprintf(path, sizeof path, "%s", key);
    char *saved = NULL;
    for (char *part = strtok_r(path, ".", &saved); part && object; part = strtok_r(NULL, ".", &saved))
        if (!json_object_object_get_ex(object, part, &object))
            return NULL;
    return object;
}

const char *json_string_at(json_object *object, const char *key)
{
    json_object *value = json_at(object, key);
    return value && json_object_is_type(value, json_type_string) ? json_object_get_string(value) : NULL;
}

long long json_int_at(json_object *object, const char *key, long long missing)
{
    json_object *value = json_at(object, key);
    return value && json_object_is_type(value, json_type_int) ? json_object_get_int64(value) : missing;
}

bool json_bool_at(json_object *object, const char *key)
{
    json_object *value = json_at(object, key);
    return value && json_object_is_type(value, json_type_boolean) && json_object_get_boolean(value);
}

bool json_has_note(json_object *document, const char *part)
{
    json_object *notes = json_at(document, "notes");
    size_t count = notes ? json_object_array_length(notes) : 0;
    for (size_t i = 0; i < count; i++) {
        const char *text = json_string_at(json_object_array_get_idx(notes, i), "text");
        if (text && strstr(text, part))
            return true;
    }
    return false;
}

const char *fixture_path(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", environment_or_die("HANGDOC_FIXTURES"), name);
    return path;
}

void hangdoc_spawn(struct spawned *spawned, const char *const *arguments)
{
    *spawned = (struct spawned){ .out_fd = -1, .err_fd = -1, .ready_fd = -1 };
    unsetenv("COLUMNS");
    const char **argv = hangdoc_argv(arguments);
    int out_pipe[2], err_pipe[2], ready_pipe[2];
    cr_assert_eq(pipe2(out_pipe, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(err_pipe, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(ready_pipe, O_CLOEXEC), 0);
    pid_t child = spawn_in_own_group(argv[0], argv, out_pipe[1], err_pipe[1], ready_pipe[1]);
    free(argv);
    close(out_pipe[1]);
    close(err_pipe[1]);
    close(ready_pipe[1]);
    spawned->group.leader = child;
    guard_group(&spawned->group);
    spawned->out_fd = out_pipe[0];
    spawned->err_fd = err_pipe[0];
    spawned->ready_fd = ready_pipe[0];
    remember(&spawned->group);
}

bool spawned_ready(struct spawned *spawned)
{
    bool ready = read_ready_line(spawned->ready_fd, &spawned->group);
    close(spawned->ready_fd);
    spawned->ready_fd = -1;
    remember(&spawned->group); /* with the pids it reported */
    return ready;
}

void spawned_finish(struct spawned *spawned, struct run_result *result)
{
    if (spawned->ready_fd >= 0)
        close(spawned->ready_fd);
    collect_output(spawned->out_fd, spawned->err_fd, result, spawned->group.leader);
    int status;
    while (waitpid(spawned->group.leader, &status, 0) < 0 && errno == EINTR)
        ;
    result->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    /* hangdoc is reaped: only its group and the reported pids can be left, and the caller checks those */
    forget(&spawned->group);
    spawned->group.leader = 0;
    dismiss_guard(&spawned->group);
}

static bool finding_matches(json_object *finding, const char *id, pid_t pid)
{
    return strcmp(json_string_at(finding, "id"), id) == 0 && (!pid || json_int_at(finding, "pid", -1) == pid);
}

size_t json_count_findings(json_object *document, const char *id, pid_t pid)
{
    json_object *findings = json_at(document, "findings");
    size_t found = 0;
    for (size_t i = 0; findings && i < json_object_array_length(findings); i++)
        found += finding_matches(json_object_array_get_idx(findings, i), id, pid);
    return found;
}

json_object *json_first_finding(json_object *document, const char *id, pid_t pid)
{
    json_object *findings = json_at(document, "findings");
    for (size_t i = 0; findings && i < json_object_array_length(findings); i++)
        if (finding_matches(json_object_array_get_idx(findings, i), id, pid))
            return json_object_array_get_idx(findings, i);
    return NULL;
}

json_object *json_only_finding(json_object *document, const char *id, pid_t pid)
{
    cr_assert_eq(json_count_findings(document, id, pid), 1, "one '%s' finding on %d: %s", id, pid,
                 findings_text(document));
    return json_first_finding(document, id, pid);
}

bool json_finding_has_member(json_object *finding, pid_t tid)
{
    json_object *members = json_at(finding, "members");
    for (size_t i = 0; members && i < json_object_array_length(members); i++)
        if (json_int_at(json_object_array_get_idx(members, i), "tid", -1) == tid)
            return true;
    return false;
}

void expect_only_findings(json_object *document, const char *const *ids)
{
    json_object *findings = json_at(document, "findings");
    for (size_t i = 0; findings && i < json_object_array_length(findings); i++) {
        const char *id = json_string_at(json_object_array_get_idx(findings, i), "id");
        bool allowed = false;
        for (const char *const *known = ids; *known; known++)
            allowed |= strcmp(*known, id) == 0;
        cr_assert(allowed, "unexpected finding '%s': %s", id, json_object_to_json_string(findings));
    }
}

size_t json_count_remedies(json_object *finding, const char *part)
{
    json_object *remedies = json_at(finding, "remedies");
    size_t count = 0;
    for (size_t i = 0; remedies && i < json_object_array_length(remedies); i++)
        count += strstr(json_object_get_string(json_object_array_get_idx(remedies, i)), part) != NULL;
    return count;
}

char *file_bytes(const char *path, size_t *length)
{
    FILE *file = fopen(path, "re");
    if (!file)
        return NULL;
    char *bytes = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&bytes, &size);
    cr_assert_not_null(out);
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, file)) > 0)
        fwrite(chunk, 1, got, out);
    fclose(file);
    fclose(out);
    if (length)
        *length = size;
    return bytes;
}

char *file_text(const char *path)
{
    return file_bytes(path, NULL);
}
