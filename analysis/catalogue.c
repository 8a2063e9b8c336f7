/* The runtime catalogue (catalogue.h). */
#include "catalogue.h"

#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CATALOGUE_FILE_MAX (1 << 20)
#define CATALOGUE_ROWS_MAX 512
#define CATALOGUE_REMEDIES_MAX 16

struct builtin_row {
    const char *id, *name, *libraries, *threads, *handles;
    enum report_fork_safety safety;
    const char *reason;
    const char *remedies[4];
    unsigned traits;
    const char *functions; /* NULL: none */
};

/* DESIGN.md's list. Handle patterns "class:NAME" match an fd of that class (hd_fd_class_name). */
static const struct builtin_row builtin_rows[] = {
    { "cuda", "NVIDIA CUDA",
      "libcuda.so* libcudart.so* libnvidia-*.so* libnccl.so* libcudnn*.so* libcublas*.so* libnvrtc*.so*",
      "cuda-EvtHandlr cuda0* cuda-*", "/dev/nvidia* class:nvidia class:nvidia-uvm", REPORT_FORK_UNSAFE,
      "a CUDA context does not survive fork(): the child inherits the driver's locks, memory maps and device "
      "handles, but not the threads that serve them",
      { "Move every CUDA touch after the DataLoader (or the Pool) is created, import-time calls hidden in utility "
        "modules included: .to('cuda'), torch.cuda.is_available() and torch.cuda.device_count() all initialise "
        "CUDA in the parent.",
        "Set pin_memory=False while debugging: the pin-memory thread drives CUDA.",
        "Or start the workers with spawn: torch.multiprocessing.set_start_method('spawn', force=True). "
        "CUDA_LAUNCH_BLOCKING=1 does not help with these hangs." },
      REPORT_RUNTIME_GPU_CONTEXT },
    { "gnu-openmp", "GNU OpenMP", "libgomp.so*", "", "", REPORT_FORK_UNSAFE,
      "libgomp keeps its thread pool across fork() without the threads: the child's next parallel region waits "
      "for ever for pool threads that exist only in the parent",
      { "Run the workers single-threaded: OMP_NUM_THREADS=1 in their environment, or torch.set_num_threads(1) "
        "before their first parallel region (a DataLoader worker_init_fn must not raise it again).",
        "Or start the workers with spawn or forkserver, so that no OpenMP pool is copied.",
        "Or build with LLVM libomp or Intel libiomp5, which are fork-aware." } },
    { "llvm-openmp", "LLVM OpenMP", "libomp.so* libomp5.so*", "", "", REPORT_FORK_AWARE,
      "libomp re-initialises its runtime in a forked child (pthread_atfork)", { NULL } },
    { "intel-openmp", "Intel OpenMP", "libiomp5.so* libiompstubs5.so*", "", "", REPORT_FORK_AWARE,
      "libiomp5 re-initialises its runtime in a forked child (pthread_atfork)", { NULL } },
    { "openblas", "OpenBLAS", "libopenblas*.so* *openblas*/libblas.so* *openblas*/liblapack.so*", "", "", REPORT_FORK_DEPENDS,
      "the pthreads build of OpenBLAS resets its pool at fork(); the OpenMP build inherits libgomp's problem",
      { "OPENBLAS_NUM_THREADS=1 in the workers, or start them with spawn." } },
    { "mkl", "Intel MKL", "libmkl_*.so*", "", "", REPORT_FORK_DEPENDS,
      "MKL's threads come from its threading layer: GNU OpenMP is not fork-safe, Intel OpenMP and TBB differ",
      { "MKL_NUM_THREADS=1 (or MKL_THREADING_LAYER=SEQUENTIAL) in the workers, or start them with spawn." } },
    { "opencv", "OpenCV", "libopencv_*.so* cv2*.so", "", "", REPORT_FORK_DEPENDS,
      "OpenCV's fork safety depends on its parallel backend: TBB, OpenMP or pthreads",
      { "Call cv2.setNumThreads(0) in the parent before the workers are created (and in worker_init_fn).",
        "Use opencv-python-headless: the GUI build also loads Qt." } },
    { "tbb", "Intel oneTBB", "libtbb.so* libtbbmalloc.so* libtbb12.so*", "tbb*", "", REPORT_FORK_UNSAFE,
      "TBB's worker threads and its scheduler state are not rebuilt in a forked child",
      { "Create the workers before the first TBB parallel algorithm runs, or start them with spawn." } },
    { "qt", "Qt", "libQt5Core.so* libQt6Core.so* libQt5Gui.so* libQt6Gui.so*",
      "QThread QXcbEventQueue QDBusConnection Qt*", "", REPORT_FORK_UNSAFE,
      "Qt's event loop threads and their locks stay in the parent; the child shares its display connection",
      { "Do not load Qt in the parent of forked workers: matplotlib.use('Agg'), opencv-python-headless.",
        "Or start the workers with spawn." } },
    { "x11", "X11 / xcb", "libX11.so* libxcb.so*", "", "class:x11", REPORT_FORK_UNSAFE,
      "the child shares the parent's X connection: requests of both interleave on one socket, and Xlib's locks "
      "may be held",
      { "Open no display in the parent of forked workers (a headless backend), or start them with spawn." } },
    { "wayland", "Wayland", "libwayland-client.so*", "", "class:wayland", REPORT_FORK_UNSAFE,
      "the child shares the parent's Wayland connection and its queue locks",
      { "Open no display in the parent of forked workers, or start them with spawn." } },
    { "glib", "GLib / GIO", "libglib-2.0.so* libgio-2.0.so* libgobject-2.0.so*", "gmain gdbus pool-*",
      "class:dbus", REPORT_FORK_UNSAFE,
      "the gmain and gdbus threads hold GLib's locks and the D-Bus connection; the child has neither thread",
      { "Keep GLib/GIO (and the GTK or D-Bus code that starts it) out of the parent of forked workers, or start "
        "them with spawn." } },
    { "hdf5", "HDF5 (h5py)", "libhdf5*.so* h5py*.so */h5py/*.so", "", "*.h5 *.hdf5", REPORT_FORK_UNSAFE,
      "open HDF5 files and the library's global lock are copied into the child",
      { "Open HDF5 files inside each worker (lazily in __getitem__ or in worker_init_fn), never in the parent." } },
    { "matplotlib-gui", "matplotlib GUI backend", "_tkinter*.so libtk8*.so* libtcl8*.so* libgtk-3.so*", "", "",
      REPORT_FORK_UNSAFE, "a GUI backend starts an event loop and opens a display the forked child cannot use",
      { "matplotlib.use('Agg') before anything is plotted; never plot or log images in __getitem__." } },
    { "grpc", "gRPC", "libgrpc*.so* cygrpc*.so", "grpc_* default-execut* resolver-execut*", "",
      REPORT_FORK_DEPENDS,
      "gRPC survives fork() only with fork support switched on (GRPC_ENABLE_FORK_SUPPORT) and a poller that has it",
      { "Set GRPC_ENABLE_FORK_SUPPORT=true, or create channels only after forking." } },
    { "pytorch", "PyTorch", "libtorch_cpu.so* libtorch.so* libc10.so*", "pt_main_thread pt_autograd_*", "",
      REPORT_FORK_DEPENDS,
      "PyTorch marks CUDA unusable in a forked child and resets its own pools; its OpenMP runtime decides the rest",
      { "Start DataLoader workers with spawn (multiprocessing_context='spawn'), or keep them single-threaded." } },
    /* glibc's own locks, in libc's data. The first row names the library (any lock of libc's); the rows after it
     * name one lock each by the functions that take it, as the waiter's stack shows them. glibc resets malloc's
     * arenas, the stdio streams, the dynamic loader's lock and NSS in the child (posix/fork.c); these it does not. */
    { "glibc", "a lock inside glibc", "libc.so.6", "", "", REPORT_FORK_UNSAFE,
      "glibc resets only some of its own locks in a forked child (malloc's, the stdio streams', the dynamic "
      "loader's); a child forked while another thread held any other one waits for it for ever",
      { "The lock is glibc's own: fork only before the program starts threads, or exec at once in the child "
        "(posix_spawn, subprocess), or start the workers with spawn." },
      REPORT_RUNTIME_LIBC_INTERNAL },
    { "glibc-atexit", "glibc's atexit lock", "", "", "", REPORT_FORK_UNSAFE,
      "glibc does not reset __exit_funcs_lock at fork(): a child forked while another thread was in atexit() or "
      "__cxa_atexit() waits for it for ever (pytorch#130610)",
      { "The lock is glibc's own: do not register atexit handlers (atexit, __cxa_atexit: also C++ function-local "
        "statics and libraries loaded with dlopen) in a thread while another thread may fork; register them before "
        "starting threads, or exec at once in the child (posix_spawn, subprocess), or start the workers with "
        "spawn." },
      REPORT_RUNTIME_LIBC_INTERNAL,
      "atexit __cxa_atexit on_exit at_quick_exit __new_exitfn __internal_atexit __cxa_thread_atexit_impl exit "
      "__run_exit_handlers __cxa_finalize quick_exit" },
    { "glibc-tz", "glibc's time-zone lock", "", "", "", REPORT_FORK_UNSAFE,
      "glibc does not reset its time-zone lock (tzset_lock) at fork(): a child forked while another thread was "
      "converting a time (localtime_r, gmtime_r, mktime, strftime) waits for it for ever at its own first conversion",
      { "The lock is glibc's own: in the child of a threaded process convert no time before exec (a logger that "
        "stamps each line with localtime_r is the usual holder in the parent), or exec at once (posix_spawn, "
        "subprocess), or start the workers with spawn." },
      REPORT_RUNTIME_LIBC_INTERNAL,
      "*localtime* *gmtime* *mktime* timelocal timegm *tzset* __tz_convert __tz_compute __tzfile_* ctime ctime_r "
      "*strftime*" },
    { "glibc-locale", "glibc's locale lock", "", "", "", REPORT_FORK_UNSAFE,
      "glibc does not reset the lock of setlocale() and newlocale() at fork(): a child forked while another thread "
      "was changing or loading a locale waits for it for ever",
      { "The lock is glibc's own: set the locale once, before the program starts threads; in the child of a "
        "threaded process call no setlocale or newlocale before exec; or start the workers with spawn." },
      REPORT_RUNTIME_LIBC_INTERNAL,
      "setlocale newlocale duplocale freelocale __newlocale __duplocale __freelocale _nl_find_locale" },
    { "glibc-gettext", "glibc's message catalogue lock", "", "", "", REPORT_FORK_UNSAFE,
      "glibc does not reset the lock of its message catalogues at fork(): a child forked while another thread was "
      "translating a message (gettext, strerror, perror) waits for it for ever",
      { "The lock is glibc's own: in the child of a threaded process translate no message before exec (strerror "
        "and perror translate too; strerrordesc_np does not), or start the workers with spawn." },
      REPORT_RUNTIME_LIBC_INTERNAL,
      "*gettext* __dcigettext textdomain bindtextdomain bind_textdomain_codeset strerror strerror_l __strerror_r "
      "strsignal perror psignal" },
    { "glibc-syslog", "glibc's syslog lock", "", "", "", REPORT_FORK_UNSAFE,
      "glibc does not reset the lock of syslog() at fork(): a child forked while another thread was logging "
      "through it waits for it for ever at its first log line",
      { "The lock is glibc's own: in the child of a threaded process log through syslog only after exec, or start "
        "the workers with spawn." },
      REPORT_RUNTIME_LIBC_INTERNAL,
      "syslog vsyslog __syslog_chk __vsyslog_chk __vsyslog_internal openlog closelog" },
    { "glibc-env", "glibc's environment lock", "", "", "", REPORT_FORK_UNSAFE,
      "glibc does not reset the lock of setenv(), putenv() and unsetenv() at fork(): a child forked while another "
      "thread changed the environment waits for it for ever",
      { "The lock is glibc's own: change the environment only before the program starts threads; give a child its "
        "environment through exec (execve, posix_spawn, subprocess's env=) instead of setenv; or start the "
        "workers with spawn." },
      REPORT_RUNTIME_LIBC_INTERNAL,
      "setenv unsetenv putenv clearenv __add_to_environ __setenv __unsetenv" },
    { "glibc-random", "glibc's random() lock", "", "", "", REPORT_FORK_UNSAFE,
      "glibc does not reset the lock of random() and rand() at fork(): a child forked while another thread drew "
      "a number waits for it for ever at its own first draw",
      { "The lock is glibc's own: in a process that forks, draw numbers in threads with random_r, rand_r or a "
        "generator of the program's own; or start the workers with spawn." },
      REPORT_RUNTIME_LIBC_INTERNAL,
      "random srandom initstate setstate rand srand __random __srandom __initstate __setstate" },
};

