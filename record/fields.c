/* The tables of the snapshot file (fields.h): one line per member of the model. The keys are the members' names,
 * so that the file reads like snapshot.h. Enumerations are saved as their numbers: record.h's format version names
 * the values they had, and the static assertions below fail the build when one gains a value, which changes the
 * format (raise RECORD_FORMAT_VERSION and say so in docs/snapshot-format.md). */
#include "fields.h"

#include "snapshot.h"
#include "util.h"

#include <stdint.h>

#define MEMBER_SIZE(type, member) sizeof(((type *)0)->member)
#define MEMBER_ALIGN(type, member) _Alignof(__typeof__(((type *)0)->member))
#define AT(type, member) #member, .offset = offsetof(type, member), .size = MEMBER_SIZE(type, member), \
                         .align = MEMBER_ALIGN(type, member)

#define F(type, member, record_kind) { AT(type, member), .kind = record_kind }
#define REQUIRED(type, member) { AT(type, member), .kind = RECORD_STRING, .required = true }
/* the count of a fixed array: the analysis indexes the array with it */
#define BOUNDED(type, member, most) { AT(type, member), .kind = RECORD_UNSIGNED, .limit = (long)(most) + 1 }
#define ENUM(type, member, last) { AT(type, member), .kind = RECORD_ENUM, .limit = (long)(last) + 1 }
#define FIXED(type, member, record_kind) \
    { AT(type, member), .kind = record_kind, .limit = (long)COUNT(((type *)0)->member) }
#define NESTED(type, member, table) { AT(type, member), .kind = RECORD_STRUCT, .element = &(table) }
#define ARRAY(type, member, count, table) \
    { AT(type, member), .kind = RECORD_ARRAY, .count_offset = offsetof(type, count), .element = &(table) }
#define OPTIONAL(type, member, table) { AT(type, member), .kind = RECORD_OPTIONAL, .element = &(table) }
#define VECTOR(type, member, count, record_kind) \
    { AT(type, member), .kind = record_kind, .count_offset = offsetof(type, count) }
#define CAPACITY(type, member, count) { AT(type, member), .kind = RECORD_CAPACITY, .count_offset = offsetof(type, count) }
#define DERIVED(type, member) { AT(type, member), .kind = RECORD_DERIVED }

