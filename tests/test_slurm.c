/* A real one-node Slurm cluster (issue 18): the test writes a configuration, starts munged, slurmctld and slurmd
 * from Debian's munge and slurm-wlm, submits a batch job of 4 tasks (srun -n4) whose rank 2 has a worker hung on a
 * mutex inherited through fork() while the other ranks wait for rank 2 at a barrier, and collects with the
 * launcher's own command, exactly as README and the man page say:
 *   srun --jobid=J --overlap --ntasks-per-node=1 -N 1 -o DIR/hangdoc-%N.json hangdoc --job J --json
 * The report labels every rank and the worker; `hangdoc merge` names rank 2, its host and the inherited lock, and
 * the class of ranks 0,1,3. Every daemon the test started is stopped by its pid. When Slurm cannot start here, the
 * test fails and says why: it is part of the suite, not optional.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { TASKS = 4, HUNG_RANK = 2 };

static struct cluster {
    char directory[256];
    char conf[320];
    char node[65];
    pid_t munged, slurmctld, slurmd;
    char job[32];
} cluster;

/* ---- the cluster ---------------------------------------------------------------------------------------------- */

static void path_in(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", cluster.directory, name);
}

/* A free TCP port of 127.0.0.1 (the kernel's pick for port 0; closed again before the daemon binds it). */
static unsigned short free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof address;
    cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&address, sizeof address) == 0 &&
              getsockname(fd, (struct sockaddr *)&address, &length) == 0);
    close(fd);
    return ntohs(address.sin_port);
}

/* A daemon in the foreground, its output in DIR/<log>, dying with the test. */
static pid_t start_daemon(const char *log, const char *const *argv)
{
    char log_path[400];
    path_in(log_path, sizeof log_path, log);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        setpgid(0, 0);
        int out = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int null = open("/dev/null", O_RDONLY);
        dup2(null, 0);
        dup2(out, 1);
        dup2(out, 2);
        harness_close_from(3);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return child;
}

static void stop_daemon(pid_t *pid)
{
    if (*pid <= 0)
        return;
    kill(*pid, SIGTERM);
    for (int waited = 0; waited < 10000; waited += 20) {
        if (waitpid(*pid, NULL, WNOHANG) == *pid) {
            *pid = 0;
            return;
        }
        usleep(20000);
    }
    kill(*pid, SIGKILL);
    waitpid(*pid, NULL, 0);
    *pid = 0;
}

static void show_log(const char *name)
{
    char path[400], text[4096];
    path_in(path, sizeof path, name);
    FILE *file = fopen(path, "re");
    if (!file)
        return;
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = '\0';
    fprintf(stderr, "---- %s ----\n%s\n", name, text);
}

static void fail_with_logs(const char *why)
{
    static const char *const logs[] = { "munged.out", "slurmctld.out", "slurmd.out", "slurmctld.log", "slurmd.log" };
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++)
        show_log(logs[i]);
    cr_assert_fail("Slurm did not start here: %s (the daemons' logs are above)", why);
}

static void write_file(const char *name, const char *text, mode_t mode)
{
    char path[400];
    path_in(path, sizeof path, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    cr_assert(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) && close(fd) == 0, "write %s", path);
}

static bool program_says(const char *const *argv, const char *expected)
{
    struct run_result result;
    program_run_as(&result, -1, argv);
    bool says = result.exit_status == 0 && strstr(result.out, expected) != NULL;
    run_result_free(&result);
    return says;
}