static void row_release(struct report_runtime *row)
{
    free(row->id);
    free(row->name);
    free(row->libraries);
    free(row->threads);
    free(row->handles);
    free(row->functions);
    free(row->reason);
    for (size_t r = 0; r < row->nremedies; r++)
        free(row->remedies[r]);
    free(row->remedies);
}

void report_catalogue_free(struct report_catalogue *catalogue)
{
    if (!catalogue)
        return;
    for (size_t i = 0; i < catalogue->nrows; i++)
        row_release(&catalogue->rows[i]);
    free(catalogue->rows);
    free(catalogue);
}

static bool add_remedy(struct report_runtime *row, const char *text)
{
    if (row->nremedies == CATALOGUE_REMEDIES_MAX)
        return true;
    char **grown = reallocarray(row->remedies, row->nremedies + 1, sizeof *grown);
    if (!grown)
        return false;
    row->remedies = grown;
    row->remedies[row->nremedies] = strdup(text);
    return row->remedies[row->nremedies++] != NULL;
}

static struct report_runtime *add_row(struct report_catalogue *catalogue, const char *id)
{
    if (catalogue->nrows == CATALOGUE_ROWS_MAX)
        return NULL;
    struct report_runtime *grown = reallocarray(catalogue->rows, catalogue->nrows + 1, sizeof *grown);
    if (!grown)
        return NULL;
    catalogue->rows = grown;
    struct report_runtime *row = &catalogue->rows[catalogue->nrows];
    *row = (struct report_runtime){ .id = strdup(id), .name = strdup(id), .libraries = strdup(""),
                                    .threads = strdup(""), .handles = strdup(""), .functions = strdup(""),
                                    .reason = strdup(""), .safety = REPORT_FORK_UNSAFE };
    catalogue->nrows++;
    if (!row->id || !row->name || !row->libraries || !row->threads || !row->handles || !row->functions ||
        !row->reason)
        return NULL;
    return row;
}

