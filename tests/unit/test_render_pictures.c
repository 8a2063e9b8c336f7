/* The pictures of a report over hand-built snapshots (render/render_dot.h, render/render_markdown.h): the escaping
 * of hostile names for DOT, Markdown and Mermaid, what is drawn and how, and the bounds. Graphviz itself renders
 * them in tests/test_pictures.c. */
#include "render_dot.h"
#include "render_markdown.h"
#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *escaped(void (*escape)(struct report_buffer *, const char *, size_t), const char *bytes)
{
    struct report_buffer out = { 0 };
    escape(&out, bytes, strlen(bytes));
    cr_assert_not(out.failed);
    return out.data ? out.data : strdup("");
}

static void expect_escaped(void (*escape)(struct report_buffer *, const char *, size_t), const char *bytes,
                           const char *expected)
{
    char *text = escaped(escape, bytes);
    cr_assert_str_eq(text, expected, "'%s' escaped as '%s', expected '%s'", bytes, text, expected);
    free(text);
}

/* ---- escaping ------------------------------------------------------------------------------------------------ */

Test(pictures, dot_strings_cannot_end_a_label_or_read_as_escapes)
{
    expect_escaped(report_dot_escaped, "plain name", "plain name");
    expect_escaped(report_dot_escaped, "say \"hi\"", "say \\\"hi\\\"");
    /* a backslash is \\ in the text report, and each of those doubled for DOT, which reads \N, \G, \l */
    expect_escaped(report_dot_escaped, "a\\N", "a\\\\\\\\N");
    /* the comm of tests/scenarios/weird_names: an escape, a BEL, a parenthesis, a newline */
    expect_escaped(report_dot_escaped, "\x1b]0;x\x07) S\n", "\\\\e]0;x\\\\x07) S\\\\n");
    expect_escaped(report_dot_escaped, "bad\xff\xfe", "bad\\\\xff\\\\xfe");
    /* a right-to-left override, raw or as the HTML entity Graphviz would decode */
    expect_escaped(report_dot_escaped, "rlo\xe2\x80\xaetxt", "rlo\\\\u{202E}txt");
    expect_escaped(report_dot_escaped, "&#x202E;&amp;", "&amp;#x202E;&amp;amp;");
    expect_escaped(report_dot_escaped, "größe {a|b} <c>", "größe {a|b} <c>");
}

Test(pictures, markdown_text_makes_no_tag_link_emphasis_or_cell)
{
    expect_escaped(report_markdown_escaped, "worker 3", "worker 3");
    expect_escaped(report_markdown_escaped, "<img src=x>", "&lt;img src\\=x&gt;");
    expect_escaped(report_markdown_escaped, "a|b", "a\\|b");
    expect_escaped(report_markdown_escaped, "*x* _y_ `z`", "\\*x\\* \\_y\\_ \\`z\\`");
    expect_escaped(report_markdown_escaped, "[l](http://e)", "\\[l\\]\\(http\\:\\/\\/e\\)");
    expect_escaped(report_markdown_escaped, "@team #1 &amp;", "\\@team \\#1 &amp;amp\\;");
    expect_escaped(report_markdown_escaped, "a\\b", "a\\\\\\\\b");
    expect_escaped(report_markdown_escaped, "\x1b[2J\n", "\\\\e\\[2J\\\\n");
    expect_escaped(report_markdown_escaped, "bad\xff", "bad\\\\xff");
}

Test(pictures, mermaid_labels_take_entities_for_what_could_break_out)
{
    expect_escaped(report_mermaid_escaped, "worker-3 (x)", "worker-3 (x)");
    expect_escaped(report_mermaid_escaped, "say \"hi\"", "say #34;hi#34;");
    expect_escaped(report_mermaid_escaped, "<b>&", "#60;b#62;#38;");
    /* an entity of the target's is shown, not decoded; a style-looking text stays text */
    expect_escaped(report_mermaid_escaped, "#quot;", "#35;quot#59;");
    expect_escaped(report_mermaid_escaped, "style:x#f00;", "style#58;x#35;f00#59;");
    expect_escaped(report_mermaid_escaped, "`md` [a] {b} |c|", "#96;md#96; #91;a#93; #123;b#125; #124;c#124;");
    expect_escaped(report_mermaid_escaped, "\x1b\n", "#92;e#92;n");
    expect_escaped(report_mermaid_escaped, "rlo\xe2\x80\xae", "rlo#92;u#123;202E#125;");
}

