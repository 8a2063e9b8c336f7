"""The deadlock that Python's multiprocessing documentation warns about under "Joining processes that use queues":
a child puts an item larger than the pipe holds on a multiprocessing.Queue and the parent join()s it before taking
the item off. The child's queue feeder thread (started in the child, after any fork) blocks writing to the full
pipe; the child's main thread, at exit, joins that feeder; the parent waits for the child in wait4, and it is the
only reader besides the two waiting threads. The same under fork and under spawn: nothing here came through fork.
Writes "pids <parent> <child>" to fd 4 (python_fixture.c).
"""
import multiprocessing
import os
import sys

ITEM_BYTES = 1 << 20  # sixteen times what a Linux pipe holds by default


def put_large_item(queue):
    try:
        os.close(4)  # a forked child inherits the launcher's pipe: it is not part of the scenario
    except OSError:
        pass
    queue.put(b"x" * ITEM_BYTES)
    # returns at once; at exit, multiprocessing joins the feeder thread, which waits for room in the pipe


def main():
    context = multiprocessing.get_context(sys.argv[1])
    queue = context.Queue()
    child = context.Process(target=put_large_item, args=(queue,), name="producer")
    child.start()
    os.write(4, f"pids {os.getpid()} {child.pid}\n".encode())
    os.close(4)
    child.join()  # never returns: the item is never taken off
    queue.get()


if __name__ == "__main__":
    main()
