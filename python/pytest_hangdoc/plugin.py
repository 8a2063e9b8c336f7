"""The pytest side of hangdoc's plugin: the limit of each test, the watchdog's messages, the failure report.

A test runs under a limit from --hangdoc-timeout, the ini option hangdoc_timeout, or its own
@pytest.mark.hangdoc(timeout=...). Its whole protocol counts (setup, call, teardown), as with pytest-timeout. The
limit is kept by the watcher (watcher.py), a process of its own; this side tells it when a test begins and ends,
and, when the watcher has acted, turns what it did into the test's failure: the verdict, the chain and the fix
first, hangdoc's full report after, the verdict as JUnit properties, the reports as files under --hangdoc-dir.

Under pytest-xdist every worker watches its own tests with its own watcher; the controller hands the workers one
directory for the reports and, when a worker had to be ended (its test blocked where no signal handler runs),
puts the diagnosis into the crash report xdist makes for that test.
"""
import atexit
import ctypes
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zlib

import pytest

from .durations import format_duration, parse_duration
from .verdict import Verdict, in_short

__all__ = ["pytest_addoption", "pytest_configure"]

# The signal the watcher sends the pytest process to fail the test where it blocks. SIGALRM is pytest-timeout's and
# tests' own (signal.alarm); SIGUSR1 is what `hangdoc run` listens to.
INTERRUPT_SIGNAL = signal.SIGUSR2


def _quiet_child_handler():
    """Once the watcher has ended a hung test's processes, a library's SIGCHLD handler would take their deaths for
    a failure of its own and raise wherever Python runs next: PyTorch's DataLoader raises "DataLoader worker is
    killed by signal" from inside pytest's reporting (an INTERNALERROR that ends the session without its JUnit
    file), since a worker the watcher had to SIGKILL after the grace dies late. The test is failed by hangdoc's
    report instead; SIGCHLD goes back to its default, and a later DataLoader installs its handler again."""
    try:
        if callable(signal.getsignal(signal.SIGCHLD)):
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    except (ValueError, OSError):
        pass  # not the main thread, or no such signal here
PR_SET_PTRACER = 0x59616D61
WATCHER_READY_TIMEOUT_S = 30.0
WATCHER_EXIT_WAIT_S = 2.0  # at the session's end, for the watcher to see its input end
DEFAULT_GRACE = "10s"


def pytest_addoption(parser):
    group = parser.getgroup("hangdoc", "hangdoc: diagnose the tree of a test that runs longer than its limit")
    group.addoption("--hangdoc-timeout", metavar="DUR", default=None,
                    help="when a test runs longer than DUR (30, 30s, 2m; 0: no limit), run hangdoc on the test "
                         "process and every descendant, fail the test with its verdict, end the test's processes "
                         "(ini: hangdoc_timeout; per test: @pytest.mark.hangdoc(timeout=DUR))")
    group.addoption("--hangdoc-dir", metavar="DIR", default=None,
                    help="keep each diagnosis in DIR: NODEID.txt, NODEID.json (hangdoc's JSON report), "
                         "NODEID.snapshot (hangdoc analyze) (ini: hangdoc_dir)")
    group.addoption("--hangdoc-keep", action="store_true", default=None,
                    help="diagnose, then leave the hung tree as it is for a person (the session waits with it)")
    group.addoption("--hangdoc-grace", metavar="DUR", default=None,
                    help=f"how long the interrupted test may take to end before the pytest process (the xdist "
                         f"worker) is ended itself (default {DEFAULT_GRACE}; ini: hangdoc_grace)")
    group.addoption("--hangdoc-bin", metavar="PATH", default=None,
                    help="the hangdoc to run (default: $HANGDOC_BIN, hangdoc on PATH, the checkout's build)")
    parser.addini("hangdoc_timeout", "hangdoc's limit for each test (see --hangdoc-timeout)", default=None)
    parser.addini("hangdoc_dir", "where hangdoc's reports are kept (see --hangdoc-dir)", default=None)
    parser.addini("hangdoc_grace", "see --hangdoc-grace", default=None)


def pytest_configure(config):
    config.addinivalue_line("markers", "hangdoc(timeout=DUR): this test's hangdoc limit (0: none), over "
                                       "--hangdoc-timeout")
    if config.pluginmanager.has_plugin("hangdoc-watching"):
        return
    watching = Watching(config)
    config.pluginmanager.register(watching, "hangdoc-watching")
    if config.pluginmanager.has_plugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(XdistController(watching), "hangdoc-xdist-controller")


