/* Snapshots built by hand for the report's unit tests (snapshot_builder.h). */
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- processes and threads ------------------------------------------------------------------------------------ */

/* The --stuck-after of the snapshots a test built: an analysis setting, kept beside them. */
#define SETTINGS_MAX 16
static struct {
    const struct hd_snapshot *snapshot;
    double stuck_after_s;
} settings[SETTINGS_MAX];

void set_stuck_after(const struct hd_snapshot *snapshot, double seconds)
{
    size_t free_slot = SETTINGS_MAX;
    for (size_t i = 0; i < SETTINGS_MAX; i++) {
        if (settings[i].snapshot == snapshot) {
            settings[i].stuck_after_s = seconds;
            return;
        }
        if (!settings[i].snapshot && free_slot == SETTINGS_MAX)
            free_slot = i;
    }
    cr_assert_lt(free_slot, SETTINGS_MAX, "more than %d snapshots with a --stuck-after", SETTINGS_MAX);
    settings[free_slot].snapshot = snapshot;
    settings[free_slot].stuck_after_s = seconds;
}

static double stuck_after_of(const struct hd_snapshot *snapshot)
{
    for (size_t i = 0; i < SETTINGS_MAX; i++)
        if (settings[i].snapshot == snapshot)
            return settings[i].stuck_after_s;
    return 0;
}

struct hd_snapshot *new_snapshot(pid_t root)
{
    struct hd_snapshot *snapshot = calloc(1, sizeof *snapshot);
    cr_assert_not_null(snapshot);
    snapshot->processes = calloc(BUILDER_MAX_PROCESSES, sizeof *snapshot->processes);
    cr_assert_not_null(snapshot->processes);
    snapshot->samples = 2;
    snapshot->arch = HD_ARCH_X86_64;
    add_root(snapshot, root);
    for (size_t i = 0; i < SETTINGS_MAX; i++) /* a snapshot freed before may have had this address */
        if (settings[i].snapshot == snapshot)
            settings[i].snapshot = NULL;
    return snapshot;
}

void add_root(struct hd_snapshot *snapshot, pid_t root)
{
    pid_t *grown = reallocarray(snapshot->roots, snapshot->nroots + 1, sizeof *grown);
    cr_assert_not_null(grown);
    snapshot->roots = grown;
    snapshot->roots[snapshot->nroots++] = root;
}

static void start_running(struct hd_thread *thread, pid_t tid)
{
    *thread = (struct hd_thread){ .tid = tid, .state = 'R', .syscall = { .state = HD_SYSCALL_RUNNING },
                                  .wait = { .fd = -1 } };
    snprintf(thread->name, sizeof thread->name, "thread%d", (int)tid);
}

struct hd_process *add_process(struct hd_snapshot *snapshot, pid_t pid, pid_t ppid, enum hd_origin origin,
                               size_t nthreads)
{
    cr_assert(snapshot->nprocesses < BUILDER_MAX_PROCESSES, "more than %d processes", BUILDER_MAX_PROCESSES);
    struct hd_process *process = &snapshot->processes[snapshot->nprocesses++];
    *process = (struct hd_process){
        .pid = pid, .ppid = ppid, .state = 'S', .origin = origin, .arch = HD_ARCH_X86_64,
        .thread_count = (int)nthreads, .nthreads = nthreads,
        .threads = calloc(nthreads ? nthreads : 1, sizeof *process->threads),
    };
    cr_assert_not_null(process->threads);
    snprintf(process->comm, sizeof process->comm, "proc%d", (int)pid);
    for (size_t t = 0; t < nthreads; t++)
        start_running(&process->threads[t], pid + (pid_t)t);
    return process;
}

struct hd_thread *add_thread(struct hd_snapshot *snapshot, pid_t pid, pid_t tid)
{
    struct hd_process *process = process_of(snapshot, pid);
    cr_assert_null(hd_process_find_thread(process, tid), "thread %d is there already", (int)tid);
    struct hd_thread *grown = reallocarray(process->threads, process->nthreads + 1, sizeof *grown);
    cr_assert_not_null(grown);
    process->threads = grown;
    size_t at = 0;
    while (at < process->nthreads && process->threads[at].tid < tid)
        at++;
    memmove(&process->threads[at + 1], &process->threads[at], (process->nthreads - at) * sizeof *grown);
    process->nthreads++;
    process->thread_count++;
    start_running(&process->threads[at], tid);
    if (snapshot->index)
        finish_snapshot(snapshot); /* an index that still names the old array would miss the new thread */
    return &process->threads[at];
}

