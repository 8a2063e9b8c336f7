/* The snapshot's look-ups (model/snapshot.h): through the index probe_snapshot builds, and by a scan for a
 * hand-built snapshot without one or changed since; the same answers either way. */
#include "snapshot.h"

#include <criterion/criterion.h>
#include <stdlib.h>

/* Processes in tree order (not pid order), each with consecutive tids starting at its pid. */
static struct hd_snapshot *build(const pid_t *pids, const size_t *nthreads, size_t count)
{
    struct hd_snapshot *snapshot = calloc(1, sizeof *snapshot);
    cr_assert_not_null(snapshot);
    snapshot->processes = calloc(count, sizeof *snapshot->processes);
    cr_assert_not_null(snapshot->processes);
    snapshot->nprocesses = count;
    for (size_t p = 0; p < count; p++) {
        struct hd_process *process = &snapshot->processes[p];
        process->pid = pids[p];
        process->nthreads = nthreads[p];
        process->threads = calloc(nthreads[p] ? nthreads[p] : 1, sizeof *process->threads);
        cr_assert_not_null(process->threads);
        for (size_t t = 0; t < nthreads[p]; t++)
            process->threads[t].tid = pids[p] + (pid_t)t;
    }
    return snapshot;
}

static void expect_lookups(const struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        cr_assert_eq(hd_snapshot_find_process(snapshot, process->pid), process);
        for (size_t t = 0; t < process->nthreads; t++) {
            struct hd_process *owner = NULL;
            cr_assert_eq(hd_snapshot_find_thread(snapshot, process->threads[t].tid, &owner), &process->threads[t]);
            cr_assert_eq(owner, process);
            cr_assert_eq(hd_process_find_thread(process, process->threads[t].tid), &process->threads[t]);
        }
    }
    cr_assert_null(hd_snapshot_find_process(snapshot, 1));
    cr_assert_null(hd_snapshot_find_thread(snapshot, 1, NULL));
    cr_assert_null(hd_snapshot_find_thread(snapshot, 99999, NULL));
}

Test(snapshot, lookups_with_and_without_the_index_agree)
{
    const pid_t pids[] = { 500, 100, 9000, 300 };
    const size_t nthreads[] = { 3, 1, 2000, 0 };
    struct hd_snapshot *snapshot = build(pids, nthreads, 4);
    expect_lookups(snapshot); /* scans */
    cr_assert(hd_snapshot_index_build(snapshot));
    cr_assert_not_null(snapshot->index);
    expect_lookups(snapshot); /* the index */
    hd_snapshot_free(snapshot);
}

/* A process added after the index was built (its array moved or grew) is found all the same: by a scan. */
Test(snapshot, a_snapshot_changed_since_its_index_is_scanned)
{
    const pid_t pids[] = { 700, 200 };
    const size_t nthreads[] = { 2, 2 };
    struct hd_snapshot *snapshot = build(pids, nthreads, 2);
    cr_assert(hd_snapshot_index_build(snapshot));
    struct hd_process *grown = reallocarray(snapshot->processes, 3, sizeof *grown);
    cr_assert_not_null(grown);
    snapshot->processes = grown;
    snapshot->processes[2] = (struct hd_process){ .pid = 50, .nthreads = 1, .threads = calloc(1, sizeof(struct hd_thread)) };
    snapshot->processes[2].threads[0].tid = 51;
    snapshot->nprocesses = 3;
    cr_assert_eq(hd_snapshot_find_process(snapshot, 50), &snapshot->processes[2]);
    cr_assert_eq(hd_snapshot_find_thread(snapshot, 51, NULL), &snapshot->processes[2].threads[0]);
    cr_assert_eq(hd_snapshot_find_process(snapshot, 700), &snapshot->processes[0]);
    hd_snapshot_free(snapshot);
}
