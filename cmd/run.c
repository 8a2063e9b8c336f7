/* `hangdoc run` (run.h): its options, and what a diagnosis of the job is. Starting the job, watching it, choosing
 * where a diagnosis runs and ending the tree are the supervisor's (supervise/supervise.h).
 */
#include "run.h"

#include "probe.h"
#include "supervise.h"
#include "diagnose.h"
#include "exit_codes.h"
#include "watchdog.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_KILL_AFTER_MS 5000

struct run_options {
    struct supervise_options job;
    bool no_ptrace;
    bool no_ledger;
    const char *json_path;
    const char *report_path;
    const char *summary_path; /* --summary: the Markdown summary is appended to it, as to $GITHUB_STEP_SUMMARY */
    const char *save_directory; /* --save: each diagnosis's snapshot is kept there as hangdoc.<n>.snapshot */
    char expanded[4][PATH_MAX]; /* those four with %h, %r, %p expanded (expand_path) */
    const char *catalogue_path;
    unsigned stuck_after_ms; /* 0: from the job's age (options.h) */
};

__attribute__((format(printf, 1, 2))) static int run_usage_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "hangdoc run: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\nTry 'hangdoc --help' for more information.\n");
    va_end(args);
    return EXIT_USAGE;
}

/* ---- options ------------------------------------------------------------------------------------------------- */

struct path_fields {
    char host[256];
    char rank[16];
    char pid[16];
};

/* What %h, %r and %p stand for: read once for all the names of a run. */
static void read_path_fields(struct path_fields *fields)
{
    snprintf(fields->host, sizeof fields->host, "localhost");
    if (gethostname(fields->host, sizeof fields->host) == 0)
        fields->host[sizeof fields->host - 1] = '\0';
    fields->host[strcspn(fields->host, ".")] = '\0';
    int own_rank = probe_own_rank();
    if (own_rank >= 0)
        snprintf(fields->rank, sizeof fields->rank, "%d", own_rank);
    else
        snprintf(fields->rank, sizeof fields->rank, "unranked");
    snprintf(fields->pid, sizeof fields->pid, "%d", (int)getpid());
}

/* A report file's name with %h (this host's name), %r (the rank this node's environment gives, "unranked" when
 * none), %p (hangdoc's pid) and %% expanded into `out`, so that every node of a job writes a file of its own into
 * one shared directory: --json "reports/%h.%r.json". False when it does not fit. */
static bool expand_path(const char *template, const struct path_fields *values, char out[PATH_MAX])
{
    const struct {
        char letter;
        const char *value;
    } fields[] = { { 'h', values->host }, { 'r', values->rank }, { 'p', values->pid }, { '%', "%" } };
    size_t length = 0;
    for (const char *at = template; *at; at++) {
        const char *insert = NULL;
        for (size_t f = 0; at[0] == '%' && f < COUNT(fields); f++)
            if (at[1] == fields[f].letter)
                insert = fields[f].value;
        size_t adding = insert ? strlen(insert) : 1;
        if (length + adding >= PATH_MAX)
            return false;
        memcpy(out + length, insert ? insert : at, adding);
        length += adding;
        at += insert != NULL;
    }
    out[length] = '\0';
    return true;
}

static bool parse_signal(const char *text, int *number)
{
    static const struct {
        const char *name;
        int number;
    } names[] = {
        { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "KILL", SIGKILL }, { "USR1", SIGUSR1 },
        { "USR2", SIGUSR2 }, { "TERM", SIGTERM }, { "ABRT", SIGABRT },
    };
    if (strncmp(text, "SIG", 3) == 0)
        text += 3;
    for (size_t i = 0; i < COUNT(names); i++)
        if (strcmp(text, names[i].name) == 0) {
            *number = names[i].number;
            return true;
        }
    pid_t value;
    if (hangdoc_parse_pid(text, &value) && value < 65) {
        *number = (int)value;
        return true;
    }
    return false;
}

/* Can the report be written there? Checked before the command starts, without creating the file. */
static bool writable(const char *path, int *error)
{
    if (access(path, F_OK) == 0) {
        *error = access(path, W_OK) == 0 ? 0 : errno;
        return *error == 0;
    }
    char *copy = strdup(path);
    if (!copy) {
        *error = ENOMEM;
        return false;
    }
    *error = access(dirname(copy), W_OK | X_OK) == 0 ? 0 : errno;
    free(copy);
    return *error == 0;
}

static bool usable_directory(const char *path);

