#!/usr/bin/env python3
"""Does hangdoc say the same thing every time on a loaded machine? (RELIABILITY.md, "The same verdict under load")

Starts certain deadlocks and healthy look-alikes (the scenario fixtures, some under timeout(1)), and busy processes
that overcommit the CPUs (two spinners per CPU by default), then diagnoses each target again and again, two
diagnoses back to back each round as a fleet scan or a person retrying would, and counts the verdicts that differ
from the expected one: the exit status, and for a hang its root-cause finding and subject.

    tests/stress/verdict_stability.py --hangdoc build/hangdoc --fixtures build/tests/scenarios --rounds 60

Every process it starts is in a process group of its own and is killed by that group when it ends, also on an
error or ^C. It exits 1 when any verdict changed.
"""
import argparse
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

# name, command (fixture names are resolved in --fixtures), expected exit status, expected root cause, and which
# pid of the ready line the root cause is about (None: not hung)
TARGETS = [
    ("lock_cycle", ["@lock_cycle"], 1, "lock-cycle"),
    ("inherited_mutex", ["@inherited_mutex"], 2, "inherited-lock"),
    ("abandoned_lock", ["@abandoned_lock"], 1, "abandoned-lock"),
    # a timeout longer than any run: when it fires, the job is gone and the verdict rightly changes
    ("timeout lock_cycle", ["timeout", "86400", "@lock_cycle"], 1, "lock-cycle"),
    ("tini lock_cycle", ["tini", "-s", "--", "@lock_cycle"], 1, "lock-cycle"),
    ("healthy_pipe", ["@healthy_pipe"], 0, None),
    ("shell pipeline", ["/bin/sh", "-c", "echo ready $$ >&3; exec 3>&-; "
                                         "while :; do echo line; sleep 0.05; done | cat >/dev/null"], 0, None),
    ("timeout working loop", ["timeout", "86400", "/bin/sh", "-c",
                              "echo ready $$ >&3; exec 3>&-; while :; do sleep 0.2; done"], 0, None),
]
# Not idle_pool: its producer only sleeps, so once its workers have waited for --stuck-after (half the pool's age,
# five minutes at most) timer-only-wakers rightly calls them likely hung, and a long run crosses that line.

READY_TIMEOUT_S = 20


def start_in_group(argv, ready_fd=None):
    pass_fds = ()
    if ready_fd is not None:
        os.dup2(ready_fd, 3, inheritable=True)
        pass_fds = (3,)
    process = subprocess.Popen(argv, start_new_session=True, pass_fds=pass_fds, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if ready_fd is not None:
        os.close(3)
    return process


def high_fd(fd):
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


def start_target(command, fixtures):
    argv = [os.path.join(fixtures, word[1:]) if word.startswith("@") else word for word in command]
    read_end, write_end = (high_fd(fd) for fd in os.pipe())  # clear of fd 3, which the child gets
    process = start_in_group(argv, write_end)
    os.close(write_end)
    deadline = time.monotonic() + READY_TIMEOUT_S
    line = b""
    os.set_blocking(read_end, False)
    while not line.endswith(b"\n") and time.monotonic() < deadline:
        try:
            chunk = os.read(read_end, 256)
        except BlockingIOError:
            time.sleep(0.02)
            continue
        if not chunk:
            break
        line += chunk
    os.close(read_end)
    words = line.decode().split()
    if not words or words[0] != "ready":
        kill_group(process)
        raise RuntimeError(f"{argv[0]} did not say it is ready: {line!r}")
    return process, [int(word) for word in words[1:]]


def kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def diagnose(hangdoc, pid):
    result = subprocess.run([hangdoc, "--json", str(pid)], capture_output=True, timeout=120)
    try:
        verdict = json.loads(result.stdout)["verdict"]
    except (ValueError, KeyError):
        verdict = {}
    return result.returncode, verdict.get("root_cause"), verdict.get("pid"), result.stdout


def end_on_sigterm(_signal, _frame):
    raise KeyboardInterrupt


def main():
    signal.signal(signal.SIGTERM, end_on_sigterm)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hangdoc", required=True)
    parser.add_argument("--fixtures", required=True, help="the directory of the built scenario fixtures")
    parser.add_argument("--rounds", type=int, default=60, help="rounds; each diagnoses every target twice")
    parser.add_argument("--spinners-per-cpu", type=int, default=2)
    parser.add_argument("--only", help="the targets whose name contains this")
    parser.add_argument("--changes-dir", help="where to keep the JSON report of each changed verdict")
    arguments = parser.parse_args()

    spinners, running = [], []
    changed = Counter()
    diagnosed = Counter()
    examples = {}
    started = time.monotonic()
    try:
        for _ in range((os.cpu_count() or 1) * arguments.spinners_per_cpu):
            spinners.append(start_in_group([sys.executable, "-c", "while True: pass"]))
        for name, command, status, root_cause in TARGETS:
            if arguments.only and arguments.only not in name:
                continue
            process, pids = start_target(command, arguments.fixtures)
            running.append((name, process, pids, status, root_cause))
        time.sleep(1)
        for _ in range(arguments.rounds):
            for name, process, pids, status, root_cause in running:
                for _look in range(2):  # back to back
                    got = diagnose(arguments.hangdoc, process.pid)
                    diagnosed[name] += 1
                    if got[0] != status or got[1] != root_cause:
                        changed[name] += 1
                        examples.setdefault(name, got[:3])
                        if arguments.changes_dir:
                            path = os.path.join(arguments.changes_dir, f"{name.replace(' ', '_')}.{changed[name]}.json")
                            with open(path, "wb") as report:
                                report.write(got[3])
    finally:
        for entry in running:
            kill_group(entry[1])
            for pid in entry[2]:  # the pids it reported, also those in a group of their own (tini's job)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for spinner in spinners:
            kill_group(spinner)
    elapsed = time.monotonic() - started
    print(f"{elapsed:.0f} s, {len(spinners)} spinners on {os.cpu_count()} CPUs")
    print("| target | expected | diagnoses | changed |")
    print("|---|---|---:|---:|")
    for name, _command, status, root_cause in TARGETS:
        print(f"| {name} | exit {status}{', ' + root_cause if root_cause else ''} | {diagnosed[name]} | "
              f"{changed[name]} |")
    print(f"| all | | {sum(diagnosed.values())} | {sum(changed.values())} |")
    for name, got in examples.items():
        print(f"first change on {name}: exit {got[0]}, root cause {got[1]}, pid {got[2]}")
    return 1 if sum(changed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
