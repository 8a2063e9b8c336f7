#!/usr/bin/python3
"""What the Python view costs (issue 16), and the peer that can be installed here, written as the section
"## Python stacks" of BENCHMARKS.md (in place of an earlier one; the rest of the file is kept).

Usage: bash bench/run.sh --python [OUTPUT.md] (installs gdb and python3.11-dbg when missing, then runs this with
Debian's python3). Targets: the stuck PyTorch DataLoader worker of bench/dataloader_stuck.py (where python3-torch is
installed) and a 200-thread Python process (bench/python_events.py 200), both under Debian's /usr/bin/python3.
hangdoc runs as `hangdoc --samples 1 PID` and as the same with `--no-python`: the difference is what reading the
interpreter costs. Where the chroot of Debian's development suite is built (tests/modern/chroot.sh), the same two
targets run once more under its python3.14 and PyTorch 2.x (hangdoc only: no gdb extension for 3.14 there). The peer: gdb with CPython's own gdb extension (python3.11-dbg's python3.11-gdb.py),
`gdb -batch -p PID -ex 'thread apply all py-bt'`. py-spy and pystack are not packaged for Debian 12.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (the shared helpers: targets, interleaved medians, peaks)

PYTHON = "/usr/bin/python3"
RUNS = int(os.environ.get("BENCH_HANGDOC_RUNS", "30"))
GDB_RUNS = int(os.environ.get("BENCH_PEER_RUNS", "5"))


def frames_found(pid):
    """How many Python frames hangdoc reports for the target, and how many gdb's py-bt prints: both must show the
    stacks for the comparison to mean anything."""
    report = subprocess.run([bench.HANGDOC, "--json", "--samples", "1", str(pid)], capture_output=True, text=True)
    document = json.loads(report.stdout)
    ours = sum(len(thread["python_frames"]) for process in document["processes"] for thread in process["threads"])
    gdb = subprocess.run(["gdb", "-batch", "-p", str(pid), "-ex", "thread apply all py-bt"], capture_output=True,
                         text=True)
    theirs = len(re.findall(r'^\s*File "', gdb.stdout, re.M))
    return ours, theirs


def measure(name, pid, with_gdb=True):
    commands = {
        "hangdoc --samples 1": [[bench.HANGDOC, "--samples", "1", str(pid)]],
        "hangdoc --samples 1 --no-python": [[bench.HANGDOC, "--samples", "1", "--no-python", str(pid)]],
    }
    if with_gdb:
        commands["gdb py-bt"] = [["gdb", "-batch", "-p", str(pid), "-ex", "thread apply all py-bt"]]
    runs = {label: GDB_RUNS if label.startswith("gdb") else RUNS for label in commands}
    medians = bench.interleaved_medians(commands, runs)
    peaks = {label: bench.peak_kib(argvs) for label, argvs in commands.items()}
    ours, theirs = frames_found(pid) if with_gdb else (frames_of_hangdoc(pid), None)
    return {"name": name, "medians": medians, "peaks": peaks, "frames": ours, "gdb_frames": theirs}


def frames_of_hangdoc(pid):
    report = subprocess.run([bench.HANGDOC, "--json", "--samples", "1", str(pid)], capture_output=True, text=True)
    document = json.loads(report.stdout)
    return sum(len(thread["python_frames"]) for process in document["processes"] for thread in process["threads"])


def modern_root():
    """The chroot of Debian's development suite, when tests/modern/chroot.sh has built it; else None."""
    root = os.environ.get("HANGDOC_MODERN_ROOT", "/var/cache/hangdoc/sid")
    return root if os.path.exists(os.path.join(root, ".hangdoc-modern")) else None


