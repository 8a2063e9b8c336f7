"""The first test forks a worker that waits on an inherited lock, beside a child that ignores SIGTERM: the watcher
ends both, the worker at once, the child 2 s later. The worker's end lets the test end by itself, and the second
test starts its own child while the watcher still ends the first one's: that child is not the first test's."""
import multiprocessing
import subprocess
import sys
import threading

from conftest import record_process

lock = threading.Lock()
STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); " \
           "time.sleep(600)"


def take_the_lock():
    with lock:
        pass


def test_a_worker_on_an_inherited_lock_beside_a_stubborn_child():
    stubborn = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE)
    record_process(stubborn.pid)
    assert stubborn.stdout.readline() == b"ready\n"  # its SIGTERM is ignored from here on
    held, release = threading.Event(), threading.Event()

    def hold():
        with lock:
            held.set()
            release.wait()

    threading.Thread(target=hold, daemon=True).start()
    held.wait()
    worker = multiprocessing.get_context("fork").Process(target=take_the_lock)
    worker.start()
    record_process(worker.pid)
    worker.join()
    release.set()


def test_b_starts_a_child_at_once():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])
    record_process(child.pid)
    assert child.wait() == 0, "the child of this test was ended"
