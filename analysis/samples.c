/* Folding a thread's samples (samples.h). */
#include "samples.h"

#include <stdlib.h>
#include <string.h>

/* What waking up and going back to sleep costs at most: a futex wake, the return to user space, the new call. A
 * loaded machine stretches the time it takes, not the CPU it uses. */
#define WAKE_UP_CPU_NS 2000000ULL
#define WAKE_UP_VOLUNTARY_SWITCHES 2

/* How far apart two stops in one unnamed function may lie: a stripped library's static spin loop (OpenBLAS's,
 * waiting inside an OpenMP region) is caught at a different instruction each time, all within a few hundred
 * bytes; a computation moves through functions kilobytes apart. */
#define UNNAMED_LEAF_SPAN 4096

static bool same_syscall(const struct hd_syscall *a, const struct hd_syscall *b)
{
    /* A thread that is "running" twice did not stay in one call, but it ran: CPU time says so. */
    return a->state == b->state && a->nr == b->nr && memcmp(a->args, b->args, sizeof a->args) == 0;
}

/* Between two samples that both saw the thread: did it progress, and did its call change? */
static void compare(const struct hd_thread_sample *before, const struct hd_thread_sample *seen,
                    struct report_history *out)
{
    /* switch counts only where both reads have them: a last sample cut short by the deadline has not */
    bool switches_known = seen->switches_known && before->switches_known;
    if (seen->cpu_time_ns != before->cpu_time_ns ||
        (switches_known && (seen->voluntary_switches != before->voluntary_switches ||
                            seen->involuntary_switches != before->involuntary_switches)))
        out->progressing = true;
    /* an unread system call (the last sample's, cut short by the deadline) is no change */
    bool syscalls_read = seen->syscall.state != HD_SYSCALL_UNREAD && before->syscall.state != HD_SYSCALL_UNREAD;
    if (syscalls_read && !same_syscall(&seen->syscall, &before->syscall)) {
        out->syscall_changed = true;
        out->progressing = true;
    }
}

/* In a futex wait at the address of the last sample's futex wait. An earlier sample reads no wait channel, so a
 * wait that a stop (an earlier diagnosis's) made the kernel resume through restart_syscall is not decoded there:
 * its argument registers are still the futex call's, the address first. */
static bool on_the_same_futex(const struct hd_thread_sample *sample, const struct hd_thread *last)
{
    if (sample->syscall.state != HD_SYSCALL_IN || last->syscall.state != HD_SYSCALL_IN ||
        last->wait.kind != HD_WAIT_FUTEX)
        return false;
    if (sample->wait_kind == HD_WAIT_FUTEX)
        return sample->wait_address == last->wait.address;
    return sample->restart && sample->syscall.args[0] == last->wait.address;
}

/* Was the thread, at an earlier sample, in the last sample's call with the same arguments, or on its way there:
 * on a CPU, between two calls, or resuming it through restart_syscall (which keeps a futex's address)? */
static bool on_the_way_to_the_same_call(const struct hd_thread_sample *sample, const struct hd_thread *last)
{
    switch (sample->syscall.state) {
    case HD_SYSCALL_RUNNING:
    case HD_SYSCALL_NONE:
        return true;
    case HD_SYSCALL_IN:
        if (same_syscall(&sample->syscall, &last->syscall))
            return true;
        return sample->restart && last->wait.kind == HD_WAIT_FUTEX && sample->syscall.args[0] == last->syscall.args[0];
    case HD_SYSCALL_UNREAD:
        return false;
    }
    return false;
}

/* A thread caught on a CPU (or between calls) on its way back into the very wait the last sample found it in: an
 * earlier diagnosis's stop ended its wait, and a loaded machine let it run again only a moment ago; or a spurious
 * wake-up. It changed calls and counted a switch, but made no progress: nothing but the way back into the same call
 * with the same arguments, and no more CPU than a wake-up takes. Without this, a deadlocked thread seen so in the
 * second of two diagnoses counts as running, a possible waker of its partners. */
