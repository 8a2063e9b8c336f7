/* The wait ledger (ledger.h): a file per stopped process, of the long waits hangdoc interrupted. */
#include "ledger.h"

#include "procfs.h"
#include "syscalls.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LEDGER_VERSION 1
/* Waits shorter than this before the stop are not worth a line: the clock a stop restarts loses less. */
#define LEDGER_MIN_WAIT_S 0.5
/* A process's file: at most this many lines are read (a file longer than that was not written by hangdoc). */
#define LEDGER_LINES_MAX 65536
#define LEDGER_LINE_MAX 512
/* Files of gone processes removed per diagnosis, and directory entries looked at: a bounded cost. */
#define LEDGER_SCAN_MAX 1024
/* What hangdoc's own stop costs a sleeping thread: one voluntary switch into the stop, one back into its wait (2,
 * measured on futex waits, restarted or not); on a loaded machine, preemptions on the way, which are no wake-up.
 * Fewer voluntary ones, and it is still on its way back (read again shortly); more, and something else woke it
 * between the sample's read and the record (a thread woken for real sleeps again by a voluntary switch): its wait
 * may have begun again, and nothing is carried. */
#define STOP_VOLUNTARY_SWITCHES 2
#define STOP_INVOLUNTARY_SWITCHES_MAX 8
/* How long the record waits, in all for a process, for its threads to be back in their waits: on a loaded machine
 * of two CPUs a thread let go may wait longer than 50 ms for a CPU to finish its way back (seen in a full suite
 * run, a shell's read whose wait a second diagnosis lost), and only a thread that is on its way costs the wait. */
#define BACK_ASLEEP_WAIT_MS 200

/* The last run recorded and the one read later are the same value printed twice by the kernel (in ms, with six
 * decimals): equal to within rounding. */
#define LAST_RAN_SAME_MS 1e-5

const char *probe_ledger_default_dir(void)
{
    const char *chosen = getenv("HANGDOC_LEDGER_DIR");
    if (chosen)
        return chosen[0] ? chosen : NULL;
    if (geteuid() == 0)
        return "/run/hangdoc";
    static char runtime_dir[512];
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (!runtime || runtime[0] != '/' ||
        snprintf(runtime_dir, sizeof runtime_dir, "%s/hangdoc", runtime) >= (int)sizeof runtime_dir)
        return NULL;
    return runtime_dir;
}

/* The directory, opened, when it is hangdoc's user's alone and not a link; -1 (and *why) otherwise. A missing one
 * is made, unless `create` is false (reading needs none). */
static int open_dir(const char *dir, bool create, const char **why)
{
    *why = NULL;
    if (create && mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1; /* nowhere to write (a read-only /run, a container's): no ledger, nothing to say */
    int fd cleanup_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP || errno == ENOTDIR)
            *why = "it is not a directory (or is a link)";
        return -1;
    }
    struct stat status;
    if (fstat(fd, &status) != 0 || status.st_uid != geteuid() || (status.st_mode & 022) != 0) {
        *why = "it belongs to another user or others may write to it";
        return -1;
    }
    return steal_fd(&fd);
}

static long clock_ticks(void)
{
    static long ticks;
    if (!ticks) {
        ticks = sysconf(_SC_CLK_TCK);
        if (ticks <= 0)
            ticks = 100;
    }
    return ticks;
}

static unsigned long long start_ticks_of(const struct hd_process *process)
{
    return (unsigned long long)(process->start_time_s * (double)clock_ticks() + 0.5);
}

static void file_name(char *name, size_t size, const struct hd_process *process)
{
    snprintf(name, size, "%d-%llu", (int)process->pid, start_ticks_of(process));
}

static bool take_u64(const char **cursor, int base, uint64_t *value)
{
    const char *p = *cursor;
    while (*p == ' ')
        p++;
    if (!(base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)))
        return false;
    char *end;
    errno = 0;
    unsigned long long parsed = strtoull(p, &end, base);
    if (errno || end == p || (*end != ' ' && *end != '\0' && *end != '\n'))
        return false;
    *value = parsed;
    *cursor = end;
    return true;
}

