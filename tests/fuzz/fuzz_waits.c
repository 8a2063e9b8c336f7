/* libFuzzer harness: the decoders of what a blocked thread waits for: a system call's arguments and the target
 * memory they point at (probe/syscalls.h), and the bytes around a futex, read as a glibc mutex, rwlock or join,
 * and the bytes before it, searched for a joined thread's descriptor (probe/locks.h). All of it comes from the
 * target: hostile. */
#include "locks.h"
#include "syscalls.h"

#include <stdint.h>
#include <string.h>

static volatile uint64_t sink;

struct memory {
    const uint8_t *bytes;
    size_t size;
};

/* the target's memory: the fuzzer's bytes, at any address */
static bool read_memory(void *context, uint64_t address, void *buffer, size_t size)
{
    const struct memory *memory = context;
    (void)address;
    if (size > memory->size)
        return false;
    memcpy(buffer, memory->bytes, size);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = { "futex", "poll", "ppoll", "select", "pselect6", "epoll_wait", "epoll_pwait2",
                                         "read", "recvmmsg", "wait4", "waitid", "nanosleep", "clock_nanosleep",
                                         "rt_sigtimedwait", "flock", "fcntl", "restart_syscall", "futex_waitv" };
    static const char *const wchans[] = { "", "do_poll", "futex_wait_queue", "hrtimer_nanosleep" };
    if (size < 2 + 6 * 8)
        return 0;
    struct hd_syscall syscall = { .state = HD_SYSCALL_IN, .name = names[data[0] % (sizeof names / sizeof names[0])] };
    memcpy(syscall.args, data + 2, sizeof syscall.args);
    struct memory memory = { data + 2 + 6 * 8, size - 2 - 6 * 8 };
    struct probe_clocks clocks = { .monotonic_ns = 1000000000LL, .realtime_ns = 1700000000000000000LL };
    struct hd_wait wait;
    probe_decode_wait(&syscall, wchans[data[1] % 4], read_memory, &memory, &clocks, &wait);
    sink += (uint64_t)wait.kind + (uint64_t)wait.timeout.remaining_ns;

    struct probe_lock_window window = { .address = syscall.args[0], .before_read = data[1] & 1,
                                        .after_read = data[1] & 2 };
    size_t take = memory.size < sizeof window.bytes ? memory.size : sizeof window.bytes;
    memcpy(window.bytes, memory.bytes, take);
    pid_t tids[3] = { (pid_t)syscall.args[2], 1, 2 };
    struct hd_lock lock;
    probe_decode_lock(&window, &wait, tids, 3, &lock);
    sink += (uint64_t)lock.kind + (uint64_t)lock.owner_tid;
    /* the bytes before the word, searched for a thread's descriptor (glibc 2.43's join) */
    sink += (uint64_t)probe_decode_join_descriptor(memory.bytes, memory.size, syscall.args[0], tids, 3);
    return 0;
}
