#!/usr/bin/python3
"""The static binary against the dynamic build (issue 27), written as the section "## The static binary" of
BENCHMARKS.md (in place of an earlier one; the rest of the file is kept).

Usage: bash bench/run.sh --static [OUTPUT.md] (builds dist/ with `bash setup.sh release` first). Both binaries run
`--samples 1 PID` on the stuck PyTorch DataLoader worker of bench/dataloader_stuck.py (Debian's python3 and
python3-torch), interleaved, the cost of starting a process taken off; their sizes on disk; and `--version`, the
start-up alone. Target: the static binary within 10 % of the dynamic build's `--samples 1` time.
"""
import glob
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (the shared helpers: targets, interleaved medians, peaks)

RUNS = int(os.environ.get("BENCH_HANGDOC_RUNS", "30"))


def main():
    output = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), os.path.join(bench.ROOT, "BENCHMARKS.md"))
    static = sorted(glob.glob(os.path.join(bench.ROOT, "dist", "hangdoc-*-x86_64-linux")))[-1]
    dynamic = bench.HANGDOC
    process, pids = bench.start_target(["/usr/bin/python3", os.path.join(bench.ROOT, "bench", "dataloader_stuck.py")])
    try:
        worker = pids[1]
        commands = {
            "dynamic `--samples 1`": [[dynamic, "--samples", "1", str(worker)]],
            "static `--samples 1`": [[static, "--samples", "1", str(worker)]],
            "dynamic `--version`": [[dynamic, "--version"]],
            "static `--version`": [[static, "--version"]],
        }
        medians = bench.interleaved_medians(commands, {label: RUNS for label in commands})
        peaks = {label: bench.peak_kib(argvs) for label, argvs in commands.items()}
    finally:
        bench.stop_target(process)
    sizes = {"dynamic": os.path.getsize(dynamic), "static": os.path.getsize(static)}
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "hangdoc")
        subprocess.run(["strip", "-o", copy, dynamic], check=True)
        stripped_size = os.path.getsize(copy)
    lines = ["| binary, run | wall (ms) | peak RSS (MiB) |", "|---|---:|---:|"]
    for label in commands:
        # a run shorter than starting a process shows as under the resolution, not as a negative time
        wall = f"{medians[label] * 1e3:.2f}" if medians[label] * 1e3 >= 0.05 else "< 0.05"
        lines.append(f"| {label} | {wall} | {peaks[label] / 1024:.1f} |")
    ratio = medians["static `--samples 1`"] / medians["dynamic `--samples 1`"]
    verdict = (f"- the static binary takes {ratio * 100:.0f} % of the dynamic build's `--samples 1` time on the "
               f"DataLoader worker ({'met' if ratio <= 1.10 else 'MISSED'}: within 110 %)")
    section = f"""## The static binary

Reproduce this section alone: `bash setup.sh release && bash bench/run.sh --static` (issue 27). Measured
{time.strftime('%Y-%m-%d')} on {os.cpu_count()} CPUs, Linux {os.uname().release}. `bash setup.sh release` links
libunwind, libelf, zlib, lzma, json-c, glibc and libstdc++'s demangler into one stripped binary that loads no
library (the process list then comes from /proc, as without libproc2); the dynamic build is build/hangdoc
(debugoptimized, not stripped). Wall time is the median of {RUNS} runs of each, interleaved, the cost of starting
a process taken off; the target is the stuck worker of bench/dataloader_stuck.py.

Size on disk: static {sizes['static'] / 1e6:.2f} MB; dynamic {sizes['dynamic'] / 1e6:.2f} MB as built,
{stripped_size / 1e6:.2f} MB stripped, plus the shared libraries it loads.

{chr(10).join(lines)}

{verdict}
"""
    bench.write_section(output, "The static binary\n", section)


if __name__ == "__main__":
    main()