def section(results):
    gdb_version = subprocess.run(["gdb", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    python_version = subprocess.run([PYTHON, "--version"], capture_output=True, text=True).stdout.strip()
    lines = ["| target | tool | wall (ms) | peak RSS (MiB) | Python frames shown |", "|---|---|---:|---:|---:|"]
    verdicts = []
    for result in results:
        medians, peaks = result["medians"], result["peaks"]
        for label in medians:
            frames = result["gdb_frames"] if label.startswith("gdb") else (
                0 if "--no-python" in label else result["frames"])
            lines.append(f"| {result['name']} | `{label}` | {medians[label] * 1e3:.1f} | "
                         f"{peaks[label] / 1024:.1f} | {frames} |")
        with_python, without = medians["hangdoc --samples 1"], medians["hangdoc --samples 1 --no-python"]
        added = (with_python - without) / without * 100
        peer = (f"; gdb's py-bt takes {medians['gdb py-bt'] / with_python:.0f}× as long as hangdoc's whole report"
                if "gdb py-bt" in medians else "")
        verdicts.append(f"- {result['name']}: the Python view adds {(with_python - without) * 1e3:.1f} ms, "
                        f"{added:.0f} % of `--samples 1` ({'met' if added < 20 else 'MISSED'}: under 20 %){peer}")
    return f"""## Python stacks

Reproduce this section alone: `bash bench/run.sh --python` (issue 16). Measured {time.strftime('%Y-%m-%d')} on
{os.cpu_count()} CPUs, Linux {os.uname().release}, {python_version} (Debian's, not position-independent),
{gdb_version} with python3.11-dbg's gdb extension.

hangdoc reads every thread's Python stack from the interpreter's memory with process_vm_readv, without stopping
it; `--no-python` leaves the interpreter alone, so the difference between the two rows is what the Python view
costs (the rest is the native stacks and /proc). The peer that Debian 12 packages is gdb with CPython's own
extension, `gdb -batch -p PID -ex 'thread apply all py-bt'`, which attaches, stops the process and walks the same
structures through the debug information; py-spy and pystack are not packaged for Debian 12. Wall time is the
median of runs interleaved tool by tool ({RUNS} of each hangdoc variant, {GDB_RUNS} of gdb), the cost of starting
a process taken off; peak RSS from `/usr/bin/time -f %M`; the frames column counts the Python frames each printed
(hangdoc's JSON `python_frames`, gdb's `File "..."` lines). The rows marked Python 3.14 run the same targets
under the python3.14 and PyTorch 2.x of Debian's development suite, in the chroot that tests/modern/chroot.sh
builds (stripped as shipped; issue 26); gdb has no py-bt for that interpreter there.

{chr(10).join(lines)}

{chr(10).join(verdicts)}
"""


def main():
    output = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), os.path.join(bench.ROOT, "BENCHMARKS.md"))
    targets = [("200 Python threads", [PYTHON, os.path.join(bench.ROOT, "bench", "python_events.py"), "200"])]
    if subprocess.run([PYTHON, "-c", "import torch"], capture_output=True).returncode == 0:
        targets.insert(0, ("stuck DataLoader worker", [PYTHON, os.path.join(bench.ROOT, "bench",
                                                                              "dataloader_stuck.py")]))
    root = modern_root()
    if root:
        os.environ.setdefault("HANGDOC_MODERN_ROOT", root)
        os.environ.setdefault("HANGDOC_SOURCE_ROOT", bench.ROOT)
        in_sid = [os.path.join(bench.ROOT, "tests", "modern", "in_sid"), "/usr/bin/python3.14"]
        targets += [(f"{name}, Python 3.14", in_sid + argv[1:]) for name, argv in list(targets)]
    results = []
    for name, argv in targets:
        process, pids = bench.start_target(argv)
        try:
            pid = pids[1] if name.startswith("stuck DataLoader worker") else pids[0]
            print(f"bench: {name}: pid {pid}", file=sys.stderr)
            results.append(measure(name, pid, with_gdb="3.14" not in name))
        finally:
            bench.stop_target(process)
    bench.write_section(output, "Python stacks\n", section(results))

if __name__ == "__main__":
    main()
