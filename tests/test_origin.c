/* Origins on real programs (probe/origin.h): forked, exec'd, spawn and forkserver children of executables that are
 * not position-independent, of position-independent ones, and with ASLR off, where the executable's load address
 * tells nothing and only auxv's AT_RANDOM bytes tell a fork from an exec. A spawn child is never called forked. */
#include "harness.h"
#include "python_harness.h"

#include <criterion/criterion.h>
#include <elf.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PYTHON_READY_TIMEOUT_MS 120000
#define SETARCH "/usr/bin/setarch"
#define SYSTEM_PYTHON "/usr/bin/python3"

TestSuite(origin, .fini = fixture_stop_all, .timeout = 300);

/* The findings that say state came through fork(): none may appear where nothing was inherited. */

static void expect_origin(json_object *document, pid_t pid, const char *origin, const char *basis)
{
    json_object *process = json_process(document, pid);
    cr_assert_not_null(process, "process %d is in the tree", pid);
    cr_assert_str_eq(json_string_at(process, "origin"), origin, "origin of process %d", pid);
    cr_assert_str_eq(json_string_at(process, "origin_basis"), basis, "origin_basis of process %d", pid);
}

/* ---- what the tests stand on, checked so that a passing test means what it says ------------------------------- */

/* The ELF type of a file: ET_EXEC (not position-independent) or ET_DYN (PIE); 0 when unreadable. */
static unsigned elf_type(const char *path)
{
    FILE *file = fopen(path, "re");
    Elf64_Ehdr header;
    bool read = file && fread(&header, sizeof header, 1, file) == 1;
    if (file)
        fclose(file);
    return read && memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 ? header.e_type : 0;
}

/* Where the executable of `pid` is mapped: the first line of its maps. */
static unsigned long long executable_base(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *file = fopen(path, "re");
    unsigned long long start = 0;
    if (file) {
        if (fscanf(file, "%llx-", &start) != 1)
            start = 0;
        fclose(file);
    }
    return start;
}

/* The address in auxv's AT_RANDOM entry of `pid`; 0 when unreadable. */
static unsigned long long at_random_address(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
    FILE *file = fopen(path, "re");
    unsigned long long pair[2], address = 0;
    while (file && fread(pair, sizeof pair, 1, file) == 1 && pair[0] != AT_NULL)
        if (pair[0] == AT_RANDOM)
            address = pair[1];
    if (file)
        fclose(file);
    return address;
}

static bool aslr_off(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/personality", (int)pid);
    FILE *file = fopen(path, "re");
    unsigned long persona = 0;
    bool read = file && fscanf(file, "%lx", &persona) == 1;
    if (file)
        fclose(file);
    return read && (persona & ADDR_NO_RANDOMIZE);
}

/* ---- how the fixtures are started ----------------------------------------------------------------------------- */

/* Starts fixture `name` with `argument` (NULL: none), under setarch -R when `without_aslr`. */
static void start(struct fixture *fixture, const char *name, const char *argument, bool without_aslr,
                  long timeout_ms)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", fixture_path(name));
    struct utsname machine;
    cr_assert_eq(uname(&machine), 0);
    if (without_aslr) {
        if (access(SETARCH, X_OK) != 0)
            cr_skip_test("%s is not installed (util-linux): no test with ASLR off", SETARCH);
        const char *argv[] = { "setarch", machine.machine, "-R", path, argument, NULL };
        fixture_start_command(fixture, SETARCH, argv, timeout_ms);
    } else {
        const char *argv[] = { name, argument, NULL };
        fixture_start_command(fixture, path, argv, timeout_ms);
    }
}

/* ---- a C program, forked and exec'd ---------------------------------------------------------------------------- */

/* origin_tree.c: a parent, a child forked from it, a child that exec'd the program again. */
static void expect_forked_and_execed(const char *name, bool without_aslr)
{
    struct fixture fixture;
    start(&fixture, name, NULL, without_aslr, 10000);
    pid_t parent = fixture.pids[0], forked = fixture.pids[1], execed = fixture.pids[2];
    /* the load address cannot tell them apart: the test hangdoc made before would call both forked */
    cr_assert_eq(executable_base(execed), executable_base(parent), "the exec'd copy maps where its parent does");
    if (without_aslr) {
        cr_assert(aslr_off(parent) && aslr_off(execed), "setarch -R turned ASLR off");
        /* the same argv length and environment: the very same AT_RANDOM address, only the bytes differ */
        cr_assert_eq(at_random_address(execed), at_random_address(parent));
    }
    json_object *document = diagnose_expecting(parent, EXIT_NO_HANG);
    expect_origin(document, forked, "forked", "at-random-same");
    expect_origin(document, execed, "exec", "at-random-different");
    expect_no_fork_finding(document);
    json_object_put(document);

    struct run_result result;
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)parent);
    hangdoc_run(&result, (const char *[]){ "--samples", "2", "--interval", "100ms", pid_text, NULL });
    cr_assert(strstr(result.out, "origin: forked (AT_RANDOM bytes as its parent's)"), "%s", result.out);
    cr_assert(strstr(result.out, "origin: exec (AT_RANDOM bytes not its parent's)"), "%s", result.out);
    run_result_free(&result);
    fixture_stop(&fixture);
}

Test(origin, children_of_a_non_pie_executable_are_told_apart)
{
    cr_assert_eq(elf_type(fixture_path("origin_tree")), ET_EXEC, "origin_tree is built with -no-pie");
    expect_forked_and_execed("origin_tree", false);
}

