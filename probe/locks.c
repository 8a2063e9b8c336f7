/* Lock decoding and owner resolution (locks.h). */
#include "locks.h"

#include "memory.h"
#include "procfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* linux/futex.h */
#define FUTEX_WAITERS 0x80000000u
#define FUTEX_OWNER_DIED 0x40000000u
#define FUTEX_TID_MASK 0x3fffffffu

/* glibc's mutex kind bits (nptl/pthreadP.h) */
enum {
    MUTEX_KIND_MASK = 3,
    MUTEX_ROBUST = 16,
    MUTEX_PRIO_INHERIT = 32,
    MUTEX_PRIO_PROTECT = 64,
    MUTEX_PSHARED = 128,
    MUTEX_ELISION = 256,
    MUTEX_NO_ELISION = 512,
    MUTEX_KNOWN_BITS = MUTEX_KIND_MASK | MUTEX_ROBUST | MUTEX_PRIO_INHERIT | MUTEX_PRIO_PROTECT | MUTEX_PSHARED |
                       MUTEX_ELISION | MUTEX_NO_ELISION,
};
/* the __owner of a robust mutex whose owner died, before and after it was declared unrecoverable */
#define MUTEX_OWNER_INCONSISTENT 0x7fffffff
#define MUTEX_OWNER_NOT_RECOVERABLE 0x7ffffffe

/* glibc's rwlock __readers bits (nptl/pthread_rwlock_common.c) */
enum { RWLOCK_WRLOCKED = 2 };

/* Offsets in the 64-bit layouts */
enum {
    MUTEX_LOCK = 0, MUTEX_COUNT = 4, MUTEX_OWNER = 8, MUTEX_NUSERS = 12, MUTEX_KIND = 16,
    RWLOCK_READERS = 0, RWLOCK_WRPHASE_FUTEX = 8, RWLOCK_WRITERS_FUTEX = 12, RWLOCK_PAD3 = 16, RWLOCK_PAD4 = 20,
    RWLOCK_CUR_WRITER = 24, RWLOCK_SHARED = 28, RWLOCK_FLAGS = 48, RWLOCK_SIZE = 56,
};

/* A plausible tid: positive and below the kernel's PID_MAX_LIMIT (4 M). */
static bool plausible_tid(int32_t tid)
{
    return tid > 0 && tid <= 4194304;
}

/* The 32-bit word at `offset` from the futex address (negative: before it), if it was read. */
static bool word_at(const struct probe_lock_window *window, int offset, uint32_t *value)
{
    if (offset < -PROBE_LOCK_BEFORE || offset + 4 > PROBE_LOCK_AFTER)
        return false;
    if (offset < 0 ? !window->before_read : !window->after_read)
        return false;
    if (offset < 0 && offset + 4 > 0 && !window->after_read)
        return false;
    memcpy(value, window->bytes + PROBE_LOCK_BEFORE + offset, sizeof *value);
    return true;
}

static const char *mutex_type_name(uint32_t kind)
{
    static const char *const names[] = { "normal", "recursive", "error-checking", "adaptive" };
    return names[kind & MUTEX_KIND_MASK];
}

