/* Who each process is in a distributed job (job.h). */
#include "job.h"

#include "access.h"
#include "probe.h"
#include "procfs.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENVIRONMENT_READ_MAX (256 * 1024) /* what is read of an environment; the launchers' variables come early */
#define VALUE_MAX 255                     /* a string kept from the environment or a cgroup path */

/* The variables read; the launcher that sets each is in the table of rank sources below. */
enum variable {
    V_RANK, V_WORLD_SIZE, V_LOCAL_RANK, V_LOCAL_WORLD_SIZE, V_GROUP_RANK,
    V_OMPI_RANK, V_OMPI_SIZE, V_OMPI_LOCAL_RANK, V_OMPI_LOCAL_SIZE,
    V_PMIX_RANK, V_PMI_RANK, V_PMI_SIZE, V_MPI_LOCALRANKID, V_MPI_LOCALNRANKS,
    V_SLURM_PROCID, V_SLURM_NTASKS, V_SLURM_LOCALID, V_SLURM_NODEID, V_SLURM_JOB_ID, V_SLURM_STEP_ID,
    V_TORCHELASTIC_RUN_ID, V_MASTER_ADDR, V_MASTER_PORT,
    V_COUNT,
    V_NONE = V_COUNT,
};

static const char *const variable_names[V_COUNT] = {
    [V_RANK] = "RANK", [V_WORLD_SIZE] = "WORLD_SIZE", [V_LOCAL_RANK] = "LOCAL_RANK",
    [V_LOCAL_WORLD_SIZE] = "LOCAL_WORLD_SIZE", [V_GROUP_RANK] = "GROUP_RANK",
    [V_OMPI_RANK] = "OMPI_COMM_WORLD_RANK", [V_OMPI_SIZE] = "OMPI_COMM_WORLD_SIZE",
    [V_OMPI_LOCAL_RANK] = "OMPI_COMM_WORLD_LOCAL_RANK", [V_OMPI_LOCAL_SIZE] = "OMPI_COMM_WORLD_LOCAL_SIZE",
    [V_PMIX_RANK] = "PMIX_RANK", [V_PMI_RANK] = "PMI_RANK", [V_PMI_SIZE] = "PMI_SIZE",
    [V_MPI_LOCALRANKID] = "MPI_LOCALRANKID", [V_MPI_LOCALNRANKS] = "MPI_LOCALNRANKS",
    [V_SLURM_PROCID] = "SLURM_PROCID", [V_SLURM_NTASKS] = "SLURM_NTASKS", [V_SLURM_LOCALID] = "SLURM_LOCALID",
    [V_SLURM_NODEID] = "SLURM_NODEID", [V_SLURM_JOB_ID] = "SLURM_JOB_ID", [V_SLURM_STEP_ID] = "SLURM_STEP_ID",
    [V_TORCHELASTIC_RUN_ID] = "TORCHELASTIC_RUN_ID", [V_MASTER_ADDR] = "MASTER_ADDR",
    [V_MASTER_PORT] = "MASTER_PORT",
};

/* Where a rank comes from, most specific first: a torchrun worker's RANK is global (torchrun sets it with
 * TORCHELASTIC_RUN_ID), the MPI libraries' own variables next, Slurm's task id after them (only in a job step: a
 * batch script also says SLURM_PROCID=0, and it is no rank), and a bare RANK last: a Kubeflow pod's (the node's,
 * when torchrun runs below it) or a script's own for torch.distributed. */
static const struct rank_source {
    enum variable rank, size, local_rank, local_size;
    enum variable requires; /* the rank counts only when this is set too; V_NONE: always */
} rank_sources[] = {
    { V_RANK, V_WORLD_SIZE, V_LOCAL_RANK, V_LOCAL_WORLD_SIZE, V_TORCHELASTIC_RUN_ID },
    { V_OMPI_RANK, V_OMPI_SIZE, V_OMPI_LOCAL_RANK, V_OMPI_LOCAL_SIZE, V_NONE },
    { V_PMIX_RANK, V_NONE, V_NONE, V_NONE, V_NONE },
    { V_PMI_RANK, V_PMI_SIZE, V_MPI_LOCALRANKID, V_MPI_LOCALNRANKS, V_NONE },
    { V_SLURM_PROCID, V_SLURM_NTASKS, V_SLURM_LOCALID, V_NONE, V_SLURM_STEP_ID },
    { V_RANK, V_WORLD_SIZE, V_LOCAL_RANK, V_LOCAL_WORLD_SIZE, V_NONE },
};