/* ---- what the DOT draws -------------------------------------------------------------------------------------- */

static char *render(struct hd_snapshot *snapshot, bool (*renderer)(const struct hd_snapshot *,
                                                                    const struct report_analysis *, FILE *))
{
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    cr_assert_not_null(out);
    struct report_analysis *analysis = analyze(snapshot);
    cr_assert(renderer(snapshot, analysis, out));
    fclose(out);
    report_analysis_free(analysis);
    return text;
}

static bool starts_with(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

static size_t occurrences(const char *text, const char *part)
{
    size_t count = 0;
    for (const char *at = strstr(text, part); at; at = strstr(at + 1, part))
        count++;
    return count;
}

/* The line of the DOT that starts with `start` (after its indentation), or NULL. */
static char *dot_line(const char *dot, const char *start)
{
    char key[128];
    snprintf(key, sizeof key, "\n    %s", start);
    const char *at = strstr(dot, key);
    if (!at) {
        snprintf(key, sizeof key, "\n  %s", start);
        at = strstr(dot, key);
    }
    if (!at)
        return NULL;
    at = strchr(at + 1, start[0]);
    return strndup(at, strcspn(at, "\n"));
}

static void expect_line(const char *dot, const char *start, const char *part)
{
    char *line = dot_line(dot, start);
    cr_assert_not_null(line, "a line starts with '%s':\n%s", start, dot);
    cr_assert(strstr(line, part), "'%s' has '%s':\n%s", line, part, dot);
    free(line);
}

/* Parent 100 (thread 100 in wait4 on its child, thread 101 in pause()) and its forked child 200 'w"o<r>k\ker',
 * whose thread waits for a mutex that thread 101 held at fork(). */
static struct hd_snapshot *inherited_lock(void)
{
    struct hd_snapshot *snapshot = fork_with_held_lock(HD_MAPPING_ANONYMOUS_PRIVATE);
    strcpy(process_of(snapshot, 100)->comm, "trainer");
    strcpy(process_of(snapshot, 200)->comm, "w\"o<r>k\\er|`#");
    strcpy(thread_of(snapshot, 200)->name, "loader\n\x1b[1m");
    strcpy(thread_of(snapshot, 101)->name, "holder");
    return snapshot;
}

Test(pictures, dot_clusters_the_root_cause_and_the_knot)
{
    struct hd_snapshot *snapshot = inherited_lock();
    char *dot = render(snapshot, report_render_dot);
    cr_assert(starts_with(dot, "digraph hangdoc {\n"), "%s", dot);
    cr_assert(strstr(dot, "label=\"hangdoc: HUNG (fork-inheritance): inherited-lock in thread 200 "
                          "'loader\\\\n\\\\e[1m' of process 200 'w\\\"o<r>k\\\\\\\\er|`#'\\l\""),
              "the title is the verdict: %s", dot);
    /* one cluster per process, labelled with its pid, comm and threads */
    expect_line(dot, "label=\"process 100 'trainer'", "\\l2 threads\\l\"");
    expect_line(dot, "label=\"process 200 'w\\\"o<r>k\\\\\\\\er|`#'", "\\l1 thread\\l\"");
    cr_assert_eq(occurrences(dot, "subgraph cluster_"), 3, "two processes and the legend: %s", dot);
    /* the root cause: red, thick, bold */
    expect_line(dot, "t200 [", "label=\"thread 200 'loader\\\\n\\\\e[1m'\\nfutex wait");
    expect_line(dot, "t200 [", "\\nROOT CAUSE: inherited-lock\"");
    expect_line(dot, "t200 [", "fillcolor=\"#ff9e9e\", color=\"#b00000\", fontname=\"Helvetica-Bold\", penwidth=3");
    expect_line(dot, "t100 [", "in waiting-on-workers");
    expect_line(dot, "t101 [", "asleep forever");
    /* the knot: the lock fork() copied, whose owner is drawn although the graph has no edge to it, and the wait4 */
    expect_line(dot, "t200 -> t101 [", "label=\"lock 0x55d2a0c4e040, copied by fork(): its owner cannot unlock it\"");
    expect_line(dot, "t200 -> t101 [", "color=\"#c00000\"");
    expect_line(dot, "t200 -> t101 [", "style=dotted");
    expect_line(dot, "t100 -> t200 [", "label=\"wait4\", color=\"#c00000\"");
    expect_line(dot, "t100 -> t200 [", "penwidth=2.5");
    /* a legend of what this picture uses */
    cr_assert(strstr(dot, "subgraph cluster_legend {"), "%s", dot);
    cr_assert(strstr(dot, "[label=\"root cause\", shape=box"), "%s", dot);
    cr_assert(strstr(dot, "[label=\"wait4: the child\""), "%s", dot);
    cr_assert(strstr(dot, "[label=\"edge of the knot\""), "%s", dot);
    cr_assert_null(strstr(dot, "pipe: the other end"), "no kind the picture does not use: %s", dot);
    cr_assert_null(strchr(dot, '\x1b'), "no raw escape byte");
    free(dot);
    hd_snapshot_free(snapshot);
}

/* Process 500: thread 500 joins 501, 501 waits for the GIL that 502 holds, 502 reads a pipe whose only writer is
 * child 600, asleep in pause(); child 700 waits for a mutex whose owner 999 is gone. */
static struct hd_snapshot *every_kind(void)
{
    struct hd_snapshot *snapshot = new_snapshot(500);
    struct hd_process *parent = add_process(snapshot, 500, 1, HD_ORIGIN_EXEC, 3);
    struct hd_process *writer = add_process(snapshot, 600, 500, HD_ORIGIN_EXEC, 1);
    add_process(snapshot, 700, 500, HD_ORIGIN_EXEC, 1);
    joining(thread_of(snapshot, 500), 0x7f0000001000, 501, 500);
    waiting_for_gil(thread_of(snapshot, 501), 0x7f0000002000, 502, 500, HD_OWNER_SAME_PROCESS);
    add_fd(parent, 3, HD_FD_PIPE, 77, 0);
    add_fd(writer, 4, HD_FD_PIPE, 77, 1);
    reading(thread_of(snapshot, 502), 3);
    in_pause(thread_of(snapshot, 600));
    waiting_on_mutex(thread_of(snapshot, 700), 0x7f0000003000, 999, 700, HD_OWNER_GONE,
                     HD_MAPPING_ANONYMOUS_PRIVATE);
    return snapshot;
}

Test(pictures, dot_edges_are_styled_by_what_they_wait_on)
{
    struct hd_snapshot *snapshot = every_kind();
    char *dot = render(snapshot, report_render_dot);
    expect_line(dot, "t500 -> t501 [", "label=\"join\"");
    expect_line(dot, "t500 -> t501 [", "arrowhead=diamond");
    expect_line(dot, "t501 -> t502 [", "label=\"GIL\"");
    expect_line(dot, "t501 -> t502 [", "arrowhead=normal");
    expect_line(dot, "t502 -> t600 [", "label=\"pipe\"");
    expect_line(dot, "t502 -> t600 [", "arrowhead=vee");
    /* an owner that is gone has a box of its own, outside every process */
    expect_line(dot, "owner999 [", "label=\"thread 999\\ngone: no thread has that id\"");
    expect_line(dot, "t700 -> owner999 [", "label=\"lock 0x7f0000003000, its owner is gone\"");
    cr_assert(strstr(dot, "[label=\"GIL holder\""), "%s", dot);
    cr_assert(strstr(dot, "[label=\"pipe: the other end\""), "%s", dot);
    cr_assert(strstr(dot, "[label=\"joined thread\""), "%s", dot);
    free(dot);
    hd_snapshot_free(snapshot);
}

/* Process 100 of 1,000 threads, every one asleep on a futex that only its own threads could wake. */
static struct hd_snapshot *thousand_asleep(void)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 1000);
    for (pid_t tid = 100; tid < 1100; tid++)
        asleep_in_futex(thread_of(snapshot, tid), 0x7f0000001000);
    return snapshot;
}

