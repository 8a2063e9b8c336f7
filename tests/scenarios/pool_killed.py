#!/usr/bin/python3
"""A multiprocessing.Pool whose worker is killed (as the OOM killer does) while it holds a task: the pool starts a
replacement, the task never returns, and the main thread waits for ever in AsyncResult.get() while every worker
sits idle (issue 13). The subject is the waiting main thread, not an idle worker.
ready <parent pid> <replacement worker pid> <killed worker pid>"""
import ctypes
import multiprocessing
import os
import signal
import time

PR_SET_PDEATHSIG = 1


def die_with_parent():
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, 9)


def work(task):
    time.sleep(3600 if task == 0 else 0.01)
    return task


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    pool = multiprocessing.Pool(3, initializer=die_with_parent)
    result = pool.map_async(work, range(6), chunksize=1)
    time.sleep(1.0)  # every task but the first is done; the worker that took it sleeps in it
    before = {process.pid for process in pool._pool}
    # the worker asleep in time.sleep holds task 0: its wait channel is the kernel's nanosleep (on every
    # architecture), the others wait for tasks
    holder = next(pid for pid in before if "nanosleep" in open(f"/proc/{pid}/wchan").read())
    os.kill(holder, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and {process.pid for process in pool._pool} - before == set():
        time.sleep(0.05)
    replacement = ({process.pid for process in pool._pool} - before).pop()
    time.sleep(0.5)  # the replacement settles into waiting for a task
    os.write(3, f"ready {os.getpid()} {replacement} {holder}\n".encode())
    os.close(3)
    result.get()  # never returns