static int parse_run_options(int argc, char **argv, struct run_options *run)
{
    static const struct option long_options[] = {
        { "timeout", required_argument, NULL, 't' }, { "stall", required_argument, NULL, 's' },
        { "json", required_argument, NULL, 'j' },    { "report", required_argument, NULL, 'r' },
        { "signal", required_argument, NULL, 'S' },  { "kill-after", required_argument, NULL, 'k' },
        { "keep-running", no_argument, NULL, 'K' },  { "no-ptrace", no_argument, NULL, 'P' },
        { "catalogue", required_argument, NULL, 'C' }, { "stuck-after", required_argument, NULL, 'A' },
        { "summary", required_argument, NULL, 'm' }, { "no-ledger", no_argument, NULL, 'L' },
        { "save", required_argument, NULL, 'D' },
        { NULL, 0, NULL, 0 },
    };
    *run = (struct run_options){ .job = { .kill_after_ms = DEFAULT_KILL_AFTER_MS, .end_signal = SIGTERM } };
    optind = 1;
    opterr = 0;
    int option;
    /* '+': the first word that is not an option starts the command */
    while ((option = getopt_long(argc, argv, "+:t:", long_options, NULL)) != -1) {
        unsigned *duration = NULL;
        switch (option) {
        case 't':
            duration = &run->job.timeout_ms;
            break;
        case 's':
            duration = &run->job.stall_ms;
            break;
        case 'k':
            duration = &run->job.kill_after_ms;
            break;
        case 'A':
            duration = &run->stuck_after_ms;
            break;
        case 'j':
            run->json_path = optarg;
            break;
        case 'r':
            run->report_path = optarg;
            break;
        case 'm':
            run->summary_path = optarg;
            break;
        case 'D':
            run->save_directory = optarg;
            break;
        case 'S':
            if (!parse_signal(optarg, &run->job.end_signal))
                return run_usage_error("--signal takes a signal name or number, not '%s'", optarg);
            break;
        case 'K':
            run->job.keep_running = true;
            break;
        case 'P':
            run->no_ptrace = true;
            break;
        case 'L':
            run->no_ledger = true;
            break;
        case 'C':
            run->catalogue_path = optarg;
            if (hangdoc_check_catalogue(optarg) != 0)
                return EXIT_USAGE;
            break;
        case ':':
            return run_usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return run_usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (duration && (!hangdoc_parse_duration_ms(optarg, duration) || *duration == 0))
            return run_usage_error("'%s' is not a duration such as 90s, 30m or 1h", optarg);
    }
    if (optind >= argc)
        return run_usage_error("%s", "no command given (hangdoc run [OPTION]... -- CMD [ARG]...)");
    run->job.command = argv + optind;
    const char **templated[] = { &run->json_path, &run->report_path, &run->summary_path, &run->save_directory };
    struct path_fields fields;
    bool fields_read = false;
    for (size_t i = 0; i < COUNT(templated); i++) {
        if (!*templated[i] || !strchr(*templated[i], '%'))
            continue;
        if (!fields_read) {
            read_path_fields(&fields);
            fields_read = true;
        }
        if (!expand_path(*templated[i], &fields, run->expanded[i]))
            return run_usage_error("'%s' is too long once %%h, %%r and %%p are put in", *templated[i]);
        *templated[i] = run->expanded[i];
    }
    const char *paths[] = { run->json_path, run->report_path, run->summary_path };
    for (size_t i = 0; i < COUNT(paths); i++) {
        int error;
        if (paths[i] && !writable(paths[i], &error)) {
            fprintf(stderr, "hangdoc run: cannot write a report to '%s': %s\n", paths[i], strerror(error));
            return EXIT_CANNOT_CREATE;
        }
    }
    if (run->save_directory && !usable_directory(run->save_directory))
        return EXIT_CANNOT_CREATE;
    return -1;
}

/* The --save directory: made when missing (its parent must exist), and writable. */
static bool usable_directory(const char *path)
{
    struct stat status;
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "hangdoc run: cannot make the directory '%s' for snapshots: %s\n", path, strerror(errno));
        return false;
    }
    const char *why = stat(path, &status) != 0                ? strerror(errno)
                    : !S_ISDIR(status.st_mode)               ? "not a directory"
                    : access(path, W_OK | X_OK) != 0          ? strerror(errno)
                                                             : NULL;
    if (why)
        fprintf(stderr, "hangdoc run: cannot keep snapshots in '%s': %s\n", path, why);
    return why == NULL;
}

/* ---- the diagnosis ------------------------------------------------------------------------------------------- */

struct run_context {
    const struct hangdoc_options *base;
    const struct run_options *run;
    unsigned diagnoses; /* made so far: the number of the next snapshot kept */
};

