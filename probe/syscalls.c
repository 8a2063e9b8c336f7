/* Syscall name tables and wait decoders (syscalls.h). */
#include "syscalls.h"

#include "util.h"

#include <string.h>
#include <sys/user.h>

struct syscall_name {
    int nr;
    const char *name;
};

#include "syscall_names.inc"

HD_KEY_COMPARATOR(compare_nr, long, struct syscall_name, .nr)

const char *probe_syscall_name(enum hd_arch arch, long nr)
{
    const struct syscall_name *table;
    size_t count;
    switch (arch) {
    case HD_ARCH_X86_64:
        table = syscall_names_x86_64;
        count = COUNT(syscall_names_x86_64);
        break;
    case HD_ARCH_AARCH64:
        table = syscall_names_aarch64;
        count = COUNT(syscall_names_aarch64);
        break;
    case HD_ARCH_UNKNOWN:
    default: /* a value read from a target's ELF header is not trusted to be one of the enum's */
        return NULL;
    }
    /* The generated tables are sorted by number. */
    size_t at = hd_lower_bound(&nr, table, count, sizeof *table, compare_nr);
    return at < count && table[at].nr == nr ? table[at].name : NULL;
}

/* ---- timeouts ---------------------------------------------------------------------------------------------- */

/* clockid_t values and flags from the UAPI (linux/time.h, linux/futex.h) */
enum {
    CLOCK_ID_REALTIME = 0,
    CLOCK_ID_MONOTONIC = 1,
    TIMER_ABSTIME_FLAG = 1,
};

struct decode_context {
    const struct hd_syscall *syscall;
    probe_memory_reader read_memory;
    void *memory_context;
    const struct probe_clocks *clocks;
    struct hd_wait *wait;
};

static void timeout_none(struct decode_context *c)
{
    c->wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_NONE };
}

static void timeout_ns(struct decode_context *c, int64_t ns, bool absolute)
{
    c->wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_FINITE, .absolute = absolute, .remaining_ns = ns };
}

/* Both struct timespec and struct timeval are two 64-bit words on the 64-bit architectures we decode. */
static bool read_time_pair(struct decode_context *c, uint64_t address, int64_t pair[2])
{
    return c->read_memory && c->read_memory(c->memory_context, address, pair, 2 * sizeof pair[0]);
}

enum time_unit { UNIT_NANOSECONDS, UNIT_MICROSECONDS };

static int64_t saturating_add(int64_t a, int64_t b)
{
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

static int64_t saturating_multiply(int64_t a, int64_t b)
{
    int64_t product;
    if (__builtin_mul_overflow(a, b, &product))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return product;
}

/* A pointer to a duration (NULL: wait forever), or to a deadline on `clock` when absolute. */
static void timeout_from_pointer(struct decode_context *c, uint64_t address, enum time_unit unit, bool absolute,
                                 int clock)
{
    if (address == 0) {
        timeout_none(c);
        return;
    }
    int64_t pair[2];
    if (!read_time_pair(c, address, pair)) {
        c->wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_UNREADABLE, .absolute = absolute };
        return;
    }
    /* The words come from the target: saturate instead of overflowing on hostile values. */
    int64_t ns = saturating_add(saturating_multiply(pair[0], 1000000000),
                                saturating_multiply(pair[1], unit == UNIT_MICROSECONDS ? 1000 : 1));
    if (absolute)
        ns = saturating_add(ns, -(clock == CLOCK_ID_REALTIME ? c->clocks->realtime_ns : c->clocks->monotonic_ns));
    timeout_ns(c, ns, absolute);
}

/* A timeout in milliseconds passed by value: negative means forever (poll(2), epoll_wait(2)). */
static void timeout_from_milliseconds(struct decode_context *c, uint64_t argument)
{
    int milliseconds = (int)(uint32_t)argument;
    if (milliseconds < 0)
        timeout_none(c);
    else
        timeout_ns(c, (int64_t)milliseconds * 1000000, false);
}

