/* Hostile and odd targets, and hangdoc run without root's rights (issue 17): crafted ELF files mapped and run in a
 * target, a thread in uninterruptible sleep among running ones, a target traced by strace or held by gdb, a
 * command line of more than 128 KiB with an executable path full of control bytes, and hangdoc as an unprivileged
 * user, with and without CAP_SYS_PTRACE, and under Yama's ptrace_scope where the kernel has Yama. Each time: the
 * report that can be made, the right words for what could not be read, the documented exit status, and a target
 * left as it was.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void restore_yama(void);

static void stop_everything(void)
{
    restore_yama();
    fixture_stop_all();
}

TestSuite(hostile, .fini = stop_everything, .timeout = 180);

#define NOBODY 65534

/* ---- what the tests share ------------------------------------------------------------------------------------ */

static json_object *parse_report(const struct run_result *result, int expected_status)
{
    json_object *document = json_tokener_parse(result->out);
    cr_assert_not_null(document, "a JSON report (exit %d): %.400s", result->exit_status, result->err);
    cr_assert_eq(result->exit_status, expected_status, "exit %d, expected %d; findings %s; stderr %.400s",
                 result->exit_status, expected_status, json_object_to_json_string(json_at(document, "findings")),
                 result->err);
    json_validate(result->out);
    return document;
}

static json_object *diagnose_as(int as_uid, pid_t pid, int expected_status)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    const char *const arguments[] = { "--json", "-n", "2", "-i", "50ms", pid_text, NULL };
    if (as_uid < 0)
        hangdoc_run(&result, arguments);
    else
        hangdoc_run_as(&result, as_uid, arguments);
    json_object *document = parse_report(&result, expected_status);
    run_result_free(&result);
    return document;
}

/* A field of /proc/<pid>/task/<tid>/status, as a number (the first one on the line); -1 when unreadable. */
static long task_status_number(pid_t pid, const char *tid, const char *key)
{
    char path[320], text[4096];
    snprintf(path, sizeof path, "/proc/%d/task/%s/status", (int)pid, tid);
    FILE *file = fopen(path, "re");
    if (!file)
        return -1;
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = '\0';
    char pattern[32];
    snprintf(pattern, sizeof pattern, "\n%s:", key);
    const char *line = strstr(text, pattern);
    return line ? strtol(line + strlen(pattern), NULL, 10) : -1;
}

/* The state letter of a task, '?' when gone. */
static char task_state(pid_t pid, const char *tid)
{
    char path[320], text[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%s/stat", (int)pid, tid);
    FILE *file = fopen(path, "re");
    if (!file)
        return '?';
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = '\0';
    const char *close = strrchr(text, ')');
    return close && close[1] == ' ' ? close[2] : '?';
}

/* Every thread of `pid` is alive, has `tracer` as its tracer (0: none), and is stopped only when a tracer holds it
 * (`held`): hangdoc left the target as it found it. */
static void expect_as_found(pid_t pid, pid_t tracer, bool held, const char *context)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    cr_assert_not_null(tasks, "%s: process %d is alive", context, (int)pid);
    size_t seen = 0;
    for (struct dirent *entry; (entry = readdir(tasks));) {
        if (entry->d_name[0] == '.')
            continue;
        seen++;
        char state = task_state(pid, entry->d_name);
        cr_assert(held ? state == 't' : state != 't' && state != 'T', "%s: thread %s is in state %c", context,
                  entry->d_name, state);
        cr_assert_eq(task_status_number(pid, entry->d_name, "TracerPid"), tracer,
                     "%s: thread %s is traced by %ld, not %d", context, entry->d_name,
                     task_status_number(pid, entry->d_name, "TracerPid"), (int)tracer);
    }
    closedir(tasks);
    cr_assert_gt(seen, 0, "%s: threads of %d", context, (int)pid);
}

static void wait_for_tracer(pid_t pid, pid_t tracer, char state)
{
    char tid[16];
    snprintf(tid, sizeof tid, "%d", (int)pid);
    for (int waited = 0; waited < 15000; waited += 10) {
        if (task_status_number(pid, tid, "TracerPid") == tracer && (!state || task_state(pid, tid) == state))
            return;
        usleep(10000);
    }
    cr_assert_fail("process %d never got tracer %d (state %c)", (int)pid, (int)tracer, task_state(pid, tid));
}

