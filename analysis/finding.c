/* Growing a finding (finding.h). */
#include "finding.h"

#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static char *format(const char *pattern, va_list args) __attribute__((format(printf, 1, 0)));
static char *format(const char *pattern, va_list args)
{
    char *text = NULL;
    return vasprintf(&text, pattern, args) < 0 ? NULL : text;
}

struct report_finding *report_finding_append(struct report_analysis *analysis, enum report_finding_id id,
                                             enum report_confidence confidence, pid_t pid, pid_t tid,
                                             const char *summary, va_list args)
{
    struct report_finding *grown = hd_grow(analysis->findings, &analysis->findings_capacity, analysis->nfindings,
                                           sizeof *grown);
    if (!grown)
        return NULL;
    analysis->findings = grown;
    struct report_finding *finding = &analysis->findings[analysis->nfindings++];
    *finding = (struct report_finding){
        .kind = id,
        .id = report_finding_id_name(id),
        .confidence = confidence,
        .hang = report_rule(id)->hang,
        .pid = pid,
        .tid = tid,
        .summary = format(summary, args),
    };
    return finding->summary ? finding : NULL;
}

bool report_finding_evidence(struct report_finding *finding, const char *name, const char *value, va_list args)
{
    struct report_evidence *grown = reallocarray(finding->evidence, finding->nevidence + 1, sizeof *grown);
    if (!grown)
        return false;
    finding->evidence = grown;
    struct report_evidence *item = &finding->evidence[finding->nevidence++];
    item->name = strdup(name);
    item->value = format(value, args);
    return item->name && item->value;
}

bool report_finding_add_evidence(struct report_finding *finding, const char *name, const char *value, ...)
{
    va_list args;
    va_start(args, value);
    bool added = report_finding_evidence(finding, name, value, args);
    va_end(args);
    return added;
}

bool report_finding_remedy(struct report_finding *finding, const char *text)
{
    for (size_t r = 0; r < finding->nremedies; r++)
        if (strcmp(finding->remedies[r], text) == 0)
            return true;
    char **grown = reallocarray(finding->remedies, finding->nremedies + 1, sizeof *grown);
    if (!grown)
        return false;
    finding->remedies = grown;
    finding->remedies[finding->nremedies] = strdup(text);
    return finding->remedies[finding->nremedies++] != NULL;
}

bool report_finding_member(struct report_finding *finding, size_t node)
{
    for (size_t i = 0; i < finding->nmembers; i++)
        if (finding->members[i] == node)
            return true;
    size_t *grown = reallocarray(finding->members, finding->nmembers + 1, sizeof *grown);
    if (!grown)
        return false;
    finding->members = grown;
    finding->members[finding->nmembers++] = node;
    return true;
}
