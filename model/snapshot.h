/* The snapshot: what hangdoc read about a process tree, the contract between probe/ and analysis/.
 *
 * probe/ fills it, analysis/ and render/ only read it. Every string in it is raw bytes copied from the target
 * (comm, cmdline, paths): bounded and NUL-terminated, but otherwise hostile. Renderers escape them; nothing else may
 * print them.
 * Ownership: a snapshot owns everything it points to, hd_snapshot_free() releases it all. Static strings (syscall
 * names, futex operation names) are the exception and are marked "static" below.
 */
#pragma once

#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Linux's TASK_COMM_LEN is 16 including the NUL; the task's name can never be longer. */
#define HD_COMM_MAX 16
#define HD_WCHAN_MAX 64

enum hd_arch {
    HD_ARCH_UNKNOWN,
    HD_ARCH_X86_64,
    HD_ARCH_AARCH64,
};

/* What /proc/<tid>/syscall said. */
enum hd_syscall_state {
    HD_SYSCALL_UNREAD,  /* the file could not be read: see the thread's note */
    HD_SYSCALL_RUNNING, /* "running": the thread was on a CPU, no syscall to report */
    HD_SYSCALL_NONE,    /* "-1 sp pc": blocked, but not inside a system call (page fault, stopped by a signal) */
    HD_SYSCALL_IN,      /* inside system call `nr` with `args` */
};

struct hd_syscall {
    enum hd_syscall_state state;
    long nr;
    const char *name; /* static; NULL when the number is not in the table of the target's architecture */
    uint64_t args[6];
    uint64_t stack_pointer;
    uint64_t program_counter;
};

/* What a thread waits for, decoded from its system call (probe/syscalls.c). */
enum hd_wait_kind {
    HD_WAIT_NONE,    /* not in a system call that waits */
    HD_WAIT_FUTEX,   /* futex FUTEX_WAIT, WAIT_BITSET, LOCK_PI, WAIT_REQUEUE_PI, futex_waitv */
    HD_WAIT_POLL,    /* poll, ppoll, select, pselect6, epoll_wait, epoll_pwait, epoll_pwait2 */
    HD_WAIT_READ,    /* read, readv, pread64, preadv, recvfrom, recvmsg, recvmmsg on fd */
    HD_WAIT_WRITE,   /* write, writev, sendto, sendmsg on fd (a full pipe or socket) */
    HD_WAIT_ACCEPT,  /* accept, accept4 on a listening fd */
    HD_WAIT_CONNECT, /* connect on fd */
    HD_WAIT_CHILD,   /* wait4, waitid */
    HD_WAIT_SLEEP,   /* nanosleep, clock_nanosleep */
    HD_WAIT_SIGNAL,  /* pause, rt_sigsuspend, rt_sigtimedwait */
    HD_WAIT_LOCK,    /* flock, fcntl F_SETLKW */
    HD_WAIT_OTHER,   /* any other system call: named, not decoded */
};

enum hd_timeout_kind {
    HD_TIMEOUT_NOT_APPLICABLE, /* this wait takes no timeout */
    HD_TIMEOUT_NONE,           /* waits until woken: no timeout */
    HD_TIMEOUT_FINITE,         /* `remaining_ns` is known */
    HD_TIMEOUT_UNREADABLE,     /* a timeout was given, but its value could not be read from the target */
};

struct hd_timeout {
    enum hd_timeout_kind kind;
    bool absolute;        /* the target passed a deadline (FUTEX_WAIT_BITSET, TIMER_ABSTIME), not a duration */
    int64_t remaining_ns; /* duration, or deadline minus the clock when read; negative when already past */
};

/* pid argument of wait4/waitid, as the kernel reads it */
enum hd_child_selector {
    HD_CHILD_ANY,     /* wait4(-1), waitid(P_ALL) */
    HD_CHILD_PID,     /* that child */
    HD_CHILD_GROUP,   /* any child in process group `pid` (wait4(-pgid), wait4(0): the caller's group) */
    HD_CHILD_PIDFD,   /* waitid(P_PIDFD, fd) */
};

/* The memory a futex lies in decides who can reach it: a private mapping (anonymous, heap, MAP_PRIVATE file) only
 * the threads of its own process (after fork() the child's copy is its own); a MAP_SHARED one every process that
 * maps the same object. */
enum hd_mapping_kind {
    HD_MAPPING_UNKNOWN,           /* the maps file could not be read, or no mapping holds the address */
    HD_MAPPING_ANONYMOUS_PRIVATE, /* anonymous, [heap], [stack] */
    HD_MAPPING_FILE_PRIVATE,      /* MAP_PRIVATE of a file (a library's .data, say) */
    HD_MAPPING_SHARED,            /* MAP_SHARED: /dev/shm, memfd, shared anonymous, a shared file */
};

struct hd_mapping {
    uint64_t start;
    uint64_t end;
    uint64_t offset; /* in the file */
    uint64_t inode;
    unsigned device_major;
    unsigned device_minor;
    char permissions[5]; /* "rw-p" */
    char *path;          /* NULL for anonymous memory; "[heap]", "/dev/shm/x", "/memfd:y (deleted)" */
};

