/* Threads, child processes and mappings that come and go as fast as they can, while hangdoc samples: the thread
 * list, the tree and the maps (an ELF file mapped and unmapped, as dlopen/dlclose would) all change under the
 * scan. The children fork (bounded: two generations) before they exit.
 * ready <pid> */
#include "fixture.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

static void *short_lived(void *unused)
{
    return unused;
}

/* Maps the executable (an ELF file hangdoc identifies from memory) and anonymous memory, and unmaps them. */
static void map_and_unmap(int executable)
{
    void *file = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, executable, 0);
    void *anonymous = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (file != MAP_FAILED)
        munmap(file, 8192);
    if (anonymous != MAP_FAILED)
        munmap(anonymous, 1 << 20);
}

static void fork_and_reap(int generations)
{
    pid_t child = fork();
    if (child == 0) {
        if (generations > 1)
            fork_and_reap(generations - 1);
        _exit(0);
    }
    if (child > 0)
        waitpid(child, NULL, 0);
}

int main(void)
{
    pid_t self = getpid();
    int executable = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    fixture_ready("ready %d", (int)self);
    for (;;) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, short_lived, NULL) == 0)
            pthread_join(thread, NULL);
        map_and_unmap(executable);
        fork_and_reap(2);
    }
}
