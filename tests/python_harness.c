/* Python scenario helpers (python_harness.h). */
#include "python_harness.h"

#include <criterion/criterion.h>
#include <glob.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the interpreters ---------------------------------------------------------------------------------------- */

/* The pyenv root: $PYENV_ROOT, what `pyenv root` says, or ~/.pyenv. */
bool python_pyenv_root(char *root, size_t size)
{
    const char *set = getenv("PYENV_ROOT");
    if (set && *set) {
        snprintf(root, size, "%s", set);
        return true;
    }
    FILE *command = popen("pyenv root 2>/dev/null", "re");
    bool said = command && fgets(root, (int)size, command) && root[0] == '/';
    if (command)
        pclose(command);
    if (said) {
        root[strcspn(root, "\n")] = '\0';
        return true;
    }
    const char *home = getenv("HOME");
    if (!home)
        return false;
    snprintf(root, size, "%s/.pyenv", home);
    return true;
}

/* Every pyenv CPython 3.`minor`.x: <root>/versions/3.<minor>.*\/bin/python3.<minor>. Skips the test when none. */
void python_pyenv_versions(unsigned minor, struct pythons *found)
{
    char root[4096], pattern[4300];
    found->count = 0;
    if (python_pyenv_root(root, sizeof root)) {
        snprintf(pattern, sizeof pattern, "%s/versions/3.%u.*/bin/python3.%u", root, minor, minor);
        glob_t matches;
        if (glob(pattern, 0, NULL, &matches) == 0) {
            for (size_t i = 0; i < matches.gl_pathc && found->count < PYTHONS_MAX; i++)
                if (access(matches.gl_pathv[i], X_OK) == 0)
                    snprintf(found->paths[found->count++], sizeof found->paths[0], "%s", matches.gl_pathv[i]);
            globfree(&matches);
        }
    }
    if (found->count == 0)
        cr_skip_test("no CPython 3.%u under the pyenv root ($PYENV_ROOT, `pyenv root` or ~/.pyenv): "
                     "`pyenv install 3.%u` to test it", minor, minor);
}

/* ---- Debian's development suite --------------------------------------------------------------------------- */

/* Where the files of the interpreter under test lie for this process: "" for one of this machine's, the chroot for
 * one of Debian's development suite (its frames name files inside the chroot). */
static char python_files_root[4096];

const char *python_modern_root(void)
{
    const char *root = getenv("HANGDOC_MODERN_ROOT");
    char stamp[4200], unusable[4200], why[512] = "";
    if (!root || !*root)
        cr_skip_test("HANGDOC_MODERN_ROOT is not set: meson sets it for the tests");
    snprintf(stamp, sizeof stamp, "%s/.hangdoc-modern", root);
    if (access(stamp, R_OK) == 0)
        return root;
    snprintf(unusable, sizeof unusable, "%s.unusable", root);
    FILE *file = fopen(unusable, "re");
    if (file) {
        if (!fgets(why, sizeof why, file))
            why[0] = '\0';
        fclose(file);
        why[strcspn(why, "\n")] = '\0';
    }
    cr_skip_test("Debian's development suite: %s", why[0] ? why : "no chroot yet (bash tests/modern/chroot.sh builds it)");
    return NULL;
}

/* The command that runs `program` of the chroot: tests/modern/in_sid PROGRAM, as a script of its own (the fixture
 * launchers take one path for the interpreter). Written once per test process. */
static void modern_launcher(const char *program, char *launcher, size_t size)
{
    const char *root = python_modern_root();
    snprintf(launcher, size, "/tmp/hangdoc-modern-%d-%s", (int)getpid(), strrchr(program, '/') + 1);
    FILE *file = fopen(launcher, "we");
    cr_assert_not_null(file, "%s", launcher);
    fprintf(file, "#!/bin/sh\nexec '%s/tests/modern/in_sid' '%s' \"$@\"\n", getenv("HANGDOC_SOURCE_ROOT"), program);
    fclose(file);
    cr_assert_eq(chmod(launcher, 0755), 0);
    snprintf(python_files_root, sizeof python_files_root, "%s", root);
}

void python_modern(unsigned minor, char *launcher, size_t size)
{
    char program[64];
    snprintf(program, sizeof program, "/usr/bin/python3.%u", minor);
    modern_launcher(program, launcher, size);
}

/* ---- reading the report -------------------------------------------------------------------------------------- */

