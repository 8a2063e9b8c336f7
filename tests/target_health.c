/* A target's health through /proc (target_health.h). */
#include "target_health.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A status file is about 1.5 KiB; State: and TracerPid: are among its first ten lines. */
#define STATUS_TEXT_MAX 4096

bool target_thread_is_stopped(const struct target_thread *thread)
{
    return thread->state == 't' || thread->state == 'T';
}

/* Reads `path` into `text` (NUL-terminated); how many bytes, 0 when it cannot be opened or reads empty. */
static size_t read_text(const char *path, char *text, size_t size)
{
    FILE *stream = fopen(path, "re");
    if (!stream)
        return 0;
    size_t length = fread(text, 1, size - 1, stream);
    fclose(stream);
    text[length] = '\0';
    return length;
}

/* The State: letter and TracerPid of one status text; false when either line is missing. */
static bool parse_status(const char *text, struct target_thread *thread)
{
    const char *state = strstr(text, "\nState:");
    const char *tracer = strstr(text, "\nTracerPid:");
    if (!state || !tracer)
        return false;
    state += strlen("\nState:");
    thread->state = state[strspn(state, " \t")];
    thread->tracer = (pid_t)atol(tracer + strlen("\nTracerPid:"));
    return true;
}

bool target_health_each_thread(pid_t pid, void (*visit)(const struct target_thread *thread, void *context),
                               void *context, size_t *unparsed)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return false;
    struct dirent *entry;
    while ((entry = readdir(tasks))) {
        long tid = strtol(entry->d_name, NULL, 10);
        if (tid <= 0)
            continue;
        char file[96], text[STATUS_TEXT_MAX];
        snprintf(file, sizeof file, "/proc/%d/task/%ld/status", (int)pid, tid);
        /* a thread that exits between readdir() and open() cannot be opened, and one that exits between open()
         * and read() reads as nothing (ESRCH): gone, not stopped */
        if (read_text(file, text, sizeof text) == 0)
            continue;
        struct target_thread thread = { .tid = (pid_t)tid };
        if (parse_status(text, &thread))
            visit(&thread, context);
        else if (unparsed)
            (*unparsed)++;
    }
    closedir(tasks);
    return true;
}

static void count_thread(const struct target_thread *thread, void *context)
{
    struct target_health *health = context;
    health->threads++;
    if (target_thread_is_stopped(thread) && health->stopped++ == 0)
        health->first_stopped = *thread;
    if (thread->tracer != 0 && health->traced++ == 0)
        health->first_traced = *thread;
}

bool target_health_look(pid_t pid, struct target_health *health)
{
    *health = (struct target_health){ 0 };
    return target_health_each_thread(pid, count_thread, health, &health->unparsed);
}

bool target_health_activity(pid_t pid, struct target_activity *activity)
{
    char path[64], text[STATUS_TEXT_MAX];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (read_text(path, text, sizeof text) == 0)
        return false;
    /* fields 14 and 15 (utime, stime) count from the ')' that ends comm: a comm may hold spaces and parentheses */
    const char *close = strrchr(text, ')');
    unsigned long long user = 0, system = 0;
    if (!close || sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &user, &system) != 2)
        return false;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (read_text(path, text, sizeof text) == 0)
        return false;
    const char *line = strstr(text, "\nvoluntary_ctxt_switches:");
    if (!line)
        return false;
    activity->cpu_ticks = user + system;
    activity->voluntary_switches = strtoull(line + strlen("\nvoluntary_ctxt_switches:"), NULL, 10);
    return true;
}
