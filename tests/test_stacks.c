/* Native stacks: the names in order for a target whose stacks are known (built -O2, and stripped), and the safety
 * of stopping: hangdoc killed or interrupted at random moments never leaves a target stopped or traced. */
#include "harness.h"
#include "target_health.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

TestSuite(stacks, .fini = fixture_stop_all, .timeout = 180);

#define SAFETY_RUNS 30

/* ---- known stacks ---------------------------------------------------------------------------------------------- */

/* The frames' symbols (NULL where none) of thread `tid`; the test fails when the stack was not taken. */
static json_object *frames_of(json_object *document, pid_t pid, pid_t tid)
{
    json_object *thread = json_thread(json_process(document, pid), tid);
    cr_assert(thread, "thread %d is in the report", (int)tid);
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "taken", "thread %d's stack: %s", (int)tid,
                     json_object_to_json_string(json_at(thread, "stack")));
    return json_at(thread, "frames");
}

/* `names` appear in this order, one frame after the other, and the innermost frame lies in libc. */
static void expect_chain(json_object *frames, const char *const *names)
{
    size_t count = json_object_array_length(frames), first = count;
    for (size_t f = 0; f < count && first == count; f++) {
        const char *symbol = json_string_at(json_object_array_get_idx(frames, f), "symbol");
        if (symbol && strcmp(symbol, names[0]) == 0)
            first = f;
    }
    cr_assert_lt(first, count, "%s is a frame: %s", names[0], json_object_to_json_string(frames));
    for (size_t n = 0; names[n]; n++) {
        const char *symbol = json_string_at(json_object_array_get_idx(frames, first + n), "symbol");
        cr_assert(symbol && strcmp(symbol, names[n]) == 0, "frame %zu is %s: %s", first + n, names[n],
                  json_object_to_json_string(frames));
    }
    const char *innermost_module = json_string_at(json_object_array_get_idx(frames, 0), "module");
    cr_assert(innermost_module && strstr(innermost_module, "libc.so"), "innermost frame in libc: %s",
              json_object_to_json_string(frames));
}

static const char *const pause_chain[] = { "bt_pause_inner", "bt_pause_middle", "bt_pause_outer", "bt_pause_start",
                                           NULL };
static const char *const read_chain[] = { "bt_read_inner", "bt_read_outer", "bt_read_start", NULL };
static const char *const lock_chain[] = { "bt_lock_inner", "bt_lock_outer", "bt_lock_start", NULL };
static const char *const main_chain[] = { "bt_main_wait", "main", NULL };

/* In the text, each chain's frames follow one another as "name+0x" lines. */
static void expect_chain_in_text(const char *text, const char *const *names)
{
    const char *cursor = text;
    for (size_t n = 0; names[n]; n++) {
        char line[96];
        snprintf(line, sizeof line, "  %s+0x", names[n]);
        const char *found = strstr(cursor, line);
        cr_assert(found, "the text has '%s' after the previous frame: %s", line, text);
        cursor = found + 1;
    }
}

Test(stacks, known_stacks_of_an_optimised_build_in_json_and_text)
{
    struct fixture fixture;
    fixture_start(&fixture, "backtrace_child");
    pid_t pid = fixture.pids[0];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    cr_assert(json_bool_at(document, "snapshot.ptrace.used"), "ptrace was used");
    expect_chain(frames_of(document, pid, fixture.pids[1]), pause_chain);
    expect_chain(frames_of(document, pid, fixture.pids[2]), read_chain);
    expect_chain(frames_of(document, pid, fixture.pids[3]), lock_chain);
    expect_chain(frames_of(document, pid, pid), main_chain);
    json_object *process = json_process(document, pid);
    double stopped_for = json_object_get_double(json_at(process, "stopped_for_s"));
    cr_assert(stopped_for > 0 && stopped_for < 1, "stopped for %f s", stopped_for);
    json_object_put(document);

    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--samples", "1", pid_text, NULL });
    cr_assert(strstr(result.out, "\nnative stacks ("), "a stacks section: %s", result.out);
    /* the pause thread's line names its stack, and that stack is the pause chain */
    char line_start[64];
    snprintf(line_start, sizeof line_start, "thread %d '", (int)fixture.pids[1]);
    const char *line = strstr(result.out, line_start);
    cr_assert(line, "%s", result.out);
    const char *reference = strstr(line, " · stack ");
    cr_assert(reference && reference < strchr(line, '\n'), "the thread line refers to its stack: %s", result.out);
    char heading[32];
    snprintf(heading, sizeof heading, "\nstack %d · ", atoi(reference + strlen(" · stack ")));
    const char *group = strstr(result.out, heading);
    cr_assert(group && strstr(group, "  bt_pause_inner+0x") &&
              (!strstr(group + 1, "\nstack ") || strstr(group, "  bt_pause_inner+0x") < strstr(group + 1, "\nstack ")),
              "%s names the pause chain: %s", heading + 1, result.out);
    expect_chain_in_text(result.out, pause_chain);
    expect_chain_in_text(result.out, read_chain);
    expect_chain_in_text(result.out, lock_chain);
    expect_chain_in_text(result.out, main_chain);
    run_result_free(&result);
    fixture_stop(&fixture);
}

