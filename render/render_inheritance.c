/* Inheritance forensics in the reports (render_inheritance.h). */
#include "render_inheritance.h"

#include "inheritance.h"
#include "json_writer.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CENSUS_GROUPS_MAX 64
#define TEXT_ITEMS_MAX 6

static void library_json(struct report_json *json, const struct hd_library *library,
                         const struct report_catalogue *catalogue)
{
    const struct report_runtime *runtime = report_catalogue_library(catalogue, library);
    report_json_begin_object(json, NULL);
    report_json_string(json, "path", library->path);
    report_json_string_or_null(json, "soname", library->soname);
    report_json_string_or_null(json, "build_id", library->build_id);
    report_json_string(json, "class", runtime ? runtime->id : "other");
    if (runtime)
        report_json_name(json, "fork_safety", report_fork_safety_name(runtime->safety));
    else
        report_json_null(json, "fork_safety");
    report_json_bool(json, "in_parent", library->in_parent);
    report_json_end_object(json);
}

/* The parent thread census: threads grouped by name, by the runtime they run, and by the library the outermost
 * frame of their stack starts in (when stacks were taken). */
struct census_group {
    const char *name;
    const struct report_runtime *runtime;
    const char *start_library;
    unsigned count;
};

/* The library of the outermost frame that is not libc's: where the thread's start routine lives. */
static const char *start_library(const struct hd_process *process, const struct hd_thread *thread)
{
    for (size_t f = thread->stack.nframes; f-- > 0;) {
        const struct hd_library *library = hd_process_find_library(process, thread->stack.frames[f].pc);
        if (library && strncmp(hd_basename(library->path), "libc.so", 7) != 0)
            return library->soname ? library->soname : hd_basename(library->path);
    }
    return NULL;
}

static const struct report_runtime *runtime_of_thread(const struct report_catalogue *catalogue,
                                                      const struct hd_process *process, const struct hd_thread *thread)
{
    const struct report_runtime *runtime = report_catalogue_thread(catalogue, thread->name);
    for (size_t r = 0; !runtime && catalogue && r < catalogue->nrows; r++)
        if (report_thread_runs(catalogue, process, thread, &catalogue->rows[r]))
            runtime = &catalogue->rows[r];
    return runtime;
}

static size_t take_census(const struct hd_process *process, const struct report_catalogue *catalogue,
                          struct census_group *groups, size_t max)
{
    size_t count = 0;
    for (size_t t = 0; t < process->nthreads; t++) {
        const struct hd_thread *thread = &process->threads[t];
        struct census_group key = { thread->name, runtime_of_thread(catalogue, process, thread),
                                    start_library(process, thread), 1 };
        size_t g = 0;
        while (g < count && !(strcmp(groups[g].name, key.name) == 0 && groups[g].runtime == key.runtime &&
                              (groups[g].start_library == key.start_library ||
                               (groups[g].start_library && key.start_library &&
                                strcmp(groups[g].start_library, key.start_library) == 0))))
            g++;
        if (g < count)
            groups[g].count++;
        else if (count < max)
            groups[count++] = key;
    }
    return count;
}

static void census_json(struct report_json *json, const struct hd_process *process,
                        const struct report_catalogue *catalogue)
{
    struct census_group groups[CENSUS_GROUPS_MAX];
    size_t count = take_census(process, catalogue, groups, CENSUS_GROUPS_MAX);
    report_json_begin_array(json, "thread_census");
    for (size_t g = 0; g < count; g++) {
        report_json_begin_object(json, NULL);
        report_json_string(json, "name", groups[g].name);
        report_json_int(json, "count", groups[g].count);
        report_json_string_or_null(json, "runtime", groups[g].runtime ? groups[g].runtime->id : NULL);
        report_json_string_or_null(json, "start_library", groups[g].start_library);
        report_json_end_object(json);
    }
    report_json_end_array(json);
}

static void device_mappings_json(struct report_json *json, const struct hd_process *process)
{
    report_json_begin_array(json, "device_mappings");
    for (size_t m = 0; m < process->nmappings; m++) {
        const struct hd_mapping *mapping = &process->mappings[m];
        if (!mapping->path || strncmp(mapping->path, "/dev/", 5) != 0 || strncmp(mapping->path, "/dev/shm/", 9) == 0)
            continue;
        char range[48];
        snprintf(range, sizeof range, "0x%" PRIx64 "-0x%" PRIx64, mapping->start, mapping->end);
        report_json_begin_object(json, NULL);
        report_json_name(json, "range", range);
        report_json_string(json, "path", mapping->path);
        report_json_string(json, "permissions", mapping->permissions);
        report_json_end_object(json);
    }
    report_json_end_array(json);
}