struct hd_process *process_of(const struct hd_snapshot *snapshot, pid_t pid)
{
    struct hd_process *process = hd_snapshot_find_process(snapshot, pid);
    cr_assert_not_null(process, "no process %d", (int)pid);
    return process;
}

struct hd_thread *thread_of(const struct hd_snapshot *snapshot, pid_t tid)
{
    struct hd_thread *thread = hd_snapshot_find_thread(snapshot, tid, NULL);
    cr_assert_not_null(thread, "no thread %d", (int)tid);
    return thread;
}

/* A snapshot of its own frees what the process owns exactly as hd_snapshot_free() frees any. */
void remove_process(struct hd_snapshot *snapshot, pid_t pid)
{
    struct hd_process *process = process_of(snapshot, pid);
    struct hd_snapshot *gone = calloc(1, sizeof *gone);
    cr_assert_not_null(gone);
    gone->processes = malloc(sizeof *gone->processes);
    cr_assert_not_null(gone->processes);
    gone->processes[0] = *process;
    gone->nprocesses = 1;
    size_t at = (size_t)(process - snapshot->processes);
    memmove(process, process + 1, (snapshot->nprocesses - at - 1) * sizeof *process);
    snapshot->processes[--snapshot->nprocesses] = (struct hd_process){ 0 };
    hd_snapshot_free(gone);
}

void move_processes(struct hd_snapshot *into, struct hd_snapshot *from)
{
    cr_assert(into->nprocesses + from->nprocesses <= BUILDER_MAX_PROCESSES);
    memcpy(&into->processes[into->nprocesses], from->processes, from->nprocesses * sizeof *from->processes);
    into->nprocesses += from->nprocesses;
    from->nprocesses = 0;
    for (size_t r = 0; r < from->nroots; r++)
        add_root(into, from->roots[r]);
    hd_snapshot_free(from);
}

/* ---- what a thread waits for ---------------------------------------------------------------------------------- */

struct hd_wait *asleep_in(struct hd_thread *thread, const char *name, enum hd_wait_kind kind, const char *operation)
{
    thread->state = 'S';
    thread->syscall = (struct hd_syscall){ .state = HD_SYSCALL_IN, .name = name };
    same_in_every_sample(thread); /* asleep there in every sample: what it did before is forgotten */
    thread->wait = (struct hd_wait){ .kind = kind, .operation = operation, .fd = -1,
                                     .timeout = { .kind = HD_TIMEOUT_NONE } };
    return &thread->wait;
}

struct hd_wait *asleep_in_futex(struct hd_thread *thread, uint64_t address)
{
    struct hd_wait *wait = asleep_in(thread, "futex", HD_WAIT_FUTEX, "FUTEX_WAIT");
    wait->address = address;
    wait->futex_private = true;
    wait->expected = 0;
    wait->mapping_kind = HD_MAPPING_ANONYMOUS_PRIVATE;
    wait->mapping = (struct hd_mapping){ .start = address & ~0xfffull, .end = (address & ~0xfffull) + 0x21000,
                                         .permissions = "rw-p" };
    wait->lock = (struct hd_lock){ .kind = HD_LOCK_UNKNOWN, .word_read = true,
                                   .why_unknown = "no owner recorded (a condition variable, semaphore, barrier or "
                                                  "libc lock)" };
    return wait;
}

struct hd_wait *waiting_on_mutex(struct hd_thread *thread, uint64_t address, pid_t owner, pid_t owner_pid,
                                 enum hd_owner_whereabouts whereabouts, enum hd_mapping_kind mapping_kind)
{
    struct hd_wait *wait = asleep_in_futex(thread, address);
    wait->expected = 2;
    wait->mapping_kind = mapping_kind;
    if (mapping_kind == HD_MAPPING_SHARED)
        memcpy(wait->mapping.permissions, "rw-s", 5);
    wait->lock = (struct hd_lock){
        .kind = HD_LOCK_MUTEX, .object_address = address, .type = "normal", .word_read = true, .word = 2,
        .owner_tid = owner, .owner_pid = owner_pid, .owner_whereabouts = whereabouts,
    };
    return wait;
}

