/* Wires the pipeline: probe_snapshot() -> report_render_*() (diagnose.h). */
#include "diagnose.h"

#include "probe.h"
#include "core_snapshot.h"
#include "record.h"
#include "buffer.h"
#include "catalogue.h"
#include "render_dot.h"
#include "render_markdown.h"
#include "report.h"
#include "exit_codes.h"
#include "watchdog.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

/* How long the analysis and rendering may take once the snapshot is read, whatever was left of --timeout: a
 * report of 10,000 threads takes about a second. */
#define REPORT_GRACE_S 10

static int exit_for_problem(enum probe_pid_problem problem)
{
    static const int codes[] = {
        [PROBE_PID_OK] = EXIT_NO_HANG,        [PROBE_PID_INVALID] = EXIT_USAGE,
        [PROBE_PID_SELF] = EXIT_USAGE,        [PROBE_PID_GONE] = EXIT_NO_TARGET,
        [PROBE_PID_PERMISSION] = EXIT_PERMISSION, [PROBE_PID_UNREADABLE] = EXIT_INTERNAL,
    };
    return codes[problem];
}

/* Says what is wrong with each unusable pid; returns the status to exit with when none is usable, else 0. */
static int check_targets(const struct hangdoc_options *options)
{
    int first_failure = 0;
    size_t usable = 0;
    for (size_t i = 0; i < options->npids; i++) {
        enum probe_pid_problem problem = probe_check_pid(options->pids[i]);
        if (problem == PROBE_PID_OK) {
            usable++;
            continue;
        }
        fprintf(stderr, "hangdoc: pid %d: %s\n", (int)options->pids[i], probe_pid_problem_text(problem));
        if (!first_failure)
            first_failure = exit_for_problem(problem);
    }
    return usable ? 0 : first_failure;
}

/* The exit status of each cause of a hang: fork inheritance has its own, so that a CI job can tell it apart. */
int hangdoc_exit_for_verdict(enum report_hung hung, enum report_cause cause)
{
    static const int by_cause[REPORT_CAUSES] = {
        [REPORT_CAUSE_NONE] = EXIT_NO_HANG,
        [REPORT_CAUSE_FORK_INHERITANCE] = EXIT_HANG_FORK_UNSAFE,
        [REPORT_CAUSE_DEADLOCK] = EXIT_HANG,
        [REPORT_CAUSE_KERNEL] = EXIT_HANG,
        [REPORT_CAUSE_BUSY_LOOP] = EXIT_HANG,
        [REPORT_CAUSE_STOPPED] = EXIT_HANG,
        [REPORT_CAUSE_WORKER_DIED] = EXIT_HANG,
        [REPORT_CAUSE_SPAWN_REIMPORT] = EXIT_HANG,
        [REPORT_CAUSE_PIPE_HELD_OPEN] = EXIT_HANG,
        [REPORT_CAUSE_FROZEN] = EXIT_HANG,
        [REPORT_CAUSE_UNKNOWN] = EXIT_HANG,
    };
    return hung == REPORT_HUNG_YES ? by_cause[cause] : EXIT_NO_HANG;
}

/* The one report the options ask for, on standard output. */
static struct hangdoc_outputs standard_output(const struct hangdoc_options *options)
{
    bool text = !options->json && !options->dot && !options->markdown;
    return (struct hangdoc_outputs){ .text = { text ? stdout : NULL },
                                     .json = options->json ? stdout : NULL,
                                     .dot = options->dot ? stdout : NULL,
                                     .summary = options->markdown ? stdout : NULL };
}

int hangdoc_diagnose(const struct hangdoc_options *options)
{
    struct hangdoc_outputs outputs = standard_output(options);
    return hangdoc_diagnose_into(options, &outputs);
}

/* Colour and width for one text output: a terminal gets both (NO_COLOR, https://no-color.org, turns colour off
 * unless --color=always); a pipe or redirected standard output gets neither, except a width from $COLUMNS; a
 * report file (hangdoc run --report) never a width, so that it stays greppable one line per fact. */
