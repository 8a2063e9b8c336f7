/* PID namespaces (pidns.h). */
#include "pidns.h"

#include "procfs.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t probe_pid_namespace_of(const char *pid)
{
    char path[64], target[64];
    snprintf(path, sizeof path, "/proc/%s/ns/pid", pid);
    ssize_t length = readlink(path, target, sizeof target - 1);
    if (length <= 0)
        return 0;
    target[length] = '\0';
    unsigned long long inode;
    return sscanf(target, "pid:[%llu]", &inode) == 1 ? (uint64_t)inode : 0;
}

/* The snapshot's tasks of other namespaces, sorted by (namespace, id there): one lookup per recorded owner, not a
 * scan of every thread (a pool of a thousand threads waiting on one mutex in a container). Processes are indexed
 * by their pid there, for wait4. */
struct namespaced_id {
    uint64_t ns;
    pid_t id;   /* in the namespace */
    pid_t host; /* in hangdoc's */
};

struct translation {
    struct namespaced_id *tasks;
    size_t ntasks;
    /* the last id looked for among every process of the system (several waiters on one gone owner) */
    uint64_t searched_ns;
    pid_t searched_id;
    pid_t searched_host;
};

static int compare_ids(const void *a, const void *b)
{
    const struct namespaced_id *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static bool index_tasks(const struct hd_snapshot *snapshot, struct translation *t)
{
    size_t count = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        if (snapshot->processes[p].ns_pid)
            count += snapshot->processes[p].nthreads;
    t->tasks = calloc(count ? count : 1, sizeof *t->tasks);
    if (!t->tasks)
        return false;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        for (size_t i = 0; process->ns_pid && i < process->nthreads; i++)
            if (process->threads[i].ns_tid)
                t->tasks[t->ntasks++] = (struct namespaced_id){ process->pid_namespace, process->threads[i].ns_tid,
                                                                process->threads[i].tid };
    }
    if (t->ntasks)
        qsort(t->tasks, t->ntasks, sizeof *t->tasks, compare_ids);
    return true;
}

/* The host id of the snapshot's task `id` of namespace `ns`; 0 when the snapshot has none. A process's pid there
 * is its main thread's id there. */
static pid_t snapshot_task_in(const struct translation *t, uint64_t ns, pid_t id)
{
    struct namespaced_id key = { .ns = ns, .id = id };
    const struct namespaced_id *found =
        t->ntasks ? bsearch(&key, t->tasks, t->ntasks, sizeof key, compare_ids) : NULL;
    return found ? found->host : 0;
}

/* The id in hangdoc's namespace of the task whose id in namespace `ns` is `ns_tid`, among every process of the
 * system in that namespace (an owner outside the snapshot); 0 when none. Bounded by the processes there are. */
static pid_t system_task_in(uint64_t ns, pid_t ns_tid)
{
    DIR *proc = opendir("/proc");
    pid_t found = 0;
    for (struct dirent *entry; proc && !found && (entry = readdir(proc));) {
        long pid = strtol(entry->d_name, NULL, 10);
        if (pid <= 0 || pid > INT32_MAX || probe_pid_namespace_of(entry->d_name) != ns)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/task", pid);
        DIR *tasks = opendir(path);
        for (struct dirent *task; tasks && !found && (task = readdir(tasks));) {
            long tid = strtol(task->d_name, NULL, 10);
            if (tid <= 0 || tid > INT32_MAX)
                continue;
            char status_path[96], text[4096];
            snprintf(status_path, sizeof status_path, "/proc/%ld/task/%ld/status", pid, tid);
            ssize_t length = probe_read_file(status_path, text, sizeof text);
            struct probe_status status;
            if (length > 0 && probe_parse_status(text, (size_t)length, &status) && status.nspid_levels > 1 &&
                status.nspid_innermost == ns_tid)
                found = (pid_t)tid;
        }
        if (tasks)
            closedir(tasks);
    }
    if (proc)
        closedir(proc);
    return found;
}

static void translate_owner(struct translation *t, const struct hd_process *process, struct hd_lock *lock)
{
    if (lock->kind == HD_LOCK_UNKNOWN || lock->owner_tid <= 0)
        return;
    lock->owner_ns_tid = lock->owner_tid;
    pid_t host = snapshot_task_in(t, process->pid_namespace, lock->owner_ns_tid);
    if (!host) {
        if (t->searched_ns != process->pid_namespace || t->searched_id != lock->owner_ns_tid) {
            t->searched_ns = process->pid_namespace;
            t->searched_id = lock->owner_ns_tid;
            t->searched_host = system_task_in(process->pid_namespace, lock->owner_ns_tid);
        }
        host = t->searched_host;
    }
    if (host) {
        lock->owner_tid = host;
        return;
    }
    /* no task has that id in the namespace: the owner is gone. Said here, where the id is known to be the
     * namespace's: resolving it as one of hangdoc's would find an unrelated thread of the same number. */
    lock->owner_whereabouts = HD_OWNER_GONE;
}

/* wait4's pid: a child's pid there is its main thread's id there */
static void translate_child(const struct translation *t, const struct hd_process *process, struct hd_wait *wait)
{
    if (wait->kind != HD_WAIT_CHILD || wait->child_selector != HD_CHILD_PID || wait->child <= 0)
        return;
    pid_t host = snapshot_task_in(t, process->pid_namespace, wait->child);
    if (host)
        wait->child = host;
}

void probe_translate_namespaced_ids(struct hd_snapshot *snapshot)
{
    struct translation t = { 0 };
    bool any = false;
    for (size_t p = 0; p < snapshot->nprocesses && !any; p++)
        any = snapshot->processes[p].ns_pid != 0;
    if (!any)
        return;
    if (!index_tasks(snapshot, &t)) {
        hd_snapshot_note(snapshot, HD_NOTE_NAMESPACE, 0, 0,
                         "PID namespaces: out of memory; the ids read from processes in other namespaces are not "
                         "translated");
        return;
    }
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        if (!process->ns_pid || !process->pid_namespace)
            continue;
        for (size_t i = 0; i < process->nthreads; i++) {
            translate_owner(&t, process, &process->threads[i].wait.lock);
            translate_child(&t, process, &process->threads[i].wait);
        }
        translate_owner(&t, process, &process->python.gil_lock);
    }
    free(t.tasks);
}