static bool copy_builtin(struct report_catalogue *catalogue, const struct builtin_row *source)
{
    struct report_runtime *row = add_row(catalogue, source->id);
    if (!row)
        return false;
    free(row->name);
    free(row->libraries);
    free(row->threads);
    free(row->handles);
    free(row->functions);
    free(row->reason);
    row->name = strdup(source->name);
    row->libraries = strdup(source->libraries);
    row->threads = strdup(source->threads);
    row->handles = strdup(source->handles);
    row->functions = strdup(source->functions ? source->functions : "");
    row->reason = strdup(source->reason);
    row->safety = source->safety;
    row->traits = source->traits;
    bool ok = row->name && row->libraries && row->threads && row->handles && row->functions && row->reason;
    for (size_t r = 0; ok && r < COUNT(source->remedies) && source->remedies[r]; r++)
        ok = add_remedy(row, source->remedies[r]);
    return ok;
}

struct report_catalogue *report_catalogue_new(void)
{
    struct report_catalogue *catalogue = calloc(1, sizeof *catalogue);
    for (size_t i = 0; catalogue && i < COUNT(builtin_rows); i++)
        if (!copy_builtin(catalogue, &builtin_rows[i])) {
            report_catalogue_free(catalogue);
            return NULL;
        }
    return catalogue;
}

