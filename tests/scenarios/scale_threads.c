/* Healthy at scale: one process of N threads (argv[1], default 10,000), N - 1 of them idle, each on a condition
 * variable of its own that nobody signals, and the main thread a waker in a timed loop that could signal any of
 * them. Threads on ownerless private futexes of a process with a thread that can run are idle, not hung.
 * ready <pid> (once every idle thread sleeps in futex(2); the test counts the threads in /proc) */
#include "scale.h"

int main(int argc, char **argv)
{
    size_t threads = scale_count_argument(argc, argv, 1, 10000, 2);
    struct scale_idle *idle = scale_start_idle(threads - 1);
    scale_wait_for_idle(idle, threads - 1);
    fixture_ready("ready %d", (int)getpid());
    scale_be_the_waker();
}
