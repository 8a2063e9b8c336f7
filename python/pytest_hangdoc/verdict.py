"""What a hangdoc report says, in the words a test's failure report and a CI dashboard show.

Everything here reads a report that hangdoc wrote about processes the test started: the strings in it are the
target's (thread names, paths) and are used as text only, cut to a bounded length where they go into one line.
"""

_LINE_LIMIT = 400  # a JUnit property or a headline: one line, bounded


def _one_line(text, limit=_LINE_LIMIT):
    """`text` on one bounded line, its control characters written as \\xNN: a JSON report holds the target's
    strings exactly (a thread or process name may carry a terminal's escape sequence), and this line goes to the
    terminal and to JUnit."""
    text = " ".join(str(text).split())
    text = "".join(character if character.isprintable() else f"\\x{ord(character):02x}" if ord(character) < 256
                   else f"\\u{ord(character):04x}" for character in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _process(document, pid):
    for process in _list(document.get("processes")):
        if isinstance(process, dict) and process.get("pid") == pid:
            return process
    return None


def _text(value):
    return value if isinstance(value, str) else None


def _list(value):
    return value if isinstance(value, list) else []


def _int(value):
    """An integer of the report, or None for anything else (a list, a dict: unhashable, and no pid)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _the_tests_hang(verdict, test_tids, test_pids):
    """Of the report's hangs, the test's: the first whose root thread the test started (or the thread that runs the
    test), or whose root process the test started. A test that hangs after an earlier one leaves that one's threads
    asleep in the same process (an xdist worker runs many tests): that hang is not this test's. The report's first
    hang when none is."""
    hangs = [hang for hang in _list(verdict.get("hangs")) if isinstance(hang, dict)]
    for hang in hangs:
        if _int(hang.get("tid")) in test_tids or _int(hang.get("pid")) in test_pids:
            return hang
    return hangs[0] if hangs else None


class Verdict:
    """The verdict of one hangdoc JSON report (`document`, already parsed), or of none (None: hangdoc failed), about
    the hang of the test that started the threads `test_tids` and processes `test_pids` (outcome.json's)."""

    def __init__(self, document, test_tids=(), test_pids=()):
        document = document if isinstance(document, dict) else {}
        verdict = document.get("verdict") if isinstance(document.get("verdict"), dict) else {}
        test_tids, test_pids = set(test_tids), set(test_pids)
        self.read = bool(verdict)
        self.hung = verdict.get("hung") is True
        hang = _the_tests_hang(verdict, test_tids, test_pids) or verdict
        self.cause = _text(hang.get("cause"))
        self.chain = [pid for pid in _list(hang.get("chain")) if isinstance(pid, int)]
        index = hang.get("finding")
        # one hang may hold the findings of several threads of a process (an earlier test's deadlocked threads
        # beside this test's): the test's own finding is then its root cause
        root = self._finding(document, index)
        if test_tids | test_pids and root and _int(root.get("tid")) not in test_tids and \
                _int(root.get("pid")) not in test_pids:
            for other in _list(hang.get("findings")):
                finding = self._finding(document, other)
                if finding and finding.get("hang") is True and (_int(finding.get("tid")) in test_tids or
                                                                 _int(finding.get("pid")) in test_pids):
                    index = other
                    break
        self.finding = self._finding(document, index)
        hangs = _list(verdict.get("hangs"))
        first = hangs[0] if hangs and isinstance(hangs[0], dict) else {}
        self.named_by_the_verdict_line = isinstance(index, int) and index == first.get("finding")
        finding = self.finding or hang
        self.root_cause = _text(finding.get("id") if self.finding else hang.get("root_cause"))
        self.pid = finding.get("pid") if isinstance(finding.get("pid"), int) else None
        self.tid = finding.get("tid") if isinstance(finding.get("tid"), int) else None
        process = _process(document, self.pid)
        self.comm = (process or {}).get("comm")

    @staticmethod
    def _finding(document, index):
        findings = _list(document.get("findings"))
        if isinstance(index, int) and 0 <= index < len(findings) and isinstance(findings[index], dict):
            return findings[index]
        return None

    @property
    def summary(self):
        return (self.finding or {}).get("summary")

    @property
    def remedies(self):
        """The fixes of the root cause, as the report gives them."""
        return [remedy for remedy in _list((self.finding or {}).get("remedies")) if isinstance(remedy, str)]

    @property
    def role(self):
        """What the root process is ("DataLoader worker"), when the report says it."""
        evidence = (self.finding or {}).get("evidence") or {}
        role = evidence.get("role") if isinstance(evidence, dict) else None
        return role if isinstance(role, str) and role else None

    @property
    def where(self):
        """Where the root cause is, for a dashboard: "DataLoader worker 4242", "process 4242 'python3'"."""
        if self.pid is None:
            return None
        if self.role:
            return f"{self.role.split(',')[0]} {self.pid}"
        return f"process {self.pid}" + (f" '{self.comm}'" if self.comm else "")

    @property
    def headline(self):
        """One line: "hung: fork-inheritance in DataLoader worker 4242 (orphaned-wait)"."""
        if not self.read:
            return "hangdoc could not diagnose the test's processes"
        if not self.hung:
            return "not hung: no thread of the test's tree is asleep forever (slow, or waiting on something outside)"
        text = f"hung: {self.cause or 'unknown cause'}"
        if self.where:
            text += f" in {self.where}"
        if self.root_cause:
            text += f" ({self.root_cause})"
        return _one_line(text)

    def properties(self):
        """The JUnit properties, name → value (strings, one line each)."""
        values = {
            "hangdoc": self.headline,
            "hangdoc_hung": "true" if self.hung else "false",
            "hangdoc_cause": self.cause,
            "hangdoc_finding": self.root_cause,
            "hangdoc_root_pid": self.pid,
            "hangdoc_root_tid": self.tid,
            "hangdoc_summary": self.summary,
        }
        return [(name, _one_line(value)) for name, value in values.items() if value is not None]


def in_short(text, verdict):
    """The verdict of hangdoc's text report (its first lines: the verdict, the chain, the other hangs with theirs),
    then the fix of the test's hang (`verdict`'s)."""
    head = []
    for line in text.splitlines():
        if not line.strip():
            break
        if not line.startswith("hangdoc:"):  # the line on what was sampled
            head.append(line)
    if verdict.finding and not verdict.named_by_the_verdict_line:
        finding = verdict.finding
        head.append(f"this test's: {_one_line(finding.get('summary'), 4000)} [{finding.get('id')}, "
                    f"{finding.get('confidence')}]")
    head += [f"fix: {_one_line(remedy, 4000)}" for remedy in verdict.remedies]
    return "\n".join(head)