static bool only_back_into_the_same_wait(const struct hd_thread *last, const struct hd_thread_sample *first)
{
    if (last->syscall.state != HD_SYSCALL_IN || last->state == 'R' || !first->switches_known ||
        !last->switches_known || last->cpu_time_ns - first->cpu_time_ns > WAKE_UP_CPU_NS ||
        last->voluntary_switches - first->voluntary_switches > WAKE_UP_VOLUNTARY_SWITCHES)
        return false;
    bool away = false;
    for (size_t s = 0; s < last->nearlier; s++) {
        const struct hd_thread_sample *sample = &last->earlier[s];
        if (!sample->present)
            continue;
        if (!on_the_way_to_the_same_call(sample, last))
            return false;
        away |= sample->state == 'R' || sample->syscall.state != HD_SYSCALL_IN ||
                !same_syscall(&sample->syscall, &last->syscall);
    }
    return away;
}

/* Two leaves in the same place: the same function, or, where no symbol names them, the same module within
 * UNNAMED_LEAF_SPAN bytes. */
static bool same_leaf(const struct hd_thread_sample *a, const struct hd_thread_sample *b)
{
    if (a->leaf_module && b->leaf_module) {
        uint64_t x = a->leaf_module_offset, y = b->leaf_module_offset;
        return strcmp(a->leaf_module, b->leaf_module) == 0 && (x > y ? x - y : y - x) <= UNNAMED_LEAF_SPAN;
    }
    return !a->leaf_module && !b->leaf_module && strcmp(a->leaf_function, b->leaf_function) == 0;
}

/* The function the thread ran at in each sample that stopped it while running, and whether all are one place. */
static void fold_leaves(const struct hd_thread *thread, struct report_history *out)
{
    const struct hd_thread_sample last = hd_thread_as_sample(thread);
    const struct hd_thread_sample *first = NULL;
    out->leaf_same = true;
    for (size_t s = 0; s <= thread->nearlier; s++) {
        const struct hd_thread_sample *sample = s < thread->nearlier ? &thread->earlier[s] : &last;
        if (!sample->present || !sample->leaf_function)
            continue;
        out->leaf_samples++;
        out->leaf_function = sample->leaf_function;
        if (!first)
            first = sample;
        else
            out->leaf_same &= same_leaf(sample, first);
    }
    out->leaf_same &= out->leaf_samples > 0;
}

void report_fold_samples(const struct hd_thread *thread, struct report_history *out)
{
    *out = (struct report_history){ .progressing = thread->ended_during_read };
    const struct hd_thread_sample last = hd_thread_as_sample(thread); /* the last sample, as an earlier one */
    const struct hd_thread_sample *first = NULL, *before = NULL;
    for (size_t s = 0; s <= thread->nearlier; s++) {
        const struct hd_thread_sample *seen = s < thread->nearlier ? &thread->earlier[s] : &last;
        if (!seen->present)
            continue;
        if (before)
            compare(before, seen, out);
        else
            first = seen;
        before = seen;
        out->samples_seen++;
        out->samples_in_state_d += seen->state == 'D';
        out->samples_in_state_r += seen->state == 'R';
        out->samples_on_this_futex += on_the_same_futex(seen, thread);
    }
    if (out->progressing && only_back_into_the_same_wait(thread, first))
        out->progressing = false;
    out->cpu_delta_ns = thread->cpu_time_ns - first->cpu_time_ns;
    if (thread->switches_known && first->switches_known) {
        out->switches_delta = thread->voluntary_switches + thread->involuntary_switches - first->voluntary_switches -
                              first->involuntary_switches;
        out->voluntary_switches_delta = thread->voluntary_switches - first->voluntary_switches;
    }
    fold_leaves(thread, out);
    out->earlier_futex = hd_thread_earlier_futex(thread);
}

bool report_zombie_throughout(const struct hd_process *process)
{
    if (!process->zombie)
        return false;
    for (size_t s = 0; s < process->nearlier; s++)
        if (!process->earlier[s].present || !process->earlier[s].zombie)
            return false;
    return true;
}
