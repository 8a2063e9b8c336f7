/* Children of a process from its threads' children files (children.h). */
#include "children.h"

#include "procfs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A children file is a list of decimal pids, each followed by a space: 8 bytes each with today's 22-bit pids.
 * A thread with more children than this is noted by nobody and read in part (a fork bomb, not a worker pool). */
#define CHILDREN_TEXT_MAX (256 * 1024)
#define THREADS_MAX 65536

bool probe_children_files_exist(void)
{
    static int exists = -1;
    if (exists < 0)
        exists = access("/proc/thread-self/children", R_OK) == 0;
    return exists;
}

static bool append_pid(pid_t pid, pid_t **pids, size_t *count, size_t *cap)
{
    if (*count == *cap) {
        size_t grown_cap = *cap ? *cap * 2 : 16;
        pid_t *grown = reallocarray(*pids, grown_cap, sizeof *grown);
        if (!grown)
            return false;
        *pids = grown;
        *cap = grown_cap;
    }
    (*pids)[(*count)++] = pid;
    return true;
}

/* Appends the pids of one children file; anything that is not a pid ends the list. */
static bool parse_children(const char *text, pid_t **pids, size_t *count, size_t *cap)
{
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\n')
            p++;
        if (*p < '0' || *p > '9')
            return true;
        long value = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            value = value * 10 + (*p - '0');
            if (value > 0x7fffffff)
                return true; /* not a pid the kernel writes */
        }
        if (value > 0 && !append_pid((pid_t)value, pids, count, cap))
            return false;
    }
}

static int compare_pids(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

bool probe_list_threads(pid_t pid, pid_t **tids, size_t *count)
{
    *tids = NULL;
    *count = 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return true; /* gone, or not ours to read */
    size_t cap = 0;
    bool ok = true;
    struct dirent *entry;
    while (ok && *count < THREADS_MAX && (entry = readdir(tasks))) {
        char *end;
        long tid = strtol(entry->d_name, &end, 10);
        if (*end || tid <= 0 || tid > INT32_MAX)
            continue;
        ok = append_pid((pid_t)tid, tids, count, &cap);
    }
    closedir(tasks);
    if (!ok) {
        free(*tids);
        *tids = NULL;
        *count = 0;
        return false;
    }
    if (*count > 1) /* a process that ended between opendir and readdir lists none: *tids is still NULL */
        qsort(*tids, *count, sizeof **tids, compare_pids);
    return true;
}

/* One children file; a list too long for the usual buffer is read again into a bigger one. */
static bool read_children_file(const char *path, pid_t **pids, size_t *count, size_t *cap)
{
    char usual[16384];
    ssize_t length = probe_read_file(path, usual, sizeof usual);
    if (length < (ssize_t)sizeof usual - 1)
        return length <= 0 || parse_children(usual, pids, count, cap);
    char *text = malloc(CHILDREN_TEXT_MAX);
    if (!text)
        return false;
    length = probe_read_file(path, text, CHILDREN_TEXT_MAX);
    if (length == CHILDREN_TEXT_MAX - 1) { /* cut short: the last pid may be cut in the middle, so it is left out */
        char *last_space = strrchr(text, ' ');
        *(last_space ? last_space : text) = '\0';
    }
    bool ok = length <= 0 || parse_children(text, pids, count, cap);
    free(text);
    return ok;
}

bool probe_read_children(pid_t pid, pid_t **pids, size_t *count, size_t *cap)
{
    pid_t *tids;
    size_t ntids;
    if (!probe_list_threads(pid, &tids, &ntids))
        return false;
    bool ok = true;
    size_t first = *count;
    for (size_t t = 0; t < ntids && ok; t++) {
        char path[96];
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)tids[t]);
        ok = read_children_file(path, pids, count, cap);
    }
    free(tids);
    if (*count - first < 2)
        return ok; /* nothing to sort (and *pids may still be NULL) */
    /* a child shows once, under the thread that forked it; sorted, so that the tree is in pid order */
    qsort(*pids + first, *count - first, sizeof **pids, compare_pids);
    size_t kept = first;
    for (size_t i = first; i < *count; i++)
        if (kept == first || (*pids)[kept - 1] != (*pids)[i])
            (*pids)[kept++] = (*pids)[i];
    *count = kept;
    return ok;
}