/* A program in its own process group that dies with the test, stdin from `input` (-1: /dev/null). */
static pid_t start_program(const char *const *argv, int input)
{
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        setpgid(0, 0);
        int null = open("/dev/null", O_RDWR);
        dup2(input >= 0 ? input : null, 0);
        dup2(null, 1);
        dup2(null, 2);
        harness_close_from(3);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return child;
}

/* Ends a program this test started, by its pid, and reaps it (bounded: SIGKILL after 5 s). */
static void end_program(pid_t pid, int signal_number)
{
    kill(pid, signal_number);
    for (int waited = 0; waited < 5000; waited += 10) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* `program` with `options` and "-p TARGET" (a tracer: strace, gdb), stdin from `input`; fails the test when the
 * program is not installed. */
static pid_t start_tracer(const char *program, const char *const *options, pid_t target, int input)
{
    if (access(program, X_OK) != 0)
        cr_assert_fail("%s is not installed (setup.sh installs it)", program);
    char target_text[16];
    snprintf(target_text, sizeof target_text, "%d", (int)target);
    const char *argv[16] = { program };
    size_t count = 1;
    for (size_t i = 0; options[i] && count < 13; i++)
        argv[count++] = options[i];
    argv[count++] = "-p";
    argv[count++] = target_text;
    argv[count] = NULL;
    return start_program(argv, input);
}

static json_object *the_finding(json_object *document, const char *id, pid_t tid)
{
    json_object *finding = json_first_finding(document, id, 0);
    cr_assert_not_null(finding, "a %s finding: %s", id, json_object_to_json_string(json_at(document, "findings")));
    cr_assert_eq(json_int_at(finding, "tid", -1), tid, "%s about thread %d", id, (int)tid);
    return finding;
}

static const char *scratch_root(void)
{
    const char *root = getenv("TMPDIR");
    return root && *root ? root : "/tmp";
}

/* ---- crafted ELF files -------------------------------------------------------------------------------------- */

static json_object *library_named(json_object *process, const char *name)
{
    json_object *libraries = json_at(process, "libraries");
    for (size_t i = 0; libraries && i < json_object_array_length(libraries); i++) {
        json_object *library = json_object_array_get_idx(libraries, i);
        const char *path = json_string_at(library, "path");
        size_t length = path ? strlen(path) : 0, name_length = strlen(name);
        if (length > name_length && strcmp(path + length - name_length, name) == 0 && path[length - name_length - 1] == '/')
            return library;
    }
    return NULL;
}

/* Each crafted file is named by what it can prove and nothing else, the pc in it is module+offset with no symbol,
 * and every other thread's stack is whole. */
Test(hostile, crafted_elf_files_mapped_and_run_in_a_target_are_read_as_far_as_they_are_sound)
{
    char directory[256];
    snprintf(directory, sizeof directory, "%s/hangdoc-crafted-XXXXXX", scratch_root());
    cr_assert_not_null(mkdtemp(directory));
    struct fixture fixture;
    fixture_start_command(&fixture, fixture_path("crafted_elf"), (const char *[]){ "crafted_elf", directory, NULL },
                          10000);
    pid_t pid = fixture.pids[0];
    json_object *document = diagnose_as(-1, pid, EXIT_NO_HANG);
    json_object *process = json_process(document, pid);
    static const struct {
        const char *file;
        const char *soname;   /* NULL: none may be claimed */
        bool build_id;        /* the 20-byte id every file but the 4 GiB note's carries */
    } expected[] = {
        { "libcrafted-sections.so", "libcrafted-sections.so", true },
        { "libcrafted-symtab.so", "libcrafted-symtab.so", true },
        { "libcrafted-note.so", "libcrafted-note.so", false },
        { "libcrafted-dynamic.so", NULL, true },
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        json_object *library = library_named(process, expected[i].file);
        cr_assert_not_null(library, "%s is listed", expected[i].file);
        if (expected[i].soname)
            cr_assert_str_eq(json_string_at(library, "soname"), expected[i].soname);
        else
            cr_assert_null(json_string_at(library, "soname"), "%s: no soname out of a looping dynamic section",
                           expected[i].file);
        if (expected[i].build_id)
            cr_assert_str_eq(json_string_at(library, "build_id"), "c4af7ed000000000000000000000000000000000");
        else
            cr_assert_null(json_string_at(library, "build_id"), "%s: no build-id from a 4 GiB note",
                           expected[i].file);
        pid_t tid = fixture.pids[1 + i];
        json_object *thread = json_thread(process, tid);
        cr_assert_str_eq(json_string_at(thread, "stack.state"), "taken", "thread %d's stack", (int)tid);
#if defined(__x86_64__)
        json_object *innermost = json_object_array_get_idx(json_at(thread, "frames"), 0);
        cr_assert_not_null(innermost);
        const char *module = json_string_at(innermost, "module");
        cr_assert(module && strstr(module, expected[i].file), "frame #0 of %d in %s: %s", (int)tid,
                  expected[i].file, module);
        cr_assert_null(json_string_at(innermost, "symbol"), "no symbol out of %s", expected[i].file);
        cr_assert_str_eq(json_string_at(innermost, "module_offset"), "0x1007", "the pc after the syscall");
#endif
    }
    json_object *main_frames = json_at(json_thread(process, pid), "frames");
    bool main_named = false;
    for (size_t f = 0; main_frames && f < json_object_array_length(main_frames); f++) {
        const char *symbol = json_string_at(json_object_array_get_idx(main_frames, f), "symbol");
        main_named |= symbol && strcmp(symbol, "main") == 0;
    }
    cr_assert(main_named, "the main thread's stack still names main: %s", json_object_to_json_string(main_frames));
    json_object_put(document);
    expect_as_found(pid, 0, false, "after the crafted files were read");
    fixture_stop(&fixture);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        char path[320];
        snprintf(path, sizeof path, "%s/%s", directory, expected[i].file);
        unlink(path);
    }
    rmdir(directory);
}