static bool decode_mutex(const struct probe_lock_window *window, const struct hd_wait *wait, struct hd_lock *out)
{
    uint32_t lock, owner_word, kind, nusers;
    if (!word_at(window, MUTEX_LOCK, &lock) || !word_at(window, MUTEX_OWNER, &owner_word) ||
        !word_at(window, MUTEX_KIND, &kind) || !word_at(window, MUTEX_NUSERS, &nusers))
        return false;
    if (kind & ~(uint32_t)MUTEX_KNOWN_BITS)
        return false;
    int32_t owner = (int32_t)owner_word;
    bool robust = kind & MUTEX_ROBUST, pi = kind & MUTEX_PRIO_INHERIT;
    bool owner_died = owner == MUTEX_OWNER_INCONSISTENT || owner == MUTEX_OWNER_NOT_RECOVERABLE;
    if (robust || pi) {
        /* the lock word holds the owner's tid, with FUTEX_WAITERS / FUTEX_OWNER_DIED on top */
        int32_t word_tid = (int32_t)(lock & FUTEX_TID_MASK);
        if (!plausible_tid(word_tid))
            return false;
        if (!owner_died && owner != word_tid && owner != 0)
            return false;
        owner = word_tid;
    } else {
        /* a normal lock word is 1 (locked) or 2 (locked, with waiters); the waiter slept expecting 2 */
        if ((lock != 1 && lock != 2) || !plausible_tid(owner) || nusers == 0)
            return false;
        if (strcmp(wait->operation ? wait->operation : "", "FUTEX_WAIT") == 0 && wait->expected != 2)
            return false;
    }
    *out = (struct hd_lock){
        .kind = HD_LOCK_MUTEX,
        .object_address = window->address,
        .type = mutex_type_name(kind),
        .robust = robust,
        .priority_inheritance = pi,
        .process_shared = kind & MUTEX_PSHARED,
        .word_read = true,
        .word = lock,
        .owner_tid = owner,
    };
    return true;
}

/* glibc's waiters of a write-locked rwlock expect 1 | PTHREAD_RWLOCK_FUTEX_USED in the word they sleep on
 * (nptl/pthread_rwlock_common.c) */
enum { RWLOCK_WAITER_EXPECTS = 3 };

/* A waiter of a write-locked rwlock sleeps on __wrphase_futex (readers, and writers waiting for readers) or on
 * __writers_futex (writers waiting for a writer), expecting RWLOCK_WAITER_EXPECTS: a condition variable's waiter,
 * whose neighbouring words can look like an rwlock's, expects its group's signal count (0 mostly), and is not taken
 * for one (its "writer" read as tid 1, init, would make an unrelated process the owner). */
static bool decode_rwlock_at(const struct probe_lock_window *window, const struct hd_wait *wait, int futex_offset,
                             struct hd_lock *out)
{
    if (wait->expected != RWLOCK_WAITER_EXPECTS)
        return false;
    int base = -futex_offset;
    uint32_t readers, pad3, pad4, writer, shared, flags, futex_word;
    if (!word_at(window, base + RWLOCK_READERS, &readers) || !word_at(window, base + RWLOCK_PAD3, &pad3) ||
        !word_at(window, base + RWLOCK_PAD4, &pad4) || !word_at(window, base + RWLOCK_CUR_WRITER, &writer) ||
        !word_at(window, base + RWLOCK_SHARED, &shared) || !word_at(window, base + RWLOCK_FLAGS, &flags) ||
        !word_at(window, 0, &futex_word))
        return false;
    if (pad3 != 0 || pad4 != 0 || shared > 1 || flags > 2 || !(readers & RWLOCK_WRLOCKED) ||
        !plausible_tid((int32_t)writer))
        return false;
    *out = (struct hd_lock){
        .kind = HD_LOCK_RWLOCK,
        .object_address = window->address - (uint64_t)futex_offset,
        .type = "writer",
        .process_shared = shared,
        .word_read = true,
        .word = futex_word,
        .owner_tid = (pid_t)writer,
    };
    return true;
}

void probe_decode_lock(const struct probe_lock_window *window, const struct hd_wait *wait,
                       const pid_t *same_process_tids, size_t ntids, struct hd_lock *out)
{
    *out = (struct hd_lock){ .kind = HD_LOCK_UNKNOWN };
    uint32_t word;
    if (!word_at(window, 0, &word)) {
        out->why_unknown = "the futex word could not be read";
        return;
    }
    out->word_read = true;
    out->word = word;
    if (decode_mutex(window, wait, out))
        return;
    if (decode_rwlock_at(window, wait, RWLOCK_WRPHASE_FUTEX, out) ||
        decode_rwlock_at(window, wait, RWLOCK_WRITERS_FUTEX, out))
        return;
    /* pthread_join() sleeps on the joined thread's tid word, expecting that tid, with a shared futex (the kernel's
     * CLONE_CHILD_CLEARTID wake is not private). Tried after the locks: a mutex word of 2 must not read as a join
     * of thread 2. */
    for (size_t i = 0; i < ntids && !wait->futex_private; i++)
        if ((uint32_t)same_process_tids[i] == wait->expected && word == wait->expected) {
            *out = (struct hd_lock){ .kind = HD_LOCK_JOIN, .object_address = window->address, .type = "join",
                                     .word_read = true, .word = word, .owner_tid = same_process_tids[i] };
            return;
        }
    *out = (struct hd_lock){ .kind = HD_LOCK_UNKNOWN, .word_read = true, .word = word };
    out->why_unknown = word == 0 ? "the word is 0: no lock is held there"
                                 : "no owner recorded (a condition variable, semaphore, barrier or libc lock)";
}

