/* A busy C target for the kill-at-random stress trials (kill_at_random.c): every kind of thread hangdoc stops and
 * must let go unharmed, each counting its rounds in the counter file (counter_file.h) kill_at_random reads.
 *
 *   spinner      computes in bursts (5 ms of work, then a 5 ms sleep: busy, yet a moderate load on a shared
 *                2-CPU machine); a stop mostly lands in user code
 *   sleeper      nanosleep() 1 ms at a time: a stop interrupts the system call, which must restart
 *   cond waiter  pthread_cond_timedwait() with a 2 ms timeout on a condition nobody signals (a futex wait)
 *   main         forks a child every 20 ms, and reaps it with waitpid(): its SIGCHLD reaches a seized thread as a
 *                signal-delivery-stop, which must be given back (or simply ignored, as SIGCHLD is by default)
 *   children     each forked child counts once, computes for 1 ms and exits
 *
 * usage: busy_target COUNTER_FILE; ready line on fd 3 (scenarios/fixture.h): ready <pid>
 */
#include "fixture.h"
#include "counter_file.h"

#include <pthread.h>

#define SPINNERS 2
#define SLEEPERS 2
#define SPIN_BURST_MS 5
#define FORK_EVERY_MS 20

static struct counter_file *counters;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;

static void sleep_ms(long milliseconds)
{
    struct timespec pause = { milliseconds / 1000, (milliseconds % 1000) * 1000000 };
    nanosleep(&pause, NULL);
}

/* Counts as fast as it can for `milliseconds` (the clock read once every 4096 rounds). */
static void spin_for(struct counter_line *counter, long milliseconds)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    do
        for (int round = 0; round < 4096; round++)
            counter_add(counter);
    while (fixture_elapsed_ms(&started) < milliseconds);
}

static void *spinner(void *counter)
{
    for (;;) {
        spin_for(counter, SPIN_BURST_MS);
        sleep_ms(SPIN_BURST_MS);
    }
    return NULL;
}

static void *sleeper(void *counter)
{
    for (;;) {
        sleep_ms(1);
        counter_add(counter);
    }
    return NULL;
}

static void *cond_waiter(void *counter)
{
    pthread_mutex_lock(&mutex);
    for (;;) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_nsec += 2000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&never_signalled, &mutex, &deadline);
        counter_add(counter);
    }
    return NULL;
}

/* The next free counter, named; the main thread claims every one before any thread starts. */
static struct counter_line *claim_counter(const char *name)
{
    if (counters->ncounters >= COUNTERS_MAX)
        _exit(1);
    struct counter_line *line = &counters->counters[counters->ncounters++];
    snprintf(line->name, sizeof line->name, "%s", name);
    return line;
}

/* The kinds of thread, each started `count` times with a counter of its own. */
static const struct {
    const char *name;
    void *(*run)(void *counter);
    int count;
} thread_kinds[] = {
    { "spinner", spinner, SPINNERS },
    { "sleeper", sleeper, SLEEPERS },
    { "cond waiter", cond_waiter, 1 },
};

static void fork_and_reap_for_ever(struct counter_line *main_counter, struct counter_line *children_counter)
{
    pid_t self = getpid();
    for (;;) {
        sleep_ms(FORK_EVERY_MS);
        pid_t child = fork();
        if (child == 0) {
            fixture_die_with_parent(self);
            counter_add(children_counter);
            struct counter_line scratch = { 0 };
            spin_for(&scratch, 1);
            _exit(0);
        }
        if (child > 0)
            waitpid(child, NULL, 0);
        counter_add(main_counter);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2 || !(counters = counter_file_map(argv[1]))) {
        fprintf(stderr, "usage: busy_target COUNTER_FILE (an existing file of %d bytes)\n", COUNTER_FILE_SIZE);
        return 64;
    }
    struct counter_line *main_counter = claim_counter("main (fork and reap)");
    struct counter_line *children_counter = claim_counter("forked children");
    struct counter_line *thread_counters[COUNTERS_MAX];
    size_t nthreads = 0;
    for (size_t kind = 0; kind < sizeof thread_kinds / sizeof thread_kinds[0]; kind++)
        for (int i = 0; i < thread_kinds[kind].count; i++) {
            char name[COUNTER_NAME_MAX];
            snprintf(name, sizeof name, "%s %d", thread_kinds[kind].name, i + 1);
            thread_counters[nthreads++] = claim_counter(name);
        }
    memcpy(counters->magic, COUNTER_FILE_MAGIC, sizeof counters->magic);
    nthreads = 0;
    for (size_t kind = 0; kind < sizeof thread_kinds / sizeof thread_kinds[0]; kind++)
        for (int i = 0; i < thread_kinds[kind].count; i++) {
            pthread_t thread;
            if (pthread_create(&thread, NULL, thread_kinds[kind].run, thread_counters[nthreads++]) != 0)
                return 1;
        }
    fixture_ready("ready %d", (int)getpid());
    fork_and_reap_for_ever(main_counter, children_counter);
}
