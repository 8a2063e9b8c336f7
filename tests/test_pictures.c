/* The pictures (issue 18): `hangdoc --dot` of real hangs rendered by Debian's Graphviz, which proves the DOT valid,
 * and `hangdoc run --summary FILE`'s Markdown, appended to FILE as GitHub's step summary expects. */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(pictures, .fini = fixture_stop_all, .timeout = 120);

/* Exit statuses of hangdoc (cmd/exit_codes.h) */
enum { TIMED_OUT = 124 };

/* The colours of render_dot.c: the root cause's fill, a knot's edge */
#define ROOT_CAUSE_FILL "fill=\"#ff9e9e\""
#define IN_HANG_FILL "fill=\"#ffd0d0\""
#define KNOT_STROKE "stroke=\"#c00000\""

/* Graphviz's dot on PATH; fails the test when it is not there, saying where it comes from. */
static const char *dot_program(void)
{
    static char path[4096];
    const char *directories = getenv("PATH");
    char *copy = strdup(directories ? directories : "/usr/bin:/bin");
    cr_assert_not_null(copy);
    bool found = false;
    for (char *saved = NULL, *directory = strtok_r(copy, ":", &saved); directory && !found;
         directory = strtok_r(NULL, ":", &saved)) {
        snprintf(path, sizeof path, "%s/dot", directory);
        found = access(path, X_OK) == 0;
    }
    free(copy);
    if (!found)
        cr_assert_fail("Graphviz's dot is not installed, so the DOT cannot be proven valid: bash setup.sh installs it "
                 "(the Debian package graphviz)");
    return path;
}

static char directory[200];

/* A directory of its own under $TMPDIR (or the system's, P_tmpdir) for the DOT and the summary. */
static void make_directory(void)
{
    const char *temporary = getenv("TMPDIR");
    snprintf(directory, sizeof directory, "%s/hangdoc-pictures-test-XXXXXX",
             temporary && *temporary ? temporary : P_tmpdir);
    cr_assert_not_null(mkdtemp(directory), "a directory under %s", directory);
}

static void remove_directory(void)
{
    const char *names[] = { "graph.dot", "summary.md" };
    char path[256];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", directory, names[i]);
        unlink(path);
    }
    rmdir(directory);
}

static const char *in_directory(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    return path;
}

static void write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "we");
    cr_assert_not_null(file, "%s can be written", path);
    cr_assert_eq(fwrite(text, 1, strlen(text), file), strlen(text));
    cr_assert_eq(fclose(file), 0);
}

/* The SVG's text with Graphviz's character references decoded ("&#45;" is '-', "&#39;" a quote), so that the tests
 * look for what a reader sees. */
static char *svg_plain(const char *svg)
{
    static const struct {
        const char *reference;
        char character;
    } named[] = { { "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' }, { "&quot;", '"' }, { "&apos;", '\'' } };
    char *plain = calloc(1, strlen(svg) + 1), *out = plain;
    cr_assert_not_null(plain);
    for (const char *in = svg; *in;) {
        bool decoded = false;
        for (size_t n = 0; n < sizeof named / sizeof named[0] && !decoded; n++)
            if (strncmp(in, named[n].reference, strlen(named[n].reference)) == 0) {
                *out++ = named[n].character;
                in += strlen(named[n].reference);
                decoded = true;
            }
        char *end = NULL;
        long code = !decoded && strncmp(in, "&#", 2) == 0 && in[2] != 'x' ? strtol(in + 2, &end, 10) : -1;
        if (code > 0 && code < 128 && end && *end == ';') {
            *out++ = (char)code;
            in = end + 1;
            decoded = true;
        }
        if (!decoded)
            *out++ = *in++;
    }
    return plain;
}

