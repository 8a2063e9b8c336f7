"""A fork() that CPython does not see (issue 16): the main thread calls a C library that forks a helper process
(libgil_callback.so's start_helper_process) through ctypes.CDLL, which releases the GIL for the call; meanwhile
another thread has taken the GIL and holds it through a C call of its own (ctypes.PyDLL keeps it). In the child,
returning from the call needs the GIL, whose holder stayed in the parent: the child waits for it for ever, and the
parent waits for the child. hangdoc must report inherited-lock about the child's thread, the Python GIL held by the
parent's thread. (os.fork() would have handed the child a fresh GIL: C libraries that fork, and ctypes, do not.)
Arguments: the path of libgil_callback.so.
ready <parent pid> <child pid> <the parent's GIL-holding thread tid>"""
import ctypes
import os
import sys
import threading
import time

releasing = ctypes.CDLL(sys.argv[1])  # CDLL: the GIL is released around each call
holding = ctypes.PyDLL(sys.argv[1])  # PyDLL: the GIL is held through the call


def holder(started, go):
    started.append(threading.get_native_id())
    go.wait()  # until the main thread is about to call the library, which lets go of the GIL
    holding.hold_the_gil_ms(400)  # the fork comes 100 ms after that call began
    time.sleep(3600)


def in_futex_wait(pid):
    try:
        with open(f"/proc/{pid}/wchan") as wchan:
            return "futex" in wchan.read()
    except OSError:
        return False


def main():
    started, go = [], threading.Event()
    threading.Thread(target=holder, args=(started, go), daemon=True).start()
    while not started:
        time.sleep(0.01)
    go.set()
    child = releasing.start_helper_process()  # where: fork
    if child == 0:
        os._exit(0)  # never reached: the child waits for the GIL to come back from the call
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not in_futex_wait(child):
        time.sleep(0.02)
    time.sleep(0.3)
    os.write(3, f"ready {os.getpid()} {child} {started[0]}\n".encode())
    os.close(3)
    os.waitpid(child, 0)


main()
