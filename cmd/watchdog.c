/* The --timeout backstops: SIGALRM and the watchdog thread (watchdog.h). */
#include "watchdog.h"

#include "probe.h"
#include "exit_codes.h"
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

double hangdoc_monotonic_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* ---- SIGALRM ------------------------------------------------------------------------------------------------ */

static double alarm_deadline; /* 0: not armed */

/* Let go of any stopped thread (the kernel would on exit too), say why, leave. */
static void deadline_passed(int signal_number)
{
    (void)signal_number;
    probe_release_stopped();
    static const char message[] = "hangdoc: gave up: --timeout passed before the report was done\n";
    ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    _exit(EXIT_INTERNAL);
}

/* alarm() for `deadline`, in whole seconds rounded up (never 0, which would mean none). */
static void set_alarm(double deadline)
{
    double left_ms = (deadline - hangdoc_monotonic_now()) * 1000;
    unsigned milliseconds = left_ms < 1 ? 1 : left_ms > (double)UINT_MAX ? UINT_MAX : (unsigned)left_ms;
    alarm(hangdoc_deadline_seconds(milliseconds));
}

void hangdoc_alarm_arm(double deadline)
{
    if (deadline <= 0)
        return;
    struct sigaction action = { .sa_handler = deadline_passed };
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, NULL);
    alarm_deadline = deadline;
    set_alarm(deadline);
}

/* ---- the watchdog ------------------------------------------------------------------------------------------- */

/* When it acts, in nanoseconds of CLOCK_MONOTONIC; moved later by hangdoc_backstops_postpone(). */
static _Atomic int64_t watchdog_deadline_ns;
static bool watchdog_started;

static struct timespec timespec_of(int64_t nanoseconds)
{
    return (struct timespec){ .tv_sec = (time_t)(nanoseconds / 1000000000), .tv_nsec = (long)(nanoseconds % 1000000000) };
}

static void *watch(void *argument)
{
    (void)argument;
    int64_t until;
    /* each wake-up looks again: the deadline may have been put off meanwhile */
    do {
        until = atomic_load(&watchdog_deadline_ns);
        struct timespec wake = timespec_of(until);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL) == EINTR)
            ;
    } while (atomic_load(&watchdog_deadline_ns) > until);
    static const char message[] = "hangdoc: gave up: --timeout passed while a step could not be interrupted "
                                  "(a file that does not answer?); every stopped process is let go on exit\n";
    ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    _exit(EXIT_INTERNAL); /* exit_group(): the kernel detaches every tracee */
}

static int64_t watchdog_time_ns(double deadline)
{
    return (int64_t)(deadline * 1e9) + (int64_t)HANGDOC_WATCHDOG_GRACE_MS * 1000000;
}

bool hangdoc_watchdog_start(double deadline)
{
    if (deadline <= 0)
        return true;
    atomic_store(&watchdog_deadline_ns, watchdog_time_ns(deadline));
    /* the thread takes no signal: SIGALRM, SIGINT and the rest stay with the thread that can handle them */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    pthread_t thread;
    watchdog_started = pthread_create(&thread, &attributes, watch, NULL) == 0;
    pthread_attr_destroy(&attributes);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return watchdog_started;
}

void hangdoc_backstops_postpone(double deadline)
{
    if (alarm_deadline > 0 && deadline > alarm_deadline) {
        alarm_deadline = deadline;
        set_alarm(deadline);
    }
    int64_t later = watchdog_time_ns(deadline);
    if (watchdog_started && later > atomic_load(&watchdog_deadline_ns))
        atomic_store(&watchdog_deadline_ns, later);
}
