/* What glibc object sits at a futex address, and who owns it.
 *
 * glibc's pthread_mutex_t and pthread_rwlock_t keep their owner's tid in memory; hangdoc reads it with
 * process_vm_readv and believes it only when the object around the word validates (a kind field glibc could have
 * written, a lock word that says locked, pads that are zero). Anything else is "no owner recorded": condition
 * variables, semaphores, barriers and libc's low-level locks keep no owner. The field offsets below hold for
 * glibc's 64-bit layouts, x86-64 and aarch64 alike (sysdeps/nptl/bits/struct_mutex.h, struct_rwlock.h).
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes around a futex address: [address - PROBE_LOCK_BEFORE, address + PROBE_LOCK_AFTER). */
#define PROBE_LOCK_BEFORE 16
#define PROBE_LOCK_AFTER 56

struct probe_lock_window {
    uint64_t address;
    bool before_read; /* the bytes before the address could be read */
    bool after_read;  /* the bytes from the address on could be read */
    uint8_t bytes[PROBE_LOCK_BEFORE + PROBE_LOCK_AFTER];
};

/* Decodes the object at wait->address from `window`; `same_process_tids` lets pthread_join waits be recognised
 * (the expected value is the tid of the thread joined). Pure: no memory is read. */
void probe_decode_lock(const struct probe_lock_window *window, const struct hd_wait *wait,
                       const pid_t *same_process_tids, size_t ntids, struct hd_lock *out);
/* The same for musl's mutex, where `wait`'s futex is its lock word (the second int): true when the words around it
 * are one; a normal mutex records no owner, and stays HD_LOCK_UNKNOWN with why_unknown set. Asked only of a
 * process that runs on musl, after probe_decode_lock found nothing. */
bool probe_decode_musl_lock(const struct probe_lock_window *window, const struct hd_wait *wait, struct hd_lock *out);

/* glibc 2.43 and later: pthread_join() sleeps on a state word inside the joined thread's descriptor (struct pthread)
 * rather than on its tid word. `before` holds the `length` bytes that precede the futex address `address`; on
 * x86-64 a descriptor starts with its own address twice (tcbhead_t's tcb and self, at 0 and 16) and keeps the
 * thread's tid at PROBE_DESCRIPTOR_TID. Returns the tid of the thread whose descriptor holds the address when that
 * tid is one of `same_process_tids`, else 0. Pure: no memory is read. */
#define PROBE_DESCRIPTOR_SEARCH 4096
#define PROBE_DESCRIPTOR_TID 0x2d0
pid_t probe_decode_join_descriptor(const uint8_t *before, size_t length, uint64_t address,
                                   const pid_t *same_process_tids, size_t ntids);

/* Reads the window around each futex wait of `process` and decodes it, and classifies the mapping it lies in. */
void probe_read_locks(struct hd_process *process);

/* Says where every recorded owner is: a thread of this snapshot, of another process, or nowhere. */
void probe_resolve_owners(struct hd_snapshot *snapshot);
