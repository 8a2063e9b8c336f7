/* Forked or exec'd, by auxv's AT_RANDOM (origin.h). */
#include "origin.h"

#include "memory.h"
#include "procfs.h"
#include "access.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An x86-64 auxv has about 25 pairs of 16 bytes; the kernel keeps at most AT_VECTOR_SIZE words (under 100). */
#define AUXV_MAX_BYTES 4096
/* The least of the initial stack past envp worth reading: the pairs up to AT_RANDOM, which comes about 25th. */
#define AUXV_MIN_BYTES 512

static uint64_t auxv_word(const unsigned char *at, size_t word_size)
{
    if (word_size == sizeof(uint32_t)) {
        uint32_t word;
        memcpy(&word, at, sizeof word);
        return word;
    }
    uint64_t word;
    memcpy(&word, at, sizeof word);
    return word;
}

bool probe_parse_auxv_random(const void *bytes, size_t length, size_t word_size, uint64_t *address)
{
    if (word_size != sizeof(uint32_t) && word_size != sizeof(uint64_t))
        return false;
    const unsigned char *pairs = bytes;
    for (size_t at = 0; at + 2 * word_size <= length; at += 2 * word_size) {
        uint64_t type = auxv_word(pairs + at, word_size);
        if (type == AT_NULL)
            return false;
        if (type == AT_RANDOM) {
            *address = auxv_word(pairs + at + word_size, word_size);
            return *address != 0;
        }
    }
    return false;
}

/* Words of the initial stack read to find the auxv past argv and envp: 256 KiB of pointers at most. */
#define STACK_WORDS_MAX 32768

/* The auxv where the kernel put it, on the initial stack: argc at /proc/<pid>/stat's startstack, argc + 1 argv
 * words, the envp words to their NULL, then the pairs. For a process whose auxv file hangdoc may not open (its 0400
 * files, without CAP_DAC_READ_SEARCH) but whose memory it may read (ptrace access). Pointers a program rewrote
 * (setproctitle) do not move these words. 64-bit only. Returns the pairs' bytes copied into `auxv`, or -errno. */
static ssize_t read_auxv_from_stack(pid_t pid, unsigned char *auxv, size_t size)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    ssize_t length = probe_read_file(path, text, sizeof text);
    struct probe_stat stat;
    if (length < 0)
        return length;
    if (!probe_parse_stat(text, (size_t)length, &stat) || stat.start_stack == 0)
        return -EACCES;
    uint64_t at = stat.start_stack, word;
    if (probe_read_memory_checked(pid, at, &word, sizeof word) != 0 || word > STACK_WORDS_MAX)
        return -ENODATA;
    at += (word + 2) * sizeof word; /* argc, the argv words, their NULL */
    size_t words = word + 2;
    do {
        if (++words > STACK_WORDS_MAX || probe_read_memory_checked(pid, at, &word, sizeof word) != 0)
            return -ENODATA;
        at += sizeof word;
    } while (word != 0);
    /* the strings after the pairs end where the stack ends: a read past it fails whole, so smaller ones follow */
    int error = -ENODATA;
    for (size_t wanted = size; wanted >= AUXV_MIN_BYTES; wanted /= 2) {
        error = probe_read_memory_checked(pid, at, auxv, wanted);
        if (error == 0)
            return (ssize_t)wanted;
        if (error != -EFAULT)
            break;
    }
    return error;
}

/* Reads where AT_RANDOM points and the 16 bytes there. A 32-bit program (its arch unknown to hangdoc) has an auxv
 * of 32-bit words; an unknown arch may also be a 64-bit program of another machine, so 64-bit words are tried when
 * 32-bit ones find no entry (never the other way: a known 64-bit auxv read as 32-bit words could name an address
 * that is no AT_RANDOM). */
static void read_at_random(const struct hd_process *process, struct probe_at_random *out)
{
    *out = (struct probe_at_random){ 0 };
    char path[64];
    unsigned char auxv[AUXV_MAX_BYTES];
    snprintf(path, sizeof path, "/proc/%d/auxv", (int)process->pid);
    ssize_t length = probe_read_file(path, (char *)auxv, sizeof auxv);
    if ((length == -EACCES || length == -EPERM) && process->arch != HD_ARCH_UNKNOWN) {
        ssize_t from_stack = read_auxv_from_stack(process->pid, auxv, sizeof auxv);
        if (from_stack > 0)
            length = from_stack;
    }
    if (length < 0) {
        out->error = (int)length;
        return;
    }
    bool found = process->arch == HD_ARCH_UNKNOWN &&
                 probe_parse_auxv_random(auxv, (size_t)length, sizeof(uint32_t), &out->address);
    if (!found && !probe_parse_auxv_random(auxv, (size_t)length, sizeof(uint64_t), &out->address)) {
        /* an empty auxv: the process is exiting and its memory is gone */
        out->error = length == 0 ? -ESRCH : -ENODATA;
        return;
    }
    out->auxv_read = true;
    out->error = probe_read_memory_checked(process->pid, out->address, out->bytes, sizeof out->bytes);
}

/* Where the executable is mapped (0 when not seen): fork keeps the address, an exec draws a new one, unless the
 * executable is not position-independent or ASLR is off. */