/* The same stacks from a build linked by LLD (as rustc links): its code segment's file offset is not page-aligned,
 * so the unwind table's load bias must come from the mapping that holds the pc, not from the module's first
 * mapping. Read from the wrong one, the table was not found and the stacks ended at the first frame of the
 * executable (libunwind's frame-pointer guess). */
Test(stacks, known_stacks_of_a_build_linked_by_lld)
{
    char path[512];
    snprintf(path, sizeof path, "%s/backtrace_child_lld", getenv("HANGDOC_FIXTURES"));
    if (access(path, X_OK) != 0)
        cr_skip_test("no fixture linked by LLD (lld is not installed): run bash setup.sh test");
    struct fixture fixture;
    fixture_start(&fixture, "backtrace_child_lld");
    pid_t pid = fixture.pids[0];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    expect_chain(frames_of(document, pid, fixture.pids[1]), pause_chain);
    expect_chain(frames_of(document, pid, fixture.pids[2]), read_chain);
    expect_chain(frames_of(document, pid, fixture.pids[3]), lock_chain);
    expect_chain(frames_of(document, pid, pid), main_chain);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* Without .symtab the executable's frames are module+offset: never the nearest other symbol of .dynsym. */
Test(stacks, stripped_build_gives_module_and_offset)
{
    struct fixture fixture;
    fixture_start(&fixture, "backtrace_child_stripped");
    pid_t pid = fixture.pids[0];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    for (size_t i = 1; i <= 3; i++) {
        json_object *frames = frames_of(document, pid, fixture.pids[i]);
        size_t in_executable = 0;
        for (size_t f = 0; f < json_object_array_length(frames); f++) {
            json_object *frame = json_object_array_get_idx(frames, f);
            const char *module = json_string_at(frame, "module");
            if (!module || !strstr(module, "backtrace_child_stripped"))
                continue;
            in_executable++;
            cr_assert_null(json_at(frame, "symbol"), "no name in a stripped executable: %s",
                           json_object_to_json_string(frame));
            cr_assert_not_null(json_string_at(frame, "offset"), "an offset instead");
        }
        /* the chain and the thread's start function */
        cr_assert_geq(in_executable, 3, "frames in the executable: %s", json_object_to_json_string(frames));
    }
    json_object_put(document);

    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--samples", "1", pid_text, NULL });
    cr_assert(strstr(result.out, "  backtrace_child_stripped+0x"), "module+0xoffset frames: %s", result.out);
    cr_assert_null(strstr(result.out, "bt_"), "no names from a stripped file: %s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}

Test(stacks, no_ptrace_takes_no_stack_and_says_why)
{
    struct fixture fixture;
    fixture_start(&fixture, "backtrace_child");
    pid_t pid = fixture.pids[0];
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "--no-ptrace", "--samples", "1", pid_text, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert(document, "JSON: %s", result.out);
    json_validate(result.out);
    cr_assert_not(json_bool_at(document, "snapshot.ptrace.used"));
    cr_assert(strstr(json_string_at(document, "snapshot.ptrace.why_not"), "--no-ptrace"));
    json_object *thread = json_thread(json_process(document, pid), fixture.pids[1]);
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "not-taken");
    cr_assert_eq(json_object_array_length(json_at(thread, "frames")), 0);
    cr_assert_eq(json_object_get_double(json_at(json_process(document, pid), "stopped_for_s")), 0);
    json_object_put(document);
    run_result_free(&result);
    fixture_stop(&fixture);
}

static void expect_free(pid_t pid, const char *context);

/* The test becomes the tracer of every thread of `pid` (PTRACE_SEIZE: they keep running), then lets them go.
 * A thread may exit meanwhile (the fixture's announcer does, right after the ready line). */
static void seize_every_thread(pid_t pid, bool seize)
{
    char path[64];
    pid_t tids[64];
    size_t count = 0;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    cr_assert(tasks);
    struct dirent *entry;
    while ((entry = readdir(tasks)) && count < sizeof tids / sizeof tids[0])
        if (atoi(entry->d_name) > 0)
            tids[count++] = (pid_t)atoi(entry->d_name);
    closedir(tasks);
    for (size_t i = 0; i < count; i++) {
        if (seize) {
            cr_assert(ptrace(PTRACE_SEIZE, tids[i], NULL, NULL) == 0 || errno == ESRCH, "the test seizes thread %d",
                      (int)tids[i]);
            continue;
        }
        /* PTRACE_DETACH needs a stopped tracee */
        int status;
        if (ptrace(PTRACE_INTERRUPT, tids[i], NULL, NULL) != 0)
            continue; /* never seized, or gone */
        cr_assert_eq(waitpid(tids[i], &status, __WALL), tids[i]);
        if (WIFSTOPPED(status))
            cr_assert_eq(ptrace(PTRACE_DETACH, tids[i], NULL, NULL), 0);
    }
}

/* A process that already has a tracer cannot be seized: the report names the tracer and goes on with /proc. */
Test(stacks, an_already_traced_process_is_explained)
{
    struct fixture fixture;
    fixture_start(&fixture, "backtrace_child");
    pid_t pid = fixture.pids[0];
    seize_every_thread(pid, true);
    int status;
    json_object *document = hangdoc_json(pid, &status);
    json_object *thread = json_thread(json_process(document, pid), pid);
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "failed");
    char expected[64];
    snprintf(expected, sizeof expected, "already traced by pid %d", (int)getpid());
    cr_assert(strstr(json_string_at(thread, "stack.why_not"), expected), "why_not: %s",
              json_string_at(thread, "stack.why_not"));
    cr_assert(json_has_note(document, expected));
    json_object_put(document);
    seize_every_thread(pid, false);
    expect_free(pid, "after the test let it go");
    fixture_stop(&fixture);
}

/* ---- never harm the target ------------------------------------------------------------------------------------- */

static const char *hangdoc_path(void)
{
    const char *path = getenv("HANGDOC_BIN");
    cr_assert(path, "HANGDOC_BIN is set");
    return path;
}

static pid_t start_hangdoc(pid_t target, const char *samples)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)target);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execl(hangdoc_path(), "hangdoc", "--json", "--samples", samples, "--interval", "10ms", pid_text, NULL);
        _exit(127);
    }
    return child;
}

