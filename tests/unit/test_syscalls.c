/* Unit tests for the syscall name tables and the wait decoders (probe/syscalls.h). */
#include <criterion/criterion.h>

#include "syscalls.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

/* ---- probe_syscall_name -------------------------------------------------------------------------------------- */

Test(syscall_name, x86_64)
{
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_X86_64, 0), "read");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_X86_64, 1), "write");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_X86_64, 7), "poll");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_X86_64, 58), "vfork");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_X86_64, 61), "wait4");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_X86_64, 202), "futex");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_X86_64, 271), "ppoll");
}

Test(syscall_name, aarch64)
{
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_AARCH64, 63), "read");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_AARCH64, 73), "ppoll");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_AARCH64, 98), "futex");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_AARCH64, 260), "wait4");
    cr_assert_str_eq(probe_syscall_name(HD_ARCH_AARCH64, 0), "io_setup");
}

Test(syscall_name, aarch64_has_no_poll)
{
    const char *seven = probe_syscall_name(HD_ARCH_AARCH64, 7);
    cr_assert_not_null(seven);
    cr_assert_str_eq(seven, "fsetxattr");
    cr_assert_str_neq(seven, "poll");
    /* and the x86-64 numbers mean other calls there */
    cr_assert_str_neq(probe_syscall_name(HD_ARCH_AARCH64, 202), "futex");
    cr_assert_str_neq(probe_syscall_name(HD_ARCH_AARCH64, 61), "wait4");
}

Test(syscall_name, unknown_numbers)
{
    cr_assert_null(probe_syscall_name(HD_ARCH_X86_64, -1));
    cr_assert_null(probe_syscall_name(HD_ARCH_X86_64, 335)); /* gap between rseq (334) and 424 */
    cr_assert_null(probe_syscall_name(HD_ARCH_X86_64, 100000));
    cr_assert_null(probe_syscall_name(HD_ARCH_X86_64, (long)0x7fffffffffffffff));
    cr_assert_null(probe_syscall_name(HD_ARCH_X86_64, (long)0x100000000)); /* must not truncate to 0 */
    cr_assert_null(probe_syscall_name(HD_ARCH_AARCH64, -1));
    cr_assert_null(probe_syscall_name(HD_ARCH_AARCH64, 250)); /* arch-specific gap 244..259 */
    cr_assert_null(probe_syscall_name(HD_ARCH_AARCH64, 100000));
}

Test(syscall_name, unknown_architecture)
{
    cr_assert_null(probe_syscall_name(HD_ARCH_UNKNOWN, 0));
    cr_assert_null(probe_syscall_name(HD_ARCH_UNKNOWN, 202));
    cr_assert_null(probe_syscall_name((enum hd_arch)99, 0));
}

/* The tables themselves, to check that every entry is found by the binary search (they must be sorted). */
struct syscall_name {
    int nr;
    const char *name;
};
#include "syscall_names.inc"

static void check_table(enum hd_arch arch, const struct syscall_name *table, size_t count)
{
    cr_assert_gt(count, 100);
    for (size_t i = 0; i < count; i++) {
        if (i > 0)
            cr_assert_lt(table[i - 1].nr, table[i].nr, "table not sorted at %d", table[i].nr);
        const char *name = probe_syscall_name(arch, table[i].nr);
        cr_assert_not_null(name, "%d not found", table[i].nr);
        cr_assert_str_eq(name, table[i].name);
    }
}

Test(syscall_name, every_table_entry_is_found)
{
    check_table(HD_ARCH_X86_64, syscall_names_x86_64, sizeof syscall_names_x86_64 / sizeof syscall_names_x86_64[0]);
    check_table(HD_ARCH_AARCH64, syscall_names_aarch64,
                sizeof syscall_names_aarch64 / sizeof syscall_names_aarch64[0]);
}

/* ---- probe_decode_wait --------------------------------------------------------------------------------------- */

static struct hd_syscall call(const char *name, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                              uint64_t a5)
{
    return (struct hd_syscall){
        .state = HD_SYSCALL_IN,
        .nr = 1,
        .name = name,
        .args = { a0, a1, a2, a3, a4, a5 },
        .stack_pointer = 0x7ffd0000,
        .program_counter = 0x7f120000,
    };
}

