/* kill_at_random: hangdoc diagnoses busy targets again and again and is killed at random moments with SIGKILL,
 * SIGINT or SIGTERM, also while it holds their threads stopped. Afterwards no target may be stopped, traced or dead,
 * and each part of it must still make progress (issue 17, "Never harm the target").
 *
 * usage: kill_at_random --hangdoc PATH --trials N [--seed S] [--python PYTHON] TARGET...
 *   TARGET  an executable, or a Python script (a name ending in .py) run with PYTHON (/usr/bin/python3 by default);
 *           started with one argument, the path of its counter file (counter_file.h), in a process group of its
 *           own, it says "ready <pid>" on fd 3 (scenarios/fixture.h)
 *
 * A trial: a target and a signal drawn at random; `hangdoc --json --samples 1-5 --interval 2-40ms` on it; the
 * signal after a random delay spread over the whole of such a run (each target's runs are timed first), or, one
 * trial in two, within 150 us of the moment hangdoc is seen to seize the target (the first or second time); whether
 * a thread of the target had a tracer (and was stopped) when the signal was sent is noted; hangdoc reaped within
 * 5 s; then the target checked: alive, no thread stopped (t/T) or traced, and every one of its counters rising
 * within 2 s.
 *
 * Prints the seed first (--seed repeats the series of draws; the delays scale with the runs timed here), a line for
 * each harmed target or misbehaving hangdoc as it happens, then one summary line per target and a total. Exit
 * status: 0 when no target was harmed and every hangdoc ended by the signal or with a verdict (0, 1, 2, hangdoc(1));
 * 1 otherwise; 2 on a usage or setup error.
 *
 * Nothing is left behind: targets and hangdoc die with this program (PR_SET_PDEATHSIG), the targets' process groups
 * are killed at the end and on SIGINT, SIGTERM and SIGHUP, and each counter file is unlinked as soon as its target
 * has mapped it. A harmed target is reported, killed and started afresh, so that the trials go on.
 */
#include "target_health.h"
#include "counter_file.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_HARMED 1
#define EXIT_SETUP 2

#define TARGETS_MAX 8
#define READY_FD 3
#define READY_TIMEOUT_MS 30000 /* an interpreter starting on a loaded machine */
#define PROGRESS_WINDOW_MS 2000
#define PROGRESS_POLL_MS 5
#define HANGDOC_END_WAIT_MS 5000
#define SAMPLES_MAX 5
#define CALIBRATION_RUNS 5
#define CALIBRATION_INTERVAL_MS 10
/* The signal comes at a uniform moment of a little more than a whole run: the runs' end is covered despite the
 * noise of their timing, and some signals come after hangdoc ended (it must have exited with a verdict then). */
#define DELAY_SPREAD 1.25
/* A trial in AIMED_EVERY waits until hangdoc has seized the target for the first or second time, and signals within
 * AIMED_DELAY_MAX_US: a run holds threads stopped for a fifth of its time or less, often a single thread for a few
 * hundred microseconds (to read its pc), and a uniform moment falls into a stop in one trial of ten or so; those
 * moments are the ones that matter most. */
#define AIMED_EVERY 2
#define AIMED_SEIZURES_MAX 2
#define AIMED_DELAY_MAX_US 150
#define AIMED_POLL_US 100
#define STDERR_SHOWN 2000

static const struct {
    int number;
    const char *name;
} signals[] = {
    { SIGKILL, "SIGKILL" },
    { SIGINT, "SIGINT" },
    { SIGTERM, "SIGTERM" },
};
#define NSIGNALS (sizeof signals / sizeof signals[0])

static const unsigned intervals_ms[] = { 2, 5, 10, 20, 40 };
#define NINTERVALS (sizeof intervals_ms / sizeof intervals_ms[0])

/* How a hangdoc run ended. A failure is hangdoc's own, not harm to the target, and fails the run all the same. */
enum ending { ENDED_BY_SIGNAL, EXITED_NO_HANG, EXITED_HANG, EXITED_FORK_UNSAFE, ENDED_OTHERWISE, DID_NOT_END,
              NENDINGS };