const struct report_catalogue *report_catalogue_builtin(void)
{
    /* built once and kept for the life of the program: the report is rendered once per run */
    static struct report_catalogue *builtin;
    if (!builtin)
        builtin = report_catalogue_new();
    return builtin;
}

/* ---- matching -------------------------------------------------------------------------------------------------- */

/* Does any space-separated pattern of `patterns` match `text`? */
static bool any_pattern_matches(const char *patterns, const char *text)
{
    if (!patterns || !text || !*text)
        return false;
    char pattern[512];
    for (const char *p = patterns; *p;) {
        while (*p == ' ')
            p++;
        size_t length = strcspn(p, " ");
        if (length > 0 && length < sizeof pattern) {
            memcpy(pattern, p, length);
            pattern[length] = '\0';
            if (fnmatch(pattern, text, 0) == 0)
                return true;
        }
        p += length;
    }
    return false;
}

const struct report_runtime *report_catalogue_library(const struct report_catalogue *catalogue,
                                                      const struct hd_library *library)
{
    for (size_t i = 0; catalogue && i < catalogue->nrows; i++) {
        const struct report_runtime *row = &catalogue->rows[i];
        /* a pattern with a '/' is meant for the whole path ('*' crosses '/' here) */
        if (any_pattern_matches(row->libraries, library->soname) ||
            any_pattern_matches(row->libraries, hd_basename(library->path)) ||
            (strchr(row->libraries, '/') && any_pattern_matches(row->libraries, library->path)))
            return row;
    }
    return NULL;
}

