/* A thread that spins in code mapped from a file that was then deleted, with a FIFO created under the very name
 * /proc/<pid>/maps now shows for the mapping ("<path> (deleted)"). Whoever opens that name to read the code's
 * unwind tables blocks until a writer comes: never. A target can do this on purpose; hangdoc must notice that the
 * name is no longer the mapped file and open nothing.
 * ready <pid> <spinner tid>; the FIFO is /tmp/hangdoc-fifo-<pid> (deleted): the test removes it. */
#include "fixture.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

static void *code;
static volatile pid_t spinner_tid;

static void *spin(void *unused)
{
    prctl(PR_SET_NAME, "mapped-spinner");
    spinner_tid = fixture_gettid();
    ((void (*)(void))code)(); /* jmp . : never returns */
    return unused;
}

int main(void)
{
    char path[64], fifo[96];
    snprintf(path, sizeof path, "/tmp/hangdoc-fifo-%d", (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    static const unsigned char jump_to_itself[4096] = { 0xeb, 0xfe };
    if (fd < 0 || write(fd, jump_to_itself, sizeof jump_to_itself) != (ssize_t)sizeof jump_to_itself)
        return 1;
    code = mmap(NULL, sizeof jump_to_itself, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    close(fd);
    unlink(path);
    snprintf(fifo, sizeof fifo, "%s (deleted)", path);
    if (code == MAP_FAILED || mkfifo(fifo, 0600) != 0)
        return 1;
    pthread_t thread;
    pthread_create(&thread, NULL, spin, NULL);
    while (!spinner_tid)
        usleep(1000);
    fixture_wait_for_state(getpid(), spinner_tid, 'R');
    fixture_ready("ready %d %d", (int)getpid(), (int)spinner_tid);
    for (;;)
        pause();
}
