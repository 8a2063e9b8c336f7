/* `hangdoc merge` (merge_command.h): options, reading every input, one rendering, the exit status. The merging is
 * merge/merge.h's. */
#include "merge_command.h"

#include "diagnose.h"
#include "exit_codes.h"
#include "merge.h"
#include "merge_input.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char merge_usage_text[] =
    "Usage: hangdoc merge [MERGE OPTION]... REPORT...\n"
    "Merge the JSON reports (hangdoc --json) of every host of a distributed job: the ranks seen and missing\n"
    "(from WORLD_SIZE), the stacks of every rank's main thread merged into one prefix tree with rank sets, the\n"
    "classes of ranks, the smallest first, with each outlier's host, pid and local verdict, and one verdict that\n"
    "follows the chain across machines. Reads no process: only the reports.\n"
    "\n"
    "A REPORT is a file of one or more JSON documents, a directory (its *.json files), or - (standard input).\n"
    "Several reports of one rank taken over time show whose stacks did not move.\n"
    "\n"
    "Merge options:\n"
    "  -j, --json           print one JSON document (schema hangdoc.merge/1) instead of text\n"
    "      --dot            print the merged stacks as a Graphviz graph (dot -Tsvg)\n"
    "  -o, --output FILE    write to FILE instead of standard output\n"
    "  -h, --help           show this help and exit\n"
    "\n"
    "Exit status: 0 no hang found, or could not tell; 1 a hang; 2 a hang caused by fork-unsafe inheritance;\n"
    "64 usage error; 66 no report could be read; 70 internal error; 73 FILE cannot be written.\n";

enum merge_format { MERGE_TEXT, MERGE_JSON, MERGE_DOT };

struct merge_options {
    enum merge_format format;
    const char *output_path;
};

__attribute__((format(printf, 1, 2))) static int merge_usage_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "hangdoc merge: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\nTry 'hangdoc merge --help' for more information.\n");
    va_end(args);
    return EXIT_USAGE;
}

/* Returns -1 to go on, or an exit status. */
static int parse_merge_options(int argc, char **argv, struct merge_options *options)
{
    static const struct option long_options[] = {
        { "json", no_argument, NULL, 'j' }, { "dot", no_argument, NULL, 'D' },
        { "output", required_argument, NULL, 'o' }, { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false, dot = false;
    optind = 1;
    opterr = 0;
    int option;
    /* "+": options end at the first REPORT, so that a file named like an option can follow -- */
    while ((option = getopt_long(argc, argv, "+:jo:h", long_options, NULL)) != -1) {
        switch (option) {
        case 'j':
            json = true;
            break;
        case 'D':
            dot = true;
            break;
        case 'o':
            options->output_path = optarg;
            break;
        case 'h':
            fputs(merge_usage_text, stdout);
            return EXIT_SUCCESS;
        case ':':
            return merge_usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return merge_usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (json && dot)
        return merge_usage_error("%s", "--json and --dot are exclusive: one output on standard output");
    options->format = json ? MERGE_JSON : dot ? MERGE_DOT : MERGE_TEXT;
    if (optind >= argc)
        return merge_usage_error("%s", "no report given (a file, a directory, or - for standard input)");
    return -1;
}

static bool render(const struct report_merge *merge, enum merge_format format, FILE *out)
{
    static bool (*const renderers[])(const struct report_merge *, FILE *) = {
        [MERGE_TEXT] = report_merge_render_text,
        [MERGE_JSON] = report_merge_render_json,
        [MERGE_DOT] = report_merge_render_dot,
    };
    return renderers[format](merge, out);
}

/* Reads every input, then writes the merge; the status of its verdict, or why there is none. */
static int merge_inputs(struct report_merge *merge, const struct merge_options *options, int count, char **paths)
{
    for (int i = 0; i < count; i++)
        if (!report_merge_read_path(merge, paths[i])) {
            fprintf(stderr, "hangdoc merge: out of memory\n");
            return EXIT_INTERNAL;
        }
    if (report_merge_documents(merge) == 0) {
        fprintf(stderr, "hangdoc merge: no report could be read (%zu input%s left out)\n",
                report_merge_skipped(merge), report_merge_skipped(merge) == 1 ? "" : "s");
        return EXIT_NO_INPUT;
    }
    if (report_merge_skipped(merge))
        fprintf(stderr, "hangdoc merge: %zu input%s left out (the notes say why)\n", report_merge_skipped(merge),
                report_merge_skipped(merge) == 1 ? "" : "s");
    if (!report_merge_finish(merge)) {
        fprintf(stderr, "hangdoc merge: out of memory\n");
        return EXIT_INTERNAL;
    }
    FILE *out = options->output_path ? fopen(options->output_path, "we") : stdout;
    if (!out) {
        fprintf(stderr, "hangdoc merge: cannot write %s: %s\n", options->output_path, strerror(errno));
        return EXIT_CANNOT_CREATE;
    }
    bool written = render(merge, options->format, out);
    if (options->output_path)
        written &= fclose(out) == 0;
    if (!written) {
        fprintf(stderr, "hangdoc merge: could not write the merge: %s\n", strerror(errno));
        return EXIT_INTERNAL;
    }
    return hangdoc_exit_for_verdict(report_merge_hung(merge), report_merge_cause(merge));
}

int hangdoc_merge(int argc, char **argv)
{
    struct merge_options options = { .format = MERGE_TEXT };
    int status = parse_merge_options(argc, argv, &options);
    if (status >= 0)
        return status;
    struct report_merge *merge = report_merge_new();
    if (!merge) {
        fprintf(stderr, "hangdoc merge: out of memory\n");
        return EXIT_INTERNAL;
    }
    status = merge_inputs(merge, &options, argc - optind, argv + optind);
    report_merge_free(merge);
    return status;
}