/* musl's pthread_mutex_t (src/internal/pthread_impl.h): _m_type, then the lock word _m_lock (what waiters sleep on),
 * then _m_waiters. A normal mutex's lock word says only "taken" (EBUSY); an error-checking, recursive or robust
 * one's holds the owner's tid. A waiter sets the top bit before it sleeps, and sleeps on a private futex unless the
 * mutex is process-shared (type bit 128). Bits 4 (robust) and 8 (priority inheritance) are the rest of the type. */
enum { MUSL_MUTEX_TYPE = -4, MUSL_MUTEX_LOCK = 0, MUSL_MUTEX_WAITERS = 4 };
enum { MUSL_TYPE_KIND = 3, MUSL_TYPE_ROBUST = 4, MUSL_TYPE_PI = 8, MUSL_TYPE_SHARED = 128, MUSL_EBUSY = 16 };

static const char *musl_mutex_type_name(uint32_t type)
{
    static const char *const names[] = { "musl normal", "musl recursive", "musl error-checking", "musl ?" };
    return names[type & MUSL_TYPE_KIND];
}

bool probe_decode_musl_lock(const struct probe_lock_window *window, const struct hd_wait *wait, struct hd_lock *out)
{
    uint32_t type, lock, waiters;
    if (!word_at(window, MUSL_MUTEX_TYPE, &type) || !word_at(window, MUSL_MUTEX_LOCK, &lock) ||
        !word_at(window, MUSL_MUTEX_WAITERS, &waiters))
        return false;
    if ((type & ~(uint32_t)(MUSL_TYPE_KIND | MUSL_TYPE_ROBUST | MUSL_TYPE_PI | MUSL_TYPE_SHARED)) ||
        (type & MUSL_TYPE_KIND) == MUSL_TYPE_KIND || (type & MUSL_TYPE_PI))
        return false;
    /* the waiter slept expecting the lock word it set, with waiters counted, on the futex its mutex's type asks */
    if (!(lock & FUTEX_WAITERS) || wait->expected != lock || waiters == 0 || waiters > 4194304 ||
        wait->futex_private != !(type & MUSL_TYPE_SHARED))
        return false;
    uint32_t held = lock & FUTEX_TID_MASK;
    bool records_owner = (type & (MUSL_TYPE_KIND | MUSL_TYPE_ROBUST)) != 0;
    if (!records_owner && held != MUSL_EBUSY)
        return false;
    if (records_owner && !plausible_tid((int32_t)held))
        return false;
    *out = (struct hd_lock){
        .kind = records_owner ? HD_LOCK_MUTEX : HD_LOCK_UNKNOWN,
        .object_address = window->address - 4,
        .type = musl_mutex_type_name(type),
        .robust = type & MUSL_TYPE_ROBUST,
        .process_shared = type & MUSL_TYPE_SHARED,
        .word_read = true,
        .word = lock,
        .owner_tid = records_owner ? (pid_t)held : 0,
        .why_unknown = records_owner ? NULL : "a musl normal mutex: its lock word says taken, not by whom",
    };
    return true;
}

