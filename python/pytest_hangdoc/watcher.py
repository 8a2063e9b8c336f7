"""The watchdog of one pytest process: a process of its own, started by the plugin, outside the test's tree.

Why a process: a hung test may hold the GIL, or block its thread in native code where no signal handler runs; a
thread of the pytest process could then do nothing. This process needs neither: it keeps the clock itself and acts
at the limit whatever the pytest process is doing.

Why outside the tree: hangdoc diagnoses the pytest process and every descendant; the watcher and the hangdoc it
starts must not be among them. It forks once at start and its first half exits, so that the half that stays is
nobody's child in the test's tree (the nearest subreaper or init adopts it).

It reads JSON lines on standard input (the plugin writes them):
  {"op": "watch", "seq": N, "timeout": S, "begun": MONOTONIC, "since": BOOTTIME, "prefix": PATH, "nodeid": ID,
   "session": TOKEN, "token": TOKEN, "worker": ID}
      test N has begun: at `begun` on CLOCK_MONOTONIC (its limit counts from there), at `since` on CLOCK_BOOTTIME
      (the clock of the start times in /proc/<pid>/stat, to tell the test's processes from older ones)
  {"op": "reported", "seq": N}
      test N's failure is made: what is left (its teardown, a session fixture's) is no longer the grace's
  {"op": "done", "seq": N}
      test N has ended
and exits when standard input ends (the pytest process is gone). When a test runs past its limit it:
  1. runs hangdoc on the pytest process: the text report in PREFIX.txt, the snapshot in PREFIX.snapshot, the JSON
     report (`hangdoc analyze --json` of that snapshot: the same diagnosis) in PREFIX.json;
  2. writes PREFIX.outcome.json, what it did (the plugin reads it when the test ends);
  3. unless --keep: ends the processes the test started (descendants of the pytest process begun since the test
     began, but multiprocessing's forkserver and resource tracker; by pid, checked against their start time), then
     sends the pytest process --signal (0: none), whose handler fails the test where it blocks;
  4. when the plugin has not said "reported" (the failure is made) or "done" --grace seconds later (the test's
     thread blocked where no signal handler runs), says so on standard error and ends the pytest process itself,
     and what is left under it: under xdist the controller reports the worker's crash, with this diagnosis.

Standard library only: it runs with `python -I`, beside any test environment.
"""
import argparse
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
TERM_GRACE_S = 2.0  # SIGTERM, then SIGKILL for what is still there
RESCANS = 4  # rounds of ending the test's processes, for those started while the last were ended
HANGDOC_SLACK_S = 30.0  # past hangdoc's own --timeout, the watcher kills it


def say(text):
    """One message on the pytest process's terminal (standard error as it was when the plugin started us)."""
    try:
        sys.stderr.write(f"hangdoc: {text}\n")
        sys.stderr.flush()
    except OSError:
        pass


# ---- processes ------------------------------------------------------------------------------------------------

