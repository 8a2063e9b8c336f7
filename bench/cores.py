#!/usr/bin/python3
"""Times `hangdoc --core` against `eu-stack --core` and `gdb -batch -c` on the same core files (issue 29).

Usage: python3 bench/cores.py [OUTPUT.md] [--sizes N,N,...]
Not a test: run it by hand on a quiet machine, after `ninja -C build`, with gdb (setup.sh installs it) and
elfutils (eu-stack: `bash bench/run.sh` installs it; remove it afterwards) installed.

Targets: bench/targets.c condvars N (N threads, each on a condition variable of its own) and bench/python_events.py
N (N Python threads, each on its own threading.Event), each dumped once with gcore. Every tool takes the native
stack of every thread from the core: `hangdoc --json --core CORE` (which also decodes the waits, reads the locks
and the Python view, and judges), `eu-stack --core=CORE --executable=EXE`, `gdb -batch -ex 'thread apply all bt'
-c CORE EXE`. Wall time: the median of 5 runs for hangdoc, 3 for the peers, output discarded; the frames each
printed are counted from one run. Writes the "Core files" section of OUTPUT.md (BENCHMARKS.md by default).
"""
import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline  # noqa: E402  (replace_section, timed)
import run as bench  # noqa: E402  (start_target, stop_target, settle)

HANGDOC = bench.HANGDOC
TIMEOUT_S = 600


def frames_printed(argv, pattern):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, errors="replace",
                            timeout=TIMEOUT_S)
    return len(re.findall(pattern, result.stdout, re.M))


def measure(name, threads, argv, executable, workdir):
    process, pids = bench.start_target(argv)
    try:
        bench.settle(pids[:1])
        prefix = os.path.join(workdir, f"core-{threads}")
        subprocess.run(["gcore", "-o", prefix, str(pids[0])], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True, timeout=TIMEOUT_S)
    finally:
        bench.stop_target(process)
    core = f"{prefix}.{pids[0]}"
    tools = {
        "hangdoc": ([HANGDOC, "--json", "--core", core], 5, None),
        "eu-stack": (["eu-stack", f"--core={core}", f"--executable={executable}"], 3, r"^#\d+\s"),
        "gdb": (["gdb", "-batch", "-nx", "-ex", "thread apply all bt", "-c", core, executable], 3, r"^#\d+\s"),
    }
    row = {"target": name, "threads": threads, "core_mib": os.path.getsize(core) / 2**20}
    for tool, (command, runs, pattern) in tools.items():
        row[tool] = offline.timed(command, runs, TIMEOUT_S)
        if pattern:
            row[tool + "_frames"] = frames_printed(command, pattern)
    result = subprocess.run(tools["hangdoc"][0], stdout=subprocess.PIPE, text=True, timeout=TIMEOUT_S)
    row["hangdoc_frames"] = len(re.findall(r'"pc":', result.stdout))
    os.unlink(core)
    return row


def section(rows):
    lines = [
        "## Core files: hangdoc --core, eu-stack --core and gdb",
        "",
        f"Reproduce this section alone: `python3 bench/cores.py` (issue 29). Measured {time.strftime('%Y-%m-%d')} "
        f"on {os.cpu_count()} CPUs, Linux {platform.release()}.",
        "",
        "One core per target, taken with `gcore`; every tool reads the native stack of every thread from it. "
        "`hangdoc --json --core CORE` also decodes every wait, reads the locks and the Python view, and judges; "
        "`eu-stack --core=CORE --executable=EXE` and `gdb -batch -ex 'thread apply all bt' -c CORE EXE` print the "
        "stacks. Wall time: the median of 5 runs (hangdoc) or 3 (the peers), output discarded; frames: how many "
        "each printed in one run.",
        "",
        "| target | threads | core (MiB) | hangdoc --core (s) | frames | eu-stack --core (s) | frames | gdb -c (s) "
        "| frames | eu-stack / hangdoc | gdb / hangdoc |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['target']} | {r['threads']:,} | {r['core_mib']:.0f} | {r['hangdoc']:.3f} | "
                     f"{r['hangdoc_frames']:,} | {r['eu-stack']:.3f} | {r['eu-stack_frames']:,} | {r['gdb']:.3f} | "
                     f"{r['gdb_frames']:,} | {r['eu-stack'] / r['hangdoc']:.1f}× | {r['gdb'] / r['hangdoc']:.1f}× |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("output", nargs="?", default=os.path.join(bench.ROOT, "BENCHMARKS.md"))
    parser.add_argument("--sizes", default="100,1000")
    arguments = parser.parse_args()
    for tool in ("gcore", "gdb", "eu-stack"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is missing (gdb: setup.sh; eu-stack: elfutils, which bench/run.sh installs)")
    sizes = [int(size) for size in arguments.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        targets = os.path.join(workdir, "targets")
        subprocess.run(["cc", "-O2", "-g", "-pthread", "-o", targets,
                        os.path.join(bench.ROOT, "bench", "targets.c")], check=True)
        for threads in sizes:
            rows.append(measure("C condition variables", threads, [targets, "condvars", str(threads)], targets,
                                workdir))
        python = os.path.realpath("/usr/bin/python3")
        rows.append(measure("Python threading.Event", sizes[-1],
                            [python, os.path.join(bench.ROOT, "bench", "python_events.py"), str(sizes[-1])], python,
                            workdir))
    text = section(rows)
    print(text)
    offline.replace_section_named(arguments.output, "## Core files: hangdoc --core, eu-stack --core and gdb", text)


if __name__ == "__main__":
    main()