/* What sits at a futex address, decoded from the glibc object around it (probe/locks.c). */
enum hd_lock_kind {
    HD_LOCK_UNKNOWN, /* not a recognised object: condition variable, semaphore, barrier, libc lock: no owner recorded */
    HD_LOCK_MUTEX,   /* pthread_mutex_t */
    HD_LOCK_RWLOCK,  /* pthread_rwlock_t, write-locked */
    HD_LOCK_JOIN,    /* pthread_join(): the joined thread's tid word, cleared by the kernel when it exits */
    HD_LOCK_GIL,     /* CPython's global interpreter lock, waited for in take_gil(): its owner is the thread state the
                      * GIL names as last holder while locked (probe/python.h); object_address is the GIL's state */
    HD_LOCK_FILE,    /* a file lock (flock, fcntl) waited for in HD_WAIT_LOCK: its owner is the process /proc/locks
                      * names (probe/filelocks.h), owner_tid its main thread; type "flock", "posix" or "ofd" */
};

enum hd_owner_whereabouts {
    HD_OWNER_UNKNOWN,       /* no owner recorded */
    HD_OWNER_SAME_PROCESS,  /* a live thread of the waiter's process */
    HD_OWNER_OTHER_PROCESS, /* a thread of another process of the snapshot (owner_pid) */
    HD_OWNER_OUTSIDE,       /* a thread of a process outside the snapshot (owner_pid) */
    HD_OWNER_GONE,          /* no thread with that id exists */
};

struct hd_lock {
    enum hd_lock_kind kind;
    uint64_t object_address; /* where the mutex / rwlock starts */
    const char *type;        /* static: "normal", "recursive", "error-checking", "adaptive"; "writer" for rwlocks */
    bool robust;
    bool priority_inheritance;
    bool process_shared;
    bool word_read;          /* the futex word could be read from the target */
    uint32_t word;           /* its value when read */
    pid_t owner_tid;         /* 0: none recorded; in hangdoc's PID namespace (translated: probe/pidns.h) */
    pid_t owner_ns_tid;      /* the id as the target recorded it, in its own PID namespace, when that differs */
    enum hd_owner_whereabouts owner_whereabouts;
    pid_t owner_pid;         /* the owner's process, when known */
    const char *why_unknown; /* static: why the object was not believed to be a lock, when kind is UNKNOWN */
};

#define HD_WAIT_FDS_MAX 16

/* What `signal_set` of a signal wait is. pause(2) and rt_sigsuspend(2) end when a signal outside the blocked set
 * runs a handler (or kills the process); rt_sigtimedwait(2) ends when a signal of its set is pending, whatever its
 * disposition. */
enum hd_signal_set_kind {
    HD_SIGNAL_SET_UNKNOWN, /* not a signal wait, or the set could not be read */
    HD_SIGNAL_SET_BLOCKED, /* the signals blocked during the wait: pause's thread mask, sigsuspend's argument */
    HD_SIGNAL_SET_WANTED,  /* the signals the wait takes: rt_sigtimedwait's set */
};

struct hd_wait {
    enum hd_wait_kind kind;
    const char *operation; /* static: "FUTEX_WAIT", "FUTEX_LOCK_PI", "poll", ...; NULL when none */
    struct hd_timeout timeout;
    /* futex */
    uint64_t address;
    bool futex_private;  /* FUTEX_PRIVATE_FLAG: the kernel looked the futex up in this process only */
    bool futex_realtime; /* FUTEX_CLOCK_REALTIME */
    uint32_t expected;   /* the value the thread expected at `address` when it went to sleep */
    /* read / write / accept / connect / epoll: the fd; poll/select: how many fds */
    int fd;
    unsigned nfds;
    /* wait4 / waitid */
    enum hd_child_selector child_selector;
    pid_t child;

    /* futex: the mapping the address lies in and the object there */
    enum hd_mapping_kind mapping_kind;
    struct hd_mapping mapping; /* path owned by the wait */
    struct hd_lock lock;
    /* futex, CPython 3.13+: the threading.Lock or RLock object whose PyMutex the thread parks to take, as the
     * parking lot's wait entry names it (probe/python.c); 0 when the wait is not one */
    uint64_t python_lock;
    const char *python_lock_type; /* static: "threading.Lock", "threading.RLock"; NULL when none */
    /* pause, rt_sigsuspend, rt_sigtimedwait: the signals that matter to the wait (bit n-1 for signal n) */
    enum hd_signal_set_kind signal_set_kind;
    uint64_t signal_set;
    /* the fds it waits on: `fd` for read/write, the pollfd array of poll/ppoll, the targets of an epoll fd */
    int fds[HD_WAIT_FDS_MAX];
    unsigned nfds_known;
    bool fds_truncated;
};

/* One frame of a native stack, innermost first. Module and symbol come from the target's files: hostile. */
struct hd_frame {
    uint64_t pc;             /* the return address minus one for every frame but the innermost */
    char *module;            /* path of the mapped file that holds pc; NULL when no file does (JIT, anonymous) */
    uint64_t module_offset;  /* pc minus the module's load bias: what addr2line takes */
    char *symbol;            /* demangled name of the function whose [start, start + size) holds pc; NULL when
                              * no symbol covers it (then print module+0xoffset, never the nearest other name) */
    uint64_t symbol_offset;  /* pc minus the symbol's start */
    char *called_as;         /* when no symbol covers pc: the function the caller's call instruction called
                              * (probe/call_target.h), the exported name a stripped library's static function was
                              * reached through; NULL otherwise */
    bool signal_frame;       /* the kernel's signal trampoline (__restore_rt, told by libunwind, not by its name):
                              * the frames inner of it are a signal handler's, the frames after it were interrupted */
    int signal_number;       /* the signal it delivered, from the siginfo beside it; 0 when unknown or no trampoline */
};

enum hd_stack_state {
    HD_STACK_NOT_TAKEN, /* --no-ptrace, or stacks not attempted for this thread: `why_not` may say why */
    HD_STACK_TAKEN,     /* frames[] holds what was unwound (possibly truncated) */
    HD_STACK_FAILED,    /* the thread could not be stopped or unwound: `why_not` says why */
};

