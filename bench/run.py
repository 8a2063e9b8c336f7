#!/usr/bin/python3
"""Times hangdoc against gdb and eu-stack on the same targets, in one run, and writes BENCHMARKS.md.

Usage: bench/run.sh [OUTPUT.md]  (installs what is missing, then runs this with Debian's python3)
Targets: a small C process (4 threads), one process with 64 threads, a tree of 32 processes x 8 threads, and,
where python3-torch is installed, a stuck PyTorch DataLoader worker. Every tool takes all stacks of every thread:
hangdoc once for the whole target (it walks the tree itself), gdb and eu-stack once per process, one after the
other (summed, as a person would have to run them). Wall time: the median of interleaved runs; peak memory from
/usr/bin/time -f %M (for the per-process peers: the largest of their runs), the time each target stayed stopped
from hangdoc's own JSON (stopped_for_s). gdb and eu-stack keep a process stopped from attach to detach, which is
nearly their whole run: their stopped time is not measured, their wall time per process is its upper bound.
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HANGDOC = os.environ.get("HANGDOC", os.path.join(ROOT, "build", "hangdoc"))
PEER_RUNS = int(os.environ.get("BENCH_PEER_RUNS", "5"))
HANGDOC_RUNS = int(os.environ.get("BENCH_HANGDOC_RUNS", "30"))
EU_STACK_RUNS = int(os.environ.get("BENCH_EU_STACK_RUNS", "15"))
DEFAULT_RUNS = 3  # the default run sleeps through its 5 samples: a few runs say enough


def start_target(argv):
    """Starts a target and waits for its 'ready PID...' line; returns (process, pids)."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                               start_new_session=True)
    line = process.stdout.readline()
    if not line.startswith("ready"):
        process.kill()
        raise RuntimeError(f"{argv} did not get ready: {line!r}")
    return process, [int(word) for word in line.split()[1:]]


def stop_target(process):
    try:
        os.killpg(process.pid, 9)
    except ProcessLookupError:
        pass
    process.wait()


def timed_run(argvs):
    """Wall seconds of running each argv in turn (a peer, once per process), output discarded."""
    started = time.perf_counter()
    for argv in argvs:
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def spawn_overhead():
    """What starting a process from here costs by itself (the median of /bin/true): taken off every exec of every
    tool, so that a peer run once per process is not charged 32 times for Python's own fork and exec."""
    return statistics.median(timed_run([["/bin/true"]]) for _ in range(30))


def interleaved_medians(commands, runs):
    """Median wall seconds of each command. The runs are interleaved (A B C A B C ...), so that whatever else
    the machine does at a moment weighs on every tool alike; the median, not the mean, is what one run costs."""
    samples = {label: [] for label in commands}
    for label, argvs in commands.items():
        timed_run(argvs)  # warm-up: page cache, dynamic linker
    for round_number in range(max(runs.values())):
        for label, argvs in commands.items():
            if round_number < runs[label]:
                samples[label].append(timed_run(argvs))
    overhead = spawn_overhead()
    return {label: statistics.median(values) - overhead * len(commands[label]) for label, values in samples.items()}


def peak_kib(argvs):
    """Peak resident memory of one run (KiB), the largest over a peer's per-process runs."""
    peaks = []
    for argv in argvs:
        result = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        peaks.append(int(result.stderr.strip().splitlines()[-1]))
    return max(peaks)


def hangdoc_stopped(pids, runs=7):
    """Median over runs of (total, longest) seconds the target's processes were stopped, from hangdoc's JSON."""
    totals, longests = [], []
    for _ in range(runs):
        output = subprocess.run([HANGDOC, "--json", "--samples", "1", str(pids[0])], capture_output=True, text=True)
        report = json.loads(output.stdout)
        times = [process.get("stopped_for_s", 0) for process in report["processes"]]
        totals.append(sum(times))
        longests.append(max(times))
    threads = sum(len(process["threads"]) for process in report["processes"])
    return statistics.median(totals), statistics.median(longests), threads


def measure(name, pids):
    root = str(pids[0])
    commands = {
        "hangdoc --samples 1": [[HANGDOC, "--samples", "1", root]],
        "hangdoc --samples 1 --no-ptrace": [[HANGDOC, "--samples", "1", "--no-ptrace", root]],
        "hangdoc (default: 5 samples)": [[HANGDOC, root]],
        "eu-stack": [["eu-stack", "-p", str(pid)] for pid in pids],
        "gdb": [["gdb", "-batch", "-p", str(pid), "-ex", "thread apply all bt"] for pid in pids],
    }
    runs = {label: PEER_RUNS if label == "gdb" else HANGDOC_RUNS if label.startswith("hangdoc --samples") else
            EU_STACK_RUNS if label == "eu-stack" else DEFAULT_RUNS for label in commands}
    medians = interleaved_medians(commands, runs)
    peaks = {label: peak_kib(argvs) for label, argvs in commands.items()}
    total, longest, threads = hangdoc_stopped(pids)
    return {"name": name, "processes": len(pids), "threads": threads, "means": medians, "peaks": peaks,
            "stopped_total": total, "stopped_longest": longest}