Test(origin, children_of_a_non_pie_executable_with_aslr_off)
{
    expect_forked_and_execed("origin_tree", true);
}

Test(origin, children_of_a_pie_executable_with_aslr_off)
{
    cr_assert_eq(elf_type(fixture_path("origin_tree_pie")), ET_DYN, "origin_tree_pie is position-independent");
    expect_forked_and_execed("origin_tree_pie", true);
}

/* As nobody, root's processes cannot be read: origins unknown, never forked, and a note says why. */
Test(origin, another_users_children_are_unknown_with_a_note)
{
    struct fixture fixture;
    fixture_start(&fixture, "origin_tree");
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)fixture.pids[0]);
    struct run_result result;
    hangdoc_run_as(&result, 65534, (const char *[]){ "--json", "--samples", "1", pid_text, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "JSON: %s %s", result.out, result.err);
    json_validate(result.out);
    for (size_t i = 1; i < 3; i++)
        expect_origin(document, fixture.pids[i], "unknown", "unreadable");
    cr_assert(json_has_note(document, "origin unknown (the AT_RANDOM bytes tell a fork from an exec): its auxv "
                                      "could not be read: owned by uid 0, and hangdoc runs as uid 65534"),
              "%s", result.out);
    json_object_put(document);
    run_result_free(&result);
    fixture_stop(&fixture);
}

/* ---- Python's multiprocessing: fork, spawn and forkserver children of one main process ---------------------------- */

/* mp_origins.py: main, 2 spawn workers, a fork child, the forkserver, its child; all idle, nothing inherited. */
static void expect_python_origins(const char *python, bool without_aslr)
{
    struct fixture fixture;
    start(&fixture, "mp_origins", python, without_aslr, PYTHON_READY_TIMEOUT_MS);
    cr_assert_eq(fixture.npids, 6, "main, 2 spawn workers, a fork child, the forkserver and its child");
    pid_t main_pid = fixture.pids[0], forkserver = fixture.pids[4];
    if (without_aslr)
        cr_assert(aslr_off(main_pid), "setarch -R turned ASLR off");
    json_object *document = diagnose_expecting(main_pid, EXIT_NO_HANG);
    cr_assert_not(json_bool_at(document, "verdict.hung"), "%s", json_object_to_json_string(json_at(document, "verdict")));
    expect_no_fork_finding(document);
    cr_assert_str_eq(json_string_at(json_process(document, main_pid), "python_role"), "main");
    for (size_t w = 1; w <= 2; w++) {
        expect_origin(document, fixture.pids[w], "spawn", "at-random-different");
        cr_assert_str_eq(json_string_at(json_process(document, fixture.pids[w]), "python_role"), "spawn-child");
    }
    expect_origin(document, fixture.pids[3], "forked", "at-random-same");
    cr_assert_str_eq(json_string_at(json_process(document, fixture.pids[3]), "python_role"), "fork-child");
    expect_origin(document, forkserver, "exec", "at-random-different");
    cr_assert_str_eq(json_string_at(json_process(document, forkserver), "python_role"), "forkserver");
    expect_origin(document, fixture.pids[5], "forkserver", "at-random-same");
    cr_assert_eq(json_int_at(json_process(document, fixture.pids[5]), "ppid", -1), forkserver);
    json_object_put(document);
    fixture_stop(&fixture);
}

Test(origin, python_children_of_the_system_python)
{
    expect_python_origins(SYSTEM_PYTHON, false);
}

Test(origin, python_children_of_the_system_python_with_aslr_off)
{
    expect_python_origins(SYSTEM_PYTHON, true);
}

/* Python 3.14 of Debian's development suite (its default start method is the forkserver; the fixture names each) */
Test(origin, python_children_of_cpython_3_14)
{
    char python[4200];
    python_modern(14, python, sizeof python);
    expect_python_origins(python, false);
    unlink(python);
}

/* The newest position-independent CPython 3 of pyenv, in `path`; false when there is none. */
static bool pyenv_pie_python(char *path, size_t size)
{
    char root[4096], pattern[4200];
    if (!python_pyenv_root(root, sizeof root))
        return false;
    snprintf(pattern, sizeof pattern, "%s/versions/3.*/bin/python3", root);
    glob_t found;
    if (glob(pattern, 0, NULL, &found) != 0)
        return false;
    int best_minor = -1;
    for (size_t i = 0; i < found.gl_pathc; i++) {
        const char *version = strstr(found.gl_pathv[i], "/versions/3.");
        int minor;
        if (!version || sscanf(version, "/versions/3.%d", &minor) != 1 || minor < 8 || minor <= best_minor ||
            access(found.gl_pathv[i], X_OK) != 0 || elf_type(found.gl_pathv[i]) != ET_DYN)
            continue;
        best_minor = minor;
        snprintf(path, size, "%s", found.gl_pathv[i]);
    }
    globfree(&found);
    return best_minor >= 0;
}

static void expect_pyenv_origins(bool without_aslr)
{
    char python[4096];
    if (!pyenv_pie_python(python, sizeof python))
        cr_skip_test("no position-independent CPython 3.8 or later under the pyenv root ($PYENV_ROOT, `pyenv root` "
                     "or ~/.pyenv): install one with `pyenv install 3.12`");
    cr_log_info("pyenv's Python: %s", python);
    expect_python_origins(python, without_aslr);
}

Test(origin, python_children_of_a_pie_python)
{
    expect_pyenv_origins(false);
}

Test(origin, python_children_of_a_pie_python_with_aslr_off)
{
    expect_pyenv_origins(true);
}