static void start_cluster(void)
{
    snprintf(cluster.directory, sizeof cluster.directory, "%s/hangdoc-slurm-XXXXXX",
             getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert_not_null(mkdtemp(cluster.directory));
    chmod(cluster.directory, 0711); /* munged wants its socket's directory searchable by all */
    struct utsname names;
    cr_assert_eq(uname(&names), 0);
    snprintf(cluster.node, sizeof cluster.node, "%.*s", (int)strcspn(names.nodename, "."), names.nodename);
    static const char *const daemons[] = { "/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
                                           "/usr/bin/srun", "/usr/bin/sbatch" };
    for (size_t i = 0; i < sizeof daemons / sizeof daemons[0]; i++)
        if (access(daemons[i], X_OK) != 0)
            cr_assert_fail("%s is missing: setup.sh installs Debian's slurm-wlm and munge", daemons[i]);

    unsigned char key[1024];
    int random = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    cr_assert(random >= 0 && read(random, key, sizeof key) == (ssize_t)sizeof key);
    close(random);
    char key_path[400], socket_path[400], state[400], spool[400];
    path_in(key_path, sizeof key_path, "munge.key");
    int fd = open(key_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(fd >= 0 && write(fd, key, sizeof key) == (ssize_t)sizeof key && close(fd) == 0);
    path_in(socket_path, sizeof socket_path, "munge.socket");
    path_in(state, sizeof state, "state");
    path_in(spool, sizeof spool, "spool");
    mkdir(state, 0700);
    mkdir(spool, 0700);
    char key_option[420], socket_option[420], log_option[420], pid_option[420], seed_option[420];
    snprintf(key_option, sizeof key_option, "--key-file=%s", key_path);
    snprintf(socket_option, sizeof socket_option, "--socket=%s", socket_path);
    snprintf(log_option, sizeof log_option, "--log-file=%s/munged.log", cluster.directory);
    snprintf(pid_option, sizeof pid_option, "--pid-file=%s/munged.pid", cluster.directory);
    snprintf(seed_option, sizeof seed_option, "--seed-file=%s/munged.seed", cluster.directory);
    cluster.munged = start_daemon("munged.out", (const char *[]){ "/usr/sbin/munged", "-F", "-f", key_option,
                                                                  socket_option, log_option, pid_option,
                                                                  seed_option, NULL });
    for (int waited = 0; access(socket_path, F_OK) != 0; waited += 20) {
        if (waited > 10000)
            fail_with_logs("munged made no socket in 10 s");
        usleep(20000);
    }

    char conf[4096];
    snprintf(conf, sizeof conf,
             "ClusterName=hangdoc\n"
             "SlurmctldHost=%s(127.0.0.1)\n"
             "SlurmUser=root\nSlurmdUser=root\n"
             "AuthType=auth/munge\nAuthInfo=socket=%s\nCredType=cred/munge\n"
             "StateSaveLocation=%s\nSlurmdSpoolDir=%s\n"
             "SlurmctldPidFile=%s/slurmctld.pid\nSlurmdPidFile=%s/slurmd.pid\n"
             "SlurmctldPort=%u\nSlurmdPort=%u\n"
             "SlurmctldLogFile=%s/slurmctld.log\nSlurmdLogFile=%s/slurmd.log\n"
             /* no cgroups: the tasks are found by SLURM_JOB_ID in their environment */
             "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
             "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
             "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
             "ReturnToService=2\nMpiDefault=none\n"
             /* 8 CPUs whatever the machine has, so that 4 tasks and the collecting step fit on 2 cores */
             "SlurmdParameters=config_overrides\n"
             "NodeName=%s NodeAddr=127.0.0.1 CPUs=8 RealMemory=1000 State=UNKNOWN\n"
             "PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP\n",
             cluster.node, socket_path, state, spool, cluster.directory, cluster.directory, free_port(), free_port(),
             cluster.directory, cluster.directory, cluster.node, cluster.node);
    write_file("slurm.conf", conf, 0644);
    path_in(cluster.conf, sizeof cluster.conf, "slurm.conf");
    setenv("SLURM_CONF", cluster.conf, 1);
    cluster.slurmctld = start_daemon("slurmctld.out", (const char *[]){ "/usr/sbin/slurmctld", "-D", "-f",
                                                                        cluster.conf, NULL });
    cluster.slurmd = start_daemon("slurmd.out", (const char *[]){ "/usr/sbin/slurmd", "-D", "-f", cluster.conf,
                                                                  NULL });
    for (int waited = 0; !program_says((const char *[]){ "/usr/bin/sinfo", "-h", "-o", "%T", NULL }, "idle");
         waited += 250) {
        if (waited > 60000)
            fail_with_logs("the node was not idle after 60 s");
        int status;
        if (waitpid(cluster.slurmctld, &status, WNOHANG) == cluster.slurmctld) {
            cluster.slurmctld = 0;
            fail_with_logs("slurmctld exited");
        }
        if (waitpid(cluster.slurmd, &status, WNOHANG) == cluster.slurmd) {
            cluster.slurmd = 0;
            fail_with_logs("slurmd exited");
        }
        usleep(250000);
    }
}

static pid_t rank_pids[TASKS], worker_pid;

/* scancel, then a wait until the job has left the queue (its step daemons end its processes), then the job's own
 * processes by pid, should any be left. */
static void end_job(void)
{
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/usr/bin/scancel", cluster.job, NULL });
    run_result_free(&result);
    for (int waited = 0; waited < 20000; waited += 200) {
        program_run_as(&result, -1, (const char *[]){ "/usr/bin/squeue", "-h", "-j", cluster.job, NULL });
        bool gone = result.exit_status != 0 || strstr(result.out, cluster.job) == NULL;
        run_result_free(&result);
        if (gone)
            break;
        usleep(200000);
    }
    for (int rank = 0; rank < TASKS; rank++)
        if (rank_pids[rank] > 0)
            kill(rank_pids[rank], SIGKILL);
    if (worker_pid > 0)
        kill(worker_pid, SIGKILL);
    cluster.job[0] = '\0';
}

static void stop_cluster(void)
{
    if (cluster.job[0])
        end_job();
    stop_daemon(&cluster.slurmd);
    stop_daemon(&cluster.slurmctld);
    stop_daemon(&cluster.munged);
    if (cluster.directory[0]) {
        struct run_result result;
        program_run_as(&result, -1, (const char *[]){ "/bin/rm", "-rf", cluster.directory, NULL });
        run_result_free(&result);
        cluster.directory[0] = '\0';
    }
}

TestSuite(slurm, .init = start_cluster, .fini = stop_cluster, .timeout = 240);

/* ---- the job -------------------------------------------------------------------------------------------------- */

/* Waits until every rank wrote DIR/position.<rank>; reads their pids. */
static void wait_for_positions(void)
{
    for (int rank = 0; rank < TASKS; rank++) {
        char path[400], text[64] = "";
        snprintf(path, sizeof path, "%s/job/position.%d", cluster.directory, rank);
        for (int waited = 0;; waited += 50) {
            FILE *file = fopen(path, "re");
            if (file) {
                size_t length = fread(text, 1, sizeof text - 1, file);
                text[length] = '\0';
                fclose(file);
                break;
            }
            if (waited > 60000) {
                char output[400];
                snprintf(output, sizeof output, "job/job.out");
                show_log(output);
                cr_assert_fail("rank %d of job %s never got into position", rank, cluster.job);
            }
            usleep(50000);
        }
        int pid = 0, worker = 0;
        cr_assert_geq(sscanf(text, "%d %d", &pid, &worker), 1);
        rank_pids[rank] = pid;
        if (rank == HUNG_RANK)
            worker_pid = worker;
    }
}

static void submit_job(void)
{
    char job_directory[400], output[420], command[1024];
    snprintf(job_directory, sizeof job_directory, "%s/job", cluster.directory);
    cr_assert_eq(mkdir(job_directory, 0755), 0);
    snprintf(output, sizeof output, "--output=%s/job.out", job_directory);
    snprintf(command, sizeof command, "--wrap=srun -n%d %s %s %d", TASKS, fixture_path("rank_barrier"), job_directory,
             HUNG_RANK);
    char tasks[16];
    snprintf(tasks, sizeof tasks, "-n%d", TASKS);
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/usr/bin/sbatch", "--parsable", tasks, output, command, NULL });
    cr_assert_eq(result.exit_status, 0, "sbatch: %s", result.err);
    snprintf(cluster.job, sizeof cluster.job, "%.*s", (int)strcspn(result.out, ";\n"), result.out);
    run_result_free(&result);
    cr_assert(cluster.job[0], "sbatch printed a job id");
    wait_for_positions();
}

/* The documented collection: one hangdoc per node, by srun into the job's allocation; its JSON parsed. */
static json_object *collect(char *report_path, size_t size)
{
    char output[420];
    snprintf(output, sizeof output, "%s/job/hangdoc-%%N.json", cluster.directory);
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ "/usr/bin/srun", "--jobid", cluster.job, "--overlap",
                                                  "--ntasks-per-node=1", "-N", "1", "-o", output,
                                                  getenv("HANGDOC_BIN"), "--job", cluster.job, "--json", NULL });
    cr_assert_eq(result.exit_status, EXIT_HANG_FORK_UNSAFE, "srun passes hangdoc's exit status on: %d (%s)",
                 result.exit_status, result.err);
    run_result_free(&result);
    snprintf(report_path, size, "%s/job/hangdoc-%s.json", cluster.directory, cluster.node);
    json_object *document = json_object_from_file(report_path);
    cr_assert_not_null(document, "srun wrote %s", report_path);
    json_validate(json_object_to_json_string(document));
    return document;
}