def table(results):
    lines = ["| target | tool | wall (ms) | hangdoc -n 1 is faster by | peak RSS (MiB) | stopped (ms) |",
             "|---|---|---:|---:|---:|---|"]
    for result in results:
        ours = result["means"]["hangdoc --samples 1"]
        for tool, mean in result["means"].items():
            ratio = "—" if tool.startswith("hangdoc") else f"{mean / ours:.1f}×"
            if tool == "hangdoc --samples 1":
                stopped = (f"{result['stopped_total'] * 1e3:.1f} in all, {result['stopped_longest'] * 1e3:.1f} "
                           f"per process at most")
            elif tool.endswith("--no-ptrace"):
                stopped = "never stopped (no stacks: the /proc part alone)"
            elif tool.startswith("hangdoc"):
                stopped = "stacks once; 4 more samples stop only threads in R"
            else:
                stopped = "not measured (≤ its wall time per process)"
            target = (f"{result['name']} ({result['processes']} process{'es' if result['processes'] > 1 else ''}, "
                      f"{result['threads']} threads)")
            lines.append(f"| {target} | {tool} | {mean * 1e3:.1f} | {ratio} | {result['peaks'][tool] / 1024:.1f} | "
                         f"{stopped} |")
    return "\n".join(lines)


def verdicts(results):
    """The issue's targets, checked on this run's numbers."""
    lines = []
    for result in results:
        means = result["means"]
        ours = means["hangdoc --samples 1"]
        gdb, eu_stack = means["gdb"] / ours, means["eu-stack"] / ours
        lines.append(f"- {result['name']}: {gdb:.1f}× faster than gdb ({'met' if gdb >= 20 else 'MISSED'}: at "
                     f"least 20×), {eu_stack:.2f}× eu-stack's speed ({'met' if eu_stack > 1 else 'MISSED'}: faster "
                     f"than eu-stack)")
        if result["name"].startswith("tree"):
            lines.append(f"- {result['name']}: {ours * 1e3:.0f} ms ({'met' if ours < 0.25 else 'MISSED'}: under "
                         f"250 ms on {os.cpu_count()} CPUs)")
    return "\n".join(lines)


def main():
    output = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "BENCHMARKS.md")
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        targets_binary = os.path.join(workdir, "targets")
        subprocess.run(["cc", "-O2", "-g", "-pthread", "-o", targets_binary,
                        os.path.join(ROOT, "bench", "targets.c")], check=True)
        targets = [("small C process", [targets_binary, "threads", "4"]),
                   ("64 threads", [targets_binary, "threads", "64"]),
                   ("tree 32 x 8", [targets_binary, "tree", "32", "8"])]
        python = "/usr/bin/python3"
        has_torch = subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0
        if has_torch:
            targets.append(("stuck DataLoader worker", [python, os.path.join(ROOT, "bench", "dataloader_stuck.py")]))
        for name, argv in targets:
            process, pids = start_target(argv)
            try:
                if name == "stuck DataLoader worker":
                    pids = pids[1:]  # the worker alone
                print(f"bench: {name}: pids {pids[:4]}{'...' if len(pids) > 4 else ''}", file=sys.stderr)
                results.append(measure(name, pids))
            finally:
                stop_target(process)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.machine())
    tools = {tool: subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
             for tool in ("gdb", "eu-stack")}
    notes = ""  # a hand-written "## Notes" section of an earlier run is kept
    if os.path.exists(output):
        with open(output) as earlier:
            text = earlier.read()
        if "\n## Notes\n" in text:
            notes = text[text.index("\n## Notes\n"):]
    with open(output, "w") as out:
        out.write(f"""# Benchmarks: native stacks of every thread, hangdoc vs gdb vs eu-stack

Reproduce: `bash bench/run.sh` (builds nothing: it uses `build/hangdoc`, or `$HANGDOC`; installs gdb, elfutils
and time when missing). Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} CPUs ({cpu}), Linux
{platform.release()}, {tools['gdb']}, {tools['eu-stack']}, as root, with libc6-dbg
installed (all three tools read its symbols).

Every tool takes the stack of every thread of the target. hangdoc takes the whole target in one run (it walks the
process tree); gdb (`gdb -batch -p PID -ex 'thread apply all bt'`) and eu-stack (`eu-stack -p PID`) run once per
process, one after the other, summed. Wall time is the median of runs interleaved tool by tool (A B C A B C...,
after one warm-up each: {HANGDOC_RUNS} runs of `hangdoc --samples 1`, {EU_STACK_RUNS} of eu-stack, {PEER_RUNS} of
gdb), because other jobs shared the machine: whatever they did weighs on every tool alike; the cost of starting
a process (the median of `/bin/true`) is taken off each exec. The ratio is the peer's time over
`hangdoc --samples 1`. Peak RSS from `/usr/bin/time -f %M` (the largest of a peer's per-process runs).

"stopped" is hangdoc's own `stopped_for_s`: how long each process stayed stopped (all its threads at once, one
process at a time; the median of 7 runs). gdb and eu-stack keep a process stopped from attach to detach, nearly
their whole run per process; that is not measured here. The default hangdoc run takes 5 samples 250 ms apart to
see progress, so its wall time is that second of sampling, not work. `hangdoc --samples 1 --no-ptrace` is the same
report without stacks: the difference to `--samples 1` is what the stacks cost; the rest is reading /proc for
every thread (states, system calls, wait channels, kernel stacks, maps, descriptors, the process list that gives
the tree, the unix socket peers), which eu-stack and gdb do not do.

{table(results)}

Targets of the issue, on these numbers:

{verdicts(results)}
{notes}""")
    print(f"bench: wrote {output}", file=sys.stderr)


if __name__ == "__main__":
    main()
