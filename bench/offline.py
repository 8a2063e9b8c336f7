#!/usr/bin/python3
"""Times `hangdoc analyze` of saved snapshots against the live diagnosis they were saved from (issue 29).

Usage: python3 bench/offline.py [OUTPUT.md] [--sizes N,N,...]
Not a test: run it by hand on a quiet machine, after `ninja -C build`. It needs no peer and installs nothing.

For each target (bench/targets.c condvars N: N threads each on a condition variable of its own; and
bench/python_events.py N, N Python threads each on its own threading.Event) it runs `hangdoc --json --samples 1
--save FILE PID` once, checks that `hangdoc analyze --json FILE` prints the very report, then times both: the live
run (median of 3, with stacks) and the analysis of the file (median of 5), with the file's size and the peak RSS
of one analysis. Writes the "Offline" section of OUTPUT.md (BENCHMARKS.md by default) in place of the one there.
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (start_target, stop_target, settle)

ROOT = bench.ROOT
HANGDOC = bench.HANGDOC


def timed(argv, runs, timeout_s=300):
    """The median wall time of `runs` runs of `argv`, its output thrown away (bench/cores.py times with it too)."""
    walls = []
    for _ in range(runs):
        start = time.monotonic()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout_s)
        walls.append(time.monotonic() - start)
    return statistics.median(walls)


def peak_mib(argv):
    result = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, timeout=300)
    return int(result.stderr.strip().splitlines()[-1]) / 1024


def measure(name, threads, argv, workdir):
    process, pids = bench.start_target(argv)
    try:
        bench.settle(pids[:1])
        snapshot = os.path.join(workdir, f"{name}-{threads}.snapshot")
        live = subprocess.run([HANGDOC, "--json", "--samples", "1", "--save", snapshot, str(pids[0])],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=300)
        offline = subprocess.run([HANGDOC, "analyze", "--json", snapshot], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, timeout=300)
        same = live.stdout == offline.stdout and live.returncode == offline.returncode
        live_s = timed([HANGDOC, "--json", "--samples", "1", str(pids[0])], 3)
    finally:
        bench.stop_target(process)
    analyze = [HANGDOC, "analyze", "--json", snapshot]
    with open(snapshot, "rb") as file:
        compressed = file.read(2) == b"\x1f\x8b"
    return {
        "target": name, "threads": threads, "live_s": live_s, "analyze_s": timed(analyze, 5),
        "size_mib": os.path.getsize(snapshot) / 2**20, "compressed": compressed, "peak_mib": peak_mib(analyze),
        "same": same, "exit": offline.returncode,
    }


def section(results):
    lines = [
        "## Offline: hangdoc analyze of a saved snapshot",
        "",
        f"Reproduce this section alone: `python3 bench/offline.py` (issue 29). Measured "
        f"{time.strftime('%Y-%m-%d')} on {os.cpu_count()} CPUs, Linux {platform.release()}.",
        "",
        "`hangdoc --json --samples 1 --save FILE PID` saves the snapshot of a live diagnosis (with stacks); "
        "`hangdoc analyze --json FILE` reads it back, analyses it and prints the report. \"same report\" says "
        "whether the two printed the same bytes and exit status. Live: the median of 3 runs without --save; "
        "analyze: the median of 5; peak RSS of one analysis from `/usr/bin/time -f %M`. The targets are those "
        "of the scale section.",
        "",
        "| target | threads | live diagnosis (s) | snapshot (MiB) | gzip | analyze (s) | analyze peak RSS (MiB) "
        "| same report |",
        "|---|---:|---:|---:|---|---:|---:|---|",
    ]
    for r in results:
        lines.append(f"| {r['target']} | {r['threads']:,} | {r['live_s']:.3f} | {r['size_mib']:.1f} | "
                     f"{'yes' if r['compressed'] else 'no'} | {r['analyze_s']:.3f} | {r['peak_mib']:.0f} | "
                     f"{'yes' if r['same'] else 'NO'}, exit {r['exit']} |")
    return "\n".join(lines) + "\n"


def replace_section(path, text):
    replace_section_named(path, "## Offline: hangdoc analyze of a saved snapshot", text)


def replace_section_named(path, heading, text):
    """Puts `text` in place of the section `heading` of the Markdown file `path`, or before its Notes."""
    old = open(path).read() if os.path.exists(path) else ""
    pattern = re.compile(re.escape(heading) + r"\n.*?(?=\n## |\Z)", re.S)
    if pattern.search(old):
        new = pattern.sub(lambda _: text.rstrip("\n") + "\n", old, count=1)
    else:
        marker = "\n## Notes"
        new = old.replace(marker, "\n" + text + marker, 1) if marker in old else old + "\n" + text
    with open(path, "w") as file:
        file.write(new)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("output", nargs="?", default=os.path.join(ROOT, "BENCHMARKS.md"))
    parser.add_argument("--sizes", default="1000,10000")
    arguments = parser.parse_args()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        targets = os.path.join(workdir, "targets")
        subprocess.run(["cc", "-O2", "-g", "-pthread", "-o", targets, os.path.join(ROOT, "bench", "targets.c")],
                       check=True)
        for threads in sizes:
            results.append(measure("C condition variables", threads, [targets, "condvars", str(threads)], workdir))
        results.append(measure("Python threading.Event", sizes[-1],
                               ["/usr/bin/python3", os.path.join(ROOT, "bench", "python_events.py"),
                                str(sizes[-1])], workdir))
    text = section(results)
    print(text)
    replace_section(arguments.output, text)


if __name__ == "__main__":
    main()
