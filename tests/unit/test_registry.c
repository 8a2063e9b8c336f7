/* The registry of rules, the JSON Schema and the man page name the same finding ids and causes: a rule added to
 * one of them and not the others fails here. */
#include "registry.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *schema(void)
{
    const char *path = getenv("HANGDOC_SCHEMA");
    cr_assert_not_null(path, "HANGDOC_SCHEMA names the schema");
    json_object *document = json_object_from_file(path);
    cr_assert_not_null(document, "%s parses", path);
    return document;
}

static json_object *at(json_object *object, const char *const *keys)
{
    for (; *keys; keys++) {
        json_object *next = NULL;
        cr_assert(json_object_object_get_ex(object, *keys, &next), "the schema has '%s'", *keys);
        object = next;
    }
    return object;
}

static bool enum_has(json_object *values, const char *name)
{
    for (size_t i = 0; i < json_object_array_length(values); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(values, i)), name) == 0)
            return true;
    return false;
}

/* The man page with groff's "\-" read as "-". */
static char *man_page(void)
{
    const char *root = getenv("HANGDOC_SOURCE_ROOT");
    cr_assert_not_null(root);
    char path[4096];
    snprintf(path, sizeof path, "%s/man/hangdoc.1", root);
    FILE *file = fopen(path, "r");
    cr_assert_not_null(file, "%s opens", path);
    char *text = calloc(1, 1 << 20);
    cr_assert_not_null(text);
    size_t length = fread(text, 1, (1 << 20) - 1, file);
    fclose(file);
    size_t out = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] == '\\' && i + 1 < length && text[i + 1] == '-')
            continue;
        text[out++] = text[i];
    }
    text[out] = '\0';
    return text;
}

/* The text between the heading `from` and the next heading of the same level. */
static char *section(char *page, const char *from, const char *next_level)
{
    char *start = strstr(page, from);
    cr_assert_not_null(start, "the man page has '%s'", from);
    start += strlen(from);
    char *end = strstr(start, next_level);
    if (end)
        *end = '\0';
    return start;
}

Test(registry, every_id_has_a_name_and_parses_back)
{
    for (int id = 0; id < REPORT_FINDING_IDS; id++) {
        const struct report_rule *rule = report_rule((enum report_finding_id)id);
        cr_assert_not_null(rule->name, "id %d has a row", id);
        cr_assert_not_null(rule->apply, "%s has a rule function", rule->name);
        enum report_finding_id parsed;
        cr_assert(report_finding_id_parse(rule->name, &parsed));
        cr_assert_eq(parsed, (enum report_finding_id)id);
        cr_assert_not_null(rule->phrase, "%s has a phrase for hangdoc merge", rule->name);
        cr_assert_eq(report_rule_rank((enum report_finding_id)id) > 0, rule->cause != REPORT_CAUSE_NONE,
                     "%s: a rule with a cause has a RANK line in rules.def, and only such a rule", rule->name);
    }
    enum report_finding_id ignored;
    cr_assert_not(report_finding_id_parse("no-such-finding", &ignored));
}

Test(registry, each_root_cause_is_ranked_once)
{
    size_t count;
    const enum report_finding_id *ranked = report_ranked_root_causes(&count);
    for (size_t r = 0; r < count; r++) {
        cr_assert_lt(ranked[r], REPORT_FINDING_IDS);
        cr_assert_eq(report_rule_rank(ranked[r]), r + 1, "%s has one RANK line",
                     report_finding_id_name(ranked[r]));
    }
}

/* A rule that reads the findings of another runs after it: rules.def's AFTER lines against its order of lines. */
Test(registry, a_rule_runs_after_the_rules_whose_findings_it_reads)
{
    size_t count;
    const struct report_rule_order *orders = report_rule_orders(&count);
    cr_assert_gt(count, 0u);
    for (size_t i = 0; i < count; i++)
        cr_assert_lt(orders[i].earlier, orders[i].rule, "%s reads the findings of %s, so runs after it",
                     report_finding_id_name(orders[i].rule), report_finding_id_name(orders[i].earlier));
}

Test(registry, the_schema_lists_the_same_ids_and_causes)
{
    json_object *document = schema();
    json_object *ids = at(document, (const char *const[]){ "$defs", "finding_id", "enum", NULL });
    cr_assert_eq(json_object_array_length(ids), (size_t)REPORT_FINDING_IDS,
                 "the schema's finding_id enum has as many ids as the registry");
    for (int id = 0; id < REPORT_FINDING_IDS; id++)
        cr_assert(enum_has(ids, report_finding_id_name((enum report_finding_id)id)), "the schema lists %s",
                  report_finding_id_name((enum report_finding_id)id));
    json_object *causes = at(document, (const char *const[]){ "properties", "verdict", "properties", "cause", "enum", NULL });
    json_object *hang_causes = at(document, (const char *const[]){ "properties", "verdict", "properties", "hangs",
                                                                   "items", "properties", "cause", "enum", NULL });
    cr_assert_eq(json_object_array_length(causes), (size_t)REPORT_CAUSES);
    cr_assert_eq(json_object_array_length(hang_causes), (size_t)REPORT_CAUSES - 1, "a hang always has a cause");
    for (int cause = 0; cause < REPORT_CAUSES; cause++) {
        const char *name = report_cause_name((enum report_cause)cause);
        cr_assert(enum_has(causes, name), "the verdict's causes list %s", name);
        cr_assert_eq(enum_has(hang_causes, name), cause != REPORT_CAUSE_NONE, "a hang's causes and %s", name);
    }
    json_object_put(document);
}

Test(registry, the_man_page_describes_every_finding_in_the_order_they_run)
{
    char *page = man_page();
    char *findings = section(page, "\n.SH FINDINGS\n", "\n.SH ");
    const char *cursor = findings;
    for (int id = 0; id < REPORT_FINDING_IDS; id++) {
        char entry[96];
        snprintf(entry, sizeof entry, "\n.TP\n.B %s\n", report_finding_id_name((enum report_finding_id)id));
        const char *found = strstr(findings, entry);
        cr_assert_not_null(found, "FINDINGS has an entry '.B %s'", report_finding_id_name((enum report_finding_id)id));
        cr_assert_geq(found, cursor, "FINDINGS lists %s in the order the rules run",
                      report_finding_id_name((enum report_finding_id)id));
        cursor = found;
    }
    free(page);
}

Test(registry, the_man_page_names_the_root_causes_by_rank_with_their_cause)
{
    char *page = man_page();
    char *verdict = section(page, "\n.SS Verdict\n", "\n.SS ");
    const char *cursor = verdict;
    for (unsigned rank = 1; rank <= REPORT_FINDING_IDS; rank++)
        for (int id = 0; id < REPORT_FINDING_IDS; id++) {
            const struct report_rule *rule = report_rule((enum report_finding_id)id);
            if (report_rule_rank((enum report_finding_id)id) != rank)
                continue;
            const char *found = strstr(cursor, rule->name);
            cr_assert_not_null(found, "Verdict names %s after the root causes ranked before it", rule->name);
            char cause[64];
            snprintf(cause, sizeof cause, "( %s )", report_cause_name(rule->cause));
            cr_assert_not_null(strstr(found, cause), "Verdict gives %s's cause %s after it", rule->name,
                               report_cause_name(rule->cause));
            cursor = found;
        }
    free(page);
}
