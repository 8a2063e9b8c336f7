/* A process that maps a libjvm.so of an unknown JDK (fake_jvm.c) and idles on a timer: not hung, with a note.
 * ready <pid> */
#include "fixture.h"

int fake_jvm_entries(void);

int main(void)
{
    if (fake_jvm_entries() != 2)
        return 1;
    fixture_ready("ready %d", (int)getpid());
    for (;;)
        sleep(1);
}