Test(pictures, dot_is_bounded_and_says_what_it_left_out)
{
    struct hd_snapshot *snapshot = thousand_asleep();
    char *dot = render(snapshot, report_render_dot);
    cr_assert_eq(occurrences(dot, "[label=\"thread "), REPORT_DOT_BOXES_MAX, "%s", dot);
    size_t left = 1000 - REPORT_DOT_BOXES_MAX;
    char note[128];
    snprintf(note, sizeof note, "label=\"+ %zu other threads not drawn\\n%zu asleep forever\"", left, left);
    expect_line(dot, "more100 [", note);
    expect_line(dot, "more100 [", "shape=note");
    snprintf(note, sizeof note, "\\lnot drawn: %zu threads that matter (no room)\\l\"", left);
    cr_assert(strstr(dot, note), "the title says so: %.400s", dot);
    /* the OR-set they wait on is one box, not 999 edges each */
    expect_line(dot, "any100 [", "label=\"any thread of\\nprocess 100 (1000)\"");
    cr_assert_eq(occurrences(dot, " -> any100 ["), REPORT_DOT_BOXES_MAX, "%s", dot);
    free(dot);
    hd_snapshot_free(snapshot);
}

Test(pictures, dot_of_a_healthy_tree_is_its_root_and_a_count)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 3);
    add_process(snapshot, 200, 100, HD_ORIGIN_EXEC, 1);
    char *dot = render(snapshot, report_render_dot);
    cr_assert(strstr(dot, "label=\"hangdoc: not hung\\lnot drawn: 1 process with nothing in a hang\\l\""), "%s", dot);
    expect_line(dot, "more100 [", "label=\"+ 3 threads not drawn\\n3 running\"");
    cr_assert_eq(occurrences(dot, "subgraph cluster_"), 2, "the root and the legend: %s", dot);
    free(dot);
    hd_snapshot_free(snapshot);
}