/* ---- a thread that cannot be stopped ------------------------------------------------------------------------ */

/* The D thread keeps its kernel stack and the reason its native one was not taken; the others are stopped,
 * unwound and let go; no wait for a stop that cannot come. */
Test(hostile, a_thread_in_uninterruptible_sleep_among_running_ones_is_never_waited_for)
{
    struct fixture fixture;
    fixture_start(&fixture, "d_state_threads");
    pid_t pid = fixture.pids[0], stuck = fixture.pids[1], child = fixture.pids[2], waiter = fixture.pids[3],
          ticker = fixture.pids[4];
    json_object *document = diagnose_as(-1, pid, EXIT_HANG);
    json_object *finding = the_finding(document, "uninterruptible", stuck);
    char child_text[16];
    snprintf(child_text, sizeof child_text, "%d", (int)child);
    cr_assert_str_eq(json_string_at(finding, "evidence.vfork_child"), child_text, "the kernel wait is vfork()'s");
    json_object *process = json_process(document, pid);
    json_object *thread = json_thread(process, stuck);
    cr_assert_str_eq(json_string_at(thread, "state"), "D");
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "failed");
    cr_assert(strstr(json_string_at(thread, "stack.why_not"), "uninterruptible sleep (D)"), "why not: %s",
              json_string_at(thread, "stack.why_not"));
    cr_assert_not_null(json_at(thread, "kernel_stack"), "its kernel stack is where it is");
    pid_t others[] = { pid, waiter, ticker };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        cr_assert_str_eq(json_string_at(json_thread(process, others[i]), "stack.state"), "taken",
                         "thread %d's stack is taken", (int)others[i]);
    cr_assert_not(json_has_note(document, "--timeout"), "no deadline was reached waiting for it");
    json_object_put(document);
    expect_as_found(pid, 0, false, "after the run");
    char tid[16];
    snprintf(tid, sizeof tid, "%d", (int)stuck);
    cr_assert_eq(task_state(pid, tid), 'D', "still in vfork()");
    fixture_stop(&fixture);
}

/* ---- a kernel without what hangdoc reads ----------------------------------------------------------------------- */

/* hangdoc run by the without_facilities fixture: the kernel refuses process_vm_readv, or the opens of
 * /proc/.../syscall or /proc/.../mem fail, as on old kernels and in gVisor. */
static json_object *diagnose_without(const char *const *refusals, const char *const *options, pid_t pid,
                                     int expected_status)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    const char *argv[16];
    size_t n = 0;
    argv[n++] = fixture_path("without_facilities");
    for (; *refusals; refusals++)
        argv[n++] = *refusals;
    argv[n++] = "--";
    argv[n++] = getenv("HANGDOC_BIN");
    argv[n++] = "--json";
    for (; *options; options++)
        argv[n++] = *options;
    argv[n++] = pid_text;
    argv[n] = NULL;
    cr_assert_lt(n, sizeof argv / sizeof argv[0]);
    struct run_result result;
    program_run_as(&result, -1, argv);
    json_object *document = parse_report(&result, expected_status);
    run_result_free(&result);
    return document;
}