struct hd_stack {
    enum hd_stack_state state;
    struct hd_frame *frames;
    size_t nframes;
    bool truncated;      /* depth cap hit, or a loop detected */
    bool unstopped;      /* read without stopping the thread: from the registers its system call saved */
    char *why_not;       /* owned; NULL when taken whole */
};

/* One frame of a thread's Python stack (probe/python.h), innermost first. Strings are the target's, unescaped. */
struct hd_python_frame {
    char *function; /* qualified name (co_qualname from 3.11, co_name before); owned */
    char *file;     /* co_filename; owned */
    int line;       /* from the code object's line table; 0 when it could not be read */
    bool entry;     /* the outermost frame of one run of the eval loop (3.11+: entered from C); a native stack holds
                     * one _PyEval_EvalFrameDefault per such run, which is where these frames belong */
};

/* A thread's standing with its interpreter's global lock. */
enum hd_gil_state {
    HD_GIL_UNKNOWN,  /* not a Python process, or its interpreter could not be read */
    HD_GIL_NONE,     /* no Python thread state: a native thread (a C library's, or not yet attached) */
    HD_GIL_HOLDS,    /* the thread state the GIL names as its holder, while it is locked */
    HD_GIL_WAITS,    /* in a futex wait on the GIL's own mutex or condition variable: waits to take it */
    HD_GIL_RELEASED, /* a thread state that neither holds nor waits: released it around a blocking call */
};

/* The CPython interpreter of a process, when hangdoc could read it (probe/python.h). */
struct hd_python {
    bool read;              /* false: not Python, or unreadable (a note says why) */
    char version[16];       /* "3.11.2" */
    bool gil_locked;
    pid_t gil_holder;       /* tid of the thread holding the GIL; 0 when free, unknown, or not of this process */
    pid_t gil_holder_recorded; /* the tid the holder's thread state records, in the process's own PID namespace:
                                * set also when that thread is not in the process (it stayed in the parent at a
                                * fork() that CPython did not see); 0 when free or unknown */
    uint64_t gil_address;   /* the GIL's state in the target's memory: a futex wait at an address in */
    uint64_t gil_size;      /* [gil_address, gil_address + gil_size) waits for the GIL */
    /* The GIL as a lock, its owner placed as every lock owner is: HD_LOCK_GIL owned by the holder's recorded tid
     * when it was locked by a thread state that records one, HD_LOCK_UNKNOWN (why_unknown says why) otherwise.
     * The wait.lock of each thread in a futex wait inside the GIL's state is this one. */
    struct hd_lock gil_lock;
};

/* A thread as one earlier sample read it: what probe saw, copied as it was, with no judgement made of it. The
 * analysis folds a thread's samples and its last state into progress, "polls in vain" and the like
 * (analysis/samples.h). */
struct hd_thread_sample {
    bool present; /* the thread was there; the rest is meaningful only then */
    char state;
    uint64_t cpu_time_ns;
    bool switches_known;
    uint64_t voluntary_switches;
    uint64_t involuntary_switches;
    struct hd_syscall syscall; /* HD_SYSCALL_UNREAD when the read was cut short */
    bool restart;              /* the call is restart_syscall, resuming the one its argument registers still name */
    /* its wait as decoded without reading memory (an earlier sample reads no wait channel, no futex word) */
    enum hd_wait_kind wait_kind;
    uint64_t wait_address;      /* a futex wait's address */
    const char *wait_operation; /* static */
    uint32_t wait_expected;
    bool futex_private;
    struct hd_timeout timeout;
    char *leaf_function; /* running in user space when stopped for it: the innermost frame's function (owned) */
    char *leaf_module;   /* and when no symbol names it, the module it is in (owned) and the offset there */
    uint64_t leaf_module_offset;
};

/* A process as one earlier sample read it. */
struct hd_process_sample {
    bool present;
    bool zombie;
};

/* A thread inside a FUSE file system's call (probe/fuse.h): the kernel holds it until the file system's daemon
 * answers a request, its own or one that holds a lock it needs (a directory's, while a lookup waits). */
struct hd_fuse_call {
    bool in_call;          /* its kernel stack (or wait channel) is in FUSE's code, not the daemon's read of /dev/fuse */
    bool reads_requests;   /* not in a call: a daemon's thread in its read of /dev/fuse, idle until the next request */
    bool awaits_answer;    /* in request_wait_answer: its own request is sent; false: a lock a request in flight holds */
    unsigned connection;   /* /sys/fs/fuse/connections/N: the mount's device number; 0 when the mount is not known */
    int mount_id;          /* the mount's id (mountinfo's first field); 0 when not known */
    char *mount_point;     /* as the thread's process sees it (owned); NULL when not known */
    char *fs_type;         /* "fuse", "fuse.sshfs" (owned) */
    char *source;          /* the mount's source, the daemon's fsname (owned) */
    const char *found_by;  /* static: how the mount was told ("the fd it reads", "the path it names", ...) */
    int waiting;           /* requests the connection has not had answered (fusectl's waiting); -1: not read */
    pid_t daemon_pid;      /* the process serving the mount: it holds /dev/fuse and sees the mount; 0: not known */
    const char *daemon_found_by;   /* static: why that one */
    char daemon_comm[HD_COMM_MAX]; /* its name, also when it is outside the snapshot */
    int daemons_possible;  /* processes holding /dev/fuse that see the mount, when none of them could be told */
};

