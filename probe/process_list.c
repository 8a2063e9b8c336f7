/* The system's process list through libproc2, loaded on first use, or read from /proc (process_list.h). */
#include "process_list.h"

#include "procfs.h"
#include "util.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#if HANGDOC_HAVE_LIBPROC2
#include <libproc2/pids.h>
#endif

static int compare_by_ppid_then_pid(const void *a, const void *b)
{
    const struct probe_process_link *x = a, *y = b;
    if (x->ppid != y->ppid)
        return x->ppid < y->ppid ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* ---- /proc itself ---------------------------------------------------------------------------------------------- */

#define STAT_READ_MAX 1024

/* The process of /proc entry `name` (a number), from its stat file; false when it is gone or not a process. */
static bool read_link(const char *name, struct probe_process_link *link)
{
    char *end;
    long pid = strtol(name, &end, 10);
    if (*end || pid <= 0)
        return false;
    char path[64], text[STAT_READ_MAX];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    struct probe_stat stat;
    if (length <= 0 || !probe_parse_stat(text, (size_t)length, &stat))
        return false;
    *link = (struct probe_process_link){ .pid = (pid_t)pid, .ppid = stat.ppid, .state = stat.state };
    return true;
}

/* Every process of /proc: a process that ends while the directory is read is left out, as libproc2 leaves it. */
ssize_t probe_list_every_process_from_proc(struct probe_process_link **links)
{
    *links = NULL;
    DIR *directory = opendir("/proc");
    if (!directory)
        return -errno;
    size_t count = 0, capacity = 0;
    ssize_t result = 0;
    for (struct dirent *entry; (entry = readdir(directory));) {
        struct probe_process_link link;
        if (!read_link(entry->d_name, &link))
            continue;
        if (count == capacity) {
            size_t grown_capacity = capacity ? capacity * 2 : 256;
            struct probe_process_link *grown = reallocarray(*links, grown_capacity, sizeof *grown);
            if (!grown) {
                result = -ENOMEM;
                break;
            }
            *links = grown;
            capacity = grown_capacity;
        }
        (*links)[count++] = link;
    }
    closedir(directory);
    if (result < 0) {
        free(*links);
        *links = NULL;
        return result;
    }
    if (!*links && !(*links = calloc(1, sizeof **links)))
        return -ENOMEM;
    qsort(*links, count, sizeof **links, compare_by_ppid_then_pid);
    return (ssize_t)count;
}

/* ---- libproc2 -------------------------------------------------------------------------------------------------- */

#if HANGDOC_HAVE_LIBPROC2

/* What PIDS_VAL expands to: libproc2 4.0.2's takes (index, type, stack, info) and ignores info, newer releases
 * (Debian 13 and later) take three, so the macro itself fits only one of them. */
#define VALUE(index, type, stack) ((stack)->head[(index)].result.type)

/* The items, mirrored by an index enum (the procps-ng idiom). */
static enum pids_item listing_items[] = { PIDS_ID_TGID, PIDS_ID_PPID, PIDS_STATE };
enum listing_index { LISTING_TGID, LISTING_PPID, LISTING_STATE };

/* The three functions used, typed from libproc2's own declarations. */
static struct {
    bool tried;
    __typeof__(procps_pids_new) *pids_new;
    __typeof__(procps_pids_reap) *pids_reap;
    __typeof__(procps_pids_unref) *pids_unref;
} libproc2;

static bool load_libproc2(void)
{
    if (!libproc2.tried) {
        libproc2.tried = true;
        /* kept open for the rest of the run: its functions may be called again */
        void *library = dlopen("libproc2.so.0", RTLD_NOW | RTLD_LOCAL);
        if (library) {
            libproc2.pids_new = (__typeof__(procps_pids_new) *)dlsym(library, "procps_pids_new");
            libproc2.pids_reap = (__typeof__(procps_pids_reap) *)dlsym(library, "procps_pids_reap");
            libproc2.pids_unref = (__typeof__(procps_pids_unref) *)dlsym(library, "procps_pids_unref");
        }
    }
    return libproc2.pids_new && libproc2.pids_reap && libproc2.pids_unref;
}

static ssize_t list_from_libproc2(struct probe_process_link **links)
{
    struct pids_info *listing = NULL;
    int failed = libproc2.pids_new(&listing, listing_items, (int)COUNT(listing_items));
    if (failed < 0)
        return failed;
    struct pids_fetch *all = libproc2.pids_reap(listing, PIDS_FETCH_TASKS_ONLY);
    ssize_t result = all ? 0 : errno ? -errno : -EIO;
    size_t count = all && all->counts->total > 0 ? (size_t)all->counts->total : 0;
    if (all) {
        *links = calloc(count ? count : 1, sizeof **links);
        result = *links ? (ssize_t)count : -ENOMEM;
    }
    for (size_t i = 0; *links && i < count; i++) {
        struct pids_stack *stack = all->stacks[i];
        (*links)[i] = (struct probe_process_link){ .pid = VALUE(LISTING_TGID, s_int, stack),
                                                   .ppid = VALUE(LISTING_PPID, s_int, stack),
                                                   .state = (char)VALUE(LISTING_STATE, s_ch, stack) };
    }
    if (*links)
        qsort(*links, count, sizeof **links, compare_by_ppid_then_pid);
    libproc2.pids_unref(&listing);
    return result;
}
#endif

ssize_t probe_list_every_process(struct probe_process_link **links)
{
    *links = NULL;
#if HANGDOC_HAVE_LIBPROC2
    if (load_libproc2())
        return list_from_libproc2(links);
#endif
    return probe_list_every_process_from_proc(links);
}