struct hd_wait *waiting_for_gil(struct hd_thread *thread, uint64_t gil, pid_t holder, pid_t holder_pid,
                                enum hd_owner_whereabouts whereabouts)
{
    struct hd_wait *wait = asleep_in_futex(thread, gil + 0x30);
    wait->operation = "FUTEX_WAIT_BITSET";
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 4000000 };
    wait->mapping_kind = HD_MAPPING_FILE_PRIVATE;
    wait->lock = (struct hd_lock){ .kind = HD_LOCK_GIL, .object_address = gil, .owner_tid = holder,
                                   .owner_pid = holder_pid, .owner_whereabouts = whereabouts };
    thread->gil = HD_GIL_WAITS;
    return wait;
}

void add_python_frame(struct hd_thread *thread, const char *function, const char *file, int line, bool entry)
{
    struct hd_python_frame *grown =
        reallocarray(thread->python_frames, thread->npython_frames + 1, sizeof *thread->python_frames);
    cr_assert_not_null(grown);
    thread->python_frames = grown;
    grown[thread->npython_frames++] = (struct hd_python_frame){
        .function = strdup(function), .file = strdup(file), .line = line, .entry = entry };
    if (thread->gil == HD_GIL_UNKNOWN)
        thread->gil = HD_GIL_RELEASED;
}

void add_native_frame(struct hd_thread *thread, const char *symbol)
{
    struct hd_frame *grown = reallocarray(thread->stack.frames, thread->stack.nframes + 1, sizeof *grown);
    cr_assert_not_null(grown);
    thread->stack.frames = grown;
    uint64_t pc = 0x7f0000100000 + 0x100 * thread->stack.nframes;
    grown[thread->stack.nframes++] = (struct hd_frame){ .pc = pc, .module = strdup("/usr/lib/libexample.so"),
                                                        .module_offset = pc & 0xfffff, .symbol = strdup(symbol) };
    thread->stack.state = HD_STACK_TAKEN;
}

struct hd_wait *joining(struct hd_thread *thread, uint64_t address, pid_t joined, pid_t pid)
{
    struct hd_wait *wait = asleep_in_futex(thread, address);
    wait->lock = (struct hd_lock){ .kind = HD_LOCK_JOIN, .type = "join", .object_address = address,
                                   .word_read = true, .word = (uint64_t)joined, .owner_tid = joined,
                                   .owner_whereabouts = HD_OWNER_SAME_PROCESS, .owner_pid = pid };
    return wait;
}

void in_wait4(struct hd_thread *thread, pid_t child)
{
    struct hd_wait *wait = asleep_in(thread, "wait4", HD_WAIT_CHILD, "wait4");
    wait->child_selector = HD_CHILD_PID;
    wait->child = child;
}

void in_pause(struct hd_thread *thread)
{
    asleep_in(thread, "pause", HD_WAIT_SIGNAL, "pause");
}

void in_nanosleep(struct hd_thread *thread)
{
    struct hd_wait *wait = asleep_in(thread, "nanosleep", HD_WAIT_SLEEP, "nanosleep");
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = 500000000 };
}

static struct hd_wait *on_fd(struct hd_thread *thread, const char *name, enum hd_wait_kind kind, int fd)
{
    struct hd_wait *wait = asleep_in(thread, name, kind, name);
    wait->fd = fd;
    wait->fds[0] = fd;
    wait->nfds_known = 1;
    return wait;
}

void reading(struct hd_thread *thread, int fd)
{
    on_fd(thread, "read", HD_WAIT_READ, fd);
}

void writing(struct hd_thread *thread, int fd)
{
    on_fd(thread, "write", HD_WAIT_WRITE, fd);
}

struct hd_wait *polling(struct hd_thread *thread, int fd, uint64_t remaining_ns)
{
    struct hd_wait *wait = asleep_in(thread, "poll", HD_WAIT_POLL, "poll");
    wait->nfds = 1;
    wait->fds[0] = fd;
    wait->nfds_known = 1;
    wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .remaining_ns = remaining_ns };
    return wait;
}

/* ---- fds, sockets, memory ------------------------------------------------------------------------------------- */