/* One thread as the last sample saw it, with what each earlier sample saw of it. */
struct hd_thread {
    pid_t tid;
    pid_t ns_tid; /* its tid in its process's own PID namespace, when that is not hangdoc's; 0 otherwise */
    char name[HD_COMM_MAX];
    char state; /* R S D T t Z X I, as in /proc/<tid>/stat; '?' when unknown */
    char wchan[HD_WCHAN_MAX];
    char *kernel_stack;    /* /proc/<tid>/stack, NULL when unreadable (it needs root) */
    struct hd_syscall syscall;
    bool syscall_from_registers; /* its syscall file was unreadable: read from its registers while stopped */
    /* its syscall file was gone right after its stat was read: it ran to its end meanwhile, which wakes whoever
     * waited for it to (a parent in wait4, a joiner) */
    bool ended_during_read;
    struct hd_wait wait;
    struct hd_fuse_call fuse; /* in_call false for every thread not in a FUSE file system's call */

    uint64_t cpu_time_ns; /* user + system */
    uint64_t voluntary_switches;
    uint64_t involuntary_switches;
    bool switches_known;

    int last_cpu;           /* the CPU it last ran on (stat field 39) */
    bool blocked_for_known; /* /proc/<tid>/sched exists and the thread was not running */
    double blocked_for_s;   /* how long since it last ran, plus waited_before_s */
    double last_ran_ms;     /* the kernel's clock of its last run (se.exec_start, scheduler clock, ms) */
    /* The part of blocked_for_s before an earlier diagnosis stopped the thread for its stack, which restarted the
     * kernel's clock: the wait ledger (probe/ledger.h) kept it. 0 and 0 when not carried. */
    double waited_before_s;
    double earlier_stop_at; /* when that was, seconds since the epoch */

    /* The earlier samples, oldest first (the last is the thread itself): as many as the snapshot took less one. */
    struct hd_thread_sample *earlier;
    size_t nearlier;

    /* Native stack, taken once with all threads of the process stopped together (probe/stacks). */
    struct hd_stack stack;
    /* Running in user space at the last sample: the function its innermost frame was in (symbol, or
     * module+0xoffset; owned), NULL otherwise. Each earlier sample has its own (hd_thread_sample). */
    char *leaf_function;
    char *leaf_module; /* when no symbol names it: the module (path, owned) and the offset in it */
    uint64_t leaf_module_offset;

    /* Python (probe/python.h): the thread's Python stack, innermost first, read without stopping the process */
    struct hd_python_frame *python_frames;
    size_t npython_frames;
    bool python_truncated; /* depth cap hit, or the frame chain looped */
    /* A thread running in every sample: its innermost Python frame looked at again after the last sample
     * (probe_look_again_at_python_spinners): how many looks in all, the last sample's included, and whether every
     * one found the same function, file and line (one long call: a regular expression's backtracking) */
    unsigned python_looks;
    bool python_leaf_same;
    enum hd_gil_state gil;
};

enum hd_fd_kind {
    HD_FD_OTHER,
    HD_FD_FILE,
    HD_FD_PIPE,
    HD_FD_SOCKET,
    HD_FD_ANON,   /* anon_inode: eventfd, epoll, signalfd, timerfd, ... */
};

/* What an fd is, finer than its kind: the handles that tie a forked child to its parent's runtimes. */
enum hd_fd_class {
    HD_FD_CLASS_OTHER,
    HD_FD_CLASS_FILE,
    HD_FD_CLASS_DEVICE,       /* another character or block device */
    HD_FD_CLASS_NVIDIA,       /* /dev/nvidia*, or a character device of major 195 */
    HD_FD_CLASS_NVIDIA_UVM,   /* /dev/nvidia-uvm, /dev/nvidia-uvm-tools (their major is dynamic) */
    HD_FD_CLASS_DRI,          /* /dev/dri/card*, renderD* */
    HD_FD_CLASS_PIPE,
    HD_FD_CLASS_SOCKET,       /* not a unix socket of a known service */
    HD_FD_CLASS_UNIX_SOCKET,  /* a unix socket of no known service */
    HD_FD_CLASS_X11,          /* unix socket /tmp/.X11-unix/X<n> (path or abstract name) */
    HD_FD_CLASS_WAYLAND,      /* unix socket wayland-<n> */
    HD_FD_CLASS_DBUS,         /* unix socket of a D-Bus bus */
    HD_FD_CLASS_EVENTFD,
    HD_FD_CLASS_MEMFD,
    HD_FD_CLASS_SHM,          /* /dev/shm/... (POSIX shared memory) */
    HD_FD_CLASS_ANON,         /* other anon_inode: epoll, signalfd, timerfd, ... */
};

/* The open file an fd of a child shares with an fd of its parent, proven with kcmp(KCMP_FILE). */
struct hd_fd_origin {
    pid_t pid; /* 0: not proven to be inherited (see hd_fd.inherited_checked) */
    int fd;
};

struct hd_fd {
    int fd;
    enum hd_fd_kind kind;
    uint64_t inode;  /* of the pipe or socket */
    int access_mode; /* O_RDONLY, O_WRONLY or O_RDWR, from fdinfo; -1 when unknown */
    char *target;    /* readlink of /proc/<pid>/fd/<fd> */
    enum hd_fd_class fd_class;
    bool device_known;      /* a device: its numbers below */
    unsigned device_major;  /* of the device itself (st_rdev), not of the filesystem */
    unsigned device_minor;
    char *socket_name;      /* unix socket: the bound path, "@name" for an abstract one; NULL when unnamed */
    uint64_t signalfd_mask; /* a signalfd: the signals it reads (fdinfo's sigmask); 0 for any other fd */
    /* A pseudo-terminal: its master (/dev/ptmx, the index from fdinfo's tty-index) or a slave (/dev/pts/N). What
     * is written to one side waits for a reader of the other; false for any other fd */
    bool pty;
    bool pty_master;
    int pty_index;
    bool inherited_checked; /* kcmp was asked against every fd of the parent */
    struct hd_fd_origin inherited_from;
};

