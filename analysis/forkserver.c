/* Fork findings in children of Python's forkserver (forkserver.h). */
#include "forkserver.h"

#include "finding.h"
#include "inheritance.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The findings that blame what a child inherited through fork(): those whose cause is fork inheritance. */
static bool is_fork_finding(enum report_finding_id id)
{
    return report_rule(id)->cause == REPORT_CAUSE_FORK_INHERITANCE;
}

/* The argument of the forkserver's `-c` that calls multiprocessing.forkserver's main, or NULL. */
static const char *forkserver_call(const struct hd_process *server)
{
    for (size_t a = 0; a < server->argc; a++) {
        const char *call = server->argv[a] ? strstr(server->argv[a], "multiprocessing.forkserver import main") : NULL;
        if (call)
            return strstr(call, "main(");
    }
    return NULL;
}

/* Copies [from, to) into `out`, cut to its size. */
static void copy_span(const char *from, const char *to, char *out, size_t size)
{
    size_t length = (size_t)(to - from);
    if (length >= size)
        length = size - 1;
    memcpy(out, from, length);
    out[length] = '\0';
}

bool report_forkserver_preload(const struct hd_process *server, char *modules, size_t modules_size, char *main_path,
                               size_t main_path_size)
{
    modules[0] = main_path[0] = '\0';
    const char *call = forkserver_call(server);
    if (!call)
        return false;
    /* main(listener_fd, alive_r, preload, ...): the first list is the preload, the two before it are numbers */
    const char *open = strchr(call, '[');
    const char *close = open ? strchr(open, ']') : NULL;
    if (open && close)
        copy_span(open + 1, close, modules, modules_size);
    const char *key = strstr(call, "'main_path': ");
    if (key) {
        const char *value = key + strlen("'main_path': ");
        char quote = *value;
        const char *end = (quote == '\'' || quote == '"') ? strchr(value + 1, quote) : NULL;
        if (end)
            copy_span(value + 1, end, main_path, main_path_size);
    }
    return true;
}

/* "preloads the main module (/tmp/train.py): its top level ran there" and the like, into `out`. */
static void preload_words(const struct hd_process *server, char *out, size_t size)
{
    char modules[256], main_path[512];
    if (!report_forkserver_preload(server, modules, sizeof modules, main_path, sizeof main_path)) {
        snprintf(out, size, "its command line does not say what it preloads");
        return;
    }
    bool main_module = strstr(modules, "'__main__'") || strstr(modules, "\"__main__\"");
    if (main_module && main_path[0])
        snprintf(out, size, "it preloads the main module (%s): that module's top level ran in the forkserver, "
                            "outside the main guard, before it forked any worker", main_path);
    else if (main_module)
        snprintf(out, size, "it preloads the main module: that module's top level ran in the forkserver, outside "
                            "the main guard, before it forked any worker");
    else if (modules[0])
        snprintf(out, size, "it preloads %s (set_forkserver_preload): their imports ran in the forkserver", modules);
    else
        snprintf(out, size, "it preloads nothing: what it runs, it ran itself");
}

/* How many threads of the forkserver run the finding's runtime. */
static size_t runtime_threads(const struct report_analysis *analysis, const struct hd_process *server,
                              const struct report_finding *finding)
{
    return finding->runtime ? report_threads_running(analysis, server, finding->runtime) : 0;
}

static bool describe_forkserver(const struct report_analysis *analysis, const struct hd_process *server,
                                struct report_finding *finding)
{
    char preload[800];
    preload_words(server, preload, sizeof preload);
    size_t threads = runtime_threads(analysis, server, finding);
    if (threads)
        return report_finding_add_evidence(finding, "forkserver",
                            "forked from the Python forkserver %d, not from the process that asked for it; the "
                            "forkserver runs %zu thread%s of %s; %s",
                            (int)server->pid, threads, threads == 1 ? "" : "s", finding->runtime->name, preload);
    return report_finding_add_evidence(finding, "forkserver",
                        "forked from the Python forkserver %d, not from the process that asked for it; %s",
                        (int)server->pid, preload);
}

/* The remedies for a forkserver child, first among its finding's. */
static const char *const forkserver_remedies[] = {
    "Python's forkserver (the default start method from Python 3.14) imports the main module before it forks the "
    "workers, so whatever the module's top level runs (a parallel op, a thread, CUDA, a lock taken) runs in the "
    "forkserver and every worker inherits it. Move that work under if __name__ == '__main__': and keep the "
    "module's top level to imports and definitions; set_forkserver_preload() modules must start nothing either.",
    "Or start the workers with spawn (DataLoader(..., multiprocessing_context='spawn'), or "
    "multiprocessing.set_start_method('spawn', force=True) under the main guard): each worker is then a fresh "
    "interpreter and inherits nothing, though it still imports the main module, top level included.",
};

/* Puts the forkserver's remedies before the others. */
static bool lead_with_forkserver_remedies(struct report_finding *finding)
{
    size_t before = finding->nremedies;
    for (size_t r = 0; r < COUNT(forkserver_remedies); r++)
        if (!report_finding_remedy(finding, forkserver_remedies[r]))
            return false;
    size_t added = finding->nremedies - before;
    char *moved[COUNT(forkserver_remedies)];
    memcpy(moved, finding->remedies + before, added * sizeof *moved);
    memmove(finding->remedies + added, finding->remedies, before * sizeof *finding->remedies);
    memcpy(finding->remedies, moved, added * sizeof *moved);
    return true;
}

/* A remedy that proposes the forkserver is none for its child. */
static void drop_forkserver_remedies(struct report_finding *finding)
{
    size_t kept = 0;
    for (size_t r = 0; r < finding->nremedies; r++) {
        if (strstr(finding->remedies[r], "forkserver")) {
            free(finding->remedies[r]);
            continue;
        }
        finding->remedies[kept++] = finding->remedies[r];
    }
    finding->nremedies = kept;
}

bool report_forkserver_findings(const struct hd_snapshot *snapshot, struct report_analysis *analysis)
{
    for (size_t f = 0; f < analysis->nfindings; f++) {
        struct report_finding *finding = &analysis->findings[f];
        const struct hd_process *process = hd_snapshot_find_process(snapshot, finding->pid);
        if (!is_fork_finding(finding->kind) || !process || process->origin != HD_ORIGIN_FORKSERVER)
            continue;
        const struct hd_process *server = hd_snapshot_find_process(snapshot, process->ppid);
        if (server && !describe_forkserver(analysis, server, finding))
            return false;
        drop_forkserver_remedies(finding);
        if (!lead_with_forkserver_remedies(finding))
            return false;
    }
    return true;
}
