#!/usr/bin/python3
"""Times hangdoc against gdb and eu-stack on the same targets, in one run, and writes BENCHMARKS.md.

Usage: bench/run.sh [OUTPUT.md] [--scale | --no-scale] [--sizes N,N,...] [--python-sizes N,...] [--tree P,T]
(installs what is missing, then runs this with Debian's python3). A full run measures both parts below; --scale
measures only the scale section and puts it in place of the one OUTPUT.md has (the rest of the file is kept);
--no-scale only the first part.
Targets: a small C process (4 threads), one process with 64 threads, a tree of 32 processes x 8 threads, and,
where python3-torch is installed, a stuck PyTorch DataLoader worker. Every tool takes all stacks of every thread:
hangdoc once for the whole target (it walks the tree itself), gdb and eu-stack once per process, one after the
other (summed, as a person would have to run them). Wall time: the median of interleaved runs; peak memory from
/usr/bin/time -f %M (for the per-process peers: the largest of their runs), the time each target stayed stopped
from hangdoc's own JSON (stopped_for_s). gdb and eu-stack keep a process stopped from attach to detach, which is
nearly their whole run: their stopped time is not measured, their wall time per process is its upper bound.

Scale (issue 14): one process whose threads each wait on a condition variable of their own (an ownerless private
futex, the idle thread pool's pattern) at 100 to 10,000 threads, the same with Python threads each on its own
threading.Event, and a tree of 1,000 processes x 10 such threads: hangdoc --json with and without stacks, its peak
memory, its cost per thread, eu-stack on the same process, and the default 5-sample run on 10,000 threads.
"""
import argparse
import json
import os
import platform
import re
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


def run_main_part(targets_binary):
    """The first part: hangdoc against gdb and eu-stack on the small targets."""
    results = []
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
    return results


def main_part(results):
    """The text of the first part, from its results."""
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.machine())
    tools = {tool: subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
             for tool in ("gdb", "eu-stack")}
    return f"""# Benchmarks: native stacks of every thread, hangdoc vs gdb vs eu-stack

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
"""


SCALE_SIZES = [100, 250, 500, 1000, 2000, 5000, 10000]
SCALE_PYTHON_SIZES = [2000, 10000]
SCALE_TREE = (1000, 10)
# eu-stack takes seconds per thousand threads of a process: above this many threads it runs once, not 3 times,
# and not at all when its rate at the size before says it would take longer than EU_STACK_LONGEST_S
EU_STACK_ONE_RUN_ABOVE = int(os.environ.get("BENCH_EU_STACK_ONE_RUN_ABOVE", "2000"))
EU_STACK_LONGEST_S = float(os.environ.get("BENCH_EU_STACK_LONGEST_S", "30"))
SCALE_RUN_TIMEOUT_S = 180  # one run of a tool that hangs must not hang the benchmark (hangdoc gives up at 30 s)
GAVE_UP = 70  # hangdoc's exit status when --timeout passed with no report


def scale_runs(threads):
    """Few runs of the big targets: each takes seconds, and the median of 3 says enough."""
    return 5 if threads <= 1000 else 3


def task_states(pid):
    states = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                states.append(stat.read().rsplit(")", 1)[1].split()[0])
        except (OSError, IndexError):
            states.append("?")
    return states