/* The lock-order deadlock, whose verdict needs the mutexes' owners from the target's memory. */
static void start_lock_cycle(struct fixture *fixture, pid_t *pid, pid_t *first, pid_t *second)
{
    fixture_start(fixture, "lock_cycle");
    *pid = fixture->pids[0], *first = fixture->pids[1], *second = fixture->pids[2];
}

Test(hostile, no_syscall_files_the_waits_come_from_the_registers_and_a_note_says_so)
{
    struct fixture fixture;
    pid_t pid, first, second;
    start_lock_cycle(&fixture, &pid, &first, &second);
    json_object *document = diagnose_without((const char *[]){ "--no-syscall-files", NULL },
                                             (const char *[]){ "-n", "2", "-i", "50ms", NULL }, pid, EXIT_HANG);
    json_object *cycle = the_finding(document, "lock-cycle", first);
    cr_assert_eq(json_object_array_length(json_at(cycle, "members")), 2);
    json_object *process = json_process(document, pid);
    cr_assert_eq(json_int_at(json_thread(process, first), "wait.owner_tid", -1), second);
    cr_assert_str_eq(json_string_at(json_thread(process, pid), "wait.lock.kind"), "join");
    cr_assert(json_has_note(document, "system calls: this kernel has no /proc/<tid>/syscall"));
    cr_assert(json_has_note(document, "were read from their registers while stopped for their stacks"));
    cr_assert_not(json_has_note(document, "syscall: No such file"), "no note per thread");
    json_object_put(document);

    /* without ptrace either: only states and wait channels, so no verdict can be drawn, and none is made up */
    document = diagnose_without((const char *[]){ "--no-syscall-files", NULL },
                                (const char *[]){ "-n", "2", "-i", "50ms", "--no-ptrace", NULL }, pid, EXIT_NO_HANG);
    cr_assert_str_eq(json_string_at(document, "verdict.cause"), "unknown", "%s",
                     json_object_to_json_string(json_at(document, "verdict")));
    cr_assert_eq(json_int_at(document, "verdict.unread_waits", -1), 3);
    cr_assert(json_has_note(document, "system calls: this kernel has no /proc/<tid>/syscall"));
    json_object_put(document);
    expect_as_found(pid, 0, false, "after the runs");
    fixture_stop(&fixture);
}

Test(hostile, no_process_vm_readv_memory_is_read_through_proc_mem_and_a_note_says_so)
{
    struct fixture fixture;
    pid_t pid, first, second;
    start_lock_cycle(&fixture, &pid, &first, &second);
    json_object *document = diagnose_without((const char *[]){ "--no-cross-memory-attach", NULL },
                                             (const char *[]){ "-n", "2", "-i", "50ms", NULL }, pid, EXIT_HANG);
    the_finding(document, "lock-cycle", first);
    json_object *process = json_process(document, pid);
    cr_assert_eq(json_int_at(json_thread(process, second), "wait.owner_tid", -1), first);
    cr_assert(json_has_note(document, "process_vm_readv() is not available"));
    cr_assert(json_has_note(document, "it is read through /proc/<pid>/mem"));
    json_object_put(document);
    expect_as_found(pid, 0, false, "after the run");
    fixture_stop(&fixture);
}

Test(hostile, no_target_memory_at_all_the_rest_of_the_report_and_a_note)
{
    struct fixture fixture;
    pid_t pid, first, second;
    start_lock_cycle(&fixture, &pid, &first, &second);
    json_object *document = diagnose_without((const char *[]){ "--no-cross-memory-attach", "--no-proc-mem", NULL },
                                             (const char *[]){ "-n", "2", "-i", "50ms", NULL }, pid, EXIT_HANG);
    /* no owners: no lock cycle, but every thread asleep forever on a futex is still a hang */
    cr_assert_eq(json_count_findings(document, "lock-cycle", 0), 0);
    json_object *process = json_process(document, pid);
    cr_assert_str_eq(json_string_at(json_thread(process, first), "wait.kind"), "futex");
    cr_assert_str_eq(json_string_at(json_thread(process, first), "wait.lock.kind"), "unknown");
    cr_assert(json_has_note(document, "neither process_vm_readv() nor /proc/<pid>/mem is available here"));
    json_object_put(document);
    expect_as_found(pid, 0, false, "after the run");
    fixture_stop(&fixture);
}

