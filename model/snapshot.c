/* Lifetime and lookups of the snapshot model (snapshot.h). */
#include "snapshot.h"

#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hd_snapshot_index;
static void index_free(struct hd_snapshot_index *index);

void hd_stack_release(struct hd_stack *stack)
{
    for (size_t i = 0; i < stack->nframes; i++) {
        free(stack->frames[i].module);
        free(stack->frames[i].symbol);
        free(stack->frames[i].called_as);
    }
    free(stack->frames);
    free(stack->why_not);
    *stack = (struct hd_stack){ 0 };
}

static void process_free(struct hd_process *process)
{
    for (size_t i = 0; i < process->argc; i++)
        free(process->argv[i]);
    free(process->argv);
    free(process->exe);
    free(process->tracer_cmdline);
    free(process->frozen_cgroup);
    free(process->frozen_by);
    free(process->freeze_control);
    hd_job_free(process->job);
    for (size_t i = 0; i < process->nthreads; i++) {
        free(process->threads[i].kernel_stack);
        free(process->threads[i].wait.mapping.path);
        free(process->threads[i].fuse.mount_point);
        free(process->threads[i].fuse.fs_type);
        free(process->threads[i].fuse.source);
        hd_stack_release(&process->threads[i].stack);
        free(process->threads[i].leaf_function);
        free(process->threads[i].leaf_module);
        for (size_t s = 0; s < process->threads[i].nearlier; s++) {
            free(process->threads[i].earlier[s].leaf_function);
            free(process->threads[i].earlier[s].leaf_module);
        }
        free(process->threads[i].earlier);
        hd_python_frames_release(&process->threads[i]);
    }
    free(process->threads);
    free(process->earlier);
    hd_go_runtime_release(&process->go);
    hd_jvm_release(&process->jvm);
    for (size_t i = 0; i < process->nmappings; i++)
        free(process->mappings[i].path);
    free(process->mappings);
    for (size_t i = 0; i < process->nfds; i++) {
        free(process->fds[i].target);
        free(process->fds[i].socket_name);
    }
    free(process->fds);
    for (size_t i = 0; i < process->nlibraries; i++) {
        free(process->libraries[i].path);
        free(process->libraries[i].soname);
        free(process->libraries[i].build_id);
    }
    free(process->libraries);
}

void hd_snapshot_free(struct hd_snapshot *snapshot)
{
    if (!snapshot)
        return;
    for (size_t i = 0; i < snapshot->nprocesses; i++)
        process_free(&snapshot->processes[i]);
    free(snapshot->processes);
    for (size_t i = 0; i < snapshot->nnotes; i++)
        free(snapshot->notes[i].text);
    free(snapshot->notes);
    free(snapshot->roots);
    free(snapshot->unix_peers);
    free(snapshot->outside_pipe_holders);
    free(snapshot->departed);
    index_free(snapshot->index);
    for (size_t i = 0; i < snapshot->nkept_strings; i++)
        free(snapshot->kept_strings[i]);
    free(snapshot->kept_strings);
    free(snapshot);
}

const char *hd_snapshot_keep_string(struct hd_snapshot *snapshot, char *owned)
{
    char **grown = hd_grow(snapshot->kept_strings, &snapshot->kept_strings_capacity, snapshot->nkept_strings,
                           sizeof *grown);
    if (!grown) {
        free(owned);
        return NULL;
    }
    snapshot->kept_strings = grown;
    snapshot->kept_strings[snapshot->nkept_strings++] = owned;
    return owned;
}

void *hd_grow(void *array, size_t *capacity, size_t count, size_t size)
{
    if (count < *capacity)
        return array;
    size_t wanted = count < 4 ? 8 : 2 * count;
    void *grown = reallocarray(array, wanted, size);
    if (grown)
        *capacity = wanted;
    return grown;
}