/* Every thread of `pid`: not stopped (t/T), no tracer. */
static void expect_free(pid_t pid, const char *context)
{
    struct target_health health;
    cr_assert(target_health_look(pid, &health), "%s: the target is alive", context);
    cr_assert_eq(health.unparsed, 0, "%s: the status of every thread is readable", context);
    cr_assert_eq(health.stopped, 0, "%s: thread %d is stopped (%c)", context, (int)health.first_stopped.tid,
                 health.first_stopped.state);
    cr_assert_eq(health.traced, 0, "%s: thread %d still has tracer %d", context, (int)health.first_traced.tid,
                 (int)health.first_traced.tracer);
}

/* Process CPU time and the main thread's voluntary context switches both grow within 2 s. */
static void expect_progress(pid_t pid, const char *context)
{
    struct target_activity before, after;
    cr_assert(target_health_activity(pid, &before), "%s: the target is alive", context);
    for (int waited = 0; waited < 2000; waited += 20) {
        usleep(20000);
        cr_assert(target_health_activity(pid, &after), "%s: the target is alive", context);
        if (after.cpu_ticks > before.cpu_ticks && after.voluntary_switches > before.voluntary_switches)
            return;
    }
    cr_assert_fail("%s: the target made no progress (cpu %llu -> %llu ticks, switches %llu -> %llu)", context,
                   before.cpu_ticks, after.cpu_ticks, before.voluntary_switches, after.voluntary_switches);
}

