/* What glibc object sits at a futex address (probe/locks.h), over hand-built windows of target memory.
 *
 * A window holds PROBE_LOCK_BEFORE bytes before the futex address and PROBE_LOCK_AFTER bytes from it. The layouts
 * are glibc's 64-bit ones: a mutex starts at the futex address (__lock 0, __count 4, __owner 8, __nusers 12,
 * __kind 16); a rwlock starts 8 bytes (waiters on __wrphase_futex) or 12 bytes (waiters on __writers_futex) before
 * it (__readers 0, __writers 4, __wrphase_futex 8, __writers_futex 12, __pad3 16, __pad4 20, __cur_writer 24,
 * __shared 28, __flags 48).
 */
#include "locks.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#define ADDRESS 0x55d2a0c4e040ull

#define WAITERS 0x80000000u
#define OWNER_DIED 0x40000000u

static struct probe_lock_window empty_window(void)
{
    return (struct probe_lock_window){ .address = ADDRESS, .before_read = true, .after_read = true };
}

/* Stores a 32-bit word at `offset` from the futex address (negative: before it). */
static void put(struct probe_lock_window *window, int offset, uint32_t value)
{
    cr_assert(offset >= -PROBE_LOCK_BEFORE && offset + 4 <= PROBE_LOCK_AFTER, "offset %d outside the window", offset);
    memcpy(window->bytes + PROBE_LOCK_BEFORE + offset, &value, sizeof value);
}

/* A pthread_mutex_t at the futex address. */
static struct probe_lock_window mutex_window(uint32_t lock, int32_t owner, uint32_t nusers, uint32_t kind)
{
    struct probe_lock_window window = empty_window();
    put(&window, 0, lock);
    put(&window, 4, 0); /* __count */
    put(&window, 8, (uint32_t)owner);
    put(&window, 12, nusers);
    put(&window, 16, kind);
    return window;
}

static struct hd_wait futex_wait(const char *operation, uint32_t expected)
{
    return (struct hd_wait){
        .kind = HD_WAIT_FUTEX, .operation = operation, .address = ADDRESS, .expected = expected, .fd = -1,
        .futex_private = true, .timeout = { .kind = HD_TIMEOUT_NONE },
    };
}

/* The tids of the waiter's process: none of them collides with the values used below. */
static const pid_t tids[] = { 4242, 4243, 4250 };
#define NTIDS (sizeof tids / sizeof tids[0])

static struct hd_lock decode(const struct probe_lock_window *window, const struct hd_wait *wait)
{
    struct hd_lock lock;
    memset(&lock, 0xa5, sizeof lock); /* every field must be written */
    probe_decode_lock(window, wait, tids, NTIDS, &lock);
    return lock;
}

static void assert_unknown(const struct hd_lock *lock)
{
    cr_assert_eq(lock->kind, HD_LOCK_UNKNOWN, "decoded as %s", hd_lock_kind_name(lock->kind));
    cr_assert_eq(lock->owner_tid, 0);
    cr_assert_not_null(lock->why_unknown);
}

/* ---- mutexes -------------------------------------------------------------------------------------------------- */

Test(mutex, normal_locked_with_waiters)
{
    struct probe_lock_window window = mutex_window(2, 4242, 1, 0);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_MUTEX);
    cr_assert_str_eq(lock.type, "normal");
    cr_assert_eq(lock.owner_tid, 4242);
    cr_assert_eq(lock.object_address, ADDRESS);
    cr_assert(lock.word_read);
    cr_assert_eq(lock.word, 2u);
    cr_assert_not(lock.robust);
    cr_assert_not(lock.priority_inheritance);
    cr_assert_not(lock.process_shared);
    cr_assert_eq(lock.owner_whereabouts, HD_OWNER_UNKNOWN, "resolving the owner is not the decoder's job");
    cr_assert_eq(lock.owner_pid, 0);
    cr_assert_null(lock.why_unknown);
}

Test(mutex, recursive_error_checking_and_adaptive)
{
    static const char *const names[] = { "normal", "recursive", "error-checking", "adaptive" };
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    for (uint32_t kind = 0; kind < 4; kind++) {
        struct probe_lock_window window = mutex_window(2, 4242, 1, kind);
        struct hd_lock lock = decode(&window, &wait);
        cr_assert_eq(lock.kind, HD_LOCK_MUTEX, "kind %u", kind);
        cr_assert_str_eq(lock.type, names[kind]);
        cr_assert_eq(lock.owner_tid, 4242);
    }
}