/* Renders `dot_text` with `dot -Tsvg`, which must accept it; the SVG, decoded (svg_plain). */
static char *render_svg(const char *dot_text)
{
    const char *program = dot_program();
    const char *input = in_directory("graph.dot");
    write_file(input, dot_text);
    struct run_result result;
    program_run_as(&result, -1, (const char *[]){ program, "-Tsvg", input, NULL });
    cr_assert_eq(result.exit_status, 0, "dot -Tsvg accepts the DOT (exit %d): %s\n%s", result.exit_status, result.err,
                 dot_text);
    cr_assert_null(strstr(result.err, "rror"), "dot says nothing is wrong: %s\n%s", result.err, dot_text);
    cr_assert(strstr(result.out, "</svg>"), "a whole SVG: %s", result.out);
    char *plain = svg_plain(result.out);
    run_result_free(&result);
    return plain;
}

/* The SVG element (node, edge or cluster) whose title is `title`: from its title to the end of its group. */
static char *svg_element(const char *svg, const char *title)
{
    char key[256];
    snprintf(key, sizeof key, "<title>%s</title>", title);
    const char *start = strstr(svg, key);
    cr_assert_not_null(start, "the SVG has an element '%s':\n%s", title, svg);
    const char *end = strstr(start, "</g>");
    cr_assert_not_null(end);
    return strndup(start, (size_t)(end - start));
}

static void expect_in_element(const char *svg, const char *title, const char *part)
{
    char *element = svg_element(svg, title);
    cr_assert(strstr(element, part), "'%s' has '%s':\n%s", title, part, element);
    free(element);
}

/* hangdoc --dot over `pid`, once: a picture follows the moment's state as the text does */
static char *hangdoc_dot(pid_t pid, int expected_status)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    struct run_result result;
    hangdoc_run_once(&result, (const char *[]){ "--dot", "--samples", "3", "--interval", "100ms", pid_text, NULL });
    cr_assert_eq(result.exit_status, expected_status, "hangdoc --dot exits %d: %s", result.exit_status, result.err);
    cr_assert(strncmp(result.out, "digraph hangdoc {\n", 18) == 0, "DOT on stdout, nothing else: %s", result.out);
    char *dot = result.out;
    result.out = NULL;
    run_result_free(&result);
    return dot;
}

Test(pictures, dot_of_an_inherited_lock_highlights_the_root_cause_and_the_knot, .init = make_directory,
     .fini = remove_directory)
{
    struct fixture fixture;
    fixture_start(&fixture, "inherited_mutex");
    pid_t parent = fixture.pids[0], holder = fixture.pids[1], child = fixture.pids[2];
    char *dot = hangdoc_dot(parent, EXIT_HANG_FORK_UNSAFE);
    char *svg = render_svg(dot);
    char title[64], words[128];

    /* the root cause: the child's thread, red and bold */
    snprintf(title, sizeof title, "t%d", (int)child);
    snprintf(words, sizeof words, "thread %d 'locker'", (int)child);
    expect_in_element(svg, title, words);
    expect_in_element(svg, title, "ROOT CAUSE: inherited-lock");
    expect_in_element(svg, title, ROOT_CAUSE_FILL);
    expect_in_element(svg, title, "stroke-width=\"3\"");
    expect_in_element(svg, title, "font-weight=\"bold\"");
    /* the knot's edges: the lock fork() copied, to its owner in the parent, and the parent's wait4 */
    snprintf(title, sizeof title, "t%d->t%d", (int)child, (int)holder);
    expect_in_element(svg, title, KNOT_STROKE);
    expect_in_element(svg, title, "copied by fork(): its owner cannot unlock it");
    snprintf(title, sizeof title, "t%d->t%d", (int)parent, (int)child);
    expect_in_element(svg, title, KNOT_STROKE);
    expect_in_element(svg, title, "wait4");
    snprintf(title, sizeof title, "t%d", (int)holder);
    expect_in_element(svg, title, "thread");
    expect_in_element(svg, title, "'holder'");
    /* one cluster per process, and the legend */
    snprintf(title, sizeof title, "cluster_%d", (int)parent);
    snprintf(words, sizeof words, "process %d 'inherited_mutex'", (int)parent);
    expect_in_element(svg, title, words);
    snprintf(title, sizeof title, "cluster_%d", (int)child);
    expect_in_element(svg, title, "'locker'");
    expect_in_element(svg, "cluster_legend", "legend");
    free(svg);
    free(dot);
    fixture_stop(&fixture);
}

