/* Core files (hangdoc --core): cores taken with gdb's gcore of the processes of a real hung tree give the live
 * diagnosis's root cause, subjects, exit status and native stacks; a core cut short or that is no core gives a
 * report with notes, or a refusal, never a crash. */
#include "exit_codes.h"
#include "harness.h"
#include "python_harness.h"
#include "util.h"

#include <criterion/criterion.h>
#include <elf.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(cores, .fini = fixture_stop_all, .timeout = 180);

static char directory[] = "/tmp/hangdoc-cores-XXXXXX";
static char paths[HARNESS_MAX_PIDS][PATH_MAX];
static size_t npaths;

static void make_directory(void)
{
    strcpy(directory, "/tmp/hangdoc-cores-XXXXXX");
    cr_assert_not_null(mkdtemp(directory));
    npaths = 0;
}

static void remove_directory(void)
{
    fixture_stop_all();
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/bin/rm", "-rf", "--", directory, NULL });
    run_result_free(&result);
}

/* The C fixtures of the sanitized build map terabytes of AddressSanitizer's shadow memory: gcore takes minutes
 * over each and writes sparse files of that size. Their cores are taken in the plain build only; the sanitized one
 * still reads the Python fixture's cores (an interpreter nobody instrumented) and the refusals. */
static void need_plain_fixtures(void)
{
    const char *sanitize = getenv("HANGDOC_SANITIZE");
    if (sanitize && strcmp(sanitize, "none") != 0)
        cr_skip_test("the sanitized build's C fixtures map terabytes of shadow memory: their cores are taken in "
                     "the plain build");
}

/* gcore -o DIR/core PID: the process stops while gdb copies it, then goes on as it was. */
static const char *dump_core(pid_t pid)
{
    char prefix[PATH_MAX - 32], pid_text[16];
    snprintf(prefix, sizeof prefix, "%s/core", directory);
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/usr/bin/gcore", "-o", prefix, pid_text, NULL });
    cr_assert_eq(result.exit_status, 0, "gcore %d: %s%s", pid, result.out, result.err);
    run_result_free(&result);
    cr_assert_lt(npaths, HARNESS_MAX_PIDS);
    snprintf(paths[npaths], sizeof paths[npaths], "%s.%d", prefix, (int)pid);
    struct stat status;
    cr_assert_eq(stat(paths[npaths], &status), 0, "gcore wrote %s", paths[npaths]);
    return paths[npaths++];
}

/* hangdoc --json --core CORE... over the cores dumped so far. */
static json_object *diagnose_cores(int expected_status)
{
    const char *arguments[2 * HARNESS_MAX_PIDS + 2] = { "--json" };
    size_t count = 1;
    for (size_t i = 0; i < npaths; i++) {
        arguments[count++] = "--core";
        arguments[count++] = paths[i];
    }
    arguments[count] = NULL;
    struct run_result result;
    hangdoc_run(&result, arguments);
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "hangdoc --core printed JSON (exit %d): %s", result.exit_status, result.err);
    cr_assert_eq(result.exit_status, expected_status, "hangdoc --core exits %d, got %d; findings %s",
                 expected_status, result.exit_status, findings_text(document));
    run_result_free(&result);
    json_validate(json_object_to_json_string(document));
    return document;
}

/* The live diagnosis and the one of the cores agree: verdict, cause, root cause and its subject, exit status. */
static void expect_same_verdict(json_object *live, json_object *cores)
{
    const char *keys[] = { "verdict.cause", "verdict.root_cause" };
    for (size_t i = 0; i < COUNT(keys); i++) {
        const char *expected = json_string_at(live, keys[i]), *got = json_string_at(cores, keys[i]);
        cr_assert(expected && got && strcmp(expected, got) == 0, "%s: live %s, cores %s; findings %s", keys[i],
                  expected ? expected : "(none)", got ? got : "(none)", findings_text(cores));
    }
    cr_assert_eq(json_bool_at(cores, "verdict.hung"), json_bool_at(live, "verdict.hung"));
    cr_assert_eq(json_int_at(cores, "verdict.tid", -1), json_int_at(live, "verdict.tid", -2));
    cr_assert(json_has_note(cores, "diagnosed from"), "a note says what a core cannot tell");
}