/* ---- the Markdown summary ------------------------------------------------------------------------------------ */

Test(pictures, markdown_has_the_verdict_the_fix_the_table_and_a_mermaid_graph)
{
    struct hd_snapshot *snapshot = inherited_lock();
    char *markdown = render(snapshot, report_render_markdown);
    cr_assert(starts_with(markdown, "\n## hangdoc: HUNG (fork-inheritance)\n\n**Verdict:** HUNG (fork-inheritance): "),
              "a section of its own, verdict first: %s", markdown);
    cr_assert(strstr(markdown, "\\[`inherited-lock`, certain\\]  \n**Chain:** 100 'trainer' → 200 "
                               "'w\\\"o&lt;r&gt;k\\\\\\\\er\\|\\`\\#'\n"),
              "%s", markdown);
    cr_assert(strstr(markdown, "**Root cause:** `inherited-lock` (certain) in thread 200 'loader\\\\n\\\\e\\[1m' of "
                               "process 200 'w\\\"o&lt;r&gt;k\\\\\\\\er\\|\\`\\#'\n\n**Fix:**\n\n- "),
              "%s", markdown);
    cr_assert(strstr(markdown, "| hang | finding | confidence | subject |\n|---|---|---|---|\n"
                               "| 1 (root cause) | `inherited-lock` | certain | thread 200 "),
              "%s", markdown);
    cr_assert(strstr(markdown, "| | `waiting-on-workers` | certain | thread 100 'thread100' of process 100 "
                               "'trainer' |\n"),
              "%s", markdown);
    cr_assert(strstr(markdown, "```mermaid\nflowchart LR\n  subgraph p100[\"process 100 'trainer'<br>2 threads\"]\n"),
              "%s", markdown);
    cr_assert(strstr(markdown, "  subgraph p200[\"process 200 'w#34;o#60;r#62;k#92;#92;er#124;#96;#35;'<br>1 "
                               "thread\"]\n    t200[\"thread 200 'loader#92;n#92;e#91;1m'<br>futex wait"),
              "%s", markdown);
    cr_assert(strstr(markdown, "  t200 ==>|\"lock 0x55d2a0c4e040, copied by fork(): its owner cannot unlock it\"| "
                               "t101\n"),
              "%s", markdown);
    cr_assert(strstr(markdown, "  t100 ==>|\"wait4\"| t200\n"), "%s", markdown);
    cr_assert(strstr(markdown, "  linkStyle 0 stroke:#c00000,stroke-width:3px\n"), "%s", markdown);
    cr_assert(strstr(markdown, "  classDef root fill:#ff9e9e,stroke:#b00000,stroke-width:3px,font-weight:bold\n"
                               "  class t200 root\n"),
              "%s", markdown);
    cr_assert(strstr(markdown, "```\n\nArrows point from a waiting thread to whoever could wake it; thick red ones "
                               "are the knot"),
              "%s", markdown);
    cr_assert(strstr(markdown, "\n<sub>hangdoc "), "%s", markdown);
    cr_assert_null(strchr(markdown, '\x1b'), "no raw escape byte");
    cr_assert_null(strstr(markdown, "<r>"), "no tag of the target's");
    free(markdown);
    hd_snapshot_free(snapshot);
}

