/* The model of `hangdoc merge`, shared by its modules: what each report says of each rank (merge_extract.c), the
 * rank table, prefix tree and classes made of it (merge_tree.c), the merged verdict (merge_verdict.c), and the
 * renderers (merge_text.c, merge_json.c, merge_dot.c). Programs use merge.h; only the merge's own files include this.
 *
 * Every string here was read from a report, or is text composed from such strings: it holds the exact value (the
 * JSON keeps it so), and the text and DOT renderers escape all of it on the way out.
 */
#pragma once

#include "analysis.h"
#include "merge.h"
#include "merge_ranks.h"
#include "named_waits.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define REPORT_MERGE_NONE ((size_t)-1)
/* Bounds on what one report may make the merge hold: frames of one stack (the innermost are kept), ranks of a job
 * (a WORLD_SIZE above this is taken as unknown: the missing ranks are computed over [0, WORLD_SIZE)) */
#define REPORT_MERGE_FRAMES_MAX 1024
#define REPORT_MERGE_WORLD_SIZE_MAX (1 << 20)

/* Whose process a rank's local root cause is in, seen from the rank. */
enum report_merge_subject {
    REPORT_MERGE_SUBJECT_NONE,
    REPORT_MERGE_SUBJECT_RANK,    /* the rank's own process */
    REPORT_MERGE_SUBJECT_WORKER,  /* a process whose job.rank_pid is the rank's (a DataLoader worker) */
    REPORT_MERGE_SUBJECT_PROCESS, /* another process, below the rank in the report's chain */
};

struct report_merge_finding {
    char *id;
    char *confidence;
    pid_t pid;
    pid_t tid;
    char *summary;
};

/* What one host's report says of one rank: its first hang that is the rank's (its subject is the rank's process or
 * one of its workers, or its chain goes through the rank). */
struct report_merge_local_verdict {
    enum report_hung hung;
    enum report_cause cause; /* REPORT_CAUSE_NONE unless hung */
    char *root_cause;        /* the finding id; NULL when none names the hang */
    char *confidence;        /* of that finding; NULL when none */
    pid_t pid;               /* the root cause's subject; 0 when none */
    pid_t tid;
    enum report_merge_subject subject;
    char *summary; /* the finding's one line; NULL when none */
    char *remedy;  /* its first remedy; NULL when none */
    /* the hang is a busy loop of the rank's own process while its main thread waits in a collective: NCCL and CUDA
     * spin while they wait, so every waiting rank may look busy; the merge counts it as the wait, not as a hang of
     * the rank's own (report_merge_hung_by_itself) */
    bool spins_in_collective;
};

/* The collective a rank's process is in, from its report's `collective` (analysis/collectives.h). */
struct report_merge_call {
    char *name;       /* "all_reduce"; NULL when the report names none */
    char *site;       /* "train.py:41": the call site's file without its directories, and line; NULL when none */
    bool timed;       /* the report says how long its thread has slept there, and its --stuck-after */
    bool waited_long; /* its thread asleep in it for the report's --stuck-after or longer */
};

/* One rank as one report shows it. */
struct report_merge_observation {
    size_t document;
    size_t job;
    int rank;
    int local_rank; /* -1: unknown */
    int group_rank; /* -1: unknown */
    pid_t pid;
    char **stack; /* the main thread's frames, outermost first: Python where present, else native names */
    size_t nstack;
    bool python;  /* the frames are Python's */
    const struct report_named_wait *wait; /* the innermost known wait of the stack (named_waits.h), or NULL */
    size_t wait_frame;                    /* its index in stack */
    struct report_merge_local_verdict verdict;
    struct report_merge_finding *findings; /* every finding about the rank's process or its workers */
    size_t nfindings;
    struct report_merge_call call;
};

/* One report. */
struct report_merge_document {
    char *source; /* the file it came from ("-": standard input) */
    char *host;
    char *boot_id; /* NULL when the report has none */
    double taken_at;
    struct report_merge_local_verdict verdict; /* its first hang, whoever's it is */
    char *comm;        /* the name of the hang's process */
    size_t ranks;      /* rank processes it shows */
    bool hang_in_rank; /* its first hang is one of its ranks' */
    pid_t *launchers;  /* processes whose job role is launcher */
    size_t nlaunchers;
};