def _setting(config, option, ini):
    value = config.getoption(option)
    if value is None:
        value = config.getini(ini)
    return value or None


def _kept_directory(config):
    """--hangdoc-dir as an absolute path (from where pytest was started), or the ini's hangdoc_dir (from the ini
    file's directory); None when neither is given."""
    given = config.getoption("--hangdoc-dir")
    if given:
        return os.path.abspath(os.path.join(str(config.invocation_params.dir), given))
    given = config.getini("hangdoc_dir")
    if given:
        base = getattr(config, "inipath", None)
        return os.path.abspath(os.path.join(str(base.parent) if base else str(config.invocation_params.dir), given))
    return None


def _report_name(nodeid):
    """A file name for a test's reports: its node id made safe, with a checksum of the whole id so that two ids that
    read alike do not share one."""
    digest = f"{zlib.crc32(nodeid.encode('utf-8', 'surrogatepass')):08x}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid)[:120].strip("._") + "." + digest


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as file:
            value = json.load(file)
        return value if isinstance(value, dict) else None
    except (OSError, ValueError):
        return None


def _ints(value):
    return [number for number in value if isinstance(number, int)] if isinstance(value, list) else []


def _read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return ""


def _find_hangdoc(config):
    chosen = config.getoption("--hangdoc-bin") or os.environ.get("HANGDOC_BIN")
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    found = shutil.which("hangdoc")
    if found:
        return found
    # a checkout: python/pytest_hangdoc/ beside build/
    built = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build",
                         "hangdoc")
    return built if os.access(built, os.X_OK) else None


def _yama_scope():
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as scope:
            return int(scope.read().strip())
    except (OSError, ValueError):
        return None  # no Yama: the same user may trace


_ptracer = {"pid": None, "prctl": None}


def _declare_ptracer_in_child():
    # a process forked by the test (a multiprocessing or DataLoader worker) starts without the declaration
    if _ptracer["pid"] is not None:
        _ptracer["prctl"](PR_SET_PTRACER, _ptracer["pid"], 0, 0, 0)


def _allow_tracing_by(pid):
    """Under Yama ptrace_scope 1 only an ancestor may trace: the watcher, and the hangdoc it starts, are none of the
    pytest process's. PR_SET_PTRACER names the watcher as this process's tracer, and that of every process forked
    from it. Returns what the header says about it."""
    scope = _yama_scope()
    if scope is None or scope == 0:
        return None
    if scope >= 2:
        return (f"Yama ptrace_scope is {scope}: hangdoc reads /proc only (native stacks, lock owners and the Python "
                "view need CAP_SYS_PTRACE" + (")" if scope == 2 else ", and scope 3 refuses even that)"))
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PTRACER, pid, 0, 0, 0) != 0:
            return f"Yama ptrace_scope is 1 and PR_SET_PTRACER failed ({os.strerror(ctypes.get_errno())})"
    except (OSError, AttributeError) as error:
        return f"Yama ptrace_scope is 1 and PR_SET_PTRACER could not be called ({error})"
    first = _ptracer["prctl"] is None
    _ptracer.update(pid=pid, prctl=libc.prctl)
    if first and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_declare_ptracer_in_child)
    return ("Yama ptrace_scope is 1: PR_SET_PTRACER lets the watcher's hangdoc trace the pytest process and the "
            "processes it forks; a program the test executes (subprocess) is read from /proc only")


class _Test:
    """The test being watched."""

    def __init__(self, seq, item, prefix, timeout):
        self.seq, self.item, self.prefix, self.timeout = seq, item, prefix, timeout
        self.token = uuid.uuid4().hex  # this run of the test's: an outcome of an earlier run is not its
        self.reported = False  # its failure report is made (one phase's)
        self.interrupted = False
        self.threads_before = set(threading.enumerate())