static const struct {
    const char *name;
    const char *failure; /* NULL when it is one of the endings hangdoc(1) documents */
} endings[] = {
    [ENDED_BY_SIGNAL] = { "by the signal", NULL },
    [EXITED_NO_HANG] = { "exit 0", NULL },
    [EXITED_HANG] = { "exit 1", NULL },
    [EXITED_FORK_UNSAFE] = { "exit 2", NULL },
    [ENDED_OTHERWISE] = { "otherwise", "it ended neither by the signal nor with a verdict's status" },
    [DID_NOT_END] = { "did not end", "it did not end within 5 s of the signal (killed)" },
};

/* When the signal comes: at a uniform moment of a whole run, or shortly after hangdoc seized the target. */
enum timing { TIMING_UNIFORM, TIMING_AIMED, NTIMINGS };
static const char *const timing_names[] = {
    [TIMING_UNIFORM] = "uniform",
    [TIMING_AIMED] = "aimed at a stop",
};

enum harm { HARM_STOPPED, HARM_TRACED, HARM_DEAD, HARM_NO_PROGRESS, NHARMS };
static const char *const harm_names[] = {
    [HARM_STOPPED] = "stopped",
    [HARM_TRACED] = "traced",
    [HARM_DEAD] = "dead",
    [HARM_NO_PROGRESS] = "no progress",
};

struct tally {
    unsigned trials;
    unsigned by_signal[NSIGNALS];
    unsigned by_timing[NTIMINGS];
    unsigned while_traced[NTIMINGS];  /* a thread of the target had a tracer when the signal was sent */
    unsigned while_stopped[NTIMINGS]; /* and one of them was in a stop */
    unsigned endings[NENDINGS];
    unsigned harms[NHARMS];
    unsigned harmed; /* trials after which the target was harmed, in one way or more */
};

struct target {
    const char *program;
    const char *name; /* the program's base name */
    bool is_python;
    pid_t pid; /* also its process group; 0 when not running */
    struct counter_file *counters;
    double run_base_s;       /* a whole run of one sample */
    double run_per_sample_s; /* what each further sample adds to its interval */
    struct tally tally;
};

struct options {
    const char *hangdoc;
    const char *python;
    unsigned trials;
    unsigned seed;
    struct target targets[TARGETS_MAX];
    size_t ntargets;
};

struct trial {
    unsigned number;
    struct target *target;
    size_t signal;
    unsigned samples;
    unsigned interval_ms;
    enum timing timing;
    unsigned seizure; /* aimed: the seizure (1, 2...) after which the signal comes */
    long delay_us;    /* from hangdoc's start, or from the moment it was seen to seize the target */
};

/* ---- leaving nothing behind ------------------------------------------------------------------------------------ */

static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NHANDLED (sizeof handled_signals / sizeof handled_signals[0])

/* What the handler kills: read in a signal handler, so plain pids (0: none). */
static volatile sig_atomic_t target_groups[TARGETS_MAX];
static volatile sig_atomic_t running_hangdoc;

static void end_everything(int number)
{
    if (running_hangdoc > 0)
        kill((pid_t)running_hangdoc, SIGKILL); /* the kernel lets its tracees go */
    for (size_t i = 0; i < TARGETS_MAX; i++)
        if (target_groups[i] > 0)
            kill(-(pid_t)target_groups[i], SIGKILL);
    signal(number, SIG_DFL);
    raise(number);
}

static void install_handlers(void)
{
    struct sigaction action = { .sa_handler = end_everything };
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < NHANDLED; i++)
        sigaction(handled_signals[i], &action, NULL);
}

/* Around fork(): a signal that comes before the child has reset its handlers must not run ours in it (it would kill
 * the targets). */
static void block_handled(sigset_t *previous)
{
    sigset_t blocked;
    sigemptyset(&blocked);
    for (size_t i = 0; i < NHANDLED; i++)
        sigaddset(&blocked, handled_signals[i]);
    sigprocmask(SIG_BLOCK, &blocked, previous);
}