bool hd_snapshot_add_departed(struct hd_snapshot *snapshot, const struct hd_process *process)
{
    struct hd_departed *grown = hd_grow(snapshot->departed, &snapshot->departed_capacity, snapshot->ndeparted,
                                        sizeof *grown);
    if (!grown)
        return false;
    snapshot->departed = grown;
    struct hd_departed *departed = &snapshot->departed[snapshot->ndeparted++];
    *departed = (struct hd_departed){ .pid = process->pid, .ppid = process->ppid };
    memcpy(departed->comm, process->comm, sizeof departed->comm);
    return true;
}

bool hd_snapshot_note(struct hd_snapshot *snapshot, enum hd_note_kind kind, pid_t pid, pid_t tid, const char *format,
                      ...)
{
    va_list args;
    va_start(args, format);
    char *text cleanup_free = NULL;
    if (vasprintf(&text, format, args) < 0)
        text = NULL; /* what a failed vasprintf leaves there is undefined: nothing for the cleanup to free */
    va_end(args);
    if (!text)
        return false;
    struct hd_note *grown = hd_grow(snapshot->notes, &snapshot->notes_capacity, snapshot->nnotes, sizeof *grown);
    if (!grown)
        return false;
    snapshot->notes = grown;
    snapshot->notes[snapshot->nnotes++] =
        (struct hd_note){ .kind = kind, .pid = pid, .tid = tid, .text = steal_pointer(&text) };
    return true;
}

/* ---- the index ---------------------------------------------------------------------------------------------- */

struct index_entry {
    pid_t id;
    uint32_t process; /* in snapshot->processes */
    uint32_t thread;  /* in that process's threads (tid entries only) */
};

struct hd_snapshot_index {
    const struct hd_process *processes; /* what was indexed: a snapshot whose array moved or changed length since */
    size_t nprocesses;                  /* is not looked up here */
    struct index_entry *by_pid;         /* nprocesses entries, sorted by id */
    struct index_entry *by_tid;         /* nthreads entries, sorted by id */
    size_t nthreads;
};

static void index_free(struct hd_snapshot_index *index)
{
    if (!index)
        return;
    free(index->by_pid);
    free(index->by_tid);
    free(index);
}

HD_DEFINE_CLEANUP(struct hd_snapshot_index, index_free)

static int compare_entries(const void *a, const void *b)
{
    const struct index_entry *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

bool hd_snapshot_index_build(struct hd_snapshot *snapshot)
{
    index_free(snapshot->index);
    snapshot->index = NULL;
    size_t nthreads = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        nthreads += snapshot->processes[p].nthreads;
    if (snapshot->nprocesses > UINT32_MAX || nthreads > UINT32_MAX)
        return true; /* cannot happen (pids are 22 bits), and the scans still work */
    struct hd_snapshot_index *index hd_cleanup(index_free) = calloc(1, sizeof *index);
    if (!index)
        return false;
    index->by_pid = malloc((snapshot->nprocesses ? snapshot->nprocesses : 1) * sizeof *index->by_pid);
    index->by_tid = malloc((nthreads ? nthreads : 1) * sizeof *index->by_tid);
    if (!index->by_pid || !index->by_tid)
        return false;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        index->by_pid[p] = (struct index_entry){ .id = process->pid, .process = (uint32_t)p };
        for (size_t t = 0; t < process->nthreads; t++)
            index->by_tid[index->nthreads++] =
                (struct index_entry){ .id = process->threads[t].tid, .process = (uint32_t)p, .thread = (uint32_t)t };
    }
    qsort(index->by_pid, snapshot->nprocesses, sizeof *index->by_pid, compare_entries);
    qsort(index->by_tid, index->nthreads, sizeof *index->by_tid, compare_entries);
    index->processes = snapshot->processes;
    index->nprocesses = snapshot->nprocesses;
    snapshot->index = steal_pointer(&index);
    return true;
}

static const struct hd_snapshot_index *usable_index(const struct hd_snapshot *snapshot)
{
    const struct hd_snapshot_index *index = snapshot->index;
    return index && index->processes == snapshot->processes && index->nprocesses == snapshot->nprocesses ? index
                                                                                                         : NULL;
}

HD_KEY_COMPARATOR(compare_id, pid_t, struct index_entry, .id)

