/* Unit tests for telling a fork from an exec (probe/origin.h): the auxv parser on odd inputs, the decision over
 * hand-built processes, the whole on this test's own children (one forked, one exec'd, one a zombie), and what
 * Python's roles make of an origin left unknown (probe_refine_origins). */
#include <criterion/criterion.h>

#include "inherit.h"
#include "origin.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- probe_parse_auxv_random ---------------------------------------------------------------------------------- */

Test(auxv, finds_at_random_among_other_entries)
{
    const uint64_t auxv[] = { AT_PHDR, 0x400040, AT_PAGESZ, 4096, AT_RANDOM, 0x7ffd1234abc9, AT_EXECFN, 0x7ffd1fff,
                              AT_NULL, 0 };
    uint64_t address = 0;
    cr_assert(probe_parse_auxv_random(auxv, sizeof auxv, 8, &address));
    cr_assert_eq(address, 0x7ffd1234abc9);
}

Test(auxv, thirty_two_bit_words)
{
    const uint32_t auxv[] = { AT_PAGESZ, 4096, AT_RANDOM, 0xffd1abc9, AT_NULL, 0 };
    uint64_t address = 0;
    cr_assert(probe_parse_auxv_random(auxv, sizeof auxv, 4, &address));
    cr_assert_eq(address, 0xffd1abc9);
}

Test(auxv, nothing_after_at_null_counts)
{
    const uint64_t auxv[] = { AT_PAGESZ, 4096, AT_NULL, 0, AT_RANDOM, 0x7ffd1234abc9 };
    uint64_t address = 0;
    cr_assert_not(probe_parse_auxv_random(auxv, sizeof auxv, 8, &address));
}

Test(auxv, empty_truncated_or_absent_is_not_found)
{
    const uint64_t auxv[] = { AT_PAGESZ, 4096, AT_RANDOM, 0x7ffd1234abc9 };
    uint64_t address = 0;
    cr_assert_not(probe_parse_auxv_random(auxv, 0, 8, &address), "an exiting process's empty auxv");
    cr_assert_not(probe_parse_auxv_random(auxv, sizeof auxv - 1, 8, &address), "the pair cut short");
    cr_assert_not(probe_parse_auxv_random(auxv, 2 * sizeof auxv[0], 8, &address), "no AT_RANDOM entry");
    cr_assert_not(probe_parse_auxv_random(auxv, sizeof auxv, 3, &address), "a word size no ABI has");
    const uint64_t zero[] = { AT_RANDOM, 0, AT_NULL, 0 };
    cr_assert_not(probe_parse_auxv_random(zero, sizeof zero, 8, &address), "AT_RANDOM pointing nowhere");
}

/* ---- probe_origin_basis ---------------------------------------------------------------------------------------- */

static struct probe_at_random readable(uint64_t address, unsigned char fill)
{
    struct probe_at_random at_random = { .auxv_read = true, .address = address };
    memset(at_random.bytes, fill, sizeof at_random.bytes);
    return at_random;
}

static const struct probe_at_random refused = { .error = -EPERM };
static char python[] = "/usr/bin/python3.11", sleep_program[] = "/usr/bin/sleep";

/* A process whose executable `exe` is mapped at `base` (0: not seen in its maps) */
static struct hd_process process_running(char *exe, uint64_t base, struct hd_mapping *mapping)
{
    *mapping = (struct hd_mapping){ .start = base, .end = base + 0x1000, .path = exe };
    return (struct hd_process){ .exe = exe, .mappings = base ? mapping : NULL, .nmappings = base ? 1 : 0 };
}

Test(basis, the_same_address_and_bytes_is_a_fork)
{
    struct hd_mapping a, b;
    struct hd_process child = process_running(python, 0x400000, &a);
    struct hd_process parent = process_running(python, 0x400000, &b);
    struct probe_at_random own = readable(0x7fffffffea39, 0x5a), theirs = readable(0x7fffffffea39, 0x5a);
    cr_assert_eq(probe_origin_basis(&child, &own, &parent, &theirs), HD_ORIGIN_BASIS_AT_RANDOM_SAME);
    cr_assert_eq(probe_origin_of_basis(HD_ORIGIN_BASIS_AT_RANDOM_SAME), HD_ORIGIN_FORKED);
}

/* ASLR off or not position-independent: the same executable at the same address, and the same AT_RANDOM address;
 * the bytes alone differ */