/* ---- decoders, one per family of calls ---------------------------------------------------------------------- */

#define ARG(n) (c->syscall->args[n])

/* futex(2) operations that put the caller to sleep, and how each reads its timeout argument */
enum futex_timeout { FUTEX_TIMEOUT_RELATIVE, FUTEX_TIMEOUT_ABSOLUTE_MONOTONIC, FUTEX_TIMEOUT_ABSOLUTE_REALTIME };
static const struct futex_operation {
    unsigned op;
    const char *name;
    enum futex_timeout timeout;
} futex_operations[] = {
    { 0, "FUTEX_WAIT", FUTEX_TIMEOUT_RELATIVE },
    { 6, "FUTEX_LOCK_PI", FUTEX_TIMEOUT_ABSOLUTE_REALTIME }, /* LOCK_PI's deadline is always CLOCK_REALTIME */
    { 9, "FUTEX_WAIT_BITSET", FUTEX_TIMEOUT_ABSOLUTE_MONOTONIC },
    { 11, "FUTEX_WAIT_REQUEUE_PI", FUTEX_TIMEOUT_ABSOLUTE_MONOTONIC },
    { 13, "FUTEX_LOCK_PI2", FUTEX_TIMEOUT_ABSOLUTE_MONOTONIC },
};

enum {
    FUTEX_PRIVATE_FLAG = 128,
    FUTEX_CLOCK_REALTIME = 256,
    FUTEX_COMMAND_MASK = ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME),
};

static void decode_futex(struct decode_context *c)
{
    unsigned op = (unsigned)ARG(1);
    unsigned command = op & (unsigned)FUTEX_COMMAND_MASK;
    struct hd_wait *w = c->wait;
    w->address = ARG(0);
    w->futex_private = op & FUTEX_PRIVATE_FLAG;
    w->futex_realtime = op & FUTEX_CLOCK_REALTIME;
    w->expected = (uint32_t)ARG(2);
    for (size_t i = 0; i < COUNT(futex_operations); i++) {
        const struct futex_operation *known = &futex_operations[i];
        if (known->op != command)
            continue;
        w->kind = HD_WAIT_FUTEX;
        w->operation = known->name;
        bool realtime = known->timeout == FUTEX_TIMEOUT_ABSOLUTE_REALTIME || w->futex_realtime;
        timeout_from_pointer(c, ARG(3), UNIT_NANOSECONDS, known->timeout != FUTEX_TIMEOUT_RELATIVE,
                             realtime ? CLOCK_ID_REALTIME : CLOCK_ID_MONOTONIC);
        return;
    }
    /* FUTEX_WAKE, REQUEUE and the rest do not sleep: the thread is merely inside the call. */
    w->kind = HD_WAIT_OTHER;
    w->operation = "futex";
}

static void decode_futex_waitv(struct decode_context *c)
{
    /* futex_waitv(waiters, nr_futexes, flags, timeout, clockid): the deadline is absolute */
    c->wait->kind = HD_WAIT_FUTEX;
    c->wait->operation = "futex_waitv";
    c->wait->nfds = (unsigned)ARG(1);
    timeout_from_pointer(c, ARG(3), UNIT_NANOSECONDS, true, (int)ARG(4));
}

static void decode_poll(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_POLL;
    c->wait->nfds = (unsigned)ARG(1);
    timeout_from_milliseconds(c, ARG(2));
}

static void decode_ppoll(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_POLL;
    c->wait->nfds = (unsigned)ARG(1);
    timeout_from_pointer(c, ARG(2), UNIT_NANOSECONDS, false, CLOCK_ID_MONOTONIC);
}

static void decode_select(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_POLL;
    c->wait->nfds = (unsigned)ARG(0);
    timeout_from_pointer(c, ARG(4), UNIT_MICROSECONDS, false, CLOCK_ID_MONOTONIC);
}

