/* Healthy real programs that nobody in this project wrote, diagnosed as a fleet scan would (`hangdoc --json PID`
 * with the default sampling, twice: harness.h's hangdoc_run compares the two): every one must be "not hung", exit 0
 * (issue 25). Each runs under a shell that waits for it, as a CI step's or a service script's does, and the shell
 * is what is diagnosed: a wait the program cannot end by itself (nginx's master in rt_sigsuspend, timeout(1)'s) made
 * that shell "wait on processes asleep forever", a certain hang. Servers listen on unix sockets in a temporary
 * directory, never on a network; the harness starts the shell in a process group of its own and ends that group
 * and the pids it reported, also when a test fails. The wrappers' real hangs are in test_wrappers.c.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* postgres's initdb alone takes seconds on a loaded machine */
#define READY_TIMEOUT_MS 60000
#define SETTLE_MS 1500

TestSuite(real_software, .fini = fixture_stop_all, .timeout = 300);

static char directory[64];

/* A temporary directory for the program's sockets, configuration and data; `owner` (a user name, or NULL for
 * root) owns it. Removed by remove_directory(). */
static const char *make_directory(const char *owner)
{
    strcpy(directory, "/tmp/hangdoc-real-XXXXXX");
    cr_assert_not_null(mkdtemp(directory));
    if (owner) {
        const struct passwd *user = getpwnam(owner);
        cr_assert_not_null(user, "user %s exists (its package creates it)", owner);
        cr_assert_eq(chown(directory, user->pw_uid, user->pw_gid), 0);
    }
    chmod(directory, 0755);
    return directory;
}

static void remove_directory(void)
{
    if (!directory[0])
        return;
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/bin/rm", "-rf", directory, NULL });
    run_result_free(&result);
    directory[0] = '\0';
}

/* `script`, a shell script run by /bin/sh -c, which must write "ready PID..." to fd 3 (and close it) once it has
 * started what the test diagnoses; then a moment for the program to settle into its waits. */
static void start_script(struct fixture *fixture, const char *script)
{
    fixture_start_command(fixture, "/bin/sh", (const char *[]){ "sh", "-c", script, NULL }, READY_TIMEOUT_MS);
    usleep(SETTLE_MS * 1000);
}

/* hangdoc --json PID, twice (hangdoc_run): not hung, exit 0. */
static void expect_not_hung(pid_t pid, const char *what)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run(&result, (const char *[]){ "--json", pid_text, NULL });
    json_object *document = json_tokener_parse(result.out);
    cr_assert_not_null(document, "%s: a JSON report (exit %d): %s", what, result.exit_status, result.err);
    json_validate(result.out);
    json_object *verdict = json_at(document, "verdict");
    cr_expect_eq(result.exit_status, 0, "%s: exit %d, verdict %s, findings %s", what, result.exit_status,
                 json_object_to_json_string(verdict), json_object_to_json_string(json_at(document, "findings")));
    cr_expect(!json_bool_at(document, "verdict.hung"), "%s: %s", what, json_object_to_json_string(verdict));
    json_object_put(document);
    run_result_free(&result);
}

static void run_and_expect_not_hung(const char *script, const char *what)
{
    struct fixture fixture;
    start_script(&fixture, script);
    expect_not_hung(fixture.pids[0], what);
    fixture_stop(&fixture);
}

/* ---- servers ------------------------------------------------------------------------------------------------- */

/* nginx: the master in rt_sigsuspend waiting for SIGCHLD from its workers, which wait in epoll_wait */
Test(real_software, nginx_idle)
{
    make_directory(NULL);
    char config[512], script[1024];
    snprintf(config, sizeof config, "%s/nginx.conf", directory);
    FILE *file = fopen(config, "w");
    cr_assert_not_null(file);
    fprintf(file,
            "worker_processes 2;\npid %1$s/nginx.pid;\nerror_log %1$s/error.log;\n"
            "events { worker_connections 64; }\n"
            "http {\n  access_log %1$s/access.log;\n  client_body_temp_path %1$s/body;\n"
            "  proxy_temp_path %1$s/proxy;\n  fastcgi_temp_path %1$s/fastcgi;\n  uwsgi_temp_path %1$s/uwsgi;\n"
            "  scgi_temp_path %1$s/scgi;\n"
            "  server { listen unix:%1$s/nginx.sock; location / { return 200 \"ok\\n\"; } }\n}\n",
            directory);
    fclose(file);
    snprintf(script, sizeof script,
             "echo ready $$ >&3; exec 3>&-; /usr/sbin/nginx -p %1$s -c %1$s/nginx.conf -g 'daemon off;'",
             directory);
    run_and_expect_not_hung(script, "nginx");
    remove_directory();
}

