/* Unit tests for the list of every process (probe/process_list.h) on the real system: libproc2's list where the
 * library loads, and the /proc reader it falls back to where it does not (procps 3.3 systems, the static binary),
 * must name the same processes with the same parents. */
#include "process_list.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct probe_process_link *find(const struct probe_process_link *links, ssize_t count, pid_t pid)
{
    for (ssize_t i = 0; i < count; i++)
        if (links[i].pid == pid)
            return &links[i];
    return NULL;
}

static bool sorted_by_parent_then_pid(const struct probe_process_link *links, ssize_t count)
{
    for (ssize_t i = 1; i < count; i++)
        if (links[i - 1].ppid > links[i].ppid ||
            (links[i - 1].ppid == links[i].ppid && links[i - 1].pid >= links[i].pid))
            return false;
    return true;
}

/* This process, its parent, and a child of its own that sleeps: both lists have them, alike. */
Test(process_list, proc_gives_what_the_list_gives)
{
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    struct probe_process_link *from_proc = NULL, *listed = NULL;
    ssize_t nproc = probe_list_every_process_from_proc(&from_proc);
    ssize_t nlisted = probe_list_every_process(&listed);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_assert_gt(nproc, 2, "/proc lists this process, its parent and its child");
    cr_assert_gt(nlisted, 2);
    cr_assert(sorted_by_parent_then_pid(from_proc, nproc));
    cr_assert(sorted_by_parent_then_pid(listed, nlisted));
    const pid_t pids[] = { getpid(), getppid(), child };
    for (size_t i = 0; i < sizeof pids / sizeof pids[0]; i++) {
        const struct probe_process_link *a = find(from_proc, nproc, pids[i]), *b = find(listed, nlisted, pids[i]);
        cr_assert_not_null(a, "pid %d in /proc's list", (int)pids[i]);
        cr_assert_not_null(b, "pid %d in the list", (int)pids[i]);
        cr_assert_eq(a->ppid, b->ppid, "pid %d: the same parent", (int)pids[i]);
    }
    const struct probe_process_link *of_child = find(from_proc, nproc, child), *of_self = find(from_proc, nproc, getpid());
    cr_assert(of_child && of_child->ppid == getpid(), "the child's parent is this process");
    cr_assert(of_self && of_self->state == 'R', "the reader itself runs");
    free(from_proc);
    free(listed);
}