class Watching:
    """The tests of one pytest process (a worker's, under xdist) and their watcher."""

    def __init__(self, config):
        self.config = config
        self.session_token = uuid.uuid4().hex
        workerinput = getattr(config, "workerinput", None) or {}
        self.session_token = workerinput.get("hangdoc_session", self.session_token)
        try:
            timeout = _setting(config, "--hangdoc-timeout", "hangdoc_timeout")
            self.timeout = parse_duration(timeout) if timeout is not None else 0.0
            self.grace = parse_duration(_setting(config, "--hangdoc-grace", "hangdoc_grace") or DEFAULT_GRACE)
        except ValueError as error:
            raise pytest.UsageError(f"hangdoc: {error}")
        self.keep = bool(config.getoption("--hangdoc-keep"))
        # where the reports go: --hangdoc-dir (kept), the controller's directory (a worker's), or one made here
        # and removed at the end (their text is in the failure report)
        # (resolved once: a test that changes directory does not move them)
        self.kept_directory = _kept_directory(config)
        if workerinput.get("hangdoc_dir"):
            self.kept_directory = None
            self.shared_directory = workerinput["hangdoc_dir"]
            self.keeps_reports = bool(workerinput.get("hangdoc_dir_kept"))
        else:
            self.shared_directory = None
            self.keeps_reports = self.kept_directory is not None
        self.worker = workerinput.get("workerid")
        self.own_directory = None
        self.hangdoc = _find_hangdoc(config)
        self.watcher = None  # (pid, the pipe to it), once started
        self.watcher_failed = None
        self.ptracer_note = None
        self.seq = 0
        self.current = None
        self.in_phase = False  # in setup, call or teardown of the current test
        self.stuck_threads = []  # threads of ended tests still blocked: the interpreter must not wait for them
        self.exitstatus = None
        if self.timeout and not self.hangdoc:
            raise pytest.UsageError("hangdoc: --hangdoc-timeout needs hangdoc: none on PATH, none in "
                                    "$HANGDOC_BIN, and --hangdoc-bin not given")
        self.previous_handler = None  # INTERRUPT_SIGNAL's, replaced while a watcher runs

    # ---- where the reports go --------------------------------------------------------------------------------

    @property
    def directory(self):
        if self.kept_directory:
            os.makedirs(self.kept_directory, exist_ok=True)
            return self.kept_directory
        if self.shared_directory:
            return self.shared_directory
        if self.own_directory is None:
            self.own_directory = tempfile.mkdtemp(prefix="hangdoc-pytest.")
        return self.own_directory

    def prefix(self, nodeid):
        return os.path.join(self.directory, _report_name(nodeid))

    # ---- the watcher -----------------------------------------------------------------------------------------

    def _start_watcher(self):
        # the interruption needs a handler, which only the main thread can install: without one, the watcher sends
        # nothing (the signal's default action would end pytest) and ends pytest after the grace
        interrupts = threading.current_thread() is threading.main_thread()
        command = [sys.executable, "-I", os.path.join(os.path.dirname(os.path.abspath(__file__)), "watcher.py"),
                   "--hangdoc", self.hangdoc, "--pid", str(os.getpid()),
                   "--signal", str(int(INTERRUPT_SIGNAL) if interrupts else 0), "--grace", str(self.grace)]
        if self.keep:
            command.append("--keep")
        if not self.kept_directory and not self.shared_directory:
            # made here for this session: the watcher removes it when pytest is gone, not before it is done with it
            command += ["--remove", self.directory]
        capture = self.config.pluginmanager.getplugin("capturemanager")
        try:
            # the watcher's messages go to the terminal, not into a test's captured output
            if capture is not None:
                with capture.global_and_fixture_disabled():
                    first_half = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            else:
                first_half = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as error:
            self.watcher_failed = f"the watcher could not start: {error}"
            return
        try:
            first_half.wait(timeout=WATCHER_READY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            first_half.kill()
            first_half.wait()
        line = b""
        deadline = time.monotonic() + WATCHER_READY_TIMEOUT_S
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([first_half.stdout], [], [], deadline - time.monotonic())
            chunk = os.read(first_half.stdout.fileno(), 64) if ready else b""
            if not chunk:
                break
            line += chunk
        first_half.stdout.close()
        match = re.fullmatch(rb"ready (\d+)\n", line)
        if not match:
            first_half.stdin.close()
            self.watcher_failed = f"the watcher did not start (exit {first_half.returncode})"
            return
        pid = int(match.group(1))
        self.watcher = (pid, first_half.stdin)
        if interrupts:
            self.previous_handler = signal.signal(INTERRUPT_SIGNAL, self._on_interrupt)
        self.ptracer_note = _allow_tracing_by(pid)
        if hasattr(os, "register_at_fork"):
            # a forked child must not keep the watcher's pipe open: the watcher ends when pytest's end closes it
            os.register_at_fork(after_in_child=self._close_pipe_in_child)

    def _close_pipe_in_child(self):
        # /dev/null in its place rather than a closed number that a later open() of the child would reuse
        if self.watcher is not None:
            try:
                null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
                os.dup2(null, self.watcher[1].fileno(), inheritable=False)
                os.close(null)
            except (OSError, ValueError):
                pass

    def _tell(self, message):
        if self.watcher is None:
            return False
        try:
            self.watcher[1].write((json.dumps(message) + "\n").encode())
            self.watcher[1].flush()
            return True
        except (OSError, ValueError):
            return False

    # ---- a test's limit --------------------------------------------------------------------------------------

    def timeout_for(self, item):
        marker = item.get_closest_marker("hangdoc")
        if marker is not None and ("timeout" in marker.kwargs or marker.args):
            value = marker.kwargs.get("timeout", marker.args[0] if marker.args else None)
            try:
                return parse_duration(value if value is not None else 0)
            except ValueError as error:
                raise pytest.UsageError(f"hangdoc: {item.nodeid}: @pytest.mark.hangdoc: {error}")
        return self.timeout

    def pytest_collection_modifyitems(self, session, config, items):
        # a marker's bad limit stops the session before any test runs, not in the middle
        for item in items:
            self.timeout_for(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        timeout = self.timeout_for(item)
        if timeout > 0 and self.watcher is None and self.watcher_failed is None:
            if not self.hangdoc:
                self.watcher_failed = "no hangdoc to run (--hangdoc-bin, $HANGDOC_BIN or PATH)"
            else:
                self._start_watcher()
        if timeout <= 0 or self.watcher is None:
            yield
            return
        self.seq += 1
        test = _Test(self.seq, item, self.prefix(item.nodeid), timeout)
        self.current = test
        self._tell({"op": "watch", "seq": test.seq, "timeout": timeout, "begun": time.monotonic(),
                    "since": time.clock_gettime(time.CLOCK_BOOTTIME), "prefix": test.prefix,
                    "nodeid": item.nodeid, "session": self.session_token, "token": test.token,
                    "worker": self.worker})
        try:
            yield
        finally:
            self._tell({"op": "done", "seq": test.seq})
            self.current = None
            if test.reported:
                self.stuck_threads += [thread for thread in threading.enumerate()
                                       if thread not in test.threads_before and not thread.daemon]

    def _outcome(self, test):
        """What the watcher did about `test`, once it acted; None before, or when the test ended meanwhile."""
        outcome = _read_json(test.prefix + ".outcome.json")
        if not outcome or outcome.get("token") != test.token:
            return None
        if outcome.get("finished_meanwhile") or "test_processes" not in outcome:
            return None
        return outcome

    # The interruption fails the test only while the test's own code runs (a phase): arriving between phases, in
    # pytest's making of a report, it would be pytest's internal error. The failure is made in any case
    # (pytest_runtest_makereport), from the outcome the watcher wrote before it sent the signal.
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        yield from self._phase()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield from self._phase()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):
        yield from self._phase()

    def _phase(self):
        self.in_phase = True
        try:
            yield
        finally:
            self.in_phase = False

    def _on_interrupt(self, signum, frame):
        test = self.current
        if (test is not None and self.in_phase and not test.interrupted and not self.keep
                and self._outcome(test) is not None):
            test.interrupted = True
            _quiet_child_handler()
            raise pytest.fail.Exception(f"hangdoc: ran longer than {format_duration(test.timeout)}", pytrace=False)
        previous = self.previous_handler
        if callable(previous):
            previous(signum, frame)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        result = yield
        test = self.current
        if test is None or test.item is not item or test.reported:
            return
        outcome = self._outcome(test)
        if outcome is None:
            return
        test.reported = True
        report = result.get_result()
        failure = Failure(outcome, item.nodeid, kept=self.keeps_reports)
        report.outcome = "failed"
        report.longrepr = failure.longrepr(item.location)
        properties = failure.safe_properties()
        item.user_properties.extend(properties)
        report.user_properties.extend(properties)
        if self.keeps_reports:
            # JUnit's system-out (junit_logging=system-out) takes the test's captured output: Jenkins and GitLab
            # show the report attached
            attachment = f"[[ATTACHMENT|{outcome.get('report_json')}]]\n"
            item.add_report_section(call.when, "stdout", attachment)
            report.sections.append((f"Captured stdout {call.when}", attachment))
        # the failure is made: what is left of the test (its teardown) is not the watcher's grace
        self._tell({"op": "reported", "seq": test.seq})

    # ---- the session -----------------------------------------------------------------------------------------

    def pytest_report_header(self, config):
        if not self.timeout:
            return None
        lines = [f"hangdoc: {format_duration(self.timeout)} per test, then {self.hangdoc} on the test's tree"
                 + (" (kept for you: --hangdoc-keep)" if self.keep else "")]
        scope = _yama_scope()
        if scope == 1:
            lines.append("hangdoc: Yama ptrace_scope is 1: the watcher is declared the pytest process's tracer "
                         "(PR_SET_PTRACER) when it starts")
        elif scope is not None and scope >= 2:
            lines.append(f"hangdoc: Yama ptrace_scope is {scope}: without CAP_SYS_PTRACE hangdoc reads /proc only")
        return lines

    def pytest_terminal_summary(self, terminalreporter):
        if self.watcher_failed:
            terminalreporter.write_line(f"hangdoc: no test was watched: {self.watcher_failed}", yellow=True)
        if self.ptracer_note and "failed" in self.ptracer_note:
            terminalreporter.write_line(f"hangdoc: {self.ptracer_note}", yellow=True)

    def pytest_sessionfinish(self, session, exitstatus):
        self.exitstatus = int(exitstatus)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config):
        watcher_gone = True
        if self.watcher is not None:
            try:
                self.watcher[1].close()  # its input ends: it exits, and removes a directory made for the session
            except OSError:
                pass
            watcher_gone = _gone_within(self.watcher[0], WATCHER_EXIT_WAIT_S)
        elif self.own_directory and not self.shared_directory:
            shutil.rmtree(self.own_directory, ignore_errors=True)
        if self.previous_handler is not None and threading.current_thread() is threading.main_thread():
            # a watcher still busy (a diagnosis under way) might signal still: ignored then, not the default action
            signal.signal(INTERRUPT_SIGNAL, self.previous_handler if watcher_gone else signal.SIG_IGN)
        stuck = [thread for thread in self.stuck_threads if thread.is_alive()]
        if stuck and self.exitstatus is not None and _pytest_is_the_program(config):
            # the interpreter would join them at exit, for ever: what they wait on was diagnosed and reported
            sys.stdout.flush()
            sys.stderr.write(f"hangdoc: {len(stuck)} thread(s) of a test that hangdoc diagnosed are still blocked "
                             f"({', '.join(thread.name for thread in stuck[:5])}): exiting without waiting for "
                             "them\n")
            sys.stderr.flush()
            try:
                atexit._run_exitfuncs()  # what the program registered (coverage's data, logging's flush)
            finally:
                os._exit(self.exitstatus)