def settle(pids, timeout=120):
    """Waits until every thread of every process sleeps (state S): thousands of threads reach their wait well
    after the target could say it started them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(state == "S" for pid in pids for state in task_states(pid)):
            return
        time.sleep(0.05)
    raise RuntimeError(f"bench: the threads of {pids[0]} never all slept")


def timed(argv, runs):
    """Wall seconds of each of `runs` runs of argv (output discarded), and the exit status of each."""
    times, statuses = [], []
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                timeout=SCALE_RUN_TIMEOUT_S)
        times.append(time.perf_counter() - started)
        statuses.append(result.returncode)
    return times, statuses


def check_report(root):
    """One hangdoc --samples 1 --json run whose report is read: how many threads it lists, and its exit status
    (also the warm-up of the runs that follow)."""
    result = subprocess.run([HANGDOC, "--json", "--samples", "1", root], capture_output=True, text=True,
                            timeout=SCALE_RUN_TIMEOUT_S)
    try:
        report = json.loads(result.stdout)
    except ValueError:
        return {"status": result.returncode, "threads": None, "hung": None, "notes": []}
    return {"status": result.returncode, "threads": sum(len(process["threads"]) for process in report["processes"]),
            "hung": report["verdict"]["hung"], "notes": [note["text"] for note in report.get("notes", [])]}


def eu_stack_wall(pid, threads, overhead, earlier):
    """eu-stack -p on the process (the median of 3 runs; of 1 above EU_STACK_ONE_RUN_ABOVE threads), or why not:
    `earlier` is (threads, seconds) of the same kind of target at the size before, whose rate predicts this one."""
    if earlier:
        expected = earlier[1] * threads / earlier[0]
        if expected > EU_STACK_LONGEST_S:
            return f"skipped: about {expected:.0f} s at its rate for {earlier[0]:,} threads"
    times, _ = timed(["eu-stack", "-p", str(pid)], 3 if threads <= EU_STACK_ONE_RUN_ABOVE else 1)
    return statistics.median(times) - overhead


def measure_scale(name, pids, threads, runs, overhead, eu_stack_earlier=None, default_runs=0):
    """hangdoc --json --samples 1 with and without stacks (runs interleaved), its peak RSS, eu-stack on the same
    process (one process only; `eu_stack_earlier` as for eu_stack_wall), and `default_runs` runs of the default
    5-sample hangdoc."""
    root = str(pids[0])
    settle(pids)
    checked = check_report(root)
    commands = {"no-ptrace": [HANGDOC, "--json", "--samples", "1", "--no-ptrace", root],
                "stacks": [HANGDOC, "--json", "--samples", "1", root]}
    samples = {label: ([], []) for label in commands}
    for _ in range(runs):
        for label, argv in commands.items():
            times, statuses = timed(argv, 1)
            samples[label][0].extend(times)
            samples[label][1].extend(statuses)
    result = {"name": name, "processes": len(pids), "threads": threads, "check": checked, "runs": runs,
              "peak_kib": peak_kib([commands["stacks"]])}
    for label, (times, statuses) in samples.items():
        gave_up = any(status == GAVE_UP for status in statuses)
        result[label] = None if gave_up else statistics.median(times) - overhead
        result[label + "_statuses"] = sorted(set(statuses))
    if len(pids) > 1:
        result["eu_stack"] = f"not run: one eu-stack per process, {len(pids):,} processes"
    else:
        result["eu_stack"] = eu_stack_wall(pids[0], threads, overhead, eu_stack_earlier)
    if default_runs:
        times, statuses = timed([HANGDOC, "--json", root], default_runs)
        result["default"] = None if GAVE_UP in statuses else statistics.median(times) - overhead
        result["default_statuses"] = sorted(set(statuses))
        result["default_runs"] = default_runs
    return result


def seconds(value, statuses=None):
    if value is None:
        return "gave up (exit 70)"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def scale_row(result):
    threads = result["threads"]
    stacks, no_ptrace = result["stacks"], result["no-ptrace"]
    per_thread = " / ".join("—" if value is None else f"{value / threads * 1e6:.0f}" for value in (no_ptrace, stacks))
    eu_stack = result["eu_stack"]
    if isinstance(eu_stack, str):
        eu_wall, ratio = eu_stack, "—"
    else:
        eu_wall = seconds(eu_stack)
        ratio = "—" if stacks is None else f"{eu_stack / stacks:.1f}×"
    check = result["check"]
    if check["threads"] is None:
        report = f"no report (exit {check['status']})"
    elif check["threads"] == threads:
        report = f"complete, exit {check['status']}"
    else:
        report = f"{check['threads']:,} of {threads:,} threads, exit {check['status']}"
    if check["notes"]:
        report += f", {len(check['notes'])} notes"
    return (f"| {result['name']} | {threads:,} | {seconds(no_ptrace)} | {seconds(stacks)} | "
            f"{result['peak_kib'] / 1024:.1f} | {result['peak_kib'] / threads:.1f} | {per_thread} | {eu_wall} | {ratio} "
            f"| {report} |")


def scale_table(results):
    lines = ["| target | threads | --no-ptrace (s) | with stacks (s) | peak RSS (MiB) | RSS per thread (KiB) | "
             "µs per thread (no stacks / stacks) | eu-stack -p (s) | eu-stack / hangdoc | report (-n 1) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    return "\n".join(lines + [scale_row(result) for result in results])


def met(condition):
    return "met" if condition else "MISSED"


def find(results, name, threads):
    return next((result for result in results if result["name"] == name and result["threads"] == threads), None)


def scale_verdicts(results):
    """The issue's scale targets, checked on this run's numbers; a target whose size was not run says so."""
    lines = []
    for name in ("C condition variables", "Python threading.Event"):
        big = find(results, name, 10000)
        if not big:
            lines.append(f"- {name}, 10,000 threads: not measured in this run")
        else:
            no_ptrace, stacks = big["no-ptrace"], big["stacks"]
            lines.append(f"- {name}, 10,000 threads, --samples 1: {seconds(no_ptrace)} s without stacks "
                         f"({met(no_ptrace is not None and no_ptrace < 1)}: under 1 s), {seconds(stacks)} s with "
                         f"stacks ({met(stacks is not None and stacks < 4)}: under 4 s), on {os.cpu_count()} CPUs")
        mid = find(results, name, 2000)
        if not mid or isinstance(mid["eu_stack"], str):
            lines.append(f"- {name}, 2,000 threads against eu-stack: not measured in this run")
        else:
            ratio = None if mid["stacks"] is None else mid["eu_stack"] / mid["stacks"]
            lines.append(f"- {name}, 2,000 threads with stacks: "
                         f"{'no report' if ratio is None else f'{ratio:.1f}× faster'} than eu-stack -p "
                         f"({met(ratio is not None and ratio >= 3)}: at least 3×)")
    tree = next((result for result in results if result["name"].startswith("tree")), None)
    if tree:
        lines.append(f"- {tree['name']} ({tree['processes']:,} processes, {tree['threads']:,} threads) with stacks: "
                     f"{seconds(tree['stacks'])} s ({met(tree['stacks'] is not None and tree['stacks'] < 3)}: under "
                     f"3 s)")
    else:
        lines.append("- tree of 1,000 processes x 10 threads: not measured in this run")
    c_rows = [result for result in results if result["name"] == "C condition variables"]
    small, large = (min(c_rows, key=lambda r: r["threads"]), max(c_rows, key=lambda r: r["threads"])) if c_rows else \
        (None, None)
    if small and large and small is not large and small["stacks"] and large["stacks"]:
        costs = {label: (large[label] / large["threads"]) / (small[label] / small["threads"])
                 for label in ("no-ptrace", "stacks") if large[label] and small[label]}
        flat = all(ratio <= 2 for ratio in costs.values())
        lines.append(f"- cost per thread at {large['threads']:,} threads over the cost at {small['threads']:,}: "
                     + ", ".join(f"{ratio:.2f}× ({label})" for label, ratio in costs.items())
                     + f" ({met(flat)}: flat, at most 2×)")
    else:
        lines.append("- cost per thread: too few sizes measured to compare")
    default = next((result for result in results if "default" in result), None)
    if default:
        value = default["default"]
        lines.append(f"- the default run (5 samples 250 ms apart) on {default['threads']:,} threads: {seconds(value)} s, "
                     f"exit {'/'.join(map(str, default['default_statuses']))} "
                     f"({met(value is not None and value < 10)}: well inside the default 30 s --timeout, under 10 s)")
    return "\n".join(lines)


def run_scale(targets_binary, sizes, python_sizes, tree):
    """Every scale target in turn, each started, measured and ended."""
    overhead = spawn_overhead()
    plans = [("C condition variables", [targets_binary, "condvars", str(n)], n, n == max(sizes)) for n in sizes]
    plans += [("Python threading.Event", ["/usr/bin/python3", os.path.join(ROOT, "bench", "python_events.py"),
                                          str(n)], n, False) for n in python_sizes]
    if tree:
        processes, threads = tree
        plans.append((f"tree {processes} x {threads}", [targets_binary, "condtree", str(processes), str(threads)],
                      processes * threads, False))
    results, eu_stack_earlier = [], {}
    for name, argv, threads, with_default in plans:
        process, pids = start_target(argv)
        try:
            print(f"bench: scale: {name}, {threads} threads", file=sys.stderr)
            result = measure_scale(name, pids, threads, scale_runs(threads), overhead, eu_stack_earlier.get(name),
                                   default_runs=DEFAULT_RUNS if with_default else 0)
        finally:
            stop_target(process)
        if not isinstance(result["eu_stack"], str):
            eu_stack_earlier[name] = (threads, result["eu_stack"])
        results.append(result)
    return results


def scale_section(results):
    runs = sorted({result["runs"] for result in results})
    return f"""## Scale: threads on ownerless futexes

