#!/usr/bin/python3
"""Two Python threads take two threading.Locks in opposite orders (a lock-order deadlock). CPython's locks record
no owner: each thread sleeps on the lock's futex, in PyThread_acquire_lock_timed.
  python_lock_order.py join: the main thread joins the first
  python_lock_order.py sleep: the main thread sleeps in a keep-alive loop (while True: time.sleep(...)), and says
                              it is in position once the two have slept 1.5 s
ready <pid> <first tid> <second tid>"""
import os
import sys
import threading
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "join"

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
if mode == "sleep":
    time.sleep(1.5)  # longer than the test's --stuck-after 1s
os.write(3, f"ready {os.getpid()} {tids['first']} {tids['second']}\n".encode())
os.close(3)
if mode == "join":
    first.join()
while True:
    time.sleep(0.5)  # where: keep-alive
