/* Core files into one snapshot (core_snapshot.h). */
#include "core_snapshot.h"

#include "clock.h"
#include "core_file.h"
#include "files.h"
#include "locks.h"
#include "memory.h"
#include "probe.h"
#include "python.h"
#include "stacks.h"
#include "symbols.h"
#include "syscalls.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* AT_RANDOM points to 16 random bytes the kernel put on the initial stack at exec: a fork child has the same
 * bytes at the same address, an exec'd one other bytes (probe/origin.h does the same on live processes). */
#define AT_RANDOM_BYTES 16

struct opened {
    struct probe_core **cores;
    size_t ncores;
};

static void opened_release(struct opened *opened)
{
    for (size_t i = 0; i < opened->ncores; i++)
        probe_core_free(opened->cores[i]);
    free(opened->cores);
    probe_memory_forget_offline();
    probe_files_clear_offline();
}

static int compare_threads(const void *a, const void *b)
{
    const struct hd_thread *x = a, *y = b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The command line as pr_psargs has it: the arguments joined by spaces, cut at 80 bytes. */
static bool split_arguments(struct hd_process *process, const char *args)
{
    size_t words = 0;
    for (const char *at = args; *at;) {
        at += strspn(at, " ");
        if (!*at)
            break;
        words++;
        at += strcspn(at, " ");
    }
    process->argv = calloc(words + 1, sizeof *process->argv);
    if (!process->argv)
        return false;
    for (const char *at = args; *at;) {
        at += strspn(at, " ");
        size_t length = strcspn(at, " ");
        if (!length)
            break;
        if (!(process->argv[process->argc] = strndup(at, length)))
            return false;
        process->argc++;
        at += length;
    }
    process->cmdline_truncated = strlen(args) >= 80;
    return true;
}


static int compare_mappings(const void *a, const void *b)
{
    const struct hd_mapping *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Every file mapping NT_FILE names (gcore and the kernel leave code and read-only data out of the PT_LOAD
 * segments, but not out of NT_FILE), then the PT_LOAD segments no file holds (anonymous memory, the heap, the
 * stacks); by address, without overlaps. */
static bool add_mappings(struct hd_process *process, const struct probe_core *core)
{
    size_t room = core->nfiles + core->nsegments;
    struct hd_mapping *all = calloc(room ? room : 1, sizeof *all);
    if (!all)
        return false;
    size_t count = 0;
    bool complete = true;
    for (size_t i = 0; i < core->nfiles && complete; i++) {
        const struct probe_core_file *file = &core->files[i];
        const struct probe_core_segment *segment = probe_core_segment_at(core, file->start);
        if (segment && segment->vaddr != file->start)
            segment = NULL;
        /* a core does not say which mappings were shared: POSIX shared memory and memfds are */
        bool shared = strncmp(file->path, "/dev/shm/", 9) == 0 || strncmp(file->path, "/memfd:", 7) == 0;
        /* a file mapping left out of the segments was not writable: code or read-only data */
        unsigned flags = segment ? segment->flags : PF_R | PF_X;
        struct hd_mapping *mapping = &all[count];
        *mapping = (struct hd_mapping){ .start = file->start, .end = file->end, .offset = file->offset,
                                        .path = strdup(file->path) };
        snprintf(mapping->permissions, sizeof mapping->permissions, "%c%c%c%c", flags & PF_R ? 'r' : '-',
                 flags & PF_W ? 'w' : '-', flags & PF_X ? 'x' : '-', shared ? 's' : 'p');
        complete = mapping->path != NULL;
        count += complete;
        /* a core names no inode: that of the file as this machine has it (or under --sysroot), which is the file
         * that is read for the mapping; 0 when there is none */
        char located[4200];
        struct stat status;
        if (complete && probe_files_locate(file->path, located, sizeof located) && stat(located, &status) == 0 &&
            S_ISREG(status.st_mode)) {
            mapping->inode = status.st_ino;
            mapping->device_major = major(status.st_dev);
            mapping->device_minor = minor(status.st_dev);
        }
    }
    for (size_t s = 0; s < core->nsegments && complete; s++) {
        const struct probe_core_segment *segment = &core->segments[s];
        if (probe_core_file_at(core, segment->vaddr))
            continue;
        struct hd_mapping *mapping = &all[count++];
        *mapping = (struct hd_mapping){ .start = segment->vaddr, .end = segment->vaddr + segment->memsz };
        snprintf(mapping->permissions, sizeof mapping->permissions, "%c%c%cp", segment->flags & PF_R ? 'r' : '-',
                 segment->flags & PF_W ? 'w' : '-', segment->flags & PF_X ? 'x' : '-');
    }
    qsort(all, count, sizeof *all, compare_mappings);
    process->mappings = all;
    for (size_t i = 0; i < count; i++) {
        if (process->nmappings > 0 && all[i].start < all[process->nmappings - 1].end) {
            free(all[i].path); /* overlapping entries: a crafted core */
            continue;
        }
        all[process->nmappings++] = all[i];
    }
    return complete;
}

static int compare_files_by_path(const void *a, const void *b)
{
    const struct probe_core_file *const *x = a, *const *y = b;
    return strcmp((*x)->path, (*y)->path);
}

static int compare_libraries(const void *a, const void *b)
{
    const struct hd_library *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The mapped files, one library per path: its lowest and highest address; by start address, as probe keeps them. */
static bool add_libraries(struct hd_process *process, const struct probe_core *core)
{
    const struct probe_core_file **by_path cleanup_free = calloc(core->nfiles ? core->nfiles : 1, sizeof *by_path);
    process->libraries = calloc(core->nfiles ? core->nfiles : 1, sizeof *process->libraries);
    if (!by_path || !process->libraries)
        return false;
    for (size_t i = 0; i < core->nfiles; i++)
        by_path[i] = &core->files[i];
    qsort(by_path, core->nfiles, sizeof *by_path, compare_files_by_path);
    for (size_t i = 0; i < core->nfiles; i++) {
        const struct probe_core_file *file = by_path[i];
        struct hd_library *library = process->nlibraries ? &process->libraries[process->nlibraries - 1] : NULL;
        if (library && strcmp(library->path, file->path) == 0) {
            library->start = file->start < library->start ? file->start : library->start;
            library->end = file->end > library->end ? file->end : library->end;
            continue;
        }
        library = &process->libraries[process->nlibraries];
        *library = (struct hd_library){ .start = file->start, .end = file->end, .path = strdup(file->path) };
        if (!library->path)
            return false;
        process->nlibraries++;
    }
    qsort(process->libraries, process->nlibraries, sizeof *process->libraries, compare_libraries);
    return true;
}

static bool add_threads(struct hd_process *process, struct probe_core *core, const struct probe_clocks *clocks)
{
    process->threads = calloc(core->nthreads, sizeof *process->threads);
    if (!process->threads)
        return false;
    for (size_t i = 0; i < core->nthreads; i++) {
        const struct probe_core_thread *from = &core->threads[i];
        struct hd_thread *thread = &process->threads[process->nthreads++];
        thread->tid = from->tid;
        /* a core keeps no thread names: the process's stands for each */
        memcpy(thread->name, process->comm, sizeof thread->name);
        thread->syscall = from->syscall;
        thread->syscall_from_registers = true;
        /* blocked in a call the dump interrupted, or running (or faulting) in user space */
        thread->state = thread->syscall.state == HD_SYSCALL_IN ? 'S' : 'R';
        thread->last_cpu = -1;
        if (thread->syscall.state == HD_SYSCALL_IN && thread->syscall.name)
            probe_decode_wait(&thread->syscall, NULL, probe_core_read, core, clocks, &thread->wait);
        /* a deadline is a time of the dumped machine's clocks, whose reading at the dump no core keeps: a timed
         * wait, of a length unknown */
        if (thread->wait.timeout.kind == HD_TIMEOUT_FINITE && thread->wait.timeout.absolute)
            thread->wait.timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_UNREADABLE, .absolute = true };
        thread->stack.state = HD_STACK_NOT_TAKEN;
    }
    qsort(process->threads, process->nthreads, sizeof *process->threads, compare_threads); /* tids differ */
    process->thread_count = (int)process->nthreads;
    return true;
}

static const char *executable_of(const struct probe_core *core)
{
    uint64_t entry;
    const struct probe_core_file *file = probe_core_auxv(core, AT_ENTRY, &entry) ? probe_core_file_at(core, entry) : NULL;
    return file ? file->path : NULL;
}

static bool add_process(struct hd_snapshot *snapshot, struct probe_core *core, const struct probe_clocks *clocks)
{
    struct hd_process *process = &snapshot->processes[snapshot->nprocesses++];
    *process = (struct hd_process){ .pid = core->pid, .ppid = core->ppid, .session = core->session,
                                    .uid = core->uid, .arch = core->arch };
    memcpy(process->comm, core->comm, sizeof process->comm);
    /* gcore's own attach leaves every process it dumps in tracing stop ('t'): that is not the process's state */
    process->state = core->state && strchr("RDZ", core->state) ? core->state : 'S';
    const char *exe = executable_of(core);
    if (exe && !(process->exe = strdup(exe)))
        return false;
    process->exe_errno = exe ? 0 : ENOENT;
    return split_arguments(process, core->args) && add_mappings(process, core) && add_libraries(process, core) &&
           add_threads(process, core, clocks);
}

/* The tree order of a live snapshot: each root (a process whose parent was not dumped) by pid, then its
 * descendants depth-first by pid. */
static void place_in_tree_order(struct hd_snapshot *snapshot, struct hd_process *unordered, size_t count, pid_t parent,
                                bool roots)
{
    for (;;) {
        struct hd_process *next = NULL;
        for (size_t i = 0; i < count; i++) {
            if (unordered[i].pid == 0)
                continue;
            bool root = true;
            for (size_t j = 0; j < count && root; j++)
                root = !(unordered[j].pid != 0 && unordered[j].pid == unordered[i].ppid) &&
                       !hd_snapshot_find_process(snapshot, unordered[i].ppid);
            bool wanted = roots ? root : unordered[i].ppid == parent;
            if (wanted && (!next || unordered[i].pid < next->pid))
                next = &unordered[i];
        }
        if (!next)
            return;
        pid_t pid = next->pid;
        snapshot->processes[snapshot->nprocesses++] = *next;
        next->pid = 0;
        if (roots)
            snapshot->roots[snapshot->nroots++] = pid;
        place_in_tree_order(snapshot, unordered, count, pid, false);
    }
}

static const struct probe_core *core_of(const struct opened *opened, pid_t pid)
{
    for (size_t i = 0; i < opened->ncores; i++)
        if (opened->cores[i]->pid == pid)
            return opened->cores[i];
    return NULL;
}

/* Fork or exec, by AT_RANDOM: the same address and bytes as the parent's core. */
static void mark_origins(struct hd_snapshot *snapshot, const struct opened *opened)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        const struct probe_core *child = core_of(opened, process->pid), *parent = core_of(opened, process->ppid);
        if (!child || !parent)
            continue;
        uint64_t child_random, parent_random;
        unsigned char child_bytes[AT_RANDOM_BYTES], parent_bytes[AT_RANDOM_BYTES];
        if (!probe_core_auxv(child, AT_RANDOM, &child_random) || !probe_core_auxv(parent, AT_RANDOM, &parent_random) ||
            !probe_core_read((void *)child, child_random, child_bytes, sizeof child_bytes) ||
            !probe_core_read((void *)parent, parent_random, parent_bytes, sizeof parent_bytes)) {
            process->origin_basis = HD_ORIGIN_BASIS_UNREADABLE;
            continue;
        }
        bool same = child_random == parent_random && memcmp(child_bytes, parent_bytes, sizeof child_bytes) == 0;
        process->origin = same ? HD_ORIGIN_FORKED : HD_ORIGIN_EXEC;
        process->origin_basis = same ? HD_ORIGIN_BASIS_AT_RANDOM_SAME : HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT;
    }
}