Reproduce this section alone: `python3 bench/run.py --scale` (issue 14). Measured {time.strftime('%Y-%m-%d')} on
{os.cpu_count()} CPUs, Linux {platform.release()}.

Every thread of these targets but one waits on a futex nobody owns, so that any other thread of its process could
wake it: the pattern of every idle thread pool, and the widest OR-set of the wait-for graph. "C condition
variables" is `bench/targets.c condvars N` (each thread on a `pthread_cond_t` of its own, 64 KiB stacks; the main
thread in `pause`); "Python threading.Event" is `bench/python_events.py N` (each thread on its own `Event`; the
main thread in a timed sleep); the tree is `targets condtree P T`. hangdoc runs as `hangdoc --json --samples 1
[--no-ptrace] PID`, output discarded; wall time is the median of {' or '.join(map(str, runs))} runs (5 up to 1,000
threads, 3 above), the two variants interleaved, the cost of starting a process taken off. Before them one run's
report is read: "report" says whether it listed every thread, and hangdoc's exit status. Peak RSS: one run with
stacks under `/usr/bin/time -f %M`. eu-stack: `eu-stack -p PID`, the median of 3 runs (one run above
{EU_STACK_ONE_RUN_ABOVE:,} threads), skipped where its rate at the size before says it would take over
{EU_STACK_LONGEST_S:.0f} s; "eu-stack / hangdoc" is its wall over hangdoc's with stacks.

