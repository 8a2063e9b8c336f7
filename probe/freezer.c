/* The cgroup freezer (freezer.h). */
#include "freezer.h"

#include "procfs.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cgroup's control files are a few bytes; a deep hierarchy has few levels. */
#define CONTROL_READ_MAX 256
#define LEVELS_MAX 64
#define MOUNTINFO_READ_MAX (256 * 1024)

/* Copies a mountinfo field, undoing the kernel's octal escapes of space, tab, newline and backslash ("\040");
 * false when it does not fit. */
static bool copy_unescaped(const char *field, size_t length, char *out, size_t size)
{
    size_t used = 0;
    for (size_t i = 0; i < length; i++) {
        char c = field[i];
        if (c == '\\' && i + 3 < length && field[i + 1] >= '0' && field[i + 1] <= '3' &&
            field[i + 2] >= '0' && field[i + 2] <= '7' && field[i + 3] >= '0' && field[i + 3] <= '7') {
            c = (char)((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
            i += 3;
        }
        if (used + 1 >= size)
            return false;
        out[used++] = c;
    }
    out[used] = '\0';
    return true;
}

/* The `index`th space-separated field of a line, its start and length; false when the line has fewer. */
static bool field_of(const char *line, size_t line_length, unsigned index, const char **start, size_t *length)
{
    size_t i = 0;
    for (unsigned f = 0;; f++) {
        while (i < line_length && line[i] == ' ')
            i++;
        if (i >= line_length)
            return false;
        size_t begin = i;
        while (i < line_length && line[i] != ' ')
            i++;
        if (f == index) {
            *start = line + begin;
            *length = i - begin;
            return true;
        }
    }
}

/* Is `word` one of the comma-separated words of [list, list + length)? */
static bool has_word(const char *list, size_t length, const char *word)
{
    size_t word_length = strlen(word);
    for (size_t i = 0; i < length;) {
        size_t end = i;
        while (end < length && list[end] != ',')
            end++;
        if (end - i == word_length && memcmp(list + i, word, word_length) == 0)
            return true;
        i = end + 1;
    }
    return false;
}

/* One mountinfo line: "36 25 0:31 / /sys/fs/cgroup/freezer rw,relatime shared:9 - cgroup cgroup rw,freezer". The
 * optional fields end at " - "; after it come the type, the source and the superblock's options. */
static void take_mount(const char *line, size_t length, struct probe_cgroup_mounts *mounts)
{
    const char *separator = NULL;
    for (size_t i = 0; i + 3 <= length; i++)
        if (memcmp(line + i, " - ", 3) == 0) {
            separator = line + i + 3;
            break;
        }
    if (!separator)
        return;
    size_t tail_length = length - (size_t)(separator - line);
    const char *type, *root, *point, *options;
    size_t type_length, root_length, point_length, options_length;
    if (!field_of(separator, tail_length, 0, &type, &type_length) || !field_of(line, length, 3, &root, &root_length) ||
        !field_of(line, length, 4, &point, &point_length))
        return;
    char *out_point = NULL, *out_root = NULL;
    if (type_length == 7 && memcmp(type, "cgroup2", 7) == 0) {
        out_point = mounts->unified;
        out_root = mounts->unified_root;
    } else if (type_length == 6 && memcmp(type, "cgroup", 6) == 0 &&
               field_of(separator, tail_length, 2, &options, &options_length) &&
               has_word(options, options_length, "freezer")) {
        out_point = mounts->freezer;
        out_root = mounts->freezer_root;
    }
    if (!out_point || out_point[0])
        return; /* not a hierarchy that freezes, or one already found: the first mount of it is as good */
    if (!copy_unescaped(point, point_length, out_point, PROBE_CGROUP_PATH_MAX) ||
        !copy_unescaped(root, root_length, out_root, PROBE_CGROUP_PATH_MAX))
        out_point[0] = out_root[0] = '\0';
}

void probe_parse_cgroup_mounts(const char *mountinfo, struct probe_cgroup_mounts *mounts)
{
    *mounts = (struct probe_cgroup_mounts){ 0 };
    for (const char *line = mountinfo; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        take_mount(line, length, mounts);
        line = end ? end + 1 : NULL;
    }
}

static void copy_path(char *out, const char *path, size_t length)
{
    if (length >= PROBE_CGROUP_PATH_MAX || length == 0 || path[0] != '/')
        return; /* too long to read, or not a path: as if the text named none */
    memcpy(out, path, length);
    out[length] = '\0';
}

/* "hierarchy-ID:controller-list:cgroup-path": the path may hold ':' itself, the first two fields never do. */
void probe_parse_cgroup_paths(const char *text, struct probe_cgroup_paths *paths)
{
    *paths = (struct probe_cgroup_paths){ 0 };
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        const char *first = memchr(line, ':', length);
        const char *second = first ? memchr(first + 1, ':', length - (size_t)(first + 1 - line)) : NULL;
        if (second) {
            const char *controllers = first + 1, *path = second + 1;
            size_t controllers_length = (size_t)(second - controllers);
            size_t path_length = length - (size_t)(path - line);
            if (first - line == 1 && line[0] == '0' && controllers_length == 0)
                copy_path(paths->unified, path, path_length);
            else if (has_word(controllers, controllers_length, "freezer"))
                copy_path(paths->freezer, path, path_length);
        }
        line = end ? end + 1 : NULL;
    }
}

bool probe_cgroup_directory(const char *mount_point, const char *mount_root, const char *cgroup, char *out,
                            size_t size)
{
    if (!mount_point[0] || cgroup[0] != '/')
        return false;
    size_t root_length = strcmp(mount_root, "/") == 0 ? 0 : strlen(mount_root);
    if (strncmp(cgroup, mount_root, root_length) != 0 || (cgroup[root_length] != '/' && cgroup[root_length] != '\0'))
        return false; /* the mount shows another part of the hierarchy */
    const char *below = cgroup + root_length;
    size_t below_length = strlen(below);
    if (strstr(below, "/../") || strstr(below, "/./") ||
        (below_length >= 3 && strcmp(below + below_length - 3, "/..") == 0))
        return false; /* never a path the kernel writes: refuse to climb out of the mount */
    int written = snprintf(out, size, "%s%s", mount_point, strcmp(below, "/") == 0 ? "" : below);
    return written > 0 && (size_t)written < size;
}

/* ---- reading ------------------------------------------------------------------------------------------------- */

static struct probe_cgroup_mounts mounts;
static pthread_once_t mounts_once = PTHREAD_ONCE_INIT;

/* hangdoc's mounts, read once: they do not move while it runs. */
static void read_mounts(void)
{
    char *text = malloc(MOUNTINFO_READ_MAX);
    if (text && probe_read_file("/proc/self/mountinfo", text, MOUNTINFO_READ_MAX) > 0)
        probe_parse_cgroup_mounts(text, &mounts);
    free(text);
}

/* The first line of a control file, without its newline; false when unreadable. */
static bool read_control(const char *directory, const char *file, char *out, size_t size)
{
    char path[PROBE_CGROUP_PATH_MAX + 32];
    if (snprintf(path, sizeof path, "%s/%s", directory, file) >= (int)sizeof path)
        return false;
    if (probe_read_file(path, out, size) < 0)
        return false;
    out[strcspn(out, "\n")] = '\0';
    return true;
}

/* What could not be read, for the caller's note. */
static void say_unreadable(char *unknown, size_t size, const char *directory, const char *file, ssize_t error)
{
    if (unknown && size)
        snprintf(unknown, size, "%s/%s unreadable (%s): whether it is frozen is not known", directory, file,
                 strerror((int)-error));
}

/* Does cgroup.events say "frozen 1"? */
static bool events_frozen(const char *directory, char *unknown, size_t size)
{
    char path[PROBE_CGROUP_PATH_MAX + 32], text[CONTROL_READ_MAX];
    if (snprintf(path, sizeof path, "%s/cgroup.events", directory) >= (int)sizeof path)
        return false;
    ssize_t read = probe_read_file(path, text, sizeof text);
    if (read < 0) {
        say_unreadable(unknown, size, directory, "cgroup.events", read);
        return false;
    }
    for (const char *line = text; line && *line;) {
        if (strncmp(line, "frozen 1", 8) == 0 && (line[8] == '\n' || line[8] == '\0'))
            return true;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return false;
}

/* The nearest cgroup from `cgroup` up to the mount's top whose `file` reads `value`: the one that asked for the
 * freeze. Sets frozen_by and freeze_control (the file `control` there). */
static void find_asker(struct hd_process *process, const char *mount_point, const char *mount_root,
                       const char *cgroup, const char *file, const char *value, const char *control)
{
    char walk[PROBE_CGROUP_PATH_MAX], directory[PROBE_CGROUP_PATH_MAX], text[CONTROL_READ_MAX];
    snprintf(walk, sizeof walk, "%s", cgroup);
    for (int level = 0; level < LEVELS_MAX; level++) {
        if (!probe_cgroup_directory(mount_point, mount_root, walk, directory, sizeof directory))
            return;
        if (read_control(directory, file, text, sizeof text) && strcmp(text, value) == 0) {
            char path[PROBE_CGROUP_PATH_MAX + 32];
            snprintf(path, sizeof path, "%s/%s", directory, control);
            process->frozen_by = strdup(walk);
            process->freeze_control = strdup(path);
            return;
        }
        char *slash = strrchr(walk, '/');
        if (!slash || slash == walk)
            return; /* the hierarchy's top asks nothing: it cannot be frozen */
        *slash = '\0';
    }
}

static void read_unified(struct hd_process *process, const char *cgroup, char *unknown, size_t size)
{
    char directory[PROBE_CGROUP_PATH_MAX];
    if (strcmp(cgroup, "/") == 0)
        return; /* the root cgroup has no cgroup.events: it cannot be frozen */
    if (!probe_cgroup_directory(mounts.unified, mounts.unified_root, cgroup, directory, sizeof directory) ||
        !events_frozen(directory, unknown, size))
        return;
    process->frozen = true;
    process->freezer_version = 2;
    process->frozen_cgroup = strdup(cgroup);
    find_asker(process, mounts.unified, mounts.unified_root, cgroup, "cgroup.freeze", "1", "cgroup.freeze");
}

static void read_v1(struct hd_process *process, const char *cgroup, char *unknown, size_t size)
{
    char directory[PROBE_CGROUP_PATH_MAX], state[CONTROL_READ_MAX], path[PROBE_CGROUP_PATH_MAX + 32];
    if (strcmp(cgroup, "/") == 0)
        return; /* the root of the v1 hierarchy is not freezable, and has no freezer.state */
    if (!probe_cgroup_directory(mounts.freezer, mounts.freezer_root, cgroup, directory, sizeof directory))
        return;
    snprintf(path, sizeof path, "%s/freezer.state", directory);
    ssize_t read = probe_read_file(path, state, sizeof state);
    if (read < 0) {
        say_unreadable(unknown, size, directory, "freezer.state", read);
        return;
    }
    state[strcspn(state, "\n")] = '\0';
    bool frozen = strcmp(state, "FROZEN") == 0, freezing = strcmp(state, "FREEZING") == 0;
    if (!frozen && !freezing)
        return;
    process->frozen = true;
    process->freezing = freezing;
    process->freezer_version = 1;
    process->frozen_cgroup = strdup(cgroup);
    find_asker(process, mounts.freezer, mounts.freezer_root, cgroup, "freezer.self_freezing", "1",
               "freezer.state");
}

bool probe_read_freezer(struct hd_process *process, char *unknown, size_t size)
{
    if (unknown && size)
        unknown[0] = '\0';
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)process->pid);
    if (probe_read_file(path, text, sizeof text) < 0)
        return false;
    pthread_once(&mounts_once, read_mounts);
    struct probe_cgroup_paths paths;
    probe_parse_cgroup_paths(text, &paths);
    /* both hierarchies can freeze the same process; v2 speaks for a hybrid machine's services */
    if (paths.unified[0])
        read_unified(process, paths.unified, unknown, size);
    if (!process->frozen && paths.freezer[0])
        read_v1(process, paths.freezer, unknown, size);
    if (process->frozen && unknown && size)
        unknown[0] = '\0'; /* one hierarchy said so: the other's silence changes nothing */
    return true;
}
