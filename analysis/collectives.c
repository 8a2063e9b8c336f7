/* The collective of each process (collectives.h). */
#include "collectives.h"

#include "buffer.h"
#include "named_waits.h"
#include "util.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#define FRAMES_SEARCHED 64

/* The library's own frames between the collective's and the user's line: torch.distributed and the wrappers torch
 * puts around it (c10d_logger's exception logger, torch.nn.parallel) */
static const char *const library_files[] = { "*/torch/distributed/*", "*/torch/nn/parallel/*" };

/* The backends' waits on their peers, by the thread that runs the collective's work: a row per function. */
static const struct backend_wait {
    const char *function; /* fnmatch(3) over a native frame's symbol */
    const char *backend;
    const char *wait;
} backend_waits[] = {
    { "gloo::transport::*UnboundBuffer::waitRecv*", "gloo", "receive from a peer" },
    { "gloo::transport::*UnboundBuffer::waitSend*", "gloo", "send to a peer" },
    { "gloo::transport::*Buffer::waitRecv*", "gloo", "receive from a peer" },
    { "gloo::transport::*Buffer::waitSend*", "gloo", "send to a peer" },
    { "gloo::transport::*Pair::recv*", "gloo", "receive from a peer" },
};

static bool in_library(const char *file)
{
    for (size_t i = 0; file && i < COUNT(library_files); i++)
        if (fnmatch(library_files[i], file, 0) == 0)
            return true;
    return false;
}

/* The Python frames of `thread` as the table reads them; true with *found set when one names a collective. */
static bool python_collective(const struct hd_thread *thread, struct report_collective *found)
{
    const char *functions[FRAMES_SEARCHED], *files[FRAMES_SEARCHED];
    size_t n = 0;
    for (; n < thread->npython_frames && n < FRAMES_SEARCHED; n++) {
        functions[n] = thread->python_frames[n].function;
        files[n] = thread->python_frames[n].file ? thread->python_frames[n].file : "";
    }
    size_t frame;
    const struct report_named_wait *wait = report_find_named_wait(functions, files, n, &frame);
    if (!wait || !wait->collective)
        return false;
    const struct hd_python_frame *call = &thread->python_frames[frame];
    found->name = wait->collective;
    found->function = call->function;
    found->file = call->file;
    found->line = call->line;
    for (size_t f = frame + 1; f < thread->npython_frames; f++) {
        const struct hd_python_frame *caller = &thread->python_frames[f];
        if (in_library(caller->file))
            continue;
        found->site_function = caller->function;
        found->site_file = caller->file;
        found->site_line = caller->line;
        break;
    }
    return true;
}

static bool native_collective(const struct hd_thread *thread, struct report_collective *found)
{
    if (thread->stack.state != HD_STACK_TAKEN)
        return false;
    const char *functions[FRAMES_SEARCHED], *files[FRAMES_SEARCHED] = { 0 };
    size_t n = 0;
    for (; n < thread->stack.nframes && n < FRAMES_SEARCHED; n++)
        functions[n] = thread->stack.frames[n].symbol;
    size_t frame;
    const struct report_named_wait *wait = report_find_named_wait(functions, files, n, &frame);
    if (!wait || !wait->collective)
        return false;
    found->name = wait->collective;
    found->function = functions[frame];
    return true;
}

static const struct backend_wait *backend_wait_of(const struct hd_thread *thread)
{
    for (size_t f = 0; thread->stack.state == HD_STACK_TAKEN && f < thread->stack.nframes && f < FRAMES_SEARCHED; f++)
        for (size_t w = 0; thread->stack.frames[f].symbol && w < COUNT(backend_waits); w++)
            if (fnmatch(backend_waits[w].function, thread->stack.frames[f].symbol, 0) == 0)
                return &backend_waits[w];
    return NULL;
}

/* The process's collective, from its main thread's Python frames, then another thread's, then, in a process
 * labelled a rank, native frames: the native table is matched against every frame of every thread, which a
 * snapshot of thousands of threads that run no collective should not pay for. The backend's wait from the thread
 * that waits on the peers. */
static bool process_collective(const struct report_graph *graph, const struct report_graph_process *threads,
                               struct report_collective *found)
{
    const struct hd_process *process = threads->process;
    *found = (struct report_collective){ .process = process, .node = REPORT_NO_NODE, .backend_node = REPORT_NO_NODE };
    size_t first = threads->first_node, end = threads->first_node + threads->nnodes;
    int passes = process->job && process->job->role == HD_JOB_RANK ? 3 : 2;
    for (int pass = 0; pass < passes && found->node == REPORT_NO_NODE; pass++)
        for (size_t n = first; n < end && found->node == REPORT_NO_NODE; n++) {
            const struct hd_thread *thread = graph->nodes[n].thread;
            bool main = thread->tid == process->pid;
            if ((pass == 0 && main && python_collective(thread, found)) ||
                (pass == 1 && !main && python_collective(thread, found)) ||
                (pass == 2 && native_collective(thread, found)))
                found->node = n;
        }
    if (found->node == REPORT_NO_NODE)
        return false;
    for (size_t n = first; n < end; n++) {
        const struct backend_wait *wait = backend_wait_of(graph->nodes[n].thread);
        if (!wait)
            continue;
        const struct hd_timeout *timeout = &graph->nodes[n].thread->wait.timeout;
        found->backend = wait->backend;
        found->backend_wait = wait->wait;
        found->backend_node = n;
        found->backend_timeout_known = timeout->kind == HD_TIMEOUT_FINITE;
        found->backend_timeout_s = found->backend_timeout_known ? (double)timeout->remaining_ns / 1e9 : 0;
        break;
    }
    return true;
}