/* Starts hangdoc `runs` times against the busy target and sends `signal_number` at a random moment of each run;
 * afterwards the target is free and running. */
static void interrupt_at_random_moments(int signal_number, int runs)
{
    struct fixture fixture;
    fixture_start(&fixture, "busy_threads");
    pid_t target = fixture.pids[0];
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    fprintf(stderr, "stacks safety: signal %d, seed %u\n", signal_number, seed);
    /* how long one run takes here, to spread the signals over all of it */
    struct timespec started, ended;
    clock_gettime(CLOCK_MONOTONIC, &started);
    int status;
    waitpid(start_hangdoc(target, "3"), &status, 0);
    clock_gettime(CLOCK_MONOTONIC, &ended);
    long run_us = (ended.tv_sec - started.tv_sec) * 1000000 + (ended.tv_nsec - started.tv_nsec) / 1000;
    cr_assert(WIFEXITED(status), "a whole run ends normally");
    expect_free(target, "after a whole run");
    size_t signalled = 0;
    for (int run = 0; run < runs; run++) {
        char context[96];
        pid_t hangdoc = start_hangdoc(target, "3");
        useconds_t delay = (useconds_t)(rand_r(&seed) % (run_us + 1));
        snprintf(context, sizeof context, "run %d, signal %d after %u us (seed %u)", run, signal_number,
                 (unsigned)delay, seed);
        usleep(delay);
        kill(hangdoc, signal_number);
        cr_assert_eq(waitpid(hangdoc, &status, 0), hangdoc);
        signalled += WIFSIGNALED(status);
        if (WIFSIGNALED(status))
            cr_assert_eq(WTERMSIG(status), signal_number, "%s: hangdoc died of %d", context, WTERMSIG(status));
        else
            cr_assert(WIFEXITED(status) && WEXITSTATUS(status) <= 2, "%s: exit %d", context, WEXITSTATUS(status));
        expect_free(target, context);
        expect_progress(target, context);
    }
    cr_assert_gt(signalled, 0, "some runs were cut short by the signal");
    fixture_stop(&fixture);
}

Test(stacks, sigkill_at_random_moments_leaves_the_target_running)
{
    interrupt_at_random_moments(SIGKILL, SAFETY_RUNS);
}

Test(stacks, sigint_at_random_moments_detaches_and_exits)
{
    interrupt_at_random_moments(SIGINT, SAFETY_RUNS);
}

Test(stacks, sigterm_at_random_moments_detaches_and_exits)
{
    interrupt_at_random_moments(SIGTERM, SAFETY_RUNS / 3);
}

/* --timeout comes while hangdoc is still sampling (1,000 samples asked for): it stops taking samples before the
 * deadline, lets every stopped thread go, and reports on what it read, saying in a note how many samples it
 * took: a report, not "gave up" (issue 14). Sampling a busy target every few milliseconds keeps threads stopped
 * much of the time, and each run's interval puts the deadline at another moment of the cycle. */
Test(stacks, timeout_during_sampling_detaches_and_reports)
{
    struct fixture fixture;
    fixture_start(&fixture, "busy_threads");
    pid_t target = fixture.pids[0];
    static const char *const intervals[] = { "2ms", "3ms", "5ms", "7ms" };
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)target);
    for (size_t run = 0; run < sizeof intervals / sizeof intervals[0]; run++) {
        char context[64];
        snprintf(context, sizeof context, "--timeout 1s, --interval %s", intervals[run]);
        struct run_result result;
        hangdoc_run(&result, (const char *[]){ "--json", "--samples", "1000", "--interval", intervals[run],
                                               "--timeout", "1s", pid_text, NULL });
        cr_assert(result.exit_status == 0 || result.exit_status == 1, "%s: a verdict's exit status, not %d: %s",
                  context, result.exit_status, result.err);
        json_object *document = json_tokener_parse(result.out);
        cr_assert_not_null(document, "%s: a JSON report: %.500s", context, result.out);
        cr_assert(json_has_note(document, "--timeout near: took"), "%s: a note says how many samples: %s", context,
                  json_object_to_json_string(json_at(document, "notes")));
        long long samples = json_int_at(document, "snapshot.samples", -1);
        cr_assert(samples >= 1 && samples < 1000, "%s: %lld samples", context, samples);
        json_object_put(document);
        run_result_free(&result);
        expect_free(target, context);
        expect_progress(target, context);
    }
    fixture_stop(&fixture);
}