static void name_or_null(struct report_json *json, const char *key, const char *name)
{
    if (name)
        report_json_name(json, key, name);
    else
        report_json_null(json, key);
}

void report_json_process_inheritance(struct report_json *json, const struct hd_snapshot *snapshot,
                                     const struct hd_process *process, const struct report_catalogue *catalogue)
{
    (void)snapshot;
    report_json_begin_array(json, "libraries");
    for (size_t l = 0; l < process->nlibraries; l++)
        library_json(json, &process->libraries[l], catalogue);
    report_json_end_array(json);
    name_or_null(json, "python_role", hd_python_role_name(process->python_role));
    name_or_null(json, "python_start_method", hd_python_start_method_name(process->python_start_method));
    device_mappings_json(json, process);
    census_json(json, process, catalogue);
}

void report_json_fd_inheritance(struct report_json *json, const struct hd_fd *fd,
                                const struct report_catalogue *catalogue)
{
    report_json_name(json, "class", hd_fd_class_name(fd->fd_class));
    if (fd->device_known) {
        char device[32];
        snprintf(device, sizeof device, "%u:%u", fd->device_major, fd->device_minor);
        report_json_name(json, "device", device);
    }
    if (fd->socket_name)
        report_json_string(json, "socket_name", fd->socket_name);
    if (fd->pty) {
        report_json_begin_object(json, "pty");
        report_json_bool(json, "master", fd->pty_master);
        report_json_int(json, "index", fd->pty_index);
        report_json_end_object(json);
    }
    const struct report_runtime *runtime = report_catalogue_handle(catalogue, fd);
    report_json_string_or_null(json, "runtime", runtime ? runtime->id : NULL);
    if (fd->inherited_from.pid) {
        report_json_begin_object(json, "inherited_from");
        report_json_int(json, "pid", fd->inherited_from.pid);
        report_json_int(json, "fd", fd->inherited_from.fd);
        report_json_end_object(json);
    } else {
        report_json_null(json, "inherited_from");
    }
}

void report_json_snapshot_inheritance(struct report_json *json, const struct hd_snapshot *snapshot)
{
    name_or_null(json, "python_start_method", hd_python_start_method_name(snapshot->python_start_method));
}

/* ---- text ------------------------------------------------------------------------------------------------------- */

static void put_escaped(struct report_buffer *out, const char *text)
{
    report_buffer_escaped(out, text, strlen(text));
}

/* Handles worth a line: those that tie the child to a device or a display/bus connection of the parent's, or to
 * a catalogued runtime. eventfd, memfd and shm are everywhere (test runners, allocators): JSON has them. */
static bool handle_of_note(const struct hd_fd *fd, const struct report_catalogue *catalogue)
{
    switch (fd->fd_class) {
    case HD_FD_CLASS_NVIDIA: case HD_FD_CLASS_NVIDIA_UVM: case HD_FD_CLASS_DRI: case HD_FD_CLASS_X11:
    case HD_FD_CLASS_WAYLAND: case HD_FD_CLASS_DBUS:
        return true;
    case HD_FD_CLASS_OTHER: case HD_FD_CLASS_FILE: case HD_FD_CLASS_DEVICE: case HD_FD_CLASS_PIPE:
    case HD_FD_CLASS_SOCKET: case HD_FD_CLASS_UNIX_SOCKET: case HD_FD_CLASS_EVENTFD: case HD_FD_CLASS_MEMFD:
    case HD_FD_CLASS_SHM: case HD_FD_CLASS_ANON:
        break;
    }
    return report_catalogue_handle(catalogue, fd) != NULL;
}

/* How the fork-or-exec part of the origin was decided (probe/origin.h), after "origin: forked" */
static const char *const origin_basis_texts[] = {
    [HD_ORIGIN_BASIS_NONE] = NULL,
    [HD_ORIGIN_BASIS_AT_RANDOM_SAME] = "AT_RANDOM bytes as its parent's",
    [HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT] = "AT_RANDOM bytes not its parent's",
    [HD_ORIGIN_BASIS_EXECUTABLE_DIFFERS] = "another executable or load address than its parent's",
    [HD_ORIGIN_BASIS_UNREADABLE] = "memory unreadable",
};