Test(pictures, dot_of_a_lock_cycle_draws_both_locks_as_the_knot, .init = make_directory, .fini = remove_directory)
{
    struct fixture fixture;
    fixture_start(&fixture, "lock_cycle");
    pid_t pid = fixture.pids[0], first = fixture.pids[1], second = fixture.pids[2];
    char *dot = hangdoc_dot(pid, EXIT_HANG);
    char *svg = render_svg(dot);
    char title[64];
    snprintf(title, sizeof title, "t%d->t%d", (int)first, (int)second);
    expect_in_element(svg, title, KNOT_STROKE);
    expect_in_element(svg, title, "mutex 0x");
    snprintf(title, sizeof title, "t%d->t%d", (int)second, (int)first);
    expect_in_element(svg, title, KNOT_STROKE);
    expect_in_element(svg, title, "mutex 0x");
    /* the main thread joins the first: part of the knot too */
    snprintf(title, sizeof title, "t%d->t%d", (int)pid, (int)first);
    expect_in_element(svg, title, KNOT_STROKE);
    expect_in_element(svg, title, "join");
    /* one member is the root cause, the other is in the same cycle */
    char first_title[32], second_title[32];
    snprintf(first_title, sizeof first_title, "t%d", (int)first);
    snprintf(second_title, sizeof second_title, "t%d", (int)second);
    char *a = svg_element(svg, first_title), *b = svg_element(svg, second_title);
    bool first_is_root = strstr(a, "ROOT CAUSE: lock-cycle") != NULL;
    const char *root = first_is_root ? a : b, *other = first_is_root ? b : a;
    cr_assert(strstr(root, "ROOT CAUSE: lock-cycle") && strstr(root, ROOT_CAUSE_FILL), "%s\n%s", a, b);
    cr_assert(strstr(other, "in lock-cycle") && strstr(other, IN_HANG_FILL), "%s\n%s", a, b);
    cr_assert(strstr(a, "'takes-a-then-b'") && strstr(b, "'takes-b-then-a'"), "%s\n%s", a, b);
    free(a);
    free(b);
    free(svg);
    free(dot);
    fixture_stop(&fixture);
}

Test(pictures, dot_of_hostile_names_renders_them_escaped, .init = make_directory, .fini = remove_directory)
{
    struct fixture fixture;
    fixture_start(&fixture, "weird_names");
    pid_t pid = fixture.pids[0];
    char *dot = hangdoc_dot(pid, EXIT_NO_HANG);
    for (const char *c = dot; *c; c++)
        cr_assert((unsigned char)*c >= 0x20 || *c == '\n', "no control byte in the DOT: 0x%02x", (unsigned char)*c);
    /* the comm "\x1b]0;x\x07) S\n" as the text report escapes it, its backslashes doubled for DOT */
    cr_assert(strstr(dot, "'\\\\e]0;x\\\\x07) S\\\\n'"), "%s", dot);
    char *svg = render_svg(dot);
    char title[64], words[128];
    snprintf(title, sizeof title, "t%d", (int)pid);
    snprintf(words, sizeof words, "thread %d '\\e]0;x\\x07) S\\n'", (int)pid);
    expect_in_element(svg, title, words);
    snprintf(title, sizeof title, "cluster_%d", (int)pid);
    snprintf(words, sizeof words, "process %d '\\e]0;x\\x07) S\\n'", (int)pid);
    expect_in_element(svg, title, words);
    free(svg);
    free(dot);
    fixture_stop(&fixture);
}

