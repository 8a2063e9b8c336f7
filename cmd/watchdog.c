/* The --timeout watchdog thread (watchdog.h). */
#include "watchdog.h"

#include "exit_codes.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static struct timespec watchdog_deadline;

static void *watch(void *argument)
{
    (void)argument;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &watchdog_deadline, NULL) == EINTR)
        ;
    static const char message[] = "hangdoc: gave up: --timeout passed while a step could not be interrupted "
                                  "(a file that does not answer?); every stopped process is let go on exit\n";
    ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    _exit(EXIT_INTERNAL); /* exit_group(): the kernel detaches every tracee */
}

bool hangdoc_watchdog_start(unsigned timeout_ms)
{
    if (timeout_ms == 0)
        return true;
    clock_gettime(CLOCK_MONOTONIC, &watchdog_deadline);
    uint64_t total_ms = (uint64_t)timeout_ms + HANGDOC_WATCHDOG_GRACE_MS;
    watchdog_deadline.tv_sec += (time_t)(total_ms / 1000);
    watchdog_deadline.tv_nsec += (long)(total_ms % 1000) * 1000000;
    if (watchdog_deadline.tv_nsec >= 1000000000) {
        watchdog_deadline.tv_sec++;
        watchdog_deadline.tv_nsec -= 1000000000;
    }
    /* the thread takes no signal: SIGALRM, SIGINT and the rest stay with the thread that can handle them */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    pthread_t thread;
    bool started = pthread_create(&thread, &attributes, watch, NULL) == 0;
    pthread_attr_destroy(&attributes);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return started;
}
