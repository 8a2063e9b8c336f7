#!/usr/bin/python3
"""A thread waits for a wake-up that the thread which was to send it never will: it died of an exception.
  setter_died.py event: the main thread waits in Event.wait() for a worker that raised before it set the event
  setter_died.py queue: the main thread waits in Queue.get() for a producer that raised before it put anything
  setter_died.py asyncio: a coroutine awaits a future that the task which was to set it never will (it raised):
                 the event loop idles in its selector for ever
  setter_died.py alive: the look-alike: the worker is still at its job (it sleeps in a loop); slow, not hung
  setter_died.py stop-signal: the look-alike of asyncio: the loop waits for SIGTERM, whose handler sets what its
                 task awaits: a service waiting to be stopped, not hung
  setter_died.py service: the main thread waits in Event.wait() for SIGTERM's handler to set the event: a service
                 waiting to be stopped, which no snapshot tells from a hang
ready <pid>"""
import asyncio
import os
import queue
import signal
import sys
import threading
import time

mode = sys.argv[1]
done = threading.Event()
results = queue.Queue()


def work():
    if mode == "alive":
        while True:
            time.sleep(0.2)
    raise RuntimeError("the job failed before it said so")  # where: raise


def asleep_in_the_kernel(tid, where="futex"):
    with open(f"/proc/self/task/{tid}/wchan") as wchan:
        return where in wchan.read()


def report_when_in_position():
    """The worker has ended (or sleeps), and the main thread waits; then this thread ends."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if mode in ("asyncio", "stop-signal"):
            if asleep_in_the_kernel(threading.main_thread().native_id, "poll"):
                break
            time.sleep(0.01)
            continue
        main_waits = len(done._cond._waiters) == 1 if mode != "queue" else len(results.not_empty._waiters) == 1
        worker_settled = mode == "service" or (worker.is_alive() if mode == "alive" else not worker.is_alive())
        if main_waits and worker_settled and asleep_in_the_kernel(threading.main_thread().native_id):
            break
        time.sleep(0.01)
    os.write(3, f"ready {os.getpid()}\n".encode())
    os.close(3)


if mode == "service":
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Thread(target=report_when_in_position).start()
    done.wait()  # where: stopped
    sys.exit(0)
# the job's traceback is not the test's output; anything else that raises is
threading.excepthook = lambda args: None if args.exc_type is RuntimeError else sys.__excepthook__(
    args.exc_type, args.exc_value, args.exc_traceback)
async def produce(result):
    raise RuntimeError("the job failed before it set the result")


async def consume():
    result = asyncio.get_running_loop().create_future()
    producer = asyncio.create_task(produce(result))
    threading.Thread(target=report_when_in_position).start()
    await result


async def serve_until_stopped():
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    threading.Thread(target=report_when_in_position).start()
    await stop.wait()


if mode == "asyncio":
    asyncio.run(consume())  # where: run
    sys.exit(0)
if mode == "stop-signal":
    asyncio.run(serve_until_stopped())
    sys.exit(0)
worker = threading.Thread(target=work, daemon=True)
worker.start()
reporter = threading.Thread(target=report_when_in_position)
reporter.start()
if mode == "queue":
    results.get()  # where: get
else:
    done.wait()  # where: wait
