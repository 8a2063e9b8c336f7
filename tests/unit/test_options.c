/* Pid and duration parsing of the command line (cmd/options.h). */
#include "options.h"

#include <criterion/criterion.h>
#include <limits.h>

Test(options, pids)
{
    pid_t pid = 0;
    cr_assert(hangdoc_parse_pid("1", &pid) && pid == 1);
    cr_assert(hangdoc_parse_pid("4242", &pid) && pid == 4242);
    cr_assert(hangdoc_parse_pid("2147483647", &pid) && pid == 2147483647);
    const char *refused[] = { "", "0", "-1", "+5", " 5", "5 ", "5x", "0x10", "2147483648", "99999999999999999999" };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        cr_assert_not(hangdoc_parse_pid(refused[i], &pid), "'%s' is not a pid", refused[i]);
    cr_assert_not(hangdoc_parse_pid(NULL, &pid));
}

Test(options, durations)
{
    static const struct {
        const char *text;
        unsigned milliseconds;
    } accepted[] = {
        { "250ms", 250 }, { "2", 2000 }, { "90s", 90000 }, { "1.5s", 1500 }, { "30m", 1800000 },
        { "2min", 120000 }, { "1h", 3600000 }, { "0", 0 },
    };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        unsigned milliseconds = 1;
        cr_assert(hangdoc_parse_duration_ms(accepted[i].text, &milliseconds), "'%s' parses", accepted[i].text);
        cr_assert_eq(milliseconds, accepted[i].milliseconds, "'%s'", accepted[i].text);
    }
    const char *refused[] = { "", "s", "-1s", "10 s", "10x", "soon", "5000000h", "1e400" };
    unsigned milliseconds;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        cr_assert_not(hangdoc_parse_duration_ms(refused[i], &milliseconds), "'%s' is refused", refused[i]);
}

Test(options, deadline_seconds_round_up_and_never_wrap)
{
    cr_assert_eq(hangdoc_deadline_seconds(0), 0);
    cr_assert_eq(hangdoc_deadline_seconds(1), 1);
    cr_assert_eq(hangdoc_deadline_seconds(1000), 1);
    cr_assert_eq(hangdoc_deadline_seconds(1001), 2);
    /* (UINT_MAX + 999) wrapped to 998 in 32 bits: 0 seconds, alarm(0), no deadline at all */
    cr_assert_eq(hangdoc_deadline_seconds(UINT_MAX), UINT_MAX / 1000 + 1);
    for (unsigned ms = UINT_MAX - 998; ms != 0; ms++)
        cr_assert_gt(hangdoc_deadline_seconds(ms), 0, "%u ms", ms);
}

/* The probe stops taking new things a quarter of --timeout before it (at most 5 s before), so that the report has
 * its time (issue 14). */
Test(options, probe_deadline_leaves_the_report_its_reserve)
{
    cr_assert_eq(hangdoc_report_reserve_ms(0), 0);
    cr_assert_eq(hangdoc_report_reserve_ms(1000), 250);
    cr_assert_eq(hangdoc_report_reserve_ms(2000), 500);
    cr_assert_eq(hangdoc_report_reserve_ms(20000), 5000);
    cr_assert_eq(hangdoc_report_reserve_ms(30000), 5000);
    cr_assert_eq(hangdoc_report_reserve_ms(UINT_MAX), 5000);
    cr_assert_float_eq(hangdoc_probe_deadline(100.0, 30000), 95.0, 1e-9);
    cr_assert_float_eq(hangdoc_probe_deadline(100.0, 2000), 99.5, 1e-9);
    cr_assert_eq(hangdoc_probe_deadline(0, 30000), 0, "no deadline, none for the probe");
    cr_assert_eq(hangdoc_probe_deadline(100.0, 0), 0, "--timeout 0: never");
}