Test(basis, other_bytes_at_the_same_address_is_an_exec)
{
    struct hd_mapping a, b;
    struct hd_process child = process_running(python, 0x400000, &a);
    struct hd_process parent = process_running(python, 0x400000, &b);
    struct probe_at_random own = readable(0x7fffffffea39, 0x11), theirs = readable(0x7fffffffea39, 0x5a);
    cr_assert_eq(probe_origin_basis(&child, &own, &parent, &theirs), HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT);
    own = readable(0x7fffffffe000, 0x5a);
    cr_assert_eq(probe_origin_basis(&child, &own, &parent, &theirs), HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT,
                 "the same bytes at another address");
    cr_assert_eq(probe_origin_of_basis(HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT), HD_ORIGIN_EXEC);
}

Test(basis, unreadable_bytes_leave_only_the_negative_answer)
{
    struct hd_mapping a, b;
    struct probe_at_random theirs = readable(0x7fffffffea39, 0x5a);
    struct hd_process child = process_running(sleep_program, 0x5555aaaa0000, &a);
    struct hd_process parent = process_running(python, 0x400000, &b);
    cr_assert_eq(probe_origin_basis(&child, &refused, &parent, &theirs), HD_ORIGIN_BASIS_EXECUTABLE_DIFFERS,
                 "another executable");
    child = process_running(python, 0x500000, &a);
    cr_assert_eq(probe_origin_basis(&child, &theirs, &parent, &refused), HD_ORIGIN_BASIS_EXECUTABLE_DIFFERS,
                 "the same executable at another address");
    cr_assert_eq(probe_origin_of_basis(HD_ORIGIN_BASIS_EXECUTABLE_DIFFERS), HD_ORIGIN_EXEC);

    child = process_running(python, 0x400000, &a);
    cr_assert_eq(probe_origin_basis(&child, &refused, &parent, &theirs), HD_ORIGIN_BASIS_UNREADABLE,
                 "the same executable at the same address: a fork or an exec");
    child = process_running(python, 0, &a);
    cr_assert_eq(probe_origin_basis(&child, &refused, &parent, &theirs), HD_ORIGIN_BASIS_UNREADABLE,
                 "an address not seen proves nothing");
    child = process_running(NULL, 0, &a);
    cr_assert_eq(probe_origin_basis(&child, &refused, &parent, &refused), HD_ORIGIN_BASIS_UNREADABLE,
                 "no executable read: nothing decided");
    cr_assert_eq(probe_origin_of_basis(HD_ORIGIN_BASIS_UNREADABLE), HD_ORIGIN_UNKNOWN);
    cr_assert_eq(probe_origin_of_basis(HD_ORIGIN_BASIS_NONE), HD_ORIGIN_UNKNOWN);
}

Test(basis, names)
{
    cr_assert_str_eq(hd_origin_basis_name(HD_ORIGIN_BASIS_NONE), "none");
    cr_assert_str_eq(hd_origin_basis_name(HD_ORIGIN_BASIS_AT_RANDOM_SAME), "at-random-same");
    cr_assert_str_eq(hd_origin_basis_name(HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT), "at-random-different");
    cr_assert_str_eq(hd_origin_basis_name(HD_ORIGIN_BASIS_EXECUTABLE_DIFFERS), "executable-differs");
    cr_assert_str_eq(hd_origin_basis_name(HD_ORIGIN_BASIS_UNREADABLE), "unreadable");
    cr_assert_str_eq(hd_origin_basis_name((enum hd_origin_basis)99), "none");
}

/* ---- probe_mark_origins on this test's own children ------------------------------------------------------------ */

static pid_t start_child(bool exec)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        /* dies with the test, also when an assertion ends it early; kept across the exec */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (exec)
            execl("/bin/sleep", "sleep", "60", (char *)NULL);
        pause();
        _exit(0);
    }
    return pid;
}

/* Whether /proc/<pid>/auxv already has the AT_RANDOM entry */
static bool auxv_complete(pid_t pid)
{
    char path[64];
    unsigned char auxv[4096];
    snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
    FILE *file = fopen(path, "re");
    if (!file)
        return false;
    size_t length = fread(auxv, 1, sizeof auxv, file);
    fclose(file);
    uint64_t address;
    return probe_parse_auxv_random(auxv, length, 8, &address);
}

/* Waits until the child runs another executable than ours, and its exec is done: the kernel names the new
 * executable before it writes the new auxv, and an auxv read between the two is empty */
static void wait_for_exec(pid_t pid)
{
    char path[64], own[4096], theirs[4096];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t length = readlink("/proc/self/exe", own, sizeof own - 1);
    cr_assert_gt(length, 0);
    own[length] = '\0';
    for (int tries = 0; tries < 2000; tries++) {
        ssize_t got = readlink(path, theirs, sizeof theirs - 1);
        if (got > 0 && (theirs[got] = '\0', strcmp(theirs, own) != 0) && auxv_complete(pid))
            return;
        usleep(1000);
    }
    cr_assert_fail("child %d did not exec", (int)pid);
}