/* ---- a target with a tracer of its own ---------------------------------------------------------------------- */

/* strace follows the child: hangdoc cannot stop it, says who traces it, and still decodes the lock from its memory
 * and /proc. strace keeps its tracee. */
Test(hostile, a_target_traced_by_strace_keeps_its_tracer_and_gets_its_verdict)
{
    struct fixture fixture;
    fixture_start(&fixture, "inherited_mutex");
    pid_t parent = fixture.pids[0], holder = fixture.pids[1], child = fixture.pids[2];
    pid_t strace = start_tracer("/usr/bin/strace", (const char *[]){ "-qq", "-f", "-o", "/dev/null", NULL }, child, -1);
    wait_for_tracer(child, strace, 0);
    json_object *document = diagnose_as(-1, parent, EXIT_HANG_FORK_UNSAFE);
    json_object *inherited = the_finding(document, "inherited-lock", child);
    char text[32];
    snprintf(text, sizeof text, "%d", (int)holder);
    cr_assert_str_eq(json_string_at(inherited, "evidence.owner_tid"), text);
    json_object *process = json_process(document, child);
    cr_assert_eq(json_int_at(process, "tracer_pid", -1), strace);
    cr_assert_str_eq(json_string_at(process, "tracer_comm"), "strace");
    json_object *thread = json_thread(process, child);
    cr_assert_str_eq(json_string_at(thread, "stack.state"), "failed");
    char expected[96];
    snprintf(expected, sizeof expected, "already traced by pid %d (strace)", (int)strace);
    cr_assert(strstr(json_string_at(thread, "stack.why_not"), expected), "why not: %s",
              json_string_at(thread, "stack.why_not"));
    cr_assert_str_eq(json_string_at(json_thread(json_process(document, parent), holder), "stack.state"), "taken",
                     "the parent, which strace does not trace, is unwound");
    json_object_put(document);
    expect_as_found(child, strace, false, "strace still traces the child");
    expect_as_found(parent, 0, false, "the parent");
    end_program(strace, SIGTERM);
    expect_as_found(child, 0, false, "after strace detached");
    fixture_stop(&fixture);
}

/* gdb attached to the child holds it stopped: that is the verdict (stopped, by gdb), not a lock; hangdoc neither
 * resumes nor detaches it, and once gdb quits the child waits for the lock again. */
Test(hostile, a_target_held_by_gdb_is_stopped_by_its_tracer_and_stays_held)
{
    struct fixture fixture;
    fixture_start(&fixture, "inherited_mutex");
    pid_t parent = fixture.pids[0], child = fixture.pids[2];
    int commands[2];
    cr_assert_eq(pipe2(commands, O_CLOEXEC), 0);
    pid_t gdb = start_tracer("/usr/bin/gdb", (const char *[]){ "-q", "-nx", "-iex", "set debuginfod enabled off", NULL },
                             child, commands[0]);
    close(commands[0]);
    wait_for_tracer(child, gdb, 't');
    json_object *document = diagnose_as(-1, parent, EXIT_HANG);
    json_object *stopped = the_finding(document, "stopped", child);
    char text[16];
    snprintf(text, sizeof text, "%d", (int)gdb);
    cr_assert_str_eq(json_string_at(stopped, "evidence.tracer_pid"), text);
    cr_assert_str_eq(json_string_at(stopped, "evidence.tracer_comm"), "gdb");
    /* who that gdb is: its command line, the target's pid at its end */
    char command[64];
    snprintf(command, sizeof command, "/usr/bin/gdb -q -nx -iex set debuginfod enabled off -p %d", (int)child);
    cr_assert_str_eq(json_string_at(stopped, "evidence.tracer_cmdline"), command);
    cr_assert_str_eq(json_string_at(json_process(document, child), "tracer_cmdline"), command);
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "stopped");
    json_object_put(document);
    expect_as_found(child, gdb, true, "gdb still holds the child");
    static const char quit[] = "detach\nquit\n";
    cr_assert_eq(write(commands[1], quit, sizeof quit - 1), (ssize_t)sizeof quit - 1);
    close(commands[1]);
    for (int waited = 0; waited < 10000 && waitpid(gdb, NULL, WNOHANG) != gdb; waited += 10)
        usleep(10000);
    end_program(gdb, SIGKILL); /* gone already, or made to go */
    expect_as_found(child, 0, false, "after gdb detached");
    fixture_stop(&fixture);
}

