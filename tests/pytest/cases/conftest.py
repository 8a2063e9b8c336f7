"""What the cases share: every process a case starts is written to $HANGDOC_CASE_PIDS with its start time, so that
the driver (tests/pytest/test_plugin.py) can require that none is left when pytest ends, and end any that is, by
pid, never a later process that got the same pid. A session fixture whose teardown takes a while, for the cases
that ask for it."""
import os
import time

import pytest


def record_process(pid):
    path = os.environ.get("HANGDOC_CASE_PIDS")
    if path:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            start = stat.read().rsplit(b")", 1)[1].split()[19].decode()
        with open(path, "a") as pids:
            pids.write(f"{pid} {start}\n")


@pytest.fixture(scope="session")
def slow_to_tear_down():
    yield
    time.sleep(4)  # longer than the grace the driver gives: the grace must not count it