/* The symbols of the frames of thread `tid` of process `pid`, one per line ("?" where none); NULL when its stack
 * was not taken. */
static char *stack_text(json_object *document, pid_t pid, pid_t tid)
{
    json_object *thread = json_thread(json_process(document, pid), tid);
    const char *state = json_string_at(thread, "stack.state");
    if (!state || strcmp(state, "taken") != 0)
        return NULL;
    json_object *frames = json_at(thread, "frames");
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    for (size_t f = 0; f < json_object_array_length(frames); f++) {
        const char *symbol = json_string_at(json_object_array_get_idx(frames, f), "symbol");
        fprintf(out, "%s\n", symbol ? symbol : "?");
    }
    fclose(out);
    return text;
}

/* Every thread of process `pid` has the same native stack, frame by frame, in the cores as in the live run: the
 * unwinder read the core's registers and memory, and the files the core names for the code it left out. */
static void expect_same_stacks(json_object *live, json_object *cores, pid_t pid)
{
    json_object *threads = json_at(json_process(live, pid), "threads");
    cr_assert_not_null(threads);
    for (size_t t = 0; t < json_object_array_length(threads); t++) {
        pid_t tid = (pid_t)json_int_at(json_object_array_get_idx(threads, t), "tid", -1);
        char *expected = stack_text(live, pid, tid), *got = stack_text(cores, pid, tid);
        cr_assert_not_null(expected, "the live run took thread %d's stack", tid);
        cr_assert_not_null(got, "the cores give thread %d's stack: %s", tid,
                           json_object_to_json_string(json_thread(json_process(cores, pid), tid)));
        cr_assert_str_eq(got, expected, "thread %d's stack from the core:\n%s\nlive:\n%s", tid, got, expected);
        free(expected);
        free(got);
    }
}

/* Diagnoses the fixture live, dumps a core of each process it reported (the first `ndumped` of them), and
 * diagnoses the cores: the same verdict. Returns the cores' report. */
static json_object *live_then_cores(struct fixture *fixture, const char *name, int status, size_t ndumped)
{
    fixture_start(fixture, name);
    json_object *live = diagnose_expecting(fixture->pids[0], status);
    for (size_t i = 0; i < ndumped; i++)
        dump_core(fixture->pids[i]);
    json_object *cores = diagnose_cores(status);
    expect_same_verdict(live, cores);
    for (size_t i = 0; i < ndumped; i++)
        expect_same_stacks(live, cores, fixture->pids[i]);
    json_object_put(live);
    return cores;
}

Test(cores, inherited_mutex_from_the_cores_of_parent_and_child, .init = make_directory, .fini = remove_directory)
{
    need_plain_fixtures();
    struct fixture fixture;
    /* parent, holder thread, child: the parent's core holds both of its threads */
    fixture_start(&fixture, "inherited_mutex");
    pid_t parent = fixture.pids[0], holder = fixture.pids[1], child = fixture.pids[2];
    json_object *live = diagnose_expecting(parent, EXIT_HANG_FORK_UNSAFE);
    dump_core(parent);
    dump_core(child);
    json_object *cores = diagnose_cores(EXIT_HANG_FORK_UNSAFE);
    expect_same_verdict(live, cores);
    expect_same_stacks(live, cores, parent);
    expect_same_stacks(live, cores, child);
    json_object *locker = json_thread(json_process(cores, child), child);
    cr_assert_str_eq(json_string_at(locker, "wait.lock.kind"), "mutex");
    cr_assert_eq(json_int_at(locker, "wait.owner_tid", -1), holder, "the owner, read from the child's core");
    cr_assert_eq(json_int_at(locker, "wait.owner_pid", -1), parent, "found in the parent's core");
    cr_assert_str_eq(json_string_at(json_process(cores, child), "origin"), "forked", "AT_RANDOM as the parent's");
    json_object *finding = json_first_finding(cores, "inherited-lock", child);
    cr_assert_not_null(finding, "%s", findings_text(cores));
    cr_assert_str_eq(json_string_at(finding, "confidence"), "certain");
    json_object_put(live);
    json_object_put(cores);
    fixture_stop(&fixture);
}