/* One rank of a job, over every report that shows it. */
struct report_merge_rank {
    int rank;
    size_t first; /* its observations: merge->order[first .. first + reports - 1], oldest first */
    size_t reports;
    size_t latest;   /* the observation the tree and the classes use: the last one taken */
    int unchanged;   /* 1: the same stack in every report of the same process; 0: it changed; -1: one report */
    bool conflict;   /* reports show it as different processes */
    size_t leaf;     /* the tree node its stack ends at */
    size_t class_id; /* index into job->classes */
};

/* A node of the prefix tree: one frame, and the ranks whose stacks pass through it. */
struct report_merge_node {
    const char *label; /* borrowed from an observation; NULL for the root */
    size_t parent;     /* REPORT_MERGE_NONE for the root */
    size_t first_child, last_child, next_sibling;
    size_t depth;
    struct report_rank_set ranks;
    struct report_rank_set ends; /* the ranks whose stacks end here */
    size_t first_class;          /* classes ending here, chained by next_in_leaf */
};

/* Ranks whose main threads have the same stack and whose reports say the same of them. */
struct report_merge_class {
    struct report_rank_set ranks;
    size_t leaf;
    size_t representative; /* index into job->ranks: the lowest rank */
    bool most_common;
    bool outlier; /* not the most common, and there is more than one class */
    struct report_rank_set unchanged; /* its ranks whose stacks stayed the same over several reports */
    struct report_rank_set changed;
    size_t next_in_leaf;
};

enum report_merge_verdict_kind {
    REPORT_MERGE_RANK_HUNG,      /* a rank is hung by itself: its host's report names the root cause */
    REPORT_MERGE_MISMATCH,       /* the ranks wait in different collectives */
    REPORT_MERGE_PROCESS_HUNG,   /* a report is hung in a process that is no rank's */
    REPORT_MERGE_MISSING_RANKS,  /* WORLD_SIZE names ranks that no report shows */
    REPORT_MERGE_OUTLIER,        /* ranks whose stacks differ from the others', none hung by itself */
    REPORT_MERGE_UNIFORM,        /* every rank looks alike, none is hung by itself */
    REPORT_MERGE_NO_RANKS,       /* no report shows a rank */
    REPORT_MERGE_VERDICT_KINDS
};

enum report_merge_step_kind {
    REPORT_MERGE_STEP_MISMATCH,     /* the ranks in different collectives: every call and its ranks */
    REPORT_MERGE_STEP_WAITING,      /* the most common class, in its wait */
    REPORT_MERGE_STEP_NEVER_JOINED, /* a rank that is not in the collective the others wait in */
    REPORT_MERGE_STEP_DIFFERS,      /* a rank whose stack differs from the others' (no collective to join) */
    REPORT_MERGE_STEP_RANK,         /* the rank itself, when its stack is the common one */
    REPORT_MERGE_STEP_MAIN_THREAD,  /* where its main thread is */
    REPORT_MERGE_STEP_ROOT_CAUSE,   /* its host's root cause */
    REPORT_MERGE_STEP_MISSING,      /* ranks that no report shows */
    REPORT_MERGE_STEP_PROCESS,      /* a hung process that is no rank's */
    REPORT_MERGE_STEP_NONE_HUNG,    /* every rank alike and none hung by itself: what that means */
    REPORT_MERGE_STEP_NO_RANKS,     /* no report shows a rank */
    REPORT_MERGE_STEP_KINDS
};

struct report_merge_step {
    enum report_merge_step_kind kind;
    char *text;
    struct report_rank_set ranks; /* the ranks it is about; empty when none */
};

struct report_merge_verdict {
    enum report_hung hung;
    enum report_cause cause;
    enum report_merge_verdict_kind kind;
    size_t job;      /* the job it is about; REPORT_MERGE_NONE when none */
    size_t culprit;  /* the observation of the culprit rank; REPORT_MERGE_NONE when none */
    size_t document; /* the report of the culprit (rank or process); REPORT_MERGE_NONE when none */
    struct report_merge_step *steps; /* the chain, from the waiting ranks down to the root cause */
    size_t nsteps;
    char **also; /* facts beside the chain: other ranks hung by themselves, missing ranks */
    size_t nalso;
    char **next; /* what to look at or enable next */
    size_t nnext;
};

/* The ranks in one call: the same collective from the same call site (merge_calls.c). */
struct report_merge_call_row {
    const char *name; /* borrowed from an observation */
    const char *site; /* NULL when no report named one */
    struct report_rank_set ranks;
    bool timed;       /* every rank's report says how long it waited (reports before `collective` do not) */
    bool waited_long; /* every rank of it waited the threshold */
};