/* One mapped ELF object (the executable, a shared library): read from its file with libelf. */
struct hd_library {
    char *path;      /* as the maps file names it; " (deleted)" included when the file is gone */
    char *soname;    /* DT_SONAME, NULL when it has none or the file could not be read */
    char *build_id;  /* NT_GNU_BUILD_ID in hex, NULL when none */
    uint64_t start;  /* the lowest and highest address of its mappings */
    uint64_t end;
    uint64_t inode;
    bool in_parent;  /* the parent maps the same file at the same address: inherited through fork() */
};

/* The Python multiprocessing start method a process was created by, or runs its children with. */
enum hd_python_start_method {
    HD_PYTHON_NONE,      /* not Python, or no multiprocessing seen */
    HD_PYTHON_FORK,
    HD_PYTHON_SPAWN,
    HD_PYTHON_FORKSERVER,
};

/* What a process is to Python's multiprocessing, from its command line and its parent. */
enum hd_python_role {
    HD_PYTHON_ROLE_NONE,
    HD_PYTHON_ROLE_MAIN,             /* a Python process with multiprocessing children */
    HD_PYTHON_ROLE_FORK_CHILD,       /* forked from a Python parent */
    HD_PYTHON_ROLE_SPAWN_CHILD,      /* python -c 'from multiprocessing.spawn import spawn_main; ...' */
    HD_PYTHON_ROLE_FORKSERVER,       /* python -c 'from multiprocessing.forkserver import main; ...' */
    HD_PYTHON_ROLE_FORKSERVER_CHILD, /* forked by the forkserver */
    HD_PYTHON_ROLE_RESOURCE_TRACKER, /* python -c 'from multiprocessing.resource_tracker import main; ...' */
};

/* A process outside the snapshot that holds the write end of a pipe a thread of the snapshot reads, where no
 * process of the snapshot does (probe/pipe_holders.h): what the reader waits for to end. */
struct hd_pipe_holder {
    uint64_t inode;
    pid_t pid;
    pid_t ppid;
    pid_t session;
    int fd;
    char comm[HD_COMM_MAX];
    char parent_comm[HD_COMM_MAX]; /* its parent's name now; empty when unread */
    bool parent_above_tree;        /* its parent is an ancestor of the tree's roots (a subreaper that adopted it) */
    double start_time_s; /* seconds after boot */
};

/* A connected unix socket and the inode of its peer (sock_diag). */
struct hd_socket_peer {
    uint64_t inode;
    uint64_t peer_inode;
};

enum hd_origin {
    HD_ORIGIN_UNKNOWN,
    HD_ORIGIN_FORKED,     /* forked from its parent, not exec'd since */
    HD_ORIGIN_EXEC,       /* exec'd a program */
    HD_ORIGIN_SPAWN,      /* Python multiprocessing spawn child */
    HD_ORIGIN_FORKSERVER, /* child of a Python forkserver */
};

/* How the fork-or-exec part of an origin was decided (probe/origin.h). */
enum hd_origin_basis {
    HD_ORIGIN_BASIS_NONE,                /* not decided: no parent in the tree, a kernel thread, a zombie */
    HD_ORIGIN_BASIS_AT_RANDOM_SAME,      /* auxv AT_RANDOM: the same address and bytes as the parent's: forked */
    HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT, /* auxv AT_RANDOM: another address or other bytes: exec'd since */
    HD_ORIGIN_BASIS_EXECUTABLE_DIFFERS,  /* AT_RANDOM unreadable, but another executable or load address: exec'd */
    HD_ORIGIN_BASIS_UNREADABLE,          /* AT_RANDOM unreadable and the executables alike: origin unknown (noted) */
};

/* A goroutine of a Go program, read from the runtime's list (probe/golang.h). */
struct hd_goroutine {
    int64_t goid;
    uint32_t status;   /* the runtime's _G status (its scan bit cleared): 1 runnable, 2 running, 3 syscall, 4 waiting */
    char *wait_reason; /* the runtime's words for the wait ("sync.Mutex.Lock", "chan receive"); NULL when it does
                        * not wait or they were not read. Hostile */
    bool system;       /* started by the runtime itself (its start function is runtime.*, not runtime.main) */
    bool unchanged;    /* in the same wait (status, reason, saved stack and program pointers, and for a semaphore the
                        * same queue entry) at the first sample */
    uint64_t semaphore; /* the word it sleeps on in the runtime's semaphore table (a sync.Mutex's or WaitGroup's
                         * sema: the lock's address and 4 for a Mutex); 0 when it is not in the table */
    uint32_t sema_ticket; /* its queue entry's random treap priority, drawn afresh each time it queues */
    uint64_t saved_sp; /* the stack and program pointers it saved when it last stopped running */
    uint64_t saved_pc;
    struct hd_frame *frames; /* from its saved registers by frame pointers, innermost first */
    size_t nframes;
};

/* What the Go runtime of a process says (probe/golang.h): present for a Go executable. */
struct hd_go_runtime {
    bool present;
    char *version;       /* runtime.buildVersion ("go1.19.8"): hostile; NULL when unread */
    const char *why_not; /* static: why the goroutines were not read; NULL when they were */
    struct hd_goroutine *goroutines;
    size_t ngoroutines;
    bool truncated;      /* more goroutines than were read */
};

