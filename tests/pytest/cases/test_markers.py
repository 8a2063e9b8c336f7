"""The limit from the ini file (hangdoc_timeout, 2s in the driver's pytest.ini) and from a test's own marker."""
import threading
import time

import pytest


@pytest.mark.hangdoc(timeout="3s")
def test_marked_three_seconds_takes_its_own_lock_twice():
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()  # where: second-acquire


@pytest.mark.hangdoc(timeout=0)
def test_marked_without_limit_outlives_the_ini_limit():
    time.sleep(2.5)


def test_under_the_ini_limit():
    time.sleep(0.1)
