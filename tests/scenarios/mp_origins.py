"""Children of one Python main process by each multiprocessing start method, all idle: a fork child (forked before
any thread of the pools exists, so it inherits no lock), a spawn Pool(2) and a forkserver Pool(1). Nothing hangs,
and nothing came through fork() that could.
Writes "pids <main> <spawn worker> <spawn worker> <fork child> <forkserver> <forkserver child>" to fd 4
(python_fixture.c). The argument is ignored ("all").
"""
import multiprocessing
import os
import time


def square(number):
    return number * number


def main():
    forked = multiprocessing.get_context("fork").Process(target=time.sleep, args=(3600,))
    forked.start()
    spawn_pool = multiprocessing.get_context("spawn").Pool(2)
    assert spawn_pool.map(square, range(8)) == [n * n for n in range(8)]
    forkserver_pool = multiprocessing.get_context("forkserver").Pool(1)
    assert forkserver_pool.map(square, range(8)) == [n * n for n in range(8)]
    from multiprocessing import forkserver
    pids = [os.getpid()] + [worker.pid for worker in spawn_pool._pool] + [forked.pid]
    pids += [forkserver._forkserver._forkserver_pid] + [worker.pid for worker in forkserver_pool._pool]
    os.write(4, ("pids " + " ".join(map(str, pids)) + "\n").encode())
    os.close(4)
    time.sleep(3600)


if __name__ == "__main__":
    main()