Test(mutex, elision_bits_are_known)
{
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    struct probe_lock_window window = mutex_window(2, 4242, 1, 256 | 3); /* PTHREAD_MUTEX_ADAPTIVE_NP | ELISION */
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_MUTEX);
    cr_assert_str_eq(lock.type, "adaptive");
}

Test(mutex, lock_word_zero_is_no_lock)
{
    struct probe_lock_window window = mutex_window(0, 4242, 1, 0);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 0);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
    cr_assert(strstr(lock.why_unknown, "0"), "why_unknown: %s", lock.why_unknown);
    cr_assert(lock.word_read);
    cr_assert_eq(lock.word, 0u);
}

Test(mutex, owner_zero_is_no_owner)
{
    struct probe_lock_window window = mutex_window(2, 0, 1, 0);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
    cr_assert(strstr(lock.why_unknown, "no owner recorded"), "why_unknown: %s", lock.why_unknown);
    cr_assert(lock.word_read);
    cr_assert_eq(lock.word, 2u);
}

Test(mutex, implausible_owner_or_no_users)
{
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    struct probe_lock_window negative = mutex_window(2, -5, 1, 0);
    struct hd_lock lock = decode(&negative, &wait);
    assert_unknown(&lock);
    struct probe_lock_window huge = mutex_window(2, 4194305, 1, 0); /* above PID_MAX_LIMIT */
    lock = decode(&huge, &wait);
    assert_unknown(&lock);
    struct probe_lock_window nobody = mutex_window(2, 4242, 0, 0); /* a locked mutex has __nusers >= 1 */
    lock = decode(&nobody, &wait);
    assert_unknown(&lock);
}

Test(mutex, unknown_kind_bit)
{
    struct probe_lock_window window = mutex_window(2, 4242, 1, 0x1000);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
}

Test(mutex, lock_word_other_than_1_or_2)
{
    struct probe_lock_window window = mutex_window(3, 4242, 1, 0);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 3);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
}

Test(mutex, normal_waiter_expecting_1_is_not_a_mutex_waiter)
{
    /* glibc's lll_lock always sleeps expecting 2 */
    struct probe_lock_window window = mutex_window(2, 4242, 1, 0);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 1);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
}

Test(mutex, bitset_wait_skips_the_expected_check)
{
    /* only FUTEX_WAIT is glibc's lll_lock; the expected value of other operations is not checked */
    struct probe_lock_window window = mutex_window(1, 4242, 1, 0);
    struct hd_wait wait = futex_wait("FUTEX_WAIT_BITSET", 1);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_MUTEX);
    cr_assert_eq(lock.owner_tid, 4242);
}

Test(mutex, robust)
{
    struct probe_lock_window window = mutex_window(4242 | WAITERS, 4242, 1, 16);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 4242 | WAITERS);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_MUTEX);
    cr_assert(lock.robust);
    cr_assert_not(lock.priority_inheritance);
    cr_assert_str_eq(lock.type, "normal");
    cr_assert_eq(lock.owner_tid, 4242);
    cr_assert_eq(lock.word, 4242 | WAITERS);
}

Test(mutex, robust_inconsistent_owner_comes_from_the_lock_word)
{
    struct probe_lock_window window = mutex_window(4242 | WAITERS | OWNER_DIED, 0x7fffffff, 1, 16);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 4242 | WAITERS | OWNER_DIED);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_MUTEX);
    cr_assert(lock.robust);
    cr_assert_eq(lock.owner_tid, 4242);
}

Test(mutex, robust_owner_field_disagreeing_with_the_lock_word)
{
    struct probe_lock_window window = mutex_window(4242 | WAITERS, 5000, 1, 16);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 4242 | WAITERS);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
}

Test(mutex, robust_without_a_tid_in_the_lock_word)
{
    struct probe_lock_window window = mutex_window(WAITERS, 4242, 1, 16);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", WAITERS);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
}

Test(mutex, priority_inheritance)
{
    struct probe_lock_window window = mutex_window(4242 | WAITERS, 4242, 1, 32);
    struct hd_wait wait = futex_wait("FUTEX_LOCK_PI", 0);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_MUTEX);
    cr_assert(lock.priority_inheritance);
    cr_assert_not(lock.robust);
    cr_assert_eq(lock.owner_tid, 4242);
}

Test(mutex, process_shared)
{
    struct probe_lock_window window = mutex_window(2, 4242, 1, 128);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_MUTEX);
    cr_assert(lock.process_shared);
    cr_assert_str_eq(lock.type, "normal");
    cr_assert_eq(lock.owner_tid, 4242);
}

