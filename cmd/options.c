/* Number and duration parsing for the command line (options.h). */
#include "options.h"

#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

bool hangdoc_parse_pid(const char *text, pid_t *pid)
{
    if (!text || *text < '0' || *text > '9')
        return false; /* no sign, no spaces: "-5" and " 5" are not pids */
    errno = 0;
    char *end;
    long value = strtol(text, &end, 10);
    if (errno || *end || value <= 0 || value > INT_MAX)
        return false;
    *pid = (pid_t)value;
    return true;
}

bool hangdoc_parse_duration_ms(const char *text, unsigned *milliseconds)
{
    static const struct {
        const char *suffix;
        double milliseconds;
    } units[] = { { "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "min", 60000 }, { "h", 3600000 } };
    if (!text || *text < '0' || *text > '9')
        return false;
    errno = 0;
    char *end;
    double value = strtod(text, &end);
    if (errno || value < 0)
        return false;
    for (size_t i = 0; i < COUNT(units); i++) {
        if (strcmp(end, units[i].suffix) != 0)
            continue;
        double total = value * units[i].milliseconds;
        if (total > (double)UINT_MAX)
            return false;
        *milliseconds = (unsigned)total;
        return true;
    }
    return false;
}

unsigned hangdoc_deadline_seconds(unsigned timeout_ms)
{
    unsigned long long seconds = ((unsigned long long)timeout_ms + 999) / 1000;
    return seconds > UINT_MAX ? UINT_MAX : (unsigned)seconds;
}

unsigned hangdoc_report_reserve_ms(unsigned timeout_ms)
{
    unsigned quarter = timeout_ms / 4;
    return quarter < HANGDOC_REPORT_RESERVE_MAX_MS ? quarter : HANGDOC_REPORT_RESERVE_MAX_MS;
}

double hangdoc_probe_last_call(double deadline, unsigned timeout_ms)
{
    if (deadline <= 0 || timeout_ms == 0)
        return 0;
    return deadline - hangdoc_report_reserve_ms(timeout_ms) / 2000.0;
}

double hangdoc_probe_deadline(double deadline, unsigned timeout_ms)
{
    if (deadline <= 0 || timeout_ms == 0)
        return 0;
    return deadline - hangdoc_report_reserve_ms(timeout_ms) / 1000.0;
}

double hangdoc_stuck_after_s(unsigned stuck_after_ms, double oldest_age_s)
{
    if (stuck_after_ms > 0)
        return stuck_after_ms / 1000.0;
    double half = oldest_age_s / 2;
    if (half > HANGDOC_STUCK_AFTER_DEFAULT_MS / 1000.0)
        half = HANGDOC_STUCK_AFTER_DEFAULT_MS / 1000.0;
    return half < HANGDOC_STUCK_AFTER_MIN_MS / 1000.0 ? HANGDOC_STUCK_AFTER_MIN_MS / 1000.0 : half;
}
