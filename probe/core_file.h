/* ELF core files (the kernel's, gdb's gcore, systemd-coredump's), read with libelf: each thread's registers
 * (NT_PRSTATUS), the process's identity (NT_PRPSINFO), its auxiliary vector (NT_AUXV), the files it mapped
 * (NT_FILE), and its memory (the PT_LOAD segments). What a core cannot tell (wait channels, progress, fds, the
 * processes that were not dumped) is the caller's to say (core_snapshot.h).
 *
 * A core is hostile input: every count, size and offset in it is bounded by the file, a note that does not fit
 * is skipped with a problem said, and a segment cut short by a truncated file reads as far as the file goes.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROBE_CORE_THREADS_MAX 100000
#define PROBE_CORE_FILES_MAX 65536
#define PROBE_CORE_AUXV_MAX 512
#define PROBE_CORE_PROBLEMS_MAX 8
#define PROBE_CORE_OPEN_FILES 64

#define PROBE_CORE_REGISTERS_MAX 512

struct probe_core_thread {
    pid_t tid;
    int signal;              /* the signal that stopped it (pr_cursig), 0 when none */
    struct hd_syscall syscall; /* from its registers: the call it was in, when the registers show one interrupted */
    unsigned char registers[PROBE_CORE_REGISTERS_MAX]; /* pr_reg: struct user_regs_struct on x86-64 */
    size_t registers_size;
};

/* A file mapping as NT_FILE lists it. */
struct probe_core_file {
    uint64_t start;
    uint64_t end;
    uint64_t offset; /* in the file, bytes */
    char *path;
    int fd;          /* the file on this machine, opened when memory the core left out is read from it: -2 not
                      * tried yet, -1 not there */
};

/* A PT_LOAD segment: [vaddr, vaddr + memsz) in the process, of which the first `filesz` bytes are in the core. */
struct probe_core_segment {
    uint64_t vaddr;
    uint64_t memsz;
    uint64_t filesz;
    uint64_t offset;
    unsigned flags; /* PF_R, PF_W, PF_X */
};

struct probe_core {
    const unsigned char *bytes; /* the file, mapped */
    size_t length;
    bool mapped;                /* munmap'd by probe_core_free */
    enum hd_arch arch;
    bool identity_known;        /* NT_PRPSINFO was there */
    pid_t pid, ppid, pgrp, session;
    uid_t uid;
    char state;
    char comm[HD_COMM_MAX];
    char args[81];              /* pr_psargs: the command line, arguments joined by spaces, cut at 80 bytes */
    struct probe_core_thread *threads; /* in the order of the notes: the first one is the dumping thread */
    size_t nthreads;
    uint64_t *auxv;             /* type, value pairs */
    size_t nauxv;               /* pairs */
    struct probe_core_file *files; /* sorted by start */
    size_t nfiles;
    size_t open_files; /* how many of them hold an fd: at most PROBE_CORE_OPEN_FILES */
    struct probe_core_segment *segments; /* sorted by vaddr */
    size_t nsegments;
    bool truncated;             /* a segment or a note lies past the end of the file */
    char *problems[PROBE_CORE_PROBLEMS_MAX]; /* what could not be read, said once each */
    size_t nproblems;
};

/* Reads the core at `path`. 0 with *core set, or -errno with `error` saying why (-EINVAL: not an ELF core hangdoc
 * reads). */
int probe_core_open(const char *path, struct probe_core **core, char *error, size_t error_size);
/* The same over the bytes of a core, which must outlive it (the fuzzer's entry). */
int probe_core_parse(const void *bytes, size_t length, struct probe_core **core, char *error, size_t error_size);
void probe_core_free(struct probe_core *core);
HD_DEFINE_CLEANUP(struct probe_core, probe_core_free)

/* Reads exactly `size` bytes at `address` of the process's memory from the core, or, where the core left a file's
 * pages out (gcore and the kernel leave out code and read-only data), from that file as this machine has it;
 * false when any byte is in neither. Shaped as a probe_memory_reader (syscalls.h): `context` is the core. */
bool probe_core_read(void *context, uint64_t address, void *buffer, size_t size);

/* The NT_FILE entry (sorted by start) and the PT_LOAD segment that hold `address`; NULL when none does. */
const struct probe_core_file *probe_core_file_at(const struct probe_core *core, uint64_t address);
const struct probe_core_segment *probe_core_segment_at(const struct probe_core *core, uint64_t address);

/* The value of auxiliary vector entry `type` (AT_RANDOM...), false when the core has none. */
bool probe_core_auxv(const struct probe_core *core, uint64_t type, uint64_t *value);