static struct hd_fd *new_fd(struct hd_process *process)
{
    struct hd_fd *grown = reallocarray(process->fds, process->nfds + 1, sizeof *grown);
    cr_assert_not_null(grown);
    process->fds = grown;
    return &process->fds[process->nfds++];
}

struct hd_fd *add_fd(struct hd_process *process, int number, enum hd_fd_kind kind, uint64_t inode, int access_mode)
{
    char target[64];
    snprintf(target, sizeof target, "%s:[%llu]", kind == HD_FD_PIPE ? "pipe" : "socket", (unsigned long long)inode);
    struct hd_fd *fd = new_fd(process);
    *fd = (struct hd_fd){ .fd = number, .kind = kind, .inode = inode, .access_mode = access_mode,
                          .target = strdup(target) };
    cr_assert_not_null(fd->target);
    return fd;
}

struct hd_fd *add_file(struct hd_process *process, int number, const char *target, enum hd_fd_class fd_class)
{
    struct hd_fd *fd = new_fd(process);
    *fd = (struct hd_fd){ .fd = number, .kind = HD_FD_FILE, .access_mode = -1, .target = strdup(target),
                          .fd_class = fd_class };
    cr_assert_not_null(fd->target);
    return fd;
}

static int compare_peers(const void *a, const void *b)
{
    const struct hd_socket_peer *x = a, *y = b;
    return (x->inode > y->inode) - (x->inode < y->inode);
}

void add_socket_pair(struct hd_snapshot *snapshot, uint64_t a, uint64_t b)
{
    struct hd_socket_peer *grown = reallocarray(snapshot->unix_peers, snapshot->nunix_peers + 2, sizeof *grown);
    cr_assert_not_null(grown);
    snapshot->unix_peers = grown;
    snapshot->unix_peers[snapshot->nunix_peers++] = (struct hd_socket_peer){ .inode = a, .peer_inode = b };
    snapshot->unix_peers[snapshot->nunix_peers++] = (struct hd_socket_peer){ .inode = b, .peer_inode = a };
    qsort(snapshot->unix_peers, snapshot->nunix_peers, sizeof *grown, compare_peers); /* sorted, as sock_diag's */
}

struct hd_mapping *add_mapping(struct hd_process *process, uint64_t start, uint64_t end, const char *permissions,
                               const char *path)
{
    struct hd_mapping *grown = reallocarray(process->mappings, process->nmappings + 1, sizeof *grown);
    cr_assert_not_null(grown);
    process->mappings = grown;
    size_t at = 0; /* in address order, as the maps file lists them: hd_process_find_mapping() searches by halves */
    while (at < process->nmappings && process->mappings[at].start < start)
        at++;
    memmove(&grown[at + 1], &grown[at], (process->nmappings - at) * sizeof *grown);
    process->nmappings++;
    struct hd_mapping *mapping = &grown[at];
    *mapping = (struct hd_mapping){ .start = start, .end = end, .path = path ? strdup(path) : NULL };
    snprintf(mapping->permissions, sizeof mapping->permissions, "%s", permissions);
    return mapping;
}

struct hd_library *add_library(struct hd_process *process, uint64_t start, uint64_t end, const char *path,
                               const char *soname)
{
    struct hd_library *grown = reallocarray(process->libraries, process->nlibraries + 1, sizeof *grown);
    cr_assert_not_null(grown);
    process->libraries = grown;
    struct hd_library *library = &process->libraries[process->nlibraries++];
    *library = (struct hd_library){ .path = strdup(path), .soname = soname ? strdup(soname) : NULL,
                                    .start = start, .end = end };
    cr_assert_not_null(library->path);
    return library;
}

void add_futex_memory(struct hd_process *process, uint64_t address)
{
    add_mapping(process, address & ~0xfffull, (address & ~0xfffull) + 0x21000, "rw-p", NULL);
}

/* ---- scenes several test files start from --------------------------------------------------------------------- */

struct hd_snapshot *fork_with_held_lock(enum hd_mapping_kind mapping_kind)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    add_process(snapshot, 200, 100, HD_ORIGIN_FORKED, 1);
    in_wait4(thread_of(snapshot, 100), 200);
    in_pause(thread_of(snapshot, 101));
    waiting_on_mutex(thread_of(snapshot, 200), LOCK_ADDRESS, 101, 100, HD_OWNER_OTHER_PROCESS, mapping_kind);
    return snapshot;
}