Test(cores, lock_cycle_from_one_core, .init = make_directory, .fini = remove_directory)
{
    need_plain_fixtures();
    struct fixture fixture;
    json_object *cores = live_then_cores(&fixture, "lock_cycle", EXIT_HANG, 1);
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    json_object *process = json_process(cores, pid);
    cr_assert_eq(json_int_at(json_thread(process, first), "wait.owner_tid", -1), second);
    cr_assert_eq(json_int_at(json_thread(process, second), "wait.owner_tid", -1), first);
    cr_assert_str_eq(json_string_at(json_thread(process, pid), "wait.lock.kind"), "join", "the join word");
    cr_assert_eq(json_count_findings(cores, "lock-cycle", 0), 1, "%s", findings_text(cores));
    json_object_put(cores);
    fixture_stop(&fixture);
}

Test(cores, gnu_openmp_fork_child_from_the_cores_of_the_tree, .init = make_directory, .fini = remove_directory)
{
    need_plain_fixtures();
    struct fixture fixture;
    json_object *cores = live_then_cores(&fixture, "openmp_fork", EXIT_HANG_FORK_UNSAFE, 2);
    pid_t child = fixture.pids[1];
    json_object *finding = json_first_finding(cores, "orphaned-wait", child);
    cr_assert_not_null(finding, "%s", findings_text(cores));
    cr_assert_str_eq(json_string_at(finding, "evidence.runtime"), "gnu-openmp");
    json_object_put(cores);
    fixture_stop(&fixture);
}

Test(cores, python_fork_lock_from_the_cores_of_parent_and_child, .init = make_directory, .fini = remove_directory)
{
    struct fixture fixture;
    json_object *cores = live_then_cores(&fixture, "python_fork_lock", EXIT_HANG_FORK_UNSAFE, 2);
    pid_t child = fixture.pids[1];
    cr_assert_not_null(json_first_finding(cores, "orphaned-wait", child), "%s", findings_text(cores));
    /* the Python view, from the interpreter's file and the core's memory: the line the child hangs at */
    json_object *frame = json_object_array_get_idx(python_frames_of(cores, child, child), 0);
    cr_assert_not_null(frame, "the child's Python stack");
    cr_assert_str_eq(json_string_at(frame, "function"), "<module>");
    cr_assert_eq(json_int_at(frame, "line", -1), python_marked_line("python_fork_lock.py", "acquire"));
    json_object_put(cores);
    fixture_stop(&fixture);
}

/* `core` as the kernel writes one, notes first, cut short half-way through its memory (a disk that filled, a
 * size limit): gcore writes its notes last, so its own cut would lose them all. */
static void write_cut_core(const char *core, const char *cut)
{
    size_t length;
    unsigned char *bytes = (unsigned char *)file_bytes(core, &length);
    cr_assert_not_null(bytes, "%s", core);
    Elf64_Ehdr header;
    memcpy(&header, bytes, sizeof header);
    size_t half = length / 2;
    FILE *out = fopen(cut, "we");
    cr_assert_not_null(out);
    for (size_t i = 0; i < header.e_phnum; i++) {
        Elf64_Phdr program;
        size_t at = header.e_phoff + i * sizeof program;
        memcpy(&program, bytes + at, sizeof program);
        if (program.p_type != PT_NOTE)
            continue;
        /* the notes move to the middle; what was there and after is cut */
        memmove(bytes + half, bytes + program.p_offset, program.p_filesz);
        length = half + program.p_filesz;
        program.p_offset = half;
        memcpy(bytes + at, &program, sizeof program);
    }
    cr_assert_eq(fwrite(bytes, 1, length, out), length);
    cr_assert_eq(fclose(out), 0);
    free(bytes);
}