static const struct index_entry *index_lookup(const struct index_entry *entries, size_t count, pid_t id)
{
    size_t at = hd_lower_bound(&id, entries, count, sizeof *entries, compare_id);
    return at < count && entries[at].id == id ? &entries[at] : NULL;
}

/* ---- look-ups ---------------------------------------------------------------------------------------------- */

struct hd_process *hd_snapshot_find_process(const struct hd_snapshot *snapshot, pid_t pid)
{
    const struct hd_snapshot_index *index = usable_index(snapshot);
    if (index) {
        const struct index_entry *entry = index_lookup(index->by_pid, index->nprocesses, pid);
        return entry ? &snapshot->processes[entry->process] : NULL;
    }
    for (size_t i = 0; i < snapshot->nprocesses; i++)
        if (snapshot->processes[i].pid == pid)
            return &snapshot->processes[i];
    return NULL;
}

HD_KEY_COMPARATOR(compare_tid, pid_t, struct hd_thread, .tid)

struct hd_thread *hd_process_find_thread(const struct hd_process *process, pid_t tid)
{
    size_t at = hd_lower_bound(&tid, process->threads, process->nthreads, sizeof *process->threads, compare_tid);
    return at < process->nthreads && process->threads[at].tid == tid ? &process->threads[at] : NULL;
}

/* Through the index when the entry found still names that very thread (its process's threads unchanged). */
static struct hd_thread *find_thread_indexed(const struct hd_snapshot *snapshot,
                                             const struct hd_snapshot_index *index, pid_t tid,
                                             struct hd_process **process)
{
    const struct index_entry *entry = index_lookup(index->by_tid, index->nthreads, tid);
    if (!entry)
        return NULL;
    struct hd_process *owner = &snapshot->processes[entry->process];
    struct hd_thread *thread = entry->thread < owner->nthreads && owner->threads[entry->thread].tid == tid
                                   ? &owner->threads[entry->thread]
                                   : hd_process_find_thread(owner, tid);
    if (thread && process)
        *process = owner;
    return thread;
}

struct hd_thread *hd_snapshot_find_thread(const struct hd_snapshot *snapshot, pid_t tid, struct hd_process **process)
{
    const struct hd_snapshot_index *index = usable_index(snapshot);
    if (index)
        return find_thread_indexed(snapshot, index, tid, process);
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_thread *thread = hd_process_find_thread(&snapshot->processes[p], tid);
        if (thread) {
            if (process)
                *process = &snapshot->processes[p];
            return thread;
        }
    }
    return NULL;
}

/* after every mapping that ends at or before it */
static int address_after_mapping(const void *key, const void *element)
{
    return *(const uint64_t *)key >= ((const struct hd_mapping *)element)->end ? 1 : -1;
}

const struct hd_mapping *hd_mappings_find(const struct hd_mapping *mappings, size_t count, uint64_t address)
{
    size_t at = hd_lower_bound(&address, mappings, count, sizeof *mappings, address_after_mapping);
    return at < count && mappings[at].start <= address ? &mappings[at] : NULL;
}

const struct hd_mapping *hd_process_find_mapping(const struct hd_process *process, uint64_t address)
{
    return hd_mappings_find(process->mappings, process->nmappings, address);
}

const struct hd_fd *hd_process_find_fd(const struct hd_process *process, int fd)
{
    for (size_t i = 0; i < process->nfds; i++)
        if (process->fds[i].fd == fd)
            return &process->fds[i];
    return NULL;
}

enum hd_mapping_kind hd_mapping_classify(const struct hd_mapping *mapping)
{
    if (!mapping)
        return HD_MAPPING_UNKNOWN;
    if (mapping->permissions[3] == 's')
        return HD_MAPPING_SHARED;
    /* "[heap]", "[stack]" and the like are anonymous memory with a name */
    if (!mapping->path || mapping->path[0] == '[' || mapping->inode == 0)
        return HD_MAPPING_ANONYMOUS_PRIVATE;
    return HD_MAPPING_FILE_PRIVATE;
}

