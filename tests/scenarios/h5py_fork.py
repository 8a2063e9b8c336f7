#!/usr/bin/python3
"""h5py across fork() (Debian's python3-h5py).
  h5py_fork.py hang: the parent opens an HDF5 file; a thread of its own is inside an h5py call when the parent forks
                     (it holds h5py's global lock, phil, as every h5py call does while it runs: here for as long as a
                     slow read takes, by taking phil itself). The child reads the same file: it waits for phil, whose
                     holder stayed in the parent, for ever.
  h5py_fork.py healthy: the look-alike: the parent forks before it touches HDF5; the child opens the file itself,
                        reads it, and waits on a pipe for the parent's next request, which the parent sends after
                        a sleep: idle, not hung.
ready <parent pid> <child pid>"""
import ctypes
import os
import sys
import tempfile
import threading
import time

import h5py
import numpy

PR_SET_PDEATHSIG = 1
MODE = sys.argv[1] if len(sys.argv) > 1 else "hang"
directory = tempfile.mkdtemp(prefix="hangdoc-h5py-")
path = os.path.join(directory, "data.h5")
with h5py.File(path, "w") as file:
    file["samples"] = numpy.arange(1000)
parent = os.getpid()


def in_child(work):
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:
        os._exit(1)
    work()
    os._exit(0)



def remove_file():
    """Gone from the directory before the test can end the tree (SIGKILL runs no cleanup); open files keep it."""
    os.unlink(path)
    os.rmdir(directory)


if MODE == "hang":
    data = h5py.File(path, "r")
    remove_file()
    in_call = threading.Event()

    def slow_read():
        with h5py._objects.phil:  # what every h5py call holds while it runs
            in_call.set()
            time.sleep(3600)

    threading.Thread(target=slow_read, daemon=True).start()
    in_call.wait()
    child = os.fork()
    if child == 0:
        in_child(lambda: data["samples"][0])  # waits for phil for ever
else:
    requests, request_writer = os.pipe()

    def serve():
        with h5py.File(path, "r") as own:
            own["samples"][0]
            os.read(requests, 1)  # the parent's next request

    child = os.fork()
    if child == 0:
        in_child(serve)
    os.close(requests)


def child_waits():
    try:
        with open(f"/proc/{child}/task/{child}/wchan") as file:
            return file.read() in ("futex_do_wait", "futex_wait_queue", "pipe_read", "anon_pipe_read")
    except OSError:
        return False


deadline = time.monotonic() + 20
while time.monotonic() < deadline and not child_waits():
    time.sleep(0.05)
if MODE != "hang":
    remove_file()  # the child has read it
time.sleep(0.5)
os.write(3, f"ready {parent} {child}\n".encode())
os.close(3)
if MODE != "hang":
    time.sleep(3600)  # the next request comes in an hour
    os.write(request_writer, b"r")
os.waitpid(child, 0)