/* A target that exits while it is sampled, and one whose threads and children come and go: hangdoc reports
 * what it saw, never crashes, never leaves anything traced. */
Test(stacks, target_exiting_during_sampling)
{
    for (int run = 0; run < 3; run++) {
        struct fixture fixture;
        fixture_start(&fixture, "busy_exiting");
        int status;
        waitpid(start_hangdoc(fixture.pids[0], "20"), &status, 0);
        cr_assert(WIFEXITED(status), "hangdoc ends normally, status 0x%x", status);
        int code = WEXITSTATUS(status);
        cr_assert(code <= 2 || code == 69, "exit %d", code);
        fixture_stop(&fixture);
    }
}

Test(stacks, threads_and_children_churning)
{
    struct fixture fixture;
    fixture_start(&fixture, "churn");
    pid_t target = fixture.pids[0];
    for (int run = 0; run < 5; run++) {
        int status;
        json_object *document = hangdoc_json(target, &status);
        cr_assert(status <= 2, "exit %d", status);
        cr_assert(json_process(document, target), "the churning process is reported");
        json_object_put(document);
        expect_free(target, "churn");
    }
    fixture_stop(&fixture);
}

/* ---- the leaf function of running threads ---------------------------------------------------------------------- */

/* A thread spinning in main: every sample that stopped it found it there (the input of the spinning rule). */
Test(stacks, a_spinning_thread_has_the_same_leaf_in_every_sample)
{
    struct fixture fixture;
    fixture_start(&fixture, "busy_loop");
    pid_t pid = fixture.pids[0];
    int status;
    json_object *document = hangdoc_json(pid, &status);
    json_object *thread = json_thread(json_process(document, pid), pid);
    cr_assert(json_at(thread, "leaf"), "a leaf for a thread in R: %s", json_object_to_json_string(thread));
    long long samples = json_int_at(thread, "leaf.samples", 0);
    long long in_r = json_int_at(thread, "samples.in_state_r", 0);
    /* each sample that saw it in R stopped it (one may miss the 100 ms wait on a very busy machine) */
    cr_assert(samples <= in_r && samples + 1 >= in_r, "%s", json_object_to_json_string(thread));
    cr_assert_geq(samples, 2, "%s", json_object_to_json_string(thread));
    cr_assert(json_bool_at(thread, "leaf.same"));
    cr_assert_str_eq(json_string_at(thread, "leaf.function"), "main");
    json_object_put(document);
    fixture_stop(&fixture);
}