def _gone_within(pid, seconds):
    """Has process `pid` (the watcher, no child of ours) exited within `seconds`?"""
    deadline = time.monotonic() + seconds
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _pytest_is_the_program(config):
    """Is this process pytest's own (its command line, or an xdist worker), not a program that runs pytest.main()
    inside (an IDE's runner), which must not be ended with it?"""
    if hasattr(config, "workerinput"):
        return True
    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    return program in ("pytest", "py.test", "__main__.py") or program.startswith(("pytest-", "py.test-"))


class Failure:
    """A test's failure made of what the watcher did (`outcome`) and hangdoc's reports."""

    def __init__(self, outcome, nodeid, kept, crashed_worker=None):
        self.outcome, self.nodeid, self.kept, self.crashed_worker = outcome, nodeid, kept, crashed_worker
        self.text = _read_text(str(outcome.get("report_text", "")))
        self.verdict = Verdict(_read_json(str(outcome.get("report_json", ""))), _ints(outcome.get("test_threads")),
                               _ints(outcome.get("test_processes")))

    def headline(self):
        limit = format_duration(float(self.outcome.get("timeout_s") or 0))
        return f"hangdoc: ran longer than {limit}: {self.verdict.headline}"

    def body(self):
        lines = [self.headline(), ""]
        if self.text.strip():
            lines += [in_short(self.text, self.verdict), ""]
        else:
            error = self.outcome.get("hangdoc_error") or (self.outcome.get("hangdoc_stderr") or "").strip()
            lines += [f"hangdoc gave no report (exit {self.outcome.get('hangdoc_status')}): {error}", ""]
        lines.append(self.what_was_done())
        if self.kept:
            lines.append(f"reports: {self.outcome.get('report_text')}, {self.outcome.get('report_json')}, "
                         f"{self.outcome.get('snapshot')} (hangdoc analyze)")
        if self.text.strip():
            lines += ["", "hangdoc's report:", "", self.text.rstrip("\n")]
        return "\n".join(lines)

    def what_was_done(self):
        processes = _ints(self.outcome.get("test_processes"))
        if self.outcome.get("keep"):
            return (f"left as it is (--hangdoc-keep): the test's processes {processes or 'none'} were not "
                    "ended")
        # the processes the watcher found; it ends them before it interrupts the test, which may then end first
        text = (f"ended the test's processes {', '.join(map(str, processes))} (SIGTERM, then SIGKILL)" if processes
                else "the test started no process of its own")
        if self.crashed_worker:
            text += (f"; the test's thread did not come back from the interruption within the grace, so hangdoc "
                     f"ended worker {self.crashed_worker} too (xdist starts another)")
        return text + "."

    def properties(self):
        properties = self.verdict.properties()
        properties.append(("hangdoc_timeout", format_duration(float(self.outcome.get("timeout_s") or 0))))
        if self.kept:
            properties.append(("hangdoc_report", self.outcome.get("report_json")))
        return properties

    def safe_properties(self):
        try:
            return self.properties()
        except Exception:  # a report that says something this version does not expect: the text says it
            return [("hangdoc", "hangdoc's report could not be read: see the failure's text")]

    def longrepr(self, location):
        """The report pytest shows and JUnit keeps: its message the headline, its text the whole body."""
        try:
            body = self.body()
        except Exception:  # a report that says something this version does not expect
            body = (f"hangdoc: ran longer than its limit; its report could not be read here: "
                    f"{self.outcome.get('report_text')}\n\n{self.text}")
        try:
            from _pytest._code.code import ExceptionChainRepr, ReprEntry, ReprFileLocation, ReprTraceback
            path, lineno = location[0], (location[1] or 0) + 1
            crash = ReprFileLocation(path, lineno, body.split("\n", 1)[0])
            entry = ReprEntry(lines=body.splitlines(), reprfuncargs=None, reprlocals=None, reprfileloc=crash,
                              style="value")
            return ExceptionChainRepr([(ReprTraceback([entry], None, "value"), crash, None)])
        except Exception:  # another pytest's internals: the text alone
            return body


