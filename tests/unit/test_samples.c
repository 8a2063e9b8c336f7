/* A thread's samples folded (analysis/samples.h), over sample histories stated as probe/ would have read them. */
#include "samples.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* Thread 500 asleep in a futex wait at 0x7f0000000040 in `samples` samples, each a copy of the last. */
static struct hd_snapshot *asleep(unsigned samples, struct hd_thread **thread)
{
    struct hd_snapshot *snapshot = new_snapshot(500);
    snapshot->samples = samples;
    add_process(snapshot, 500, 1, HD_ORIGIN_EXEC, 1);
    *thread = thread_of(snapshot, 500);
    asleep_in_futex(*thread, 0x7f0000000040);
    (*thread)->syscall.nr = 202;
    (*thread)->syscall.args[0] = 0x7f0000000040;
    (*thread)->switches_known = true;
    (*thread)->voluntary_switches = 40;
    (*thread)->cpu_time_ns = 10000000;
    earlier_samples(snapshot, *thread);
    return snapshot;
}

static struct report_history fold(const struct hd_thread *thread)
{
    struct report_history history;
    memset(&history, 0xa5, sizeof history); /* every field must be written */
    report_fold_samples(thread, &history);
    return history;
}

Test(samples, the_same_wait_in_every_sample_is_no_progress)
{
    struct hd_thread *thread;
    struct hd_snapshot *snapshot = asleep(4, &thread);
    struct report_history history = fold(thread);
    cr_assert_not(history.progressing);
    cr_assert_not(history.syscall_changed);
    cr_assert_eq(history.samples_seen, 4);
    cr_assert_eq(history.samples_on_this_futex, 4);
    cr_assert_eq(history.samples_in_state_r, 0);
    cr_assert_eq(history.cpu_delta_ns, 0);
    cr_assert_eq(history.voluntary_switches_delta, 0);
    cr_assert_eq(history.earlier_futex, &thread->earlier[2], "the latest earlier futex wait");
    cr_assert_eq(history.leaf_samples, 0);
    cr_assert_not(history.leaf_same);
    hd_snapshot_free(snapshot);
}

Test(samples, cpu_switches_or_a_new_call_are_progress)
{
    struct hd_thread *thread;
    struct hd_snapshot *snapshot = asleep(3, &thread);
    thread->earlier[0].cpu_time_ns -= 30000000;
    struct report_history history = fold(thread);
    cr_assert(history.progressing);
    cr_assert_eq(history.cpu_delta_ns, 30000000);
    thread->earlier[0].cpu_time_ns = thread->cpu_time_ns;
    thread->earlier[1].syscall.args[1] = 7; /* another call */
    history = fold(thread);
    cr_assert(history.progressing);
    cr_assert(history.syscall_changed);
    hd_snapshot_free(snapshot);
}

/* The history that made a deadlocked thread look like a waker: an earlier diagnosis's stop ended its wait, and
 * the first sample caught it on a CPU on its way back into the very same call, with one switch and no more CPU
 * than a wake-up takes. */
Test(samples, caught_on_its_way_back_into_the_same_wait_is_no_progress)
{
    struct hd_thread *thread;
    struct hd_snapshot *snapshot = asleep(3, &thread);
    thread->earlier[0].state = 'R';
    thread->earlier[0].syscall.state = HD_SYSCALL_RUNNING;
    thread->earlier[0].cpu_time_ns -= 300000;
    thread->earlier[0].voluntary_switches -= 1;
    thread->earlier[1].voluntary_switches -= 1;
    thread->earlier[1].cpu_time_ns -= 100000;
    struct report_history history = fold(thread);
    cr_assert_not(history.progressing, "only the way back into the same wait");
    cr_assert(history.syscall_changed);
    /* the same, but it used 5 ms of CPU on the way: it did something */
    thread->earlier[0].cpu_time_ns -= 5000000;
    history = fold(thread);
    cr_assert(history.progressing);
    hd_snapshot_free(snapshot);
}