#define STRUCT(variable, type, table) \
    const struct record_struct variable = { #type, sizeof(type), _Alignof(type), table, COUNT(table) }

/* A new value of one of these changes what the numbers in a saved snapshot mean. */
_Static_assert(HD_ARCH_AARCH64 == 2 && HD_SYSCALL_IN == 3 && HD_WAIT_OTHER == 11 && HD_TIMEOUT_UNREADABLE == 3 &&
                   HD_CHILD_PIDFD == 3 && HD_MAPPING_SHARED == 3 && HD_LOCK_FILE == 5 && HD_OWNER_GONE == 4 &&
                   HD_SIGNAL_SET_WANTED == 2 && HD_STACK_FAILED == 2 && HD_GIL_RELEASED == 4 &&
                   HD_FD_ANON == 4 && HD_FD_CLASS_ANON == 15 && HD_PYTHON_FORKSERVER == 3 &&
                   HD_PYTHON_ROLE_RESOURCE_TRACKER == 6 && HD_ORIGIN_FORKSERVER == 4 &&
                   HD_ORIGIN_BASIS_UNREADABLE == 4 && HD_JOB_LAUNCHER == 2 && HD_NOTE_KINDS == 10,
               "an enumeration of snapshot.h changed: raise RECORD_FORMAT_VERSION (record.h) and update "
               "docs/snapshot-format.md, then these numbers");

static const struct record_field syscall_fields[] = {
    ENUM(struct hd_syscall, state, HD_SYSCALL_IN),
    F(struct hd_syscall, nr, RECORD_LONG),
    F(struct hd_syscall, name, RECORD_STATIC),
    FIXED(struct hd_syscall, args, RECORD_U64S),
    F(struct hd_syscall, stack_pointer, RECORD_U64),
    F(struct hd_syscall, program_counter, RECORD_U64),
};
static STRUCT(syscall_struct, struct hd_syscall, syscall_fields);

static const struct record_field timeout_fields[] = {
    ENUM(struct hd_timeout, kind, HD_TIMEOUT_UNREADABLE),
    F(struct hd_timeout, absolute, RECORD_BOOL),
    F(struct hd_timeout, remaining_ns, RECORD_LONG),
};
static STRUCT(timeout_struct, struct hd_timeout, timeout_fields);

static const struct record_field mapping_fields[] = {
    F(struct hd_mapping, start, RECORD_U64),
    F(struct hd_mapping, end, RECORD_U64),
    F(struct hd_mapping, offset, RECORD_U64),
    F(struct hd_mapping, inode, RECORD_U64),
    F(struct hd_mapping, device_major, RECORD_UNSIGNED),
    F(struct hd_mapping, device_minor, RECORD_UNSIGNED),
    F(struct hd_mapping, permissions, RECORD_TEXT),
    F(struct hd_mapping, path, RECORD_STRING),
};
static STRUCT(mapping_struct, struct hd_mapping, mapping_fields);

static const struct record_field lock_fields[] = {
    ENUM(struct hd_lock, kind, HD_LOCK_FILE),
    F(struct hd_lock, object_address, RECORD_U64),
    F(struct hd_lock, type, RECORD_STATIC),
    F(struct hd_lock, robust, RECORD_BOOL),
    F(struct hd_lock, priority_inheritance, RECORD_BOOL),
    F(struct hd_lock, process_shared, RECORD_BOOL),
    F(struct hd_lock, word_read, RECORD_BOOL),
    F(struct hd_lock, word, RECORD_UNSIGNED),
    F(struct hd_lock, owner_tid, RECORD_INT),
    F(struct hd_lock, owner_ns_tid, RECORD_INT),
    ENUM(struct hd_lock, owner_whereabouts, HD_OWNER_GONE),
    F(struct hd_lock, owner_pid, RECORD_INT),
    F(struct hd_lock, why_unknown, RECORD_STATIC),
};
static STRUCT(lock_struct, struct hd_lock, lock_fields);

static const struct record_field wait_fields[] = {
    ENUM(struct hd_wait, kind, HD_WAIT_OTHER),
    F(struct hd_wait, operation, RECORD_STATIC),
    NESTED(struct hd_wait, timeout, timeout_struct),
    F(struct hd_wait, address, RECORD_U64),
    F(struct hd_wait, futex_private, RECORD_BOOL),
    F(struct hd_wait, futex_realtime, RECORD_BOOL),
    F(struct hd_wait, expected, RECORD_UNSIGNED),
    F(struct hd_wait, fd, RECORD_INT),
    F(struct hd_wait, nfds, RECORD_UNSIGNED),
    ENUM(struct hd_wait, child_selector, HD_CHILD_PIDFD),
    F(struct hd_wait, child, RECORD_INT),
    ENUM(struct hd_wait, mapping_kind, HD_MAPPING_SHARED),
    NESTED(struct hd_wait, mapping, mapping_struct),
    NESTED(struct hd_wait, lock, lock_struct),
    F(struct hd_wait, python_lock, RECORD_U64),
    F(struct hd_wait, python_lock_type, RECORD_STATIC),
    ENUM(struct hd_wait, signal_set_kind, HD_SIGNAL_SET_WANTED),
    F(struct hd_wait, signal_set, RECORD_U64),
    FIXED(struct hd_wait, fds, RECORD_INTS),
    BOUNDED(struct hd_wait, nfds_known, HD_WAIT_FDS_MAX),
    F(struct hd_wait, fds_truncated, RECORD_BOOL),
};
static STRUCT(wait_struct, struct hd_wait, wait_fields);

static const struct record_field frame_fields[] = {
    F(struct hd_frame, pc, RECORD_U64),
    F(struct hd_frame, module, RECORD_STRING),
    F(struct hd_frame, module_offset, RECORD_U64),
    F(struct hd_frame, symbol, RECORD_STRING),
    F(struct hd_frame, symbol_offset, RECORD_U64),
    F(struct hd_frame, called_as, RECORD_STRING),
    F(struct hd_frame, signal_frame, RECORD_BOOL),
    F(struct hd_frame, signal_number, RECORD_INT),
};
static STRUCT(frame_struct, struct hd_frame, frame_fields);

static const struct record_field stack_fields[] = {
    ENUM(struct hd_stack, state, HD_STACK_FAILED),
    ARRAY(struct hd_stack, frames, nframes, frame_struct),
    F(struct hd_stack, truncated, RECORD_BOOL),
    F(struct hd_stack, unstopped, RECORD_BOOL),
    F(struct hd_stack, why_not, RECORD_STRING),
};
static STRUCT(stack_struct, struct hd_stack, stack_fields);

static const struct record_field goroutine_fields[] = {
    F(struct hd_goroutine, goid, RECORD_LONG),
    F(struct hd_goroutine, status, RECORD_UNSIGNED),
    F(struct hd_goroutine, wait_reason, RECORD_STRING),
    F(struct hd_goroutine, system, RECORD_BOOL),
    F(struct hd_goroutine, unchanged, RECORD_BOOL),
    F(struct hd_goroutine, semaphore, RECORD_U64),
    F(struct hd_goroutine, sema_ticket, RECORD_UNSIGNED),
    F(struct hd_goroutine, saved_sp, RECORD_U64),
    F(struct hd_goroutine, saved_pc, RECORD_U64),
    ARRAY(struct hd_goroutine, frames, nframes, frame_struct),
};
static STRUCT(goroutine_struct, struct hd_goroutine, goroutine_fields);

static const struct record_field go_runtime_fields[] = {
    F(struct hd_go_runtime, present, RECORD_BOOL),
    F(struct hd_go_runtime, version, RECORD_STRING),
    F(struct hd_go_runtime, why_not, RECORD_STATIC),
    ARRAY(struct hd_go_runtime, goroutines, ngoroutines, goroutine_struct),
    F(struct hd_go_runtime, truncated, RECORD_BOOL),
};
static STRUCT(go_runtime_struct, struct hd_go_runtime, go_runtime_fields);

static const struct record_field java_thread_fields[] = {
    F(struct hd_java_thread, tid, RECORD_INT),
    F(struct hd_java_thread, state, RECORD_UNSIGNED),
    F(struct hd_java_thread, pending_monitor, RECORD_U64),
    F(struct hd_java_thread, waiting_monitor, RECORD_U64),
    F(struct hd_java_thread, monitor_object, RECORD_U64),
    F(struct hd_java_thread, monitor_class, RECORD_STRING),
    F(struct hd_java_thread, owner_tid, RECORD_INT),
    F(struct hd_java_thread, blocker_object, RECORD_U64),
    F(struct hd_java_thread, blocker_class, RECORD_STRING),
    F(struct hd_java_thread, blocker_owner_tid, RECORD_INT),
};
static STRUCT(java_thread_struct, struct hd_java_thread, java_thread_fields);

static const struct record_field jvm_fields[] = {
    F(struct hd_jvm, present, RECORD_BOOL),
    F(struct hd_jvm, release, RECORD_STRING),
    F(struct hd_jvm, why_not, RECORD_STATIC),
    ARRAY(struct hd_jvm, threads, nthreads, java_thread_struct),
};
static STRUCT(jvm_struct, struct hd_jvm, jvm_fields);

static const struct record_field python_frame_fields[] = {
    REQUIRED(struct hd_python_frame, function),
    REQUIRED(struct hd_python_frame, file),
    F(struct hd_python_frame, line, RECORD_INT),
    F(struct hd_python_frame, entry, RECORD_BOOL),
};
static STRUCT(python_frame_struct, struct hd_python_frame, python_frame_fields);

static const struct record_field python_fields[] = {
    F(struct hd_python, read, RECORD_BOOL),
    F(struct hd_python, version, RECORD_TEXT),
    F(struct hd_python, gil_locked, RECORD_BOOL),
    F(struct hd_python, gil_holder, RECORD_INT),
    F(struct hd_python, gil_holder_recorded, RECORD_INT),
    F(struct hd_python, gil_address, RECORD_U64),
    F(struct hd_python, gil_size, RECORD_U64),
    NESTED(struct hd_python, gil_lock, lock_struct),
};
static STRUCT(python_struct, struct hd_python, python_fields);

static const struct record_field thread_sample_fields[] = {
    F(struct hd_thread_sample, present, RECORD_BOOL),
    F(struct hd_thread_sample, state, RECORD_CHAR),
    F(struct hd_thread_sample, cpu_time_ns, RECORD_U64),
    F(struct hd_thread_sample, switches_known, RECORD_BOOL),
    F(struct hd_thread_sample, voluntary_switches, RECORD_U64),
    F(struct hd_thread_sample, involuntary_switches, RECORD_U64),
    NESTED(struct hd_thread_sample, syscall, syscall_struct),
    F(struct hd_thread_sample, restart, RECORD_BOOL),
    ENUM(struct hd_thread_sample, wait_kind, HD_WAIT_OTHER),
    F(struct hd_thread_sample, wait_address, RECORD_U64),
    F(struct hd_thread_sample, wait_operation, RECORD_STATIC),
    F(struct hd_thread_sample, wait_expected, RECORD_UNSIGNED),
    F(struct hd_thread_sample, futex_private, RECORD_BOOL),
    NESTED(struct hd_thread_sample, timeout, timeout_struct),
    F(struct hd_thread_sample, leaf_function, RECORD_STRING),
    F(struct hd_thread_sample, leaf_module, RECORD_STRING),
    F(struct hd_thread_sample, leaf_module_offset, RECORD_U64),
};
static STRUCT(thread_sample_struct, struct hd_thread_sample, thread_sample_fields);

static const struct record_field process_sample_fields[] = {
    F(struct hd_process_sample, present, RECORD_BOOL),
    F(struct hd_process_sample, zombie, RECORD_BOOL),
};
static STRUCT(process_sample_struct, struct hd_process_sample, process_sample_fields);

static const struct record_field fuse_call_fields[] = {
    F(struct hd_fuse_call, in_call, RECORD_BOOL),
    F(struct hd_fuse_call, awaits_answer, RECORD_BOOL),
    F(struct hd_fuse_call, reads_requests, RECORD_BOOL),
    F(struct hd_fuse_call, connection, RECORD_UNSIGNED),
    F(struct hd_fuse_call, mount_id, RECORD_INT),
    F(struct hd_fuse_call, mount_point, RECORD_STRING),
    F(struct hd_fuse_call, fs_type, RECORD_STRING),
    F(struct hd_fuse_call, source, RECORD_STRING),
    F(struct hd_fuse_call, found_by, RECORD_STATIC),
    F(struct hd_fuse_call, waiting, RECORD_INT),
    F(struct hd_fuse_call, daemon_pid, RECORD_INT),
    F(struct hd_fuse_call, daemon_found_by, RECORD_STATIC),
    F(struct hd_fuse_call, daemon_comm, RECORD_TEXT),
    F(struct hd_fuse_call, daemons_possible, RECORD_INT),
};
static STRUCT(fuse_call_struct, struct hd_fuse_call, fuse_call_fields);

static const struct record_field thread_fields[] = {
    F(struct hd_thread, tid, RECORD_INT),
    F(struct hd_thread, ns_tid, RECORD_INT),
    F(struct hd_thread, name, RECORD_TEXT),
    F(struct hd_thread, state, RECORD_CHAR),
    F(struct hd_thread, wchan, RECORD_TEXT),
    F(struct hd_thread, kernel_stack, RECORD_STRING),
    NESTED(struct hd_thread, syscall, syscall_struct),
    F(struct hd_thread, syscall_from_registers, RECORD_BOOL),
    F(struct hd_thread, ended_during_read, RECORD_BOOL),
    NESTED(struct hd_thread, wait, wait_struct),
    NESTED(struct hd_thread, fuse, fuse_call_struct),
    F(struct hd_thread, cpu_time_ns, RECORD_U64),
    F(struct hd_thread, voluntary_switches, RECORD_U64),
    F(struct hd_thread, involuntary_switches, RECORD_U64),
    F(struct hd_thread, switches_known, RECORD_BOOL),
    F(struct hd_thread, last_cpu, RECORD_INT),
    F(struct hd_thread, blocked_for_known, RECORD_BOOL),
    F(struct hd_thread, blocked_for_s, RECORD_DOUBLE),
    F(struct hd_thread, last_ran_ms, RECORD_DOUBLE),
    F(struct hd_thread, waited_before_s, RECORD_DOUBLE),
    F(struct hd_thread, earlier_stop_at, RECORD_DOUBLE),
    ARRAY(struct hd_thread, earlier, nearlier, thread_sample_struct),
    NESTED(struct hd_thread, stack, stack_struct),
    F(struct hd_thread, leaf_function, RECORD_STRING),
    F(struct hd_thread, leaf_module, RECORD_STRING),
    F(struct hd_thread, leaf_module_offset, RECORD_U64),
    ARRAY(struct hd_thread, python_frames, npython_frames, python_frame_struct),
    F(struct hd_thread, python_truncated, RECORD_BOOL),
    F(struct hd_thread, python_looks, RECORD_UNSIGNED),
    F(struct hd_thread, python_leaf_same, RECORD_BOOL),
    ENUM(struct hd_thread, gil, HD_GIL_RELEASED),
};
static STRUCT(thread_struct, struct hd_thread, thread_fields);

static const struct record_field fd_origin_fields[] = {
    F(struct hd_fd_origin, pid, RECORD_INT),
    F(struct hd_fd_origin, fd, RECORD_INT),
};
static STRUCT(fd_origin_struct, struct hd_fd_origin, fd_origin_fields);

static const struct record_field fd_fields[] = {
    F(struct hd_fd, fd, RECORD_INT),
    ENUM(struct hd_fd, kind, HD_FD_ANON),
    F(struct hd_fd, inode, RECORD_U64),
    F(struct hd_fd, access_mode, RECORD_INT),
    F(struct hd_fd, target, RECORD_STRING),
    ENUM(struct hd_fd, fd_class, HD_FD_CLASS_ANON),
    F(struct hd_fd, device_known, RECORD_BOOL),
    F(struct hd_fd, device_major, RECORD_UNSIGNED),
    F(struct hd_fd, device_minor, RECORD_UNSIGNED),
    F(struct hd_fd, socket_name, RECORD_STRING),
    F(struct hd_fd, signalfd_mask, RECORD_U64),
    F(struct hd_fd, pty, RECORD_BOOL),
    F(struct hd_fd, pty_master, RECORD_BOOL),
    F(struct hd_fd, pty_index, RECORD_INT),
    F(struct hd_fd, inherited_checked, RECORD_BOOL),
    NESTED(struct hd_fd, inherited_from, fd_origin_struct),
};
static STRUCT(fd_struct, struct hd_fd, fd_fields);

static const struct record_field library_fields[] = {
    REQUIRED(struct hd_library, path),
    F(struct hd_library, soname, RECORD_STRING),
    F(struct hd_library, build_id, RECORD_STRING),
    F(struct hd_library, start, RECORD_U64),
    F(struct hd_library, end, RECORD_U64),
    F(struct hd_library, inode, RECORD_U64),
    F(struct hd_library, in_parent, RECORD_BOOL),
};
static STRUCT(library_struct, struct hd_library, library_fields);

static const struct record_field job_fields[] = {
    ENUM(struct hd_job, role, HD_JOB_LAUNCHER),
    F(struct hd_job, rank, RECORD_INT),
    F(struct hd_job, world_size, RECORD_INT),
    F(struct hd_job, local_rank, RECORD_INT),
    F(struct hd_job, local_world_size, RECORD_INT),
    F(struct hd_job, group_rank, RECORD_INT),
    F(struct hd_job, node_id, RECORD_INT),
    F(struct hd_job, rank_variable, RECORD_STATIC),
    F(struct hd_job, rank_pid, RECORD_INT),
    F(struct hd_job, job_id, RECORD_STRING),
    F(struct hd_job, step_id, RECORD_STRING),
    F(struct hd_job, run_id, RECORD_STRING),
    F(struct hd_job, master, RECORD_STRING),
    F(struct hd_job, cgroup, RECORD_STRING),
};
static STRUCT(job_struct, struct hd_job, job_fields);

static const struct record_field process_fields[] = {
    F(struct hd_process, pid, RECORD_INT),
    F(struct hd_process, ppid, RECORD_INT),
    F(struct hd_process, session, RECORD_INT),
    F(struct hd_process, uid, RECORD_UNSIGNED),
    F(struct hd_process, comm, RECORD_TEXT),
    F(struct hd_process, state, RECORD_CHAR),
    VECTOR(struct hd_process, argv, argc, RECORD_ARGV),
    F(struct hd_process, cmdline_truncated, RECORD_BOOL),
    F(struct hd_process, exe, RECORD_STRING),
    F(struct hd_process, exe_errno, RECORD_INT),
    F(struct hd_process, start_time_s, RECORD_DOUBLE),
    F(struct hd_process, age_s, RECORD_DOUBLE),
    F(struct hd_process, tracer_pid, RECORD_INT),
    F(struct hd_process, tracer_comm, RECORD_TEXT),
    F(struct hd_process, tracer_cmdline, RECORD_STRING),
    F(struct hd_process, frozen, RECORD_BOOL),
    F(struct hd_process, freezing, RECORD_BOOL),
    F(struct hd_process, freezer_version, RECORD_INT),
    F(struct hd_process, frozen_cgroup, RECORD_STRING),
    F(struct hd_process, frozen_by, RECORD_STRING),
    F(struct hd_process, freeze_control, RECORD_STRING),
    F(struct hd_process, fuse_daemon, RECORD_BOOL),
    F(struct hd_process, fuse_requests_pending, RECORD_BOOL),
    F(struct hd_process, pid_namespace, RECORD_U64),
    F(struct hd_process, ns_pid, RECORD_INT),
    F(struct hd_process, thread_count, RECORD_INT),
    F(struct hd_process, kernel_thread, RECORD_BOOL),
    F(struct hd_process, zombie, RECORD_BOOL),
    ARRAY(struct hd_process, earlier, nearlier, process_sample_struct),
    F(struct hd_process, exit_status, RECORD_INT),
    F(struct hd_process, ignores_sigchld, RECORD_BOOL),
    F(struct hd_process, signal_dispositions_known, RECORD_BOOL),
    F(struct hd_process, signals_caught, RECORD_U64),
    F(struct hd_process, signals_ignored, RECORD_U64),
    F(struct hd_process, timers_known, RECORD_BOOL),
    F(struct hd_process, timer_signals, RECORD_U64),
    ENUM(struct hd_process, origin, HD_ORIGIN_FORKSERVER),
    ENUM(struct hd_process, origin_basis, HD_ORIGIN_BASIS_UNREADABLE),
    ENUM(struct hd_process, arch, HD_ARCH_AARCH64),
    ARRAY(struct hd_process, threads, nthreads, thread_struct),
    ARRAY(struct hd_process, mappings, nmappings, mapping_struct),
    ARRAY(struct hd_process, fds, nfds, fd_struct),
    F(struct hd_process, fds_complete, RECORD_BOOL),
    ARRAY(struct hd_process, libraries, nlibraries, library_struct),
    ENUM(struct hd_process, python_role, HD_PYTHON_ROLE_RESOURCE_TRACKER),
    ENUM(struct hd_process, python_start_method, HD_PYTHON_FORKSERVER),
    F(struct hd_process, stopped_for_s, RECORD_DOUBLE),
    NESTED(struct hd_process, python, python_struct),
    NESTED(struct hd_process, go, go_runtime_struct),
    NESTED(struct hd_process, jvm, jvm_struct),
    OPTIONAL(struct hd_process, job, job_struct),
};
static STRUCT(process_struct, struct hd_process, process_fields);

static const struct record_field note_fields[] = {
    ENUM(struct hd_note, kind, HD_NOTE_KINDS - 1),
    F(struct hd_note, pid, RECORD_INT),
    F(struct hd_note, tid, RECORD_INT),
    REQUIRED(struct hd_note, text),
};
static STRUCT(note_struct, struct hd_note, note_fields);

static const struct record_field socket_peer_fields[] = {
    F(struct hd_socket_peer, inode, RECORD_U64),
    F(struct hd_socket_peer, peer_inode, RECORD_U64),
};
static STRUCT(socket_peer_struct, struct hd_socket_peer, socket_peer_fields);

static const struct record_field pipe_holder_fields[] = {
    F(struct hd_pipe_holder, inode, RECORD_U64),
    F(struct hd_pipe_holder, pid, RECORD_INT),
    F(struct hd_pipe_holder, ppid, RECORD_INT),
    F(struct hd_pipe_holder, session, RECORD_INT),
    F(struct hd_pipe_holder, fd, RECORD_INT),
    F(struct hd_pipe_holder, comm, RECORD_TEXT),
    F(struct hd_pipe_holder, parent_comm, RECORD_TEXT),
    F(struct hd_pipe_holder, parent_above_tree, RECORD_BOOL),
    F(struct hd_pipe_holder, start_time_s, RECORD_DOUBLE),
};
static STRUCT(pipe_holder_struct, struct hd_pipe_holder, pipe_holder_fields);

static const struct record_field departed_fields[] = {
    F(struct hd_departed, pid, RECORD_INT),
    F(struct hd_departed, ppid, RECORD_INT),
    F(struct hd_departed, comm, RECORD_TEXT),
};
static STRUCT(departed_struct, struct hd_departed, departed_fields);

static const struct record_field snapshot_fields[] = {
    F(struct hd_snapshot, taken_at, RECORD_DOUBLE),
    F(struct hd_snapshot, host, RECORD_TEXT),
    F(struct hd_snapshot, boot_id, RECORD_TEXT),
    F(struct hd_snapshot, kernel, RECORD_TEXT),
    ENUM(struct hd_snapshot, arch, HD_ARCH_AARCH64),
    F(struct hd_snapshot, samples, RECORD_UNSIGNED),
    F(struct hd_snapshot, interval_ms, RECORD_UNSIGNED),
    F(struct hd_snapshot, sampling_s, RECORD_DOUBLE),
    F(struct hd_snapshot, pid_namespace, RECORD_U64),
    F(struct hd_snapshot, initial_pid_namespace, RECORD_BOOL),
    F(struct hd_snapshot, ptrace_used, RECORD_BOOL),
    F(struct hd_snapshot, ptrace_why_not, RECORD_STATIC),
    VECTOR(struct hd_snapshot, roots, nroots, RECORD_PIDS),
    ARRAY(struct hd_snapshot, processes, nprocesses, process_struct),
    ARRAY(struct hd_snapshot, notes, nnotes, note_struct),
    CAPACITY(struct hd_snapshot, notes_capacity, nnotes),
    ARRAY(struct hd_snapshot, unix_peers, nunix_peers, socket_peer_struct),
    ARRAY(struct hd_snapshot, outside_pipe_holders, noutside_pipe_holders, pipe_holder_struct),
    F(struct hd_snapshot, outside_pipe_holders_complete, RECORD_BOOL),
    ARRAY(struct hd_snapshot, departed, ndeparted, departed_struct),
    CAPACITY(struct hd_snapshot, departed_capacity, ndeparted),
    ENUM(struct hd_snapshot, python_start_method, HD_PYTHON_FORKSERVER),
    DERIVED(struct hd_snapshot, index),
    DERIVED(struct hd_snapshot, kept_strings),
    DERIVED(struct hd_snapshot, nkept_strings),
    DERIVED(struct hd_snapshot, kept_strings_capacity),
};
STRUCT(record_snapshot_struct, struct hd_snapshot, snapshot_fields);

const struct record_struct *const record_all_structs[] = {
    &record_snapshot_struct, &syscall_struct, &timeout_struct, &mapping_struct, &lock_struct, &wait_struct,
    &frame_struct, &stack_struct, &goroutine_struct, &go_runtime_struct, &java_thread_struct, &jvm_struct, &python_frame_struct, &python_struct, &thread_sample_struct, &process_sample_struct,
    &thread_struct, &fd_origin_struct, &fd_struct, &library_struct, &job_struct, &process_struct, &note_struct,
    &socket_peer_struct, &pipe_holder_struct, &departed_struct,
};
const size_t record_nall_structs = COUNT(record_all_structs);
