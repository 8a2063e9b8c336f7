#!/usr/bin/python3
"""Qt's thread pool across fork() (issue 13).
  qt_fork.py hang: the parent's pool runs a long task; the forked child runs a short one of its own (its pool thread
                   then idles on Qt's 30 s expiry timer) and calls QThreadPool.waitForDone(), which waits for the
                   parent's task too: for ever. Only the child's idle pool thread, on a timer, could wake it.
  qt_fork.py slow: the look-alike: the parent runs a long task on a pool of its own; the child waits for a long task
                   of its own on the global pool, which the parent never used, so the child's pool starts a thread
                   of its own, which sleeps in Python: slow, not hung. (Had the parent's global pool had an idle
                   thread at fork(), the child's pool would hand the task to that thread, which is not in the
                   child: a real hang, which hangdoc calls orphaned-wait.)
ready <parent pid> <child pid>"""
import ctypes
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PyQt5.QtCore import QCoreApplication, QRunnable, QThreadPool  # noqa: E402

PR_SET_PDEATHSIG = 1


class Sleeper(QRunnable):
    def __init__(self, seconds):
        super().__init__()
        self.seconds = seconds

    def run(self):
        time.sleep(self.seconds)


MODE = sys.argv[1] if len(sys.argv) > 1 else "hang"
application = QCoreApplication(sys.argv)
pool = QThreadPool.globalInstance()
parents_own = QThreadPool()
(pool if MODE == "hang" else parents_own).start(Sleeper(3600))
time.sleep(0.3)
parent = os.getpid()
child = os.fork()
if child == 0:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:
        os._exit(1)
    pool.start(Sleeper(0.05 if MODE == "hang" else 3600))
    time.sleep(0.3)
    pool.waitForDone()  # "hang": never returns; "slow": in an hour
    os._exit(0)


def child_in_position():
    """The child's main thread waits in waitForDone(); in "slow" mode its pool's own thread sleeps in the task
    (on a loaded machine the task can still be starting long after the main thread waits: a thread caught on its
    way into time.sleep() looks like a timer that ticks)."""
    def wchan(tid):
        try:
            with open(f"/proc/{child}/task/{tid}/wchan") as file:
                return file.read()
        except OSError:
            return ""
    tids = os.listdir(f"/proc/{child}/task")
    main_waits = "futex" in wchan(child)
    task_sleeps = MODE == "hang" or any("nanosleep" in wchan(tid) for tid in tids if int(tid) != child)
    return main_waits and task_sleeps


deadline = time.monotonic() + 10
while time.monotonic() < deadline and not child_in_position():
    time.sleep(0.05)
time.sleep(0.5)
os.write(3, f"ready {parent} {child}\n".encode())
os.close(3)
os.waitpid(child, 0)