struct report_merge_job {
    char *job_id; /* SLURM_JOB_ID */
    char *step_id;
    char *run_id; /* TORCHELASTIC_RUN_ID */
    char *master; /* MASTER_ADDR:MASTER_PORT */
    char *rank_variable;
    int world_size; /* the largest a rank names; -1: none does (or one above REPORT_MERGE_WORLD_SIZE_MAX) */
    bool world_size_differs; /* ranks name different ones (said once in a note) */
    struct report_merge_rank *ranks; /* ascending */
    size_t nranks;
    struct report_rank_set seen;
    struct report_rank_set missing;
    struct report_merge_node *nodes; /* nodes[0] is the root */
    size_t nnodes, nodes_capacity;
    struct report_merge_class *classes; /* the smallest first */
    size_t nclasses, classes_capacity;
    size_t most_common; /* index into classes; REPORT_MERGE_NONE when none */
    struct report_merge_call_row *calls; /* the ranks' collectives, the most ranks first (merge_calls.c) */
    size_t ncalls, calls_capacity;
    struct report_rank_set in_no_call; /* ranks whose report names no collective of theirs */
    struct report_merge_verdict verdict;
};

struct report_merge_note {
    char *source;
    char *text;
};

struct report_merge {
    struct report_merge_document *documents;
    size_t ndocuments, documents_capacity;
    struct report_merge_observation *observations;
    size_t nobservations, observations_capacity;
    size_t *order; /* observations by job, rank and time taken (merge_tree.c) */
    struct report_merge_job *jobs;
    size_t njobs, jobs_capacity;
    struct report_merge_note *notes;
    size_t nnotes, notes_capacity;
    size_t skipped; /* inputs, or documents, not merged */
    size_t last_job; /* the job the last rank was in: the next is most likely in it too */
    struct report_merge_verdict verdict; /* the merge's own when no job has the verdict (process-hung, no ranks) */
    const struct report_merge_verdict *final; /* the merged verdict: a job's or the one above */
    bool finished;
};

/* Grows `*items` (of `item_size` bytes each) to hold count + 1; false when memory ran out. */
bool report_merge_grow(void **items, size_t *capacity, size_t count, size_t item_size);
/* strdup that keeps NULL NULL; *failed is set when memory ran out. */
char *report_merge_strdup(const char *text, bool *failed);
/* A note about an input or a rank, printf-style; false when memory ran out. */
bool report_merge_add_note(struct report_merge *merge, const char *source, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* "waits for a mutex its parent held at fork": what a finding id says after its subject; NULL for an id the table
 * does not know. (merge_waits.c) */
const char *report_merge_finding_phrase(const char *id);

/* The table of the ranks' collectives of `job`, from its rank table (merge_calls.c); false when memory ran out. */
bool report_merge_tabulate_calls(const struct report_merge *merge, struct report_merge_job *job);
/* "all_reduce at train.py:41" of a row. */
void report_merge_describe_call(const struct report_merge_call_row *row, struct report_buffer *out);

/* The rank table, tree and classes of every job (merge_tree.c); false when memory ran out. */
bool report_merge_build_jobs(struct report_merge *merge);
/* Whether the rank is hung by itself as the merge counts it: the report's word, except a spin inside the
 * collective (spins_in_collective), which is not hung. (merge_tree.c) */
enum report_hung report_merge_hung_by_itself(const struct report_merge_local_verdict *verdict);
/* The index of `rank` in job->ranks (after the build), or REPORT_MERGE_NONE. O(log n). */
size_t report_merge_rank_index(const struct report_merge_job *job, int rank);
/* The verdict of every job and the merged one (merge_verdict.c); false when memory ran out. */
bool report_merge_decide(struct report_merge *merge);

/* "job 4242.0 · run r1 · master 10.0.0.1:29500": unescaped (merge_text.c) */
void report_merge_job_name(const struct report_merge_job *job, struct report_buffer *out);
/* The verdict in one line, unescaped, as text and JSON print it (merge_verdict.c). */
void report_merge_verdict_line(const struct report_merge *merge, const struct report_merge_verdict *verdict,
                               struct report_buffer *out);
/* The "what" of an observation's main thread: "waits for a DataLoader batch", "is in foo (x.py:3)" (singular), or
 * "wait ..."/"are in ..." (plural). Unescaped. */
void report_merge_describe_wait(const struct report_merge_observation *observation, bool plural,
                                struct report_buffer *out);