Test(pictures, dot_and_json_are_exclusive)
{
    struct run_result result;
    hangdoc_run_once(&result, (const char *[]){ "--dot", "--json", "1", NULL });
    cr_assert_eq(result.exit_status, EXIT_USAGE, "%s", result.err);
    cr_assert(strstr(result.err, "--json, --dot and --markdown are exclusive"), "%s", result.err);
    run_result_free(&result);
}

Test(pictures, demo_draws_its_hang, .init = make_directory, .fini = remove_directory)
{
    struct run_result result;
    hangdoc_run_once(&result, (const char *[]){ "demo", "--dot", "--samples", "2", "--interval", "100ms", NULL });
    cr_assert_eq(result.exit_status, EXIT_HANG_FORK_UNSAFE, "%s", result.err);
    cr_assert(strncmp(result.out, "digraph hangdoc {\n", 18) == 0, "the introduction goes to stderr: %s", result.out);
    cr_assert(strstr(result.err, "hangdoc demo: started demo-trainer"), "%s", result.err);
    char *svg = render_svg(result.out);
    cr_assert(strstr(svg, "ROOT CAUSE: inherited-lock"), "%s", svg);
    cr_assert(strstr(svg, "'demo-worker'"), "%s", svg);
    free(svg);
    run_result_free(&result);
}

Test(pictures, run_appends_a_markdown_summary_with_a_mermaid_graph, .init = make_directory,
     .fini = remove_directory)
{
    const char *summary = in_directory("summary.md");
    char path[256];
    snprintf(path, sizeof path, "%s", summary);
    /* what earlier steps of the job wrote stays: GitHub gathers every step's summary in one file */
    write_file(path, "# CI job\n");
    struct spawned spawned;
    hangdoc_spawn(&spawned, (const char *[]){ "run", "--timeout", "2s", "--summary", path, "--",
                                              fixture_path("inherited_mutex"), NULL });
    cr_assert(spawned_ready(&spawned), "the fixture got into position under hangdoc run");
    pid_t child = spawned.group.pids[2];
    struct run_result result;
    spawned_finish(&spawned, &result);
    cr_assert_eq(result.exit_status, TIMED_OUT, "stderr: %s", result.err);
    cr_assert(strstr(result.err, "verdict: HUNG (fork-inheritance)"), "the text report still goes to stderr: %s",
              result.err);

    char *markdown = file_text(path);
    cr_assert_not_null(markdown, "%s exists", path);
    const char *start = "# CI job\n\n## hangdoc: HUNG (fork-inheritance)\n\n**Verdict:** HUNG (fork-inheritance): ";
    cr_assert(strncmp(markdown, start, strlen(start)) == 0, "appended after what was there, the verdict first: %s",
              markdown);
    char expected[256];
    snprintf(expected, sizeof expected,
             "**Root cause:** `inherited-lock` (certain) in thread %d 'locker' of process %d 'locker'\n\n"
             "**Fix:**\n\n- ",
             (int)child, (int)child);
    cr_assert(strstr(markdown, expected), "%s", markdown);
    snprintf(expected, sizeof expected, "| 1 (root cause) | `inherited-lock` | certain | thread %d 'locker' of "
                                        "process %d 'locker' |\n", (int)child, (int)child);
    cr_assert(strstr(markdown, expected), "%s", markdown);
    cr_assert(strstr(markdown, "\n```mermaid\nflowchart LR\n"), "%s", markdown);
    snprintf(expected, sizeof expected, "  class t%d root\n", (int)child);
    cr_assert(strstr(markdown, expected), "%s", markdown);
    snprintf(expected, sizeof expected, "  t%d ==>|\"lock 0x", (int)child);
    cr_assert(strstr(markdown, expected), "the knot is drawn thick: %s", markdown);
    cr_assert(strstr(markdown, "```\n\nArrows point from a waiting thread"), "%s", markdown);
    free(markdown);
    run_result_free(&result);
}