const struct report_runtime *report_catalogue_thread(const struct report_catalogue *catalogue, const char *name)
{
    for (size_t i = 0; catalogue && i < catalogue->nrows; i++)
        if (any_pattern_matches(catalogue->rows[i].threads, name))
            return &catalogue->rows[i];
    return NULL;
}

const struct report_runtime *report_catalogue_function(const struct report_catalogue *catalogue, const char *symbol)
{
    for (size_t i = 0; catalogue && i < catalogue->nrows; i++)
        if (any_pattern_matches(catalogue->rows[i].functions, symbol))
            return &catalogue->rows[i];
    return NULL;
}

/* The kernel appends this to the link of an open file whose name was removed: still the same file, and as much
 * the runtime's handle (a temporary HDF5 file removed once opened). */
#define DELETED_SUFFIX " (deleted)"

const struct report_runtime *report_catalogue_handle(const struct report_catalogue *catalogue, const struct hd_fd *fd)
{
    char class_name[48], target[1024];
    snprintf(class_name, sizeof class_name, "class:%s", hd_fd_class_name(fd->fd_class));
    const char *name = fd->target;
    size_t length = name ? strlen(name) : 0, suffix = strlen(DELETED_SUFFIX);
    if (length > suffix && length - suffix < sizeof target && strcmp(name + length - suffix, DELETED_SUFFIX) == 0) {
        memcpy(target, name, length - suffix);
        target[length - suffix] = '\0';
        name = target;
    }
    for (size_t i = 0; catalogue && i < catalogue->nrows; i++) {
        const struct report_runtime *row = &catalogue->rows[i];
        if (any_pattern_matches(row->handles, name) || any_pattern_matches(row->handles, class_name))
            return row;
    }
    return NULL;
}

const struct report_runtime *report_catalogue_with_trait(const struct report_catalogue *catalogue,
                                                         enum report_runtime_trait trait)
{
    for (size_t i = 0; i < catalogue->nrows; i++)
        if (catalogue->rows[i].traits & trait)
            return &catalogue->rows[i];
    return NULL;
}

const struct report_runtime *report_catalogue_find(const struct report_catalogue *catalogue, const char *id)
{
    for (size_t i = 0; catalogue && i < catalogue->nrows; i++)
        if (strcmp(catalogue->rows[i].id, id) == 0)
            return &catalogue->rows[i];
    return NULL;
}

const char *report_fork_safety_name(enum report_fork_safety safety)
{
    static const char *const names[] = {
        [REPORT_FORK_UNSAFE] = "unsafe", [REPORT_FORK_AWARE] = "fork-aware", [REPORT_FORK_DEPENDS] = "depends",
    };
    return names[safety];
}

const char *report_fork_safety_words(enum report_fork_safety safety)
{
    static const char *const words[] = {
        [REPORT_FORK_UNSAFE] = "not fork-safe",
        [REPORT_FORK_AWARE] = "fork-aware",
        [REPORT_FORK_DEPENDS] = "fork safety depends on its configuration",
    };
    return words[safety];
}

/* ---- the file format ------------------------------------------------------------------------------------------- */

static char *trim(char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t length = strlen(text);
    while (length > 0 && isspace((unsigned char)text[length - 1]))
        text[--length] = '\0';
    return text;
}