static bool take_double(const char **cursor, double *value)
{
    const char *p = *cursor;
    while (*p == ' ')
        p++;
    if (!((*p >= '0' && *p <= '9') || *p == '-'))
        return false;
    char *end;
    errno = 0;
    double parsed = strtod(p, &end);
    if (errno || end == p || !isfinite(parsed) || (*end != ' ' && *end != '\0' && *end != '\n'))
        return false;
    *value = parsed;
    *cursor = end;
    return true;
}

/* "tid nr a0 a1 a2 a3 a4 a5 cpu_ns voluntary involuntary last_ran_ms waited_s stopped_at" (args in hex) */
bool probe_ledger_parse_line(const char *line, struct probe_ledger_entry *entry)
{
    *entry = (struct probe_ledger_entry){ 0 };
    const char *p = line;
    uint64_t tid, nr;
    if (!take_u64(&p, 10, &tid) || tid == 0 || tid > INT32_MAX || !take_u64(&p, 10, &nr) || nr > 4096)
        return false;
    entry->tid = (pid_t)tid;
    entry->nr = (long)nr;
    for (int a = 0; a < 6; a++)
        if (!take_u64(&p, 16, &entry->args[a]))
            return false;
    if (!take_u64(&p, 10, &entry->cpu_time_ns) || !take_u64(&p, 10, &entry->voluntary_switches) ||
        !take_u64(&p, 10, &entry->involuntary_switches) || !take_double(&p, &entry->last_ran_ms) ||
        !take_double(&p, &entry->waited_s) || !take_double(&p, &entry->stopped_at))
        return false;
    while (*p == ' ')
        p++;
    return (*p == '\0' || *p == '\n') && entry->waited_s >= 0 && entry->stopped_at >= 0;
}

/* The thread sleeps in the very wait the line recorded, and has not run since: not a nanosecond of CPU time, not
 * a switch. A wait the stop made the kernel resume through restart_syscall keeps its arguments (syscalls.c). */
static bool unchanged_since(const struct hd_thread *thread, const struct probe_ledger_entry *entry)
{
    if (thread->syscall.state != HD_SYSCALL_IN || !thread->blocked_for_known || !thread->switches_known)
        return false;
    if (thread->syscall.nr != entry->nr && !probe_syscall_is_restart(&thread->syscall))
        return false;
    return memcmp(thread->syscall.args, entry->args, sizeof entry->args) == 0 &&
           thread->cpu_time_ns == entry->cpu_time_ns && thread->voluntary_switches == entry->voluntary_switches &&
           thread->involuntary_switches == entry->involuntary_switches &&
           fabs(thread->last_ran_ms - entry->last_ran_ms) <= LAST_RAN_SAME_MS;
}

/* The header line: the format, the boot, and the process the file is of (its name says it too). */
static bool header_matches(const char *line, const struct hd_snapshot *snapshot, const struct hd_process *process)
{
    char expected[160];
    snprintf(expected, sizeof expected, "hangdoc-ledger %d %s %d %llu\n", LEDGER_VERSION,
             snapshot->boot_id[0] ? snapshot->boot_id : "-", (int)process->pid, start_ticks_of(process));
    return strcmp(line, expected) == 0;
}

static void apply_to_process(int dir_fd, const struct hd_snapshot *snapshot, struct hd_process *process)
{
    char name[64];
    file_name(name, sizeof name, process);
    /* not blocking on a FIFO put in its place, nor reading a device: a plain file, or nothing */
    int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat status;
    FILE *file = fstat(fd, &status) == 0 && S_ISREG(status.st_mode) ? fdopen(fd, "r") : NULL;
    if (!file) {
        close(fd);
        return;
    }
    char line[LEDGER_LINE_MAX];
    if (fgets(line, sizeof line, file) && header_matches(line, snapshot, process)) {
        for (size_t n = 0; n < LEDGER_LINES_MAX && fgets(line, sizeof line, file); n++) {
            struct probe_ledger_entry entry;
            if (!probe_ledger_parse_line(line, &entry))
                continue;
            struct hd_thread *thread = hd_process_find_thread(process, entry.tid);
            /* no wait is older than its process */
            if (!thread || thread->waited_before_s > 0 || !unchanged_since(thread, &entry) ||
                (process->age_s > 0 && entry.waited_s > process->age_s + 1.0))
                continue;
            thread->waited_before_s = entry.waited_s;
            thread->earlier_stop_at = entry.stopped_at;
            thread->blocked_for_s += entry.waited_s;
        }
    }
    fclose(file);
}