long python_marked_line(const char *script, const char *name)
{
    char path[4096], text[512];
    snprintf(path, sizeof path, "%s/tests/scenarios/%s", getenv("HANGDOC_SOURCE_ROOT"), script);
    FILE *file = fopen(path, "re");
    cr_assert_not_null(file, "%s readable", path);
    long number = 0, found = 0;
    while (!found && fgets(text, sizeof text, file)) {
        number++;
        const char *mark = strstr(text, "# where: ");
        if (mark && strncmp(mark + 9, name, strlen(name)) == 0 && (mark[9 + strlen(name)] == '\n' ||
                                                                   mark[9 + strlen(name)] == '\0'))
            found = number;
    }
    fclose(file);
    cr_assert_gt(found, 0, "%s marks a line '# where: %s'", script, name);
    return found;
}

/* Whether line `number` of the file `path` contains `part`: lines of the standard library differ by version. */
bool python_line_holds(const char *path, long number, const char *part)
{
    char text[1024], rooted[8300];
    snprintf(rooted, sizeof rooted, "%s%s", path[0] == '/' ? python_files_root : "", path);
    FILE *file = fopen(rooted, "re");
    if (!file)
        return false;
    bool holds = false;
    for (long n = 1; !holds && fgets(text, sizeof text, file); n++)
        if (n == number)
            holds = strstr(text, part) != NULL;
    fclose(file);
    return holds;
}

json_object *python_frames_of(json_object *document, pid_t pid, pid_t tid)
{
    json_object *thread = json_thread(json_process(document, pid), tid);
    cr_assert_not_null(thread, "thread %d in the report", (int)tid);
    return json_at(thread, "python_frames");
}

/* The function of a frame: CPython 3.10 has no qualified names (co_qualname came in 3.11). */
const char *python_function_name(const char *qualified, unsigned minor)
{
    const char *dot = strrchr(qualified, '.');
    return minor < 11 && dot ? dot + 1 : qualified;
}

/* Frame `index` of `frames` runs `function` in a file named `file`, at `line` (0: any line > 0). */
void expect_python_frame(json_object *frames, size_t index, const char *function, const char *file, long line,
                         unsigned minor)
{
    json_object *frame = json_object_array_get_idx(frames, index);
    cr_assert_not_null(frame, "frame %zu of %s", index, json_object_to_json_string(frames));
    const char *path = json_string_at(frame, "file");
    const char *base = strrchr(path, '/');
    cr_assert_str_eq(json_string_at(frame, "function"), python_function_name(function, minor), "frame %zu: %s", index,
                     json_object_to_json_string(frames));
    cr_assert_str_eq(base ? base + 1 : path, file, "frame %zu: %s", index, json_object_to_json_string(frames));
    if (line)
        cr_assert_eq(json_int_at(frame, "line", -1), line, "frame %zu: %s", index,
                     json_object_to_json_string(frames));
    else
        cr_assert_gt(json_int_at(frame, "line", -1), 0, "frame %zu: %s", index, json_object_to_json_string(frames));
}

/* Frame `index` is in threading.py, at a line that holds `statement` in that very file. */
void expect_threading_frame(json_object *frames, size_t index, const char *function, const char *statement,
                                   unsigned minor)
{
    expect_python_frame(frames, index, function, "threading.py", 0, minor);
    json_object *frame = json_object_array_get_idx(frames, index);
    cr_assert(python_line_holds(json_string_at(frame, "file"), json_int_at(frame, "line", 0), statement),
              "line %lld of %s holds '%s'", json_int_at(frame, "line", 0), json_string_at(frame, "file"), statement);
}

void expect_gil(json_object *document, pid_t pid, pid_t tid, const char *state)
{
    json_object *thread = json_thread(json_process(document, pid), tid);
    const char *gil = json_string_at(thread, "gil");
    cr_assert(gil && strcmp(gil, state) == 0, "thread %d: gil %s, expected %s", (int)tid, gil ? gil : "(none)",
              state);
}

bool has_python_note(json_object *document)
{
    json_object *notes = json_at(document, "notes");
    for (size_t n = 0; notes && n < json_object_array_length(notes); n++) {
        const char *kind = json_string_at(json_object_array_get_idx(notes, n), "kind");
        if (kind && strcmp(kind, "python") == 0)
            return true;
    }
    return false;
}

/* The report's python object says 3.`minor` (and, for Debian's, any minor: *minor is set from it). */
void expect_python_version(json_object *document, pid_t pid, unsigned *minor)
{
    const char *version = json_string_at(json_process(document, pid), "python.version");
    cr_assert_not_null(version, "a python object: %s", json_object_to_json_string(json_at(document, "notes")));
    unsigned major, said;
    cr_assert_eq(sscanf(version, "%u.%u", &major, &said), 2, "version %s", version);
    cr_assert_eq(major, 3);
    if (*minor)
        cr_assert_eq(said, *minor, "version %s", version);
    *minor = said;
    cr_assert_not(has_python_note(document));
}

/* The sanitized run takes the system Python (3.11) and the newest layout (3.13, with its debug offsets) only: the
 * plain run takes every version, and the fuzz harnesses drive the walk over every layout under the sanitizers. */
