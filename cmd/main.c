/* hangdoc's command line: parse, dispatch to a subcommand, turn the result into an exit status.
 * Owns no logic of its own: probe/ reads, analysis/ explains, render/ prints. */
#include "probe.h"
#include "demo.h"
#include "diagnose.h"
#include "exit_codes.h"
#include "merge_command.h"
#include "options.h"
#include "run.h"
#include "watchdog.h"

#include <ctype.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The oldest kernel hangdoc runs on: PTRACE_SEIZE and PTRACE_INTERRUPT came in Linux 3.4 (process_vm_readv in
 * 3.2). The static binary may be copied onto anything; on an older kernel it says so instead of failing oddly. */
#define KERNEL_MAJOR_MIN 3
#define KERNEL_MINOR_MIN 4

#define DEFAULT_TIMEOUT_MS 30000

static const char usage_text[] =
    "Usage: hangdoc [OPTION]... PID...\n"
    "       hangdoc [OPTION]... --job ID\n"
    "       hangdoc [OPTION]... --core CORE [--core CORE]... [--sysroot DIR] [--exe FILE]\n"
    "       hangdoc analyze [OPTION]... SNAPSHOT\n"
    "       hangdoc demo [OPTION]...\n"
    "       hangdoc run [RUN OPTION]... [--] CMD [ARG]...\n"
    "       hangdoc merge [MERGE OPTION]... REPORT...\n"
    "Diagnose hung processes: read every thread of PID and of all its descendants, and say what each one waits\n"
    "on, for how long, and whether it makes progress, with every thread's native stack. To take the stacks each\n"
    "process is stopped for a moment (ptrace), then let go; nothing is changed in the target.\n"
    "\n"
    "  analyze              diagnose a snapshot saved by --save (\"-\": standard input), here or on another\n"
    "                       machine, after the processes are gone: the report the run printed\n"
    "  demo                 start a real hung process tree, diagnose it, end it\n"
    "  run                  run CMD; when it times out, stalls or is cancelled, diagnose its whole tree,\n"
    "                       write the reports, end the tree (exit 124, as timeout(1))\n"
    "  merge                merge the JSON reports of every host of a distributed job: ranks seen and\n"
    "                       missing, the stacks of all ranks as one tree, the outliers, one verdict\n"
    "                       (hangdoc merge --help)\n"
    "\n"
    "Run options:\n"
    "  -t, --timeout DUR    diagnose and end the tree when CMD runs longer than DUR\n"
    "      --stall DUR      ... when CMD prints nothing on stdout or stderr for DUR\n"
    "      --report FILE    write the text report to FILE too (it always goes to stderr)\n"
    "      --json FILE      write the JSON report to FILE (in FILE, %h: host, %r: rank, %p: pid)\n"
    "      --summary FILE   append a Markdown summary with a Mermaid graph to FILE ($GITHUB_STEP_SUMMARY)\n"
    "      --save DIR       keep the snapshot of each diagnosis in DIR as hangdoc.N.snapshot, for hangdoc\n"
    "                       analyze (a CI artifact; made if missing; %h, %r, %p as in --json)\n"
    "      --signal SIG     end the tree with SIG (default TERM), then KILL after --kill-after\n"
    "      --kill-after DUR how long to wait after SIG (default 5s)\n"
    "      --keep-running   report, but leave the tree running\n"
    "      --no-ptrace      diagnose without stopping any process (no native stacks)\n"
    "      --no-ledger      as below\n"
    "      --catalogue FILE as below\n"
    "      --stuck-after DUR as below (default: half the job's age, at most 60s)\n"
    "  SIGUSR1 makes hangdoc run diagnose at once and go on; SIGTERM, SIGINT and SIGHUP make it diagnose\n"
    "  (a few seconds at most), then pass the signal on to the tree.\n"
    "\n"
    "Options:\n"
    "  -j, --json           print one JSON document (schema hangdoc.report/2) instead of text\n"
    "      --dot            print the wait-for graph for Graphviz instead of text (pipe it to dot -Tsvg)\n"
    "      --markdown       print the Markdown summary (with a Mermaid graph) instead of text\n"
    "      --save FILE      also write everything read to FILE, a snapshot that hangdoc analyze turns into\n"
    "                       this same report later, anywhere (gzip-compressed when over 1 MiB)\n"
    "  -n, --samples N      read the tree N times (default 5)\n"
    "  -i, --interval DUR   time between samples (default 250ms)\n"
    "  -t, --timeout DUR    be done within DUR: near it, report on what was read (default 30s; 0: never)\n"
    "  -v, --verbose        list every thread (not only the relevant ones) with its kernel stack\n"
    "      --no-ptrace      never stop a process: no native stacks, only what /proc shows\n"
    "      --no-python      do not read Python interpreters' memory: no Python stacks, no GIL in the graph\n"
    "      --no-ledger      keep no wait ledger: a later diagnosis then sees each wait begin at this one's\n"
    "                       stop (see hangdoc(1), FILES)\n"
    "      --color[=WHEN]   colour the text report: auto (on a terminal, unless NO_COLOR is set), always,\n"
    "                       never; the report is wrapped to the terminal's width (or $COLUMNS)\n"
    "      --catalogue FILE extend the catalogue of fork-unsafe runtimes with the rows of FILE (see hangdoc(1))\n"
    "      --stuck-after DUR a thread asleep without timeout this long that only timer threads could wake is\n"
    "                       likely hung (default 60s, at least 1s)\n"
    "      --core CORE      diagnose a core file (gcore, the kernel's, systemd-coredump's) instead of a PID;\n"
    "                       again for each process of one tree (see hangdoc(1), OFFLINE)\n"
    "      --sysroot DIR    with --core: the files the cores name are under DIR (the machine's copied there)\n"
    "      --exe FILE       with --core: the first core's executable is FILE\n"
    "      --job ID         diagnose the processes of Slurm job ID on this host (its cgroup, or SLURM_JOB_ID in\n"
    "                       their environment) instead of a PID (also --slurm-job)\n"
    "  -h, --help           show this help and exit\n"
    "  -V, --version        show the version and exit\n"
    "\n"
    "DUR is a number with ms, s, m or h after it (a plain number means seconds).\n"
    "\n"
    "Exit status:\n"
    "   0  no hang found\n"
    "   1  a hang was found (cause other than fork inheritance)\n"
    "   2  a hang caused by fork-unsafe inheritance was found\n"
    "  64  usage error (bad option or pid, or hangdoc's own pid)\n"
    "  66  hangdoc merge: no report could be read; hangdoc analyze: the snapshot could not be read\n"
    "  69  the target process does not exist\n"
    "  70  internal error (out of memory, /proc unreadable, --timeout passed in a step that did not come back)\n"
    "  73  hangdoc run, hangdoc merge -o, --save: a report or snapshot file cannot be written\n"
    "  77  permission denied reading the target\n"
    "hangdoc run exits with the status of CMD (128 + N when signal N ended it), 124 when it ended CMD on\n"
    "--timeout or --stall, 126 when CMD cannot be executed, 127 when it is not found.\n";

