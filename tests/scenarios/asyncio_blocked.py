#!/usr/bin/python3
"""An asyncio event loop blocked in a synchronous call made in one of its own coroutines.
  asyncio_blocked.py self:       the coroutine calls run_coroutine_threadsafe(other(), its own loop).result(): the
                                 loop that was to run other() waits for it, for ever
  asyncio_blocked.py other-loop: the look-alike: the same call on a loop that another thread runs, whose coroutine
                                 sleeps for an hour: slow, not hung (that loop's thread waits with a timeout)
ready <pid>"""
import asyncio
import os
import sys
import threading
import time

mode = sys.argv[1]


async def other():
    await asyncio.sleep(3600)


def report_when_the_main_thread_waits():
    """In position once the main thread sleeps in the kernel on the future; then this thread ends."""
    deadline = time.monotonic() + 10
    main = threading.main_thread().native_id
    while time.monotonic() < deadline:
        with open(f"/proc/self/task/{main}/wchan") as wchan, open(f"/proc/self/task/{main}/syscall") as syscall:
            if "futex" in wchan.read() and syscall.read().split()[0] == "202":
                break
        time.sleep(0.01)
    os.write(3, f"ready {os.getpid()}\n".encode())
    os.close(3)


async def main():
    if mode == "self":
        target = asyncio.get_running_loop()
    else:
        target = asyncio.new_event_loop()
        threading.Thread(target=target.run_forever, daemon=True).start()
    threading.Thread(target=report_when_the_main_thread_waits).start()
    asyncio.run_coroutine_threadsafe(other(), target).result()  # where: result


asyncio.run(main())