/* Programs that run the rank's program as their child and wait: the rank is the child's. */
static const char *const wrappers[] = { "sh", "bash", "dash", "zsh", "ksh", "env", "numactl", "taskset", "nohup",
                                        "stdbuf", "timeout", "time", "chrt", "nice", "ionice", "setsid" };

struct found {
    const char *value;
    size_t length;
};

static void find_variables(const char *environment, size_t length, struct found *found)
{
    for (size_t at = 0; at < length;) {
        const char *entry = environment + at;
        const char *end = memchr(entry, '\0', length - at);
        size_t entry_length = end ? (size_t)(end - entry) : length - at;
        const char *equals = memchr(entry, '=', entry_length);
        if (equals)
            for (size_t v = 0; v < V_COUNT; v++) {
                size_t name_length = strlen(variable_names[v]);
                if ((size_t)(equals - entry) == name_length && memcmp(entry, variable_names[v], name_length) == 0) {
                    if (!found[v].value) /* the first, as getenv(3) finds it */
                        found[v] = (struct found){ equals + 1, entry_length - name_length - 1 };
                    break;
                }
            }
        at += entry_length + 1;
    }
}

/* A decimal in 0..INT_MAX, all of the value; -1 otherwise. */
static int number_of(const struct found *value)
{
    if (!value->value || value->length == 0 || value->length > 10)
        return -1;
    long long number = 0;
    for (size_t i = 0; i < value->length; i++) {
        if (!isdigit((unsigned char)value->value[i]))
            return -1;
        number = number * 10 + (value->value[i] - '0');
    }
    return number <= INT_MAX ? (int)number : -1;
}

static int number_or_none(const struct found *found, enum variable v)
{
    return v == V_NONE ? -1 : number_of(&found[v]);
}

/* A copy of a value, at most VALUE_MAX bytes; NULL for none. False when memory ran out. */
static bool copy_value(const struct found *value, char **out)
{
    *out = NULL;
    if (!value->value || value->length == 0)
        return true;
    size_t length = value->length < VALUE_MAX ? value->length : VALUE_MAX;
    *out = strndup(value->value, length);
    return *out != NULL;
}

static bool copy_master(const struct found *found, char **out)
{
    *out = NULL;
    const struct found *address = &found[V_MASTER_ADDR], *port = &found[V_MASTER_PORT];
    if (!address->value || address->length == 0)
        return true;
    char text[VALUE_MAX + 1];
    int address_length = (int)(address->length < 200 ? address->length : 200);
    if (port->value && port->length > 0)
        snprintf(text, sizeof text, "%.*s:%.*s", address_length, address->value,
                 (int)(port->length < 40 ? port->length : 40), port->value);
    else
        snprintf(text, sizeof text, "%.*s", address_length, address->value);
    *out = strdup(text);
    return *out != NULL;
}

struct hd_job *probe_parse_job_environment(const char *environment, size_t length, bool *out_of_memory)
{
    *out_of_memory = false;
    struct found found[V_COUNT] = { 0 };
    find_variables(environment, length, found);
    const struct rank_source *source = NULL;
    for (size_t s = 0; !source && s < COUNT(rank_sources); s++)
        if ((rank_sources[s].requires == V_NONE || found[rank_sources[s].requires].value) &&
            number_of(&found[rank_sources[s].rank]) >= 0)
            source = &rank_sources[s];
    if (!source && !found[V_SLURM_JOB_ID].value && !found[V_TORCHELASTIC_RUN_ID].value)
        return NULL;
    struct hd_job *job = calloc(1, sizeof *job);
    if (!job) {
        *out_of_memory = true;
        return NULL;
    }
    *job = (struct hd_job){
        .role = source ? HD_JOB_RANK : HD_JOB_LAUNCHER, /* in the job without a rank: a batch script, srun */
        .rank = source ? number_of(&found[source->rank]) : -1,
        .world_size = source ? number_or_none(found, source->size) : -1,
        .local_rank = source ? number_or_none(found, source->local_rank) : -1,
        .local_world_size = source ? number_or_none(found, source->local_size) : -1,
        .group_rank = number_of(&found[V_GROUP_RANK]),
        .node_id = number_of(&found[V_SLURM_NODEID]),
        .rank_variable = source ? variable_names[source->rank] : NULL,
    };
    if (!copy_value(&found[V_SLURM_JOB_ID], &job->job_id) || !copy_value(&found[V_SLURM_STEP_ID], &job->step_id) ||
        !copy_value(&found[V_TORCHELASTIC_RUN_ID], &job->run_id) || !copy_master(found, &job->master)) {
        hd_job_free(job);
        *out_of_memory = true;
        return NULL;
    }
    return job;
}