/* A copy of `core` whose notes of the types `hidden` (0-terminated) are renamed to a type nobody reads: a core
 * written without them. */
static void write_core_without(const char *core, const char *out_path, const unsigned *hidden)
{
    size_t length;
    unsigned char *bytes = (unsigned char *)file_bytes(core, &length);
    cr_assert_not_null(bytes, "%s", core);
    Elf64_Ehdr header;
    memcpy(&header, bytes, sizeof header);
    for (size_t i = 0; i < header.e_phnum; i++) {
        Elf64_Phdr program;
        memcpy(&program, bytes + header.e_phoff + i * sizeof program, sizeof program);
        for (size_t at = program.p_offset; program.p_type == PT_NOTE && at + sizeof(Elf64_Nhdr) <=
                                                                       program.p_offset + program.p_filesz;) {
            Elf64_Nhdr note;
            memcpy(&note, bytes + at, sizeof note);
            for (size_t h = 0; hidden[h]; h++)
                if (note.n_type == hidden[h]) {
                    note.n_type |= 0x7f000000;
                    memcpy(bytes + at, &note, sizeof note);
                }
            at += sizeof note + ((note.n_namesz + 3) & ~3u) + ((note.n_descsz + 3) & ~3u);
        }
    }
    FILE *out = fopen(out_path, "we");
    cr_assert_not_null(out);
    cr_assert_eq(fwrite(bytes, 1, length, out), length);
    cr_assert_eq(fclose(out), 0);
    free(bytes);
}

/* A core cut short: the threads, what their memory still holds, and a note that says it was cut; never a crash.
 * A file that is no core is refused with the reason. */
Test(cores, a_core_cut_short_or_without_notes_gives_a_partial_report, .init = make_directory,
     .fini = remove_directory)
{
    need_plain_fixtures();
    struct fixture fixture;
    fixture_start(&fixture, "lock_cycle");
    const char *core = dump_core(fixture.pids[0]);
    fixture_stop(&fixture);
    char cut[PATH_MAX + 8];
    snprintf(cut, sizeof cut, "%s/cut", directory);
    write_cut_core(core, cut);

    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", "--core", cut, NULL });
    cr_assert_lt(result.exit_status, EXIT_USAGE, "a report, whatever its verdict: %s", result.err);
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document);
    cr_assert(json_has_note(document, "cut short"), "%s", result.out);
    cr_assert_eq(json_object_array_length(json_at(json_process(document, fixture.pids[0]), "threads")), 3);
    json_object_put(document);
    run_result_free(&result);

    /* without the notes of its identity, its files and its auxiliary vector: the same lock cycle, and notes */
    char stripped[PATH_MAX + 16];
    snprintf(stripped, sizeof stripped, "%s/stripped", directory);
    write_core_without(core, stripped, (const unsigned[]){ NT_PRPSINFO, 0x46494c45 /* NT_FILE */, NT_AUXV, 0 });
    hangdoc_run(&result, (const char *[]){ "--json", "--core", stripped, NULL });
    cr_assert_eq(result.exit_status, EXIT_HANG, "the lock cycle needs none of them: %s", result.err);
    document = json_tokener_parse(result.out);
    cr_assert_not_null(document);
    cr_assert_eq(json_count_findings(document, "lock-cycle", 0), 1, "%s", findings_text(document));
    const char *notes[] = { "no NT_PRPSINFO note", "no NT_FILE note", "no NT_AUXV note" };
    for (size_t n = 0; n < COUNT(notes); n++)
        cr_assert(json_has_note(document, notes[n]), "a note says '%s': %s", notes[n], result.out);
    json_object_put(document);
    run_result_free(&result);

}