pid_t probe_decode_join_descriptor(const uint8_t *before, size_t length, uint64_t address,
                                   const pid_t *same_process_tids, size_t ntids)
{
#if defined(__x86_64__)
    if (length > address)
        return 0;
    /* from the nearest descriptor start down: the state word lies past the tid, in the descriptor's first page */
    for (size_t back = 8 + (size_t)(address & 7); back <= length; back += 8) {
        uint64_t candidate = address - back;
        size_t at = length - back;
        uint64_t tcb, self;
        if (back < 24)
            continue;
        memcpy(&tcb, before + at, sizeof tcb);
        memcpy(&self, before + at + 16, sizeof self);
        if (tcb != candidate || self != candidate)
            continue;
        if (address < candidate + PROBE_DESCRIPTOR_TID + 4)
            return 0; /* the word is not past the tid: not a state word hangdoc knows */
        int32_t tid;
        memcpy(&tid, before + at + PROBE_DESCRIPTOR_TID, sizeof tid);
        for (size_t i = 0; i < ntids; i++)
            if (tid > 0 && same_process_tids[i] == tid)
                return tid;
        return 0;
    }
#else
    (void)before, (void)length, (void)address, (void)same_process_tids, (void)ntids;
#endif
    return 0;
}

/* ---- reading ------------------------------------------------------------------------------------------------- */

static void read_window(pid_t pid, uint64_t address, struct probe_lock_window *window)
{
    *window = (struct probe_lock_window){ .address = address };
    /* One read when the whole window is mapped; the halves alone near the edge of a mapping. */
    if (address >= PROBE_LOCK_BEFORE &&
        probe_read_memory(pid, address - PROBE_LOCK_BEFORE, window->bytes, sizeof window->bytes)) {
        window->before_read = window->after_read = true;
        return;
    }
    window->after_read = probe_read_memory(pid, address, window->bytes + PROBE_LOCK_BEFORE, PROBE_LOCK_AFTER);
    if (!window->after_read)
        window->after_read = probe_read_memory(pid, address, window->bytes + PROBE_LOCK_BEFORE, 4);
    window->before_read = address >= PROBE_LOCK_BEFORE &&
                          probe_read_memory(pid, address - PROBE_LOCK_BEFORE, window->bytes, PROBE_LOCK_BEFORE);
}

/* The windows read last in one process: the threads of a pool wait on one lock, and are told of the same bytes
 * (one read, one moment) rather than each reading them again. */
#define RECENT_WINDOWS 16
struct recent_windows {
    struct probe_lock_window windows[RECENT_WINDOWS];
    size_t count;
    size_t next; /* the slot to reuse when all are taken */
};

static const struct probe_lock_window *window_for(struct recent_windows *recent, pid_t pid, uint64_t address)
{
    for (size_t i = 0; i < recent->count; i++)
        if (recent->windows[i].address == address)
            return &recent->windows[i];
    struct probe_lock_window *window = &recent->windows[recent->next];
    recent->next = (recent->next + 1) % RECENT_WINDOWS;
    if (recent->count < RECENT_WINDOWS)
        recent->count++;
    read_window(pid, address, window);
    return window;
}

/* A shared futex wait no lock explains may be glibc 2.43's pthread_join(): one more read, of the bytes before the
 * word within its mapping (a thread's descriptor sits at the top of its stack mapping), settles it. */
static void find_join_descriptor(pid_t pid, struct hd_wait *wait, const struct hd_mapping *mapping, const pid_t *tids,
                                 size_t ntids)
{
    if (!mapping || wait->address < mapping->start)
        return;
    size_t length = (size_t)(wait->address - mapping->start);
    if (length > PROBE_DESCRIPTOR_SEARCH)
        length = PROBE_DESCRIPTOR_SEARCH;
    length &= ~(size_t)7;
    if (length == 0)
        return;
    uint8_t *before = malloc(length);
    if (!before)
        return;
    pid_t joined = 0;
    if (probe_read_memory(pid, wait->address - length, before, length))
        joined = probe_decode_join_descriptor(before, length, wait->address, tids, ntids);
    free(before);
    if (joined == 0)
        return;
    wait->lock = (struct hd_lock){ .kind = HD_LOCK_JOIN, .object_address = wait->address, .type = "join",
                                   .word_read = true, .word = wait->lock.word, .owner_tid = joined };
}

/* Does the process run on musl: its dynamic libc, or (linked statically, as distroless images' binaries are) no
 * glibc mapped at all and no interpreter? A static glibc binary passes too, and is told apart by the layout: a
 * glibc waiter's word is 1 or 2, never musl's top bit with EBUSY or a tid. */
