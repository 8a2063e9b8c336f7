/* Wrappers that pass on their children's exits, on real programs (issue 25): timeout(1) waits in rt_sigsuspend for
 * SIGCHLD or its timer's SIGALRM, dumb-init in sigwait() for any signal, tini in sigtimedwait() with a timeout. A job under it that works is not hung, and a job under it that deadlocks is named
 * by its own root cause, not the wrapper's wait. The forkserver, Python's relay, is in test_pipes.c. */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

TestSuite(wrappers, .fini = fixture_stop_all, .timeout = 300);

/* Does the graph say that thread `from` waits for SIGCHLD from process `child`? */
static bool waits_for_sigchld_from(json_object *document, pid_t from, pid_t child)
{
    json_object *sets = json_at(document, "graph.wait_sets");
    for (size_t i = 0; sets && i < json_object_array_length(sets); i++) {
        json_object *set = json_object_array_get_idx(sets, i);
        const char *kind = json_string_at(set, "kind");
        if (json_int_at(set, "from", -1) != from || !kind || strcmp(kind, "signal") != 0)
            continue;
        json_object *pids = json_at(set, "any_thread_of");
        for (size_t p = 0; pids && p < json_object_array_length(pids); p++)
            if (json_object_get_int(json_object_array_get_idx(pids, p)) == child)
                return true;
    }
    return false;
}

/* The node of thread `tid` lists `signal` among those that end its wait */
static bool ends_on(json_object *document, pid_t tid, const char *signal)
{
    json_object *nodes = json_at(document, "graph.nodes");
    for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
        json_object *node = json_object_array_get_idx(nodes, i);
        if (json_int_at(node, "tid", -1) != tid)
            continue;
        json_object *signals = json_at(node, "ends_on_signals");
        for (size_t s = 0; signals && s < json_object_array_length(signals); s++)
            if (strcmp(json_object_get_string(json_object_array_get_idx(signals, s)), signal) == 0)
                return true;
    }
    return false;
}

/* `timeout 600 sh -c '...; while :; do sleep 0.2; done'`: a healthy job, as a fleet scan sees it every minute */
Test(wrappers, timeout_around_a_working_loop_is_not_hung)
{
    struct fixture fixture;
    fixture_start_command(&fixture, "/usr/bin/timeout",
                          (const char *[]){ "timeout", "600", "/bin/sh", "-c",
                                            "echo ready $$ >&3; exec 3>&-; while :; do sleep 0.2; done", NULL },
                          10000);
    pid_t wrapper = fixture.leader, job = fixture.pids[0];
    for (int look = 0; look < 2; look++) {
        json_object *document = diagnose_expecting(wrapper, EXIT_NO_HANG);
        cr_assert(!json_bool_at(document, "verdict.hung"), "%s", findings_text(document));
        cr_expect(ends_on(document, wrapper, "SIGCHLD"), "timeout's wait ends on SIGCHLD: %s",
                  json_object_to_json_string(json_at(document, "graph.nodes")));
        cr_expect(waits_for_sigchld_from(document, wrapper, job), "and waits on its child %d: %s", (int)job,
                  json_object_to_json_string(json_at(document, "graph.wait_sets")));
        json_object_put(document);
    }
    fixture_stop(&fixture);
}

/* `WRAPPER... lock_cycle`: the wrapper's wait is no hang of its own; the job's lock cycle is the root cause, named
 * the same way twice, with the chain from the wrapper down to the job */
static void expect_the_jobs_lock_cycle(const char *path, const char *const *argv, bool sigchld_edge)
{
    struct fixture fixture;
    fixture_start_command(&fixture, path, argv, 10000);
    pid_t wrapper = fixture.leader, job = fixture.pids[0];
    for (int look = 0; look < 2; look++) {
        json_object *document = diagnose_expecting(wrapper, EXIT_HANG);
        cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "lock-cycle", "%s", findings_text(document));
        cr_expect_eq(json_int_at(document, "verdict.pid", -1), job);
        json_object *chain = json_at(document, "verdict.chain");
        cr_assert(chain && json_object_array_length(chain) == 2, "the wrapper, then the job: %s",
                  json_object_to_json_string(chain));
        cr_expect_eq(json_object_get_int(json_object_array_get_idx(chain, 0)), wrapper);
        cr_expect_eq(json_object_get_int(json_object_array_get_idx(chain, 1)), job);
        if (sigchld_edge)
            cr_expect(waits_for_sigchld_from(document, wrapper, job), "%s",
                      json_object_to_json_string(json_at(document, "graph.wait_sets")));
        json_object *hangs = json_at(document, "verdict.hangs");
        cr_expect(!hangs || json_object_array_length(hangs) == 1, "one hang: %s", json_object_to_json_string(hangs));
        json_object_put(document);
    }
    fixture_stop(&fixture);
}

Test(wrappers, timeout_around_a_lock_cycle_names_the_lock_cycle)
{
    expect_the_jobs_lock_cycle("/usr/bin/timeout", (const char *[]){ "timeout", "600", fixture_path("lock_cycle"), NULL },
                               true);
}

/* dumb-init waits in sigwait() for every signal: SIGCHLD ties it to the job */
Test(wrappers, dumb_init_around_a_lock_cycle_names_the_lock_cycle)
{
    expect_the_jobs_lock_cycle("/usr/bin/dumb-init",
                               (const char *[]){ "dumb-init", "--single-child", fixture_path("lock_cycle"), NULL }, true);
}

/* tini waits in sigtimedwait() with a 1 s timeout: a timed wait, which must not hide the job's deadlock either */
Test(wrappers, tini_around_a_lock_cycle_names_the_lock_cycle)
{
    expect_the_jobs_lock_cycle("/usr/bin/tini", (const char *[]){ "tini", "-s", "--", fixture_path("lock_cycle"), NULL },
                               false);
}