/* In a child before exec: it dies with us, and takes the signals as a fresh process does (exec would keep SIG_IGN,
 * and hangdoc leaves an ignored SIGINT ignored). A signal sent meanwhile is delivered when the mask is lifted. */
static void become_child(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    for (size_t i = 0; i < NHANDLED; i++)
        signal(handled_signals[i], SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* ---- small helpers ------------------------------------------------------------------------------------------- */

static double monotonic_s(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void sleep_us(long microseconds)
{
    struct timespec pause = { microseconds / 1000000, (microseconds % 1000000) * 1000 };
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
        ;
}

__attribute__((format(printf, 1, 2), noreturn)) static void fail_setup(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    fprintf(stderr, "kill_at_random: ");
    vfprintf(stderr, format, arguments);
    fputc('\n', stderr);
    va_end(arguments);
    for (size_t i = 0; i < TARGETS_MAX; i++)
        if (target_groups[i] > 0)
            kill(-(pid_t)target_groups[i], SIGKILL);
    exit(EXIT_SETUP);
}

/* A uniform draw in [0, 1). */
static double draw(unsigned *seed)
{
    return (double)rand_r(seed) / ((double)RAND_MAX + 1.0);
}

static size_t draw_below(unsigned *seed, size_t count)
{
    return (size_t)(draw(seed) * (double)count);
}

/* ---- targets ------------------------------------------------------------------------------------------------- */

/* A new file of ours in $TMPDIR (or /tmp), named after `what`; its descriptor, its path in `path`. */
static int create_scratch_file(const char *what, int flags, char *path, size_t size)
{
    const char *directory = getenv("TMPDIR");
    snprintf(path, size, "%s/kill_at_random-%s-XXXXXX", directory && *directory ? directory : "/tmp", what);
    int fd = mkostemp(path, flags | O_CLOEXEC);
    if (fd < 0)
        fail_setup("cannot create %s: %s", path, strerror(errno));
    return fd;
}

/* A fresh counter file of the right size; its path in `path`. */
static void create_counter_file(char *path, size_t size)
{
    int fd = create_scratch_file("counters", 0, path, size);
    if (ftruncate(fd, COUNTER_FILE_SIZE) != 0)
        fail_setup("cannot size the counter file %s: %s", path, strerror(errno));
    close(fd);
}

/* Reads the ready line from `fd` within READY_TIMEOUT_MS; its pid, or 0. */
static pid_t read_ready_line(int fd)
{
    char line[64];
    size_t length = 0;
    double deadline = monotonic_s() + READY_TIMEOUT_MS / 1000.0;
    while (length < sizeof line - 1 && !memchr(line, '\n', length)) {
        struct pollfd ready = { .fd = fd, .events = POLLIN };
        int left_ms = (int)((deadline - monotonic_s()) * 1000);
        if (left_ms <= 0 || poll(&ready, 1, left_ms) <= 0)
            return 0;
        ssize_t got = read(fd, line + length, sizeof line - 1 - length);
        if (got <= 0)
            return 0;
        length += (size_t)got;
    }
    line[length] = '\0';
    int pid;
    return sscanf(line, "ready %d", &pid) == 1 ? (pid_t)pid : 0;
}

static void exec_target(const struct options *options, const struct target *target, const char *counter_path)
{
    if (target->is_python)
        execl(options->python, options->python, target->program, counter_path, (char *)NULL);
    else
        execl(target->program, target->program, counter_path, (char *)NULL);
    fprintf(stderr, "kill_at_random: cannot run %s: %s\n", target->program, strerror(errno));
    _exit(127);
}

static void start_target(const struct options *options, struct target *target, size_t slot)
{
    char counter_path[256];
    create_counter_file(counter_path, sizeof counter_path);
    target->counters = counter_file_map(counter_path);
    int ready[2];
    if (!target->counters || pipe2(ready, O_CLOEXEC) != 0)
        fail_setup("cannot map %s or make a pipe: %s", counter_path, strerror(errno));
    sigset_t previous;
    block_handled(&previous);
    pid_t parent = getpid(), child = fork();
    if (child == 0) {
        setpgid(0, 0);
        become_child(parent);
        /* dup2() gives fd 3 without O_CLOEXEC, unless the pipe's end is fd 3 already */
        if (ready[1] == READY_FD)
            fcntl(READY_FD, F_SETFD, 0);
        else
            dup2(ready[1], READY_FD);
        exec_target(options, target, counter_path);
    }
    if (child > 0) {
        setpgid(child, child); /* before our handler may kill the group: whichever of us runs first sets it */
        target_groups[slot] = child;
    }
    sigprocmask(SIG_SETMASK, &previous, NULL);
    close(ready[1]);
    if (child < 0)
        fail_setup("cannot fork: %s", strerror(errno));
    pid_t announced = read_ready_line(ready[0]);
    close(ready[0]);
    unlink(counter_path); /* the target has mapped it, or will never */
    int status;
    if (announced != child && waitpid(child, &status, WNOHANG) == child)
        fail_setup("%s ended before its ready line (wait status 0x%x)", target->program, (unsigned)status);
    if (announced != child)
        fail_setup("%s did not say \"ready %d\" within %d ms", target->program, (int)child, READY_TIMEOUT_MS);
    if (memcmp(target->counters->magic, COUNTER_FILE_MAGIC, sizeof target->counters->magic) != 0 ||
        target->counters->ncounters == 0 || target->counters->ncounters > COUNTERS_MAX)
        fail_setup("%s published no counters", target->program);
    target->pid = child;
}

static void stop_target(struct target *target, size_t slot)
{
    if (target->pid > 0) {
        kill(-target->pid, SIGKILL);
        waitpid(target->pid, NULL, 0);
    }
    target_groups[slot] = 0;
    target->pid = 0;
    if (target->counters)
        munmap(target->counters, COUNTER_FILE_SIZE);
    target->counters = NULL;
}

/* ---- the target's health ------------------------------------------------------------------------------------- */

/* Whether the target is still alive; when it died (we are its parent: it is reaped here), how, into `why`. */
static bool target_alive(struct target *target, char *why, size_t size)
{
    int status;
    if (waitpid(target->pid, &status, WNOHANG) != target->pid)
        return true;
    if (WIFSIGNALED(status))
        snprintf(why, size, "died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(why, size, "exited with status %d", WEXITSTATUS(status));
    target->pid = 0;
    return false;
}

/* Every counter rises within PROGRESS_WINDOW_MS; when one does not, names it into `why`. */
static bool counters_rise(const struct counter_file *counters, char *why, size_t size)
{
    size_t ncounters = (size_t)counters->ncounters;
    uint64_t before[COUNTERS_MAX];
    for (size_t i = 0; i < ncounters; i++)
        before[i] = counter_read(&counters->counters[i]);
    size_t first_still = 0;
    for (double deadline = monotonic_s() + PROGRESS_WINDOW_MS / 1000.0;;) {
        while (first_still < ncounters && counter_read(&counters->counters[first_still]) > before[first_still])
            first_still++;
        if (first_still == ncounters)
            return true;
        if (monotonic_s() >= deadline)
            break;
        sleep_us(PROGRESS_POLL_MS * 1000);
    }
    snprintf(why, size, "counter '%.*s' stayed at %llu for %d ms", COUNTER_NAME_MAX,
             counters->counters[first_still].name, (unsigned long long)before[first_still], PROGRESS_WINDOW_MS);
    return false;
}

/* Checks the target after a run; the harms found (a bit per enum harm), each explained on stdout. */
static unsigned check_target(struct target *target, const char *context)
{
    char why[256];
    unsigned harms = 0;
    struct target_health health;
    if (!target_alive(target, why, sizeof why) || !target_health_look(target->pid, &health)) {
        printf("kill_at_random: %s: HARMED: %s %s\n", context, target->name,
               target->pid ? "is gone from /proc" : why);
        return 1u << HARM_DEAD;
    }
    if (health.stopped > 0) {
        harms |= 1u << HARM_STOPPED;
        printf("kill_at_random: %s: HARMED: %zu thread(s) stopped, thread %d in state %c\n", context, health.stopped,
               (int)health.first_stopped.tid, health.first_stopped.state);
    }
    if (health.traced > 0) {
        harms |= 1u << HARM_TRACED;
        printf("kill_at_random: %s: HARMED: %zu thread(s) traced, thread %d by pid %d\n", context, health.traced,
               (int)health.first_traced.tid, (int)health.first_traced.tracer);
    }
    if (!counters_rise(target->counters, why, sizeof why)) {
        harms |= 1u << HARM_NO_PROGRESS;
        printf("kill_at_random: %s: HARMED: no progress: %s\n", context, why);
    }
    return harms;
}

/* ---- hangdoc ------------------------------------------------------------------------------------------------- */

static pid_t start_hangdoc(const char *hangdoc, pid_t target, unsigned samples, unsigned interval_ms,
                           int stderr_fd)
{
    char samples_text[16], interval_text[16], pid_text[16];
    snprintf(samples_text, sizeof samples_text, "%u", samples);
    snprintf(interval_text, sizeof interval_text, "%ums", interval_ms);
    snprintf(pid_text, sizeof pid_text, "%d", (int)target);
    if (ftruncate(stderr_fd, 0) != 0)
        fail_setup("cannot empty the scratch file of hangdoc's stderr: %s", strerror(errno));
    sigset_t previous;
    block_handled(&previous);
    pid_t parent = getpid(), child = fork();
    if (child == 0) {
        become_child(parent);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(stderr_fd, 2);
        execl(hangdoc, "hangdoc", "--json", "--samples", samples_text, "--interval", interval_text, pid_text,
              (char *)NULL);
        _exit(127);
    }
    running_hangdoc = child > 0 ? child : 0;
    sigprocmask(SIG_SETMASK, &previous, NULL);
    if (child < 0)
        fail_setup("cannot fork: %s", strerror(errno));
    return child;
}

/* Reaps hangdoc within `wait_ms`; false (and it is killed and reaped) when it did not end. */
static bool reap_hangdoc(pid_t hangdoc, int wait_ms, int *status)
{
    double deadline = monotonic_s() + wait_ms / 1000.0;
    bool ended = false;
    while (!(ended = waitpid(hangdoc, status, WNOHANG) == hangdoc) && monotonic_s() < deadline)
        sleep_us(1000);
    if (!ended) {
        kill(hangdoc, SIGKILL);
        waitpid(hangdoc, status, 0);
    }
    running_hangdoc = 0;
    return ended;
}

static enum ending ending_of(bool ended, int status, int signal_number)
{
    if (!ended)
        return DID_NOT_END;
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == signal_number ? ENDED_BY_SIGNAL : ENDED_OTHERWISE;
    static const enum ending by_exit_status[] = { EXITED_NO_HANG, EXITED_HANG, EXITED_FORK_UNSAFE };
    return WEXITSTATUS(status) < 3 ? by_exit_status[WEXITSTATUS(status)] : ENDED_OTHERWISE;
}

/* Where each hangdoc's stderr goes, emptied before each run, shown when it failed; unlinked at once. */
static int open_stderr_scratch(void)
{
    char path[256];
    int fd = create_scratch_file("stderr", O_APPEND, path, sizeof path);
    unlink(path);
    return fd;
}

static void show_stderr(int stderr_fd)
{
    char text[STDERR_SHOWN + 1];
    ssize_t length = pread(stderr_fd, text, STDERR_SHOWN, 0);
    if (length > 0) {
        text[length] = '\0';
        printf("kill_at_random: hangdoc's stderr: %s%s", text, text[length - 1] == '\n' ? "" : "\n");
    }
}

/* ---- timing a whole run -------------------------------------------------------------------------------------- */

static int compare_doubles(const void *left, const void *right)
{
    double a = *(const double *)left, b = *(const double *)right;
    return (a > b) - (a < b);
}

/* The median duration of CALIBRATION_RUNS whole runs, each of which must end with a verdict, leaving the target
 * unharmed. */
static double time_whole_runs(const struct options *options, struct target *target, unsigned samples, int stderr_fd)
{
    double durations[CALIBRATION_RUNS];
    for (size_t run = 0; run < CALIBRATION_RUNS; run++) {
        double started = monotonic_s();
        int status;
        pid_t hangdoc = start_hangdoc(options->hangdoc, target->pid, samples, CALIBRATION_INTERVAL_MS, stderr_fd);
        bool ended = reap_hangdoc(hangdoc, 60000, &status);
        durations[run] = monotonic_s() - started;
        if (ending_of(ended, status, 0) >= ENDED_OTHERWISE) {
            show_stderr(stderr_fd);
            fail_setup("a whole run of hangdoc on %s did not end with a verdict (wait status 0x%x)", target->name,
                       (unsigned)status);
        }
        if (check_target(target, "a whole run") != 0)
            fail_setup("a whole run of hangdoc, not killed, harmed %s", target->name);
    }
    qsort(durations, CALIBRATION_RUNS, sizeof durations[0], compare_doubles);
    return durations[CALIBRATION_RUNS / 2];
}

/* How long a run takes, as a line through the times of one sample and of SAMPLES_MAX samples. */
static void calibrate(const struct options *options, struct target *target, int stderr_fd)
{
    double one = time_whole_runs(options, target, 1, stderr_fd);
    double most = time_whole_runs(options, target, SAMPLES_MAX, stderr_fd);
    double per_sample = (most - one) / (SAMPLES_MAX - 1) - CALIBRATION_INTERVAL_MS / 1000.0;
    target->run_base_s = one;
    target->run_per_sample_s = per_sample > 0 ? per_sample : 0;
    printf("kill_at_random: %s: a whole run takes %.0f ms with 1 sample, %.0f ms with %d at %d ms\n", target->name,
           one * 1000, most * 1000, SAMPLES_MAX, CALIBRATION_INTERVAL_MS);
}

static double estimated_run_s(const struct target *target, unsigned samples, unsigned interval_ms)
{
    return target->run_base_s + (samples - 1) * (target->run_per_sample_s + interval_ms / 1000.0);
}

/* ---- trials -------------------------------------------------------------------------------------------------- */

static struct trial draw_trial(struct options *options, unsigned number, unsigned *seed)
{
    struct trial trial = { .number = number };
    trial.target = &options->targets[draw_below(seed, options->ntargets)];
    trial.signal = draw_below(seed, NSIGNALS);
    trial.samples = 1 + (unsigned)draw_below(seed, SAMPLES_MAX);
    trial.interval_ms = intervals_ms[draw_below(seed, NINTERVALS)];
    trial.timing = draw_below(seed, AIMED_EVERY) == 0 ? TIMING_AIMED : TIMING_UNIFORM;
    trial.seizure = 1 + (unsigned)draw_below(seed, AIMED_SEIZURES_MAX);
    double spread_us = trial.timing == TIMING_AIMED
                           ? AIMED_DELAY_MAX_US
                           : DELAY_SPREAD * estimated_run_s(trial.target, trial.samples, trial.interval_ms) * 1e6;
    trial.delay_us = (long)(draw(seed) * spread_us);
    return trial;
}

/* Waits until hangdoc has seized the target for the `nth` time (a look that sees a thread with a tracer after one
 * that saw none), at most `limit_s`: a run that ended before gets its signal afterwards. */
static void wait_for_seizure(const struct target *target, unsigned nth, double limit_s)
{
    struct target_health health;
    double deadline = monotonic_s() + limit_s;
    bool was_seized = false;
    for (unsigned seen = 0; target_health_look(target->pid, &health) && monotonic_s() < deadline;) {
        bool seized = health.traced > 0;
        if (seized && !was_seized && ++seen == nth)
            return;
        was_seized = seized;
        sleep_us(AIMED_POLL_US);
    }
}

/* What one trial found wrong, if anything. */
struct outcome {
    unsigned harms; /* a bit per enum harm */
    bool hangdoc_failed;
};

static struct outcome run_trial(const struct options *options, const struct trial *trial, int stderr_fd)
{
    struct target *target = trial->target;
    struct tally *tally = &target->tally;
    int signal_number = signals[trial->signal].number;
    char context[160];
    char after[32];
    snprintf(after, sizeof after, trial->timing == TIMING_AIMED ? "seizure %u" : "the start", trial->seizure);
    snprintf(context, sizeof context, "trial %u (%s, %s %ld us after %s, --samples %u --interval %ums, seed %u)",
             trial->number, target->name, signals[trial->signal].name, trial->delay_us, after, trial->samples,
             trial->interval_ms, options->seed);

    pid_t hangdoc = start_hangdoc(options->hangdoc, target->pid, trial->samples, trial->interval_ms, stderr_fd);
    if (trial->timing == TIMING_AIMED)
        wait_for_seizure(target, trial->seizure,
                         DELAY_SPREAD * estimated_run_s(target, trial->samples, trial->interval_ms));
    sleep_us(trial->delay_us);
    struct target_health at_signal;
    bool looked = target_health_look(target->pid, &at_signal);
    kill(hangdoc, signal_number);
    int status;
    bool ended = reap_hangdoc(hangdoc, HANGDOC_END_WAIT_MS, &status);

    tally->trials++;
    tally->by_signal[trial->signal]++;
    tally->by_timing[trial->timing]++;
    tally->while_traced[trial->timing] += looked && at_signal.traced > 0;
    tally->while_stopped[trial->timing] += looked && at_signal.traced > 0 && at_signal.stopped > 0;
    enum ending ending = ending_of(ended, status, signal_number);
    tally->endings[ending]++;
    if (endings[ending].failure) {
        printf("kill_at_random: %s: HANGDOC FAILED: %s (wait status 0x%x)\n", context, endings[ending].failure,
               (unsigned)status);
        show_stderr(stderr_fd);
    }
    unsigned harms = check_target(target, context);
    for (size_t harm = 0; harm < NHARMS; harm++)
        tally->harms[harm] += (harms >> harm) & 1;
    tally->harmed += harms != 0;
    return (struct outcome){ .harms = harms, .hangdoc_failed = endings[ending].failure != NULL };
}

/* ---- the summary --------------------------------------------------------------------------------------------- */

static void add_tally(struct tally *sum, const struct tally *part)
{
    sum->trials += part->trials;
    for (size_t i = 0; i < NSIGNALS; i++)
        sum->by_signal[i] += part->by_signal[i];
    for (size_t i = 0; i < NTIMINGS; i++) {
        sum->by_timing[i] += part->by_timing[i];
        sum->while_traced[i] += part->while_traced[i];
        sum->while_stopped[i] += part->while_stopped[i];
    }
    for (size_t i = 0; i < NENDINGS; i++)
        sum->endings[i] += part->endings[i];
    for (size_t i = 0; i < NHARMS; i++)
        sum->harms[i] += part->harms[i];
    sum->harmed += part->harmed;
}

static void print_tally(const char *name, const struct tally *tally)
{
    printf("kill_at_random: %s: %u trials (", name, tally->trials);
    for (size_t i = 0; i < NSIGNALS; i++)
        printf("%s%s %u", i ? ", " : "", signals[i].name, tally->by_signal[i]);
    printf(")");
    for (size_t i = 0; i < NTIMINGS; i++)
        printf("; %s %u, of which while tracing %u, with a thread stopped %u", timing_names[i], tally->by_timing[i],
               tally->while_traced[i], tally->while_stopped[i]);
    printf("; hangdoc ended");
    for (size_t i = 0; i < NENDINGS; i++)
        printf("%s %s: %u", i ? "," : "", endings[i].name, tally->endings[i]);
    printf("; harmed %u (", tally->harmed);
    for (size_t i = 0; i < NHARMS; i++)
        printf("%s%s %u", i ? ", " : "", harm_names[i], tally->harms[i]);
    printf(")\n");
}

/* ---- options ------------------------------------------------------------------------------------------------- */

static void usage(FILE *stream)
{
    fprintf(stream, "usage: kill_at_random --hangdoc PATH --trials N [--seed S] [--python PYTHON] TARGET...\n"
                    "  TARGET: an executable, or a Python script (*.py) run with PYTHON (default /usr/bin/python3),\n"
                    "  given its counter file's path; it says \"ready <pid>\" on fd 3. At most %d targets.\n",
            TARGETS_MAX);
}

static bool parse_unsigned(const char *text, unsigned *value)
{
    char *end;
    errno = 0;
    unsigned long parsed = strtoul(text, &end, 10);
    if (errno || end == text || *end || parsed > 0xffffffffUL || text[0] == '-')
        return false;
    *value = (unsigned)parsed;
    return true;
}

static bool ends_with(const char *text, const char *suffix)
{
    size_t length = strlen(text), suffix_length = strlen(suffix);
    return length >= suffix_length && strcmp(text + length - suffix_length, suffix) == 0;
}

static void parse_options(int argc, char **argv, struct options *options)
{
    static const struct option long_options[] = {
        { "hangdoc", required_argument, NULL, 'h' }, { "trials", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 's' },    { "python", required_argument, NULL, 'p' },
        { "help", no_argument, NULL, '?' },          { NULL, 0, NULL, 0 },
    };
    *options = (struct options){ .python = "/usr/bin/python3",
                                 .seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 16) };
    bool have_trials = false;
    int option;
    while ((option = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        bool fine = true;
        if (option == 'h')
            options->hangdoc = optarg;
        else if (option == 'n')
            fine = have_trials = parse_unsigned(optarg, &options->trials);
        else if (option == 's')
            fine = parse_unsigned(optarg, &options->seed);
        else if (option == 'p')
            options->python = optarg;
        else
            fine = false;
        if (!fine) {
            usage(stderr);
            exit(EXIT_SETUP);
        }
    }
    if (!options->hangdoc || !have_trials || optind == argc || argc - optind > TARGETS_MAX) {
        usage(stderr);
        exit(EXIT_SETUP);
    }
    if (access(options->hangdoc, X_OK) != 0)
        fail_setup("%s is not an executable: %s", options->hangdoc, strerror(errno));
    for (int i = optind; i < argc; i++) {
        struct target *target = &options->targets[options->ntargets++];
        const char *slash = strrchr(argv[i], '/');
        *target = (struct target){ .program = argv[i], .name = slash ? slash + 1 : argv[i],
                                   .is_python = ends_with(argv[i], ".py") };
    }
}

int main(int argc, char **argv)
{
    struct options options;
    parse_options(argc, argv, &options);
    setvbuf(stdout, NULL, _IOLBF, 0);
    install_handlers();
    double started = monotonic_s();
    printf("kill_at_random: seed %u, %u trials over %zu target(s)\n", options.seed, options.trials,
           options.ntargets);

    int stderr_fd = open_stderr_scratch();
    for (size_t i = 0; i < options.ntargets; i++) {
        start_target(&options, &options.targets[i], i);
        if (check_target(&options.targets[i], "before the trials") != 0)
            fail_setup("%s is not healthy before any trial", options.targets[i].name);
        calibrate(&options, &options.targets[i], stderr_fd);
    }

    unsigned seed = options.seed;
    bool all_fine = true;
    for (unsigned number = 1; number <= options.trials; number++) {
        struct trial trial = draw_trial(&options, number, &seed);
        struct outcome outcome = run_trial(&options, &trial, stderr_fd);
        all_fine &= outcome.harms == 0 && !outcome.hangdoc_failed;
        if (outcome.harms != 0) {
            /* a harmed target would spoil every later trial on it: start it afresh */
            size_t slot = (size_t)(trial.target - options.targets);
            stop_target(trial.target, slot);
            start_target(&options, trial.target, slot);
        }
    }

    struct tally total = { 0 };
    for (size_t i = 0; i < options.ntargets; i++) {
        print_tally(options.targets[i].name, &options.targets[i].tally);
        add_tally(&total, &options.targets[i].tally);
        stop_target(&options.targets[i], i);
    }
    print_tally("total", &total);
    printf("kill_at_random: %.1f s, seed %u: %s\n", monotonic_s() - started, options.seed,
           all_fine ? "no target harmed" : total.harmed ? "TARGETS HARMED" : "hangdoc did not always end as it must");
    return all_fine ? 0 : EXIT_HARMED;
}