/* ---- hostile names ------------------------------------------------------------------------------------------ */

/* More than 128 KiB of arguments, and an executable whose path holds an escape sequence, a newline and bytes that
 * are not UTF-8: the command line is cut at its bound and says so; no control byte reaches the text report; the
 * JSON holds the exact path. */
Test(hostile, a_huge_command_line_and_a_hostile_executable_path)
{
    char directory[256], program[320];
    snprintf(directory, sizeof directory, "%s/hangdoc-names-XXXXXX", scratch_root());
    cr_assert_not_null(mkdtemp(directory));
    snprintf(program, sizeof program, "%s/exe\x1b[31m\nred\xff", directory);
    int source = open(fixture_path("weird_names"), O_RDONLY | O_CLOEXEC);
    int copy = open(program, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
    cr_assert(source >= 0 && copy >= 0);
    char buffer[65536];
    for (ssize_t got; (got = read(source, buffer, sizeof buffer)) > 0;)
        cr_assert_eq(write(copy, buffer, (size_t)got), got);
    close(source);
    close(copy);
    enum { ARGUMENTS = 5000 };
    static char words[ARGUMENTS][32];
    static const char *argv[ARGUMENTS + 2];
    argv[0] = "weird";
    for (size_t i = 0; i < ARGUMENTS; i++) {
        snprintf(words[i], sizeof words[i], "argument-%05zu-\x1b[0m-padding", i);
        argv[i + 1] = words[i];
    }
    struct fixture fixture;
    fixture_start_command(&fixture, program, argv, 10000);
    pid_t pid = fixture.pids[0];
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "-n", "1", pid_text, NULL });
    cr_assert_eq(result.exit_status, EXIT_NO_HANG);
    for (const unsigned char *p = (const unsigned char *)result.out; *p; p++)
        cr_assert(*p >= 0x20 || *p == '\n', "no control byte 0x%02x in the text report", *p);
    cr_assert(strstr(result.out, "exe\\e[31m\\nred\\xff"), "the path shown escaped: %.2000s", result.out);
    cr_assert_lt(strlen(result.out), 64 * 1024, "the text shows a bounded part of the command line");
    run_result_free(&result);

    hangdoc_run(&result, (const char *[]){ "--json", "-n", "1", pid_text, NULL });
    cr_assert(strstr(result.out, "exe\\u001b[31m\\nred\\udcff\""), "0xff as U+DCFF (surrogateescape)");
    json_object *document = parse_report(&result, EXIT_NO_HANG);
    run_result_free(&result);
    json_object *process = json_process(document, pid);
    cr_assert(json_bool_at(process, "cmdline_truncated"), "more than 128 KiB: cut, and said");
    size_t count = json_object_array_length(json_at(process, "cmdline"));
    cr_assert(count > 1000 && count <= 4096, "%zu arguments kept, at most the bound", count);
    cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(json_at(process, "cmdline"), 1)),
                     "argument-00000-\x1b[0m-padding", "the exact bytes in JSON");
    const char *exe = json_string_at(process, "exe");
    cr_assert(exe && strstr(exe, "exe\x1b[31m\nred"), "the exact path: %s", exe);
    json_object_put(document);
    expect_as_found(pid, 0, false, "after the run");
    fixture_stop(&fixture);
    unlink(program);
    rmdir(directory);
}

/* ---- without root's rights ---------------------------------------------------------------------------------- */

/* setpriv(1) runs `argv` (NULL-terminated) as nobody with the capabilities named ("" none: "+sys_ptrace"...). */
static void run_as_nobody_with(struct run_result *result, const char *capabilities, const char *const *arguments)
{
    const char *argv[32] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups" };
    size_t count = 4;
    char inheritable[64], ambient[64];
    if (*capabilities) {
        snprintf(inheritable, sizeof inheritable, "--inh-caps=%s", capabilities);
        snprintf(ambient, sizeof ambient, "--ambient-caps=%s", capabilities);
        argv[count++] = inheritable;
        argv[count++] = ambient;
    }
    argv[count++] = getenv("HANGDOC_BIN");
    for (size_t i = 0; arguments[i] && count < 31; i++)
        argv[count++] = arguments[i];
    argv[count] = NULL;
    program_run_as(result, -1, argv);
}