{scale_table(results)}

Targets of the issue, on these numbers:

{scale_verdicts(results)}
"""


def write_section(output, heading, new):
    """Puts `new` (a section whose first line is "## HEADING") in place of that section of the file `output`, or
    before its Notes section, or at its end."""
    text = open(output).read() if os.path.exists(output) else "# Benchmarks\n"
    marker = "\n## " + heading
    if marker in text:
        start = text.index(marker) + 1
        following = re.search(r"^## ", text[start + 3:], re.M)
        end = start + 3 + following.start() if following else len(text)
        text = text[:start] + new + ("\n" if following else "") + text[end:]
    elif "\n## Notes\n" in text:
        at = text.index("\n## Notes\n") + 1
        text = text[:at] + new + "\n" + text[at:]
    else:
        text = text.rstrip("\n") + "\n\n" + new
    with open(output, "w") as out:
        out.write(text)
    print(f"bench: wrote {output}", file=sys.stderr)


def split_sections(text):
    """(everything before the scale section, the hand-written notes from "## Notes" on) of an earlier run's file."""
    notes = text[text.index("\n## Notes\n"):] if "\n## Notes\n" in text else ""
    head = text[:len(text) - len(notes)]
    if "\n## Scale" in head:
        head = head[:head.index("\n## Scale")]
    return head, notes


def parse_arguments():
    parser = argparse.ArgumentParser(description="Benchmark hangdoc against gdb and eu-stack; write BENCHMARKS.md")
    parser.add_argument("output", nargs="?", default=os.path.join(ROOT, "BENCHMARKS.md"))
    parser.add_argument("--out", dest="output_option", help="the same as OUTPUT")
    part = parser.add_mutually_exclusive_group()
    part.add_argument("--scale", action="store_true", help="only the scale section (the rest of OUTPUT is kept)")
    part.add_argument("--no-scale", action="store_true", help="only the first part, without the scale section")
    counts = lambda text: [int(word) for word in text.split(",") if word]
    parser.add_argument("--sizes", type=counts, default=SCALE_SIZES, help="threads of the C targets (N,N,...)")
    parser.add_argument("--python-sizes", type=counts, default=SCALE_PYTHON_SIZES, help="threads of the Python ones")
    parser.add_argument("--tree", type=counts, default=list(SCALE_TREE), help="P,T of the tree (0,0: none)")
    arguments = parser.parse_args()
    if arguments.output_option:
        arguments.output = arguments.output_option
    if len(arguments.tree) != 2:
        parser.error("--tree takes P,T")
    return arguments


def main():
    arguments = parse_arguments()
    output = arguments.output
    results, scale_results = [], []
    with tempfile.TemporaryDirectory() as workdir:
        targets_binary = os.path.join(workdir, "targets")
        subprocess.run(["cc", "-O2", "-g", "-pthread", "-o", targets_binary,
                        os.path.join(ROOT, "bench", "targets.c")], check=True)
        if not arguments.scale:
            results = run_main_part(targets_binary)
        if not arguments.no_scale:
            tree = tuple(arguments.tree) if all(arguments.tree) else None
            scale_results = run_scale(targets_binary, arguments.sizes, arguments.python_sizes, tree)
    head, notes = "", ""  # a hand-written "## Notes" section of an earlier run is kept
    if os.path.exists(output):
        with open(output) as earlier:
            head, notes = split_sections(earlier.read())
    if not arguments.scale:
        head = main_part(results)
    elif not head:
        head = "# Benchmarks: native stacks of every thread, hangdoc vs gdb vs eu-stack\n"
    with open(output, "w") as out:
        out.write(head + ("\n" + scale_section(scale_results) if scale_results else "") + notes)
    print(f"bench: wrote {output}", file=sys.stderr)


if __name__ == "__main__":
    main()
