"""One Python process of N threads (argv[1], the main thread included), each but the main one waiting on a
threading.Event of its own that nobody sets: every thread on an ownerless private futex, the pattern of every idle
thread pool, and the case of issue 14. Prints "ready <pid>" once every waiting thread sleeps in futex(2); the main
thread then sleeps in a timed loop. Benchmark target of bench/run.py (--scale)."""
import os
import sys
import threading
import time

FUTEX = {"x86_64": 202, "aarch64": 98}.get(os.uname().machine)


def waits_forever(event, started):
    started.release()
    event.wait()


def sleeps_in_futex(tid):
    """State S in futex(2), from /proc (the syscall number first, 'running' while it runs)."""
    try:
        with open(f"/proc/self/task/{tid}/stat") as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] != "S":
                return False
        with open(f"/proc/self/task/{tid}/syscall") as syscall:
            first = syscall.read().split()[0]
    except (OSError, IndexError):
        return False
    return FUTEX is None or first == str(FUTEX)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    threading.stack_size(256 * 1024)  # 10,000 threads of 8 MiB each would reserve 80 GiB
    started = threading.Semaphore(0)
    events = [threading.Event() for _ in range(count - 1)]
    for event in events:
        threading.Thread(target=waits_forever, args=(event, started), daemon=True).start()
    for _ in events:
        started.acquire()
    main_tid = threading.get_native_id()
    deadline = time.monotonic() + 120
    waiting = [int(tid) for tid in os.listdir("/proc/self/task") if int(tid) != main_tid]
    while waiting and time.monotonic() < deadline:
        waiting = [tid for tid in waiting if not sleeps_in_futex(tid)]
        if waiting:
            time.sleep(0.01)
    if waiting:
        sys.exit(f"python_events: {len(waiting)} threads never slept in futex(2)")
    print(f"ready {os.getpid()}", flush=True)
    while True:
        time.sleep(0.1)


if __name__ == "__main__":
    main()
