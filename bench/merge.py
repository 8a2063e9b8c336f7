#!/usr/bin/python3
"""How long `hangdoc merge` takes over the reports of a 1,024-host job (issue 18), written as the section
"## Merge" of BENCHMARKS.md (in place of an earlier one; the rest of the file is kept).

Usage: bash bench/run.sh --merge [OUTPUT.md]. Needs hangdoc built with its tests (the fixtures of tests/scenarios/
under the build directory: `ninja -C build`). Two real reports are taken with `hangdoc --json --no-ptrace`, of
inherited_mutex (a worker stuck on a mutex held at fork) and of healthy_pipe (nothing hung); tests/merge_cluster.py
makes of them the reports of 1,024 hosts (host names, boot ids, pids and ranks varied, one rank the culprit), as the
tests do. Each row is the median wall time of RUNS runs, output discarded, and the peak RSS of one run under
`/usr/bin/time -f %M`.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (the shared helpers: writing a section of BENCHMARKS.md)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HANGDOC = os.environ.get("HANGDOC", os.path.join(ROOT, "build", "hangdoc"))
FIXTURES = os.path.join(os.path.dirname(HANGDOC), "tests", "scenarios")
PYTHON = "/usr/bin/python3"
RUNS = int(os.environ.get("BENCH_MERGE_RUNS", "5"))
HOSTS = 1024


def real_report(fixture, path):
    """The JSON report of a fixture (tests/scenarios/fixture.h: "ready PID..." on fd 3), written to `path`."""
    read_end, write_end = os.pipe()
    # the shell puts the pipe on fd 3, where the fixture writes its ready line
    process = subprocess.Popen(["/bin/sh", "-c", 'exec "$0" 3>&"$1"', os.path.join(FIXTURES, fixture),
                                str(write_end)], pass_fds=(write_end,), start_new_session=True,
                               stdout=subprocess.DEVNULL)
    os.close(write_end)
    try:
        with os.fdopen(read_end) as ready:
            line = ready.readline()
        if not line.startswith("ready"):
            raise RuntimeError(f"{fixture} did not get ready: {line!r}")
        time.sleep(0.3)
        with open(path, "w") as out:
            subprocess.run([HANGDOC, "--json", "--no-ptrace", "--samples", "3", "--interval", "100ms",
                            line.split()[1]], stdout=out, check=False)
    finally:
        os.killpg(process.pid, 9)
        process.wait()


def make_cluster(workdir, name, *arguments):
    out = os.path.join(workdir, name)
    subprocess.run([PYTHON, os.path.join(ROOT, "tests", "merge_cluster.py"), "--healthy",
                    os.path.join(workdir, "healthy.json"), "--culprit", os.path.join(workdir, "culprit.json"),
                    "--out", out, "--pid-offsets", *arguments], check=True)
    return out


def wall(argv, stdin_path=None):
    started = time.perf_counter()
    with open(stdin_path or os.devnull, "rb") as stdin:
        status = subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return time.perf_counter() - started, status


def peak_mib(argv, stdin_path=None):
    with open(stdin_path or os.devnull, "rb") as stdin:
        timed = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], stdin=stdin, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    return int(timed.stderr.strip().splitlines()[-1]) / 1024


def size_mib(path):
    if os.path.isfile(path):
        return os.path.getsize(path) / 2**20
    return sum(os.path.getsize(os.path.join(path, name)) for name in os.listdir(path)) / 2**20


def measure(label, reports, ranks, argv, input_path, stdin_path=None):
    wall(argv, stdin_path)  # warm the page cache
    times, statuses = [], set()
    for _ in range(RUNS):
        seconds, status = wall(argv, stdin_path)
        times.append(seconds)
        statuses.add(status)
    row = {"label": label, "reports": reports, "ranks": ranks, "input_mib": size_mib(input_path),
           "wall": statistics.median(times), "peak": peak_mib(argv, stdin_path), "status": sorted(statuses)}
    print(f"bench: merge: {label}: {row['wall']:.3f} s", file=sys.stderr)
    return row


def section(rows):
    lines = ["| merge | reports | ranks | input (MiB) | wall (s) | peak RSS (MiB) | exit |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for row in rows:
        lines.append(f"| {row['label']} | {row['reports']:,} | {row['ranks']:,} | {row['input_mib']:.1f} | "
                     f"{row['wall']:.3f} | {row['peak']:.1f} | {', '.join(map(str, row['status']))} |")
    first = rows[0]
    verdict = "met" if first["wall"] < 3 else "missed"
    return f"""## Merge: the reports of 1,024 hosts