/* Lock owners among the dumped processes; one that is in none of them stays unplaced (no /proc to ask: the
 * machine that dumped them is not this one). */
static void place_owners(struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        for (size_t t = 0; t < snapshot->processes[p].nthreads; t++) {
            struct hd_lock *lock = &snapshot->processes[p].threads[t].wait.lock;
            struct hd_process *owner = NULL;
            if (lock->kind == HD_LOCK_UNKNOWN || lock->owner_tid <= 0 ||
                !hd_snapshot_find_thread(snapshot, lock->owner_tid, &owner))
                continue;
            lock->owner_pid = owner->pid;
            lock->owner_whereabouts = owner == &snapshot->processes[p] ? HD_OWNER_SAME_PROCESS
                                                                       : HD_OWNER_OTHER_PROCESS;
        }
}

static int open_cores(const struct probe_core_options *options, struct opened *opened, struct hd_snapshot *snapshot,
                      char *error, size_t error_size)
{
    opened->cores = calloc(options->npaths ? options->npaths : 1, sizeof *opened->cores);
    if (!opened->cores)
        return -ENOMEM;
    int first_failure = 0;
    for (size_t i = 0; i < options->npaths; i++) {
        char why[512];
        struct probe_core *core = NULL;
        int status = probe_core_open(options->paths[i], &core, why, sizeof why);
        if (status == 0 && core_of(opened, core->pid)) {
            snprintf(why, sizeof why, "%s: a second core of process %d: not read", options->paths[i], (int)core->pid);
            probe_core_free(core);
            status = -EINVAL;
        }
        if (status != 0) {
            if (!first_failure) {
                first_failure = status;
                snprintf(error, error_size, "%s", why);
            }
            hd_snapshot_note(snapshot, HD_NOTE_TARGET, 0, 0, "%s", why);
            continue;
        }
        opened->cores[opened->ncores++] = core;
        struct stat status_of_file;
        if (stat(options->paths[i], &status_of_file) == 0 && status_of_file.st_mtime > snapshot->taken_at)
            snapshot->taken_at = (double)status_of_file.st_mtime;
        for (size_t n = 0; n < core->nproblems; n++)
            hd_snapshot_note(snapshot, HD_NOTE_PROCFS, core->pid, 0, "core of process %d: %s", (int)core->pid,
                             core->problems[n]);
    }
    return opened->ncores ? 0 : first_failure ? first_failure : -EINVAL;
}