const char *hd_mapping_kind_name(enum hd_mapping_kind kind)
{
    static const char *const names[] = {
        [HD_MAPPING_UNKNOWN] = "unknown",
        [HD_MAPPING_ANONYMOUS_PRIVATE] = "anonymous-private",
        [HD_MAPPING_FILE_PRIVATE] = "file-private",
        [HD_MAPPING_SHARED] = "shared",
    };
    return (size_t)kind < COUNT(names) ? names[kind] : "unknown";
}

const char *hd_lock_kind_name(enum hd_lock_kind kind)
{
    static const char *const names[] = {
        [HD_LOCK_UNKNOWN] = "unknown",
        [HD_LOCK_MUTEX] = "mutex",
        [HD_LOCK_RWLOCK] = "rwlock",
        [HD_LOCK_JOIN] = "join",
        [HD_LOCK_GIL] = "gil",
        [HD_LOCK_FILE] = "file",
    };
    return (size_t)kind < COUNT(names) ? names[kind] : "unknown";
}

const char *hd_owner_whereabouts_name(enum hd_owner_whereabouts whereabouts)
{
    static const char *const names[] = {
        [HD_OWNER_UNKNOWN] = "unknown",
        [HD_OWNER_SAME_PROCESS] = "same-process",
        [HD_OWNER_OTHER_PROCESS] = "other-process",
        [HD_OWNER_OUTSIDE] = "outside-snapshot",
        [HD_OWNER_GONE] = "gone",
    };
    return (size_t)whereabouts < COUNT(names) ? names[whereabouts] : "unknown";
}

const char *hd_arch_name(enum hd_arch arch)
{
    static const char *const names[] = {
        [HD_ARCH_UNKNOWN] = "unknown",
        [HD_ARCH_X86_64] = "x86_64",
        [HD_ARCH_AARCH64] = "aarch64",
    };
    return (size_t)arch < COUNT(names) ? names[arch] : "unknown";
}

const char *hd_origin_name(enum hd_origin origin)
{
    static const char *const names[] = {
        [HD_ORIGIN_UNKNOWN] = "unknown",
        [HD_ORIGIN_FORKED] = "forked",
        [HD_ORIGIN_EXEC] = "exec",
        [HD_ORIGIN_SPAWN] = "spawn",
        [HD_ORIGIN_FORKSERVER] = "forkserver",
    };
    return (size_t)origin < COUNT(names) ? names[origin] : "unknown";
}

const char *hd_origin_basis_name(enum hd_origin_basis basis)
{
    static const char *const names[] = {
        [HD_ORIGIN_BASIS_NONE] = "none",
        [HD_ORIGIN_BASIS_AT_RANDOM_SAME] = "at-random-same",
        [HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT] = "at-random-different",
        [HD_ORIGIN_BASIS_EXECUTABLE_DIFFERS] = "executable-differs",
        [HD_ORIGIN_BASIS_UNREADABLE] = "unreadable",
    };
    return (size_t)basis < COUNT(names) ? names[basis] : "none";
}

const char *hd_wait_kind_name(enum hd_wait_kind kind)
{
    static const char *const names[] = {
        [HD_WAIT_NONE] = "none",     [HD_WAIT_FUTEX] = "futex",     [HD_WAIT_POLL] = "poll",
        [HD_WAIT_READ] = "read",     [HD_WAIT_WRITE] = "write",     [HD_WAIT_ACCEPT] = "accept",
        [HD_WAIT_CONNECT] = "connect", [HD_WAIT_CHILD] = "child",   [HD_WAIT_SLEEP] = "sleep",
        [HD_WAIT_SIGNAL] = "signal", [HD_WAIT_LOCK] = "file-lock",  [HD_WAIT_OTHER] = "syscall",
    };
    return (size_t)kind < COUNT(names) ? names[kind] : "none";
}

void hd_go_runtime_release(struct hd_go_runtime *go)
{
    for (size_t g = 0; g < go->ngoroutines; g++) {
        free(go->goroutines[g].wait_reason);
        for (size_t f = 0; f < go->goroutines[g].nframes; f++) {
            free(go->goroutines[g].frames[f].module);
            free(go->goroutines[g].frames[f].symbol);
            free(go->goroutines[g].frames[f].called_as);
        }
        free(go->goroutines[g].frames);
    }
    free(go->goroutines);
    free(go->version);
    go->goroutines = NULL;
    go->ngoroutines = 0;
    go->version = NULL;
}

