#!/usr/bin/python3
"""Thread pools whose tasks submit to their own pool and wait for the result: with every worker inside such a task,
the inner tasks stay queued for ever (pool starvation).
  pool_starvation.py starve: a ThreadPoolExecutor, two workers, two outer tasks, each waiting on an inner task of
                             the same pool
  pool_starvation.py other-pool: the look-alike: the outer tasks wait on futures of another pool, whose worker runs
                                 (a task that sleeps in a loop): not hung
  pool_starvation.py threadpool: a multiprocessing.pool.ThreadPool of two workers: the main thread maps two outer
                                 tasks, each calling apply() on the same pool
  pool_starvation.py threadpool-other-pool: the look-alike: the outer tasks call apply() on another ThreadPool,
                                            whose worker runs (a task that sleeps in a loop): not hung
ready <pid> <first worker tid> <second worker tid>"""
import concurrent.futures
import multiprocessing.pool
import os
import sys
import threading
import time

mode = sys.argv[1]
threadpool = mode.startswith("threadpool")
own_pool = mode in ("starve", "threadpool")
workers = []
lock = threading.Lock()
# each outer task submits its inner one only once both outer tasks run, each on a worker of its own: otherwise the
# first one's inner task can take the second worker first (a loaded machine ran it so), and nothing starves
both_outer_tasks_run = threading.Barrier(2, timeout=20)


def inner():
    while not own_pool:
        time.sleep(0.2)
    return 1


def record_worker():
    with lock:
        workers.append(threading.get_native_id())


def in_position(waiting_on):
    """Both workers recorded, each asleep in the kernel, and each result they wait on has a waiter."""
    with lock:
        return len(workers) == 2 and len(waiting_on) == 2 and all(waiting_on) and \
            all("futex" in open(f"/proc/self/task/{tid}/wchan").read() for tid in workers)


def tracker_asleep():
    """Python 3.14 starts multiprocessing's resource tracker for a ThreadPool's semaphores: in position once it
    sleeps reading its pipe (a diagnosis that catches it still starting sees another tree than the next one)."""
    tracker = getattr(sys.modules.get("multiprocessing.resource_tracker"), "_resource_tracker", None)
    pid = getattr(tracker, "_pid", None)
    if not pid:
        return True
    try:
        with open(f"/proc/{pid}/wchan") as wchan, open(f"/proc/{pid}/stat") as stat:
            return wchan.read() not in ("", "0") and stat.read().rsplit(")", 1)[1].split()[0] == "S"
    except OSError:
        return True


def wait_until_in_position(waiting_on):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (in_position(waiting_on()) and tracker_asleep()):
        time.sleep(0.01)
    os.write(3, f"ready {os.getpid()} {workers[0]} {workers[1]}\n".encode())
    os.close(3)


if threadpool:
    pool = multiprocessing.pool.ThreadPool(2)
    other = multiprocessing.pool.ThreadPool(1)

    def outer(_):
        record_worker()
        both_outer_tasks_run.wait()
        return (pool if own_pool else other).apply(inner)  # where: apply

    def inner_results():
        # the inner tasks' results, each with a waiter on its event: its worker sleeps in apply()
        target = pool if own_pool else other
        return [len(r._event._cond._waiters) == 1 for r in list(target._cache.values())
                if not isinstance(r, multiprocessing.pool.MapResult)]

    mapped = pool.map_async(outer, range(2))
    wait_until_in_position(inner_results)
    mapped.get()  # the main thread waits too, as pool.map() does
else:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    other = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    inner_futures = []

    def outer():
        both_outer_tasks_run.wait()
        future = (pool if own_pool else other).submit(inner)
        with lock:
            inner_futures.append(future)
        record_worker()
        return future.result()  # where: result

    def inner_waiters():
        # each outer task sleeps in result(): a waiter on its inner future's condition, asleep in the kernel
        with lock:
            return [len(f._condition._waiters) == 1 for f in inner_futures]

    futures = [pool.submit(outer) for _ in range(2)]
    wait_until_in_position(inner_waiters)
    futures[0].result()  # the main thread waits too