/* Every thread's native stack, unwound from the registers its core kept, its frames named from the files the core
 * names (as they are on this machine). */
static void take_stacks(struct hd_snapshot *snapshot, const struct opened *opened)
{
    struct probe_stacks *stacks = probe_stacks_new(probe_debug_files_default());
    for (size_t p = 0; stacks && p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        const struct probe_core *core = core_of(opened, process->pid);
        const void **registers = calloc(process->nthreads ? process->nthreads : 1, sizeof *registers);
        if (!core || !registers) {
            free(registers);
            continue;
        }
        size_t size = core->nthreads ? core->threads[0].registers_size : 0;
        for (size_t t = 0; t < process->nthreads; t++)
            for (size_t c = 0; c < core->nthreads && !registers[t]; c++)
                if (core->threads[c].tid == process->threads[t].tid)
                    registers[t] = core->threads[c].registers;
        probe_stacks_take_offline(stacks, process, registers, size);
        free(registers);
        /* running in user space when dumped: the function it was in */
        for (size_t t = 0; t < process->nthreads; t++) {
            struct hd_thread *thread = &process->threads[t];
            if (thread->state == 'R' && thread->stack.state == HD_STACK_TAKEN && thread->stack.nframes > 0)
                probe_symbols_set_leaf(thread, &thread->stack.frames[0]);
        }
    }
    probe_stacks_free(stacks);
}