struct hd_snapshot *parent_polling_a_dead_worker(int status)
{
    struct hd_snapshot *snapshot = new_snapshot(1000);
    struct hd_process *parent = add_process(snapshot, 1000, 1, HD_ORIGIN_EXEC, 1);
    struct hd_process *worker = add_process(snapshot, 1100, 1000, HD_ORIGIN_FORKED, 1);
    add_fd(parent, 3, HD_FD_PIPE, 4242, 0);
    add_fd(parent, 4, HD_FD_PIPE, 4242, 1);
    polling(thread_of(snapshot, 1000), 3, 4000000000);
    worker->state = 'Z';
    worker->zombie = true;
    worker->exit_status = status;
    thread_of(snapshot, 1100)->state = 'Z';
    thread_of(snapshot, 1100)->syscall.state = HD_SYSCALL_NONE;
    return snapshot;
}

/* ---- the samples --------------------------------------------------------------------------------------------- */

static struct hd_thread_sample sample_of(const struct hd_thread *thread)
{
    struct hd_thread_sample sample = hd_thread_as_sample(thread);
    sample.leaf_function = thread->leaf_function ? strdup(thread->leaf_function) : NULL; /* its own */
    sample.leaf_module = thread->leaf_module ? strdup(thread->leaf_module) : NULL;
    return sample;
}

struct hd_thread_sample *earlier_samples(const struct hd_snapshot *snapshot, struct hd_thread *thread)
{
    if (thread->nearlier > 0 || snapshot->samples < 2)
        return thread->earlier;
    thread->nearlier = snapshot->samples - 1;
    thread->earlier = calloc(thread->nearlier, sizeof *thread->earlier);
    cr_assert_not_null(thread->earlier);
    for (size_t s = 0; s < thread->nearlier; s++)
        thread->earlier[s] = sample_of(thread);
    return thread->earlier;
}

void ran(const struct hd_snapshot *snapshot, struct hd_thread *thread, uint64_t cpu_ns, uint64_t voluntary,
         uint64_t involuntary)
{
    cr_assert_geq(snapshot->samples, 2u, "running between samples takes two of them");
    thread->switches_known = true;
    struct hd_thread_sample *earlier = earlier_samples(snapshot, thread);
    for (size_t s = 0; s < thread->nearlier; s++)
        earlier[s].switches_known = true;
    thread->cpu_time_ns += cpu_ns;
    thread->voluntary_switches += voluntary;
    thread->involuntary_switches += involuntary;
}

void same_in_every_sample(struct hd_thread *thread)
{
    for (size_t s = 0; s < thread->nearlier; s++)
        free(thread->earlier[s].leaf_function), free(thread->earlier[s].leaf_module);
    free(thread->earlier);
    thread->earlier = NULL;
    thread->nearlier = 0;
}

void earlier_zombie(const struct hd_snapshot *snapshot, struct hd_process *process, bool zombie)
{
    if (process->nearlier == 0 && snapshot->samples >= 2) {
        process->nearlier = snapshot->samples - 1;
        process->earlier = calloc(process->nearlier, sizeof *process->earlier);
        cr_assert_not_null(process->earlier);
    }
    for (size_t s = 0; s < process->nearlier; s++)
        process->earlier[s] = (struct hd_process_sample){ .present = true, .zombie = zombie };
}

/* ---- done ----------------------------------------------------------------------------------------------------- */

void finish_snapshot(struct hd_snapshot *snapshot)
{
    /* every sample saw what a test did not say otherwise of: each thread as it is now, each zombie a zombie */
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        if (process->nearlier == 0)
            earlier_zombie(snapshot, process, process->zombie);
        for (size_t t = 0; t < process->nthreads; t++)
            earlier_samples(snapshot, &process->threads[t]);
    }
    cr_assert(hd_snapshot_index_build(snapshot), "no memory for the snapshot's index");
}

struct report_analysis *analyze(struct hd_snapshot *snapshot)
{
    finish_snapshot(snapshot);
    struct report_analysis *analysis =
        report_analyze_with(snapshot, &(struct report_options){ .stuck_after_s = stuck_after_of(snapshot) });
    cr_assert_not_null(analysis);
    return analysis;
}
