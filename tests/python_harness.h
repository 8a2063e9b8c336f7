/* What the Python scenario tests share: the CPythons to run a fixture with (Debian's, and every pyenv 3.x found at
 * test time), the lines a fixture marks "# where: NAME", and checks of the Python view in a JSON report.
 */
#pragma once

#include "harness.h"

#include <stdbool.h>
#include <stddef.h>

#define SYSTEM_PYTHON "/usr/bin/python3"
#define PYTHONS_MAX 8

struct pythons {
    char paths[PYTHONS_MAX][4096];
    size_t count;
};

/* The pyenv root: $PYENV_ROOT, what `pyenv root` says, or ~/.pyenv; false when none can be named. */
bool python_pyenv_root(char *root, size_t size);
/* Every pyenv CPython 3.`minor`.x (<root>/versions/3.<minor>.*\/bin/python3.<minor>, the root from $PYENV_ROOT,
 * `pyenv root` or ~/.pyenv). Skips the test, saying how to install one, when there is none. */
void python_pyenv_versions(unsigned minor, struct pythons *found);

/* From this minor version on, the interpreter is Debian's development suite's, run in its chroot (tests/modern/). */
#define MODERN_MINOR 14

/* The chroot of Debian's development suite ($HANGDOC_MODERN_ROOT, built by tests/modern/chroot.sh); skips the test
 * with the reason the builder left when there is none. */
const char *python_modern_root(void);
/* A launcher that runs the chroot's /usr/bin/python3.`minor` in it (tests/modern/in_sid), for a fixture's
 * interpreter; python_line_holds() reads the chroot's files from then on. Skips the test when there is no chroot. */
void python_modern(unsigned minor, char *launcher, size_t size);

/* Runs `expect` with Debian's /usr/bin/python3 (minor 0: any), with every pyenv CPython 3.`minor`, or from
 * MODERN_MINOR on with the development suite's in its chroot; skips the test, saying so, when there is none, and
 * under a sanitizer for the versions between (the system Python and 3.13 stay). */
void python_each_version(unsigned minor, void (*expect)(const char *python, unsigned minor));

/* The same as a user's machine has it: with hangdoc's separate debug files off (HANGDOC_DEBUG_FILES=0, so libc6-dbg
 * and any python3.X-dbg name nothing) and the interpreters stripped as distributions ship them: Debian's python3
 * is; a pyenv 3.`minor` is copied with its libpython into a temporary directory, both stripped of .symtab
 * (strip --strip-unneeded), and run from there (LD_LIBRARY_PATH before its RUNPATH, PYTHONHOME its own prefix).
 * The environment is restored afterwards. */
void python_each_stock_version(unsigned minor, void (*expect)(const char *python, unsigned minor));

/* The line of tests/scenarios/`script` marked "# where: NAME"; fails the test when none is. */
long python_marked_line(const char *script, const char *name);
/* Whether line `number` of the file `path` contains `part`: lines of the standard library differ by version. */
bool python_line_holds(const char *path, long number, const char *part);

/* The python_frames array of thread `tid` of process `pid`; fails the test when the thread is absent. */
json_object *python_frames_of(json_object *document, pid_t pid, pid_t tid);
/* The function of a frame: CPython 3.10 has no qualified names (co_qualname came in 3.11). */
const char *python_function_name(const char *qualified, unsigned minor);
/* Frame `index` of `frames` runs `function` in a file named `file`, at `line` (0: any line > 0). */
void expect_python_frame(json_object *frames, size_t index, const char *function, const char *file, long line,
                         unsigned minor);
/* Frame `index` is in threading.py, at a line that holds `statement` in that very file. */
void expect_threading_frame(json_object *frames, size_t index, const char *function, const char *statement,
                            unsigned minor);
/* Thread `tid` of `pid` stands `state` ("holds", "waits", "released", "none") with the GIL. */
void expect_gil(json_object *document, pid_t pid, pid_t tid, const char *state);
/* A note of kind python in the report. */
bool has_python_note(json_object *document);
/* The report's python object says 3.`minor` (any minor when *minor is 0: *minor is set from it), and no python
 * note came with it. */
void expect_python_version(json_object *document, pid_t pid, unsigned *minor);