static void decode_pselect(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_POLL;
    c->wait->nfds = (unsigned)ARG(0);
    timeout_from_pointer(c, ARG(4), UNIT_NANOSECONDS, false, CLOCK_ID_MONOTONIC);
}

static void decode_epoll_wait(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_POLL;
    c->wait->fd = (int)ARG(0);
    timeout_from_milliseconds(c, ARG(3));
}

static void decode_epoll_pwait2(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_POLL;
    c->wait->fd = (int)ARG(0);
    timeout_from_pointer(c, ARG(3), UNIT_NANOSECONDS, false, CLOCK_ID_MONOTONIC);
}

static void decode_fd_wait(struct decode_context *c, enum hd_wait_kind kind)
{
    c->wait->kind = kind;
    c->wait->fd = (int)ARG(0);
    timeout_none(c); /* SO_RCVTIMEO may still apply; it is not visible from here */
}

static void decode_read(struct decode_context *c) { decode_fd_wait(c, HD_WAIT_READ); }
static void decode_write(struct decode_context *c) { decode_fd_wait(c, HD_WAIT_WRITE); }
static void decode_accept(struct decode_context *c) { decode_fd_wait(c, HD_WAIT_ACCEPT); }
static void decode_connect(struct decode_context *c) { decode_fd_wait(c, HD_WAIT_CONNECT); }

static void decode_recvmmsg(struct decode_context *c)
{
    decode_fd_wait(c, HD_WAIT_READ);
    timeout_from_pointer(c, ARG(4), UNIT_NANOSECONDS, false, CLOCK_ID_MONOTONIC);
}

static void child_from_pid_argument(struct decode_context *c, pid_t pid)
{
    /* wait4(2): < -1 a process group, -1 any child, 0 the caller's group, > 0 that child */
    c->wait->child = pid;
    if (pid > 0)
        c->wait->child_selector = HD_CHILD_PID;
    else if (pid == -1)
        c->wait->child_selector = HD_CHILD_ANY;
    else {
        /* the target's argument: INT_MIN has no positive counterpart (found by tests/fuzz/fuzz_waits.c) */
        c->wait->child_selector = HD_CHILD_GROUP;
        c->wait->child = pid == INT32_MIN ? 0 : -pid;
    }
}

static void decode_wait4(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_CHILD;
    child_from_pid_argument(c, (pid_t)(int32_t)ARG(0));
    /* WNOHANG callers return at once, so a thread found sleeping here waits without a timeout */
    timeout_none(c);
}

static void decode_waitid(struct decode_context *c)
{
    /* idtype_t: P_ALL 0, P_PID 1, P_PGID 2, P_PIDFD 3 */
    static const enum hd_child_selector selectors[] = { HD_CHILD_ANY, HD_CHILD_PID, HD_CHILD_GROUP, HD_CHILD_PIDFD };
    unsigned idtype = (unsigned)ARG(0);
    c->wait->kind = HD_WAIT_CHILD;
    c->wait->child_selector = idtype < COUNT(selectors) ? selectors[idtype] : HD_CHILD_ANY;
    c->wait->child = (pid_t)(int32_t)ARG(1);
    timeout_none(c);
}

static void decode_nanosleep(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_SLEEP;
    timeout_from_pointer(c, ARG(0), UNIT_NANOSECONDS, false, CLOCK_ID_MONOTONIC);
}

static void decode_clock_nanosleep(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_SLEEP;
    timeout_from_pointer(c, ARG(2), UNIT_NANOSECONDS, ARG(1) & TIMER_ABSTIME_FLAG, (int)ARG(0));
}