static void note_limits(struct hd_snapshot *snapshot, size_t ncores)
{
    hd_snapshot_note(snapshot, HD_NOTE_TARGET, 0, 0,
                     "diagnosed from %zu core file%s, one moment of each process: no wait channels, no kernel "
                     "stacks, no thread names, no progress between samples, no fds (pipes and sockets between "
                     "the processes are not seen), and processes of the tree that were not dumped are missing",
                     ncores, ncores == 1 ? "" : "s");
}

int probe_core_snapshot(const struct probe_core_options *options, struct hd_snapshot **out, char *error,
                        size_t error_size)
{
    *out = NULL;
    struct hd_snapshot *snapshot hd_cleanup(hd_snapshot_free) = calloc(1, sizeof *snapshot);
    struct opened opened cleanup_with(opened_release) = { 0 };
    if (!snapshot)
        return -ENOMEM;
    snapshot->arch = HD_ARCH_X86_64;
    snapshot->samples = 1;
    snapshot->ptrace_why_not = "diagnosed from core files: no process was stopped, the stacks are the cores'";
    if (options->npaths > PROBE_OFFLINE_MAX) {
        snprintf(error, error_size, "%zu cores: hangdoc reads at most %d at once", options->npaths,
                 PROBE_OFFLINE_MAX);
        return -E2BIG;
    }
    /* files are read where the cores say, or under --sysroot, before the first page a core left out is read */
    struct probe_offline_files files = { .sysroot = options->sysroot, .exe = options->exe };
    probe_files_set_offline(&files);
    int status = open_cores(options, &opened, snapshot, error, error_size);
    if (status != 0)
        return status;
    files.exe_named = executable_of(opened.cores[0]);
    probe_files_set_offline(&files);
    const struct probe_clocks clocks = { 0 };
    struct hd_process *unordered cleanup_free = calloc(opened.ncores, sizeof *unordered);
    snapshot->processes = calloc(opened.ncores, sizeof *snapshot->processes);
    snapshot->roots = calloc(opened.ncores, sizeof *snapshot->roots);
    if (!unordered || !snapshot->processes || !snapshot->roots)
        return -ENOMEM;
    struct hd_snapshot building = { .processes = unordered };
    for (size_t i = 0; i < opened.ncores; i++) {
        if (!probe_memory_offline(opened.cores[i]->pid, probe_core_read, opened.cores[i]) ||
            !add_process(&building, opened.cores[i], &clocks)) {
            for (size_t p = 0; p < building.nprocesses; p++)
                snapshot->processes[snapshot->nprocesses++] = unordered[p];
            snprintf(error, error_size, "out of memory");
            return -ENOMEM;
        }
    }
    place_in_tree_order(snapshot, unordered, opened.ncores, 0, true);
    for (size_t i = 0; i < opened.ncores; i++)
        if (unordered[i].pid != 0) { /* in a cycle of parents only a crafted core can make: a root of its own */
            snapshot->roots[snapshot->nroots++] = unordered[i].pid;
            snapshot->processes[snapshot->nprocesses++] = unordered[i];
        }
    hd_snapshot_index_build(snapshot);
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        probe_read_locks(&snapshot->processes[p]);
    place_owners(snapshot);
    mark_origins(snapshot, &opened);
    take_stacks(snapshot, &opened);
    if (!probe_read_python(snapshot, 0))
        return -ENOMEM;
    note_limits(snapshot, opened.ncores);
    *out = steal_pointer(&snapshot);
    return 0;
}