void hd_jvm_release(struct hd_jvm *jvm)
{
    for (size_t t = 0; t < jvm->nthreads; t++) {
        free(jvm->threads[t].monitor_class);
        free(jvm->threads[t].blocker_class);
    }
    free(jvm->threads);
    free(jvm->release);
    jvm->threads = NULL;
    jvm->nthreads = 0;
    jvm->release = NULL;
}

void hd_python_frames_release(struct hd_thread *thread)
{
    for (size_t f = 0; f < thread->npython_frames; f++) {
        free(thread->python_frames[f].function);
        free(thread->python_frames[f].file);
    }
    free(thread->python_frames);
    thread->python_frames = NULL;
    thread->npython_frames = 0;
    thread->python_truncated = false;
}

const char *hd_gil_state_name(enum hd_gil_state state)
{
    static const char *const names[] = {
        [HD_GIL_UNKNOWN] = NULL,      [HD_GIL_NONE] = "none",         [HD_GIL_HOLDS] = "holds",
        [HD_GIL_WAITS] = "waits",     [HD_GIL_RELEASED] = "released",
    };
    return (size_t)state < COUNT(names) ? names[state] : NULL;
}

const char *hd_note_kind_name(enum hd_note_kind kind)
{
    static const char *const names[HD_NOTE_KINDS] = {
        [HD_NOTE_TARGET] = "target",   [HD_NOTE_DEPARTED] = "departed", [HD_NOTE_DEADLINE] = "deadline",
        [HD_NOTE_PROCFS] = "procfs",   [HD_NOTE_KERNEL] = "kernel",     [HD_NOTE_STACKS] = "stacks",
        [HD_NOTE_ORIGIN] = "origin",   [HD_NOTE_SOCKETS] = "sockets",   [HD_NOTE_NAMESPACE] = "namespace",
        [HD_NOTE_PYTHON] = "python",
    };
    return (size_t)kind < HD_NOTE_KINDS ? names[kind] : "target";
}

const char *hd_fd_class_name(enum hd_fd_class fd_class)
{
    static const char *const names[] = {
        [HD_FD_CLASS_OTHER] = "other",       [HD_FD_CLASS_FILE] = "file",
        [HD_FD_CLASS_DEVICE] = "device",     [HD_FD_CLASS_NVIDIA] = "nvidia",
        [HD_FD_CLASS_NVIDIA_UVM] = "nvidia-uvm", [HD_FD_CLASS_DRI] = "dri",
        [HD_FD_CLASS_PIPE] = "pipe",         [HD_FD_CLASS_SOCKET] = "socket",
        [HD_FD_CLASS_UNIX_SOCKET] = "unix-socket", [HD_FD_CLASS_X11] = "x11",
        [HD_FD_CLASS_WAYLAND] = "wayland",   [HD_FD_CLASS_DBUS] = "dbus",
        [HD_FD_CLASS_EVENTFD] = "eventfd",   [HD_FD_CLASS_MEMFD] = "memfd",
        [HD_FD_CLASS_SHM] = "shm",           [HD_FD_CLASS_ANON] = "anon",
    };
    return (size_t)fd_class < COUNT(names) && names[fd_class] ? names[fd_class] : "other";
}

const char *hd_python_start_method_name(enum hd_python_start_method method)
{
    static const char *const names[] = {
        [HD_PYTHON_NONE] = NULL, [HD_PYTHON_FORK] = "fork", [HD_PYTHON_SPAWN] = "spawn",
        [HD_PYTHON_FORKSERVER] = "forkserver",
    };
    return (size_t)method < COUNT(names) ? names[method] : NULL;
}