static json_object *diagnose_as_nobody_with(const char *capabilities, pid_t pid, int expected_status)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    run_as_nobody_with(&result, capabilities, (const char *[]){ "--json", "-n", "2", "-i", "50ms", pid_text, NULL });
    json_object *document = parse_report(&result, expected_status);
    run_result_free(&result);
    return document;
}

/* The inherited-mutex scenario started as nobody. */
static void start_as_nobody(struct fixture *fixture)
{
    fixture_start_command(fixture, "/usr/bin/setpriv",
                          (const char *[]){ "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                            fixture_path("inherited_mutex"), NULL },
                          10000);
}

static void expect_inherited_lock(json_object *document, const struct fixture *fixture)
{
    json_object *inherited = the_finding(document, "inherited-lock", fixture->pids[2]);
    char holder[16];
    snprintf(holder, sizeof holder, "%d", (int)fixture->pids[1]);
    cr_assert_str_eq(json_string_at(inherited, "evidence.owner_tid"), holder);
    for (size_t i = 0; i < 3; i++) {
        pid_t tid = fixture->pids[i];
        json_object *process = json_process(document, i < 2 ? fixture->pids[0] : fixture->pids[2]);
        cr_assert_str_eq(json_string_at(json_thread(process, tid), "stack.state"), "taken", "thread %d", (int)tid);
    }
}

/* A user diagnosing its own processes needs nothing more: the whole verdict, stacks included. */
Test(hostile, an_unprivileged_user_diagnoses_its_own_processes_fully)
{
    struct fixture fixture;
    start_as_nobody(&fixture);
    json_object *document = diagnose_as(NOBODY, fixture.pids[0], EXIT_HANG_FORK_UNSAFE);
    expect_inherited_lock(document, &fixture);
    cr_assert_not(json_has_note(document, "permission denied"), "%s",
                  json_object_to_json_string(json_at(document, "notes")));
    json_object_put(document);
    expect_as_found(fixture.pids[2], 0, false, "after the run");
    fixture_stop(&fixture);
}

/* CAP_SYS_PTRACE attaches and reads memory, but does not open root's 0400 files (syscall, auxv, fd/), as a
 * debugging container is often given it: the stacks are taken, each thread's system call is read from its
 * registers while it is stopped for its stack, and the AT_RANDOM bytes from the initial stack, so the verdict is
 * whole; the notes say so, and that CAP_DAC_READ_SEARCH is what is missing for the rest (the descriptors), not
 * CAP_SYS_PTRACE. With both, the same verdict from the files. */
Test(hostile, cap_sys_ptrace_alone_takes_stacks_and_waits_and_names_what_else_is_missing)
{
    struct fixture fixture;
    fixture_start(&fixture, "inherited_mutex");
    pid_t parent = fixture.pids[0], child = fixture.pids[2];
    json_object *document = diagnose_as_nobody_with("+sys_ptrace", parent, EXIT_HANG_FORK_UNSAFE);
    expect_inherited_lock(document, &fixture);
    json_object *waiter = json_thread(json_process(document, child), child);
    cr_assert_str_eq(json_string_at(waiter, "syscall.state"), "in-syscall");
    cr_assert(json_bool_at(waiter, "syscall.from_registers"));
    cr_assert_str_eq(json_string_at(waiter, "wait.kind"), "futex");
    cr_assert_str_eq(json_string_at(json_process(document, child), "origin"), "forked");
    cr_assert(json_has_note(document, "the system calls of 1 thread were read from their registers while stopped"),
              "%s", json_object_to_json_string(json_at(document, "notes")));
    cr_assert(json_has_note(document, "fds: permission denied (its /proc files are uid 0's only (mode 0400): "
                                      "hangdoc runs as uid 65534 with CAP_SYS_PTRACE but without "
                                      "CAP_DAC_READ_SEARCH"),
              "%s", json_object_to_json_string(json_at(document, "notes")));
    cr_assert_not(json_has_note(document, "without CAP_SYS_PTRACE"), "it has CAP_SYS_PTRACE: %s",
                  json_object_to_json_string(json_at(document, "notes")));
    json_object_put(document);

    document = diagnose_as_nobody_with("+sys_ptrace,+dac_read_search", parent, EXIT_HANG_FORK_UNSAFE);
    expect_inherited_lock(document, &fixture);
    json_object_put(document);

    /* and without either: /proc's public part, with the words for it */
    document = diagnose_as_nobody_with("", parent, EXIT_NO_HANG);
    cr_assert_str_eq(json_string_at(json_thread(json_process(document, child), child), "stack.state"), "failed");
    cr_assert(json_has_note(document, "syscall: permission denied (owned by uid 0, and hangdoc runs as uid 65534 "
                                      "without CAP_SYS_PTRACE)"),
              "%s", json_object_to_json_string(json_at(document, "notes")));
    json_object_put(document);
    expect_as_found(child, 0, false, "after the runs");
    fixture_stop(&fixture);
}

/* ---- Yama --------------------------------------------------------------------------------------------------- */

#define YAMA_SCOPE "/proc/sys/kernel/yama/ptrace_scope"
static char yama_saved[8];

static void set_yama(const char *scope)
{
    FILE *file = fopen(YAMA_SCOPE, "we");
    cr_assert_not_null(file, "write %s: %s", YAMA_SCOPE, strerror(errno));
    fputs(scope, file);
    cr_assert_eq(fclose(file), 0, "set ptrace_scope %s", scope);
}

static void restore_yama(void)
{
    if (!yama_saved[0])
        return;
    FILE *file = fopen(YAMA_SCOPE, "we");
    if (file) {
        fputs(yama_saved, file);
        fclose(file);
    }
    yama_saved[0] = '\0';
}

/* Remembers the scope (restored by the suite's .fini too); skips the test on a kernel without Yama. */
static void need_yama(void)
{
    FILE *file = fopen(YAMA_SCOPE, "re");
    if (!file)
        cr_skip_test("this kernel has no Yama (no " YAMA_SCOPE "): the ptrace_scope cases cannot run here");
    if (!fgets(yama_saved, sizeof yama_saved, file))
        snprintf(yama_saved, sizeof yama_saved, "1");
    fclose(file);
    if (yama_saved[0] == '3')
        cr_skip_test("Yama's ptrace_scope is 3 until reboot: no ptrace to test");
}

/* Scope 1: nobody's hangdoc may not attach to nobody's process that is not its descendant; CAP_SYS_PTRACE may. */
Test(hostile, yama_scope_1_refuses_a_non_ancestor_and_says_so)
{
    need_yama();
    struct fixture fixture;
    start_as_nobody(&fixture);
    set_yama("1");
    json_object *document = diagnose_as(NOBODY, fixture.pids[0], EXIT_NO_HANG);
    cr_assert(json_has_note(document, "Yama ptrace_scope is 1"), "%s",
              json_object_to_json_string(json_at(document, "notes")));
    cr_assert_str_eq(json_string_at(json_thread(json_process(document, fixture.pids[2]), fixture.pids[2]),
                                    "stack.state"),
                     "failed");
    json_object_put(document);
    document = diagnose_as_nobody_with("+sys_ptrace", fixture.pids[0], EXIT_HANG_FORK_UNSAFE);
    expect_inherited_lock(document, &fixture);
    json_object_put(document);
    restore_yama();
    expect_as_found(fixture.pids[2], 0, false, "after the runs");
    fixture_stop(&fixture);
}

/* Scope 2: only CAP_SYS_PTRACE attaches, even to one's own processes. */
Test(hostile, yama_scope_2_needs_cap_sys_ptrace_even_for_ones_own_processes)
{
    need_yama();
    struct fixture fixture;
    start_as_nobody(&fixture);
    set_yama("2");
    json_object *document = diagnose_as(NOBODY, fixture.pids[0], EXIT_NO_HANG);
    cr_assert(json_has_note(document, "Yama ptrace_scope is 2"), "%s",
              json_object_to_json_string(json_at(document, "notes")));
    json_object_put(document);
    document = diagnose_as_nobody_with("+sys_ptrace", fixture.pids[0], EXIT_HANG_FORK_UNSAFE);
    expect_inherited_lock(document, &fixture);
    json_object_put(document);
    restore_yama();
    expect_as_found(fixture.pids[2], 0, false, "after the runs");
    fixture_stop(&fixture);
}