def read_stat(pid):
    """(ppid, start time in clock ticks, state) of `pid` (or of "PID/task/TID", a thread), or None when it is gone
    or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read(4096)
    except OSError:
        return None
    # the command name is between the first '(' and the last ')', and may hold anything
    fields = text[text.rfind(b")") + 2:].split()
    try:
        return int(fields[1]), int(fields[19]), fields[0].decode("ascii", "replace")
    except (IndexError, ValueError):
        return None


def threads_since(pid, since_ticks):
    """The threads of `pid` begun at or after `since_ticks` (the test's), and its main thread, which runs the
    test."""
    found = [pid]
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        if task.isdigit() and int(task) != pid:
            stat = read_stat(f"{pid}/task/{task}")
            if stat and stat[1] >= since_ticks:
                found.append(int(task))
    return found


def descendants_since(root, since_ticks):
    """{pid: start time} of the descendants of `root` begun at or after `since_ticks`: the test's processes. A
    process of the session begun before the test (a server a session fixture started) is not the test's."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = read_stat(int(entry))
            if stat:
                children.setdefault(stat[0], []).append((int(entry), stat[1]))
    found, queue = {}, [root]
    while queue:
        for pid, start in children.get(queue.pop(), []):
            if pid not in found:
                queue.append(pid)
                if start >= since_ticks:
                    found[pid] = start
    return found


class Process:
    """A process known by pid and start time; signals go to that process only, never to a later one with its pid."""

    def __init__(self, pid, start):
        self.pid, self.start = pid, start
        self.handle = None
        try:
            self.handle = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pass  # before Linux 5.3 or Python 3.9: the start time is checked before each signal instead

    def alive(self):
        stat = read_stat(self.pid)
        return stat is not None and stat[1] == self.start and stat[2] not in ("Z", "X")

    def signal(self, number):
        if not self.alive():
            return False
        try:
            if self.handle is not None and hasattr(signal, "pidfd_send_signal"):
                signal.pidfd_send_signal(self.handle, number)
            else:
                os.kill(self.pid, number)
            return True
        except OSError:
            return False

    def close(self):
        if self.handle is not None:
            os.close(self.handle)
            self.handle = None


def end_processes(processes):
    """SIGTERM, and SIGKILL for those still there TERM_GRACE_S later. Returns the pids signalled."""
    ended = [process.pid for process in processes if process.signal(signal.SIGTERM)]
    deadline = time.monotonic() + TERM_GRACE_S
    while any(process.alive() for process in processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    for process in processes:
        process.signal(signal.SIGKILL)
        process.close()
    return ended


# ---- the plugin's messages ------------------------------------------------------------------------------------

class Messages:
    """The JSON lines on standard input, read without ever blocking past a deadline."""

    def __init__(self):
        self.buffer = b""
        self.ended = False

    def next(self, timeout):
        """The next message, or None when `timeout` seconds (None: for ever) passed or input ended."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while not self.ended:
            if b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    return message
                continue
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([0], [], [], left)
            if not ready:
                return None
            chunk = os.read(0, 65536)
            if not chunk:
                self.ended = True
            self.buffer += chunk
        return None


# ---- one test past its limit ----------------------------------------------------------------------------------

def write_json(path, value):
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        json.dump(value, file, indent=1)
    os.replace(temporary, path)


def diagnose(options, watch):
    """Runs hangdoc on the pytest process's tree; the outcome's fields about it."""
    prefix = watch["prefix"]
    # a thread asleep without timeout for half the test's time, when only timers could wake it, is likely hung:
    # hangdoc's own default for a job (`hangdoc run`), with the test as the job
    stuck_after = max(1.0, min(float(watch["timeout"]) / 2, 60.0))
    command = [options.hangdoc, "--save", prefix + ".snapshot", "--stuck-after", f"{stuck_after:g}s",
               *options.hangdoc_arg, str(options.pid)]
    result = {"hangdoc_command": command, "report_text": prefix + ".txt", "report_json": prefix + ".json",
              "snapshot": prefix + ".snapshot"}
    # the report goes to a file, whole lines: not wrapped to the $COLUMNS an xdist worker gets from its controller
    environment = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    begun = time.monotonic()
    try:
        with open(prefix + ".txt", "wb") as text:
            run = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=text, stderr=subprocess.PIPE,
                                 env=environment, timeout=options.hangdoc_timeout + HANGDOC_SLACK_S)
        result["hangdoc_status"] = run.returncode
        result["hangdoc_stderr"] = run.stderr.decode("utf-8", "replace")[-4000:]
        with open(prefix + ".json", "wb") as report:
            subprocess.run([options.hangdoc, "analyze", "--json", prefix + ".snapshot"], stdin=subprocess.DEVNULL,
                           stdout=report, stderr=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        result["hangdoc_error"] = str(error)
    result["hangdoc_seconds"] = round(time.monotonic() - begun, 3)
    return result


def test_over(messages, watch):
    """Has the plugin said that the test ended (or is pytest gone)? Never blocks; once over, always over."""
    while not watch.get("over"):
        message = messages.next(0)
        if message is None:
            return messages.ended
        if message.get("op") == "done" and message.get("seq") == watch["seq"]:
            watch["over"] = True
    return True


def multiprocessing_helper(pid):
    """multiprocessing's forkserver or resource tracker: started by the first test that needs it and kept for the
    session, which restarts it only when it finds it dead; its children are the tests' and are ended."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read(4096)
    except OSError:
        return False
    return b"from multiprocessing.forkserver import main" in words or \
        b"from multiprocessing.resource_tracker import main" in words


def the_tests_processes(options, since_ticks):
    """{pid: start time} of the descendants of the pytest process begun since the test began, but multiprocessing's
    helpers."""
    return {pid: start for pid, start in descendants_since(options.pid, since_ticks).items()
            if not multiprocessing_helper(pid)}


def end_the_tests_processes(options, since_ticks, messages, watch):
    """Ends the test's processes, and those they start meanwhile (a pool replaces the workers it loses): a few
    rounds, until none is new. A round stops when the test is over: ending its processes may let it end, and the
    next test's processes are begun since this one began too. The plugin says "done" before the next test starts,
    so a scan that saw the next test's processes is always followed by a look that sees "done". The pids ended."""
    ended, seen = [], set()
    for _ in range(RESCANS):
        found = {pid: start for pid, start in the_tests_processes(options, since_ticks).items()
                 if (pid, start) not in seen}
        if not found or test_over(messages, watch):
            break
        seen.update(found.items())
        ended += end_processes([Process(pid, start) for pid, start in sorted(found.items())])
    return ended


def fire(options, watch, messages, pytest_process):
    nodeid = watch.get("nodeid", "?")
    prefix = watch["prefix"]
    say(f"{nodeid} has run longer than {watch['timeout']:g} s: diagnosing process {options.pid} and its "
        "descendants")
    outcome = {"session": watch.get("session"), "token": watch.get("token"), "worker": watch.get("worker"),
               "seq": watch["seq"], "nodeid": nodeid, "timeout_s": watch["timeout"], "keep": options.keep}
    outcome.update(diagnose(options, watch))
    # the test may have ended while hangdoc looked: then it was slow, not hung, and nothing is ended. Asked after
    # the scan, which then cannot hold a later test's processes (see end_the_tests_processes)
    since_ticks = int(watch["since"] * CLOCK_TICKS)
    outcome["test_processes"] = sorted(the_tests_processes(options, since_ticks))
    outcome["test_threads"] = threads_since(options.pid, since_ticks)
    if test_over(messages, watch):
        outcome["finished_meanwhile"] = True
        write_json(prefix + ".outcome.json", outcome)
        return
    outcome["interrupted"] = not options.keep and options.signal > 0
    write_json(prefix + ".outcome.json", outcome)
    if options.keep:
        say(f"{nodeid}: left as it is for you (--hangdoc-keep): pytest {options.pid}, the test's processes "
            f"{outcome['test_processes'] or 'none'}; the report is {prefix}.txt")
        return
    outcome["ended"] = end_the_tests_processes(options, since_ticks, messages, watch)
    write_json(prefix + ".outcome.json", outcome)
    # the handler fails the test where it blocks; then the plugin says "reported" (or "done"). Not when the test
    # ended meanwhile (its processes ended, it went on): the signal would land in what pytest does next
    if options.signal > 0 and not test_over(messages, watch):
        pytest_process.signal(options.signal)
    deadline = time.monotonic() + options.grace
    while time.monotonic() < deadline and not watch.get("over"):
        message = messages.next(deadline - time.monotonic())
        if message is None and messages.ended:
            return
        if message and message.get("op") in ("done", "reported") and message.get("seq") == watch["seq"]:
            return
    if not watch.get("over"):
        end_pytest(options, watch, outcome, pytest_process)


def end_pytest(options, watch, outcome, pytest_process):
    """The test's thread did not come back: the pytest process is ended, and every process still under it (a
    session's server, a pool's new workers), which nobody would end after it."""
    prefix = watch["prefix"]
    outcome["pytest_ended"] = True
    write_json(prefix + ".outcome.json", outcome)
    say(f"{watch.get('nodeid', '?')}: the test's thread did not come back {options.grace:g} s after signal "
        f"{options.signal} (it blocks where no signal handler runs, or another thread holds the GIL): ending the "
        f"pytest process {options.pid} and what is left under it; hangdoc's report is {prefix}.txt")
    try:
        with open(prefix + ".txt", encoding="utf-8", errors="replace") as report:
            head = report.read(65536).split("\n\n", 1)[0]
        sys.stderr.write("".join(f"{line}\n" for line in head.splitlines() if line.startswith(("verdict:", "chain:"))))
        sys.stderr.flush()
    except OSError:
        pass
    rest = [Process(pid, start) for pid, start in sorted(descendants_since(options.pid, 0).items())]
    pytest_process.signal(signal.SIGKILL)
    end_processes(rest)


def main(argv):
    parser = argparse.ArgumentParser(prog="pytest_hangdoc.watcher")
    parser.add_argument("--hangdoc", required=True)
    parser.add_argument("--hangdoc-arg", action="append", default=[])
    parser.add_argument("--hangdoc-timeout", type=float, default=30.0)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--signal", type=int, required=True)
    parser.add_argument("--grace", type=float, default=10.0)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--remove", metavar="DIR", help="a directory of reports to remove when pytest has ended")
    options = parser.parse_args(argv)
    stat = read_stat(options.pid)
    if stat is None:
        return 1
    if os.fork():
        os._exit(0)  # the plugin reaps this half; the other is adopted outside the test's tree
    # Ctrl-C in the terminal is for pytest; the watcher ends when pytest does (its input ends)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    pytest_process = Process(options.pid, stat[1])
    os.write(1, f"ready {os.getpid()}\n".encode())
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    messages = Messages()
    watch = None
    while not messages.ended:
        timeout = None if watch is None else watch["deadline"] - time.monotonic()
        message = messages.next(timeout)
        if message is None:
            if watch is not None and time.monotonic() >= watch["deadline"]:
                try:
                    fire(options, watch, messages, pytest_process)
                except OSError as error:  # the reports' directory gone with a pytest that ended meanwhile
                    say(f"{watch.get('nodeid', '?')}: the diagnosis could not be kept: {error}")
                watch = None
            continue
        if message.get("op") == "watch":
            begun = float(message.get("begun", time.monotonic()))
            watch = dict(message, deadline=begun + float(message["timeout"]))
        elif message.get("op") == "done" and watch is not None and message.get("seq") == watch["seq"]:
            watch = None
    if options.remove:
        shutil.rmtree(options.remove, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