/* `hangdoc merge hangdoc-*.json`: rank 2 is the culprit, on this host, through its worker's inherited lock; ranks
 * 0,1,3 are one class, waiting for it. */
static void expect_merge_names_rank_2(const char *report)
{
    struct run_result result;
    hangdoc_run_once(&result, (const char *[]){ "merge", report, NULL });
    cr_assert_eq(result.exit_status, EXIT_HANG_FORK_UNSAFE, "merge: exit %d: %s", result.exit_status, result.err);
    cr_assert(strstr(result.out, "ranks: 4 seen of WORLD_SIZE 4 (the rank from SLURM_PROCID)"), "%s", result.out);
    cr_assert(strstr(result.out, "ranks 0-1,3 (3) · the most common"), "%s", result.out);
    char culprit[128];
    snprintf(culprit, sizeof culprit, "rank 2 on %s, pid %d", cluster.node, (int)rank_pids[HUNG_RANK]);
    cr_assert(strstr(result.out, culprit), "%s", result.out);
    cr_assert(strstr(result.out, "verdict: HUNG (fork-inheritance)") && strstr(result.out, "[inherited-lock, certain]"),
              "%s", result.out);
    run_result_free(&result);

    hangdoc_run_once(&result, (const char *[]){ "merge", "--json", report, NULL });
    cr_assert_eq(result.exit_status, EXIT_HANG_FORK_UNSAFE);
    json_object *merged = json_tokener_parse(result.out);
    cr_assert_not_null(merged, "%s", result.err);
    json_validate_against(result.out, "hangdoc.merge-1.schema.json");
    cr_assert_str_eq(json_string_at(merged, "verdict.kind"), "rank-hung");
    cr_assert_eq(json_int_at(merged, "verdict.culprit.rank", -1), HUNG_RANK);
    cr_assert_str_eq(json_string_at(merged, "verdict.culprit.host"), cluster.node);
    cr_assert_eq(json_int_at(merged, "verdict.culprit.pid", -1), rank_pids[HUNG_RANK]);
    cr_assert_str_eq(json_string_at(merged, "verdict.culprit.local_verdict.root_cause"), "inherited-lock");
    cr_assert_eq(json_int_at(merged, "verdict.culprit.local_verdict.pid", -1), worker_pid);
    json_object *job = json_object_array_get_idx(json_at(merged, "jobs"), 0);
    cr_assert_str_eq(json_string_at(job, "job_id"), cluster.job);
    cr_assert_str_eq(json_string_at(job, "seen.folded"), "0-3");
    cr_assert_eq(json_int_at(job, "missing.count", -1), 0);
    json_object_put(merged);
    run_result_free(&result);
}

