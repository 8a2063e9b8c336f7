/* Command-line parsing: the options shared by every subcommand, and the number formats they take. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct hangdoc_options {
    bool json;
    bool verbose;
    unsigned samples;
    unsigned interval_ms;
    unsigned timeout_ms; /* bound on the whole run; 0: none */
    pid_t *pids;
    size_t npids;
    const char *catalogue_path; /* --catalogue: rows that extend the runtime catalogue; NULL: the built-in one */
};

/* Parses "42" as a pid: decimal, positive, no sign, no trailing bytes. */
bool hangdoc_parse_pid(const char *text, pid_t *pid);

/* Parses a duration: "250ms", "90s", "30m", "1h", or a plain number of seconds. */
bool hangdoc_parse_duration_ms(const char *text, unsigned *milliseconds);
