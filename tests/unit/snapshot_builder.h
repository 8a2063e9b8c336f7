/* Snapshots built by hand for the report's unit tests: what probe_snapshot() would have read (processes, threads
 * and what they wait on, fds, mappings, libraries, with locks already resolved), written as a test reads best:
 *
 *     struct hd_snapshot *snapshot = new_snapshot(100);
 *     add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);          // threads 100 and 101, running
 *     add_process(snapshot, 200, 100, HD_ORIGIN_FORKED, 1);
 *     in_wait4(thread_of(snapshot, 100), 200);
 *     waiting_on_mutex(thread_of(snapshot, 200), 0x1000, 101, 100, HD_OWNER_OTHER_PROCESS,
 *                      HD_MAPPING_ANONYMOUS_PRIVATE);
 *     struct report_analysis *analysis = analyze(snapshot);
 *
 * A snapshot has room for BUILDER_MAX_PROCESSES processes from the start, so the pointer add_process() returns
 * stays valid while more are added. Everything is allocated as probe/ allocates it: hd_snapshot_free() frees it.
 * It links the model and analysis/ (analyze()), never probe/; a snapshot that cannot be built fails the test
 * (Criterion's asserts).
 */
#pragma once

#include "analysis.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BUILDER_MAX_PROCESSES 1024

/* ---- processes and threads ---- */

/* An empty snapshot of root `root`: 2 samples, x86-64. */
struct hd_snapshot *new_snapshot(pid_t root);
/* Another root (a second pid asked for). */
void add_root(struct hd_snapshot *snapshot, pid_t root);
/* Process `pid` (comm "proc<pid>") with `nthreads` threads, tids pid, pid + 1, ... (named "thread<tid>"), each
 * running and seen in every sample. */
struct hd_process *add_process(struct hd_snapshot *snapshot, pid_t pid, pid_t ppid, enum hd_origin origin,
                               size_t nthreads);
/* One more running thread `tid` of process `pid`, kept in tid order as probe/ keeps them. The process's other
 * threads may move: look them up again. */
struct hd_thread *add_thread(struct hd_snapshot *snapshot, pid_t pid, pid_t tid);
/* Process `pid`, or thread `tid`: fails the test when absent. */
struct hd_process *process_of(const struct hd_snapshot *snapshot, pid_t pid);
struct hd_thread *thread_of(const struct hd_snapshot *snapshot, pid_t tid);
/* Takes process `pid` out of the snapshot and frees it, as if it had never been read (one that vanished: add it
 * with hd_snapshot_add_departed()). The processes after it move down by one. */
void remove_process(struct hd_snapshot *snapshot, pid_t pid);
/* Moves the processes and roots of `from` after those of `into`, and frees `from`: two trees in one snapshot. */
void move_processes(struct hd_snapshot *into, struct hd_snapshot *from);

/* ---- what a thread waits for ---- */

/* Asleep in system call `name`, waiting for `kind` without a timeout, in every sample (earlier samples given to the
 * thread are forgotten: give them after). */
struct hd_wait *asleep_in(struct hd_thread *thread, const char *name, enum hd_wait_kind kind, const char *operation);
/* Asleep in futex FUTEX_WAIT at `address`, in private anonymous memory ([address & ~0xfff, + 0x21000)), on an
 * object with no owner recorded. */
struct hd_wait *asleep_in_futex(struct hd_thread *thread, uint64_t address);
/* Asleep on a normal mutex at `address` owned by thread `owner` of process `owner_pid`. */
struct hd_wait *waiting_on_mutex(struct hd_thread *thread, uint64_t address, pid_t owner, pid_t owner_pid,
                                 enum hd_owner_whereabouts whereabouts, enum hd_mapping_kind mapping_kind);
/* In take_gil(): a timed futex wait (5 ms, as CPython's) inside the GIL's state at `gil`, whose holder is thread
 * `holder` of process `holder_pid`. */
struct hd_wait *waiting_for_gil(struct hd_thread *thread, uint64_t gil, pid_t holder, pid_t holder_pid,
                                enum hd_owner_whereabouts whereabouts);
/* Appends a native frame named `symbol`, outer than those already there (add the innermost first); the stack is
 * then taken. */