static bool runs_on_musl(const struct hd_process *process)
{
    bool glibc = false, interpreter = false;
    for (size_t m = 0; m < process->nmappings; m++) {
        const char *path = process->mappings[m].path;
        const char *name = path && path[0] == '/' ? hd_basename(path) : "";
        if (strncmp(name, "ld-musl-", 8) == 0 || strncmp(name, "libc.musl-", 10) == 0)
            return true;
        glibc = glibc || strncmp(name, "libc.so.6", 9) == 0 || strncmp(name, "libc-2.", 7) == 0;
        interpreter = interpreter || strncmp(name, "ld-linux", 8) == 0;
    }
    return !glibc && !interpreter;
}

void probe_read_locks(struct hd_process *process)
{
    struct recent_windows recent = { .count = 0 };
    pid_t *tids = calloc(process->nthreads ? process->nthreads : 1, sizeof *tids);
    if (!tids)
        return;
    /* the ids the process itself knows its threads by: a pthread_join tid word holds its namespace's */
    for (size_t t = 0; t < process->nthreads; t++)
        tids[t] = process->threads[t].ns_tid ? process->threads[t].ns_tid : process->threads[t].tid;
    bool musl = runs_on_musl(process);
    for (size_t t = 0; t < process->nthreads; t++) {
        struct hd_wait *wait = &process->threads[t].wait;
        if (wait->kind != HD_WAIT_FUTEX || wait->address == 0)
            continue;
        const struct hd_mapping *mapping = hd_process_find_mapping(process, wait->address);
        wait->mapping_kind = hd_mapping_classify(mapping);
        if (mapping) {
            wait->mapping = *mapping;
            wait->mapping.path = mapping->path ? strdup(mapping->path) : NULL;
        }
        const struct probe_lock_window *window = window_for(&recent, process->pid, wait->address);
        probe_decode_lock(window, wait, tids, process->nthreads, &wait->lock);
        if (wait->lock.kind == HD_LOCK_UNKNOWN && wait->lock.word_read && musl)
            probe_decode_musl_lock(window, wait, &wait->lock);
        if (wait->lock.kind == HD_LOCK_UNKNOWN && wait->lock.word_read && !wait->futex_private)
            find_join_descriptor(process->pid, wait, mapping, tids, process->nthreads);
    }
    free(tids);
}

/* The process a tid outside the snapshot belongs to, or 0 when no such thread exists. */
static pid_t thread_group_outside(pid_t tid)
{
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    const char *line = length > 0 ? strstr(text, "\nTgid:") : NULL;
    long tgid = 0;
    if (!line || sscanf(line + 6, "%ld", &tgid) != 1)
        return 0;
    return (pid_t)tgid;
}

/* Where the owner of `lock`, a lock some thread of `process` waits for, is. */
static void resolve_owner(struct hd_snapshot *snapshot, const struct hd_process *process, struct hd_lock *lock)
{
    /* an owner already placed (one gone from its PID namespace: pidns.h) stays where it is */
    if (lock->kind == HD_LOCK_UNKNOWN || lock->owner_tid <= 0 || lock->owner_whereabouts != HD_OWNER_UNKNOWN)
        return;
    struct hd_process *owner_process = NULL;
    if (hd_snapshot_find_thread(snapshot, lock->owner_tid, &owner_process)) {
        lock->owner_pid = owner_process->pid;
        lock->owner_whereabouts = owner_process == process ? HD_OWNER_SAME_PROCESS : HD_OWNER_OTHER_PROCESS;
        return;
    }
    lock->owner_pid = thread_group_outside(lock->owner_tid);
    lock->owner_whereabouts = lock->owner_pid ? HD_OWNER_OUTSIDE : HD_OWNER_GONE;
}

void probe_resolve_owners(struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        for (size_t t = 0; t < process->nthreads; t++)
            resolve_owner(snapshot, process, &process->threads[t].wait.lock);
        resolve_owner(snapshot, process, &process->python.gil_lock);
    }
}
