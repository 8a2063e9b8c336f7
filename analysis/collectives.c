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

/* The process's collective, from its main thread's Python frames, then any thread's, then native frames; the
 * backend's wait from the thread that waits on the peers. */
static bool process_collective(const struct report_graph *graph, const struct report_graph_process *threads,
                               struct report_collective *found)
{
    *found = (struct report_collective){ .process = threads->process, .node = REPORT_NO_NODE,
                                         .backend_node = REPORT_NO_NODE };
    size_t first = threads->first_node, end = threads->first_node + threads->nnodes;
    for (int pass = 0; pass < 3 && found->node == REPORT_NO_NODE; pass++)
        for (size_t n = first; n < end && found->node == REPORT_NO_NODE; n++) {
            const struct hd_thread *thread = graph->nodes[n].thread;
            bool main = thread->tid == threads->process->pid;
            if ((pass == 0 && main && python_collective(thread, found)) ||
                (pass == 1 && python_collective(thread, found)) || (pass == 2 && native_collective(thread, found)))
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

bool report_find_collectives(const struct report_graph *graph, struct report_collective **collectives,
                             size_t *ncollectives)
{
    *collectives = NULL;
    *ncollectives = 0;
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
