/* What the report's unit tests assert about an analysis (analysis_checks.h). */
#include "analysis_checks.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

/* ---- findings ------------------------------------------------------------------------------------------------- */

size_t count_findings(const struct report_analysis *analysis, const char *id)
{
    size_t count = 0;
    for (size_t f = 0; f < analysis->nfindings; f++)
        count += strcmp(analysis->findings[f].id, id) == 0;
    return count;
}

const struct report_finding *first_finding(const struct report_analysis *analysis, const char *id)
{
    for (size_t f = 0; f < analysis->nfindings; f++)
        if (strcmp(analysis->findings[f].id, id) == 0)
            return &analysis->findings[f];
    return NULL;
}

const struct report_finding *the_finding(const struct report_analysis *analysis, const char *id)
{
    cr_assert_eq(count_findings(analysis, id), 1, "%zu findings \"%s\"", count_findings(analysis, id), id);
    return first_finding(analysis, id);
}

void finding_ids(const struct report_analysis *analysis, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t f = 0; f < analysis->nfindings && used < cap; f++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", f ? "," : "", analysis->findings[f].id);
}

const char *evidence_of(const struct report_finding *finding, const char *name)
{
    for (size_t e = 0; finding && e < finding->nevidence; e++)
        if (strcmp(finding->evidence[e].name, name) == 0)
            return finding->evidence[e].value;
    return NULL;
}

size_t count_evidence(const struct report_finding *finding, const char *name)
{
    size_t count = 0;
    for (size_t e = 0; finding && e < finding->nevidence; e++)
        count += strcmp(finding->evidence[e].name, name) == 0;
    return count;
}

const char *evidence_at(const struct report_finding *finding, const char *name, size_t i)
{
    for (size_t e = 0; finding && e < finding->nevidence; e++)
        if (strcmp(finding->evidence[e].name, name) == 0 && i-- == 0)
            return finding->evidence[e].value;
    return NULL;
}

size_t remedies_containing(const struct report_finding *finding, const char *part)
{
    size_t count = 0;
    for (size_t r = 0; r < finding->nremedies; r++)
        count += strstr(finding->remedies[r], part) != NULL;
    return count;
}

pid_t member_tid(const struct report_analysis *analysis, const struct report_finding *finding, size_t i)
{
    cr_assert(i < finding->nmembers, "member %zu of %zu", i, finding->nmembers);
    cr_assert(finding->members[i] < analysis->graph.nnodes);
    return analysis->graph.nodes[finding->members[i]].thread->tid;
}

bool has_member(const struct report_analysis *analysis, const struct report_finding *finding, pid_t tid)
{
    for (size_t i = 0; i < finding->nmembers; i++)
        if (member_tid(analysis, finding, i) == tid)
            return true;
    return false;
}

/* ---- the graph ------------------------------------------------------------------------------------------------ */

enum report_wake wake_of(const struct report_analysis *analysis, pid_t tid)
{
    size_t node = report_graph_find(&analysis->graph, tid);
    cr_assert_neq(node, NO_NODE, "no node for thread %d", (int)tid);
    return analysis->graph.nodes[node].wake;
}

bool has_edge(const struct report_analysis *analysis, pid_t from, pid_t to, enum report_edge_kind kind)
{
    size_t a = report_graph_find(&analysis->graph, from), b = report_graph_find(&analysis->graph, to);
    for (size_t e = 0; e < analysis->graph.nedges; e++) {
        const struct report_edge *edge = &analysis->graph.edges[e];
        if (edge->from != a || edge->kind != kind)
            continue;
        if (edge->target == REPORT_TO_THREAD && edge->to == b)
            return true;
        /* an OR-set: any thread of the process but the waiter */
        const struct report_graph_process *process = &analysis->graph.processes[edge->to];
        if (edge->target == REPORT_TO_PROCESS && b != a && b >= process->first_node &&
            b < process->first_node + process->nnodes)
            return true;
    }
    return false;
}

void assert_owner_edges_point_to_owners(const struct report_analysis *analysis)
{
    const struct report_graph *graph = &analysis->graph;
    for (size_t e = 0; e < graph->nedges; e++) {
        const struct report_edge *edge = &graph->edges[e];
        cr_assert(edge->from < graph->nnodes);
        cr_assert(edge->target == REPORT_TO_THREAD ? edge->to < graph->nnodes : edge->to < graph->nprocesses);
        cr_assert(edge->target == REPORT_TO_PROCESS || edge->from != edge->to, "a thread does not wake itself");
        if (edge->kind != REPORT_EDGE_LOCK_OWNER)
            continue;
        const struct hd_thread *waiter = graph->nodes[edge->from].thread;
        cr_assert_eq(waiter->wait.kind, HD_WAIT_FUTEX);
        cr_assert_eq(waiter->wait.lock.owner_tid, graph->nodes[edge->to].thread->tid);
    }
}

/* ---- the verdict ---------------------------------------------------------------------------------------------- */

void assert_chain(const struct report_analysis *analysis, const pid_t *chain, size_t length)
{
    cr_assert_eq(analysis->verdict.nchain, length, "chain of %zu", analysis->verdict.nchain);
    for (size_t i = 0; i < length; i++)
        cr_assert_eq(analysis->verdict.chain[i], chain[i], "chain[%zu] = %d", i, (int)analysis->verdict.chain[i]);
}

const char *root_cause_id(const struct report_analysis *analysis)
{
    long root = analysis->verdict.root_cause;
    if (root < 0)
        return NULL;
    cr_assert((size_t)root < analysis->nfindings);
    return analysis->findings[root].id;
}
