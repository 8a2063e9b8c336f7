/* One run of the analysis (analysis.h): the graph, every rule of the registry in its order, the runtime
 * attribution of the fork findings, the remedies that depend on the subject, and the verdict. */
#include "analysis.h"

#include "catalogue.h"
#include "collectives.h"
#include "forkserver.h"
#include "inheritance.h"
#include "python_view.h"
#include "registry.h"
#include "remedies.h"
#include "rules/rule.h"
#include "verdict.h"

#include <stdlib.h>

struct report_analysis *report_analyze(const struct hd_snapshot *snapshot)
{
    return report_analyze_with(snapshot, &(struct report_options){ .catalogue = NULL });
}

/* What the rules worked out once for each other (report_timer_bound's answers). */
static void release_context(struct report_rule_context *c)
{
    free(c->timer_bound[0]);
    free(c->timer_bound[1]);
}

struct report_analysis *report_analyze_with(const struct hd_snapshot *snapshot, const struct report_options *options)
{
    const struct report_catalogue *catalogue = options->catalogue ? options->catalogue : report_catalogue_builtin();
    if (!catalogue)
        return NULL;
    struct report_analysis *analysis hd_cleanup(report_analysis_free) = calloc(1, sizeof *analysis);
    if (!analysis)
        return NULL;
    analysis->catalogue = catalogue;
    analysis->stuck_after_s = options->stuck_after_s;
    if (!report_build_graph(snapshot, &analysis->graph) ||
        !report_find_collectives(snapshot, analysis))
        return NULL;
    struct report_rule_context c cleanup_with(release_context) = {
        .snapshot = snapshot, .catalogue = catalogue, .analysis = analysis };
    for (int id = 0; id < REPORT_FINDING_IDS && !c.failed; id++)
        report_rule((enum report_finding_id)id)->apply(&c);
    if (!c.failed)
        report_attribute_lock_findings(&c);
    bool ok = !c.failed && report_forkserver_findings(snapshot, analysis) &&
              report_add_specific_remedies(snapshot, analysis) &&
              report_python_lines(snapshot, analysis) && report_decide(snapshot, analysis);
    return ok ? steal_pointer(&analysis) : NULL;
}

void report_analysis_free(struct report_analysis *analysis)
{
    if (!analysis)
        return;
    for (size_t f = 0; f < analysis->nfindings; f++) {
        struct report_finding *finding = &analysis->findings[f];
        free(finding->summary);
        for (size_t e = 0; e < finding->nevidence; e++) {
            free(finding->evidence[e].name);
            free(finding->evidence[e].value);
        }
        free(finding->evidence);
        for (size_t r = 0; r < finding->nremedies; r++)
            free(finding->remedies[r]);
        free(finding->remedies);
        free(finding->members);
    }
    free(analysis->findings);
    for (size_t h = 0; h < analysis->verdict.nhangs; h++) {
        free(analysis->verdict.hangs[h].chain);
        free(analysis->verdict.hangs[h].findings);
    }
    free(analysis->verdict.hangs);
    free(analysis->named_by_hang);
    report_release_collectives(analysis);
    report_graph_release(&analysis->graph);
    free(analysis);
}

const char *report_confidence_name(enum report_confidence confidence)
{
    static const char *const names[] = {
        [REPORT_CERTAIN] = "certain", [REPORT_LIKELY] = "likely", [REPORT_POSSIBLE] = "possible",
        [REPORT_INFORMATIONAL] = "informational",
    };
    return names[confidence];
}

const char *report_wake_name(enum report_wake wake)
{
    static const char *const names[] = {
        [REPORT_WAKE_RUNNING] = "running",          [REPORT_WAKE_TIMER] = "timed wait",
        [REPORT_WAKE_OUTSIDE] = "waits on the outside", [REPORT_WAKE_KERNEL] = "in the kernel",
        [REPORT_WAKE_WAKER] = "can be woken",       [REPORT_WAKE_NEVER] = "asleep forever",
        [REPORT_WAKE_EXITED] = "exited",
    };
    return names[wake];
}

const char *report_edge_kind_name(enum report_edge_kind kind)
{
    static const char *const names[] = {
        [REPORT_EDGE_LOCK_OWNER] = "lock-owner", [REPORT_EDGE_JOIN] = "join", [REPORT_EDGE_FUTEX] = "futex",
        [REPORT_EDGE_PIPE] = "pipe",             [REPORT_EDGE_SOCKET] = "socket", [REPORT_EDGE_CHILD] = "child",
        [REPORT_EDGE_FILE_LOCK] = "file-lock",   [REPORT_EDGE_SIGNAL] = "signal", [REPORT_EDGE_PTY] = "pty",
        [REPORT_EDGE_FUSE] = "fuse",
    };
    return names[kind];
}