const char *hd_python_role_name(enum hd_python_role role)
{
    static const char *const names[] = {
        [HD_PYTHON_ROLE_NONE] = NULL,
        [HD_PYTHON_ROLE_MAIN] = "main",
        [HD_PYTHON_ROLE_FORK_CHILD] = "fork-child",
        [HD_PYTHON_ROLE_SPAWN_CHILD] = "spawn-child",
        [HD_PYTHON_ROLE_FORKSERVER] = "forkserver",
        [HD_PYTHON_ROLE_FORKSERVER_CHILD] = "forkserver-child",
        [HD_PYTHON_ROLE_RESOURCE_TRACKER] = "resource-tracker",
    };
    return (size_t)role < COUNT(names) ? names[role] : NULL;
}

const struct hd_library *hd_process_find_library(const struct hd_process *process, uint64_t address)
{
    for (size_t i = 0; i < process->nlibraries; i++)
        if (address >= process->libraries[i].start && address < process->libraries[i].end)
            return &process->libraries[i];
    return NULL;
}

const struct hd_library *hd_process_library_of_data(const struct hd_process *process, uint64_t address)
{
    const struct hd_library *library = hd_process_find_library(process, address);
    if (library)
        return library;
    const struct hd_mapping *mapping = hd_process_find_mapping(process, address);
    if (!mapping || mapping->path || mapping == process->mappings)
        return NULL;
    /* ld.so maps a library's .bss past the end of its file as anonymous memory right after its last mapping */
    const struct hd_mapping *before = mapping - 1;
    if (before->end != mapping->start || !before->path)
        return NULL;
    return hd_process_find_library(process, before->start);
}

const char *hd_basename(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}

static bool named_python(const char *name)
{
    return name && strncmp(name, "python", 6) == 0;
}

bool hd_process_forked(const struct hd_process *process)
{
    return process->origin == HD_ORIGIN_FORKED || process->origin == HD_ORIGIN_FORKSERVER;
}

bool hd_process_is_python(const struct hd_process *process)
{
    if (named_python(process->comm) || named_python(hd_basename(process->exe)) ||
        (process->argc && named_python(hd_basename(process->argv[0]))))
        return true;
    for (size_t m = 0; m < process->nmappings; m++) {
        const char *name = hd_basename(process->mappings[m].path);
        if (name && strncmp(name, "libpython", 9) == 0)
            return true;
    }
    return false;
}

void hd_job_free(struct hd_job *job)
{
    if (!job)
        return;
    free(job->job_id);
    free(job->step_id);
    free(job->run_id);
    free(job->master);
    free(job->cgroup);
    free(job);
}

const char *hd_job_role_name(enum hd_job_role role)
{
    static const char *const names[] = { [HD_JOB_RANK] = "rank", [HD_JOB_WORKER] = "worker",
                                         [HD_JOB_LAUNCHER] = "launcher" };
    return (size_t)role < COUNT(names) ? names[role] : "rank";
}

const struct hd_thread_sample *hd_thread_earlier_futex(const struct hd_thread *thread)
{
    for (size_t s = thread->nearlier; s-- > 0;) {
        const struct hd_thread_sample *sample = &thread->earlier[s];
        if (sample->present && sample->syscall.state == HD_SYSCALL_IN && sample->wait_kind == HD_WAIT_FUTEX &&
            sample->wait_address)
            return sample;
    }
    return NULL;
}

struct hd_thread_sample hd_thread_as_sample(const struct hd_thread *thread)
{
    return (struct hd_thread_sample){
        .present = true,
        .state = thread->state,
        .cpu_time_ns = thread->cpu_time_ns,
        .switches_known = thread->switches_known,
        .voluntary_switches = thread->voluntary_switches,
        .involuntary_switches = thread->involuntary_switches,
        .syscall = thread->syscall,
        .wait_kind = thread->wait.kind,
        .wait_address = thread->wait.address,
        .wait_operation = thread->wait.operation,
        .wait_expected = thread->wait.expected,
        .futex_private = thread->wait.futex_private,
        .timeout = thread->wait.timeout,
        .leaf_function = thread->leaf_function,
        .leaf_module = thread->leaf_module,
        .leaf_module_offset = thread->leaf_module_offset,
    };
}