Test(mutex, contended_mutex_in_a_process_with_a_thread_whose_tid_is_2)
{
    /* A contended normal mutex has word 2 and its waiter expects 2: in a process that has a thread with tid 2
     * (the first thread started by PID 1 of a container, say) it must still read as a mutex, not a join of 2. */
    static const pid_t container_tids[] = { 1, 2, 3 };
    struct probe_lock_window window = mutex_window(2, 3, 1, 0);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    struct hd_lock lock;
    probe_decode_lock(&window, &wait, container_tids, 3, &lock);
    cr_expect_eq(lock.kind, HD_LOCK_MUTEX, "decoded as %s", hd_lock_kind_name(lock.kind));
    cr_expect_eq(lock.owner_tid, 3);
}

/* ---- rwlocks -------------------------------------------------------------------------------------------------- */

/* A write-locked pthread_rwlock_t whose waiter sleeps at base + futex_offset (8: __wrphase_futex, 12:
 * __writers_futex). */
static struct probe_lock_window rwlock_window(int futex_offset, uint32_t writer)
{
    struct probe_lock_window window = empty_window();
    int base = -futex_offset;
    put(&window, base + 0, 2 | 1);  /* __readers: PTHREAD_RWLOCK_WRLOCKED | WRPHASE */
    put(&window, base + 4, 1);      /* __writers */
    put(&window, base + 8, 3);      /* __wrphase_futex: 1 | PTHREAD_RWLOCK_FUTEX_USED */
    put(&window, base + 12, 3);     /* __writers_futex */
    put(&window, base + 16, 0);     /* __pad3 */
    put(&window, base + 20, 0);     /* __pad4 */
    put(&window, base + 24, writer); /* __cur_writer */
    put(&window, base + 28, 0);     /* __shared */
    put(&window, base + 48, 0);     /* __flags */
    return window;
}

Test(rwlock, write_locked_waiter_on_wrphase_futex)
{
    struct probe_lock_window window = rwlock_window(8, 777);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 3);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_RWLOCK, "decoded as %s", hd_lock_kind_name(lock.kind));
    cr_assert_eq(lock.owner_tid, 777);
    cr_assert_eq(lock.object_address, ADDRESS - 8);
    cr_assert_str_eq(lock.type, "writer");
    cr_assert(lock.word_read);
    cr_assert_eq(lock.word, 3u);
    cr_assert_not(lock.process_shared);
    cr_assert_null(lock.why_unknown);
}

Test(rwlock, write_locked_waiter_on_writers_futex)
{
    struct probe_lock_window window = rwlock_window(12, 777);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 3);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_RWLOCK, "decoded as %s", hd_lock_kind_name(lock.kind));
    cr_assert_eq(lock.owner_tid, 777);
    cr_assert_eq(lock.object_address, ADDRESS - 12);
}

Test(rwlock, a_waiter_that_expects_anything_else_is_not_an_rwlocks_waiter)
{
    /* a condition variable's waiter (CPython's GIL: its cond's words next to its mutex's) expects its group's
     * signal count; the bytes around may still look like a write-locked rwlock whose writer is tid 1 */
    struct probe_lock_window window = rwlock_window(12, 1);
    struct hd_wait wait = futex_wait("FUTEX_WAIT_BITSET", 0);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_UNKNOWN, "decoded as %s", hd_lock_kind_name(lock.kind));
    cr_assert_eq(lock.owner_tid, 0);
}

Test(rwlock, process_shared)
{
    struct probe_lock_window window = rwlock_window(8, 777);
    put(&window, -8 + 28, 1);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 3);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_eq(lock.kind, HD_LOCK_RWLOCK);
    cr_assert(lock.process_shared);
}

Test(rwlock, nonzero_pad_is_not_a_rwlock)
{
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 3);
    struct probe_lock_window pad3 = rwlock_window(8, 777);
    put(&pad3, -8 + 16, 1);
    struct hd_lock lock = decode(&pad3, &wait);
    assert_unknown(&lock);
    struct probe_lock_window pad4 = rwlock_window(12, 777);
    put(&pad4, -12 + 20, 0x10);
    lock = decode(&pad4, &wait);
    assert_unknown(&lock);
}

Test(rwlock, not_write_locked)
{
    struct probe_lock_window window = rwlock_window(8, 777);
    put(&window, -8, 1 << 3); /* one reader, no writer */
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 3);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
}

