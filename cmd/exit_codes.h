/* hangdoc's exit status, a documented contract (--help, hangdoc(1)); the sysexits.h values where one fits. */
#pragma once

enum hangdoc_exit {
    EXIT_NO_HANG = 0,          /* no hang found */
    EXIT_HANG = 1,             /* hang found, cause other than fork inheritance */
    EXIT_HANG_FORK_UNSAFE = 2, /* hang caused by fork-unsafe inheritance */
    EXIT_USAGE = 64,           /* EX_USAGE: bad arguments */
    EXIT_NO_INPUT = 66,        /* EX_NOINPUT: `hangdoc merge` could read no report, `hangdoc analyze` no snapshot */
    EXIT_NO_TARGET = 69,       /* EX_UNAVAILABLE: the target process does not exist */
    EXIT_INTERNAL = 70,        /* EX_SOFTWARE: hangdoc failed (out of memory, /proc unreadable, deadline passed) */
    EXIT_CANNOT_CREATE = 73,   /* EX_CANTCREAT: a report or a --save snapshot cannot be written where asked */
    EXIT_PERMISSION = 77,      /* EX_NOPERM: the target cannot be read */
};