static uint64_t executable_base(const struct hd_process *process)
{
    for (size_t m = 0; process->exe && m < process->nmappings; m++)
        if (process->mappings[m].path && strcmp(process->mappings[m].path, process->exe) == 0)
            return process->mappings[m].start;
    return 0;
}

/* Decisive only in the negative: fork keeps the executable and where it is mapped. */
static bool executable_differs(const struct hd_process *child, const struct hd_process *parent)
{
    if (!child->exe || !parent->exe)
        return false;
    if (strcmp(child->exe, parent->exe) != 0)
        return true;
    uint64_t own = executable_base(child), theirs = executable_base(parent);
    return own != 0 && theirs != 0 && own != theirs;
}

enum hd_origin_basis probe_origin_basis(const struct hd_process *child, const struct probe_at_random *own,
                                        const struct hd_process *parent, const struct probe_at_random *theirs)
{
    if (own->error == 0 && theirs->error == 0)
        return own->address == theirs->address && memcmp(own->bytes, theirs->bytes, sizeof own->bytes) == 0
                   ? HD_ORIGIN_BASIS_AT_RANDOM_SAME
                   : HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT;
    return executable_differs(child, parent) ? HD_ORIGIN_BASIS_EXECUTABLE_DIFFERS : HD_ORIGIN_BASIS_UNREADABLE;
}

enum hd_origin probe_origin_of_basis(enum hd_origin_basis basis)
{
    static const enum hd_origin origins[] = {
        [HD_ORIGIN_BASIS_NONE] = HD_ORIGIN_UNKNOWN,
        [HD_ORIGIN_BASIS_AT_RANDOM_SAME] = HD_ORIGIN_FORKED,
        [HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT] = HD_ORIGIN_EXEC,
        [HD_ORIGIN_BASIS_EXECUTABLE_DIFFERS] = HD_ORIGIN_EXEC,
        [HD_ORIGIN_BASIS_UNREADABLE] = HD_ORIGIN_UNKNOWN,
    };
    return (size_t)basis < COUNT(origins) ? origins[basis] : HD_ORIGIN_UNKNOWN;
}

/* Why the AT_RANDOM of `whose` could not be read, for the note. */
static void explain_unreadable(const struct hd_process *whose, const struct probe_at_random *failed, char *why,
                               size_t size)
{
    int error = -failed->error;
    if (error == EPERM || error == EACCES)
        probe_access_explain(whose->pid, whose->uid, PROBE_ACCESS_OWNER_FILE, why, size); /* auxv is 0400 */
    else if (error == ESRCH || error == ENOENT)
        snprintf(why, size, "it exited");
    else if (error == ENODATA)
        snprintf(why, size, "its auxv has no AT_RANDOM entry (a kernel before 2.6.29)");
    else if (error == EFAULT)
        snprintf(why, size, "its auxv points to memory it does not map");
    else
        snprintf(why, size, "%s", strerror(error));
}

static void note_unreadable(struct hd_snapshot *snapshot, const struct hd_process *child,
                            const struct hd_process *whose, const struct probe_at_random *failed)
{
    char why[256], whom[48];
    explain_unreadable(whose, failed, why, sizeof why);
    if (whose == child)
        snprintf(whom, sizeof whom, "its");
    else
        snprintf(whom, sizeof whom, "its parent %d's", (int)whose->pid);
    hd_snapshot_note(snapshot, HD_NOTE_ORIGIN, child->pid, 0,
                     "origin unknown (the AT_RANDOM bytes tell a fork from an exec): %s %s could not be read: %s", whom,
                     failed->auxv_read ? "AT_RANDOM bytes" : "auxv", why);
}

/* Each process's AT_RANDOM, read when first asked for: a parent of 1,000 workers is read once, not 1,000 times. */
struct at_randoms {
    const struct hd_snapshot *snapshot;
    struct probe_at_random *of; /* per process index; NULL when memory ran out: then read at every ask */
    bool *read;
    struct probe_at_random spare;
};

static const struct probe_at_random *at_random_of(struct at_randoms *known, const struct hd_process *process)
{
    if (!known->of || !known->read) {
        read_at_random(process, &known->spare);
        return &known->spare;
    }
    size_t index = (size_t)(process - known->snapshot->processes);
    if (!known->read[index]) {
        read_at_random(process, &known->of[index]);
        known->read[index] = true;
    }
    return &known->of[index];
}

void probe_mark_origins(struct hd_snapshot *snapshot)
{
    struct at_randoms known = { .snapshot = snapshot, .of = calloc(snapshot->nprocesses + 1, sizeof *known.of),
                                .read = calloc(snapshot->nprocesses + 1, sizeof *known.read) };
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *child = &snapshot->processes[p];
        const struct hd_process *parent = hd_snapshot_find_process(snapshot, child->ppid);
        if (!parent || child->kernel_thread || child->zombie)
            continue;
        struct probe_at_random own = *at_random_of(&known, child);
        const struct probe_at_random *theirs = at_random_of(&known, parent);
        child->origin_basis = probe_origin_basis(child, &own, parent, theirs);
        child->origin = probe_origin_of_basis(child->origin_basis);
        if (child->origin_basis == HD_ORIGIN_BASIS_UNREADABLE)
            note_unreadable(snapshot, child, own.error ? child : parent, own.error ? &own : theirs);
    }
    free(known.of);
    free(known.read);
}
