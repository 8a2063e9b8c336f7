/* The demo tree (demo.h): the bug hangdoc exists for, reproduced for real.
 *
 *   demo-trainer (main thread)  forks, then waits for its worker in wait4()
 *   demo-loader  (its thread)   holds `dataset_lock` forever
 *   demo-worker  (the child)    locks `dataset_lock`: fork() copied it locked, and the thread that could unlock
 *                               it does not exist in the child, so it sleeps in futex() forever.
 *
 * Every demo process dies with its parent (PR_SET_PDEATHSIG), so nothing outlives hangdoc, whatever ends it.
 */
#include "demo.h"

#include "diagnose.h"
#include "exit_codes.h"
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEMO_SETUP_TIMEOUT_MS 5000

static pthread_mutex_t dataset_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held = PTHREAD_COND_INITIALIZER;
static bool lock_is_held;

/* Dies when `parent` does; false when the parent is already gone. */
static bool die_with_parent(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    return getppid() == parent;
}

static void *loader_thread(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "demo-loader");
    pthread_mutex_lock(&dataset_lock);
    pthread_mutex_lock(&held_lock);
    lock_is_held = true;
    pthread_cond_signal(&held);
    pthread_mutex_unlock(&held_lock);
    for (;;)
        pause(); /* holds dataset_lock for ever */
    return NULL;
}

static _Noreturn void run_worker(pid_t trainer)
{
    if (!die_with_parent(trainer))
        _exit(1);
    prctl(PR_SET_NAME, "demo-worker");
    pthread_mutex_lock(&dataset_lock); /* never returns: the owner is a thread of the trainer */
    _exit(0);
}

static _Noreturn void run_trainer(pid_t hangdoc, int ready_fd)
{
    if (!die_with_parent(hangdoc))
        _exit(1);
    setpgid(0, 0);
    prctl(PR_SET_NAME, "demo-trainer");
    pthread_t loader;
    if (pthread_create(&loader, NULL, loader_thread, NULL) != 0)
        _exit(1);
    pthread_mutex_lock(&held_lock);
    while (!lock_is_held)
        pthread_cond_wait(&held, &held_lock);
    pthread_mutex_unlock(&held_lock);
    pid_t trainer = getpid();
    pid_t worker = fork();
    if (worker < 0)
        _exit(1);
    if (worker == 0)
        run_worker(trainer);
    if (write(ready_fd, &worker, sizeof worker) != sizeof worker)
        _exit(1);
    close(ready_fd);
    int status;
    while (waitpid(worker, &status, 0) < 0 && errno == EINTR)
        ;
    _exit(0);
}

static long elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* The worker is in position once its only thread sleeps inside futex(). */
static bool wait_until_worker_blocks(pid_t worker)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/wchan", (int)worker);
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    while (elapsed_ms(&started) < DEMO_SETUP_TIMEOUT_MS) {
        FILE *file = fopen(path, "re");
        char wchan[64] = "";
        if (file) {
            if (!fgets(wchan, sizeof wchan, file))
                wchan[0] = '\0';
            fclose(file);
        }
        if (strstr(wchan, "futex"))
            return true;
        usleep(10000);
    }
    return false;
}

static bool read_worker_pid(int fd, pid_t *worker)
{
    struct pollfd ready = { .fd = fd, .events = POLLIN };
    return poll(&ready, 1, DEMO_SETUP_TIMEOUT_MS) == 1 && read(fd, worker, sizeof *worker) == sizeof *worker;
}

static void end_tree(pid_t trainer)
{
    kill(-trainer, SIGKILL); /* the trainer leads its own process group: the worker is in it too */
    kill(trainer, SIGKILL);
    /* As subreaper we inherit the worker when the trainer dies: reap both. */
    for (int reaped = 0; reaped < 2;) {
        pid_t pid = waitpid(-1, NULL, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        reaped++;
    }
}

int hangdoc_demo(struct hangdoc_options *options)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) < 0) {
        perror("hangdoc demo: pipe");
        return EXIT_INTERNAL;
    }
    pid_t hangdoc = getpid();
    pid_t trainer = fork();
    if (trainer < 0) {
        perror("hangdoc demo: fork");
        return EXIT_INTERNAL;
    }
    if (trainer == 0) {
        close(pipe_fds[0]);
        run_trainer(hangdoc, pipe_fds[1]);
    }
    close(pipe_fds[1]);
    /* Only now: a thread still starting up (under AddressSanitizer it takes the runtime's thread-registry lock)
     * while we fork would leave the trainer a lock that nobody releases, the very hang this demo shows. */
    hangdoc_watchdog_start(options->deadline);
    setpgid(trainer, trainer); /* also here, so that end_tree() is right even if the child has not run yet */
    pid_t worker = 0;
    bool ready = read_worker_pid(pipe_fds[0], &worker) && wait_until_worker_blocks(worker);
    close(pipe_fds[0]);
    if (!ready) {
        fprintf(stderr, "hangdoc demo: the demo tree did not get into position within %d ms\n",
                DEMO_SETUP_TIMEOUT_MS);
        end_tree(trainer);
        return EXIT_INTERNAL;
    }
    /* the introduction goes with the text report; --json and --dot keep stdout one document */
    FILE *say = options->json || options->dot ? stderr : stdout;
    fprintf(say, "hangdoc demo: started demo-trainer (pid %d); its thread demo-loader holds a mutex, and it forked\n"
            "demo-worker (pid %d), which now waits for that mutex. Diagnosing pid %d:\n\n",
            (int)trainer, (int)worker, (int)trainer);
    fflush(say);
    pid_t target = trainer;
    options->pids = &target;
    options->npids = 1;
    options->recap = true;
    int status = hangdoc_diagnose(options);
    options->pids = NULL;
    options->npids = 0;
    end_tree(trainer);
    return status;
}
