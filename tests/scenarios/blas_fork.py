#!/usr/bin/python3
"""numpy over OpenBLAS's OpenMP build (Debian's libopenblas0-openmp, given by directory, so that the machine's own
BLAS choice stays as it is): a matrix product in the parent starts libgomp's thread pool; a forked child's product
then spins for ever in sched_yield, waiting for pool threads that stayed in the parent (issue 13).
  blas_fork.py DIR hang: the parent multiplies, waits until its pool's threads are asleep again, then forks; the
                         child multiplies. (Forked while the pool's threads were still on their way back, as a loaded
                         machine had it, the child slept on a futex of the pool instead of spinning.)
  blas_fork.py DIR fresh: the healthy look-alike: the parent forks first; the child's products start a pool of its
                          own and run (a long computation, which must not be blamed on fork).
ready <parent pid> <child pid>"""
import ctypes
import os
import sys
import time

directory, mode = sys.argv[1], sys.argv[2]
if os.environ.get("LD_LIBRARY_PATH") != directory:
    os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, LD_LIBRARY_PATH=directory,
                                                                OMP_NUM_THREADS="2"))

import numpy  # noqa: E402  after the exec that picks the BLAS

PR_SET_PDEATHSIG = 1
libc = ctypes.CDLL(None, use_errno=True)
matrix = numpy.ones((400, 400))


def pool_asleep():
    """Every thread but this one asleep in the kernel on a futex: the product's pool idle again."""
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == os.getpid():
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat, open(f"/proc/self/task/{tid}/wchan") as wchan:
                if stat.read().rsplit(")", 1)[1].split()[0] != "S" or "futex" not in wchan.read():
                    return False
        except OSError:
            pass
    return True


if mode == "hang":
    (matrix @ matrix).sum()
    # fork once the pool's threads are back asleep, as after any product that returned long ago
    settled, deadline = 0, time.monotonic() + 10
    while settled < 3 and time.monotonic() < deadline:
        settled = settled + 1 if pool_asleep() else 0
        time.sleep(0.01)
parent = os.getpid()
started_read, started_write = os.pipe()
child = os.fork()
if child == 0:
    libc.prctl(PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:
        os._exit(1)
    os.write(started_write, b"x")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # "hang": the first product never returns
        (matrix @ matrix).sum()
    os._exit(0)
os.close(started_write)
os.read(started_read, 1)
time.sleep(0.5)  # in the product by now: spinning ("hang"), or computing with its own pool ("fresh")
with open(f"/proc/{child}/stat") as stat:
    if stat.read().rsplit(")", 1)[1].split()[0] not in "RS":
        os._exit(2)
os.write(3, f"ready {parent} {child}\n".encode())
os.close(3)
os.waitpid(child, 0)
