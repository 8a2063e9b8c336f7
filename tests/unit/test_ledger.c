/* The wait ledger (probe/ledger.h): its lines parsed as hostile input, a wait carried only to a thread that has not
 * run since, the directory refused when it is not hangdoc's user's alone, and gone processes' files removed. The
 * waits are real: a thread of this test blocked in read(2), whose scheduler state the kernel reports. */
#include "ledger.h"
#include "procfs.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *const good_line = "1234 202 55d0 80 0 0 0 ffffffff 11632656 9 0 36581338.257349 4.231 1796431074.5\n";

Test(ledger, a_line_as_hangdoc_writes_it_parses)
{
    struct probe_ledger_entry entry;
    cr_assert(probe_ledger_parse_line(good_line, &entry));
    cr_assert_eq(entry.tid, 1234);
    cr_assert_eq(entry.nr, 202);
    cr_assert_eq(entry.args[0], 0x55d0);
    cr_assert_eq(entry.args[1], 0x80);
    cr_assert_eq(entry.args[5], 0xffffffff);
    cr_assert_eq(entry.cpu_time_ns, 11632656);
    cr_assert_eq(entry.voluntary_switches, 9);
    cr_assert_eq(entry.involuntary_switches, 0);
    cr_assert_float_eq(entry.last_ran_ms, 36581338.257349, 1e-6);
    cr_assert_float_eq(entry.waited_s, 4.231, 1e-9);
}

Test(ledger, hostile_lines_are_refused)
{
    static const char *const lines[] = {
        "",
        "\n",
        "1234\n",
        "0 202 55d0 80 0 0 0 ffffffff 1 9 0 1.0 4.2 1.5\n",              /* tid 0 */
        "-5 202 55d0 80 0 0 0 ffffffff 1 9 0 1.0 4.2 1.5\n",             /* negative tid */
        "99999999999 202 55d0 80 0 0 0 ffffffff 1 9 0 1.0 4.2 1.5\n",    /* past any pid */
        "1234 99999 55d0 80 0 0 0 ffffffff 1 9 0 1.0 4.2 1.5\n",         /* no such system call */
        "1234 202 55d0 80 0 0 0 1 9 0 1.0 4.2 1.5\n",                    /* five arguments */
        "1234 202 55d0 80 0 0 0 ffffffff 1 9 0 1.0 -4.2 1.5\n",          /* a negative wait */
        "1234 202 55d0 80 0 0 0 ffffffff 1 9 0 1.0 nan 1.5\n",           /* not a number */
        "1234 202 55d0 80 0 0 0 ffffffff 1 9 0 1.0 inf 1.5\n",
        "1234 202 55d0 80 0 0 0 ffffffff 1 9 0 1.0 1e999 1.5\n",         /* out of range */
        "1234 202 55d0 80 0 0 0 ffffffff 1 9 0 1.0 4.2 1.5 extra\n",     /* trailing words */
        "1234 202 55g0 80 0 0 0 ffffffff 1 9 0 1.0 4.2 1.5\n",           /* not hex */
        "1234 202 55d0 80 0 0 0 fffffffffffffffff 1 9 0 1.0 4.2 1.5\n",  /* past 64 bits */
        "1234 202 +5 80 0 0 0 ffffffff 1 9 0 1.0 4.2 1.5\n",             /* a sign */
        "1234\t202 55d0 80 0 0 0 ffffffff 1 9 0 1.0 4.2 1.5\n",          /* another separator */
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        struct probe_ledger_entry entry;
        cr_assert_not(probe_ledger_parse_line(lines[i], &entry), "refused: '%s'", lines[i]);
    }
}

/* A thread of this process, asleep in read(2) on a pipe nobody writes. */
struct sleeper {
    pthread_t thread;
    int pipe[2];
    pid_t tid;
};