#define SANITIZED_MINOR_NEWEST 13

static bool sanitized(void)
{
    const char *sanitize = getenv("HANGDOC_SANITIZE");
    return sanitize && strcmp(sanitize, "none") != 0;
}

void python_each_version(unsigned minor, void (*expect)(const char *python, unsigned minor))
{
    if (minor != 0 && minor != SANITIZED_MINOR_NEWEST && sanitized())
        cr_skip_test("3.%u: the sanitized run takes the system Python and 3.%u (the plain run, every version)", minor,
                     SANITIZED_MINOR_NEWEST);
    if (minor == 0) {
        if (access(SYSTEM_PYTHON, X_OK) != 0)
            cr_skip_test("no %s", SYSTEM_PYTHON);
        expect(SYSTEM_PYTHON, 0);
        return;
    }
    if (minor >= MODERN_MINOR) {
        char launcher[4200];
        python_modern(minor, launcher, sizeof launcher);
        expect(launcher, minor);
        unlink(launcher);
        return;
    }
    struct pythons found;
    python_pyenv_versions(minor, &found);
    for (size_t i = 0; i < found.count; i++)
        expect(found.paths[i], minor);
}

/* bin/python3.X and lib/libpython3.X.so.1.0 of the pyenv prefix above `python`, stripped, into `directory`; the
 * copy's path in `copy`. */
static void strip_a_copy(const char *python, unsigned minor, const char *directory, char *copy, size_t size)
{
    char prefix[2048], library[4096], copied_library[4096];
    snprintf(prefix, sizeof prefix, "%s", python);
    for (int up = 0; up < 2; up++) { /* <prefix>/bin/python3.X */
        char *slash = strrchr(prefix, '/');
        cr_assert_not_null(slash, "%s has a prefix", python);
        *slash = '\0';
    }
    snprintf(library, sizeof library, "%s/lib/libpython3.%u.so.1.0", prefix, minor);
    snprintf(copy, size, "%s/python3.%u", directory, minor);
    snprintf(copied_library, sizeof copied_library, "%s/libpython3.%u.so.1.0", directory, minor);
    if (access(library, R_OK) != 0)
        cr_skip_test("%s: no shared libpython to strip", python);
    const char *const steps[][6] = {
        { "/bin/cp", python, copy, NULL },
        { "/bin/cp", library, copied_library, NULL },
        { "/usr/bin/strip", "--strip-unneeded", copy, NULL },
        { "/usr/bin/strip", "--strip-unneeded", copied_library, NULL },
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct run_result result;
        program_run_as(&result, -1, steps[i]);
        cr_assert_eq(result.exit_status, 0, "%s %s: %s", steps[i][0], steps[i][1], result.err);
        run_result_free(&result);
    }
    /* the copy runs through a script that sets its environment and execs it (the same pid): set in the test
     * process, PYTHONHOME would break Debian's python3 that validates the reports */
    char launcher[4200];
    snprintf(launcher, sizeof launcher, "%s/python", directory);
    FILE *file = fopen(launcher, "w");
    cr_assert_not_null(file);
    fprintf(file, "#!/bin/sh\nPYTHONHOME='%s' LD_LIBRARY_PATH='%s' exec '%s' \"$@\"\n", prefix, directory, copy);
    fclose(file);
    cr_assert_eq(chmod(launcher, 0755), 0);
    snprintf(copy, size, "%s", launcher);
}

void python_each_stock_version(unsigned minor, void (*expect)(const char *python, unsigned minor))
{
    setenv("HANGDOC_DEBUG_FILES", "0", 1);
    if (minor == 0) {
        python_each_version(0, expect);
        unsetenv("HANGDOC_DEBUG_FILES");
        return;
    }
    if (minor != SANITIZED_MINOR_NEWEST && sanitized())
        cr_skip_test("3.%u: the sanitized run takes the system Python and 3.%u", minor, SANITIZED_MINOR_NEWEST);
    if (minor >= MODERN_MINOR) { /* Debian's development suite ships its interpreters stripped already */
        python_each_version(minor, expect);
        unsetenv("HANGDOC_DEBUG_FILES");
        return;
    }
    struct pythons found;
    python_pyenv_versions(minor, &found);
    for (size_t i = 0; i < found.count; i++) {
        char directory[] = "/tmp/hangdoc-stripped-XXXXXX", copy[4200];
        cr_assert_not_null(mkdtemp(directory));
        strip_a_copy(found.paths[i], minor, directory, copy, sizeof copy);
        expect(copy, minor);
        struct run_result result;
        program_run_as(&result, -1, (const char *[]){ "/bin/rm", "-rf", directory, NULL });
        run_result_free(&result);
    }
    unsetenv("HANGDOC_DEBUG_FILES");
}