Test(cores, what_is_no_core_is_refused_with_the_reason, .init = make_directory, .fini = remove_directory)
{
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--core", "/etc/passwd", NULL });
    cr_assert_eq(result.exit_status, EXIT_NO_INPUT, "%s", result.err);
    cr_assert(strstr(result.err, "/etc/passwd: not an ELF file"), "%s", result.err);
    run_result_free(&result);
    hangdoc_run(&result, (const char *[]){ "--core", "/nonexistent/core", NULL });
    cr_assert_eq(result.exit_status, EXIT_NO_INPUT, "%s", result.err);
    cr_assert(strstr(result.err, "cannot open /nonexistent/core"), "%s", result.err);
    run_result_free(&result);
    hangdoc_run(&result, (const char *[]){ "--core", "/etc/passwd", "1", NULL });
    cr_assert_eq(result.exit_status, EXIT_USAGE, "%s", result.err);
    run_result_free(&result);
    /* an ELF file that is no core */
    hangdoc_run(&result, (const char *[]){ "--core", fixture_path("lock_cycle"), NULL });
    cr_assert_eq(result.exit_status, EXIT_NO_INPUT, "%s", result.err);
    cr_assert(strstr(result.err, "an ELF file, but not a core file"), "%s", result.err);
    run_result_free(&result);
}

static bool has_frame(json_object *document, pid_t pid, pid_t tid, const char *symbol)
{
    char *text = stack_text(document, pid, tid);
    char line[128];
    snprintf(line, sizeof line, "%s\n", symbol);
    bool found = text && strstr(text, line);
    free(text);
    return found;
}

/* The program's frames are named from its file: not at all when the file the core names is gone, by the file
 * --exe gives, or by the copy under --sysroot at the same path. */
Test(cores, exe_and_sysroot_say_where_the_files_of_a_core_are, .init = make_directory, .fini = remove_directory)
{
    need_plain_fixtures();
    char program[PATH_MAX], moved[PATH_MAX], root[PATH_MAX], in_root[PATH_MAX * 2];
    snprintf(program, sizeof program, "%s/bin/lock_cycle", directory);
    snprintf(moved, sizeof moved, "%s/moved", directory);
    snprintf(root, sizeof root, "%s/root", directory);
    snprintf(in_root, sizeof in_root, "%s%s/bin", root, directory);
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/bin/mkdir", "-p", "--", in_root, NULL });
    run_result_free(&result);
    snprintf(in_root, sizeof in_root, "%s/bin", directory);
    program_run_as(&result, -1, (const char *[]){ "/bin/mkdir", "-p", "--", in_root, NULL });
    run_result_free(&result);
    program_run_as(&result, -1, (const char *[]){ "/bin/cp", "--", fixture_path("lock_cycle"), program, NULL });
    cr_assert_eq(result.exit_status, 0, "%s", result.err);
    run_result_free(&result);
    struct fixture fixture;
    fixture_start_command(&fixture, program, (const char *[]){ "lock_cycle", NULL }, 10000);
    pid_t pid = fixture.pids[0], first = fixture.pids[1];
    const char *core = dump_core(pid);
    fixture_stop(&fixture);
    snprintf(in_root, sizeof in_root, "%s%s", root, program);
    program_run_as(&result, -1, (const char *[]){ "/bin/cp", "--", program, in_root, NULL });
    run_result_free(&result);
    cr_assert_eq(rename(program, moved), 0);

    const char *gone[] = { "--json", "--core", core, NULL };
    const char *exe[] = { "--json", "--core", core, "--exe", moved, NULL };
    const char *sysroot[] = { "--json", "--core", core, "--sysroot", root, NULL };
    const char *const *runs[] = { gone, exe, sysroot };
    for (size_t r = 0; r < COUNT(runs); r++) {
        hangdoc_run(&result, runs[r]);
        cr_assert_eq(result.exit_status, EXIT_HANG, "%s", result.err);
        json_object *document = json_tokener_parse(result.out);
        cr_assert_not_null(document);
        cr_assert(has_frame(document, pid, first, "pthread_mutex_lock") ||
                      has_frame(document, pid, first, "__pthread_mutex_lock"),
                  "libc's frames are named in every run");
        cr_assert_eq(has_frame(document, pid, first, "lock_in_order"), r > 0,
                     "the program's own frame is named only where its file is found (run %zu)", r);
        /* the sysroot gets the libraries too: there every file the core names is read under it */
        json_object *libraries = json_at(json_process(document, pid), "libraries");
        for (size_t l = 0; r == 0 && l < json_object_array_length(libraries); l++) {
            const char *path = json_string_at(json_object_array_get_idx(libraries, l), "path");
            if (!path || strcmp(path, program) == 0)
                continue;
            struct run_result copied;
            program_run_as(&copied, -1, (const char *[]){ "/bin/cp", "--parents", "--", path, root, NULL });
            cr_assert_eq(copied.exit_status, 0, "%s", copied.err);
            run_result_free(&copied);
        }
        json_object_put(document);
        run_result_free(&result);
    }
    hangdoc_run(&result, (const char *[]){ "--exe", moved, "1", NULL });
    cr_assert_eq(result.exit_status, EXIT_USAGE, "--exe without --core: %s", result.err);
    run_result_free(&result);
}

