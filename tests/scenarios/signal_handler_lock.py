#!/usr/bin/python3
"""A Python signal handler that takes a lock the code it interrupted holds: the handler runs in the main thread,
between two bytecodes of the interrupted code (or inside a blocking call that the signal interrupted), so that
code cannot go on to release the lock until the handler returns, and the handler waits for it: the main thread
deadlocks itself. (With a periodic timer the next tick wakes the lock's wait and runs the handler again, deeper,
until RecursionError: a one-shot alarm or a signal from outside, SIGTERM or SIGUSR1, hangs for good.)
  signal_handler_lock.py lock: the main loop sleeps holding a threading.Lock; SIGALRM's handler, run once by
                 alarm(), takes the lock
  signal_handler_lock.py flag: the look-alike: the handler only counts the alarm, the main loop sleeps holding the
                 lock and goes on
ready <pid>"""
import os
import signal
import sys
import threading
import time

mode = sys.argv[1]
lock = threading.Lock()
ticks = 0


def on_alarm(signum, frame):
    global ticks
    ticks += 1
    if mode == "lock":
        with lock:  # where: handler-lock
            pass


def in_position():
    """The main thread sleeps on a futex inside the handler, or (flag) the handler has run a few times."""
    if mode == "flag":
        return ticks >= 1
    with open(f"/proc/self/task/{threading.main_thread().native_id}/wchan") as wchan:
        asleep = "futex" in wchan.read()
    return asleep and ticks > 0


def report_when_in_position():
    """Says "ready" once in position (or after 20 s, which the test then sees fail); then this thread ends."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if in_position():
            time.sleep(0.2)  # still there: a lock wait that lasts, not one on its way
            if in_position():
                break
        time.sleep(0.01)
    os.write(3, f"ready {os.getpid()}\n".encode())
    os.close(3)


signal.signal(signal.SIGALRM, on_alarm)
threading.Thread(target=report_when_in_position, daemon=True).start()
signal.setitimer(signal.ITIMER_REAL, 0.3)
while True:
    with lock:
        time.sleep(1)  # where: main-sleep