class XdistController:
    """The controller of a pytest-xdist session: one directory and session for every worker, and the diagnosis in
    the crash report of a worker the watcher had to end."""

    def __init__(self, watching):
        self.watching = watching

    def pytest_configure_node(self, node):
        node.workerinput["hangdoc_dir"] = self.watching.directory
        node.workerinput["hangdoc_dir_kept"] = self.watching.keeps_reports
        node.workerinput["hangdoc_session"] = self.watching.session_token

    def pytest_handlecrashitem(self, crashitem, report, sched):
        outcome = _read_json(self.watching.prefix(crashitem) + ".outcome.json")
        worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "?")
        # this session's, about the worker that crashed, which the watcher ended
        if not outcome or outcome.get("session") != self.watching.session_token or not outcome.get("pytest_ended") \
                or outcome.get("worker") != worker:
            return
        failure = Failure(outcome, crashitem, kept=self.watching.keeps_reports, crashed_worker=worker)
        report.when = "call"
        report.longrepr = failure.longrepr((report.location[0], None))
        report.user_properties = list(report.user_properties or []) + failure.safe_properties()
        if self.watching.keeps_reports:
            report.sections.append(("Captured stdout call", f"[[ATTACHMENT|{outcome.get('report_json')}]]\n"))
        report.hangdoc_crash = True

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report):
        # JUnit writes a test's properties with its teardown report, which a crashed worker never sends
        if getattr(report, "hangdoc_crash", False):
            from _pytest.reports import TestReport
            teardown = TestReport(report.nodeid, report.location, report.keywords, "passed", None, "teardown",
                                  sections=list(report.sections), user_properties=report.user_properties)
            for name in ("node", "worker_id", "item_index"):
                if hasattr(report, name):
                    setattr(teardown, name, getattr(report, name))
            self.watching.config.hook.pytest_runtest_logreport(report=teardown)
