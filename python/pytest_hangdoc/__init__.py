"""hangdoc's pytest plugin: when a test runs longer than its limit, hangdoc diagnoses the test process's whole tree.

The pieces, each in its own module:
  plugin.py   the pytest side: options, the per-test limit, the failure report, the JUnit properties, xdist
  watcher.py  the watchdog: a process of its own (no GIL, no help from the hung thread) that runs hangdoc at the
              limit, ends the test's processes and interrupts the test
  verdict.py  what a hangdoc JSON report says, in the words a failure report and a CI dashboard show
  durations.py  "30s", "2m", "500ms"

pytest loads it by the entry point meson installs (pytest11: hangdoc), or from a checkout with
`PYTHONPATH=python pytest -p pytest_hangdoc`.
"""
from .plugin import *  # noqa: F401,F403  (pytest finds the hooks on the module it loads)
