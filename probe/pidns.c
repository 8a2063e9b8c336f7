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

/* The thread of the snapshot in namespace `ns` whose id there is `ns_tid` (its process in *process); NULL. */
static const struct hd_thread *snapshot_thread_in(const struct hd_snapshot *snapshot, uint64_t ns, pid_t ns_tid,
                                                  const struct hd_process **process)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *candidate = &snapshot->processes[p];
        if (candidate->pid_namespace != ns)
            continue;
        for (size_t t = 0; t < candidate->nthreads; t++)
            if (candidate->threads[t].ns_tid == ns_tid) {
                *process = candidate;
                return &candidate->threads[t];
            }
    }
    return NULL;
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

static void translate_owner(const struct hd_snapshot *snapshot, const struct hd_process *process, struct hd_lock *lock)
{
    if (lock->kind == HD_LOCK_UNKNOWN || lock->owner_tid <= 0)
        return;
    lock->owner_ns_tid = lock->owner_tid;
    const struct hd_process *owner_process;
    const struct hd_thread *owner = snapshot_thread_in(snapshot, process->pid_namespace, lock->owner_ns_tid,
                                                       &owner_process);
    pid_t host = owner ? owner->tid : system_task_in(process->pid_namespace, lock->owner_ns_tid);
    if (host) {
        lock->owner_tid = host;
        return;
    }
    /* no task has that id in the namespace: the owner is gone. Said here, where the id is known to be the
     * namespace's: resolving it as one of hangdoc's would find an unrelated thread of the same number. */
    lock->owner_whereabouts = HD_OWNER_GONE;
}

static void translate_child(const struct hd_snapshot *snapshot, const struct hd_process *process, struct hd_wait *wait)
{
    if (wait->kind != HD_WAIT_CHILD || wait->child_selector != HD_CHILD_PID || wait->child <= 0)
        return;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        if (snapshot->processes[p].pid_namespace == process->pid_namespace &&
            snapshot->processes[p].ns_pid == wait->child) {
            wait->child = snapshot->processes[p].pid;
            return;
        }
}

void probe_translate_namespaced_ids(struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        if (!process->ns_pid || !process->pid_namespace)
            continue;
        for (size_t t = 0; t < process->nthreads; t++) {
            translate_owner(snapshot, process, &process->threads[t].wait.lock);
            translate_child(snapshot, process, &process->threads[t].wait);
        }
    }
}
