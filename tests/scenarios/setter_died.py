#!/usr/bin/python3
"""A thread waits for a wake-up that no thread left will send: the one that was to died of an exception, or waits
itself for what only the waiting thread could give it.
  setter_died.py event: the main thread waits in Event.wait() for a worker that raised before it set the event
  setter_died.py queue: the main thread waits in Queue.get() for a producer that raised before it put anything
  setter_died.py asyncio: a coroutine awaits a future that the task which was to set it never will (it raised):
                 the event loop idles in its selector for ever
  setter_died.py alive: the look-alike: the worker is still at its job (it sleeps in a loop); slow, not hung
  setter_died.py stop-signal: the look-alike of asyncio: the loop waits for SIGTERM, whose handler sets what its
                 task awaits: a service waiting to be stopped, not hung
  setter_died.py join: the main thread joins a consumer that waits in Queue.get() for the sentinel that would end
                 it, which the main thread never put
  setter_died.py service: the main thread waits in Event.wait() for SIGTERM's handler to set the event: a service
                 waiting to be stopped, which no snapshot tells from a hang
ready <pid> (join: ready <pid> <consumer tid>)"""
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


def in_position():
    """The main thread waits where the mode says, and the threads it waits on have ended or sleep."""
    main = threading.main_thread().native_id
    if mode in ("asyncio", "stop-signal"):
        return asleep_in_the_kernel(main, "poll")
    if mode == "join":
        return len(results.not_empty._waiters) == 1 and asleep_in_the_kernel(consumer.native_id) and \
            asleep_in_the_kernel(main)
    main_waits = len(results.not_empty._waiters) == 1 if mode == "queue" else len(done._cond._waiters) == 1
    worker_settled = mode == "service" or (worker.is_alive() if mode == "alive" else not worker.is_alive())
    return main_waits and worker_settled and asleep_in_the_kernel(main)


def report_when_in_position():
    """Says "ready" once in position (or after 10 s, which the test then sees fail); then this thread ends."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not in_position():
        time.sleep(0.01)
    others = f" {consumer.native_id}" if mode == "join" else ""
    os.write(3, f"ready {os.getpid()}{others}\n".encode())
    os.close(3)


if mode == "join":
    def consume_until_the_sentinel():
        while results.get() is not None:  # where: consume
            pass

    consumer = threading.Thread(target=consume_until_the_sentinel)
    consumer.start()
    threading.Thread(target=report_when_in_position).start()
    consumer.join()  # where: join
    sys.exit(0)
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
