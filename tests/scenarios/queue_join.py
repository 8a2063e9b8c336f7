#!/usr/bin/python3
"""queue.Queue.join() waiting for tasks that nobody will mark done.
  queue_join.py lost-task-done: two consumer threads; one task is taken and never marked done (the consumer skips
                                task_done() for it): the queue is empty, both consumers wait in get(), the main
                                thread waits in join() for ever
  queue_join.py consumer-died:  one consumer thread, whose task raises: the thread ends without task_done(), and
                                the main thread waits in join() for ever
  queue_join.py working:        the look-alike: the consumer is still at its task (it sleeps in a loop), the main
                                thread waits in join(): slow, not hung
ready <pid> <consumer tid>..."""
import os
import queue
import sys
import threading
import time

mode = sys.argv[1]
tasks = queue.Queue()
consumers = []


def consume():
    while True:
        item = tasks.get()
        if mode == "consumer-died":
            raise RuntimeError(f"task {item} failed")  # where: raise
        if mode == "working":
            while True:
                time.sleep(0.2)
        if item == 2:
            continue  # where: skipped
        tasks.task_done()


def asleep_in_the_kernel(tid):
    try:
        with open(f"/proc/self/task/{tid}/wchan") as wchan:
            return "futex" in wchan.read()
    except OSError:
        return True  # the thread is gone (ENOENT, or ESRCH while it exits)


def report_when_in_position():
    """The main thread waits in join(), and each consumer waits in get() (or has ended); then this thread ends."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        main_waits = len(tasks.all_tasks_done._waiters) == 1
        consumers_settled = {
            "lost-task-done": lambda: len(tasks.not_empty._waiters) == len(consumers),
            "consumer-died": lambda: not any(thread.is_alive() for thread in consumers),
            "working": lambda: tasks.empty(),
        }[mode]()
        idle_consumers_asleep = mode != "lost-task-done" or all(asleep_in_the_kernel(t.native_id) for t in consumers)
        if main_waits and consumers_settled and asleep_in_the_kernel(threading.main_thread().native_id) and \
                idle_consumers_asleep:
            break
        time.sleep(0.01)
    tids = " ".join(str(thread.native_id) for thread in consumers)
    os.write(3, f"ready {os.getpid()} {tids}\n".encode())
    os.close(3)


# the failed task's traceback is not the test's output; anything else that raises is
threading.excepthook = lambda args: None if args.exc_type is RuntimeError else sys.__excepthook__(
    args.exc_type, args.exc_value, args.exc_traceback)
for _ in range(1 if mode != "lost-task-done" else 2):
    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    consumers.append(consumer)
for item in range(4 if mode == "lost-task-done" else 1):
    tasks.put(item)
threading.Thread(target=report_when_in_position).start()
tasks.join()  # where: join