static void text_origin(struct report_buffer *out, const struct hd_process *process, const char *indent)
{
    const char *role = hd_python_role_name(process->python_role);
    const char *method = hd_python_start_method_name(process->python_start_method);
    const char *basis = (size_t)process->origin_basis < COUNT(origin_basis_texts)
                            ? origin_basis_texts[process->origin_basis]
                            : NULL;
    /* decided, or tried and left unknown for want of memory access */
    bool tried = process->origin != HD_ORIGIN_UNKNOWN || process->origin_basis == HD_ORIGIN_BASIS_UNREADABLE;
    if (!tried && !role)
        return;
    /* a named process's parent is not in the tree: its origin is unknown, its Python role still worth a line */
    if (!tried)
        report_buffer_printf(out, "%s    Python %s", indent, role);
    else
        report_buffer_printf(out, "%s    origin: %s", indent, hd_origin_name(process->origin));
    if (tried && basis)
        report_buffer_printf(out, " (%s)", basis);
    if (role && tried)
        report_buffer_printf(out, ", Python %s", role);
    if (method)
        report_buffer_printf(out, ", start method %s", method);
    report_buffer_puts(out, "\n");
}

static void text_runtimes(struct report_buffer *out, const struct hd_process *process,
                          const struct report_catalogue *catalogue, const char *indent)
{
    size_t shown = 0;
    for (size_t l = 0; l < process->nlibraries; l++) {
        const struct hd_library *library = &process->libraries[l];
        const struct report_runtime *runtime = report_catalogue_library(catalogue, library);
        if (!runtime || (runtime->traits & REPORT_RUNTIME_LIBC_INTERNAL))
            continue;
        if (shown == TEXT_ITEMS_MAX) {
            report_buffer_puts(out, "; ...");
            break;
        }
        if (shown++ == 0)
            report_buffer_printf(out, "%s    runtimes: ", indent);
        else
            report_buffer_puts(out, "; ");
        put_escaped(out, library->soname ? library->soname : hd_basename(library->path));
        /* a row's name may come from the user's --catalogue file: not hangdoc's own text */
        report_buffer_puts(out, " (");
        put_escaped(out, runtime->name);
        report_buffer_printf(out, ", %s%s)", report_fork_safety_words(runtime->safety),
                             library->in_parent ? ", inherited" : "");
    }
    if (shown)
        report_buffer_puts(out, "\n");
}

static void text_handles(struct report_buffer *out, const struct hd_process *process,
                         const struct report_catalogue *catalogue, const char *indent)
{
    size_t shown = 0, inherited = 0;
    for (size_t f = 0; f < process->nfds; f++) {
        const struct hd_fd *fd = &process->fds[f];
        if (!fd->inherited_from.pid)
            continue;
        inherited++;
        if (!handle_of_note(fd, catalogue) || shown == TEXT_ITEMS_MAX)
            continue;
        if (shown++ == 0)
            report_buffer_printf(out, "%s    inherited handles: ", indent);
        else
            report_buffer_puts(out, "; ");
        report_buffer_printf(out, "fd %d ", fd->fd);
        put_escaped(out, fd->target);
        report_buffer_printf(out, " (%s) = parent %d's fd %d", hd_fd_class_name(fd->fd_class),
                             (int)fd->inherited_from.pid, fd->inherited_from.fd);
    }
    if (shown)
        report_buffer_printf(out, " (kcmp; %zu fd%s inherited in all)\n", inherited, inherited == 1 ? "" : "s");
}

/* The threads that run a catalogued runtime: what a child forked from this process would find copied without
 * its threads. Shown for processes with children in the tree. */
static void text_runtime_threads(struct report_buffer *out, const struct hd_snapshot *snapshot,
                                 const struct hd_process *process, const struct report_catalogue *catalogue,
                                 const char *indent)
{
    bool parent = false;
    for (size_t p = 0; p < snapshot->nprocesses && !parent; p++)
        parent = snapshot->processes[p].ppid == process->pid;
    if (!parent)
        return;
    struct census_group groups[CENSUS_GROUPS_MAX];
    size_t count = take_census(process, catalogue, groups, CENSUS_GROUPS_MAX), shown = 0;
    for (size_t g = 0; g < count; g++) {
        if (!groups[g].runtime)
            continue;
        if (shown++ == 0)
            report_buffer_printf(out, "%s    runtime threads: ", indent);
        else
            report_buffer_puts(out, "; ");
        report_buffer_printf(out, "%u× '", groups[g].count);
        put_escaped(out, groups[g].name);
        report_buffer_puts(out, "' (");
        put_escaped(out, groups[g].runtime->name);
        report_buffer_puts(out, ")");
    }
    if (shown)
        report_buffer_puts(out, "\n");
}

void report_text_process_inheritance(struct report_buffer *out, const struct hd_snapshot *snapshot,
                                     const struct hd_process *process, const struct report_catalogue *catalogue,
                                     const char *indent)
{
    text_origin(out, process, indent);
    text_runtimes(out, process, catalogue, indent);
    text_runtime_threads(out, snapshot, process, catalogue, indent);
    text_handles(out, process, catalogue, indent);
}