__attribute__((format(printf, 1, 2))) static int usage_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "hangdoc: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\nTry 'hangdoc --help' for more information.\n");
    va_end(args);
    return EXIT_USAGE;
}

/* --timeout: the whole run is bounded. The probe keeps to options->deadline softly (diagnose.c); SIGALRM is the hard
 * backstop (watchdog.h). */
static void arm_deadline(struct hangdoc_options *options)
{
    if (options->timeout_ms == 0)
        return;
    options->deadline = hangdoc_monotonic_now() + options->timeout_ms / 1000.0;
    hangdoc_alarm_arm(options->deadline);
}

/* A Slurm job id as its cgroup and SLURM_JOB_ID spell it: "1234", or an array task's "1234_7". */
static bool is_job_id(const char *text)
{
    size_t length = strlen(text);
    return length > 0 && length <= 32 && isdigit((unsigned char)text[0]) &&
           strspn(text, "0123456789_") == length;
}

/* Parses the options; returns -1 to go on, or an exit status. */
static int parse_options(int argc, char **argv, struct hangdoc_options *options)
{
    static const struct option long_options[] = {
        { "json", no_argument, NULL, 'j' },         { "samples", required_argument, NULL, 'n' },
        { "interval", required_argument, NULL, 'i' }, { "timeout", required_argument, NULL, 't' },
        { "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },      { "no-ptrace", no_argument, NULL, 'P' },
        { "no-python", no_argument, NULL, 'Y' },   { "dot", no_argument, NULL, 'D' },
        { "color", optional_argument, NULL, 'c' },  { "colour", optional_argument, NULL, 'c' },
        { "catalogue", required_argument, NULL, 'C' }, { "stuck-after", required_argument, NULL, 'A' },
        { "job", required_argument, NULL, 'J' },    { "slurm-job", required_argument, NULL, 'J' },
        { "no-ledger", no_argument, NULL, 'L' },    { "save", required_argument, NULL, 'S' },
        { "markdown", no_argument, NULL, 'M' },    { "core", required_argument, NULL, 'O' },
        { "sysroot", required_argument, NULL, 'R' }, { "exe", required_argument, NULL, 'E' },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0;
    int option;
    while ((option = getopt_long(argc, argv, ":jn:i:t:vhV", long_options, NULL)) != -1) {
        switch (option) {
        case 'j':
        case 'D':
        case 'M':
        {
            bool *chosen = option == 'j' ? &options->json : option == 'D' ? &options->dot : &options->markdown;
            if (options->json + options->dot + options->markdown > *chosen)
                return usage_error("%s", "--json, --dot and --markdown are exclusive: one report on standard "
                                         "output");
            *chosen = true;
            break;
        }
        case 'O': {
            const char **grown = reallocarray(options->core_paths, options->ncore_paths + 1, sizeof *grown);
            if (!grown)
                return EXIT_INTERNAL;
            options->core_paths = grown;
            options->core_paths[options->ncore_paths++] = optarg;
            break;
        }
        case 'R':
            options->sysroot = optarg;
            break;
        case 'E':
            options->exe = optarg;
            break;
        case 'S':
            if (strcmp(optarg, "-") == 0)
                return usage_error("%s", "--save takes a file name: standard output has the report");
            options->save_path = optarg;
            break;
        case 'n': {
            pid_t samples;
            if (!hangdoc_parse_pid(optarg, &samples) || samples > 1000)
                return usage_error("--samples takes a number from 1 to 1000, not '%s'", optarg);
            options->samples = (unsigned)samples;
            break;
        }
        case 'i':
            if (!hangdoc_parse_duration_ms(optarg, &options->interval_ms) || options->interval_ms > 60000)
                return usage_error("--interval takes a duration up to 60s, such as 250ms, not '%s'", optarg);
            break;
        case 't':
            if (!hangdoc_parse_duration_ms(optarg, &options->timeout_ms))
                return usage_error("--timeout takes a duration such as 30s, not '%s'", optarg);
            break;
        case 'A':
            if (!hangdoc_parse_duration_ms(optarg, &options->stuck_after_ms) ||
                options->stuck_after_ms < HANGDOC_STUCK_AFTER_MIN_MS)
                return usage_error("--stuck-after takes a duration of at least 1s, such as 60s, not '%s'", optarg);
            options->stuck_after_given = true;
            break;
        case 'v':
            options->verbose = true;
            break;
        case 'P':
            options->no_ptrace = true;
            break;
        case 'Y':
            options->no_python = true;
            break;
        case 'L':
            options->no_ledger = true;
            break;
        case 'c':
            if (!optarg || strcmp(optarg, "always") == 0)
                options->colour = HANGDOC_COLOUR_ALWAYS;
            else if (strcmp(optarg, "never") == 0)
                options->colour = HANGDOC_COLOUR_NEVER;
            else if (strcmp(optarg, "auto") == 0)
                options->colour = HANGDOC_COLOUR_AUTO;
            else
                return usage_error("--color takes auto, always or never, not '%s'", optarg);
            break;
        case 'J':
            if (!is_job_id(optarg))
                return usage_error("'%s' is not a Slurm job id (digits, and _ for an array task)", optarg);
            options->job_id = optarg;
            break;
        case 'C':
            options->catalogue_path = optarg;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return EXIT_SUCCESS;
        case 'V':
            /* the commit it was built from, and whether it is the one static binary (setup.sh release) */
            printf("hangdoc %s%s%s%s\n", HANGDOC_VERSION, HANGDOC_COMMIT[0] ? " (commit " : "", HANGDOC_COMMIT,
                   HANGDOC_COMMIT[0] ? ")" : "");
#if HANGDOC_STATIC
            printf("statically linked: needs no library, runs on x86_64 Linux %d.%d or later\n", KERNEL_MAJOR_MIN,
                   KERNEL_MINOR_MIN);
#endif
            return EXIT_SUCCESS;
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    return -1;
}

/* --job: the job's processes on this host stand for the pids. */
static int collect_job(int argc, char **argv, struct hangdoc_options *options)
{
    if (argc > 0)
        return usage_error("--job takes no pid, but got '%s'", argv[0]);
    long found = probe_find_job_processes(options->job_id, &options->pids);
    if (found < 0) {
        fprintf(stderr, "hangdoc: cannot list the processes: %s\n", strerror((int)-found));
        return EXIT_INTERNAL;
    }
    if (found == 0) {
        fprintf(stderr, "hangdoc: no process of Slurm job %s on this host (none in its cgroup, none with "
                        "SLURM_JOB_ID=%s in an environment hangdoc may read)\n",
                options->job_id, options->job_id);
        return EXIT_NO_TARGET;
    }
    options->npids = (size_t)found;
    return -1;
}

static int collect_pids(int argc, char **argv, struct hangdoc_options *options)
{
    if (options->job_id)
        return collect_job(argc, argv, options);
    if (argc <= 0)
        return usage_error("%s", "no pid given");
    options->pids = calloc((size_t)argc, sizeof *options->pids);
    if (!options->pids)
        return EXIT_INTERNAL;
    for (int i = 0; i < argc; i++) {
        if (!hangdoc_parse_pid(argv[i], &options->pids[options->npids]))
            return usage_error("'%s' is not a process id (a positive number)", argv[i]);
        if (options->pids[options->npids] == getpid())
            return usage_error("pid %s is hangdoc itself", argv[i]);
        options->npids++;
    }
    return -1;
}

static bool kernel_too_old(char *release, size_t size)
{
    struct utsname name;
    unsigned major = 0, minor = 0;
    if (uname(&name) != 0 || sscanf(name.release, "%u.%u", &major, &minor) != 2)
        return false; /* unknown: try */
    snprintf(release, size, "%s", name.release);
    return major < KERNEL_MAJOR_MIN || (major == KERNEL_MAJOR_MIN && minor < KERNEL_MINOR_MIN);
}

/* `hangdoc analyze [OPTION]... SNAPSHOT`: the options of a report may follow the subcommand; those of reading
 * processes have nothing to act on. */
static int analyze(int argc, char **argv, struct hangdoc_options *options)
{
    optind = 1;
    int status = parse_options(argc, argv, options);
    if (status >= 0)
        return status;
    if (options->save_path || options->job_id || options->ncore_paths)
        return usage_error("%s", "analyze reads a saved snapshot: --save, --job and --core have nothing to act on");
    if (optind != argc - 1)
        return usage_error("%s", optind >= argc ? "analyze needs one snapshot file (saved by --save; - for "
                                                  "standard input)"
                                                : "analyze takes one snapshot file");
    return hangdoc_analyze(options, argv[optind]);
}

/* Everything main() does once the options have their defaults: a subcommand, or a diagnosis. */
static int dispatch(int argc, char **argv, struct hangdoc_options *options)
{
    /* `run` comes first and has options of its own; the command after it has its own too */
    if (argc > 1 && strcmp(argv[1], "run") == 0)
        return hangdoc_run(options, argc - 1, argv + 1);
    /* `merge` reads reports, not processes: options of its own, none of a diagnosis */
    if (argc > 1 && strcmp(argv[1], "merge") == 0)
        return hangdoc_merge(argc - 1, argv + 1);
    int status = parse_options(argc, argv, options);
    if (status >= 0)
        return status;
    argc -= optind;
    argv += optind;
    if (argc > 0 && strcmp(argv[0], "demo") == 0) {
        /* options may also follow the subcommand */
        optind = 1;
        status = parse_options(argc, argv, options);
        if (status >= 0)
            return status;
        if (optind < argc)
            return usage_error("demo takes no pid, but got '%s'", argv[optind]);
        arm_deadline(options);
        return hangdoc_demo(options); /* starts the watchdog itself, once its tree is forked */
    }
    if (argc > 0 && strcmp(argv[0], "analyze") == 0)
        return analyze(argc, argv, options);
    if (argc > 0 && strcmp(argv[0], "merge") == 0)
        return usage_error("%s", "merge comes first: hangdoc merge [MERGE OPTION]... REPORT...");
    if ((options->sysroot || options->exe) && !options->ncore_paths)
        return usage_error("%s", "--sysroot and --exe say where a core's files are: they go with --core");
    if (options->ncore_paths) {
        if (argc > 0 || options->job_id)
            return usage_error("%s", "--core diagnoses core files: no pid and no --job with it");
        arm_deadline(options);
        hangdoc_watchdog_start(options->deadline);
        return hangdoc_diagnose(options);
    }
    status = collect_pids(argc, argv, options);
    if (status < 0) {
        arm_deadline(options);
        hangdoc_watchdog_start(options->deadline);
        status = hangdoc_diagnose(options);
    }
    return status;
}

int main(int argc, char **argv)
{
    char release[65];
    if (kernel_too_old(release, sizeof release)) {
        fprintf(stderr, "hangdoc: Linux %s is older than %d.%d, which hangdoc needs (PTRACE_SEIZE): not supported\n",
                release, KERNEL_MAJOR_MIN, KERNEL_MINOR_MIN);
        return EXIT_NO_TARGET;
    }
    struct hangdoc_options options = {
        .samples = PROBE_DEFAULT_SAMPLES,
        .interval_ms = PROBE_DEFAULT_INTERVAL_MS,
        .timeout_ms = DEFAULT_TIMEOUT_MS,
        .stuck_after_ms = HANGDOC_STUCK_AFTER_DEFAULT_MS,
    };
    /* A closed pipe on stdout (hangdoc | head) must end us with an error, not a signal. */
    signal(SIGPIPE, SIG_IGN);
    int status = dispatch(argc, argv, &options);
    /* the lists the options made, whichever way the dispatch ended */
    free(options.core_paths);
    free(options.pids);
    return status;
}
