/* Words for waits, states and durations (analysis/describe.h), over hand-built threads. */
#include "describe.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static char *described(const struct hd_thread *thread)
{
    struct report_buffer out = { 0 };
    report_describe_wait(&out, thread);
    return out.data ? out.data : strdup("");
}

static struct hd_thread sleeping_in(const char *name, struct hd_wait wait)
{
    return (struct hd_thread){
        .tid = 100, .state = 'S', .wait = wait,
        .syscall = { .state = HD_SYSCALL_IN, .name = name },
    };
}

#define EXPECT_WORDS(thread, text)                                                                                  \
    do {                                                                                                            \
        char *words = described(&(thread));                                                                         \
        cr_assert_str_eq(words, text);                                                                              \
        free(words);                                                                                                \
    } while (0)

Test(describe, futex_wait_without_timeout)
{
    struct hd_thread thread = sleeping_in("futex", (struct hd_wait){
        .kind = HD_WAIT_FUTEX, .operation = "FUTEX_WAIT", .address = 0x55d2a0c4e040, .futex_private = true,
        .expected = 2, .timeout = { .kind = HD_TIMEOUT_NONE }, .fd = -1 });
    EXPECT_WORDS(thread, "futex wait 0x55d2a0c4e040 private, expected 2, no timeout");
    cr_assert_str_eq(report_wait_label(&thread), "futex wait");
}

Test(describe, shared_lock_pi_with_deadline)
{
    struct hd_thread thread = sleeping_in("futex", (struct hd_wait){
        .kind = HD_WAIT_FUTEX, .operation = "FUTEX_LOCK_PI", .address = 0x1000, .expected = 0,
        .timeout = { .kind = HD_TIMEOUT_FINITE, .absolute = true, .remaining_ns = 42000000000 }, .fd = -1 });
    EXPECT_WORDS(thread, "futex lock_pi 0x1000 shared, deadline in 42 s");
}

Test(describe, poll_with_milliseconds_and_epoll_without)
{
    struct hd_thread poll = sleeping_in("poll", (struct hd_wait){
        .kind = HD_WAIT_POLL, .nfds = 3, .fd = -1, .timeout = { .kind = HD_TIMEOUT_FINITE, .remaining_ns = 5000000000 } });
    EXPECT_WORDS(poll, "poll 3 fds, 5000 ms timeout");
    struct hd_thread epoll = sleeping_in("epoll_wait", (struct hd_wait){
        .kind = HD_WAIT_POLL, .fd = 7, .timeout = { .kind = HD_TIMEOUT_NONE } });
    EXPECT_WORDS(epoll, "epoll_wait on epoll fd 7, no timeout");
}

Test(describe, children_waited_for)
{
    struct hd_thread one = sleeping_in("wait4", (struct hd_wait){
        .kind = HD_WAIT_CHILD, .child_selector = HD_CHILD_PID, .child = 4242, .fd = -1,
        .timeout = { .kind = HD_TIMEOUT_NONE } });
    EXPECT_WORDS(one, "wait4 pid 4242, no timeout");
    struct hd_thread any = sleeping_in("wait4", (struct hd_wait){
        .kind = HD_WAIT_CHILD, .child_selector = HD_CHILD_ANY, .child = -1, .fd = -1,
        .timeout = { .kind = HD_TIMEOUT_NONE } });
    EXPECT_WORDS(any, "wait4 any child, no timeout");
    struct hd_thread group = sleeping_in("waitid", (struct hd_wait){
        .kind = HD_WAIT_CHILD, .child_selector = HD_CHILD_GROUP, .child = 77, .fd = -1,
        .timeout = { .kind = HD_TIMEOUT_NONE } });
    EXPECT_WORDS(group, "waitid process group 77, no timeout");
}

Test(describe, read_with_unreadable_timeout_and_passed_deadline)
{
    struct hd_thread read = sleeping_in("read", (struct hd_wait){
        .kind = HD_WAIT_READ, .fd = 0, .timeout = { .kind = HD_TIMEOUT_UNREADABLE } });
    EXPECT_WORDS(read, "read fd 0, with a timeout (its value could not be read)");
    struct hd_thread sleep = sleeping_in("clock_nanosleep", (struct hd_wait){
        .kind = HD_WAIT_SLEEP, .fd = -1,
        .timeout = { .kind = HD_TIMEOUT_FINITE, .absolute = true, .remaining_ns = -3000000000 } });
    EXPECT_WORDS(sleep, "clock_nanosleep, deadline passed 3.0 s ago");
}

Test(describe, states_without_a_syscall)
{
    struct hd_thread running = { .state = 'R', .syscall = { .state = HD_SYSCALL_RUNNING } };
    EXPECT_WORDS(running, "running");
    struct hd_thread stopped = { .state = 'T', .syscall = { .state = HD_SYSCALL_IN, .name = "tgkill" } };
    EXPECT_WORDS(stopped, "stopped");
    cr_assert_str_eq(report_wait_label(&stopped), "stopped", "a stop is not shown as the call it stopped in");
    struct hd_thread unread = { .state = 'D', .syscall = { .state = HD_SYSCALL_UNREAD } };
    EXPECT_WORDS(unread, "disk sleep (uninterruptible)");
    cr_assert_str_eq(report_state_name('Z'), "zombie");
    cr_assert_str_eq(report_state_name('?'), "unknown state");
}

Test(describe, durations)
{
    static const struct {
        double seconds;
        const char *text;
    } cases[] = {
        { 0, "0.0 s" }, { 0.44, "0.4 s" }, { 9.94, "9.9 s" }, { 41, "41 s" }, { 59.4, "59 s" }, { 180, "3 min" },
        { 3600 + 5 * 60, "1 h 5 min" }, { 2 * 86400 + 4 * 3600, "2 d 4 h" }, { -5, "0.0 s" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[32];
        report_format_duration(cases[i].seconds, text, sizeof text);
        cr_assert_str_eq(text, cases[i].text, "%g s", cases[i].seconds);
    }
}
