/* glibc does not reset its time-zone lock (tzset_lock, time/tzset.c) at fork(): a logging thread that formats
 * times with localtime_r() holds it now and then, and a child forked at such a moment waits for ever in its own
 * first localtime_r(). The lock is libc's, not atexit's: the report must say so (issue 13).
 * The parent forks until one child fails to finish within 200 ms.
 * ready <parent pid> <hung child pid> <forks it took> */
#include "fixture.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

static volatile int keep_logging = 1;

static void *log_times(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "logger");
    struct tm broken_down;
    time_t now = time(NULL);
    while (keep_logging)
        localtime_r(&now, &broken_down);
    for (;;)
        pause();
    return NULL;
}

static void convert_one(void)
{
    struct tm broken_down;
    time_t now = time(NULL);
    localtime_r(&now, &broken_down);
}

int main(void)
{
    /* a zone read from a file keeps the lock longer than UTC would (UTC when the file is missing: still the lock) */
    setenv("TZ", "Europe/Paris", 1);
    tzset();
    pthread_t thread;
    if (pthread_create(&thread, NULL, log_times, NULL) != 0)
        return 1;
    int forks;
    pid_t child = fixture_fork_until_one_hangs(convert_one, 20000, &forks);
    keep_logging = 0;
    if (child < 0)
        return 3; /* never reproduced */
    fixture_ready("ready %d %d %d", (int)getpid(), (int)child, forks);
    waitpid(child, NULL, 0);
    return 0;
}