/* A Java thread of a HotSpot JVM, read from the JVM's own tables (probe/jvm.h). */
struct hd_java_thread {
    pid_t tid;               /* its OS thread */
    uint32_t state;          /* HotSpot's JavaThreadState: 10 blocked (in a monitor enter, a park, a wait), 8 in Java,
                              * 4 in native, 6 in the VM */
    uint64_t pending_monitor; /* the ObjectMonitor it waits to enter (synchronized); 0 when none */
    uint64_t waiting_monitor; /* the ObjectMonitor it waits on (Object.wait); 0 when none */
    uint64_t monitor_object;  /* the pending monitor's object; 0 when unread */
    char *monitor_class;      /* its class ("java.lang.Object"): hostile; NULL when unread */
    pid_t owner_tid;          /* the Java thread that owns the pending monitor (its JavaThread, or a lock record
                               * on its stack); 0 when unknown */
    uint64_t blocker_object;  /* parked (LockSupport.park): the object it parks for, a java.util.concurrent lock's
                               * synchronizer; 0 when none or unread */
    char *blocker_class;      /* its class ("java.util.concurrent.locks.ReentrantLock$NonfairSync"): hostile */
    pid_t blocker_owner_tid;  /* the Java thread the synchronizer says owns it exclusively; 0 when none or unread */
};

/* What a HotSpot JVM says of its Java threads (probe/jvm.h): present for a process that maps libjvm.so. */
struct hd_jvm {
    bool present;
    char *release;       /* the VM's release ("17.0.15+6-Debian-1deb12u1"): hostile; NULL when unread */
    const char *why_not; /* static: why the Java threads were not read; NULL when they were */
    struct hd_java_thread *threads;
    size_t nthreads;
};

struct hd_process {
    pid_t pid;
    pid_t ppid;
    pid_t session; /* its session (stat field 6); 0 when unread */
    uid_t uid;
    char comm[HD_COMM_MAX];
    char state;
    char **argv; /* NULL-terminated; argc 0 for kernel threads and zombies */
    size_t argc;
    bool cmdline_truncated;
    char *exe; /* NULL when unreadable: exe_errno says why */
    int exe_errno;
    double start_time_s;       /* seconds after boot */
    double age_s;              /* how long it had been running when the snapshot was taken */
    pid_t tracer_pid;          /* 0: not traced */
    char tracer_comm[HD_COMM_MAX]; /* the tracer's name (gdb, strace); empty when unread */
    char *tracer_cmdline;      /* the tracer's command line, its arguments joined by spaces and cut at 255 bytes;
                                * NULL when not traced or unread */
    /* The cgroup freezer (probe/freezer.h): an outside party froze the process's cgroup (docker pause, systemctl
     * freeze, Kubernetes, a checkpointer). Read in the last sample; false when not frozen or when its cgroup could
     * not be read. A frozen process is never stopped for its stacks. */
    bool frozen;
    bool freezing;          /* v1 FREEZING: asked for, but some of its tasks are not frozen yet */
    int freezer_version;    /* 1 (the v1 freezer hierarchy) or 2 (cgroup v2); 0 when not frozen */
    char *frozen_cgroup;    /* its cgroup, as /proc/<pid>/cgroup names it; NULL when not frozen */
    char *frozen_by;        /* the cgroup that asked for the freeze, itself or an ancestor (cgroup.freeze 1,
                             * freezer.self_freezing 1); NULL when none says so */
    char *freeze_control;   /* that cgroup's control file on this machine, the one that thaws it (".../cgroup.freeze",
                             * ".../freezer.state"); NULL when unknown */
    /* FUSE (probe/fuse.h): it holds /dev/fuse open (a file system's daemon), and a mount it may serve has requests
     * waiting; neither it nor a process with a thread in a FUSE call is stopped for its stacks */
    bool fuse_daemon;
    bool fuse_requests_pending;
    /* PID namespaces (probe/pidns.h): set when the process lives in one below hangdoc's, whose ids its memory,
     * its system calls and its own view of /proc hold */
    uint64_t pid_namespace;    /* the namespace's inode (/proc/<pid>/ns/pid), 0 when hangdoc's own or unknown */
    pid_t ns_pid;              /* its pid there; 0 when not in another namespace */
    int thread_count;          /* as the kernel counts them (Threads:); `nthreads` is what was read */
    bool kernel_thread;
    bool zombie;
    struct hd_process_sample *earlier; /* the earlier samples of the process, oldest first */
    size_t nearlier;
    int exit_status;           /* wait status of a zombie (stat field 52); of a stopped process, the signal that
                                * stopped it (SIGTSTP, SIGTTIN, a tracer's SIGTRAP), which the same field holds */
    bool ignores_sigchld;      /* SIGCHLD is SIG_IGN (SigIgn): the kernel reaps its children, no zombie, no wait */
    /* Signal dispositions (SigCgt, SigIgn of /proc/<pid>/status; bit n-1 for signal n): who may end a signal wait */
    bool signal_dispositions_known;
    uint64_t signals_caught;
    uint64_t signals_ignored;
    /* The signals its POSIX timers deliver (/proc/<pid>/timers): a signal wait that takes one is a timed wait. The
     * file does not say whether a timer is armed, and alarm()/setitimer() timers are in no file. */
    bool timers_known;
    uint64_t timer_signals;
    enum hd_origin origin;
    enum hd_origin_basis origin_basis;
    enum hd_arch arch;         /* of its executable: which system call table decodes its threads */
    struct hd_thread *threads; /* sorted by tid */
    size_t nthreads;
    struct hd_mapping *mappings; /* /proc/<pid>/maps, sorted by address */
    size_t nmappings;
    struct hd_fd *fds;
    size_t nfds;
    bool fds_complete; /* every open fd was read (not unreadable, not cut at a limit) */
    struct hd_library *libraries; /* sorted by start address */
    size_t nlibraries;
    enum hd_python_role python_role;
    enum hd_python_start_method python_start_method; /* how it was created (children of the main: how they are) */
    /* ptrace: how long the process was stopped to take its stacks, in total over the run (0 when never) */
    double stopped_for_s;
    struct hd_python python;
    struct hd_go_runtime go;
    struct hd_jvm jvm;
    struct hd_job *job; /* NULL: its environment names no job (or could not be read) */
};

