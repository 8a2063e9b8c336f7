#!/usr/bin/python3
"""Two Python threads take two threading.Locks in opposite orders (a lock-order deadlock); the main thread joins
the first. CPython's locks record no owner: each thread sleeps on the lock's futex, in PyThread_acquire_lock_timed.
ready <pid> <first tid> <second tid>"""
import os
import threading
import time

first_lock, second_lock = threading.Lock(), threading.Lock()
both_hold_one = threading.Barrier(2)
tids = {}


def take(name, held, wanted):
    tids[name] = threading.get_native_id()
    with held:
        both_hold_one.wait()
        with wanted:  # where: wanted
            pass


first = threading.Thread(target=take, args=("first", first_lock, second_lock), name="first")
second = threading.Thread(target=take, args=("second", second_lock, first_lock), name="second")
first.start()
second.start()
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    # both hold their first lock and are past the barrier (none waits in it): each sleeps on the other's lock
    if len(tids) == 2 and first_lock.locked() and second_lock.locked() and both_hold_one.n_waiting == 0:
        waiting = 0
        for tid in tids.values():
            with open(f"/proc/self/task/{tid}/wchan") as wchan:
                waiting += "futex" in wchan.read()
        if waiting == 2:
            break
    time.sleep(0.01)
os.write(3, f"ready {os.getpid()} {tids['first']} {tids['second']}\n".encode())
os.close(3)
first.join()