/* A fake target memory: one time pair at one address. */
struct fake_memory {
    bool ok;
    uint64_t address;
    int64_t pair[2];
    unsigned calls;
    uint64_t asked_address;
    size_t asked_size;
};

static bool fake_reader(void *context, uint64_t address, void *buffer, size_t size)
{
    struct fake_memory *memory = context;
    memory->calls++;
    memory->asked_address = address;
    memory->asked_size = size;
    if (!memory->ok || address != memory->address || size > sizeof memory->pair)
        return false;
    memcpy(buffer, memory->pair, size);
    return true;
}

static const struct probe_clocks test_clocks = {
    .monotonic_ns = 1000LL * 1000000000, /* 1000 s after boot */
    .realtime_ns = 1700000000LL * 1000000000,
};

static struct hd_wait decode_in(const struct hd_syscall *syscall, const char *wchan, struct fake_memory *memory)
{
    struct hd_wait wait;
    memset(&wait, 0xa5, sizeof wait);
    probe_decode_wait(syscall, wchan, memory ? fake_reader : NULL, memory, &test_clocks, &wait);
    return wait;
}

static struct hd_wait decode(const struct hd_syscall *syscall, struct fake_memory *memory)
{
    return decode_in(syscall, "", memory);
}

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256

Test(decode_wait, futex_wait_private_forever)
{
    struct hd_syscall syscall = call("futex", 0x55d2a0c4e040, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 2, 0, 0, 0);
    struct fake_memory memory = { .ok = true };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_str_eq(wait.operation, "FUTEX_WAIT");
    cr_assert_eq(wait.address, 0x55d2a0c4e040ULL);
    cr_assert(wait.futex_private);
    cr_assert_not(wait.futex_realtime);
    cr_assert_eq(wait.expected, 2);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
    cr_assert_not(wait.timeout.absolute);
    cr_assert_eq(memory.calls, 0, "a NULL timeout must not be read");
}

Test(decode_wait, futex_wait_shared)
{
    struct hd_syscall syscall = call("futex", 0x1000, FUTEX_WAIT, 0xffffffff, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_not(wait.futex_private);
    cr_assert_eq(wait.expected, 0xffffffffU);
}

Test(decode_wait, futex_wake_does_not_wait)
{
    struct hd_syscall syscall = call("futex", 0x1000, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_OTHER);
    cr_assert_str_eq(wait.operation, "futex");
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NOT_APPLICABLE);
}

