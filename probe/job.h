/* Who each process is in a distributed job: its rank, the job and the launcher, from the variables the launchers
 * set in its environment (torchrun, Open MPI, PMIx, MPICH and Intel MPI's PMI, Slurm), and from its cgroup.
 *
 * A rank's children inherit its environment: a DataLoader worker says "RANK=3" like its parent, and is labelled a
 * worker of rank 3, not rank 3. A torchrun agent (RANK of the node, set by a Kubeflow pod, or SLURM_PROCID of the
 * node) whose descendants carry other ranks is their launcher; so is a wrapper (a shell, env, numactl...) that
 * runs the rank's program as its child.
 *
 * /proc/<pid>/environ is the owner's alone (mode 0400, and the ptrace check), like the memory: for another user's
 * processes without the rights, the labels are missing and one note says how many.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>
#include <stddef.h>

/* The job label an environment (NUL-separated NAME=VALUE, as /proc/<pid>/environ holds it) gives; NULL when it
 * names no job or memory ran out (*out_of_memory says which). The role is HD_JOB_RANK and rank_pid 0 until
 * probe_label_jobs() places the process in its tree. */
struct hd_job *probe_parse_job_environment(const char *environment, size_t length, bool *out_of_memory);

/* Labels every process of the snapshot (reads environ and cgroup), then sets each label's role and rank_pid from
 * the tree and the processes' origins. False only when memory ran out. */
bool probe_label_jobs(struct hd_snapshot *snapshot);

/* probe_find_job_processes() is declared in probe.h, for cmd/. */
