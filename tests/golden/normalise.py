#!/usr/bin/python3
"""Replaces the volatile values of a hangdoc text report with placeholders, so that a scenario's report can be
compared with its expected file (tests/golden/*.txt).

    normalise.py --fixtures DIR [--pid ROLE=PID]... --pid-list PID... [--input REPORT] > normalised

Pids and tids named with --pid become <ROLE>; the other pids and tids of the tree (--pid-list, from the JSON
report of the same fixture) become <pid1>, <pid2>, ... in the order they first appear. Whole numbers only: pid 12
never replaces part of 123. Then addresses, durations, CPU figures, the host, the kernel, wait channels and kernel
stacks (which change with the kernel version), the native stacks section, and paths that depend on the build
directory or the machine.
"""
import argparse
import re
import sys

# (pattern, replacement), applied in order after the pids
VOLATILE = [
    # the native stacks: frame offsets and libc's internal names change with every build of libc and of the
    # fixtures (a sanitizer adds its own frames); tests/test_stacks.c checks them by name instead
    (re.compile(r"^native stacks \(.*?(?=^notes:$|\Z)", re.M | re.S), ""),
    # the header: sampling time, host, kernel, architecture
    (re.compile(r"samples? over [0-9.]+ s on .* \(Linux .*, (x86_64|aarch64|unknown)\)$", re.M),
     "samples over <s> s on <host> (Linux <kernel>, <arch>)"),
    (re.compile(r"0x[0-9a-f]{5,}"), "<addr>"),
    # "[futex wait, 0.9 s]", "30 s timeout", "deadline in 60 min", "3 h 5 min"
    (re.compile(r"\b\d+ d \d+ h\b|\b\d+ h \d+ min\b|\b\d+(\.\d+)? (ms|s|min)\b"), "<duration>"),
    (re.compile(r"progressing \([^)]*\)"), "progressing (<cpu>)"),
    (re.compile(r"(blocked_for_s|cpu_share|cpu_s): .*"), r"\1: <value>"),
    # kernel specifics: wait channels and kernel stacks differ between kernel versions
    (re.compile(r" · in [^ ]+"), " · in <wchan>"),
    (re.compile(r"(· wchan): .*"), r"\1: <wchan>"),
    (re.compile(r"^ *(· )?kernel(_stack)?: .*\n", re.M), ""),
    # machine specifics
    (re.compile(r"/usr/lib/[a-z0-9_]+-linux-gnu/"), "/usr/lib/<multiarch>/"),
    (re.compile(r"python3\.\d+"), "python3.X"),
    # the interpreter's patch release moves with Debian's updates
    (re.compile(r"^( *)python 3\.\d+(\.\d+)? · ", re.M), r"\1python 3.X · "),
    # the build of a system library (libc's build-id changes with every Debian update)
    (re.compile(r"\b[0-9a-f]{40}\b"), "<build-id>"),
    # a thread that makes progress is caught on a CPU (R, "[running]", no wait channel) or in its wait between two
    # turns (S, "[poll] poll 0 fds, ..."): one form, whichever the last sample saw
    (re.compile(r"' [RS] \[[^\]]*\].*? · progressing \(<cpu>\)"), r"' <R or S> <running or waiting> · progressing (<cpu>)"),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--pid", action="append", default=[], help="ROLE=PID")
    parser.add_argument("--pid-list", nargs="*", default=[])
    parser.add_argument("--input", help="the report (default: standard input)")
    arguments = parser.parse_args()
    if arguments.input:
        with open(arguments.input, encoding="utf-8", errors="surrogateescape") as report:
            text = report.read()
    else:
        text = sys.stdin.read()
    text = text.replace(arguments.fixtures.rstrip("/") + "/", "<fixtures>/")

    names = {}
    for item in arguments.pid:
        role, pid = item.split("=", 1)
        names.setdefault(pid, "<" + role + ">")
    others = {pid for pid in arguments.pid_list if pid not in names}
    # number the other pids in order of first appearance, so the placeholders do not depend on pid values
    for match in re.finditer(r"\b\d+\b", text):
        if match.group() in others and match.group() not in names:
            names[match.group()] = "<pid%d>" % (sum(1 for n in names.values() if n.startswith("<pid")) + 1)
    if names:
        pattern = re.compile(r"(?<![\w.])(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True))
                             + r")(?![\w.])")
        text = pattern.sub(lambda match: names[match.group()], text)
    for volatile, replacement in VOLATILE:
        text = volatile.sub(replacement, text)
    text = re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
