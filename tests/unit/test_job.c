/* Job labels from an environment (probe/job.h): which launcher's variable gives the rank, what else is kept, and
 * hostile environments (numbers that are not, values past their bound, no final NUL). Environments are written
 * with '\n' between entries here and turned into NULs, as /proc/<pid>/environ holds them. */
#include "job.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static struct hd_job *parse(const char *lines)
{
    size_t length = strlen(lines);
    char *environment = malloc(length + 1);
    cr_assert_not_null(environment);
    for (size_t i = 0; i <= length; i++)
        environment[i] = lines[i] == '\n' ? '\0' : lines[i];
    bool out_of_memory = true;
    struct hd_job *job = probe_parse_job_environment(environment, length, &out_of_memory);
    cr_assert_not(out_of_memory);
    free(environment);
    return job;
}

static const struct rank_case {
    const char *name;
    const char *environment;
    int rank, world_size, local_rank, local_world_size;
    const char *variable;
} rank_cases[] = {
    { "torchrun worker: RANK is global, Slurm's node index is not the rank",
      "PATH=/usr/bin\nSLURM_PROCID=1\nRANK=5\nWORLD_SIZE=16\nLOCAL_RANK=1\nLOCAL_WORLD_SIZE=8\nGROUP_RANK=0\n"
      "TORCHELASTIC_RUN_ID=r1\n",
      5, 16, 1, 8, "RANK" },
    { "Kubeflow pod without torchrun: a bare RANK", "RANK=2\nWORLD_SIZE=4\n", 2, 4, -1, -1, "RANK" },
    { "torchrun agent in a Slurm step: SLURM_PROCID before a bare RANK",
      "RANK=9\nSLURM_PROCID=3\nSLURM_STEP_ID=0\nSLURM_NTASKS=4\nSLURM_LOCALID=0\n", 3, 4, 0, -1, "SLURM_PROCID" },
    { "SLURM_PROCID outside a step (a batch script) is no rank: a bare RANK then",
      "RANK=9\nSLURM_PROCID=0\nSLURM_JOB_ID=5\n", 9, -1, -1, -1, "RANK" },
    { "Open MPI over PMIx: Open MPI's own variables",
      "PMIX_RANK=7\nOMPI_COMM_WORLD_RANK=7\nOMPI_COMM_WORLD_SIZE=8\nOMPI_COMM_WORLD_LOCAL_RANK=3\n"
      "OMPI_COMM_WORLD_LOCAL_SIZE=4\n",
      7, 8, 3, 4, "OMPI_COMM_WORLD_RANK" },
    { "PMIx alone", "PMIX_RANK=12\n", 12, -1, -1, -1, "PMIX_RANK" },
    { "MPICH, Intel MPI", "PMI_RANK=1\nPMI_SIZE=2\nMPI_LOCALRANKID=1\nMPI_LOCALNRANKS=2\n", 1, 2, 1, 2, "PMI_RANK" },
    { "srun task", "SLURM_JOB_ID=42\nSLURM_STEP_ID=0\nSLURM_PROCID=3\nSLURM_NTASKS=4\nSLURM_NODEID=0\n", 3, 4, -1,
      -1, "SLURM_PROCID" },
    { "RANK under torchrun that is no number: the next source",
      "RANK=x\nTORCHELASTIC_RUN_ID=r\nSLURM_PROCID=2\nSLURM_STEP_ID=1\n", 2, -1, -1, -1, "SLURM_PROCID" },
    { "the first of two, as getenv finds it", "RANK=1\nRANK=2\n", 1, -1, -1, -1, "RANK" },
    { "a size that is no number is none", "RANK=1\nWORLD_SIZE=-4\n", 1, -1, -1, -1, "RANK" },
};

Test(job, each_launcher_gives_the_rank_its_own_variable_says)
{
    for (size_t i = 0; i < sizeof rank_cases / sizeof rank_cases[0]; i++) {
        const struct rank_case *c = &rank_cases[i];
        struct hd_job *job = parse(c->environment);
        cr_assert_not_null(job, "%s: labelled", c->name);
        cr_assert_eq(job->role, HD_JOB_RANK, "%s", c->name);
        cr_assert_eq(job->rank, c->rank, "%s: rank %d", c->name, job->rank);
        cr_assert_eq(job->world_size, c->world_size, "%s: world size %d", c->name, job->world_size);
        cr_assert_eq(job->local_rank, c->local_rank, "%s: local rank %d", c->name, job->local_rank);
        cr_assert_eq(job->local_world_size, c->local_world_size, "%s: local size %d", c->name,
                     job->local_world_size);
        cr_assert_str_eq(job->rank_variable, c->variable, "%s", c->name);
        hd_job_free(job);
    }
}

Test(job, the_job_the_run_and_the_master_are_kept)
{
    struct hd_job *job = parse("SLURM_JOB_ID=42\nSLURM_STEP_ID=3\nSLURM_NODEID=1\nTORCHELASTIC_RUN_ID=abc\n"
                               "MASTER_ADDR=node-0\nMASTER_PORT=29500\nGROUP_RANK=1\nRANK=9\n");
    cr_assert_not_null(job);
    cr_assert_str_eq(job->job_id, "42");
    cr_assert_str_eq(job->step_id, "3");
    cr_assert_eq(job->node_id, 1);
    cr_assert_eq(job->group_rank, 1);
    cr_assert_str_eq(job->run_id, "abc");
    cr_assert_str_eq(job->master, "node-0:29500");
    hd_job_free(job);

    job = parse("SLURM_JOB_ID=7\nSLURM_PROCID=0\nSLURM_NTASKS=4\n");
    cr_assert_not_null(job, "a job without a rank: the batch script's shell");
    cr_assert_eq(job->rank, -1, "SLURM_PROCID outside a step is no rank");
    cr_assert_eq(job->role, HD_JOB_LAUNCHER);
    cr_assert_null(job->rank_variable);
    hd_job_free(job);
}

Test(job, environments_that_name_no_job)
{
    static const char *const none[] = {
        "",
        "PATH=/bin\nHOME=/root\n",
        "RANKX=1\nMY_RANK=2\nXRANK=3\n",      /* names that only contain a launcher's */
        "RANK\nWORLD_SIZE\n",                 /* no '=' */
        "RANK=\n",                            /* empty */
        "RANK=99999999999\n",                 /* past INT_MAX */
        "RANK=3x\n",
        "RANK= 3\n",
        "LOCAL_RANK=1\nWORLD_SIZE=8\nMASTER_ADDR=h\n", /* no rank, no job, no torchrun */
    };
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        cr_assert_null(parse(none[i]), "no job in \"%s\"", none[i]);
}

Test(job, values_are_bounded_and_the_last_entry_needs_no_nul)
{
    char environment[4096] = "SLURM_JOB_ID=";
    memset(environment + 13, 'j', 1000);
    strcpy(environment + 1013, "\nMASTER_ADDR=");
    memset(environment + 1026, 'a', 1000);
    strcpy(environment + 2026, "\nMASTER_PORT=1");
    struct hd_job *job = parse(environment);
    cr_assert_not_null(job);
    cr_assert_eq(strlen(job->job_id), 255, "bounded to 255 bytes");
    cr_assert_leq(strlen(job->master), 255);
    cr_assert_str_eq(job->master + strlen(job->master) - 2, ":1", "the port, read up to the end without a NUL");
    hd_job_free(job);
}
