"""A slow test that ends under the limit: no report, no failure."""
import subprocess
import sys
import time

from conftest import record_process


def test_slow_but_done_in_time():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1)"])
    record_process(child.pid)
    time.sleep(1)
    assert child.wait() == 0