Test(slurm, a_rank_whose_worker_hangs_on_an_inherited_lock_is_found_through_srun)
{
    submit_job();
    char report[512];
    json_object *document = collect(report, sizeof report);
    cr_assert_str_eq(json_string_at(document, "snapshot.host"), cluster.node);
    cr_assert_not_null(json_string_at(document, "snapshot.boot_id"));
    for (int rank = 0; rank < TASKS; rank++) {
        json_object *process = json_process(document, rank_pids[rank]);
        cr_assert_not_null(process, "rank %d's process %d is in the report", rank, (int)rank_pids[rank]);
        cr_assert_str_eq(json_string_at(process, "job.role"), "rank");
        cr_assert_eq(json_int_at(process, "job.rank", -1), rank);
        cr_assert_eq(json_int_at(process, "job.world_size", -1), TASKS);
        cr_assert_str_eq(json_string_at(process, "job.rank_variable"), "SLURM_PROCID");
        cr_assert_str_eq(json_string_at(process, "job.job_id"), cluster.job);
        cr_assert_str_eq(json_string_at(process, "job.step_id"), "0");
    }
    json_object *worker = json_process(document, worker_pid);
    cr_assert_str_eq(json_string_at(worker, "job.role"), "worker", "rank 2's forked worker is no rank of its own");
    cr_assert_eq(json_int_at(worker, "job.rank_pid", -1), rank_pids[HUNG_RANK]);
    json_object *inherited = json_first_finding(document, "inherited-lock", worker_pid);
    cr_assert_not_null(inherited, "%s", json_object_to_json_string(json_at(document, "findings")));
    cr_assert_str_eq(json_string_at(document, "verdict.root_cause"), "inherited-lock");
    json_object_put(document);
    expect_merge_names_rank_2(report);
}
