/* Hostile names: a comm with a terminal escape, ')' and a newline; arguments with control bytes, invalid UTF-8
 * and a right-to-left override. hangdoc must print none of them raw.
 * ready <pid> */
#include "fixture.h"

int main(int argc, char **argv)
{
    (void)argv;
    if (argc == 1) {
        /* re-exec with the hostile arguments: they must be in /proc/<pid>/cmdline, not just in memory */
        static char first[] = "weird\x1b[2J", second[] = "bad\xff\xfe", third[] = "rlo\xe2\x80\xae" "txt",
                    fourth[] = "tab\there";
        char *const hostile[] = { first, second, third, fourth, NULL };
        execv("/proc/self/exe", hostile);
        return 1;
    }
    prctl(PR_SET_NAME, "\x1b]0;x\x07) S\n");
    fixture_ready("ready %d", (int)getpid());
    for (;;)
        pause();
}
