"""A thread of the test holds a threading.Lock while the test forks a multiprocessing worker that takes the same
lock: the worker's copy is locked, with no thread to unlock it; the test joins the worker."""
import multiprocessing
import threading

from conftest import record_process

lock = threading.Lock()


def take_the_lock():
    with lock:  # where: child-acquire
        pass


def test_forked_worker_waits_for_an_inherited_lock():
    held, release = threading.Event(), threading.Event()

    def hold():
        with lock:
            held.set()
            release.wait()

    holder = threading.Thread(target=hold, name="lock-holder", daemon=True)
    holder.start()
    held.wait()
    worker = multiprocessing.get_context("fork").Process(target=take_the_lock, name="lock-taker")
    worker.start()
    record_process(worker.pid)
    try:
        worker.join()
    finally:
        release.set()
