#!/usr/bin/python3
"""A ThreadPoolExecutor's tasks submit to their own pool and wait for the result: with every worker inside such a
task, the inner tasks stay queued for ever (pool starvation).
  pool_starvation.py starve: two workers, two outer tasks, each waiting on an inner task of the same pool
  pool_starvation.py other-pool: the look-alike: the outer tasks wait on futures of another pool, whose worker runs
                                 (a task that sleeps in a loop): not hung
ready <pid> <first worker tid> <second worker tid>"""
import concurrent.futures
import os
import sys
import threading
import time

mode = sys.argv[1]
pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
other = concurrent.futures.ThreadPoolExecutor(max_workers=1)
workers, inner_futures = [], []
lock = threading.Lock()


def inner():
    while mode == "other-pool":
        time.sleep(0.2)
    return 1


def outer():
    future = (pool if mode == "starve" else other).submit(inner)
    with lock:
        workers.append(threading.get_native_id())
        inner_futures.append(future)
    return future.result()  # where: result


futures = [pool.submit(outer) for _ in range(2)]
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    with lock:
        # each outer task sleeps in result(): a waiter on its inner future's condition, asleep in the kernel
        if len(inner_futures) == 2 and all(len(f._condition._waiters) == 1 for f in inner_futures) and \
                all("futex" in open(f"/proc/self/task/{tid}/wchan").read() for tid in workers):
            break
    time.sleep(0.01)
os.write(3, f"ready {os.getpid()} {workers[0]} {workers[1]}\n".encode())
os.close(3)
futures[0].result()  # the main thread waits too