Test(pictures, markdown_graph_is_bounded)
{
    struct hd_snapshot *snapshot = thousand_asleep();
    char *markdown = render(snapshot, report_render_markdown);
    cr_assert_eq(occurrences(markdown, "[\"thread "), REPORT_MERMAID_BOXES_MAX, "%s", markdown);
    cr_assert(strstr(markdown, "    more100[\"+ 960 other threads not drawn<br>960 asleep forever\"]\n"), "%s",
              markdown);
    cr_assert(strstr(markdown, "The graph is bounded: not drawn: 960 threads that matter (no room)."), "%s",
              markdown);
    /* the finding's summary, with Markdown's punctuation escaped */
    cr_assert(strstr(markdown, "**Verdict:** HUNG (deadlock): thread 100 \\'thread100\\' of process 100 sleeps "
                               "forever on a futex that records no owner at 0x7f0000001000\\, and every thread that "
                               "could wake it is asleep forever too\\: nothing is left to wake it \\[`no-waker`, "
                               "certain\\]"),
              "%s", markdown);
    free(markdown);
    hd_snapshot_free(snapshot);
}

Test(pictures, markdown_of_a_healthy_tree)
{
    struct hd_snapshot *snapshot = new_snapshot(100);
    add_process(snapshot, 100, 1, HD_ORIGIN_EXEC, 2);
    char *markdown = render(snapshot, report_render_markdown);
    cr_assert(starts_with(markdown, "\n## hangdoc: not hung\n\n**Verdict:** not hung: "), "%s", markdown);
    cr_assert_null(strstr(markdown, "| hang |"), "no table without findings: %s", markdown);
    cr_assert(strstr(markdown, "```mermaid\nflowchart LR\n"), "%s", markdown);
    free(markdown);
    hd_snapshot_free(snapshot);
}

Test(pictures, markdown_of_a_diagnosis_that_did_not_happen)
{
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    cr_assert(report_render_markdown_unfinished("hangdoc run: ended by <signal> 9", out));
    fclose(out);
    cr_assert_str_eq(text, "\n## hangdoc: could not tell\n\n**Verdict:** could not tell: no diagnosis: hangdoc run\\: "
                           "ended by &lt;signal&gt; 9\n\n");
    free(text);
}