Test(rwlock, implausible_writer_or_flags)
{
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 3);
    struct probe_lock_window writer = rwlock_window(8, 0);
    struct hd_lock lock = decode(&writer, &wait);
    assert_unknown(&lock);
    struct probe_lock_window flags = rwlock_window(8, 777);
    put(&flags, -8 + 48, 7);
    lock = decode(&flags, &wait);
    assert_unknown(&lock);
}

Test(rwlock, bytes_before_unread_is_not_a_rwlock)
{
    struct probe_lock_window window = rwlock_window(8, 777);
    window.before_read = false;
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 3);
    struct hd_lock lock = decode(&window, &wait);
    cr_assert_neq(lock.kind, HD_LOCK_RWLOCK);
    assert_unknown(&lock);
    cr_assert(lock.word_read, "the word itself was read");
    cr_assert_eq(lock.word, 3u);
}

/* ---- joins, unreadable words, objects without owner ----------------------------------------------------------- */

Test(join, waits_on_the_joined_threads_tid_word)
{
    static const pid_t threads[] = { 500, 555, 560 };
    struct probe_lock_window window = empty_window();
    put(&window, 0, 555);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 555);
    wait.futex_private = false; /* the kernel's CLONE_CHILD_CLEARTID wake is shared */
    struct hd_lock lock;
    probe_decode_lock(&window, &wait, threads, 3, &lock);
    cr_assert_eq(lock.kind, HD_LOCK_JOIN);
    cr_assert_eq(lock.owner_tid, 555);
    cr_assert_eq(lock.object_address, ADDRESS);
    cr_assert_str_eq(lock.type, "join");
    cr_assert(lock.word_read);
    cr_assert_eq(lock.word, 555u);
}

Test(join, needs_the_tid_in_the_process)
{
    static const pid_t threads[] = { 500, 560 };
    struct probe_lock_window window = empty_window();
    put(&window, 0, 555);
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 555);
    struct hd_lock lock;
    probe_decode_lock(&window, &wait, threads, 2, &lock);
    cr_assert_neq(lock.kind, HD_LOCK_JOIN);
}

Test(join, needs_the_word_to_still_hold_the_tid)
{
    static const pid_t threads[] = { 500, 555 };
    struct probe_lock_window window = empty_window();
    put(&window, 0, 0); /* the thread exited meanwhile: the kernel cleared the word */
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 555);
    struct hd_lock lock;
    probe_decode_lock(&window, &wait, threads, 2, &lock);
    cr_assert_eq(lock.kind, HD_LOCK_UNKNOWN);
}

/* glibc 2.43's join: the word lies inside the joined thread's descriptor, which starts with its own address twice
 * (tcbhead_t's tcb and self) and holds the tid at PROBE_DESCRIPTOR_TID. `before` ends at the futex address. */
#define DESCRIPTOR_STATE 0x628
static uint8_t descriptor_bytes[PROBE_DESCRIPTOR_SEARCH];

static uint64_t put_descriptor(uint64_t address, uint64_t descriptor, int32_t tid)
{
    memset(descriptor_bytes, 0x5a, sizeof descriptor_bytes);
    uint64_t start = address - sizeof descriptor_bytes;
    memcpy(descriptor_bytes + (descriptor - start), &descriptor, 8);
    memcpy(descriptor_bytes + (descriptor - start) + 16, &descriptor, 8);
    if (descriptor - start + PROBE_DESCRIPTOR_TID + 4 <= sizeof descriptor_bytes)
        memcpy(descriptor_bytes + (descriptor - start) + PROBE_DESCRIPTOR_TID, &tid, 4);
    return start;
}

Test(join_descriptor, a_state_word_in_a_threads_descriptor_names_the_thread)
{
    static const pid_t threads[] = { 500, 555, 560 };
    uint64_t address = 0x7f5b69d96ce8ull;
    put_descriptor(address, address - DESCRIPTOR_STATE, 555);
    cr_assert_eq(probe_decode_join_descriptor(descriptor_bytes, sizeof descriptor_bytes, address, threads, 3), 555);
    /* fewer bytes read: the descriptor's start still among them */
    size_t tail = DESCRIPTOR_STATE + 8;
    cr_assert_eq(probe_decode_join_descriptor(descriptor_bytes + sizeof descriptor_bytes - tail, tail, address,
                                              threads, 3), 555);
}