/* Which part a process plays in a distributed job (probe/job.h). */
enum hd_job_role {
    HD_JOB_RANK,     /* the process of one rank: its environment names the rank */
    HD_JOB_WORKER,   /* a child that inherited a rank's environment (a DataLoader worker): rank_pid is the rank's */
    HD_JOB_LAUNCHER, /* a torchrun agent or a wrapper (a shell, srun's task program) whose descendants are ranks */
};

/* Who a process is in a distributed job, from its environment (/proc/<pid>/environ) and cgroup. Integers are -1
 * and strings NULL when the environment does not say. */
struct hd_job {
    enum hd_job_role role;
    int rank;
    int world_size;
    int local_rank;
    int local_world_size;
    int group_rank;          /* torchrun's GROUP_RANK: the node's index among the nodes */
    int node_id;             /* SLURM_NODEID */
    const char *rank_variable; /* static: the variable that gave the rank ("RANK", "OMPI_COMM_WORLD_RANK"...) */
    pid_t rank_pid;          /* the rank's own process: the process itself unless a worker */
    char *job_id;            /* SLURM_JOB_ID */
    char *step_id;           /* SLURM_STEP_ID */
    char *run_id;            /* TORCHELASTIC_RUN_ID */
    char *master;            /* MASTER_ADDR:MASTER_PORT */
    char *cgroup;            /* its cgroup v2 path, when it names a Slurm job or a Kubernetes pod */
};

/* What a note is about, so that a program reading the report (and a test) can tell notes apart without matching
 * their prose. */
enum hd_note_kind {
    HD_NOTE_TARGET,    /* a pid asked for: gone, a thread, not diagnosable, or the diagnosis could not finish */
    HD_NOTE_DEPARTED,  /* a process or thread exited while hangdoc read it */
    HD_NOTE_DEADLINE,  /* --timeout drew near: something was left out to end in time */
    HD_NOTE_PROCFS,    /* a /proc file of the target unreadable or cut at a limit (cmdline, exe, maps, fds, syscall) */
    HD_NOTE_KERNEL,    /* the kernel lacks or refuses a facility (kernel stacks, sched clock, kcmp) */
    HD_NOTE_STACKS,    /* native stacks not taken */
    HD_NOTE_ORIGIN,    /* how a process came to be could not be told */
    HD_NOTE_SOCKETS,   /* unix socket peers or names */
    HD_NOTE_NAMESPACE, /* PID namespace translation */
    HD_NOTE_PYTHON,    /* a Python interpreter's state could not be read */
    HD_NOTE_KINDS
};

/* Something that could not be read, and why. pid/tid are 0 when the note is about the whole run. */
struct hd_note {
    enum hd_note_kind kind;
    pid_t pid;
    pid_t tid;
    char *text;
};

/* A process an earlier sample saw and the last one did not: it exited and was reaped during sampling. */
struct hd_departed {
    pid_t pid;
    pid_t ppid;
    char comm[HD_COMM_MAX];
};

struct hd_snapshot_index;

struct hd_snapshot {
    double taken_at;  /* CLOCK_REALTIME seconds of the last sample */
    char host[65];
    char boot_id[40]; /* /proc/sys/kernel/random/boot_id: tells reboots and hosts of one name apart; "" unread */
    char kernel[65];
    enum hd_arch arch;
    unsigned samples;
    unsigned interval_ms;
    double sampling_s; /* from the first sample to the last */
    uint64_t pid_namespace;       /* hangdoc's own PID namespace (inode); 0 when unknown */
    bool initial_pid_namespace;   /* hangdoc runs in the host's initial PID namespace */
    bool ptrace_used;
    const char *ptrace_why_not; /* static */

    pid_t *roots;
    size_t nroots;
    struct hd_process *processes; /* in tree order: each root, then its descendants depth-first by pid */
    size_t nprocesses;
    struct hd_note *notes;
    size_t nnotes;
    size_t notes_capacity;
    struct hd_socket_peer *unix_peers; /* sorted by inode */
    size_t nunix_peers;
    struct hd_pipe_holder *outside_pipe_holders; /* probe/pipe_holders.h; sorted by inode */
    size_t noutside_pipe_holders;
    bool outside_pipe_holders_complete; /* the search read every other process's fds: none may be missing */
    struct hd_departed *departed; /* processes that vanished between the first sample and the last */
    size_t ndeparted;
    size_t departed_capacity;
    enum hd_python_start_method python_start_method; /* of the tree: the method its Python children show */
    struct hd_snapshot_index *index; /* owned; the find functions' index (hd_snapshot_index_build), or NULL */
    /* The strings marked "static" above, when the snapshot was read from a file (record/): owned here, since no
     * table of hangdoc's holds them; empty for a snapshot probe made. */
    char **kept_strings;
    size_t nkept_strings;
    size_t kept_strings_capacity;
};

void hd_snapshot_free(struct hd_snapshot *snapshot);
HD_DEFINE_CLEANUP(struct hd_snapshot, hd_snapshot_free)
/* Frees what a stack owns and empties it. */
void hd_stack_release(struct hd_stack *stack);

