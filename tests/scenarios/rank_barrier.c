/* One rank of a job that srun starts (SLURM_PROCID of SLURM_NTASKS): the ranks meet at a barrier of unix datagram
 * sockets in DIR, each sending "arrived" to every other and waiting for all of theirs, as a collective waits for
 * every rank. Rank HANG has a worker, forked while a thread of the rank held a mutex, that takes the mutex before
 * it hands its first batch through a pipe: the worker hangs on a lock nobody in it holds, the rank waits in read()
 * for the batch and never arrives, and every other rank waits at the barrier for it.
 *   rank_barrier DIR HANG
 * Once in position each rank writes DIR/position.<rank>: "<pid>", and rank HANG "<pid> <worker pid>". */
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

static pthread_mutex_t batch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_changed = PTHREAD_COND_INITIALIZER;
static bool lock_taken;

static int number_from(const char *name)
{
    const char *value = getenv(name);
    return value ? atoi(value) : -1;
}

static void socket_path(struct sockaddr_un *address, const char *directory, int rank)
{
    *address = (struct sockaddr_un){ .sun_family = AF_UNIX };
    snprintf(address->sun_path, sizeof address->sun_path, "%s/rank.%d", directory, rank);
}

static void write_position(const char *directory, int rank, const char *text)
{
    char path[4096], temporary[4200];
    snprintf(path, sizeof path, "%s/position.%d", directory, rank);
    snprintf(temporary, sizeof temporary, "%s.new", path);
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) != 0 ||
        rename(temporary, path) != 0)
        _exit(3);
}

/* A thread of the rank that holds the batch lock for good, as a data loader's thread might at fork(). */
static void *hold_batch_lock(void *unused)
{
    pthread_mutex_lock(&batch_lock);
    pthread_mutex_lock(&held);
    lock_taken = true;
    pthread_cond_signal(&held_changed);
    pthread_mutex_unlock(&held);
    for (;;)
        pause();
    return unused;
}

static void load_batches(int pipe_end)
{
    pthread_mutex_lock(&batch_lock); /* held at fork by a thread this process does not have: forever */
    static const char batch[] = "batch";
    if (write(pipe_end, batch, sizeof batch) < 0)
        _exit(4);
    pthread_mutex_unlock(&batch_lock);
    _exit(0);
}

/* The rank whose worker hangs: it waits for the first batch and never reaches the barrier. */
static void wait_for_a_batch(const char *directory, int rank)
{
    pthread_t holder;
    pthread_create(&holder, NULL, hold_batch_lock, NULL);
    pthread_mutex_lock(&held);
    while (!lock_taken)
        pthread_cond_wait(&held_changed, &held);
    pthread_mutex_unlock(&held);
    int batches[2];
    if (pipe(batches) != 0)
        _exit(3);
    pid_t self = getpid();
    pid_t worker = fork();
    if (worker == 0) {
        fixture_die_with_parent(self);
        close(batches[0]);
        load_batches(batches[1]);
    }
    close(batches[1]);
    fixture_wait_for_wchan(worker, worker, "futex");
    char text[64];
    snprintf(text, sizeof text, "%d %d", (int)self, (int)worker);
    write_position(directory, rank, text);
    char batch[16];
    if (read(batches[0], batch, sizeof batch) <= 0)
        _exit(5);
}

/* Sends "arrived" to every other rank (whose socket may not be bound yet), then waits for all of theirs. */
static void barrier(int socket_fd, const char *directory, int rank, int size)
{
    for (int other = 0; other < size; other++) {
        if (other == rank)
            continue;
        struct sockaddr_un address;
        socket_path(&address, directory, other);
        struct timespec started;
        clock_gettime(CLOCK_MONOTONIC, &started);
        while (sendto(socket_fd, &rank, sizeof rank, 0, (struct sockaddr *)&address, sizeof address) < 0) {
            if ((errno != ENOENT && errno != ECONNREFUSED) || fixture_elapsed_ms(&started) > 30000)
                _exit(6);
            usleep(10000);
        }
    }
    char text[32];
    snprintf(text, sizeof text, "%d", (int)getpid());
    write_position(directory, rank, text);
    for (int arrived = 1; arrived < size;) {
        int from;
        if (recv(socket_fd, &from, sizeof from, 0) == (ssize_t)sizeof from)
            arrived++;
    }
}

int main(int argc, char **argv)
{
    int rank = number_from("SLURM_PROCID"), size = number_from("SLURM_NTASKS");
    if (argc != 3 || rank < 0 || size < 1)
        return 2;
    const char *directory = argv[1];
    int hang = atoi(argv[2]);
    int socket_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address;
    socket_path(&address, directory, rank);
    unlink(address.sun_path);
    if (socket_fd < 0 || bind(socket_fd, (struct sockaddr *)&address, sizeof address) != 0)
        return 3;
    if (rank == hang)
        wait_for_a_batch(directory, rank);
    barrier(socket_fd, directory, rank, size);
    return 0;
}