/* ---- reading ------------------------------------------------------------------------------------------------- */

/* The cgroup v2 path of `pid` when it tells which job or pod the process is in; NULL otherwise. */
static char *telling_cgroup(pid_t pid)
{
    char path[64], text[2048];
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    if (probe_read_file(path, text, sizeof text) <= 0)
        return NULL;
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (strncmp(line, "0::", 3) == 0 && (strstr(line, "/job_") || strstr(line, "kubepods")))
            return strndup(line + 3, VALUE_MAX);
        line = next;
    }
    return NULL;
}

struct reading {
    char *buffer; /* ENVIRONMENT_READ_MAX */
    size_t refused;
    pid_t first_refused;
    int refusal;
};

static bool label_process(struct reading *reading, struct hd_process *process)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)process->pid);
    ssize_t length = probe_read_file(path, reading->buffer, ENVIRONMENT_READ_MAX);
    if (length == -EACCES || length == -EPERM) {
        if (reading->refused++ == 0) {
            reading->first_refused = process->pid;
            reading->refusal = (int)-length;
        }
        return true;
    }
    if (length <= 0)
        return true;
    bool out_of_memory;
    process->job = probe_parse_job_environment(reading->buffer, (size_t)length, &out_of_memory);
    if (process->job)
        process->job->cgroup = telling_cgroup(process->pid);
    return !out_of_memory;
}

/* ---- roles --------------------------------------------------------------------------------------------------- */

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The same rank of the same job: what a child that inherited the environment carries. */
static bool same_rank(const struct hd_job *a, const struct hd_job *b)
{
    return a->rank == b->rank && a->rank_variable == b->rank_variable && same_text(a->job_id, b->job_id) &&
           same_text(a->step_id, b->step_id) && same_text(a->run_id, b->run_id);
}

static bool is_wrapper(const struct hd_process *process)
{
    for (size_t w = 0; w < COUNT(wrappers); w++)
        if (strcmp(process->comm, wrappers[w]) == 0)
            return true;
    return false;
}

/* In tree order, so that a parent's role is settled before its children's. */
static void place_in_tree(struct hd_snapshot *snapshot)
{
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        struct hd_process *process = &snapshot->processes[p];
        struct hd_job *job = process->job;
        if (!job)
            continue;
        job->rank_pid = process->pid;
        if (job->rank < 0)
            continue; /* a launcher whatever is above it */
        struct hd_process *parent = hd_snapshot_find_process(snapshot, process->ppid);
        struct hd_job *above = parent ? parent->job : NULL;
        if (!above)
            continue;
        if (above->rank < 0)
            continue; /* srun's child of a batch script: its own rank */
        if (!same_rank(job, above)) {
            above->role = HD_JOB_LAUNCHER; /* a torchrun agent: its children carry their own ranks */
        } else if (above->role != HD_JOB_WORKER && is_wrapper(parent) && process->origin != HD_ORIGIN_FORKED) {
            above->role = HD_JOB_LAUNCHER; /* the shell ran the rank's program: the rank is the program's */
        } else {
            job->role = HD_JOB_WORKER;
            job->rank_pid = above->role == HD_JOB_LAUNCHER ? parent->pid : above->rank_pid;
        }
    }
}

