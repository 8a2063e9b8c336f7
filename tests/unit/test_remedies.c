/* The remedies that depend on the process (analysis/remedies.c, and the catalogue's rows they come from): Python's
 * start method, libc's own locks, OpenMP, process pools; over hand-built snapshots (snapshot_builder.h). */
#include "analysis_checks.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

/* ---- specific remedies ------------------------------------------------------------------------------------------- */

Test(remedies, python_start_method_only_for_a_python_child)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *inherited = the_finding(analysis, "inherited-lock");
    cr_assert_eq(remedies_containing(inherited, "set_start_method"), 0, "not Python: no Python remedy");
    cr_assert_eq(inherited->nremedies, 1u);
    report_analysis_free(analysis);

    struct hd_process *child = &snapshot->processes[1];
    child->exe = strdup("/usr/bin/python3.11");
    analysis = analyze(snapshot);
    inherited = the_finding(analysis, "inherited-lock");
    cr_assert_eq(remedies_containing(inherited, "if __name__ == '__main__': "
                                                "torch.multiprocessing.set_start_method('spawn', force=True)"), 1);
    cr_assert_eq(remedies_containing(inherited, "context has already been set"), 1, "why not in Jupyter");
    cr_assert_eq(remedies_containing(inherited, "no lambdas"), 1, "what must pickle");
    cr_assert_eq(remedies_containing(inherited, "imports the main module again"), 1, "the re-import pitfall");
    cr_assert_eq(remedies_containing(inherited, "atexit"), 0);
    report_analysis_free(analysis);

    free(child->exe);
    child->exe = strdup("/opt/app/bin/server"); /* an embedding program: libpython mapped */
    add_mapping(child, 0x7f0000000000, 0x7f0000100000, "r-xp", "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0");
    analysis = analyze(snapshot);
    cr_assert_eq(remedies_containing(the_finding(analysis, "inherited-lock"), "torch.multiprocessing"), 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

/* Forked child 1600 of 1500, its one thread asleep forever on a private futex at `address`. */
static struct hd_snapshot *child_asleep_at(uint64_t address)
{
    struct hd_snapshot *snapshot = new_snapshot(1500);
    add_process(snapshot, 1500, 1, HD_ORIGIN_EXEC, 1);
    add_process(snapshot, 1600, 1500, HD_ORIGIN_FORKED, 1);
    in_wait4(thread_of(snapshot, 1500), 1600);
    asleep_in_futex(thread_of(snapshot, 1600), address);
    add_futex_memory(&snapshot->processes[0], address); /* the child got that memory at fork() */
    return snapshot;
}

/* A lock in libc's data, and no stack to tell which of libc's locks: libc's own remedy, not another runtime's (the
 * function that names the lock: test_catalogue.c) */
Test(remedies, libc_when_the_lock_lies_in_libc_data)
{
    struct hd_snapshot *snapshot = child_asleep_at(0x7fc15fe9d2c8);
    struct hd_process *child = &snapshot->processes[1];
    add_mapping(child, 0x7fc15fe9b000, 0x7fc15fe9d000, "rw-p", "/usr/lib/x86_64-linux-gnu/libc.so.6");
    add_mapping(child, 0x7fc15fe9d000, 0x7fc15feaa000, "rw-p", NULL); /* libc's .bss */
    add_library(child, 0x7fc15fe9b000, 0x7fc15fe9d000, "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *orphaned = the_finding(analysis, "orphaned-wait");
    cr_assert_eq(remedies_containing(orphaned, "The lock is glibc's own: fork only before the program starts "
                                               "threads"), 1);
    cr_assert_eq(remedies_containing(orphaned, "atexit"), 0, "no frame names the atexit lock");
    cr_assert_eq(remedies_containing(orphaned, "OpenMP"), 0, "libgomp is not mapped");
    cr_assert_eq(remedies_containing(orphaned, "set_start_method"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);

    snapshot = child_asleep_at(0x55d2a0c4e040); /* the heap, after the program's own data */
    child = &snapshot->processes[1];
    add_mapping(child, 0x55d2a0c00000, 0x55d2a0c4e000, "rw-p", "/usr/bin/app");
    add_mapping(child, 0x55d2a0c4e000, 0x55d2a0c6f000, "rw-p", "[heap]");
    analysis = analyze(snapshot);
    cr_assert_eq(remedies_containing(the_finding(analysis, "orphaned-wait"), "atexit"), 0);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(remedies, openmp_choices_when_the_child_maps_libgomp)
{
    struct hd_snapshot *snapshot = child_asleep_at(0x55d2a0c4e040);
    add_mapping(&snapshot->processes[1], 0x7f1000000000, 0x7f1000040000, "r-xp",
                "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0");
    add_library(&snapshot->processes[1], 0x7f1000000000, 0x7f1000040000, "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0", NULL);
    thread_of(snapshot, 1600)->syscall.program_counter = 0x7f100001b64e; /* libgomp makes its futex calls itself */
    struct report_analysis *analysis = analyze(snapshot);
    const struct report_finding *orphaned = the_finding(analysis, "orphaned-wait");
    /* the catalogue's row for GNU OpenMP (analysis/catalogue.c) */
    cr_assert_eq(remedies_containing(orphaned, "OMP_NUM_THREADS=1"), 1);
    cr_assert_eq(remedies_containing(orphaned, "LLVM libomp or Intel libiomp5"), 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}

Test(remedies, python_pool_advice_when_the_parent_of_a_dead_worker_is_python)
{
    struct hd_snapshot *snapshot = parent_polling_a_dead_worker(SIGKILL);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert_eq(remedies_containing(the_finding(analysis, "worker-died"), "ProcessPoolExecutor"), 0);
    report_analysis_free(analysis);
    strcpy(snapshot->processes[0].comm, "python3");
    analysis = analyze(snapshot);
    cr_assert_eq(remedies_containing(the_finding(analysis, "worker-died"), "BrokenProcessPool"), 1);
    report_analysis_free(analysis);
    hd_snapshot_free(snapshot);
}