/* `mode`: "we" for a report of its own, "ae" for the summary, which GitHub's step summary file gathers */
static FILE *open_report(const char *path, const char *mode)
{
    if (!path)
        return NULL;
    FILE *file = fopen(path, mode);
    if (!file)
        fprintf(stderr, "hangdoc run: cannot write '%s': %s\n", path, strerror(errno));
    return file;
}

static void close_reports(FILE *report, FILE *json, FILE *summary)
{
    FILE *files[] = { report, json, summary };
    for (size_t i = 0; i < COUNT(files); i++)
        if (files[i])
            fclose(files[i]);
}

/* The supervisor's diagnose hook: diagnoses the job's top processes into stderr and the report files. */
static int diagnose_job(void *context, const pid_t *roots, size_t nroots, bool from_ancestor, bool quick)
{
    struct run_context *c = context;
    const struct run_options *run = c->run;
    struct hangdoc_options options = *c->base;
    options.pids = (pid_t *)roots;
    options.npids = nroots;
    options.no_ptrace = run->no_ptrace;
    options.no_ledger = run->no_ledger;
    options.stuck_after_ms = run->stuck_after_ms;
    if (run->catalogue_path)
        options.catalogue_path = run->catalogue_path;
    if (quick) {
        options.samples = 3;
        options.interval_ms = 100;
    }
    /* The supervisor kills a diagnosis that overruns its deadline: the probe keeps to it softly, as hangdoc does
     * to --timeout, so that the report is out before then. */
    options.timeout_ms = quick ? SUPERVISE_QUICK_DIAGNOSIS_MS : SUPERVISE_DIAGNOSIS_MS;
    options.deadline = hangdoc_monotonic_now() + options.timeout_ms / 1000.0;
    FILE *report = open_report(run->report_path, "we"), *json = open_report(run->json_path, "we");
    FILE *summary = open_report(run->summary_path, "ae");
    struct hangdoc_outputs outputs = { .text = { stderr, report }, .json = json, .summary = summary };
    if (nroots == 0) {
        struct hangdoc_outputs files = { .text = { report }, .json = json, .summary = summary };
        hangdoc_report_unfinished(&options, &files, "hangdoc run: nothing to diagnose: every process of the job "
                                                    "had ended");
        close_reports(report, json, summary);
        return EXIT_NO_TARGET;
    }
    if (from_ancestor)
        fprintf(stderr, "\nhangdoc run: diagnosing the tree of '%s' from its parent (pid %d)\n", run->job.command[0],
                (int)getpid());
    else
        fprintf(stderr,
                "\nhangdoc run: diagnosing the tree of '%s' from pid %d, no longer its ancestor (under Yama's "
                "ptrace_scope 1 its native stacks need CAP_SYS_PTRACE)\n",
                run->job.command[0], (int)getpid());
    char snapshot[PATH_MAX];
    if (run->save_directory) {
        snprintf(snapshot, sizeof snapshot, "%s/hangdoc.%u.snapshot", run->save_directory, ++c->diagnoses);
        options.save_path = snapshot;
    }
    int status = hangdoc_diagnose_into(&options, &outputs);
    close_reports(report, json, summary);
    if (run->save_directory && status != EXIT_CANNOT_CREATE && status < EXIT_USAGE)
        fprintf(stderr, "hangdoc run: the snapshot is in %s (hangdoc analyze %s)\n", snapshot, snapshot);
    return status;
}

/* The supervisor's unfinished hook: a diagnosis that was killed (or never started) leaves no report of its own, or
 * half of one: the report files say so instead, so that a job that ended always leaves them. */
static void report_unfinished(void *context, pid_t command, const char *why)
{
    const struct run_context *c = context;
    const struct run_options *run = c->run;
    if (!run->report_path && !run->json_path && !run->summary_path)
        return;
    struct hangdoc_options options = *c->base;
    options.pids = &command;
    options.npids = 1;
    FILE *report = open_report(run->report_path, "we"), *json = open_report(run->json_path, "we");
    FILE *summary = open_report(run->summary_path, "ae");
    struct hangdoc_outputs outputs = { .text = { report }, .json = json, .summary = summary };
    if ((report || json || summary) && !hangdoc_report_unfinished(&options, &outputs, why))
        fprintf(stderr, "hangdoc run: could not write the report files: %s\n", strerror(errno));
    close_reports(report, json, summary);
}

int hangdoc_run(const struct hangdoc_options *diagnosis, int argc, char **argv)
{
    struct run_options run;
    int status = parse_run_options(argc, argv, &run);
    if (status >= 0)
        return status;
    struct run_context context = { .base = diagnosis, .run = &run };
    struct supervise_hooks hooks = { .context = &context, .diagnose = diagnose_job, .unfinished = report_unfinished };
    return supervise_run(&run.job, &hooks);
}