void add_native_frame(struct hd_thread *thread, const char *symbol);
/* Appends a Python frame, outer than those already there (add the innermost first). */
void add_python_frame(struct hd_thread *thread, const char *function, const char *file, int line, bool entry);
/* In pthread_join() of thread `joined` of the same process `pid`: a futex on the joined thread's tid word. */
struct hd_wait *joining(struct hd_thread *thread, uint64_t address, pid_t joined, pid_t pid);
void in_wait4(struct hd_thread *thread, pid_t child);
void in_pause(struct hd_thread *thread);
/* nanosleep with 0.5 s left */
void in_nanosleep(struct hd_thread *thread);
/* read() or write() of `fd`, no timeout */
void reading(struct hd_thread *thread, int fd);
void writing(struct hd_thread *thread, int fd);
/* poll() of `fd` alone with `remaining_ns` of its timeout left */
struct hd_wait *polling(struct hd_thread *thread, int fd, uint64_t remaining_ns);

/* ---- fds, sockets, memory ---- */

/* fd `number`, a pipe or socket `inode` ("pipe:[inode]", "socket:[inode]") opened with `access_mode`. The pointer
 * is good until the process's next fd. */
struct hd_fd *add_fd(struct hd_process *process, int number, enum hd_fd_kind kind, uint64_t inode, int access_mode);
/* fd `number`, a file or device `target` of class `fd_class`. */
struct hd_fd *add_file(struct hd_process *process, int number, const char *target, enum hd_fd_class fd_class);
/* Unix sockets `a` and `b` connected to each other (sock_diag's peers). */
void add_socket_pair(struct hd_snapshot *snapshot, uint64_t a, uint64_t b);
/* A mapping [start, end) of `path` (NULL: anonymous) with `permissions` ("rw-p"), in address order among the
 * process's others. The pointer is good until the process's next mapping. */
struct hd_mapping *add_mapping(struct hd_process *process, uint64_t start, uint64_t end, const char *permissions,
                               const char *path);
/* The library `path` mapped at [start, end), as probe/libraries.c lists it; `soname` may be NULL. */
struct hd_library *add_library(struct hd_process *process, uint64_t start, uint64_t end, const char *path,
                               const char *soname);
/* The memory asleep_in_futex() draws around `address`, mapped by `process` too (a parent: the child got it at
 * fork()). */
void add_futex_memory(struct hd_process *process, uint64_t address);

/* ---- scenes several test files start from ---- */

#define LOCK_ADDRESS 0x55d2a0c4e040ull

/* Parent 100 (thread 100 in wait4 on child 200, thread 101 in pause()) and forked child 200 whose thread waits on
 * a mutex at LOCK_ADDRESS owned by 101, in memory of `mapping_kind`. */
struct hd_snapshot *fork_with_held_lock(enum hd_mapping_kind mapping_kind);
/* Parent 1000 polls (5 s timeout, in a loop) the read end of a pipe whose write end it holds itself, as a
 * multiprocessing queue does; its worker 1100 is a zombie with wait status `status`, in both samples. */
struct hd_snapshot *parent_polling_a_dead_worker(int status);

/* ---- the samples ----
 * Every sample saw a thread as the last one does unless a test says otherwise: finish_snapshot() gives each thread
 * without earlier samples snapshot->samples - 1 copies of its last state (the same call, no CPU, no switch: no
 * progress), and each process as it is (a zombie in every sample). Set a thread's last state first. */

/* The earlier samples of `thread` (snapshot->samples - 1 of them, oldest first), made now as copies of it when it
 * has none: change one to say what that sample saw. */
struct hd_thread_sample *earlier_samples(const struct hd_snapshot *snapshot, struct hd_thread *thread);
/* Since the earlier samples the thread used `cpu_ns` of CPU, blocked `voluntary` times and was preempted
 * `involuntary` times: its last state moves on by that much (switch counts known). */
void ran(const struct hd_snapshot *snapshot, struct hd_thread *thread, uint64_t cpu_ns, uint64_t voluntary,
         uint64_t involuntary);
/* Forgets what earlier samples were given to `thread`: finish_snapshot() makes them copies of its last state. */
void same_in_every_sample(struct hd_thread *thread);
/* What every earlier sample saw of `process`: a zombie or not. */
void earlier_zombie(const struct hd_snapshot *snapshot, struct hd_process *process, bool zombie);

/* ---- done ---- */

/* Indexes the snapshot (hd_snapshot_index_build), as probe_snapshot() does once the last process is in. Call it
 * again after a change: analyze() does. */
void finish_snapshot(struct hd_snapshot *snapshot);
/* The --stuck-after analyze() judges `snapshot` with (0, the rules that need it off, until set): an analysis
 * setting, not a fact of the snapshot. */
void set_stuck_after(const struct hd_snapshot *snapshot, double seconds);
/* finish_snapshot(), then report_analyze_with() its settings: fails the test when that gives nothing. */
struct report_analysis *analyze(struct hd_snapshot *snapshot);