Test(join_descriptor, the_tid_must_be_a_thread_of_the_process)
{
    static const pid_t threads[] = { 500, 560 };
    uint64_t address = 0x7f5b69d96ce8ull;
    put_descriptor(address, address - DESCRIPTOR_STATE, 555);
    cr_assert_eq(probe_decode_join_descriptor(descriptor_bytes, sizeof descriptor_bytes, address, threads, 2), 0);
    put_descriptor(address, address - DESCRIPTOR_STATE, 0); /* the thread is gone: the kernel cleared its tid */
    cr_assert_eq(probe_decode_join_descriptor(descriptor_bytes, sizeof descriptor_bytes, address, threads, 2), 0);
}

Test(join_descriptor, a_word_before_the_tid_or_without_a_descriptor_is_no_join)
{
    static const pid_t threads[] = { 500, 555 };
    uint64_t address = 0x7f5b69d96ce8ull;
    put_descriptor(address, address - 0x100, 555); /* a descriptor too close: the word is not past its tid */
    cr_assert_eq(probe_decode_join_descriptor(descriptor_bytes, sizeof descriptor_bytes, address, threads, 2), 0);
    memset(descriptor_bytes, 0, sizeof descriptor_bytes); /* no self-pointing words at all */
    cr_assert_eq(probe_decode_join_descriptor(descriptor_bytes, sizeof descriptor_bytes, address, threads, 2), 0);
    /* an address below the bytes said to precede it, and nothing read */
    cr_assert_eq(probe_decode_join_descriptor(descriptor_bytes, sizeof descriptor_bytes, 64, threads, 2), 0);
    cr_assert_eq(probe_decode_join_descriptor(descriptor_bytes, 0, address, threads, 2), 0);
}

Test(unknown, word_unreadable)
{
    struct probe_lock_window window = mutex_window(2, 4242, 1, 0);
    window.after_read = false;
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
    cr_assert(strstr(lock.why_unknown, "could not be read"), "why_unknown: %s", lock.why_unknown);
    cr_assert_not(lock.word_read);
}

Test(unknown, nothing_read_at_all)
{
    struct probe_lock_window window = { .address = ADDRESS };
    struct hd_wait wait = futex_wait("FUTEX_WAIT", 2);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
    cr_assert(strstr(lock.why_unknown, "could not be read"), "why_unknown: %s", lock.why_unknown);
}

Test(unknown, condition_variable)
{
    /* glibc 2.34+ pthread_cond_t: a waiter sleeps on __g_signals[0] at offset 40 */
    struct probe_lock_window window = empty_window();
    put(&window, -16, 0); /* __g_size[0] */
    put(&window, -12, 0); /* __g_size[1] */
    put(&window, -8, 4);  /* __g1_orig_size */
    put(&window, -4, 8);  /* __wrefs: one waiter */
    put(&window, 0, 2);   /* __g_signals[0] */
    put(&window, 4, 0);   /* __g_signals[1] */
    put(&window, 8, 0x9e3779b9);
    put(&window, 12, 0x7f3a);
    put(&window, 16, 0xdeadbeef);
    struct hd_wait wait = futex_wait("FUTEX_WAIT_BITSET", 2);
    struct hd_lock lock = decode(&window, &wait);
    assert_unknown(&lock);
    cr_assert(strstr(lock.why_unknown, "no owner recorded"), "why_unknown: %s", lock.why_unknown);
    cr_assert(lock.word_read);
    cr_assert_eq(lock.word, 2u);
}

Test(unknown, pseudo_random_windows_never_yield_an_implausible_owner)
{
    /* Whatever the bytes, a decoded owner is a plausible tid and a decoded kind comes with its type. */
    uint64_t state = 0x853c49e6748fea9bull;
    for (int round = 0; round < 20000; round++) {
        struct probe_lock_window window = empty_window();
        for (size_t i = 0; i < sizeof window.bytes; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            uint8_t byte = (uint8_t)(state >> 56);
            /* mostly small values so that some windows validate */
            window.bytes[i] = (state >> 40) & 1 ? byte : byte & 3;
        }
        uint32_t word;
        memcpy(&word, window.bytes + PROBE_LOCK_BEFORE, sizeof word);
        struct hd_wait wait = futex_wait(round & 1 ? "FUTEX_WAIT" : "FUTEX_LOCK_PI", word);
        struct hd_lock lock = decode(&window, &wait);
        cr_assert(lock.word_read);
        cr_assert_eq(lock.word, word);
        if (lock.kind == HD_LOCK_UNKNOWN) {
            cr_assert_not_null(lock.why_unknown);
            cr_assert_eq(lock.owner_tid, 0);
        } else {
            cr_assert_not_null(lock.type);
            cr_assert(lock.owner_tid > 0 && lock.owner_tid <= 4194304, "owner %d", (int)lock.owner_tid);
        }
    }
}
