/* Unit tests for finding a process's children from its threads' children files (probe/children.h), on real
 * processes: this test's own children. */
#include <criterion/criterion.h>

#include "children.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t start_sleeper(void)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    return pid;
}

static void end_child(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static bool contains(const pid_t *pids, size_t count, pid_t pid)
{
    for (size_t i = 0; i < count; i++)
        if (pids[i] == pid)
            return true;
    return false;
}

struct forking_thread {
    pthread_barrier_t forked;   /* the child exists */
    pthread_barrier_t released; /* the test has read the children files */
    pid_t child;
};

/* Forks, then stays alive until released, so that its child is listed under this thread's own file. */
static void *fork_from_thread(void *argument)
{
    struct forking_thread *forking = argument;
    forking->child = start_sleeper();
    pthread_barrier_wait(&forking->forked);
    pthread_barrier_wait(&forking->released);
    return NULL;
}

Test(children, files_exist_on_this_kernel)
{
    /* Debian's kernel and most others have CONFIG_PROC_CHILDREN; where one does not, proctree.c lists every
     * process instead and the tests below say nothing */
    if (!probe_children_files_exist())
        cr_skip_test("this kernel has no /proc/<pid>/task/<tid>/children");
}

/* A child forked by a thread other than the main one is listed under that thread only: every thread's file is
 * read, and the result is sorted without duplicates. */
Test(children, children_of_every_thread_sorted)
{
    if (!probe_children_files_exist())
        cr_skip_test("no children files");
    pid_t first = start_sleeper();
    struct forking_thread forking = { .child = 0 };
    pthread_barrier_init(&forking.forked, NULL, 2);
    pthread_barrier_init(&forking.released, NULL, 2);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, fork_from_thread, &forking), 0);
    pthread_barrier_wait(&forking.forked);
    pid_t from_thread = forking.child;
    pid_t last = start_sleeper();
    pid_t *pids = NULL;
    size_t count = 0, cap = 0;
    bool ok = probe_read_children(getpid(), &pids, &count, &cap);
    pthread_barrier_wait(&forking.released);
    pthread_join(thread, NULL);
    end_child(first);
    end_child(from_thread);
    end_child(last);
    cr_assert(ok);
    cr_assert(contains(pids, count, first), "first %d not among %zu", (int)first, count);
    cr_assert(contains(pids, count, from_thread), "from_thread %d not among %zu", (int)from_thread, count);
    cr_assert(contains(pids, count, last), "last %d", (int)last);
    for (size_t i = 1; i < count; i++)
        cr_assert_lt(pids[i - 1], pids[i]);
    free(pids);
}

Test(children, a_process_that_is_gone_has_none)
{
    pid_t pid = start_sleeper();
    end_child(pid);
    pid_t *pids = NULL;
    size_t count = 0, cap = 0;
    cr_assert(probe_read_children(pid, &pids, &count, &cap));
    cr_assert_eq(count, 0);
    free(pids);
}

/* A live process without children leaves an empty list empty (and unallocated). */
Test(children, a_process_without_children_has_none)
{
    pid_t pid = start_sleeper();
    pid_t *pids = NULL;
    size_t count = 0, cap = 0;
    bool ok = probe_read_children(pid, &pids, &count, &cap);
    end_child(pid);
    cr_assert(ok);
    cr_assert_eq(count, 0);
    cr_assert_null(pids);
}

Test(children, appends_after_what_is_there)
{
    if (!probe_children_files_exist())
        cr_skip_test("no children files");
    pid_t child = start_sleeper();
    pid_t *pids = malloc(sizeof *pids);
    cr_assert_not_null(pids);
    pids[0] = 999999;
    size_t count = 1, cap = 1;
    bool ok = probe_read_children(getpid(), &pids, &count, &cap);
    end_child(child);
    cr_assert(ok);
    cr_assert_eq(pids[0], 999999);
    cr_assert(contains(pids + 1, count - 1, child));
    free(pids);
}