/* As nobody, root's process cannot be stopped: the stack and a note say exactly why, the rest is reported. */
Test(stacks, another_users_process_is_explained)
{
    struct fixture fixture;
    fixture_start(&fixture, "backtrace_child");
    pid_t pid = fixture.pids[0];
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run_as(&result, 65534, (const char *[]){ "--json", "--samples", "1", pid_text, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert(document, "JSON: %s %s", result.out, result.err);
    json_validate(result.out);
    cr_assert_not(json_bool_at(document, "snapshot.ptrace.used"));
    cr_assert(strstr(json_string_at(document, "snapshot.ptrace.why_not"), "refused"), "%s",
              json_string_at(document, "snapshot.ptrace.why_not"));
    json_object *thread = json_thread(json_process(document, pid), fixture.pids[1]);
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "failed");
    const char *expected = "owned by uid 0, and hangdoc runs as uid 65534 without CAP_SYS_PTRACE";
    cr_assert(strstr(json_string_at(thread, "stack.why_not"), expected), "%s", json_string_at(thread, "stack.why_not"));
    cr_assert(json_has_note(document, expected), "%s", result.out);
    cr_assert_eq(json_object_get_double(json_at(json_process(document, pid), "stopped_for_s")), 0);
    json_object_put(document);
    run_result_free(&result);
    expect_free(pid, "after a refused run");
    fixture_stop(&fixture);
}

/* The test process is hangdoc's parent: it is reported, never stopped. */
Test(stacks, hangdoc_never_stops_its_own_ancestor)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)getpid());
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "--samples", "1", pid_text, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert(document, "JSON: %s %s", result.out, result.err);
    json_object *process = json_process(document, getpid());
    cr_assert(process);
    json_object *thread = json_thread(process, getpid());
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "not-taken");
    cr_assert(strstr(json_string_at(thread, "stack.why_not"), "ancestor"), "%s", json_string_at(thread, "stack.why_not"));
    cr_assert_eq(json_object_get_double(json_at(process, "stopped_for_s")), 0);
    json_object_put(document);
    run_result_free(&result);
}

/* ---- a thread that stops late ---------------------------------------------------------------------------------- */

#define LATE_TIDS_MAX 16
/* One capture: the final sample waits 250 ms for every thread, then unwinds; a wide margin for a loaded machine. */
#define LATE_LONGEST_STOP_MS 800
/* Longer than the leaf sample's 100 ms wait: the thread was seized and did not stop in time. */
#define LATE_SEIZED_RUNNING_MS 100

struct watched_thread {
    pid_t tid;
    long stopped_since_ms;  /* -1 when not in t/T at the last look */
    long longest_stop_ms;
    long seized_since_ms;   /* -1 unless traced and not stopped at the last look */
    long longest_seized_ms;
};

static long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static struct watched_thread *watched(struct watched_thread *threads, size_t *count, pid_t tid)
{
    for (size_t i = 0; i < *count; i++)
        if (threads[i].tid == tid)
            return &threads[i];
    cr_assert_lt(*count, LATE_TIDS_MAX);
    threads[*count] = (struct watched_thread){ tid, -1, 0, -1, 0 };
    return &threads[(*count)++];
}

/* What one look at the threads keeps: every thread seen so far. */
struct watch {
    struct watched_thread *threads;
    size_t *count;
};

/* How long the thread has been in a tracing stop, and how long seized while still running. */
static void watch_thread(const struct target_thread *seen, void *context)
{
    struct watch *watch = context;
    bool stopped = target_thread_is_stopped(seen);
    bool seized_running = !stopped && seen->tracer != 0;
    struct watched_thread *thread = watched(watch->threads, watch->count, seen->tid);
    long now = now_ms();
    thread->stopped_since_ms = stopped ? (thread->stopped_since_ms < 0 ? now : thread->stopped_since_ms) : -1;
    thread->seized_since_ms = seized_running ? (thread->seized_since_ms < 0 ? now : thread->seized_since_ms) : -1;
    if (stopped && now - thread->stopped_since_ms > thread->longest_stop_ms)
        thread->longest_stop_ms = now - thread->stopped_since_ms;
    if (seized_running && now - thread->seized_since_ms > thread->longest_seized_ms)
        thread->longest_seized_ms = now - thread->seized_since_ms;
}

/* One look at every thread of `pid` from outside. */
static void look_at_threads(pid_t pid, struct watched_thread *threads, size_t *count)
{
    struct watch watch = { threads, count };
    cr_assert(target_health_each_thread(pid, watch_thread, &watch, NULL), "the target is alive");
}

/* A SCHED_IDLE thread starved by two spinners on its CPU takes a PTRACE_INTERRUPT long after the leaf sample
 * stopped waiting for it. hangdoc must let it go as soon as it stops (never hold it across samples, never report
 * its own stop as the thread's state, never mistake its own seizure for a refusal), and leave nothing stopped or
 * traced after it exits. */
