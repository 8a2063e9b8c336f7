"""A multiprocessing pool started with spawn or forkserver, idle after its first tasks: nothing was inherited
through fork() from the main process, and nothing hangs.
Writes "pids <main> <worker>... [<forkserver>]" to fd 4 (python_fixture.c).
"""
import multiprocessing
import os
import sys
import time


def square(number):
    return number * number


def main():
    method = sys.argv[1]
    context = multiprocessing.get_context(method)
    pool = context.Pool(2)
    assert pool.map(square, range(8)) == [n * n for n in range(8)]
    pids = [os.getpid()] + [worker.pid for worker in pool._pool]
    if method == "forkserver":
        from multiprocessing import forkserver
        pids.append(forkserver._forkserver._forkserver_pid)
    os.write(4, ("pids " + " ".join(map(str, pids)) + "\n").encode())
    os.close(4)
    time.sleep(3600)


if __name__ == "__main__":
    main()
