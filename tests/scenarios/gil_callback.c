/* The C half of gil_deadlock.py and gil_fork.py.
 *
 * gil_deadlock.py: a library thread that takes a mutex and then calls back into Python (which needs
 * the GIL), while a Python thread that holds the GIL (a ctypes.PyDLL call keeps it) calls in to take that mutex.
 * The classic pybind11 / ctypes deadlock: each holds what the other waits for.
 *
 * The library writes the fixture's ready line itself (fd 3), once both threads sleep in futex waits: no Python code
 * can run by then.
 */
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef void (*python_callback)(void);

/* What gil_deadlock.py and gil_fork.py call through ctypes. */
void start_library_thread(python_callback callback);
void register_item(void);
int start_helper_process(void);
void hold_the_gil_ms(int milliseconds);

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t locked;
static pid_t main_tid, library_tid;

static pid_t gettid_now(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* The thread's wait channel names a futex wait. */
static int in_futex_wait(pid_t tid)
{
    char path[64], text[128] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/wchan", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    text[length > 0 ? length : 0] = '\0';
    return strstr(text, "futex") != NULL;
}

static void *reporter(void *unused)
{
    (void)unused;
    for (int tries = 0; tries < 1000 && !(in_futex_wait(main_tid) && in_futex_wait(library_tid)); tries++)
        usleep(10000);
    usleep(200000); /* the waits settle: the GIL waiter's timed loop has asked for the GIL at least once */
    char line[96];
    int length = snprintf(line, sizeof line, "ready %d %d %d\n", (int)getpid(), (int)main_tid, (int)library_tid);
    if (write(3, line, (size_t)length) != length)
        return NULL;
    close(3);
    return NULL;
}

static void *library_thread(void *argument)
{
    python_callback callback = (python_callback)argument;
    library_tid = gettid_now();
    pthread_mutex_lock(&registry_lock);
    sem_post(&locked);
    callback(); /* ctypes' trampoline takes the GIL first: it waits for the Python thread */
    pthread_mutex_unlock(&registry_lock);
    return NULL;
}

/* Starts the library thread with `callback` and returns once that thread holds the registry lock. */
void start_library_thread(python_callback callback)
{
    main_tid = gettid_now();
    sem_init(&locked, 0, 0);
    pthread_t thread, report;
    pthread_create(&thread, NULL, library_thread, (void *)callback);
    while (sem_wait(&locked) != 0)
        ;
    pthread_create(&report, NULL, reporter, NULL);
}

/* Takes the registry lock: called through ctypes.PyDLL, with the GIL held. */
void register_item(void)
{
    pthread_mutex_lock(&registry_lock);
    pthread_mutex_unlock(&registry_lock);
}

/* gil_fork.py: a library that forks a helper process, as some do, called through ctypes.CDLL, which released the
 * GIL for the call: by the time it forks (it prepares for 100 ms) another Python thread holds the GIL, and the
 * child, whose call returns into Python, waits for a GIL whose holder stayed in the parent. Returns the child's
 * pid (0 in the child). */
int start_helper_process(void)
{
    usleep(100000);
    return (int)fork();
}

/* gil_fork.py's other thread: a C call made through ctypes.PyDLL, which keeps the GIL, that lasts long enough for
 * start_helper_process to fork in the middle of it. */
void hold_the_gil_ms(int milliseconds)
{
    usleep((useconds_t)milliseconds * 1000);
}