static bool gather_collectives(const struct report_graph *graph, struct report_collective **collectives,
                               size_t *ncollectives)
{
    for (size_t p = 0; p < graph->nprocesses; p++) {
        struct report_collective found;
        if (!process_collective(graph, &graph->processes[p], &found))
            continue;
        struct report_collective *grown = realloc(*collectives, (*ncollectives + 1) * sizeof *grown);
        if (!grown)
            return false;
        *collectives = grown;
        (*collectives)[(*ncollectives)++] = found;
    }
    return true;
}

static bool gather_jobs(const struct hd_snapshot *snapshot, struct report_analysis *analysis);

bool report_find_collectives(const struct hd_snapshot *snapshot, struct report_analysis *analysis)
{
    return gather_collectives(&analysis->graph, &analysis->collectives, &analysis->ncollectives) &&
           gather_jobs(snapshot, analysis);
}

void report_release_collectives(struct report_analysis *analysis)
{
    free(analysis->collectives);
    for (size_t j = 0; j < analysis->njobs; j++)
        free(analysis->jobs[j].ranks);
    free(analysis->jobs);
}

const struct report_collective *report_process_collective(const struct report_analysis *analysis,
                                                          const struct hd_process *process)
{
    for (size_t i = 0; i < analysis->ncollectives; i++)
        if (analysis->collectives[i].process == process)
            return &analysis->collectives[i];
    return NULL;
}

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "?";
}

void report_describe_collective(const struct report_collective *collective, struct report_buffer *out)
{
    report_buffer_puts(out, collective->name);
    if (collective->site_file)
        report_buffer_printf(out, " at %s:%d", base_name(collective->site_file), collective->site_line);
    else if (collective->file)
        report_buffer_printf(out, " at %s:%d", base_name(collective->file), collective->line);
}

/* ---- the ranks of a job ---- */

static const char *job_key(const struct hd_job *job)
{
    return job->master ? job->master : job->run_id ? job->run_id : job->job_id ? job->job_id : "";
}

static bool same_job(const struct hd_job *a, const struct hd_job *b)
{
    return a->world_size == b->world_size && strcmp(job_key(a), job_key(b)) == 0 &&
           (a->step_id == NULL) == (b->step_id == NULL) && (!a->step_id || strcmp(a->step_id, b->step_id) == 0);
}

static size_t main_node(const struct report_graph *graph, const struct hd_process *process)
{
    const struct report_graph_process *threads = report_graph_process_of(graph, process);
    if (!threads || threads->nnodes == 0)
        return REPORT_NO_NODE;
    for (size_t n = threads->first_node; n < threads->first_node + threads->nnodes; n++)
        if (graph->nodes[n].thread->tid == process->pid)
            return n;
    return threads->first_node;
}

static int by_rank(const void *a, const void *b)
{
    int x = ((const struct report_job_rank *)a)->process->job->rank;
    int y = ((const struct report_job_rank *)b)->process->job->rank;
    return (x > y) - (x < y);
}

static bool gather_jobs(const struct hd_snapshot *snapshot, struct report_analysis *analysis)
{
    struct report_job_ranks **jobs = &analysis->jobs;
    size_t *njobs = &analysis->njobs;
    for (size_t p = 0; p < snapshot->nprocesses; p++) {
        const struct hd_process *process = &snapshot->processes[p];
        const struct hd_job *job = process->job;
        if (process->zombie || !job || job->role != HD_JOB_RANK || job->rank < 0)
            continue;
        struct report_job_ranks *into = NULL;
        for (size_t j = 0; j < *njobs && !into; j++)
            if (same_job((*jobs)[j].job, job))
                into = &(*jobs)[j];
        if (!into) {
            struct report_job_ranks *grown = realloc(*jobs, (*njobs + 1) * sizeof *grown);
            if (!grown)
                return false;
            *jobs = grown;
            into = &(*jobs)[(*njobs)++];
            *into = (struct report_job_ranks){ .job = job };
        }
        struct report_job_rank *ranks = realloc(into->ranks, (into->count + 1) * sizeof *ranks);
        if (!ranks)
            return false;
        into->ranks = ranks;
        ranks[into->count++] = (struct report_job_rank){ .process = process,
                                                         .collective = report_process_collective(analysis, process),
                                                         .main_node = main_node(&analysis->graph, process) };
    }
    for (size_t j = 0; j < *njobs; j++)
        qsort((*jobs)[j].ranks, (*jobs)[j].count, sizeof *(*jobs)[j].ranks, by_rank);
    return true;
}

bool report_same_call(const struct report_collective *a, const struct report_collective *b)
{
    if (strcmp(a->name, b->name) != 0 || a->site_line != b->site_line)
        return false;
    return (!a->site_file && !b->site_file) || (a->site_file && b->site_file && strcmp(a->site_file, b->site_file) == 0);
}

void report_describe_ranks_in(const struct report_job_ranks *job, const struct report_collective *like,
                              struct report_buffer *out, size_t listed, size_t *count)
{
    size_t n = 0;
    for (size_t r = 0; r < job->count; r++) {
        const struct report_collective *own = job->ranks[r].collective;
        n += like ? own && report_same_call(own, like) : !own;
    }
    report_buffer_puts(out, n == 1 ? "rank " : "ranks ");
    size_t shown = 0;
    for (size_t r = 0; r < job->count; r++) {
        const struct report_collective *own = job->ranks[r].collective;
        if (like ? !own || !report_same_call(own, like) : own != NULL)
            continue;
        if (shown == listed) {
            report_buffer_puts(out, ",…");
            break;
        }
        report_buffer_printf(out, "%s%d", shown++ ? "," : "", job->ranks[r].process->job->rank);
    }
    if (count)
        *count = n;
}
