/* The clock of hangdoc's deadlines (clock.h). */
#include "clock.h"

#include <time.h>

double probe_monotonic_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}