/* Whether /proc/<pid>/wchan names a futex wait, within `timeout_ms`. */
static bool waits_on_futex(pid_t pid, long timeout_ms)
{
    char path[64], wchan[128];
    snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
    for (long waited = 0; waited <= timeout_ms; waited += 50) {
        FILE *file = fopen(path, "re");
        size_t got = file ? fread(wchan, 1, sizeof wchan - 1, file) : 0;
        if (file)
            fclose(file);
        wchan[got] = '\0';
        if (strstr(wchan, "futex"))
            return true;
        usleep(50 * 1000);
    }
    return false;
}

/* hangdoc demo's own tree, dumped while the demo diagnoses it (without ptrace, which gcore needs): the cores give
 * the demo's verdict, the worker waiting for the mutex the trainer's loader thread holds. */
Test(cores, the_demo_tree_from_its_cores, .init = make_directory, .fini = remove_directory)
{
    need_plain_fixtures(); /* the demo's processes are hangdoc's own forks */
    struct spawned spawned;
    hangdoc_spawn(&spawned, (const char *[]){ "demo", "--no-ptrace", "--samples", "40", "--interval", "250ms", NULL });
    char intro[4096];
    size_t used = 0;
    pid_t trainer = 0, worker = 0;
    for (int attempt = 0; attempt < 100 && !worker; attempt++) {
        struct pollfd readable = { .fd = spawned.out_fd, .events = POLLIN };
        if (poll(&readable, 1, 100) <= 0)
            continue;
        ssize_t got = read(spawned.out_fd, intro + used, sizeof intro - 1 - used);
        if (got <= 0)
            break;
        used += (size_t)got;
        intro[used] = '\0';
        const char *at = strstr(intro, "started demo-trainer (pid "), *second = strstr(intro, "demo-worker (pid ");
        if (at && second && sscanf(at, "started demo-trainer (pid %d)", &trainer) == 1)
            sscanf(second, "demo-worker (pid %d)", &worker);
    }
    cr_assert(trainer > 0 && worker > 0, "the demo said its pids: %s", intro);
    cr_assert(waits_on_futex(worker, 5000), "the worker waits for the mutex");
    dump_core(trainer);
    dump_core(worker);
    struct run_result demo;
    spawned_finish(&spawned, &demo);
    /* the demo ended with a report and ended its tree; its own verdict is not this test's: gcore stopped the tree
     * while the demo sampled it */
    cr_assert_lt(demo.exit_status, EXIT_USAGE, "%d: %s", demo.exit_status, demo.err);
    cr_assert(kill(worker, 0) != 0 && kill(trainer, 0) != 0, "the demo ended its tree");
    run_result_free(&demo);

    json_object *cores = diagnose_cores(EXIT_HANG_FORK_UNSAFE);
    cr_assert_str_eq(json_string_at(cores, "verdict.root_cause"), "inherited-lock");
    cr_assert_eq(json_int_at(cores, "verdict.tid", -1), worker);
    json_object *waiter = json_thread(json_process(cores, worker), worker);
    cr_assert_eq(json_int_at(waiter, "wait.owner_pid", -1), trainer, "the owner found in the trainer's core");
    json_object_put(cores);
}