static void *sleep_in_read(void *argument)
{
    struct sleeper *sleeper = argument;
    for (int i = 0; i < 5; i++) /* a few voluntary switches of its own, which a test may take back */
        usleep(1000);
    __atomic_store_n(&sleeper->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    char byte;
    (void)!read(sleeper->pipe[0], &byte, 1);
    return NULL;
}

static void start_sleeper(struct sleeper *sleeper)
{
    cr_assert_eq(pipe(sleeper->pipe), 0);
    sleeper->tid = 0;
    cr_assert_eq(pthread_create(&sleeper->thread, NULL, sleep_in_read, sleeper), 0);
    while (!__atomic_load_n(&sleeper->tid, __ATOMIC_ACQUIRE))
        usleep(1000);
    usleep(100000); /* asleep in read() */
}

static void stop_sleeper(struct sleeper *sleeper)
{
    (void)!write(sleeper->pipe[1], "x", 1);
    pthread_join(sleeper->thread, NULL);
    close(sleeper->pipe[0]);
    close(sleeper->pipe[1]);
}

static struct probe_sched sched_of(pid_t tid)
{
    char path[96], text[8192];
    snprintf(path, sizeof path, "/proc/self/task/%d/sched", (int)tid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    struct probe_sched sched;
    cr_assert(length > 0 && probe_parse_sched(text, (size_t)length, &sched));
    cr_assert(sched.has_exec_start && sched.has_runtime && sched.has_switches, "the kernel has schedstats fields");
    return sched;
}

static double own_start_time_s(void)
{
    char text[1024];
    ssize_t length = probe_read_file("/proc/self/stat", text, sizeof text);
    struct probe_stat stat;
    cr_assert(length > 0 && probe_parse_stat(text, (size_t)length, &stat) && stat.has_start);
    return (double)stat.start_ticks / (double)sysconf(_SC_CLK_TCK);
}

/* A one-process, one-thread snapshot of this process with the sleeper as it is now: in read(2), `blocked_for_s`. */
static struct hd_snapshot *snapshot_of(const struct sleeper *sleeper, double blocked_for_s)
{
    struct hd_snapshot *snapshot = calloc(1, sizeof *snapshot);
    cr_assert_not_null(snapshot);
    snprintf(snapshot->boot_id, sizeof snapshot->boot_id, "test-boot");
    snapshot->taken_at = 1800000000.0;
    snapshot->processes = calloc(1, sizeof *snapshot->processes);
    snapshot->nprocesses = 1;
    struct hd_process *process = &snapshot->processes[0];
    process->pid = getpid();
    process->start_time_s = own_start_time_s();
    process->threads = calloc(1, sizeof *process->threads);
    process->nthreads = 1;
    struct hd_thread *thread = &process->threads[0];
    struct probe_sched sched = sched_of(sleeper->tid);
    *thread = (struct hd_thread){
        .tid = sleeper->tid,
        .state = 'S',
        .syscall = { .state = HD_SYSCALL_IN, .nr = 0, .args = { (uint64_t)sleeper->pipe[0], 0x1000, 1 } },
        .cpu_time_ns = (uint64_t)(sched.sum_exec_runtime_ms * 1e6),
        .voluntary_switches = sched.voluntary_switches,
        .involuntary_switches = sched.involuntary_switches,
        .switches_known = true,
        .blocked_for_known = true,
        .blocked_for_s = blocked_for_s,
        .last_ran_ms = sched.exec_start_ms,
    };
    return snapshot;
}

/* The sleeper as a diagnosis that stopped its process saw it: its wait began 2 s before the stop (its last run
 * then, 2 s before its run through the stop, which is the one the kernel shows now), and it has switched twice
 * since, as a stop makes it. */
static struct hd_snapshot *stopped_two_seconds_into_its_wait(const struct sleeper *sleeper)
{
    struct hd_snapshot *snapshot = snapshot_of(sleeper, 2.0);
    snapshot->processes[0].threads[0].last_ran_ms -= 2000.0;
    snapshot->processes[0].threads[0].voluntary_switches -= 2; /* the stop's own: into it, and back to sleep */
    snapshot->processes[0].stopped_for_s = 0.01;
    return snapshot;
}

static char *make_dir(mode_t mode)
{
    char *dir = strdup("/tmp/hangdoc-ledger-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, mode), 0);
    return dir;
}

static void remove_dir(char *dir)
{
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    cr_assert_eq(system(command), 0);
    free(dir);
}

static char *ledger_file(const char *dir, const struct hd_snapshot *snapshot)
{
    char *path;
    cr_assert(asprintf(&path, "%s/%d-%llu", dir, (int)getpid(),
                       (unsigned long long)(snapshot->processes[0].start_time_s * (double)sysconf(_SC_CLK_TCK) +
                                            0.5)) > 0);
    return path;
}

/* Recorded as stopped 2 s into its wait (its last run 2 s before the kernel's clock now): a later snapshot that
 * finds it unchanged carries those 2 s; one whose CPU time differs by a nanosecond, or whose wait has other
 * arguments, carries nothing. */
Test(ledger, a_wait_is_carried_to_a_thread_that_has_not_run_since_and_to_no_other)
{
    struct sleeper sleeper;
    start_sleeper(&sleeper);
    char *dir = make_dir(0700);
    struct hd_snapshot *first = stopped_two_seconds_into_its_wait(&sleeper);
    probe_ledger_record(first, dir);
    char *path = ledger_file(dir, first);
    char *text = NULL;
    FILE *file = fopen(path, "r");
    cr_assert_not_null(file, "%s written", path);
    size_t size = 0;
    cr_assert(getdelim(&text, &size, '\0', file) > 0);
    fclose(file);
    cr_assert(strncmp(text, "hangdoc-ledger 1 test-boot ", 27) == 0, "%s", text);
    cr_assert_eq(first->nnotes, 0);

    struct hd_snapshot *same = snapshot_of(&sleeper, 0.3);
    probe_ledger_apply(same, dir);
    const struct hd_thread *thread = &same->processes[0].threads[0];
    cr_assert_float_eq(thread->waited_before_s, 2.0, 0.01, "carried %.3f s", thread->waited_before_s);
    cr_assert_float_eq(thread->blocked_for_s, 2.3, 0.01);
    cr_assert_float_eq(thread->earlier_stop_at, 1800000000.0, 0.01);

    struct hd_snapshot *ran = snapshot_of(&sleeper, 0.3);
    ran->processes[0].threads[0].cpu_time_ns += 1;
    probe_ledger_apply(ran, dir);
    cr_assert_eq(ran->processes[0].threads[0].waited_before_s, 0);
    cr_assert_float_eq(ran->processes[0].threads[0].blocked_for_s, 0.3, 1e-9);

    struct hd_snapshot *other_wait = snapshot_of(&sleeper, 0.3);
    other_wait->processes[0].threads[0].syscall.args[2] = 2;
    probe_ledger_apply(other_wait, dir);
    cr_assert_eq(other_wait->processes[0].threads[0].waited_before_s, 0);

    struct hd_snapshot *younger = snapshot_of(&sleeper, 0.3);
    younger->processes[0].age_s = 0.5; /* a wait of 2 s in a process of half a second: forged */
    probe_ledger_apply(younger, dir);
    cr_assert_eq(younger->processes[0].threads[0].waited_before_s, 0);
    hd_snapshot_free(younger);

    struct hd_snapshot *other_boot = snapshot_of(&sleeper, 0.3);
    snprintf(other_boot->boot_id, sizeof other_boot->boot_id, "another-boot");
    probe_ledger_apply(other_boot, dir);
    cr_assert_eq(other_boot->processes[0].threads[0].waited_before_s, 0);

    hd_snapshot_free(first);
    hd_snapshot_free(same);
    hd_snapshot_free(ran);
    hd_snapshot_free(other_wait);
    hd_snapshot_free(other_boot);
    free(text);
    free(path);
    remove_dir(dir);
    stop_sleeper(&sleeper);
}

/* A thread that switched more since the sample than a stop makes it (into the stop and back into its wait) was woken
 * by something else meanwhile: its wait may have begun again, so no line is written for it. */
/* Its last run read on one CPU's task clock and its run through the stop on another's, which left out more stolen
 * time: the two readings put 5 s between them where the blocked-for says 2 s, and the sampling took 0.5 s. The
 * line carries no more than the wait can have lasted by the stop: 2.5 s. */
Test(ledger, a_wait_read_across_two_cpus_clocks_is_carried_no_longer_than_it_can_be)
{
    struct sleeper sleeper;
    start_sleeper(&sleeper);
    char *dir = make_dir(0700);
    struct hd_snapshot *first = stopped_two_seconds_into_its_wait(&sleeper);
    first->processes[0].threads[0].last_ran_ms -= 3000.0;
    first->sampling_s = 0.5;
    probe_ledger_record(first, dir);
    struct hd_snapshot *same = snapshot_of(&sleeper, 0.3);
    probe_ledger_apply(same, dir);
    const struct hd_thread *thread = &same->processes[0].threads[0];
    cr_assert_float_eq(thread->waited_before_s, 2.5, 0.01, "carried %.3f s", thread->waited_before_s);
    hd_snapshot_free(first);
    hd_snapshot_free(same);
    stop_sleeper(&sleeper);
    remove_dir(dir);
}

Test(ledger, a_thread_woken_since_the_sample_gets_no_line)
{
    struct sleeper sleeper;
    start_sleeper(&sleeper);
    char *dir = make_dir(0700);
    struct hd_snapshot *snapshot = stopped_two_seconds_into_its_wait(&sleeper);
    snapshot->processes[0].threads[0].voluntary_switches -= 1; /* 3 since */
    probe_ledger_record(snapshot, dir);
    char *path = ledger_file(dir, snapshot);
    cr_assert_neq(access(path, F_OK), 0, "no line, so no file");
    snapshot->processes[0].threads[0].voluntary_switches += 2; /* 1 since: still on its way back, for good */
    probe_ledger_record(snapshot, dir);
    cr_assert_neq(access(path, F_OK), 0, "not back asleep: no line");
    snapshot->processes[0].threads[0].voluntary_switches -= 1; /* 2 since: the stop's own */
    probe_ledger_record(snapshot, dir);
    cr_assert_eq(access(path, F_OK), 0, "the stop's own switches are allowed");
    free(path);
    hd_snapshot_free(snapshot);
    remove_dir(dir);
    stop_sleeper(&sleeper);
}

/* A directory others may write to is refused, with a note, and nothing is written or read there. */
Test(ledger, a_directory_others_may_write_is_refused_with_a_note)
{
    struct sleeper sleeper;
    start_sleeper(&sleeper);
    char *dir = make_dir(0777);
    struct hd_snapshot *snapshot = stopped_two_seconds_into_its_wait(&sleeper);
    probe_ledger_record(snapshot, dir);
    char *path = ledger_file(dir, snapshot);
    cr_assert_neq(access(path, F_OK), 0, "nothing written in a directory others may write");
    cr_assert_eq(snapshot->nnotes, 1);
    cr_assert(strstr(snapshot->notes[0].text, "the wait ledger is not kept"), "%s", snapshot->notes[0].text);
    free(path);
    hd_snapshot_free(snapshot);
    remove_dir(dir);
    stop_sleeper(&sleeper);
}

/* A link in place of the directory, or of the file, is not followed. */
Test(ledger, links_are_not_followed)
{
    struct sleeper sleeper;
    start_sleeper(&sleeper);
    char *dir = make_dir(0700), *elsewhere = make_dir(0700);
    char *link_path;
    cr_assert(asprintf(&link_path, "%s/ledger", dir) > 0);
    cr_assert_eq(symlink(elsewhere, link_path), 0);
    struct hd_snapshot *snapshot = stopped_two_seconds_into_its_wait(&sleeper);
    probe_ledger_record(snapshot, link_path);
    char *in_elsewhere = ledger_file(elsewhere, snapshot);
    cr_assert_neq(access(in_elsewhere, F_OK), 0, "not written through the link");
    cr_assert_eq(snapshot->nnotes, 1);

    /* a ledger file that is a link to a forged one is not read */
    probe_ledger_record(snapshot, elsewhere);
    cr_assert_eq(access(in_elsewhere, F_OK), 0);
    char *forged;
    cr_assert(asprintf(&forged, "%s/forged", elsewhere) > 0);
    cr_assert_eq(rename(in_elsewhere, forged), 0);
    cr_assert_eq(symlink(forged, in_elsewhere), 0);
    struct hd_snapshot *later = snapshot_of(&sleeper, 0.3);
    probe_ledger_apply(later, elsewhere);
    cr_assert_eq(later->processes[0].threads[0].waited_before_s, 0);

    hd_snapshot_free(snapshot);
    hd_snapshot_free(later);
    free(link_path);
    free(in_elsewhere);
    free(forged);
    remove_dir(dir);
    remove_dir(elsewhere);
    stop_sleeper(&sleeper);
}

/* A FIFO where the ledger file should be is not opened for reading in a way that could block: nothing is carried,
 * and the diagnosis goes on (the suite's timeout would catch a hang here). */
Test(ledger, a_fifo_in_place_of_the_file_does_not_block, .timeout = 10)
{
    struct sleeper sleeper;
    start_sleeper(&sleeper);
    char *dir = make_dir(0700);
    struct hd_snapshot *snapshot = snapshot_of(&sleeper, 0.3);
    char *path = ledger_file(dir, snapshot);
    cr_assert_eq(mkfifo(path, 0600), 0);
    probe_ledger_apply(snapshot, dir);
    cr_assert_eq(snapshot->processes[0].threads[0].waited_before_s, 0);
    free(path);
    hd_snapshot_free(snapshot);
    remove_dir(dir);
    stop_sleeper(&sleeper);
}

/* Files of processes that are gone, or whose pid now names another process, go, and so do temporary files that a
 * killed writer left; other names are left alone. */
Test(ledger, files_of_gone_processes_are_removed)
{
    struct sleeper sleeper;
    start_sleeper(&sleeper);
    char *dir = make_dir(0700);
    /* no such pid; init, started earlier; a temporary file of a writer killed two minutes ago */
    static const char *const stale[] = { "999999999-1", "1-999999999999", ".5-6.7" };
    /* not a ledger's; a temporary file being written now */
    static const char *const kept[] = { "notes.txt", "1x-2", ".5-6.8" };
    const char *const *lists[] = { stale, kept };
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < 3; i++) {
            char path[256];
            snprintf(path, sizeof path, "%s/%s", dir, lists[l][i]);
            FILE *file = fopen(path, "w");
            cr_assert_not_null(file);
            fclose(file);
        }
    char old_temporary[256];
    snprintf(old_temporary, sizeof old_temporary, "%s/.5-6.7", dir);
    struct timespec two_minutes_ago[2] = { { .tv_sec = time(NULL) - 120 }, { .tv_sec = time(NULL) - 120 } };
    cr_assert_eq(utimensat(AT_FDCWD, old_temporary, two_minutes_ago, 0), 0);
    struct hd_snapshot *snapshot = stopped_two_seconds_into_its_wait(&sleeper);
    probe_ledger_record(snapshot, dir);
    for (size_t i = 0; i < 3; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, stale[i]);
        cr_assert_neq(access(path, F_OK), 0, "%s removed", stale[i]);
        snprintf(path, sizeof path, "%s/%s", dir, kept[i]);
        cr_assert_eq(access(path, F_OK), 0, "%s kept", kept[i]);
    }
    char *own = ledger_file(dir, snapshot);
    cr_assert_eq(access(own, F_OK), 0, "this process's own file stays");
    free(own);
    hd_snapshot_free(snapshot);
    remove_dir(dir);
    stop_sleeper(&sleeper);
}