Test(stacks, a_thread_that_stops_late_is_let_go_between_samples)
{
    struct fixture fixture;
    fixture_start(&fixture, "late_stopper");
    pid_t pid = fixture.pids[0], late = fixture.pids[1];
    char pid_text[16], output[] = "/tmp/hangdoc-late-XXXXXX";
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    int out_fd = mkstemp(output);
    cr_assert_geq(out_fd, 0);
    pid_t hangdoc = fork();
    cr_assert_geq(hangdoc, 0);
    if (hangdoc == 0) {
        dup2(out_fd, 1);
        execl(hangdoc_path(), "hangdoc", "--json", "-n", "8", "-i", "300ms", pid_text, NULL);
        _exit(127);
    }
    close(out_fd);
    struct watched_thread threads[LATE_TIDS_MAX];
    size_t count = 0;
    int status;
    long deadline = now_ms() + 30000;
    while (waitpid(hangdoc, &status, WNOHANG) == 0) {
        cr_assert_lt(now_ms(), deadline, "hangdoc ends");
        look_at_threads(pid, threads, &count);
        usleep(2000);
    }
    expect_free(pid, "right after hangdoc exited");
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) <= 2, "hangdoc exits normally, status 0x%x", status);
    struct watched_thread *idle = watched(threads, &count, late);
    for (size_t i = 0; i < count; i++)
        fprintf(stderr, "late stopper: thread %d longest in a tracing stop %ld ms, seized and running %ld ms\n",
                (int)threads[i].tid, threads[i].longest_stop_ms, threads[i].longest_seized_ms);
    /* the premise: the thread really stopped late (else this test proves nothing) */
    cr_assert_geq(idle->longest_seized_ms, LATE_SEIZED_RUNNING_MS,
                  "the SCHED_IDLE thread was seized and still running for %ld ms at most", idle->longest_seized_ms);
    for (size_t i = 0; i < count; i++)
        cr_assert_lt(threads[i].longest_stop_ms, LATE_LONGEST_STOP_MS,
                     "thread %d was held in a tracing stop for %ld ms", (int)threads[i].tid,
                     threads[i].longest_stop_ms);
    json_object *document = json_object_from_file(output);
    unlink(output);
    cr_assert(document, "hangdoc printed JSON");
    json_object *thread = json_thread(json_process(document, pid), late);
    cr_assert(thread, "the late thread is reported");
    const char *state = json_string_at(thread, "state");
    cr_assert(state && strcmp(state, "t") != 0, "hangdoc reported its own stop as the state: %s",
              json_object_to_json_string(thread));
    const char *why_not = json_string_at(thread, "stack.why_not");
    cr_assert(!why_not || !strstr(why_not, "security module"), "why_not: %s", why_not);
    json_object_put(document);
    fixture_stop(&fixture);
}

/* The code a thread runs in is mapped from a file whose name is now a FIFO: opening that name to read unwind
 * tables would block for ever with the target stopped (and, inside libunwind, every signal of hangdoc blocked, so
 * not even --timeout's handler could run). hangdoc opens nothing there, finishes, and lets the target go. */
Test(stacks, a_fifo_in_place_of_a_mapped_file_is_never_opened)
{
    struct fixture fixture;
    fixture_start(&fixture, "fifo_mapping");
    pid_t pid = fixture.pids[0], spinner = fixture.pids[1];
    char pid_text[16], fifo[96];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    snprintf(fifo, sizeof fifo, "/tmp/hangdoc-fifo-%d (deleted)", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "--timeout", "5s", "-n", "2", "-i", "100ms", pid_text, NULL });
    unlink(fifo); /* before any assertion can end the test */
    cr_assert(result.exit_status == 0 || result.exit_status == 1, "hangdoc finished by itself (exit %d): %s",
              result.exit_status, result.err);
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "%s", result.err);
    json_object *thread = json_thread(json_process(document, pid), spinner);
    cr_assert_not_null(thread);
    json_object *frames = json_at(thread, "frames");
    cr_assert(frames && json_object_array_length(frames) >= 1, "the innermost frame is known: %s",
              json_object_to_json_string(thread));
    cr_assert(strstr(json_string_at(json_object_array_get_idx(frames, 0), "module"), "hangdoc-fifo-"),
              "%s", json_object_to_json_string(frames));
    expect_free(pid, "after the run");
    json_object_put(document);
    run_result_free(&result);
    fixture_stop(&fixture);
}