/* A sigset_t of the target at `address`: the kernel's is 64 bits on the architectures we decode (sigsetsize 8). */
static void signal_set_from_pointer(struct decode_context *c, uint64_t address, uint64_t size,
                                    enum hd_signal_set_kind kind)
{
    uint64_t set;
    if (address == 0 || size != sizeof set || !c->read_memory ||
        !c->read_memory(c->memory_context, address, &set, sizeof set))
        return;
    c->wait->signal_set = set;
    c->wait->signal_set_kind = kind;
}

/* pause(2): its set is the thread's own mask, which the caller reads from the thread's status file */
static void decode_pause(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_SIGNAL;
    timeout_none(c);
}

/* rt_sigsuspend(mask, sigsetsize): the mask in force while it waits */
static void decode_sigsuspend(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_SIGNAL;
    timeout_none(c);
    signal_set_from_pointer(c, ARG(0), ARG(1), HD_SIGNAL_SET_BLOCKED);
}

/* rt_sigtimedwait(set, info, timeout, sigsetsize): the signals it takes */
static void decode_sigtimedwait(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_SIGNAL;
    timeout_from_pointer(c, ARG(2), UNIT_NANOSECONDS, false, CLOCK_ID_MONOTONIC);
    signal_set_from_pointer(c, ARG(0), ARG(3), HD_SIGNAL_SET_WANTED);
}

static void decode_flock(struct decode_context *c)
{
    c->wait->kind = HD_WAIT_LOCK;
    c->wait->fd = (int)ARG(0);
    timeout_none(c);
}

static void decode_fcntl(struct decode_context *c)
{
    /* F_SETLKW 7, F_OFD_SETLKW 38 block; every other command returns at once */
    unsigned command = (unsigned)ARG(1);
    if (command == 7 || command == 38)
        decode_flock(c);
    else
        c->wait->kind = HD_WAIT_OTHER;
}

static const struct wait_decoder {
    const char *syscall;
    void (*decode)(struct decode_context *);
} wait_decoders[] = {
    { "futex", decode_futex },
    { "futex_waitv", decode_futex_waitv },
    { "poll", decode_poll },
    { "ppoll", decode_ppoll },
    { "select", decode_select },
    { "pselect6", decode_pselect },
    { "epoll_wait", decode_epoll_wait },
    { "epoll_pwait", decode_epoll_wait },
    { "epoll_pwait2", decode_epoll_pwait2 },
    { "read", decode_read },
    { "readv", decode_read },
    { "pread64", decode_read },
    { "preadv", decode_read },
    { "preadv2", decode_read },
    { "recvfrom", decode_read },
    { "recvmsg", decode_read },
    { "recvmmsg", decode_recvmmsg },
    { "write", decode_write },
    { "writev", decode_write },
    { "sendto", decode_write },
    { "sendmsg", decode_write },
    { "accept", decode_accept },
    { "accept4", decode_accept },
    { "connect", decode_connect },
    { "wait4", decode_wait4 },
    { "waitid", decode_waitid },
    { "nanosleep", decode_nanosleep },
    { "clock_nanosleep", decode_clock_nanosleep },
    { "pause", decode_pause },
    { "rt_sigsuspend", decode_sigsuspend },
    { "rt_sigtimedwait", decode_sigtimedwait },
    { "flock", decode_flock },
    { "fcntl", decode_fcntl },
};

/* restart_syscall(2): the kernel resumes an interrupted sleep this way after a stop (a debugger's, or hangdoc's own
 * PTRACE_INTERRUPT) when the call keeps its state in the thread's restart block: poll (with or without a timeout), a
 * futex wait with a timeout, nanosleep and clock_nanosleep. The wait channel says which call it was; the argument
 * registers still hold that call's arguments (the kernel rewinds only the instruction pointer and sets the call
 * number), so the wait is decoded as that call's. What is lost is the time already slept: a relative timeout's
 * remaining time is unknown. The first pattern found in the wait channel wins. */
