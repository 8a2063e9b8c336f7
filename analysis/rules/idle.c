/* The idle family (rule.h): idle, a healthy wait that a thread which can run may end. Not a hang. */
#include "rule.h"

/* Healthy waits: blocked without a timeout, and a thread that can run may wake it. */
void report_rule_idle(struct report_rule_context *c)
{
    const struct report_graph *graph = &c->analysis->graph;
    for (size_t i = 0; i < graph->nnodes; i++) {
        const struct report_node *node = &graph->nodes[i];
        if (node->wake != REPORT_WAKE_WAKER || !node->blocked_without_timeout)
            continue;
        /* name a waker that can run by itself if there is one, else one that can be woken */
        size_t chosen = REPORT_NO_NODE;
        enum report_edge_kind through = REPORT_EDGE_FUTEX;
        for (size_t e = node->first_edge; e < node->first_edge + node->nedges; e++) {
            size_t waker = report_edge_waker(graph, &graph->edges[e], i);
            if (waker == REPORT_NO_NODE)
                continue;
            if (chosen == REPORT_NO_NODE ||
                (graph->nodes[chosen].wake == REPORT_WAKE_WAKER && graph->nodes[waker].wake != REPORT_WAKE_WAKER)) {
                chosen = waker;
                through = graph->edges[e].kind;
            }
        }
        if (chosen == REPORT_NO_NODE)
            continue;
        const struct report_node *waker = &graph->nodes[chosen];
        struct report_finding *finding = rule_finding(
            c, REPORT_IDLE, REPORT_INFORMATIONAL, node,
            "thread %d '%s' waits through %s; thread %d '%s' of process %d can wake it (%s): not hung",
            (int)node->thread->tid, node->thread->name, rule_edge_words(through), (int)waker->thread->tid,
            waker->thread->name, (int)waker->process->pid, report_wake_name(waker->wake));
        rule_member(c, finding, chosen);
    }
}
