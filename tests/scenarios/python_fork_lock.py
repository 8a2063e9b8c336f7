#!/usr/bin/python3
"""A Python worker forked while another thread holds a threading.Lock: the child's acquire() sleeps forever on the
lock's semaphore (a private futex, no owner recorded), while the parent waits for the child with os.waitpid.
ready <parent pid> <child pid>"""
import ctypes
import os
import threading
import time

PR_SET_PDEATHSIG = 1
libc = ctypes.CDLL(None, use_errno=True)

lock = threading.Lock()
held = threading.Event()


def hold_forever():
    lock.acquire()
    held.set()
    while True:
        time.sleep(3600)


threading.Thread(target=hold_forever, name="holder", daemon=True).start()
held.wait()
parent = os.getpid()
child = os.fork()
if child == 0:
    libc.prctl(PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:
        os._exit(1)
    lock.acquire()  # the holder thread stayed in the parent: never returns  # where: acquire
    os._exit(0)

deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    try:
        with open(f"/proc/{child}/wchan") as wchan:
            if "futex" in wchan.read():
                break
    except OSError:
        pass
    time.sleep(0.005)
else:
    os._exit(2)
os.write(3, f"ready {parent} {child}\n".encode())
os.close(3)
os.waitpid(child, 0)
