/* A single thread spinning in user space (state R), making progress every sample.
 * ready <pid> */
#include "fixture.h"

int main(void)
{
    prctl(PR_SET_NAME, "spinner");
    fixture_ready("ready %d", (int)getpid());
    volatile unsigned long counter = 0;
    for (;;)
        counter++;
}
