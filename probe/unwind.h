/* Unwinding the user stack of a stopped thread with libunwind, reading the target's memory ourselves.
 *
 * One libunwind address space per process, with global caching, so that the threads of a process share what was
 * learnt about its modules. Memory is read with process_vm_readv(2) a page at a time through a small page cache
 * (the stack pages of a thread are read once, not one PTRACE_PEEKDATA per word); registers come from one
 * PTRACE_GETREGSET per thread. A module's unwind table is found through its .eh_frame_hdr (located with
 * symbols.h, which has the file open anyway); libunwind-ptrace only for modules without one. Nothing is ever
 * written to the target.
 */
#pragma once

#include "snapshot.h"
#include "symbols.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROBE_UNWIND_DEPTH_MAX 128

struct probe_unwinder;

/* An unwinder for process `pid`, whose mappings (sorted, borrowed until probe_unwind_end) say where its modules
 * are, and `symbols` (borrowed; may be NULL) where their unwind tables are. NULL when memory ran out or libunwind
 * could not make an address space. One at a time. */
struct probe_unwinder *probe_unwind_begin(pid_t pid, const struct hd_mapping *mappings, size_t nmappings,
                                          struct probe_symbols *symbols);
void probe_unwind_end(struct probe_unwinder *unwinder);

/* The unwinder of a process read from a core: its memory comes through probe_memory_offline (memory.h), and
 * libunwind-ptrace, which would read /proc/<pid> of this machine, is never used. */
void probe_unwind_offline(struct probe_unwinder *unwinder);
/* Unwinds a thread from `registers` (struct user_regs_struct, `size` bytes: a core's NT_PRSTATUS), as
 * probe_unwind_thread does from a stopped thread's. */
bool probe_unwind_registers(struct probe_unwinder *unwinder, const void *registers, size_t size, uint64_t *pcs,
                            int *signals, size_t max, size_t *count, bool *truncated, const char **why);
/* Unwinds the stopped thread `tid`: pcs[] gets the innermost pc, then each caller's return address minus one
 * (the call instruction, so that a call at the very end of a function is named right). *truncated when the depth
 * cap was hit or a loop was found. False when not even the registers could be read; *why says why (static).
 * signals[] (as long as pcs[]) says which frames are the kernel's signal trampoline (__restore_rt), where a signal
 * handler returns to and the frames after it were interrupted: 0 for every other frame, the signal's number read
 * from the siginfo the kernel put beside the trampoline's frame, or -1 when that could not be read. */
bool probe_unwind_thread(struct probe_unwinder *unwinder, pid_t tid, uint64_t *pcs, int *signals, size_t max,
                         size_t *count, bool *truncated, const char **why);