Test(decode_wait, futex_wait_relative_timeout)
{
    struct hd_syscall syscall = call("futex", 0x1000, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, 0x7ffd5000, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd5000, .pair = { 2, 500000000 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_str_eq(wait.operation, "FUTEX_WAIT");
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_not(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 2500000000LL);
    cr_assert_eq(memory.calls, 1);
    cr_assert_eq(memory.asked_address, 0x7ffd5000ULL);
    cr_assert_eq(memory.asked_size, 16);
}

Test(decode_wait, futex_timeout_unreadable)
{
    struct hd_syscall syscall = call("futex", 0x1000, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, 0x7ffd5000, 0, 0);
    struct fake_memory memory = { .ok = false };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_UNREADABLE);
    cr_assert_eq(memory.calls, 1);
}

Test(decode_wait, futex_timeout_without_reader)
{
    struct hd_syscall syscall = call("futex", 0x1000, FUTEX_WAIT, 0, 0x7ffd5000, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_UNREADABLE);
}

Test(decode_wait, futex_wait_bitset_absolute_monotonic)
{
    struct hd_syscall syscall =
        call("futex", 0x2000, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, 0x7ffd6000, 0, 0xffffffff);
    /* deadline 1003.25 s on CLOCK_MONOTONIC; the clock reads 1000 s */
    struct fake_memory memory = { .ok = true, .address = 0x7ffd6000, .pair = { 1003, 250000000 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_str_eq(wait.operation, "FUTEX_WAIT_BITSET");
    cr_assert(wait.futex_private);
    cr_assert_not(wait.futex_realtime);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 1003250000000LL - test_clocks.monotonic_ns);
    cr_assert_eq(wait.timeout.remaining_ns, 3250000000LL);
}

Test(decode_wait, futex_wait_bitset_deadline_passed)
{
    struct hd_syscall syscall = call("futex", 0x2000, FUTEX_WAIT_BITSET, 0, 0x7ffd6000, 0, 0xffffffff);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd6000, .pair = { 999, 0 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, -1000000000LL);
}

Test(decode_wait, futex_wait_bitset_clock_realtime)
{
    struct hd_syscall syscall = call("futex", 0x2000, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME,
                                     0, 0x7ffd6000, 0, 0xffffffff);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd6000, .pair = { 1700000010, 0 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_str_eq(wait.operation, "FUTEX_WAIT_BITSET");
    cr_assert(wait.futex_private);
    cr_assert(wait.futex_realtime);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 1700000010LL * 1000000000 - test_clocks.realtime_ns);
    cr_assert_eq(wait.timeout.remaining_ns, 10000000000LL);
}

Test(decode_wait, futex_wait_bitset_unreadable_stays_absolute)
{
    struct hd_syscall syscall = call("futex", 0x2000, FUTEX_WAIT_BITSET, 0, 0x7ffd6000, 0, 0xffffffff);
    struct fake_memory memory = { .ok = false };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_UNREADABLE);
    cr_assert(wait.timeout.absolute);
}

Test(decode_wait, futex_lock_pi_deadline_is_realtime)
{
    struct hd_syscall syscall = call("futex", 0x3000, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, 0x7ffd7000, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd7000, .pair = { 1700000001, 500000000 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_str_eq(wait.operation, "FUTEX_LOCK_PI");
    cr_assert(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 1500000000LL);
}

Test(decode_wait, futex_on_aarch64_decodes_by_name)
{
    struct hd_syscall syscall = call(probe_syscall_name(HD_ARCH_AARCH64, 98), 0x1000,
                                     FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_str_eq(wait.operation, "FUTEX_WAIT");
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
}

Test(decode_wait, poll_forever)
{
    struct hd_syscall syscall = call("poll", 0x7ffd1000, 3, (uint64_t)-1, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_str_eq(wait.operation, "poll");
    cr_assert_eq(wait.nfds, 3);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
}

Test(decode_wait, poll_forever_zero_extended)
{
    /* the int -1 as it may sit zero-extended in a 64-bit register */
    struct hd_syscall syscall = call("poll", 0x7ffd1000, 1, 0xffffffff, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
}

Test(decode_wait, poll_with_timeout)
{
    struct hd_syscall syscall = call("poll", 0x7ffd1000, 2, 5000, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_eq(wait.nfds, 2);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_not(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 5000000000LL);
}

Test(decode_wait, poll_zero_timeout)
{
    struct hd_syscall syscall = call("poll", 0x7ffd1000, 2, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_eq(wait.timeout.remaining_ns, 0);
}

Test(decode_wait, poll_largest_timeout)
{
    struct hd_syscall syscall = call("poll", 0x7ffd1000, 2, INT32_MAX, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_eq(wait.timeout.remaining_ns, (int64_t)INT32_MAX * 1000000);
}

Test(decode_wait, ppoll_timespec)
{
    struct hd_syscall syscall = call("ppoll", 0x7ffd1000, 4, 0x7ffd2000, 0, 8, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd2000, .pair = { 0, 1000 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_str_eq(wait.operation, "ppoll");
    cr_assert_eq(wait.nfds, 4);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_eq(wait.timeout.remaining_ns, 1000);
    syscall.args[2] = 0;
    wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
}

Test(decode_wait, epoll_wait_fd)
{
    struct hd_syscall syscall = call("epoll_wait", 5, 0x7ffd3000, 16, (uint64_t)-1, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_str_eq(wait.operation, "epoll_wait");
    cr_assert_eq(wait.fd, 5);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
}

Test(decode_wait, epoll_pwait_with_timeout)
{
    struct hd_syscall syscall = call("epoll_pwait", 7, 0x7ffd3000, 16, 250, 0, 8);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_str_eq(wait.operation, "epoll_pwait");
    cr_assert_eq(wait.fd, 7);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_eq(wait.timeout.remaining_ns, 250000000LL);
}

Test(decode_wait, read_fd)
{
    struct hd_syscall syscall = call("read", 3, 0x7ffd4000, 4096, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_READ);
    cr_assert_str_eq(wait.operation, "read");
    cr_assert_eq(wait.fd, 3);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
}

Test(decode_wait, write_accept_connect)
{
    struct hd_syscall syscall = call("write", 1, 0x7ffd4000, 65536, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_WRITE);
    cr_assert_eq(wait.fd, 1);
    syscall = call("accept4", 9, 0, 0, 0, 0, 0);
    wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_ACCEPT);
    cr_assert_eq(wait.fd, 9);
    syscall = call("connect", 11, 0x7ffd4000, 16, 0, 0, 0);
    wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_CONNECT);
    cr_assert_eq(wait.fd, 11);
}

Test(decode_wait, wait4_pid)
{
    struct hd_syscall syscall = call("wait4", 4242, 0x7ffd4000, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_CHILD);
    cr_assert_str_eq(wait.operation, "wait4");
    cr_assert_eq(wait.child_selector, HD_CHILD_PID);
    cr_assert_eq(wait.child, 4242);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
}

Test(decode_wait, wait4_any)
{
    struct hd_syscall syscall = call("wait4", (uint64_t)-1, 0x7ffd4000, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_CHILD);
    cr_assert_eq(wait.child_selector, HD_CHILD_ANY);
}

Test(decode_wait, wait4_any_zero_extended)
{
    struct hd_syscall syscall = call("wait4", 0xffffffff, 0x7ffd4000, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.child_selector, HD_CHILD_ANY);
}

Test(decode_wait, wait4_own_group)
{
    struct hd_syscall syscall = call("wait4", 0, 0x7ffd4000, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_CHILD);
    cr_assert_eq(wait.child_selector, HD_CHILD_GROUP);
    cr_assert_eq(wait.child, 0);
}

Test(decode_wait, wait4_process_group)
{
    struct hd_syscall syscall = call("wait4", (uint64_t)-77, 0x7ffd4000, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_CHILD);
    cr_assert_eq(wait.child_selector, HD_CHILD_GROUP);
    cr_assert_eq(wait.child, 77);
}

Test(decode_wait, waitid_pid)
{
    struct hd_syscall syscall = call("waitid", 1 /* P_PID */, 4242, 0x7ffd4000, 4, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_CHILD);
    cr_assert_str_eq(wait.operation, "waitid");
    cr_assert_eq(wait.child_selector, HD_CHILD_PID);
    cr_assert_eq(wait.child, 4242);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
}

Test(decode_wait, waitid_other_idtypes)
{
    struct hd_syscall syscall = call("waitid", 0 /* P_ALL */, 0, 0x7ffd4000, 4, 0, 0);
    cr_assert_eq(decode(&syscall, NULL).child_selector, HD_CHILD_ANY);
    syscall = call("waitid", 2 /* P_PGID */, 300, 0x7ffd4000, 4, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.child_selector, HD_CHILD_GROUP);
    cr_assert_eq(wait.child, 300);
    syscall = call("waitid", 3 /* P_PIDFD */, 6, 0x7ffd4000, 4, 0, 0);
    wait = decode(&syscall, NULL);
    cr_assert_eq(wait.child_selector, HD_CHILD_PIDFD);
    cr_assert_eq(wait.child, 6);
    syscall = call("waitid", 1000, 6, 0x7ffd4000, 4, 0, 0);
    cr_assert_eq(decode(&syscall, NULL).child_selector, HD_CHILD_ANY);
}

Test(decode_wait, nanosleep)
{
    struct hd_syscall syscall = call("nanosleep", 0x7ffd8000, 0, 0, 0, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd8000, .pair = { 30, 0 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_SLEEP);
    cr_assert_str_eq(wait.operation, "nanosleep");
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_not(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 30000000000LL);
}

Test(decode_wait, clock_nanosleep_relative)
{
    struct hd_syscall syscall = call("clock_nanosleep", 1 /* CLOCK_MONOTONIC */, 0, 0x7ffd8000, 0, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd8000, .pair = { 1, 1 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_SLEEP);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_not(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 1000000001LL);
}

Test(decode_wait, clock_nanosleep_abstime_monotonic)
{
    struct hd_syscall syscall = call("clock_nanosleep", 1 /* CLOCK_MONOTONIC */, 1 /* TIMER_ABSTIME */, 0x7ffd8000,
                                     0, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd8000, .pair = { 1060, 0 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_SLEEP);
    cr_assert_str_eq(wait.operation, "clock_nanosleep");
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 60000000000LL);
}

Test(decode_wait, clock_nanosleep_abstime_realtime)
{
    struct hd_syscall syscall = call("clock_nanosleep", 0 /* CLOCK_REALTIME */, 1 /* TIMER_ABSTIME */, 0x7ffd8000,
                                     0, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd8000, .pair = { 1700000003, 0 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 3000000000LL);
}

Test(decode_wait, select_timeval)
{
    struct hd_syscall syscall = call("select", 4, 0x7ffd1000, 0, 0, 0x7ffd9000, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd9000, .pair = { 1, 500000 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_str_eq(wait.operation, "select");
    cr_assert_eq(wait.nfds, 4);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_not(wait.timeout.absolute);
    cr_assert_eq(wait.timeout.remaining_ns, 1500000000LL);
    cr_assert_eq(memory.asked_address, 0x7ffd9000ULL);
}

Test(decode_wait, select_forever)
{
    struct hd_syscall syscall = call("select", 4, 0x7ffd1000, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
}

Test(decode_wait, pselect6_timespec)
{
    struct hd_syscall syscall = call("pselect6", 4, 0x7ffd1000, 0, 0, 0x7ffd9000, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd9000, .pair = { 1, 500000 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_eq(wait.timeout.remaining_ns, 1000500000LL); /* nanoseconds, not microseconds */
}

Test(decode_wait, fcntl_setlkw_is_a_lock)
{
    struct hd_syscall syscall = call("fcntl", 3, 7 /* F_SETLKW */, 0x7ffda000, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_LOCK);
    cr_assert_str_eq(wait.operation, "fcntl");
    cr_assert_eq(wait.fd, 3);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
    syscall.args[1] = 38; /* F_OFD_SETLKW */
    cr_assert_eq(decode(&syscall, NULL).kind, HD_WAIT_LOCK);
}

Test(decode_wait, fcntl_getfl_is_other)
{
    struct hd_syscall syscall = call("fcntl", 3, 3 /* F_GETFL */, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_OTHER);
    cr_assert_str_eq(wait.operation, "fcntl");
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NOT_APPLICABLE);
    syscall.args[1] = 6; /* F_SETLK does not block */
    cr_assert_eq(decode(&syscall, NULL).kind, HD_WAIT_OTHER);
}

Test(decode_wait, flock)
{
    struct hd_syscall syscall = call("flock", 8, 2 /* LOCK_EX */, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_LOCK);
    cr_assert_eq(wait.fd, 8);
}

Test(decode_wait, signal_waits)
{
    struct hd_syscall syscall = call("pause", 0, 0, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_SIGNAL);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
    syscall = call("rt_sigtimedwait", 0x7ffd1000, 0, 0x7ffd2000, 8, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd2000, .pair = { 4, 0 } };
    wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_SIGNAL);
    cr_assert_eq(wait.timeout.remaining_ns, 4000000000LL);
}

/* rt_sigsuspend's mask and rt_sigtimedwait's set are read from the target: the signals that decide the wait */
Test(decode_wait, signal_sets_from_the_target)
{
    struct hd_syscall syscall = call("rt_sigsuspend", 0x7ffd3000, 8, 0, 0, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd3000, .pair = { 0x10000 /* SIGCHLD blocked */, 0 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.kind, HD_WAIT_SIGNAL);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
    cr_assert_eq(wait.signal_set_kind, HD_SIGNAL_SET_BLOCKED);
    cr_assert_eq(wait.signal_set, 0x10000u);
    /* a sigsetsize the kernel would refuse, unreadable memory: the set stays unknown */
    syscall = call("rt_sigsuspend", 0x7ffd3000, 128, 0, 0, 0, 0);
    cr_assert_eq(decode(&syscall, &memory).signal_set_kind, HD_SIGNAL_SET_UNKNOWN);
    memory.ok = false;
    syscall = call("rt_sigsuspend", 0x7ffd3000, 8, 0, 0, 0, 0);
    cr_assert_eq(decode(&syscall, &memory).signal_set_kind, HD_SIGNAL_SET_UNKNOWN);
    cr_assert_eq(decode(&syscall, NULL).signal_set_kind, HD_SIGNAL_SET_UNKNOWN);
    /* sigwait(): rt_sigtimedwait with no timeout, its set the signals it takes */
    syscall = call("rt_sigtimedwait", 0x7ffd4000, 0, 0, 8, 0, 0);
    memory = (struct fake_memory){ .ok = true, .address = 0x7ffd4000, .pair = { 0x14002, 0 } };
    wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE);
    cr_assert_eq(wait.signal_set_kind, HD_SIGNAL_SET_WANTED);
    cr_assert_eq(wait.signal_set, 0x14002u);
    /* pause: the thread's own mask, which the caller reads */
    syscall = call("pause", 0, 0, 0, 0, 0, 0);
    cr_assert_eq(decode(&syscall, &memory).signal_set_kind, HD_SIGNAL_SET_UNKNOWN);
}

Test(decode_wait, hostile_huge_tv_sec_saturates)
{
    struct hd_syscall syscall = call("nanosleep", 0x7ffd8000, 0, 0, 0, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd8000, .pair = { INT64_MAX, 999999999 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_eq(wait.timeout.remaining_ns, INT64_MAX);
    memory.pair[0] = INT64_MAX / 1000000000 + 1;
    memory.pair[1] = 0;
    wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.remaining_ns, INT64_MAX);
}

Test(decode_wait, hostile_huge_absolute_deadline_saturates)
{
    struct hd_syscall syscall = call("futex", 0x2000, FUTEX_WAIT_BITSET, 0, 0x7ffd6000, 0, 0xffffffff);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd6000, .pair = { INT64_MAX, 0 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert(wait.timeout.absolute);
    cr_assert_gt(wait.timeout.remaining_ns, INT64_MAX / 2);
}

/* Timeouts are read from the target's memory: every step of the arithmetic saturates. A hugely negative tv_sec
 * must stay negative (tv_sec * 1000000000 would wrap to a positive 1 s). */
Test(decode_wait, hostile_negative_tv_sec_does_not_wrap)
{
    struct hd_syscall syscall = call("nanosleep", 0x7ffd8000, 0, 0, 0, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd8000, .pair = { -INT64_MAX, 0 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_lt(wait.timeout.remaining_ns, 0, "remaining_ns = %" PRId64, wait.timeout.remaining_ns);
}

/* tv_sec == INT64_MAX / 1e9 plus a tv_nsec above 854775807 would overflow into a large negative timeout. */
Test(decode_wait, hostile_tv_nsec_at_the_limit_does_not_wrap)
{
    struct hd_syscall syscall = call("nanosleep", 0x7ffd8000, 0, 0, 0, 0, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd8000, .pair = { INT64_MAX / 1000000000, 999999999 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_gt(wait.timeout.remaining_ns, 0, "remaining_ns = %" PRId64, wait.timeout.remaining_ns);
}

/* select's struct timeval: tv_usec * 1000 saturates too. */
Test(decode_wait, hostile_tv_usec_does_not_wrap)
{
    struct hd_syscall syscall = call("select", 1, 0, 0, 0, 0x7ffd9000, 0);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd9000, .pair = { 0, INT64_MAX } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_gt(wait.timeout.remaining_ns, 0, "remaining_ns = %" PRId64, wait.timeout.remaining_ns);
}

/* An absolute deadline far in the past minus the clock reading must not wrap to a huge remaining time. */
Test(decode_wait, hostile_negative_absolute_deadline_does_not_wrap)
{
    struct hd_syscall syscall = call("futex", 0x2000, FUTEX_WAIT_BITSET, 0, 0x7ffd6000, 0, 0xffffffff);
    struct fake_memory memory = { .ok = true, .address = 0x7ffd6000, .pair = { -(INT64_MAX / 1000000000), 0 } };
    struct hd_wait wait = decode(&syscall, &memory);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert(wait.timeout.absolute);
    cr_assert_lt(wait.timeout.remaining_ns, 0, "remaining_ns = %" PRId64, wait.timeout.remaining_ns);
}

Test(decode_wait, not_in_a_syscall)
{
    struct hd_syscall syscall = call("futex", 0x1000, FUTEX_WAIT, 0, 0, 0, 0);
    syscall.state = HD_SYSCALL_NONE;
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_NONE);
    cr_assert_null(wait.operation);
    cr_assert_eq(wait.fd, -1);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NOT_APPLICABLE);
    syscall.state = HD_SYSCALL_RUNNING;
    cr_assert_eq(decode(&syscall, NULL).kind, HD_WAIT_NONE);
    syscall.state = HD_SYSCALL_UNREAD;
    cr_assert_eq(decode(&syscall, NULL).kind, HD_WAIT_NONE);
}

Test(decode_wait, unnamed_syscall)
{
    struct hd_syscall syscall = call(NULL, 0x1000, FUTEX_WAIT, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_OTHER);
    cr_assert_null(wait.operation);
    cr_assert_eq(wait.fd, -1);
}

Test(decode_wait, other_named_syscall)
{
    struct hd_syscall syscall = call("getpid", 0, 0, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_OTHER);
    cr_assert_str_eq(wait.operation, "getpid");
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NOT_APPLICABLE);
    cr_assert_eq(wait.fd, -1);
}

Test(decode_wait, vfork_is_other)
{
    struct hd_syscall syscall = call(probe_syscall_name(HD_ARCH_X86_64, 58), 0, 0, 0, 0, 0, 0);
    struct hd_wait wait = decode(&syscall, NULL);
    cr_assert_eq(wait.kind, HD_WAIT_OTHER);
    cr_assert_str_eq(wait.operation, "vfork");
}

/* After a stop (a debugger's, or hangdoc's own stack capture) a poll, a timed futex wait or a sleep resumes as
 * restart_syscall. Its wait channel names the call; its argument registers are still that call's: an untimed poll
 * stays untimed (a second diagnosis must see what the first saw), a futex stays the futex it was. */
Test(decode_wait, restart_syscall_is_decoded_as_the_call_it_resumes)
{
    /* poll(fds, 2, -1) interrupted: untimed, two fds */
    struct hd_syscall poll_call = call("restart_syscall", 0x1000, 2, 0xffffffff, 0, 0, 0);
    struct hd_wait wait = decode_in(&poll_call, "do_poll.constprop.0", NULL);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_eq(wait.nfds, 2);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_NONE, "poll without timeout stays without timeout");
    cr_assert_str_eq(wait.operation, "poll");
    /* poll(fds, 1, 5000): a timeout whose remaining time the restart lost */
    poll_call.args[1] = 1;
    poll_call.args[2] = 5000;
    wait = decode_in(&poll_call, "poll_schedule_timeout.constprop.0", NULL);
    cr_assert_eq(wait.kind, HD_WAIT_POLL);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_UNREADABLE);
    /* futex(0x5000, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 2, abs deadline): the absolute deadline still holds */
    struct fake_memory memory = { .ok = true, .address = 0x7000, .pair = { 1005, 0 } };
    struct hd_syscall futex_call = call("restart_syscall", 0x5000, 9 | 128, 2, 0x7000, 0, 0xffffffff);
    wait = decode_in(&futex_call, "futex_wait_queue", &memory);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_eq(wait.address, 0x5000);
    cr_assert_eq(wait.expected, 2);
    cr_assert(wait.futex_private);
    cr_assert_str_eq(wait.operation, "FUTEX_WAIT_BITSET");
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_FINITE);
    cr_assert_eq(wait.timeout.remaining_ns, 5LL * 1000000000);
    /* FUTEX_WAIT's relative timeout: the time already slept is unknown */
    futex_call.args[1] = 0 | 128;
    wait = decode_in(&futex_call, "futex_do_wait", &memory);
    cr_assert_eq(wait.kind, HD_WAIT_FUTEX);
    cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_UNREADABLE);
    /* a sleep (nanosleep and clock_nanosleep keep their arguments in different registers), and a restart whose wait
     * channel is unknown or unexpected: a sleep of unknown length */
    static const char *const sleeps[] = { "hrtimer_nanosleep", "do_nanosleep", "", "do_select", NULL };
    for (size_t i = 0; i < 5; i++) {
        struct hd_syscall sleep_call = call("restart_syscall", 0x1000, 0, 0, 0, 0, 0);
        wait = decode_in(&sleep_call, sleeps[i], NULL);
        cr_assert_eq(wait.kind, HD_WAIT_SLEEP, "wchan '%s'", sleeps[i] ? sleeps[i] : "(null)");
        cr_assert_eq(wait.timeout.kind, HD_TIMEOUT_UNREADABLE);
        cr_assert_str_eq(wait.operation, "restart_syscall");
    }
}
