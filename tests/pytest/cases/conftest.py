"""What the cases share: every process a case starts is written to $HANGDOC_CASE_PIDS, so that the driver
(tests/pytest/test_plugin.py) can require that none is left when pytest ends, and end any that is, by pid."""
import os


def record_process(pid):
    path = os.environ.get("HANGDOC_CASE_PIDS")
    if path:
        with open(path, "a") as pids:
            pids.write(f"{pid}\n")