Reproduce this section alone: `bash bench/run.sh --merge` (issue 18). Measured {time.strftime('%Y-%m-%d')} on
{os.cpu_count()} CPUs.

`hangdoc merge` over the reports of a simulated job: two real reports (`hangdoc --json --no-ptrace` of the
inherited_mutex and healthy_pipe fixtures) copied by `tests/merge_cluster.py` into one report per host, with host
names, boot ids, pids and ranks varied and synthetic collective stacks on the ranks' main threads; one rank is the
culprit. Wall time is the median of {RUNS} runs after a warm-up, output discarded; peak RSS from one run under
`/usr/bin/time -f %M`. Exit 2: the merged verdict is the culprit's fork inheritance.

{chr(10).join(lines)}

- {HOSTS:,} reports, text, on {os.cpu_count()} CPUs: {first['wall']:.3f} s ({verdict}: under a few seconds, 3 s taken
  as the bound). Each report is parsed and reduced to its ranks before the next is read, so memory holds one
  parsed report at a time plus the ranks' stacks.
"""


def main():
    arguments = [argument for argument in sys.argv[1:] if argument != "--merge"]
    output = arguments[0] if arguments else os.path.join(ROOT, "BENCHMARKS.md")
    if not os.path.exists(os.path.join(FIXTURES, "inherited_mutex")):
        sys.exit(f"bench: no fixtures in {FIXTURES}: build hangdoc with its tests first")
    with tempfile.TemporaryDirectory() as workdir:
        real_report("inherited_mutex", os.path.join(workdir, "culprit.json"))
        real_report("healthy_pipe", os.path.join(workdir, "healthy.json"))
        one = make_cluster(workdir, "one", "--hosts", str(HOSTS), "--world-size", str(HOSTS + 2),
                           "--culprit-rank", "517")
        eight = make_cluster(workdir, "eight", "--hosts", str(HOSTS), "--ranks-per-host", "8",
                             "--world-size", str(8 * HOSTS), "--culprit-rank", "4133")
        three = make_cluster(workdir, "three", "--hosts", str(HOSTS), "--samples", "3", "--culprit-rank", "517")
        stream = os.path.join(workdir, "stream.json")
        with open(stream, "wb") as out:
            for name in sorted(os.listdir(one)):
                with open(os.path.join(one, name), "rb") as report:
                    out.write(report.read())
        rows = [
            measure("directory, text", HOSTS, HOSTS, [HANGDOC, "merge", one], one),
            measure("directory, --json", HOSTS, HOSTS, [HANGDOC, "merge", "--json", one], one),
            measure("directory, --dot", HOSTS, HOSTS, [HANGDOC, "merge", "--dot", one], one),
            measure("standard input (`-`), text", HOSTS, HOSTS, [HANGDOC, "merge", "-"], stream, stream),
            measure("8 ranks a host, text", HOSTS, 8 * HOSTS, [HANGDOC, "merge", eight], eight),
            measure("8 ranks a host, --json", HOSTS, 8 * HOSTS, [HANGDOC, "merge", "--json", eight], eight),
            measure("3 reports a host over time, text", 3 * HOSTS, HOSTS, [HANGDOC, "merge", three], three),
        ]
    bench.write_section(output, "Merge", section(rows))


if __name__ == "__main__":
    main()
