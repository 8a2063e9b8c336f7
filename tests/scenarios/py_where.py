"""Python threads parked at known lines, for the Python stack reader (probe/python.c, tests/test_python.c). The
lines the test expects are marked with a "# where: NAME" comment, which the test looks up in this file.

Mode "where": nobody holds the GIL.
  - the main thread waits on an Event nobody sets, in outer() -> inner();
  - a Sleeper thread sleeps in Sleeper.run;
  - a locker thread blocks in take_lock() on a Lock the main thread holds;
  - a reporter thread writes the ready line once the three are parked, then sleeps in report_when_parked().
  ready <pid> <main tid> <sleeper tid> <locker tid> <reporter tid>

Mode "gil": a hog thread calls libc's sleep() through ctypes.PyDLL, which keeps the GIL held across the call; a
spinner thread that wakes every 10 ms then waits for the GIL for ever. The main thread waits on an Event as above.
  ready <pid> <main tid> <hog tid> <spinner tid>
The ready line comes just before the hog takes the GIL for good: the test waits until the spinner is in a futex.

Mode "pool": an idle concurrent.futures.ThreadPoolExecutor of 4 workers, each waiting for work in its queue, and
the main thread in a timed sleep between batches: healthy, not hung.
  ready <pid> <main tid> <worker tid> <worker tid> <worker tid> <worker tid>

Mode "churn": a Python process that changes while it is read: threads start and end all the time, each making
garbage (frames freed as soon as they return), and one thread sits 800 calls deep in a recursion (more than the
reader's 512 frames), then sleeps.
  ready <pid> <main tid> <deep thread tid>

Mode "contend": healthy threads that pass the GIL around all the time: two compute in 5 ms bursts and sleep 5 ms,
two sleep 1 ms at a time, the main thread sleeps 5 ms at a time. hangdoc reads the GIL after the last sample: a
thread the sample saw waiting for it may hold it by then, which must never read as a thread waiting for a GIL it
holds itself.
  ready <pid> <main tid>

Every thread is a daemon and the process dies with its parent (PR_SET_PDEATHSIG), so nothing outlives the test.
Runs under any CPython 3.10 to 3.13 (and later), whichever interpreter the test starts it with.
"""
import concurrent.futures
import ctypes
import os
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
PARK_TIMEOUT_S = 10

libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent():
    parent = os.getppid()
    libc.prctl(PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:
        os._exit(1)


def parked(tid, kinds):
    """Whether thread `tid` of this process sleeps in the kernel in a wait whose wchan names one of `kinds`."""
    try:
        with open(f"/proc/self/task/{tid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/self/task/{tid}/wchan") as wchan:
            where = wchan.read()
    except OSError:
        return False
    # a kernel that hides wchan ("0") leaves the state alone to tell
    return state == "S" and (where in ("", "0") or any(kind in where for kind in kinds))


def wait_until_parked(tids, kinds):
    deadline = time.monotonic() + PARK_TIMEOUT_S
    while not all(parked(tid, kinds) for tid in tids):
        if time.monotonic() > deadline:
            os._exit(2)
        time.sleep(0.005)
    time.sleep(0.05)  # settled: a thread that has just parked stays parked


def ready(*tids):
    os.write(3, ("ready " + " ".join(str(tid) for tid in (os.getpid(),) + tids) + "\n").encode())
    os.close(3)


class Sleeper(threading.Thread):
    def run(self):
        self.tid = threading.get_native_id()
        time.sleep(3600)  # where: sleeper


def take_lock(lock, tids):
    tids["locker"] = threading.get_native_id()
    lock.acquire()  # where: locker


def report_when_parked(tids):
    # time.sleep is clock_nanosleep from 3.11, pselect6 in 3.10
    wait_until_parked([tids["main"], tids["sleeper"], tids["locker"]], ("futex", "sleep", "poll"))
    ready(tids["main"], tids["sleeper"], tids["locker"], threading.get_native_id())
    time.sleep(3600)  # where: reporter


def inner():
    threading.Event().wait()  # where: inner


def outer():
    inner()  # where: outer


def where():
    tids = {"main": threading.get_native_id()}
    lock = threading.Lock()
    lock.acquire()
    sleeper = Sleeper(name="sleeper", daemon=True)
    sleeper.start()
    locker = threading.Thread(target=take_lock, args=(lock, tids), name="locker", daemon=True)
    locker.start()
    while not hasattr(sleeper, "tid") or "locker" not in tids:
        time.sleep(0.001)
    tids["sleeper"] = sleeper.tid
    threading.Thread(target=report_when_parked, args=(tids,), name="reporter", daemon=True).start()
    outer()  # where: main


def spin(tids):
    tids["spinner"] = threading.get_native_id()
    while True:
        time.sleep(0.01)  # where: spinner


def hold_the_gil(tids):
    wait_until_parked([tids["main"]], ("futex",))
    ready(tids["main"], threading.get_native_id(), tids["spinner"])
    pythonapi_libc = ctypes.PyDLL(None)  # PyDLL: the GIL stays held during the call
    pythonapi_libc.sleep(3600)  # where: hog


def gil():
    tids = {"main": threading.get_native_id()}
    threading.Thread(target=spin, args=(tids,), name="spinner", daemon=True).start()
    while "spinner" not in tids:
        time.sleep(0.001)
    threading.Thread(target=hold_the_gil, args=(tids,), name="hog", daemon=True).start()
    inner()


def pool():
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=4)
    workers = set()
    started = threading.Barrier(4)

    def task():
        workers.add(threading.get_native_id())
        started.wait()  # four at once: the executor starts a thread for each

    for future in [executor.submit(task) for _ in range(4)]:
        future.result()
    wait_until_parked(sorted(workers), ("futex",))
    ready(threading.get_native_id(), *sorted(workers))
    while True:
        time.sleep(0.2)  # where: between-batches


def recurse(depth, tids):
    if depth == 0:
        tids["deep"] = threading.get_native_id()
        time.sleep(3600)  # where: deep
    recurse(depth - 1, tids)


def short_lived():
    garbage = [object() for _ in range(100)]
    return len(garbage)


def churn():
    sys.setrecursionlimit(5000)
    tids = {}
    threading.Thread(target=recurse, args=(800, tids), name="deep", daemon=True).start()
    while "deep" not in tids:
        time.sleep(0.001)
    announced = False
    while True:
        threads = [threading.Thread(target=short_lived, daemon=True) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if not announced:
            ready(threading.get_native_id(), tids["deep"])
            announced = True


def compute_in_bursts():
    while True:
        started = time.monotonic()
        while time.monotonic() - started < 0.005:
            sum(i * i for i in range(200))
        time.sleep(0.005)


def sleep_often():
    while True:
        time.sleep(0.001)


def contend():
    for target in (compute_in_bursts, compute_in_bursts, sleep_often, sleep_often):
        threading.Thread(target=target, daemon=True).start()
    ready(threading.get_native_id())
    while True:
        time.sleep(0.005)


die_with_parent()
{"where": where, "gil": gil, "pool": pool, "churn": churn, "contend": contend}[sys.argv[1] if len(sys.argv) > 1 else "where"]()  # where: module