/* redis: its event loop on a timer (hz), its background threads on condition variables */
Test(real_software, redis_idle)
{
    make_directory(NULL);
    char script[1024];
    snprintf(script, sizeof script,
             "echo ready $$ >&3; exec 3>&-; /usr/bin/redis-server --port 0 --unixsocket %1$s/redis.sock "
             "--dir %1$s --save '' --appendonly no --daemonize no --logfile %1$s/redis.log",
             directory);
    run_and_expect_not_hung(script, "redis-server");
    remove_directory();
}

#define POSTGRES_BIN "/usr/lib/postgresql/15/bin"

/* A postgres cluster in the directory, started as the postgres user on a unix socket only, ready for sessions.
 * The ready line names the postmaster. */
static void start_postgres(struct fixture *fixture)
{
    make_directory("postgres");
    char script[2048];
    snprintf(script, sizeof script,
             "set -e; cd %1$s; as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups \"$@\"; }; "
             "as_postgres " POSTGRES_BIN "/initdb -D %1$s/data -A trust -U postgres >%1$s/initdb.log 2>&1; "
             "as_postgres " POSTGRES_BIN "/postgres -D %1$s/data -k %1$s -c listen_addresses='' "
             ">%1$s/postgres.log 2>&1 & postmaster=$!; "
             "until pg_isready -q -h %1$s; do sleep 0.1; done; "
             "echo ready $postmaster >&3; exec 3>&-; wait",
             directory);
    start_script(fixture, script);
}

static void psql(const char *sql)
{
    struct run_result result;
    program_run_as(&result, -1,
                   (const char *[]){ "/usr/bin/psql", "-X", "-q", "-h", directory, "-U", "postgres", "-c", sql, NULL });
    cr_assert_eq(result.exit_status, 0, "psql %s: %s", sql, result.err);
    run_result_free(&result);
}

Test(real_software, postgresql_idle)
{
    struct fixture fixture;
    start_postgres(&fixture);
    expect_not_hung(fixture.pids[0], "postgres, idle");
    fixture_stop(&fixture);
    remove_directory();
}

/* One session holds a row idle in transaction; another waits for it. That is the application's wait, on a client
 * outside the server (the holder's psql): the server is not hung. */
Test(real_software, postgresql_session_waiting_for_a_row_held_idle_in_transaction)
{
    struct fixture server;
    start_postgres(&server);
    psql("CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 1);");
    /* the holder: psql reads the rest of its input from a pipe the shell keeps open with a long sleep */
    char script[1024];
    snprintf(script, sizeof script,
             "echo ready $$ >&3; exec 3>&-; "
             "{ echo 'BEGIN; SELECT * FROM t WHERE id = 1 FOR UPDATE;'; exec sleep 600; } | "
             "psql -X -q -h %1$s -U postgres >/dev/null & "
             "sleep 1; psql -X -q -h %1$s -U postgres -c 'UPDATE t SET v = 2 WHERE id = 1;' >/dev/null; wait",
             directory);
    struct fixture sessions;
    start_script(&sessions, script);
    usleep(1000 * 1000);
    expect_not_hung(server.pids[0], "postgres with a session waiting for a row");
    fixture_stop(&sessions);
    fixture_stop(&server);
    remove_directory();
}

/* python3 -m http.server: serve_forever() polls with a timeout */
Test(real_software, python_http_server)
{
    make_directory(NULL);
    char script[512];
    snprintf(script, sizeof script,
             "cd %s && echo ready $$ >&3; exec 3>&-; /usr/bin/python3 -m http.server --bind 127.0.0.1 0 "
             ">/dev/null 2>&1",
             directory);
    run_and_expect_not_hung(script, "python3 -m http.server");
    remove_directory();
}

