/* A single thread spinning in user space (state R), making progress every sample.
 * ready <pid> */
#include "fixture.h"

/* global: gcc 16 warns of a local volatile that is only ever written */
volatile unsigned long spin_counter;

int main(void)
{
    prctl(PR_SET_NAME, "spinner");
    fixture_ready("ready %d", (int)getpid());
    for (;;)
        spin_counter++;
}
