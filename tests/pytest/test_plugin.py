#!/usr/bin/python3
"""hangdoc's pytest plugin (python/pytest_hangdoc) in real pytest runs: pytest started as a subprocess on the small
test files of tests/pytest/cases/, each of which really hangs (or does not), with Debian's pytest and pytest-xdist.

Each run works in a directory of its own (the cases and the plugin copied there, so that nothing is written into
the checkout), in a process group of its own. The cases write the pid of every process they start to
$HANGDOC_CASE_PIDS; after the run every one of them, and every process of the group, must be gone, and whatever is
left is ended by its pid or by the group, also when a test fails.

Run by meson (tests/meson.build) with HANGDOC_BIN and HANGDOC_SOURCE_ROOT set; unittest, the standard library's.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ElementTree

sys.dont_write_bytecode = True  # VerdictTest imports the plugin from the checkout: no __pycache__ left there

SOURCE = os.environ.get("HANGDOC_SOURCE_ROOT", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
HANGDOC = os.environ.get("HANGDOC_BIN", os.path.join(SOURCE, "build", "hangdoc"))
CASES = os.path.join(SOURCE, "tests", "pytest", "cases")
PYTHON = "/usr/bin/python3"  # Debian's, with python3-pytest, python3-pytest-xdist and python3-torch
RUN_LIMIT_S = 240  # one pytest run, hangs included; past it the run is ended and the test fails
LEFT_BEHIND_WAIT_S = 10  # what pytest ended may take this long to be reaped and gone


def read_file(path):
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError:
        return b""


def start_time(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return None if fields[0] in (b"Z", b"X") else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def group_members(group):
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                if int(fields[2]) == group and fields[0] not in (b"Z", b"X"):
                    members.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return members


class Run:
    """One pytest run over `cases` with `options`; its outcome, output, JUnit XML and reports."""

    def __init__(self, cases, options, ini=None, as_nobody=False, by_entry_point=False, in_sid=False,
                 without_plugin=False, wrapper=()):
        self.directory = tempfile.mkdtemp(prefix="hangdoc-pytest-test.")
        os.chmod(self.directory, 0o755)
        for case in ["conftest.py", *cases]:
            shutil.copy(os.path.join(CASES, case), self.directory)
        shutil.copytree(os.path.join(SOURCE, "python", "pytest_hangdoc"),
                        os.path.join(self.directory, "lib", "pytest_hangdoc"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        if by_entry_point:
            # as meson installs it: the dist-info whose entry point pytest loads the plugin by, no -p
            info = os.path.join(self.directory, "lib", "pytest_hangdoc-0.dist-info")
            os.mkdir(info)
            shutil.copy(os.path.join(SOURCE, "python", "entry_points.txt"), info)
            with open(os.path.join(SOURCE, "python", "METADATA.in")) as template, \
                    open(os.path.join(info, "METADATA"), "w") as metadata:
                metadata.write(template.read().replace("@VERSION@", "0"))
        self.junit = os.path.join(self.directory, "junit.xml")
        self.reports = os.path.join(self.directory, "reports")
        self.pids_file = os.path.join(self.directory, "pids")
        with open(os.path.join(self.directory, "pytest.ini"), "w") as configuration:
            configuration.write("[pytest]\n" + "".join(f"{name} = {value}\n" for name, value in (ini or {}).items()))
        hangdoc = HANGDOC
        if in_sid:
            # the chroot sees this machine's /tmp (tests/modern/in_sid): hangdoc goes there with the cases, and runs
            # on the chroot's libraries
            hangdoc = os.path.join(self.directory, "hangdoc")
            shutil.copy(HANGDOC, hangdoc)
        environment = dict(os.environ, PYTHONPATH=os.path.join(self.directory, "lib"), HANGDOC_BIN=hangdoc,
                           HANGDOC_CASE_PIDS=self.pids_file, PYTHONDONTWRITEBYTECODE="1")
        wrapper = [hangdoc if word == HANGDOC else word for word in wrapper]
        command = [*wrapper, "/usr/bin/python3" if in_sid else PYTHON, "-m", "pytest",
                   *([] if by_entry_point or without_plugin else ["-p", "pytest_hangdoc"]), "-p",
                   "no:cacheprovider", "-q", "-rA", "--junitxml", self.junit, *options, *cases]
        if in_sid:
            # chroot(1) starts in the chroot's /: back to the run's directory, which the chroot sees at its path
            command = [os.path.join(SOURCE, "tests", "modern", "in_sid"), "/usr/bin/env", f"--chdir={self.directory}",
                       *command]
        if as_nobody:
            shutil.chown(self.directory, "nobody")
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        self.begun_ticks = int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))
        self.process = subprocess.Popen(command, cwd=self.directory, env=environment, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.group = self.process.pid
        self.left_behind = []

    def wait(self):
        try:
            output, _ = self.process.communicate(timeout=RUN_LIMIT_S)
        except subprocess.TimeoutExpired:
            self.end()
            output, _ = self.process.communicate()
            raise AssertionError(f"pytest ran past {RUN_LIMIT_S} s:\n{output.decode(errors='replace')}")
        self.output = output.decode("utf-8", "replace")
        self.status = self.process.returncode
        self.left_behind = self.still_there()
        return self

    def recorded(self):
        """(pid, start time) of each process the cases started, as conftest.py wrote them."""
        try:
            with open(self.pids_file) as pids:
                return [tuple(map(int, line.split())) for line in pids if line.strip()]
        except FileNotFoundError:
            return []

    def recorded_pids(self):
        return [pid for pid, _ in self.recorded()]

    def ours(self):
        """The run's processes still there: the recorded ones that are still themselves (same start time), and the
        members of the run's group begun since the run began."""
        there = {pid for pid, start in self.recorded() if start_time(pid) == start}
        there |= {pid for pid in group_members(self.group) if (start_time(pid) or 0) >= self.begun_ticks}
        return sorted(there)

    def still_there(self):
        """The run's processes that are still there LEFT_BEHIND_WAIT_S from now."""
        deadline = time.monotonic() + LEFT_BEHIND_WAIT_S
        while True:
            there = self.ours()
            if not there or time.monotonic() > deadline:
                return there
            time.sleep(0.1)

    def end(self):
        """Ends whatever of the run is left, by pid: never a process that got a pid of the run after it ended."""
        for pid in self.ours():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def remove(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.end()
        shutil.rmtree(self.directory, ignore_errors=True)

    # ---- what it wrote ----

    def testcases(self):
        tree = ElementTree.parse(self.junit)
        return {case.get("name"): case for case in tree.iter("testcase")}

    def properties(self, name):
        case = self.testcases()[name]
        return {prop.get("name"): prop.get("value") for prop in case.iter("property")}

    def failure(self, name):
        case = self.testcases()[name]
        failures = list(case.iter("failure"))
        return failures[0] if failures else None


class PluginTest(unittest.TestCase):
    def run_pytest(self, cases, *options, ini=None, as_nobody=False, by_entry_point=False, in_sid=False):
        run = Run(cases, list(options), ini=ini, as_nobody=as_nobody, by_entry_point=by_entry_point, in_sid=in_sid)
        self.addCleanup(run.remove)
        return run.wait()

    def explain(self, run):
        return f"exit {run.status}; output:\n{run.output[-12000:]}"

    def assert_nothing_left(self, run):
        self.assertEqual(run.left_behind, [], "processes of the run left behind\n" + self.explain(run))

    def assert_hung(self, run, name, cause, finding, root_pid=None, limit="3s"):
        """Test `name` failed with hangdoc's verdict, in the JUnit XML (message and properties) and the output."""
        failure = run.failure(name)
        self.assertIsNotNone(failure, f"{name} did not fail\n" + self.explain(run))
        message = failure.get("message")
        self.assertTrue(message.startswith(f"hangdoc: ran longer than {limit}: hung: {cause} in "), message)
        self.assertIn(f"({finding})", message)
        properties = run.properties(name)
        self.assertEqual(properties.get("hangdoc_hung"), "true", properties)
        self.assertEqual(properties.get("hangdoc_cause"), cause, properties)
        self.assertEqual(properties.get("hangdoc_finding"), finding, properties)
        self.assertEqual(properties.get("hangdoc_timeout"), limit, properties)
        self.assertTrue(properties.get("hangdoc", "").startswith(f"hung: {cause} in "), properties)
        if root_pid is not None:
            self.assertEqual(properties.get("hangdoc_root_pid"), str(root_pid), properties)
        # the failure's text: the verdict, the chain and the fix first, the full report after
        text = failure.text or ""
        verdict = text.find("\nverdict: ")
        chain = text.find("\nchain: ", verdict)
        fix = text.find("\nfix: ", chain)
        full = text.find("\nhangdoc's report:\n", fix)
        self.assertTrue(0 < verdict < chain < fix < full, text[:3000])
        self.assertIn(f"[{finding}, ", text[verdict:full])
        self.assertIn(f"\n{finding} (", text[full:])
        self.assertIn(f"hangdoc: ran longer than {limit}: hung: {cause}", run.output)
        return properties, text

    # ---- the cases --------------------------------------------------------------------------------------------

    def test_a_deadlock_on_two_locks_fails_with_its_verdict_and_the_session_goes_on(self):
        run = self.run_pytest(["test_two_locks.py"], "--hangdoc-timeout", "3s", "--hangdoc-dir", "reports", "-o",
                              "junit_logging=system-out")
        self.assertEqual(run.status, 1, self.explain(run))
        properties, text = self.assert_hung(run, "test_two_locks_in_opposite_orders", "deadlock",
                                            "unowned-lock-cycle", root_pid=run.process.pid)
        self.assertIn("test_two_locks.py:13", properties["hangdoc_summary"])  # the line of `with other:`
        self.assertIn("the test started no process of its own", text)
        # the session went on, and the interpreter did not wait at its end for the deadlocked threads
        self.assertIsNone(run.failure("test_after_the_hang"))
        self.assertIn("test_after_the_hang", run.testcases())
        self.assertIn("still blocked", run.output)
        # the attachment: hangdoc's JSON report, named in the properties and in the JUnit attachment convention
        report = properties["hangdoc_report"]
        self.assertTrue(report.startswith(os.path.join(run.directory, "reports") + os.sep), report)
        with open(report) as file:
            document = json.load(file)
        self.assertEqual(document["verdict"]["root_cause"], "unowned-lock-cycle")
        self.assertEqual(document["snapshot"]["roots"], [run.process.pid])
        self.assertIn(f"[[ATTACHMENT|{report}]]", run.output)
        system_out = "".join(out.text or "" for out in run.testcases()["test_two_locks_in_opposite_orders"].iter(
            "system-out"))
        self.assertIn(f"[[ATTACHMENT|{report}]]", system_out, "JUnit's system-out names the attachment")
        base = report[: -len(".json")]
        for suffix in (".txt", ".snapshot", ".outcome.json"):
            self.assertTrue(os.path.exists(base + suffix), base + suffix)
        # the snapshot gives the same diagnosis again
        analyzed = subprocess.run([HANGDOC, "analyze", "--json", base + ".snapshot"], capture_output=True)
        self.assertEqual(json.loads(analyzed.stdout)["verdict"], document["verdict"])
        self.assert_nothing_left(run)

    def test_a_forked_worker_waiting_on_an_inherited_lock_is_named_and_ended(self):
        run = self.run_pytest(["test_inherited_lock.py"], "--hangdoc-timeout", "3s")
        self.assertEqual(run.status, 1, self.explain(run))
        (worker,) = run.recorded_pids()
        properties, text = self.assert_hung(run, "test_forked_worker_waits_for_an_inherited_lock",
                                            "fork-inheritance", "orphaned-wait", root_pid=worker)
        self.assertIn("test_inherited_lock.py:12", properties["hangdoc_summary"])  # take_the_lock's `with lock:`
        self.assertIn(f"ended the test's processes {worker} (SIGTERM, then SIGKILL)", text)
        self.assertNotIn("hangdoc_report", properties, "no --hangdoc-dir: the reports are not kept")
        self.assert_nothing_left(run)

    def test_a_dataloader_worker_hung_in_gnu_openmp(self):
        if not os.path.isdir("/usr/lib/python3/dist-packages/torch"):
            self.skipTest("no python3-torch")
        run = self.run_pytest(["test_dataloader.py"], "--hangdoc-timeout", "5s")
        self.assertEqual(run.status, 1, self.explain(run))
        workers = run.recorded_pids()
        self.assertEqual(len(workers), 2, workers)
        properties, text = self.assert_hung(run, "test_dataloader_worker_hangs_in_openmp", "fork-inheritance",
                                            "orphaned-wait", limit="5s")
        self.assertIn(int(properties["hangdoc_root_pid"]), workers)
        self.assertEqual(properties["hangdoc"],
                         f"hung: fork-inheritance in DataLoader worker {properties['hangdoc_root_pid']} "
                         "(orphaned-wait)")
        self.assertIn("inside libgomp.so.1 (GNU OpenMP, not fork-safe)", properties["hangdoc_summary"])
        self.assertIn("ended the test's processes " + ", ".join(map(str, sorted(workers))), text)
        self.assert_nothing_left(run)

    def test_a_slow_test_under_the_limit_is_not_reported(self):
        run = self.run_pytest(["test_slow.py"], "--hangdoc-timeout", "6s", "--hangdoc-dir", "reports")
        self.assertEqual(run.status, 0, self.explain(run))
        self.assertEqual(run.properties("test_slow_but_done_in_time"), {})
        self.assertNotIn("hangdoc: ran longer", run.output)
        self.assertNotIn("diagnosing", run.output)
        self.assertFalse(os.path.exists(run.reports) and os.listdir(run.reports))
        self.assert_nothing_left(run)

    def test_the_ini_limit_and_the_markers(self):
        """The plugin loaded as installed, by its entry point; its limit from the ini file and the markers."""
        run = self.run_pytest(["test_markers.py"], ini={"hangdoc_timeout": "2s"}, by_entry_point=True)
        self.assertEqual(run.status, 1, self.explain(run))
        failure = run.failure("test_marked_three_seconds_takes_its_own_lock_twice")
        self.assertIsNotNone(failure, self.explain(run))
        self.assertTrue(failure.get("message").startswith("hangdoc: ran longer than 3s: hung: "), failure.get("message"))
        self.assertIsNone(run.failure("test_marked_without_limit_outlives_the_ini_limit"), self.explain(run))
        self.assertIsNone(run.failure("test_under_the_ini_limit"), self.explain(run))
        self.assertEqual(run.output.count(" has run longer than "), 1, self.explain(run))
        self.assert_nothing_left(run)

    def test_the_next_tests_processes_are_not_the_hung_ones(self):
        """Ending a test's processes lets it end while the watcher still ends the rest; the next test's child,
        begun since the first test began too, is spared."""
        run = self.run_pytest(["test_next_test_spared.py"], "--hangdoc-timeout", "3s")
        self.assertEqual(run.status, 1, self.explain(run))
        failure = run.failure("test_a_worker_on_an_inherited_lock_beside_a_stubborn_child")
        self.assertIsNotNone(failure, self.explain(run))
        self.assertTrue(failure.get("message").startswith("hangdoc: ran longer than 3s: hung: fork-inheritance"),
                        failure.get("message"))
        self.assertIsNone(run.failure("test_b_starts_a_child_at_once"), self.explain(run))
        self.assert_nothing_left(run)

    def test_the_grace_ends_when_the_failure_is_made(self):
        """A session fixture's teardown longer than the grace, after the hung test failed: pytest is not ended."""
        run = self.run_pytest(["test_session_teardown.py"], "--hangdoc-timeout", "3s", "--hangdoc-grace", "2s")
        self.assertEqual(run.status, 1, self.explain(run))
        failure = run.failure("test_waits_for_an_event_nobody_sets")
        self.assertIsNotNone(failure, self.explain(run))
        self.assertTrue(failure.get("message").startswith("hangdoc: ran longer than 3s: "), failure.get("message"))
        self.assertNotIn("did not come back", run.output)
        self.assert_nothing_left(run)

    def test_under_xdist_each_worker_watches_its_tests_and_the_controller_reports_a_dead_worker(self):
        run = self.run_pytest(["test_two_locks.py", "test_inherited_lock.py", "test_slow.py", "test_native_block.py"],
                              "-n", "2", "--hangdoc-timeout", "4s", "--hangdoc-grace", "3s", "--hangdoc-dir",
                              "reports")
        self.assertEqual(run.status, 1, self.explain(run))
        self.assert_hung(run, "test_two_locks_in_opposite_orders", "deadlock", "unowned-lock-cycle", limit="4s")
        self.assert_hung(run, "test_forked_worker_waits_for_an_inherited_lock", "fork-inheritance",
                         "orphaned-wait", limit="4s")
        failure = run.failure("test_slow_but_done_in_time")
        self.assertIsNone(failure, (failure.text if failure is not None else "") + self.explain(run))
        self.assertIsNone(run.failure("test_after_the_hang"))
        # the test blocked in native code: its worker was ended, and the controller's crash report carries the
        # diagnosis (the worker's pid is the root: the lock's owner exited in it)
        properties, text = self.assert_hung(run, "test_blocked_in_native_code", "deadlock", "abandoned-lock",
                                            limit="4s")
        self.assertIn("so hangdoc ended worker gw", text)
        self.assertIn("node down", run.output)  # xdist: the worker is gone
        self.assertIn("the test's thread did not come back 3 s after signal", run.output)
        self.assertNotEqual(properties["hangdoc_root_pid"], str(run.process.pid), "a worker's, not the controller's")
        self.assertIsNone(start_time(int(properties["hangdoc_root_pid"])), "the worker was ended")
        self.assert_nothing_left(run)

    def test_hangdoc_run_over_an_xdist_session_names_the_worker(self):
        """Without the plugin: `hangdoc run -- pytest -n 2`, as a CI job wraps it. One worker deadlocks, the other
        goes idle (it waits for work its channel's receiver brings); the controller waits for both. The verdict is
        the worker's lock cycle, and nothing else is called hung."""
        self.expect_run_over_xdist(in_sid=False)

    def expect_run_over_xdist(self, in_sid):
        run = Run(["test_two_locks.py", "test_slow.py"], ["-n", "2"], without_plugin=True, in_sid=in_sid,
                  wrapper=[HANGDOC, "run", "--timeout", "8s", "--json", "run.json", "--"])
        self.addCleanup(run.remove)
        run.wait()
        self.assertEqual(run.status, 124, self.explain(run))
        with open(os.path.join(run.directory, "run.json")) as file:
            document = json.load(file)
        self.assertEqual(document["verdict"]["root_cause"], "unowned-lock-cycle", self.explain(run))
        hung = [finding for finding in document["findings"] if finding["hang"]]
        self.assertEqual([finding["id"] for finding in hung], ["unowned-lock-cycle"], document["findings"])
        worker = hung[0]["pid"]
        controller = [process["pid"] for process in document["processes"]
                      if process["pid"] != worker and process["ppid"] not in
                      [other["pid"] for other in document["processes"]]]
        self.assertEqual(len(controller), 1, document["processes"])
        self.assertEqual(next(process["ppid"] for process in document["processes"] if process["pid"] == worker),
                         controller[0], "the deadlocked process is a worker of the controller")
        self.assertIn("message pump of execnet", str(hung[0]["evidence"].get("pump")), hung[0]["evidence"])
        self.assert_nothing_left(run)

    def test_keep_leaves_the_hung_tree_for_a_person(self):
        run = Run(["test_inherited_lock.py"], ["--hangdoc-timeout", "2s", "--hangdoc-keep", "--hangdoc-dir",
                                               "reports"])
        self.addCleanup(run.remove)
        # the diagnosis is made, and then nothing is ended: the test waits on as it did
        deadline = time.monotonic() + 60
        outcome = []
        while not outcome and time.monotonic() < deadline:
            outcome = [name for name in (os.listdir(run.reports) if os.path.isdir(run.reports) else [])
                       if name.endswith(".outcome.json")]
            time.sleep(0.2)
        self.assertTrue(outcome, "no diagnosis")
        time.sleep(3)
        (worker,) = run.recorded_pids()
        self.assertIsNotNone(start_time(worker), "the hung worker is left")
        self.assertIsNone(run.process.poll(), "pytest waits with its test")
        # a person ends the worker: the join returns, and the test fails with the diagnosis
        os.kill(worker, signal.SIGKILL)
        run.wait()
        self.assertEqual(run.status, 1, self.explain(run))
        properties, text = self.assert_hung(run, "test_forked_worker_waits_for_an_inherited_lock",
                                            "fork-inheritance", "orphaned-wait", root_pid=worker, limit="2s")
        self.assertIn(f"left as it is (--hangdoc-keep): the test's processes [{worker}] were not ended", text)
        self.assert_nothing_left(run)

    def test_an_unprivileged_user(self):
        if os.geteuid() != 0:
            self.skipTest("becoming nobody needs root")
        run = self.run_pytest(["test_inherited_lock.py"], "--hangdoc-timeout", "3s", as_nobody=True)
        self.assertEqual(run.status, 1, self.explain(run))
        (worker,) = run.recorded_pids()
        properties, text = self.assert_hung(run, "test_forked_worker_waits_for_an_inherited_lock",
                                            "fork-inheritance", "orphaned-wait", root_pid=worker)
        # the whole diagnosis: stacks and the Python view read without any privilege over one's own processes
        self.assertIn("take_the_lock (", text)
        self.assertNotIn("permission denied", text)
        self.assert_nothing_left(run)

    def test_the_watcher_goes_with_pytest(self):
        """pytest killed outright (the runner's own limit): the watcher sees its input end and exits."""
        run = Run(["test_slow.py"], ["--hangdoc-timeout", "30s"])
        self.addCleanup(run.remove)
        deadline = time.monotonic() + 60
        while not run.recorded_pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        watchers = [pid for pid in group_members(run.group) if pid != run.process.pid and
                    b"watcher.py" in read_file(f"/proc/{pid}/cmdline")]
        self.assertEqual(len(watchers), 1, watchers)
        self.assertNotEqual(read_file(f"/proc/{watchers[0]}/stat").rsplit(b")", 1)[1].split()[1],
                            str(run.process.pid).encode(), "the watcher is not pytest's child: outside the test's tree")
        os.kill(run.process.pid, signal.SIGKILL)
        run.wait()
        self.assertNotIn(watchers[0], run.left_behind)


class ModernTest(PluginTest):
    """The same under what Debian's development suite has: CPython 3.14, pytest 9, pytest-xdist 3.8 (whose workers
    take their commands through a callback of execnet's receiver), PyTorch 2.x. Run in its chroot
    (tests/modern/chroot.sh builds it; the tests skip, saying why, when it could not be built)."""

    ROOT = os.environ.get("HANGDOC_MODERN_ROOT", "/var/cache/hangdoc/sid")

    def setUp(self):
        if os.environ.get("HANGDOC_SANITIZE", "none") != "none":
            # hangdoc runs inside the chroot, which has not the sanitizers' runtime this build links
            self.skipTest("the sanitized hangdoc cannot run in the chroot (no libasan there): the plain run has these")
        unusable = self.ROOT + ".unusable"
        if os.path.exists(unusable):
            with open(unusable) as why:
                self.skipTest(f"Debian's development suite: {why.read().strip()}")
        for needed in ("usr/lib/python3/dist-packages/pytest", "usr/lib/python3/dist-packages/xdist"):
            if not os.path.isdir(os.path.join(self.ROOT, needed)):
                self.skipTest(f"no {needed} in {self.ROOT} (bash tests/modern/chroot.sh completes it)")

    # the tests of PluginTest run as they are outside; these run inside
    for name in [name for name in dir(PluginTest) if name.startswith("test_")]:
        locals()[name] = None
    del name

    def test_under_xdist_with_pytest_9_and_python_3_14(self):
        run = self.run_pytest(["test_two_locks.py", "test_inherited_lock.py", "test_slow.py", "test_native_block.py"],
                              "-n", "2", "--hangdoc-timeout", "5s", "--hangdoc-grace", "3s", "--hangdoc-dir",
                              "reports", in_sid=True)
        self.assertEqual(run.status, 1, self.explain(run))
        self.assertIn("python 3.14", run.output)
        self.assert_hung(run, "test_two_locks_in_opposite_orders", "deadlock", "unowned-lock-cycle", limit="5s")
        self.assert_hung(run, "test_forked_worker_waits_for_an_inherited_lock", "fork-inheritance",
                         "orphaned-wait", limit="5s")
        self.assertIsNone(run.failure("test_slow_but_done_in_time"))
        self.assertIsNone(run.failure("test_after_the_hang"))
        properties, text = self.assert_hung(run, "test_blocked_in_native_code", "deadlock", "abandoned-lock",
                                            limit="5s")
        self.assertIn("so hangdoc ended worker gw", text)
        self.assert_nothing_left(run)

    def test_hangdoc_run_over_an_xdist_session_of_today(self):
        """The same with pytest 9 and pytest-xdist 3.8: the deadlocked worker is named beside execnet's receivers,
        and the worker that has no test left (back in execnet's pool) is not hung. (Its wait between two tests, on
        the TestQueue a callback of the receiver fills, is too short to catch here: tests/unit/test_rules_locks.c
        has it.)"""
        self.expect_run_over_xdist(in_sid=True)

    def test_a_dataloader_worker_with_pytorch_of_today(self):
        run = self.run_pytest(["test_dataloader.py"], "--hangdoc-timeout", "8s", in_sid=True)
        self.assertEqual(run.status, 1, self.explain(run))
        workers = run.recorded_pids()
        properties, text = self.assert_hung(run, "test_dataloader_worker_hangs_in_openmp", "fork-inheritance",
                                            "orphaned-wait", limit="8s")
        self.assertIn(int(properties["hangdoc_root_pid"]), workers)
        self.assertTrue(properties["hangdoc"].startswith("hung: fork-inheritance in DataLoader worker "), properties)
        self.assert_nothing_left(run)


class VerdictTest(unittest.TestCase):
    """The test's hang among the report's: an xdist worker still holds an earlier test's deadlocked threads, and
    hangdoc may count both in one hang (a futex without owner can be woken by any thread of its process)."""

    REPORT = {
        "verdict": {
            "hung": True, "cause": "deadlock", "root_cause": "unowned-lock-cycle", "pid": 500, "tid": 507,
            "chain": [500],
            "hangs": [{"cause": "deadlock", "root_cause": "unowned-lock-cycle", "finding": 1, "pid": 500, "tid": 507,
                       "chain": [500], "findings": [1, 0]}],
        },
        "findings": [
            {"id": "abandoned-lock", "confidence": "certain", "hang": True, "pid": 500, "tid": 500,
             "summary": "thread 500 'python3' waits for mutex 0x10 whose owner, thread 520, no longer exists",
             "remedies": ["Unlock before the thread ends."]},
            {"id": "unowned-lock-cycle", "confidence": "likely", "hang": True, "pid": 500, "tid": 507,
             "summary": "2 threads of process 500 sleep forever taking locks", "remedies": ["One order."]},
        ],
        "processes": [{"pid": 500, "comm": "python3", "threads": []}],
    }
    TEXT = "verdict: likely HUNG (deadlock): 2 threads [unowned-lock-cycle, likely]\nchain: 500 'python3'\n" \
           "hangdoc: 1 process, 3 threads\n\nmore\n"

    def verdict(self, *arguments):
        sys.path.insert(0, os.path.join(SOURCE, "python"))
        try:
            from pytest_hangdoc.verdict import Verdict, in_short
        finally:
            sys.path.pop(0)
        verdict = Verdict(self.REPORT, *arguments)
        return verdict, in_short(self.TEXT, verdict)

    def test_the_earlier_tests_hang_when_the_test_started_none_of_it(self):
        verdict, short = self.verdict([500, 521], [])  # the main thread runs the test; thread 521 is its own
        self.assertEqual(verdict.headline, "hung: deadlock in process 500 'python3' (abandoned-lock)")
        self.assertEqual(short.splitlines()[2], "this test's: thread 500 'python3' waits for mutex 0x10 whose owner, "
                                                "thread 520, no longer exists [abandoned-lock, certain]")
        self.assertEqual(short.splitlines()[3], "fix: Unlock before the thread ends.")

    def test_the_reports_own_root_cause_when_the_test_started_it(self):
        verdict, short = self.verdict([500, 507], [])
        self.assertEqual(verdict.root_cause, "unowned-lock-cycle")
        self.assertEqual(short.splitlines(), ["verdict: likely HUNG (deadlock): 2 threads [unowned-lock-cycle, likely]",
                                              "chain: 500 'python3'", "fix: One order."])

    def test_a_target_name_reaches_no_terminal_raw(self):
        """The JSON report holds a process's name exactly: its escape sequence must not reach the terminal or JUnit
        as it is."""
        document = json.loads(json.dumps(self.REPORT))
        document["processes"][0]["comm"] = "py\x1b[2Jth\x07on"
        sys.path.insert(0, os.path.join(SOURCE, "python"))
        try:
            from pytest_hangdoc.verdict import Verdict
        finally:
            sys.path.pop(0)
        verdict = Verdict(document, [500], [])
        self.assertEqual(verdict.headline, "hung: deadlock in process 500 'py\\x1b[2Jth\\x07on' (abandoned-lock)")
        self.assertTrue(all(value.isprintable() for _, value in verdict.properties()), verdict.properties())

    def test_hostile_documents(self):
        for document in (None, [], {"verdict": []}, {"verdict": {"hangs": [None, 3], "hung": "yes"}},
                         {"verdict": {"hung": True, "hangs": [{"finding": 99}]}, "findings": "x"},
                         {"verdict": {"hung": True, "chain": 3, "hangs": [{"finding": 0, "chain": 5, "findings": 7}]},
                          "findings": [{"hang": True, "tid": 1, "remedies": "x", "evidence": []}], "processes": 4},
                         {"verdict": {"hung": True, "hangs": [{"finding": 0, "tid": [1], "pid": {"a": 1},
                                                               "findings": [0, [1], {"x": 2}]}]},
                          "findings": [{"hang": True, "tid": [5], "pid": {"b": 2}, "id": 3, "summary": None}]}):
            sys.path.insert(0, os.path.join(SOURCE, "python"))
            try:
                from pytest_hangdoc.verdict import Verdict
            finally:
                sys.path.pop(0)
            verdict = Verdict(document, [1], [2])
            self.assertIsInstance(verdict.headline, str)
            self.assertIsInstance(verdict.properties(), list)


if __name__ == "__main__":
    if not os.access(HANGDOC, os.X_OK):
        sys.exit(f"no hangdoc at {HANGDOC}")
    unittest.main(verbosity=2)
