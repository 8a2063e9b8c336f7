/* How each process came to be: forked from its parent and not exec'd since, or exec'd.
 *
 * The test holds for every executable. auxv's AT_RANDOM entry points to 16 bytes that the kernel fills afresh at
 * every execve (fs/binfmt_elf.c, create_elf_tables: get_random_bytes, then copied onto the new stack), ASLR or
 * not; fork copies the address space, those bytes included. So a child whose AT_RANDOM has its parent's address
 * and its parent's bytes has not exec'd since the fork; any difference means an exec since (the child's, or the
 * parent's). The executable's load address, which hangdoc compared before, tells nothing for a program that is not
 * position-independent (Debian's /usr/bin/python3.11: ELF type EXEC, always at 0x400000) or with ASLR off
 * (setarch -R, gdb): an exec'd copy sits where its parent sits.
 *
 * Reading the bytes takes ptrace access to both processes (process_vm_readv(2) checks PTRACE_MODE_ATTACH, auxv
 * PTRACE_MODE_READ). Without it, the mappings still allow the negative answer alone: another executable, or the
 * same one at another address, means an exec. Otherwise the origin is unknown, and a note says why.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROBE_AT_RANDOM_BYTES 16

/* A process's AT_RANDOM: where auxv says the bytes are, and the bytes. */
struct probe_at_random {
    int error;      /* 0 when read; -errno of the step that failed (-ENODATA: auxv has no AT_RANDOM entry) */
    bool auxv_read; /* the step that failed: false, /proc/<pid>/auxv; true, the bytes at `address` */
    uint64_t address;
    unsigned char bytes[PROBE_AT_RANDOM_BYTES];
};

/* The address in auxv's AT_RANDOM entry, from the bytes of /proc/<pid>/auxv: (type, value) pairs of `word_size`
 * bytes each (8; 4 for a 32-bit program), up to AT_NULL. False when there is no such entry before AT_NULL or the
 * end of a whole pair (pure). */
bool probe_parse_auxv_random(const void *bytes, size_t length, size_t word_size, uint64_t *address);

/* How the origin of `child` is decided from both AT_RANDOMs, and from their executables and load addresses when
 * either AT_RANDOM is unreadable (pure). */
enum hd_origin_basis probe_origin_basis(const struct hd_process *child, const struct probe_at_random *own,
                                        const struct hd_process *parent, const struct probe_at_random *theirs);
/* forked for AT_RANDOM_SAME, exec for AT_RANDOM_DIFFERENT and EXECUTABLE_DIFFERS, unknown otherwise (pure). */
enum hd_origin probe_origin_of_basis(enum hd_origin_basis basis);

/* Sets origin and origin_basis of every process whose parent is in the snapshot (not kernel threads, not
 * zombies), and notes each origin left unknown for want of memory access. Python's spawn and forkserver children
 * are told apart after this (probe_refine_origins, inherit.h). */
void probe_mark_origins(struct hd_snapshot *snapshot);