bool probe_label_jobs(struct hd_snapshot *snapshot)
{
    struct reading reading = { .buffer = malloc(ENVIRONMENT_READ_MAX) };
    if (!reading.buffer)
        return false;
    bool ok = true;
    for (size_t p = 0; p < snapshot->nprocesses && ok; p++) {
        struct hd_process *process = &snapshot->processes[p];
        if (!process->kernel_thread && !process->zombie)
            ok = label_process(&reading, process);
    }
    free(reading.buffer);
    if (!ok)
        return false;
    place_in_tree(snapshot);
    if (reading.refused > 0) {
        struct hd_process *first = hd_snapshot_find_process(snapshot, reading.first_refused);
        char why[256];
        probe_access_explain(reading.first_refused, first ? first->uid : (uid_t)-1, PROBE_ACCESS_OWNER_FILE, why,
                             sizeof why);
        return hd_snapshot_note(snapshot, HD_NOTE_PROCFS, reading.refused == 1 ? reading.first_refused : 0, 0,
                                "environ: the environment of %zu process%s could not be read (%s): which job and "
                                "rank %s is unknown",
                                reading.refused, reading.refused == 1 ? "" : "es", why,
                                reading.refused == 1 ? "it is" : "they are");
    }
    return true;
}

/* ---- finding a job's processes ------------------------------------------------------------------------------- */

static bool in_job(pid_t pid, const char *job_id, char *buffer)
{
    char path[64], text[2048], pattern[96];
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    snprintf(pattern, sizeof pattern, "/job_%s", job_id);
    if (probe_read_file(path, text, sizeof text) > 0) {
        for (const char *at = strstr(text, pattern); at; at = strstr(at + 1, pattern)) {
            char after = at[strlen(pattern)];
            if (after == '/' || after == '\n' || after == '\0')
                return true;
        }
    }
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    ssize_t length = probe_read_file(path, buffer, ENVIRONMENT_READ_MAX);
    if (length <= 0)
        return false;
    struct found found[V_COUNT] = { 0 };
    find_variables(buffer, (size_t)length, found);
    const struct found *id = &found[V_SLURM_JOB_ID];
    return id->value && id->length == strlen(job_id) && memcmp(id->value, job_id, id->length) == 0;
}

static int compare_pids(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* hangdoc and its ancestors: run by `srun --jobid=J --overlap`, they are in job J too, and not what to diagnose. */
static size_t own_line(pid_t *line, size_t size)
{
    size_t count = 0;
    for (pid_t pid = getpid(); pid > 0 && count < size; pid = probe_parent_of(pid))
        line[count++] = pid;
    return count;
}

static bool in_line(const pid_t *line, size_t count, pid_t pid)
{
    for (size_t i = 0; i < count; i++)
        if (line[i] == pid)
            return true;
    return false;
}

long probe_find_job_processes(const char *job_id, pid_t **pids)
{
    *pids = NULL;
    pid_t line[64];
    size_t line_length = own_line(line, COUNT(line));
    DIR *proc = opendir("/proc");
    if (!proc)
        return -errno;
    char *buffer = malloc(ENVIRONMENT_READ_MAX);
    pid_t *members cleanup_free = NULL;
    size_t count = 0, capacity = 0;
    long result = 0;
    for (struct dirent *entry; buffer && (entry = readdir(proc));) {
        char *end;
        long pid = strtol(entry->d_name, &end, 10);
        if (*end || pid <= 0 || in_line(line, line_length, (pid_t)pid) || !in_job((pid_t)pid, job_id, buffer))
            continue;
        pid_t *grown = hd_grow(members, &capacity, count, sizeof *grown);
        if (!grown) {
            result = -ENOMEM;
            break;
        }
        members = grown;
        members[count++] = (pid_t)pid;
    }
    closedir(proc);
    if (!buffer)
        result = -ENOMEM;
    free(buffer);
    if (result < 0)
        return result;
    if (count == 0)
        return 0;
    qsort(members, count, sizeof *members, compare_pids);
    pid_t *topmost = calloc(count, sizeof *topmost);
    if (!topmost)
        return -ENOMEM;
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        pid_t parent = probe_parent_of(members[i]);
        if (!bsearch(&parent, members, count, sizeof *members, compare_pids))
            topmost[kept++] = members[i];
    }
    *pids = topmost;
    return (long)kept;
}

int probe_own_rank(void)
{
    char *buffer = malloc(ENVIRONMENT_READ_MAX);
    if (!buffer)
        return -1;
    ssize_t length = probe_read_file("/proc/self/environ", buffer, ENVIRONMENT_READ_MAX);
    bool out_of_memory;
    struct hd_job *job = length > 0 ? probe_parse_job_environment(buffer, (size_t)length, &out_of_memory) : NULL;
    free(buffer);
    int rank = job ? job->rank : -1;
    hd_job_free(job);
    return rank;
}
