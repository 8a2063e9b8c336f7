/* A signal handler that takes a lock the code it interrupted holds (issue 40). The scenario runs in a child, which
 * cannot say it is in position once it waits for itself; the parent watches it and says so.
 *   signal_reentry localtime  SIGALRM every 50 us, whose handler calls localtime() while the main loop calls it
 *                             too: the handler waits for glibc's time zone lock, which the interrupted
 *                             localtime() holds (a lock that records no owner)
 *   signal_reentry mutex      the main loop holds the program's log mutex when SIGALRM comes, and the handler
 *                             logs: a pthread mutex whose owner is the thread itself
 *   signal_reentry elsewhere  the look-alike: the handler waits for a mutex a worker thread holds while it sleeps
 *                             in short naps, and will let go: not hung
 * ready <child pid> [<worker tid>] */
#include "fixture.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/time.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t alarmed;
static volatile unsigned long *progress; /* shared with the parent: the main loop's count */
static volatile long sink;
static volatile pid_t worker_tid;

static void log_line(const char *text)
{
    pthread_mutex_lock(&log_lock);
    sink += (long)strlen(text);
    pthread_mutex_unlock(&log_lock);
}

static void on_alarm_localtime(int signal_number)
{
    (void)signal_number;
    time_t now = time(NULL);
    struct tm *parts = localtime(&now);
    sink += parts ? parts->tm_sec : 0;
}

static void on_alarm_log(int signal_number)
{
    (void)signal_number;
    alarmed = 1;
    log_line("tick");
}

static void run_localtime(void)
{
    signal(SIGALRM, on_alarm_localtime);
    struct itimerval often = { { 0, 50 }, { 0, 50 } };
    setitimer(ITIMER_REAL, &often, NULL);
    for (;;) {
        time_t now = time(NULL);
        struct tm *parts = localtime(&now);
        sink += parts ? parts->tm_min : 0;
        (*progress)++;
    }
}

static void run_mutex(void)
{
    signal(SIGALRM, on_alarm_log);
    pthread_mutex_lock(&log_lock); /* writing a long log record when the timer fires */
    struct itimerval once = { { 0, 0 }, { 0, 20000 } };
    setitimer(ITIMER_REAL, &once, NULL);
    while (!alarmed)
        (*progress)++;
    pthread_mutex_unlock(&log_lock);
    _exit(1); /* never reached: the handler waits for the lock held above */
}

static void *hold_in_naps(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "holder");
    worker_tid = fixture_gettid();
    for (;;) {
        pthread_mutex_lock(&log_lock);
        for (int nap = 0; nap < 600; nap++) /* a minute's work, in short naps: it will let go */
            usleep(100000);
        pthread_mutex_unlock(&log_lock);
        usleep(1000);
    }
    return NULL;
}

static void run_elsewhere(int ready_fd)
{
    pthread_t holder;
    pthread_create(&holder, NULL, hold_in_naps, NULL);
    while (!worker_tid || pthread_mutex_trylock(&log_lock) == 0) {
        if (worker_tid)
            pthread_mutex_unlock(&log_lock);
        usleep(1000);
    }
    if (write(ready_fd, (const void *)&worker_tid, sizeof worker_tid) != sizeof worker_tid)
        _exit(1);
    signal(SIGALRM, on_alarm_log);
    raise(SIGALRM);
    _exit(0);
}

/* Waits until the child's main loop stopped counting and its thread sleeps on a futex. */
static void wait_stuck(pid_t child)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    unsigned long seen = *progress;
    for (int still = 0; still < 30;) {
        if (fixture_elapsed_ms(&started) > FIXTURE_POSITION_TIMEOUT_MS)
            _exit(1);
        usleep(10000);
        unsigned long now = *progress;
        still = now == seen ? still + 1 : 0;
        seen = now;
    }
    fixture_wait_for_wchan(child, child, "futex");
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 64;
    const char *mode = argv[1];
    progress = mmap(NULL, sizeof *progress, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (progress == MAP_FAILED)
        return 1;
    int tid_pipe[2];
    if (pipe(tid_pipe) != 0)
        return 1;
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        fixture_die_with_parent(parent);
        close(FIXTURE_READY_FD);
        prctl(PR_SET_NAME, "reentrant");
        if (strcmp(mode, "localtime") == 0)
            run_localtime();
        else if (strcmp(mode, "mutex") == 0)
            run_mutex();
        else if (strcmp(mode, "elsewhere") == 0)
            run_elsewhere(tid_pipe[1]);
        _exit(64);
    }
    if (strcmp(mode, "elsewhere") == 0) {
        pid_t holder = 0;
        if (read(tid_pipe[0], &holder, sizeof holder) != sizeof holder)
            return 1;
        fixture_wait_for_wchan(child, child, "futex");
        fixture_ready("ready %d %d", (int)child, (int)holder);
    } else {
        wait_stuck(child);
        fixture_ready("ready %d", (int)child);
    }
    int status;
    waitpid(child, &status, 0);
    return 0;
}