static struct report_text_options text_options_for(FILE *out, const struct hangdoc_options *options)
{
    struct report_text_options text = { .verbose = options->verbose, .recap = options->recap };
    int fd = fileno(out);
    bool terminal = fd >= 0 && isatty(fd);
    const char *no_colour = getenv("NO_COLOR");
    text.colour = options->colour == HANGDOC_COLOUR_ALWAYS ||
                  (options->colour == HANGDOC_COLOUR_AUTO && terminal && !(no_colour && *no_colour));
    struct winsize size;
    if (terminal && ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
        text.width = size.ws_col;
    const char *columns = fd == STDOUT_FILENO || fd == STDERR_FILENO ? getenv("COLUMNS") : NULL;
    char *end = NULL;
    long wanted = columns ? strtol(columns, &end, 10) : 0;
    if (text.width == 0 && columns && *columns && end && *end == '\0' && wanted >= 40 && wanted <= 1000)
        text.width = (unsigned)wanted;
    if (text.width != 0 && text.width < 40)
        text.width = 40; /* narrower than that, wrapping hurts more than it helps */
    return text;
}

static bool render_all(const struct hd_snapshot *snapshot, const struct report_analysis *analysis,
                       const struct hangdoc_options *options, const struct hangdoc_outputs *outputs)
{
    bool written = true;
    for (size_t i = 0; i < COUNT(outputs->text); i++)
        if (outputs->text[i]) {
            struct report_text_options text = text_options_for(outputs->text[i], options);
            written &= report_render_text(snapshot, analysis, &text, outputs->text[i]);
        }
    if (outputs->json)
        written &= report_render_json(snapshot, analysis, outputs->json);
    if (outputs->dot)
        written &= report_render_dot(snapshot, analysis, outputs->dot);
    if (outputs->summary)
        written &= report_render_markdown(snapshot, analysis, outputs->summary);
    return written;
}

/* The built-in catalogue, extended by --catalogue FILE; NULL after saying why not, with *status set. */
static struct report_catalogue *load_catalogue(const char *path, int *status)
{
    struct report_catalogue *catalogue = report_catalogue_new();
    if (!catalogue) {
        fprintf(stderr, "hangdoc: out of memory\n");
        *status = EXIT_INTERNAL;
        return NULL;
    }
    char error[256];
    if (path && report_catalogue_load(catalogue, path, error, sizeof error) != 0) {
        fprintf(stderr, "hangdoc: --catalogue %s: %s\n", path, error);
        report_catalogue_free(catalogue);
        *status = EXIT_USAGE;
        return NULL;
    }
    return catalogue;
}

int hangdoc_check_catalogue(const char *path)
{
    int status = 0;
    report_catalogue_free(load_catalogue(path, &status));
    return status;
}

static int diagnose_with(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs,
                         const struct report_catalogue *catalogue);
static int report_and_exit_status(const struct hd_snapshot *snapshot, const struct report_options *settings,
                                  const struct hangdoc_options *options, const struct hangdoc_outputs *outputs);
static int diagnose_cores(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs,
                          const struct report_catalogue *catalogue);
static int save_and_report(const struct hd_snapshot *snapshot, const struct report_options *settings,
                           const struct hangdoc_options *options, const struct hangdoc_outputs *outputs);

int hangdoc_diagnose_into(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs)
{
    int status = 0;
    struct report_catalogue *catalogue hd_cleanup(report_catalogue_free) =
        load_catalogue(options->catalogue_path, &status);
    if (!catalogue)
        return status;
    return options->ncore_paths ? diagnose_cores(options, outputs, catalogue)
                                : diagnose_with(options, outputs, catalogue);
}

/* Saves the snapshot when --save asks (saying why not), then reports on it: the exit status of the verdict, or
 * EXIT_CANNOT_CREATE when the report was made but the snapshot could not be saved. */
static int save_and_report(const struct hd_snapshot *snapshot, const struct report_options *settings,
                           const struct hangdoc_options *options, const struct hangdoc_outputs *outputs)
{
    /* saved before the report is made, so that a report that fails still leaves what it was made from */
    bool saved = true;
    if (options->save_path) {
        char why[512];
        const struct record_analysis recorded = { .stuck_after_s = settings->stuck_after_s };
        saved = record_save(options->save_path, snapshot, &recorded, why, sizeof why) == 0;
        if (!saved)
            fprintf(stderr, "hangdoc: --save: %s\n", why);
    }
    int status = report_and_exit_status(snapshot, settings, options, outputs);
    return saved || status == EXIT_INTERNAL ? status : EXIT_CANNOT_CREATE;
}

/* The exit status of a snapshot made from a file (a core, a saved snapshot) by a reader that returned `read` with
 * `why`: 0 when it was made, else said on stderr with `what` ("--core", "analyze"). */
static int file_snapshot_status(int read, const char *what, const char *why)
{
    if (read == -ENOMEM) {
        fprintf(stderr, "hangdoc: %s: out of memory\n", what);
        return EXIT_INTERNAL;
    }
    if (read != 0) {
        fprintf(stderr, "hangdoc: %s: %s\n", what, why);
        return EXIT_NO_INPUT;
    }
    return 0;
}

/* --core: the snapshot is made of core files, then judged as a live one. */
static int diagnose_cores(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs,
                          const struct report_catalogue *catalogue)
{
    const struct probe_core_options cores = { .paths = options->core_paths, .npaths = options->ncore_paths,
                                              .sysroot = options->sysroot, .exe = options->exe };
    struct hd_snapshot *snapshot hd_cleanup(hd_snapshot_free) = NULL;
    char why[768];
    int status = file_snapshot_status(probe_core_snapshot(&cores, &snapshot, why, sizeof why), "--core", why);
    if (status)
        return status;
    const struct report_options settings = {
        .catalogue = catalogue,
        .stuck_after_s = hangdoc_stuck_after_s(options->stuck_after_ms, 0),
    };
    return save_and_report(snapshot, &settings, options, outputs);
}

static int diagnose_with(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs,
                         const struct report_catalogue *catalogue)
{
    int refused = check_targets(options);
    if (refused)
        return refused;
    struct probe_options probe = {
        .pids = options->pids,
        .npids = options->npids,
        .samples = options->samples,
        .interval_ms = options->interval_ms,
        .no_ptrace = options->no_ptrace,
        .no_python = options->no_python,
        .no_debug_files = !probe_debug_files_default(),
        .ledger_dir = options->no_ledger ? NULL : probe_ledger_default_dir(),
        .deadline = hangdoc_probe_deadline(options->deadline, options->timeout_ms),
        .last_call = hangdoc_probe_last_call(options->deadline, options->timeout_ms),
    };
    struct hd_snapshot *snapshot hd_cleanup(hd_snapshot_free) = NULL;
    int read = probe_snapshot(&probe, &snapshot);
    /* Every target is let go and the snapshot is in memory: the report is made from it, even past --timeout
     * (a run too short for its target still says what it read). The backstops stay, further off. */
    hangdoc_backstops_postpone(hangdoc_monotonic_now() + REPORT_GRACE_S);
    if (read == -ESRCH) {
        fprintf(stderr, "hangdoc: the process%s exited before it could be read\n", options->npids == 1 ? "" : "es");
        return EXIT_NO_TARGET;
    }
    if (read == -ENOMEM) {
        fprintf(stderr, "hangdoc: out of memory\n");
        return EXIT_INTERNAL;
    }
    if (read != 0) {
        fprintf(stderr, "hangdoc: reading /proc failed: %s\n", strerror(-read));
        return EXIT_INTERNAL;
    }
    double oldest_age_s = 0;
    for (size_t p = 0; p < snapshot->nprocesses; p++)
        if (snapshot->processes[p].age_s > oldest_age_s)
            oldest_age_s = snapshot->processes[p].age_s;
    const struct report_options settings = {
        .catalogue = catalogue,
        .stuck_after_s = hangdoc_stuck_after_s(options->stuck_after_ms, oldest_age_s),
    };
    return save_and_report(snapshot, &settings, options, outputs);
}

/* Analyses the snapshot, renders the reports, and gives the exit status of the verdict. */
static int report_and_exit_status(const struct hd_snapshot *snapshot, const struct report_options *settings,
                                  const struct hangdoc_options *options, const struct hangdoc_outputs *outputs)
{
    struct report_analysis *analysis hd_cleanup(report_analysis_free) = report_analyze_with(snapshot, settings);
    if (!analysis) {
        fprintf(stderr, "hangdoc: out of memory\n");
        return EXIT_INTERNAL;
    }
    if (!render_all(snapshot, analysis, options, outputs)) {
        fprintf(stderr, "hangdoc: could not write the report: %s\n", strerror(errno));
        return EXIT_INTERNAL;
    }
    return hangdoc_exit_for_verdict(analysis->verdict.hung, analysis->verdict.cause);
}

int hangdoc_analyze(const struct hangdoc_options *options, const char *path)
{
    int status = 0;
    struct report_catalogue *catalogue hd_cleanup(report_catalogue_free) =
        load_catalogue(options->catalogue_path, &status);
    if (!catalogue)
        return status;
    struct hd_snapshot *snapshot hd_cleanup(hd_snapshot_free) = NULL;
    struct record_analysis recorded;
    char why[768];
    status = file_snapshot_status(record_load(path, &snapshot, &recorded, why, sizeof why), "analyze", why);
    if (status)
        return status;
    const struct report_options settings = {
        .catalogue = catalogue,
        .stuck_after_s = options->stuck_after_given ? options->stuck_after_ms / 1000.0 : recorded.stuck_after_s,
    };
    const struct hangdoc_outputs outputs = standard_output(options);
    return report_and_exit_status(snapshot, &settings, options, &outputs);
}

bool hangdoc_report_unfinished(const struct hangdoc_options *options, const struct hangdoc_outputs *outputs,
                               const char *why)
{
    /* The text in the report's own words; the JSON through its renderer, from an empty snapshot (the roots
     * borrowed) whose one note says why, so that it keeps to the schema: 0 samples, and the verdict "could not
     * tell", not the "no hang" an empty snapshot would get. */
    bool written = true;
    for (size_t i = 0; i < COUNT(outputs->text); i++)
        if (outputs->text[i])
            written &= fprintf(outputs->text[i], "verdict: could not tell: no diagnosis (see the notes)\n\nnotes:\n"
                                                 "  %s\n", why) > 0 && fflush(outputs->text[i]) == 0;
    if (outputs->summary)
        written &= report_render_markdown_unfinished(why, outputs->summary);
    if (!outputs->json)
        return written;
    struct hd_snapshot snapshot = { .roots = options->pids, .nroots = options->npids };
    struct utsname names;
    if (uname(&names) == 0) {
        snprintf(snapshot.host, sizeof snapshot.host, "%s", names.nodename);
        snprintf(snapshot.kernel, sizeof snapshot.kernel, "%s", names.release);
    }
    struct report_analysis *analysis = NULL;
    written &= hd_snapshot_note(&snapshot, HD_NOTE_TARGET, 0, 0, "%s", why) && (analysis = report_analyze(&snapshot));
    if (analysis) {
        analysis->verdict.hung = REPORT_HUNG_UNKNOWN;
        analysis->verdict.cause = REPORT_CAUSE_UNKNOWN;
        written &= report_render_json(&snapshot, analysis, outputs->json);
        report_analysis_free(analysis);
    }
    for (size_t i = 0; i < snapshot.nnotes; i++)
        free(snapshot.notes[i].text);
    free(snapshot.notes);
    return written;
}