/* A wait resumed through restart_syscall after a stop keeps the futex's address in its first argument. */
Test(samples, a_restarted_futex_wait_is_at_the_same_futex)
{
    struct hd_thread *thread;
    struct hd_snapshot *snapshot = asleep(3, &thread);
    thread->earlier[1].wait_kind = HD_WAIT_OTHER;
    thread->earlier[1].restart = true;
    thread->earlier[1].syscall.nr = 219;
    cr_assert_eq(fold(thread).samples_on_this_futex, 3);
    thread->earlier[1].restart = false;
    cr_assert_eq(fold(thread).samples_on_this_futex, 2);
    hd_snapshot_free(snapshot);
}

Test(samples, a_sample_that_did_not_see_the_thread_is_not_counted)
{
    struct hd_thread *thread;
    struct hd_snapshot *snapshot = asleep(3, &thread);
    thread->earlier[0] = (struct hd_thread_sample){ .present = false, .cpu_time_ns = 1 };
    struct report_history history = fold(thread);
    cr_assert_eq(history.samples_seen, 2);
    cr_assert_not(history.progressing, "a thread not there is no change");
    hd_snapshot_free(snapshot);
}

/* Where the leaf was: `name` as the report says it; for an unnamed one, "module+0xoffset" and the module and
 * offset apart. */
static void put_leaf(char **function, char **module, uint64_t *offset, const char *name)
{
    free(*function), free(*module);
    *function = strdup(name);
    *module = NULL;
    *offset = 0;
    const char *plus = strstr(name, "+0x");
    if (plus) {
        *module = strndup(name, (size_t)(plus - name));
        *offset = strtoull(plus + 3, NULL, 16);
    }
}

static void sample_leaf(struct hd_thread_sample *sample, const char *name)
{
    put_leaf(&sample->leaf_function, &sample->leaf_module, &sample->leaf_module_offset, name);
}

static void last_leaf(struct hd_thread *thread, const char *name)
{
    put_leaf(&thread->leaf_function, &thread->leaf_module, &thread->leaf_module_offset, name);
}

/* Unnamed leaves (a stripped library's spin loop) within 4 KiB of each other in one module are one place; a named
 * function elsewhere is another, and so is the same offset in another module. */
Test(samples, leaves_in_one_place)
{
    struct hd_thread *thread;
    struct hd_snapshot *snapshot = asleep(3, &thread);
    sample_leaf(&thread->earlier[0], "/usr/lib/libopenblas.so.0+0x1b640");
    sample_leaf(&thread->earlier[1], "/usr/lib/libopenblas.so.0+0x1b9f0");
    last_leaf(thread, "/usr/lib/libopenblas.so.0+0x1b6a8");
    struct report_history history = fold(thread);
    cr_assert_eq(history.leaf_samples, 3);
    cr_assert(history.leaf_same);
    cr_assert_str_eq(history.leaf_function, "/usr/lib/libopenblas.so.0+0x1b6a8", "the last one seen");
    last_leaf(thread, "/usr/lib/libopenblas.so.0+0x3c000");
    cr_assert_not(fold(thread).leaf_same, "kilobytes apart: a computation moving on");
    last_leaf(thread, "/usr/lib/libgomp.so.1+0x1b6a8");
    cr_assert_not(fold(thread).leaf_same, "another module");
    last_leaf(thread, "dgemm_kernel");
    cr_assert_not(fold(thread).leaf_same);
    sample_leaf(&thread->earlier[0], "dgemm_kernel");
    sample_leaf(&thread->earlier[1], "dgemm_kernel");
    cr_assert(fold(thread).leaf_same, "one named function");
    hd_snapshot_free(snapshot);
}

Test(samples, a_zombie_in_every_sample)
{
    struct hd_snapshot *snapshot = new_snapshot(600);
    struct hd_process *process = add_process(snapshot, 600, 1, HD_ORIGIN_FORKED, 1);
    process->zombie = true;
    earlier_zombie(snapshot, process, true);
    cr_assert(report_zombie_throughout(process));
    process->earlier[0].zombie = false;
    cr_assert_not(report_zombie_throughout(process), "alive in an earlier sample");
    process->earlier[0] = (struct hd_process_sample){ .present = false };
    cr_assert_not(report_zombie_throughout(process), "not seen in an earlier sample");
    hd_snapshot_free(snapshot);
}