static const struct restarted_wait {
    const char *wchan_part;
    const char *syscall; /* decoded as this call; NULL: a sleep of unknown length */
} restarted_waits[] = {
    { "poll", "poll" },      /* do_poll, poll_schedule_timeout */
    { "futex", "futex" },    /* futex_wait_queue, futex_do_wait */
    { "nanosleep", NULL },   /* do_nanosleep, hrtimer_nanosleep: nanosleep or clock_nanosleep, the registers differ */
};

static void decode_by_name(struct decode_context *c, const char *name)
{
    for (size_t i = 0; i < COUNT(wait_decoders); i++)
        if (strcmp(wait_decoders[i].syscall, name) == 0) {
            wait_decoders[i].decode(c);
            if (!c->wait->operation)
                c->wait->operation = name;
            return;
        }
}

static void decode_restart_syscall(struct decode_context *c, const char *wchan)
{
    /* without a wait channel: a sleep that will end, which is what it most often is */
    c->wait->kind = HD_WAIT_SLEEP;
    c->wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_UNREADABLE };
    for (size_t i = 0; wchan && i < COUNT(restarted_waits); i++) {
        if (!strstr(wchan, restarted_waits[i].wchan_part))
            continue;
        if (!restarted_waits[i].syscall)
            return;
        c->wait->operation = NULL;
        decode_by_name(c, restarted_waits[i].syscall);
        if (c->wait->timeout.kind == HD_TIMEOUT_FINITE && !c->wait->timeout.absolute)
            c->wait->timeout = (struct hd_timeout){ .kind = HD_TIMEOUT_UNREADABLE };
        return;
    }
}

bool probe_syscall_is_restart(const struct hd_syscall *syscall)
{
    return syscall->name && strcmp(syscall->name, "restart_syscall") == 0;
}

void probe_decode_wait(const struct hd_syscall *syscall, const char *wchan, probe_memory_reader read_memory,
                       void *context, const struct probe_clocks *clocks, struct hd_wait *out)
{
    *out = (struct hd_wait){ .kind = HD_WAIT_NONE, .fd = -1 };
    if (syscall->state != HD_SYSCALL_IN)
        return;
    out->kind = HD_WAIT_OTHER;
    out->operation = syscall->name;
    if (!syscall->name)
        return;
    struct decode_context c = {
        .syscall = syscall, .read_memory = read_memory, .memory_context = context, .clocks = clocks, .wait = out,
    };
    if (probe_syscall_is_restart(syscall))
        decode_restart_syscall(&c, wchan);
    else
        decode_by_name(&c, syscall->name);
}

/* The kernel's restart codes (include/linux/errno.h): a blocking call a signal or a stop interrupted. */
static bool interrupted_call(long long result)
{
    static const long long restart_codes[] = { -512 /* ERESTARTSYS */, -513 /* ERESTARTNOINTR */,
                                               -514 /* ERESTARTNOHAND */, -516 /* ERESTART_RESTARTBLOCK */ };
    for (size_t i = 0; i < COUNT(restart_codes); i++)
        if (result == restart_codes[i])
            return true;
    return false;
}

bool probe_syscall_from_registers(const void *registers, size_t size, struct hd_syscall *out)
{
#if defined(__x86_64__)
    struct user_regs_struct regs;
    if (size < sizeof regs)
        return false;
    memcpy(&regs, registers, sizeof regs);
    *out = (struct hd_syscall){ .state = HD_SYSCALL_NONE, .nr = -1, .stack_pointer = regs.rsp,
                                .program_counter = regs.rip };
    /* until the thread is let go, an interrupted call is not restarted yet */
    if ((long long)regs.orig_rax < 0 || !interrupted_call((long long)regs.rax))
        return true;
    out->state = HD_SYSCALL_IN;
    out->nr = (long)regs.orig_rax;
    const uint64_t args[6] = { regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9 };
    memcpy(out->args, args, sizeof args);
    return true;
#else
    (void)registers;
    (void)size;
    (void)out;
    return false;
#endif
}