/* tmux: the server daemonizes (a session and group of its own), so the test ends it by its pid and with
 * kill-server on its own socket */
Test(real_software, tmux_with_shells)
{
    make_directory(NULL);
    char script[1024], socket_path[128], pid_text[32] = "";
    snprintf(socket_path, sizeof socket_path, "%s/tmux.sock", directory);
    snprintf(script, sizeof script,
             "tmux -S %1$s -f /dev/null new-session -d -s work 'sh' && tmux -S %1$s new-window -t work 'sh' && "
             "echo ready $(tmux -S %1$s display-message -p '#{pid}') >&3; exec 3>&-; sleep 600",
             socket_path);
    struct fixture fixture;
    start_script(&fixture, script);
    pid_t server = fixture.pids[0];
    cr_assert_gt(server, 0);
    snprintf(pid_text, sizeof pid_text, "%d", (int)server);
    expect_not_hung(server, "tmux server with two shells");
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/usr/bin/tmux", "-S", socket_path, "kill-server", NULL });
    run_result_free(&result);
    kill(server, SIGKILL); /* its pid is in the ready line too: fixture_stop kills it again */
    fixture_stop(&fixture);
    remove_directory();
}

/* ---- jobs ------------------------------------------------------------------------------------------------------ */

#define WORKING_LOOP "while :; do sleep 0.2; done"

Test(real_software, make_j2_running_jobs)
{
    make_directory(NULL);
    char makefile[128], script[512];
    snprintf(makefile, sizeof makefile, "%s/Makefile", directory);
    FILE *file = fopen(makefile, "w");
    cr_assert_not_null(file);
    fprintf(file, "all: a b\na b:\n\t@" WORKING_LOOP "\n");
    fclose(file);
    snprintf(script, sizeof script, "echo ready $$ >&3; exec 3>&-; make -s -j2 -C %s", directory);
    run_and_expect_not_hung(script, "make -j2");
    remove_directory();
}

Test(real_software, xargs_p2_running_jobs)
{
    run_and_expect_not_hung("echo ready $$ >&3; exec 3>&-; xargs -P2 -n1 sh -c '" WORKING_LOOP "' job <<EOF\n"
                            "1\n2\nEOF\n",
                            "xargs -P2");
}

Test(real_software, shell_pipeline)
{
    run_and_expect_not_hung("echo ready $$ >&3; exec 3>&-; { while :; do echo line; sleep 0.1; done; } | cat | "
                            "cat >/dev/null",
                            "a shell pipeline");
}

/* ---- wrappers around a working job ------------------------------------------------------------------------------ */

/* The job itself says ready, naming the shell that waits for the wrapper (diagnosed) and itself: timeout, tini and
 * dumb-init put it in a process group or session of its own, where only its pid reaches it when the test ends.
 * `$outer` is the shell's pid, set by the script before the wrapper. */
#define JOB_SAYS_READY "sh -c 'echo ready '$outer' $$ >&3; exec 3>&-; " WORKING_LOOP "'; exit"

Test(real_software, timeout_around_a_working_loop)
{
    run_and_expect_not_hung("outer=$$; timeout 600 " JOB_SAYS_READY,
                            "timeout 600 around a working loop");
}

Test(real_software, tini_running_a_job)
{
    run_and_expect_not_hung("outer=$$; tini -s -- " JOB_SAYS_READY,
                            "tini running a job");
}

/* dumb-init waits in sigwait() (rt_sigtimedwait without a timeout) for every signal, SIGCHLD among them. Single
 * child mode keeps the job in the test's process group. */
Test(real_software, dumb_init_running_a_job)
{
    run_and_expect_not_hung("outer=$$; dumb-init --single-child " JOB_SAYS_READY,
                            "dumb-init running a job");
}

/* flock(1) waiting for a lock another flock(1) holds while its command sleeps: both in the tree */
Test(real_software, flock_waiter_behind_a_sleeping_holder)
{
    make_directory(NULL);
    char script[512];
    snprintf(script, sizeof script,
             "echo ready $$ >&3; exec 3>&-; flock %1$s/lock sleep 600 & sleep 0.3; flock %1$s/lock true & wait",
             directory);
    run_and_expect_not_hung(script, "a flock waiter behind a sleeping holder");
    remove_directory();
}