void probe_ledger_apply(struct hd_snapshot *snapshot, const char *dir)
{
    if (!dir)
        return;
    const char *why;
    int dir_fd = open_dir(dir, false, &why);
    if (dir_fd < 0)
        return; /* record says why, once */
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        if (!snapshot->processes[p].kernel_thread && !snapshot->processes[p].zombie)
            apply_to_process(dir_fd, snapshot, &snapshot->processes[p]);
    close(dir_fd);
}

static bool worth_a_line(const struct hd_thread *thread)
{
    return thread->syscall.state == HD_SYSCALL_IN && thread->blocked_for_known && thread->switches_known &&
           thread->state != 'R' && thread->blocked_for_s >= LEDGER_MIN_WAIT_S;
}

static bool read_sched_now(pid_t pid, pid_t tid, struct probe_sched *sched)
{
    char path[96], text[8192];
    snprintf(path, sizeof path, "/proc/%d/task/%d/sched", (int)pid, (int)tid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    return length > 0 && probe_parse_sched(text, (size_t)length, sched) && sched->has_exec_start &&
           sched->has_runtime && sched->has_switches;
}

/* The thread's scheduler state once it sleeps again after the stop, when its switches since the sample are the
 * stop's own; false otherwise. A thread still on its way back is read again, within the process's `*budget_ms`. */
static bool read_back_asleep(pid_t pid, const struct hd_thread *thread, struct probe_sched *sched,
                             unsigned *budget_ms)
{
    for (;;) {
        if (!read_sched_now(pid, thread->tid, sched) || sched->voluntary_switches < thread->voluntary_switches ||
            sched->involuntary_switches < thread->involuntary_switches ||
            sched->involuntary_switches - thread->involuntary_switches > STOP_INVOLUNTARY_SWITCHES_MAX)
            return false;
        uint64_t voluntary = sched->voluntary_switches - thread->voluntary_switches;
        if (voluntary >= STOP_VOLUNTARY_SWITCHES || *budget_ms == 0)
            return voluntary == STOP_VOLUNTARY_SWITCHES;
        struct timespec millisecond = { .tv_nsec = 1000000 };
        nanosleep(&millisecond, NULL);
        (*budget_ms)--;
    }
}

/* Writes the process's lines into a temporary file and renames it over the old one, so that a reader sees a
 * whole file or none; a process with nothing to write loses its file. */
static void record_process(int dir_fd, const struct hd_snapshot *snapshot, const struct hd_process *process)
{
    char name[64], temporary[96];
    file_name(name, sizeof name, process);
    snprintf(temporary, sizeof temporary, ".%s.%d", name, (int)getpid());
    int fd = openat(dir_fd, temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    FILE *file = fdopen(fd, "w");
    if (!file) {
        close(fd);
        unlinkat(dir_fd, temporary, 0);
        return;
    }
    fprintf(file, "hangdoc-ledger %d %s %d %llu\n", LEDGER_VERSION, snapshot->boot_id[0] ? snapshot->boot_id : "-",
            (int)process->pid, start_ticks_of(process));
    size_t lines = 0;
    unsigned budget_ms = BACK_ASLEEP_WAIT_MS;
    for (size_t t = 0; t < process->nthreads && lines < LEDGER_LINES_MAX; t++) {
        const struct hd_thread *thread = &process->threads[t];
        struct probe_sched sched;
        if (!worth_a_line(thread) || !read_back_asleep(process->pid, thread, &sched, &budget_ms))
            continue;
        /* how long it had waited when stopped: from the start of its wait (its last run before, less what an
         * earlier stop's line added) to its run through this stop. Both ends are task-clock readings, which leave
         * out what a hypervisor stole: on a loaded VM that read 0.53 s for a 1.43 s wait. The last sample's
         * blocked-for, which hangdoc extrapolates from CLOCK_MONOTONIC (schedclock.h), does not: the longer. */
        double since_its_run_s = (sched.exec_start_ms - thread->last_ran_ms) / 1000.0 + thread->waited_before_s;
        double waited_s = since_its_run_s > thread->blocked_for_s ? since_its_run_s : thread->blocked_for_s;
        /* Nor more than it can be: the stop came after the last sample read the blocked-for, within the sampling.
         * Each CPU's task clock leaves out that CPU's own stolen time, so two readings taken on two CPUs of a
         * loaded VM stand apart by seconds (seen: a 5.3 s wait read as 7.3 s, after a diagnosis of 1.6 s). */
        if (waited_s > thread->blocked_for_s + snapshot->sampling_s)
            waited_s = thread->blocked_for_s + snapshot->sampling_s;
        if (waited_s < LEDGER_MIN_WAIT_S || sched.exec_start_ms < thread->last_ran_ms - 1.0)
            continue; /* not stopped after all (in D), or two CPUs' clocks disagree beyond reason */
        fprintf(file, "%d %ld", (int)thread->tid, thread->syscall.nr);
        for (int a = 0; a < 6; a++)
            fprintf(file, " %" PRIx64, thread->syscall.args[a]);
        fprintf(file, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %.6f %.3f %.3f\n",
                (uint64_t)(sched.sum_exec_runtime_ms * 1e6), sched.voluntary_switches, sched.involuntary_switches,
                sched.exec_start_ms, waited_s, snapshot->taken_at);
        lines++;
    }
    bool written = fclose(file) == 0;
    if (written && lines > 0)
        written = renameat(dir_fd, temporary, dir_fd, name) == 0;
    else
        unlinkat(dir_fd, name, 0);
    if (!written || lines == 0)
        unlinkat(dir_fd, temporary, 0);
}

/* A file is stale when its process is gone, or its pid now names another process. */
static bool process_gone(const char *name)
{
    int pid;
    unsigned long long ticks;
    char rest;
    if (sscanf(name, "%d-%llu%c", &pid, &ticks, &rest) != 2 || pid <= 0)
        return false; /* not a ledger file: not ours to remove */
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    struct probe_stat stat;
    if (length < 0)
        return length == -ENOENT || length == -ESRCH;
    return probe_parse_stat(text, (size_t)length, &stat) && stat.has_start && stat.start_ticks != ticks;
}

/* A temporary file (".<name>.<writer>") left by a diagnosis that was killed while it wrote: no writer takes longer
 * than this. */
#define TEMPORARY_STALE_S 60

static bool temporary_left_behind(int dir_fd, const char *name)
{
    int pid, writer;
    unsigned long long ticks;
    struct stat status;
    return sscanf(name, ".%d-%llu.%d", &pid, &ticks, &writer) == 3 &&
           fstatat(dir_fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 &&
           time(NULL) - status.st_mtime > TEMPORARY_STALE_S;
}

static void remove_stale_files(int dir_fd)
{
    int scan_fd = dup(dir_fd);
    DIR *dir = scan_fd >= 0 ? fdopendir(scan_fd) : NULL;
    if (!dir) {
        if (scan_fd >= 0)
            close(scan_fd);
        return;
    }
    struct dirent *entry;
    for (size_t n = 0; n < LEDGER_SCAN_MAX && (entry = readdir(dir)); n++)
        if (entry->d_name[0] == '.' ? temporary_left_behind(dir_fd, entry->d_name) : process_gone(entry->d_name))
            unlinkat(dir_fd, entry->d_name, 0);
    closedir(dir);
}

void probe_ledger_record(struct hd_snapshot *snapshot, const char *dir)
{
    if (!dir)
        return;
    bool any_stopped = false;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        any_stopped |= snapshot->processes[p].stopped_for_s > 0;
    if (!any_stopped)
        return;
    const char *why;
    int dir_fd = open_dir(dir, true, &why);
    if (dir_fd < 0) {
        if (why)
            hd_snapshot_note(snapshot, HD_NOTE_STACKS, 0, 0,
                             "the wait ledger is not kept: %s is refused, %s; a second diagnosis will see waits "
                             "begin at this one's stop",
                             dir, why);
        return;
    }
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        if (snapshot->processes[p].stopped_for_s > 0)
            record_process(dir_fd, snapshot, &snapshot->processes[p]);
    remove_stale_files(dir_fd);
    close(dir_fd);
}