Test(mark, a_forked_child_an_execed_child_and_a_zombie)
{
    pid_t forked = start_child(false), execed = start_child(true), zombie = fork();
    cr_assert_neq(zombie, -1);
    if (zombie == 0)
        _exit(0);
    wait_for_exec(execed);
    siginfo_t info;
    cr_assert_eq(waitid(P_PID, (id_t)zombie, &info, WEXITED | WNOWAIT), 0); /* exited, not reaped */

    struct hd_snapshot *snapshot = calloc(1, sizeof *snapshot);
    cr_assert_not_null(snapshot);
    snapshot->processes = calloc(4, sizeof *snapshot->processes);
    cr_assert_not_null(snapshot->processes);
    const pid_t pids[] = { getpid(), forked, execed, zombie };
    for (size_t i = 0; i < 4; i++)
        snapshot->processes[i] = (struct hd_process){ .pid = pids[i], .ppid = i ? getpid() : getppid(),
                                                      .arch = HD_ARCH_X86_64, .zombie = i == 3 };
    snapshot->nprocesses = 4;
    probe_mark_origins(snapshot);
    cr_assert_eq(snapshot->processes[0].origin_basis, HD_ORIGIN_BASIS_NONE, "its parent is not in the snapshot");
    cr_assert_eq(snapshot->processes[1].origin_basis, HD_ORIGIN_BASIS_AT_RANDOM_SAME);
    cr_assert_eq(snapshot->processes[1].origin, HD_ORIGIN_FORKED);
    cr_assert_eq(snapshot->processes[2].origin_basis, HD_ORIGIN_BASIS_AT_RANDOM_DIFFERENT);
    cr_assert_eq(snapshot->processes[2].origin, HD_ORIGIN_EXEC);
    cr_assert_eq(snapshot->processes[3].origin_basis, HD_ORIGIN_BASIS_NONE, "a zombie has no memory to read");
    cr_assert_eq(snapshot->nnotes, 0, "everything that was read could be read");

    /* gone since: unreadable, noted; not forked */
    kill(forked, SIGKILL);
    waitpid(forked, NULL, 0);
    probe_mark_origins(snapshot);
    cr_assert_eq(snapshot->processes[1].origin_basis, HD_ORIGIN_BASIS_UNREADABLE);
    cr_assert_eq(snapshot->processes[1].origin, HD_ORIGIN_UNKNOWN);
    cr_assert_eq(snapshot->nnotes, 1);
    cr_assert(strstr(snapshot->notes[0].text, "its auxv could not be read: it exited"), "%s", snapshot->notes[0].text);

    kill(execed, SIGKILL);
    waitpid(execed, NULL, 0);
    waitpid(zombie, NULL, 0);
    hd_snapshot_free(snapshot);
}

/* ---- an unknown origin and Python's roles (probe_refine_origins) ------------------------------------------------ */

static char python_argv0[] = "/usr/bin/python3", dash_c[] = "-c",
            spawn_code[] = "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)",
            fork_flag[] = "--multiprocessing-fork", script[] = "train.py";

Test(refine, an_unknown_origin_takes_the_role_of_its_own_command_line_only)
{
    char *spawn_argv[] = { python_argv0, dash_c, spawn_code, fork_flag, NULL };
    char *main_argv[] = { python_argv0, script, NULL };
    struct hd_process processes[] = {
        { .pid = 100, .ppid = 1, .argv = main_argv, .argc = 2 },
        /* a spawn child: its own command line, not its parent's */
        { .pid = 101, .ppid = 100, .argv = spawn_argv, .argc = 4, .origin_basis = HD_ORIGIN_BASIS_UNREADABLE },
        /* its child with its very command line: maybe a fork of it, which would keep it */
        { .pid = 102, .ppid = 101, .argv = spawn_argv, .argc = 4, .origin_basis = HD_ORIGIN_BASIS_UNREADABLE },
    };
    struct hd_snapshot snapshot = { .processes = processes, .nprocesses = 3 };
    probe_refine_origins(&snapshot);
    cr_assert_eq(processes[1].origin, HD_ORIGIN_SPAWN);
    cr_assert_eq(processes[1].python_role, HD_PYTHON_ROLE_SPAWN_CHILD);
    cr_assert_eq(processes[2].origin, HD_ORIGIN_UNKNOWN, "not called spawn on its parent's command line");
    cr_assert_eq(processes[2].python_role, HD_PYTHON_ROLE_NONE);
    cr_assert_eq(processes[0].python_role, HD_PYTHON_ROLE_MAIN);
}
