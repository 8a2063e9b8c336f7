/* GNU OpenMP: a parallel region in the parent starts libgomp's thread pool; the forked child runs a parallel
 * region too and waits forever on the team barrier for pool threads that exist only in the parent.
 * ready <parent pid> <child pid> */
#include "fixture.h"

#include <omp.h>
#include <sys/wait.h>

static volatile int sink;

static void parallel_work(void)
{
#pragma omp parallel num_threads(2)
    sink += omp_get_thread_num();
}

int main(void)
{
    pid_t self = getpid();
    parallel_work();
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        fixture_die_with_parent(self);
        prctl(PR_SET_NAME, "omp-child");
        parallel_work();
        _exit(0);
    }
    fixture_wait_for_wchan(child, child, "futex");
    fixture_ready("ready %d %d", (int)self, (int)child);
    waitpid(child, NULL, 0);
    return 0;
}