/* Adds a note; the text is formatted like printf. Returns false only when memory ran out. */
bool hd_snapshot_note(struct hd_snapshot *snapshot, enum hd_note_kind kind, pid_t pid, pid_t tid,
                      const char *format, ...) __attribute__((format(printf, 5, 6)));

/* Keeps `owned` (a malloc'd string) until the snapshot is freed and returns it: a "static" string of a snapshot read
 * from a file. NULL, with `owned` freed, only when memory ran out. */
const char *hd_snapshot_keep_string(struct hd_snapshot *snapshot, char *owned);

/* Records a process that vanished during sampling. False only when memory ran out. */
bool hd_snapshot_add_departed(struct hd_snapshot *snapshot, const struct hd_process *process);

/* Room for one more element of `size` bytes after `count` in `array`, whose room is `*capacity` elements: `array`
 * itself while there is room, else the array moved to twice the room (and *capacity updated), NULL when memory ran
 * out (the array then stays as it was). Appending one at a time costs amortised O(1), where growing by one copied
 * the whole array each time (quadratic for 10,000 threads' findings or notes). */
void *hd_grow(void *array, size_t *capacity, size_t count, size_t size);

/* Indexes the processes by pid and the threads by tid, so that the two snapshot-wide finds below take a binary
 * search instead of a scan (a report over 1,000 processes looks a parent up for each). Call it once the last
 * process and thread is in (probe_snapshot does); a snapshot whose process array was changed since (a hand-built
 * one in a test) is scanned as before. False only when memory ran out: the finds then scan. */
bool hd_snapshot_index_build(struct hd_snapshot *snapshot);

struct hd_process *hd_snapshot_find_process(const struct hd_snapshot *snapshot, pid_t pid);
/* A binary search: a process's threads are sorted by tid. */
struct hd_thread *hd_process_find_thread(const struct hd_process *process, pid_t tid);
/* The thread `tid` anywhere in the snapshot, with its process; NULL when absent. */
struct hd_thread *hd_snapshot_find_thread(const struct hd_snapshot *snapshot, pid_t tid, struct hd_process **process);
/* The mapping of `process` that holds `address`, or NULL. */
/* The mapping of `mappings` (sorted by address, not overlapping) that holds `address`; NULL when none does. */
const struct hd_mapping *hd_mappings_find(const struct hd_mapping *mappings, size_t count, uint64_t address);
const struct hd_mapping *hd_process_find_mapping(const struct hd_process *process, uint64_t address);
/* The fd `fd` of `process`, or NULL. */
const struct hd_fd *hd_process_find_fd(const struct hd_process *process, int fd);
enum hd_mapping_kind hd_mapping_classify(const struct hd_mapping *mapping);
const char *hd_mapping_kind_name(enum hd_mapping_kind kind);
const char *hd_lock_kind_name(enum hd_lock_kind kind);
const char *hd_owner_whereabouts_name(enum hd_owner_whereabouts whereabouts);

const char *hd_arch_name(enum hd_arch arch);
const char *hd_origin_name(enum hd_origin origin);
const char *hd_origin_basis_name(enum hd_origin_basis basis);
const char *hd_fd_class_name(enum hd_fd_class fd_class);
const char *hd_python_start_method_name(enum hd_python_start_method method); /* NULL for HD_PYTHON_NONE */
const char *hd_python_role_name(enum hd_python_role role);                   /* NULL for HD_PYTHON_ROLE_NONE */
/* What a sample sees of `thread` as it is now (its leaf function borrowed; `restart` false). */
struct hd_thread_sample hd_thread_as_sample(const struct hd_thread *thread);
/* The latest earlier sample that saw `thread` in a futex wait; NULL when none did. */
const struct hd_thread_sample *hd_thread_earlier_futex(const struct hd_thread *thread);
/* The library of `process` whose mappings hold `address`, or NULL. */
const struct hd_library *hd_process_find_library(const struct hd_process *process, uint64_t address);
/* The library whose data `address` lies in: its own mappings, or the anonymous mapping right after its last one
 * (the .bss beyond the file's pages). NULL when neither. */
const struct hd_library *hd_process_library_of_data(const struct hd_process *process, uint64_t address);
/* The last path component, or the path itself */
const char *hd_basename(const char *path);
/* Is `process` a Python interpreter: its comm, executable or argv[0] python*, or libpython mapped (an embedding
 * program)? The one test probe (Python roles) and report (Python remedies) both ask. */
bool hd_process_is_python(const struct hd_process *process);
/* Was `process` forked from its parent, without an exec since: a plain fork child, or a Python forkserver's child
 * (the forkserver forks it). Either inherits the parent's memory, locks and runtimes. */
bool hd_process_forked(const struct hd_process *process);
const char *hd_wait_kind_name(enum hd_wait_kind kind);
const char *hd_note_kind_name(enum hd_note_kind kind);
const char *hd_gil_state_name(enum hd_gil_state state); /* NULL for HD_GIL_UNKNOWN */
/* Frees what a thread's Python stack owns and empties it. */
void hd_python_frames_release(struct hd_thread *thread);
/* Frees the goroutines of `go` and its version, and empties it. */
void hd_go_runtime_release(struct hd_go_runtime *go);
/* Frees the Java threads of `jvm` and its release, and empties it. */
void hd_jvm_release(struct hd_jvm *jvm);
/* Frees a job label and its strings; NULL is fine. */
void hd_job_free(struct hd_job *job);
/* "rank", "worker", "launcher". */
const char *hd_job_role_name(enum hd_job_role role);
