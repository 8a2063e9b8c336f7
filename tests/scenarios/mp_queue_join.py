"""The deadlock that Python's multiprocessing documentation warns about under "Joining processes that use queues":
a child puts an item larger than the pipe holds on a multiprocessing.Queue and the parent join()s it before taking
the item off. The child's queue feeder thread (started in the child, after any fork) blocks writing to the full
pipe; the child's main thread, at exit, joins that feeder; the parent waits for the child in wait4, and it is the
only reader besides the two waiting threads. The same under fork and under spawn: nothing here came through fork.
Under forkserver (Python 3.14's default) the child is the forkserver's, and the parent waits on its sentinel, which
the forkserver writes when the child exits (a relay). "default": the interpreter's default start method.
"METHOD-working": a child that works on, the look-alike.
Writes "pids <parent> <child>" to fd 4 (python_fixture.c).
"""
import multiprocessing
import os
import sys
import time

ITEM_BYTES = 1 << 20  # sixteen times what a Linux pipe holds by default


def put_large_item(queue):
    try:
        os.close(4)  # a forked child inherits the launcher's pipe: it is not part of the scenario
    except OSError:
        pass
    queue.put(b"x" * ITEM_BYTES)
    # returns at once; at exit, multiprocessing joins the feeder thread, which waits for room in the pipe


def keep_working(queue):
    """The look-alike: a child that works on while its parent join()s it; it can still exit."""
    queue.put(b"x")  # small: in the pipe at once
    while True:
        time.sleep(0.05)


def main():
    method, _, variant = sys.argv[1].partition("-")
    context = multiprocessing.get_context(None if method == "default" else method)
    queue = context.Queue()
    target = keep_working if variant == "working" else put_large_item
    child = context.Process(target=target, args=(queue,), name="producer")
    child.start()
    os.write(4, f"pids {os.getpid()} {child.pid}\n".encode())
    os.close(4)
    child.join()  # never returns: the item is never taken off
    queue.get()


if __name__ == "__main__":
    main()