static bool valid_id(const char *id)
{
    if (!*id || strlen(id) > 64)
        return false;
    for (const char *p = id; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
            return false;
    return true;
}

static bool append_patterns(char **patterns, const char *more)
{
    char *joined = NULL;
    if (asprintf(&joined, "%s%s%s", *patterns, **patterns ? " " : "", more) < 0)
        return false;
    free(*patterns);
    *patterns = joined;
    return true;
}

static bool replace_text(char **field, const char *value)
{
    char *copy = strdup(value);
    if (!copy)
        return false;
    free(*field);
    *field = copy;
    return true;
}

struct parse_state {
    struct report_catalogue *catalogue;
    size_t row;      /* index of the section's row; (size_t)-1 before the first section */
    bool remedies_replaced;
};

/* One "key = value" line of a section; an error message or NULL. */
static const char *apply_key(struct parse_state *state, const char *key, const char *value)
{
    struct report_runtime *row = &state->catalogue->rows[state->row];
    static const struct {
        const char *key;
        size_t offset;
    } pattern_keys[] = {
        { "libraries", offsetof(struct report_runtime, libraries) },
        { "threads", offsetof(struct report_runtime, threads) },
        { "handles", offsetof(struct report_runtime, handles) },
        { "functions", offsetof(struct report_runtime, functions) },
    };
    for (size_t i = 0; i < COUNT(pattern_keys); i++)
        if (strcmp(key, pattern_keys[i].key) == 0)
            return append_patterns((char **)((char *)row + pattern_keys[i].offset), value) ? NULL : "out of memory";
    if (strcmp(key, "name") == 0)
        return replace_text(&row->name, value) ? NULL : "out of memory";
    if (strcmp(key, "reason") == 0)
        return replace_text(&row->reason, value) ? NULL : "out of memory";
    if (strcmp(key, "safety") == 0) {
        for (enum report_fork_safety s = REPORT_FORK_UNSAFE; s <= REPORT_FORK_DEPENDS; s++)
            if (strcmp(value, report_fork_safety_name(s)) == 0) {
                row->safety = s;
                return NULL;
            }
        return "safety is one of unsafe, fork-aware, depends";
    }
    if (strcmp(key, "remedy") == 0) {
        if (!state->remedies_replaced) {
            for (size_t r = 0; r < row->nremedies; r++)
                free(row->remedies[r]);
            row->nremedies = 0;
            state->remedies_replaced = true;
        }
        return add_remedy(row, value) ? NULL : "out of memory";
    }
    return "unknown key (name, libraries, threads, handles, functions, safety, reason, remedy)";
}

static const char *parse_line(struct parse_state *state, char *line)
{
    line = trim(line);
    if (*line == '\0' || *line == '#')
        return NULL;
    if (*line == '[') {
        char *close = strchr(line, ']');
        if (!close || close[1] != '\0')
            return "a section is [id]";
        *close = '\0';
        const char *id = trim(line + 1);
        if (!valid_id(id))
            return "an id is letters, digits, '-', '_' and '.'";
        const struct report_runtime *known = report_catalogue_find(state->catalogue, id);
        if (known) {
            state->row = (size_t)(known - state->catalogue->rows);
        } else {
            if (!add_row(state->catalogue, id))
                return "too many rows, or out of memory";
            state->row = state->catalogue->nrows - 1;
        }
        state->remedies_replaced = false;
        return NULL;
    }
    char *equals = strchr(line, '=');
    if (!equals)
        return "expected [id] or key = value";
    if (state->row == (size_t)-1)
        return "key = value before the first [id]";
    *equals = '\0';
    return apply_key(state, trim(line), trim(equals + 1));
}

int report_catalogue_parse(struct report_catalogue *catalogue, const char *text, char *error, size_t error_size)
{
    struct parse_state state = { .catalogue = catalogue, .row = (size_t)-1 };
    int number = 0;
    for (const char *line = text; *line;) {
        number++;
        size_t length = strcspn(line, "\n");
        char *copy = strndup(line, length);
        const char *problem = copy ? parse_line(&state, copy) : "out of memory";
        free(copy);
        if (problem) {
            snprintf(error, error_size, "line %d: %s", number, problem);
            return number;
        }
        line += length + (line[length] == '\n');
    }
    return 0;
}

int report_catalogue_load(struct report_catalogue *catalogue, const char *path, char *error, size_t error_size)
{
    FILE *file = fopen(path, "re");
    if (!file) {
        int saved = errno;
        snprintf(error, error_size, "%s", strerror(saved));
        return -saved;
    }
    char *text cleanup_free = calloc(1, CATALOGUE_FILE_MAX + 1);
    size_t length = text ? fread(text, 1, CATALOGUE_FILE_MAX + 1, file) : 0;
    bool failed = ferror(file);
    fclose(file);
    if (!text || failed || length > CATALOGUE_FILE_MAX) {
        snprintf(error, error_size, "%s", !text ? "out of memory" : failed ? "read error" : "larger than 1 MiB");
        return !text ? -ENOMEM : -EIO;
    }
    if (memchr(text, '\0', length)) {
        snprintf(error, error_size, "not a text file");
        return -EINVAL;
    }
    return report_catalogue_parse(catalogue, text, error, error_size);
}
