"""A busy Python target for the kill-at-random stress trials (kill_at_random.c): the kinds of thread hangdoc stops,
and whose Python stacks and GIL it reads, each counting its rounds in the counter file kill_at_random reads (the
layout of counter_file.h: change both together).

  computer      computes under the GIL in bursts (about 5 ms of bytecode, then a 5 ms sleep)
  sleeper       time.sleep(0.001) in a loop: a stop interrupts the system call, and the GIL changes hands
  queue waiter  queue.get(timeout=0.02) on a queue nobody fills: a timed lock wait (a futex with a timeout)
  main          time.sleep(0.005) in a loop

usage: python3 busy_target.py COUNTER_FILE; ready line on fd 3 (scenarios/fixture.h): ready <pid>
Every thread is a daemon; kill_at_random sets PR_SET_PDEATHSIG before it execs the interpreter.
"""
import ctypes
import mmap
import os
import queue
import sys
import threading
import time

COUNTER_FILE_MAGIC = b"hdcount1"
COUNTER_FILE_SIZE = 4096
COUNTER_LINE = 64  # a uint64 count, then the name
COUNTER_NAME_MAX = 56
COUNTERS_MAX = 63
READY_FD = 3

COMPUTERS = 2
SLEEPERS = 2
BURST_S = 0.005


class Counters:
    """The counter file, mapped shared; claim() hands out the next counter, named, as a one-element ctypes array."""

    def __init__(self, path):
        with open(path, "r+b") as file:
            self.mapping = mmap.mmap(file.fileno(), COUNTER_FILE_SIZE, mmap.MAP_SHARED)
        self.used = 0

    def claim(self, name):
        if self.used >= COUNTERS_MAX:
            sys.exit(1)
        self.used += 1
        offset = self.used * COUNTER_LINE
        encoded = name.encode()[: COUNTER_NAME_MAX - 1]
        self.mapping[offset + 8 : offset + 8 + len(encoded)] = encoded
        return (ctypes.c_uint64 * 1).from_buffer(self.mapping, offset)

    def publish(self):
        """The header, once every counter is claimed and named."""
        ctypes.c_uint64.from_buffer(self.mapping, 8).value = self.used
        self.mapping[0:8] = COUNTER_FILE_MAGIC


def computer(counter):
    while True:
        started = time.monotonic()
        while time.monotonic() - started < BURST_S:
            sum(i * i for i in range(200))
            counter[0] += 1
        time.sleep(BURST_S)


def sleeper(counter):
    while True:
        time.sleep(0.001)
        counter[0] += 1


def queue_waiter(counter):
    nobody_fills = queue.Queue()
    while True:
        try:
            nobody_fills.get(timeout=0.02)
        except queue.Empty:
            pass
        counter[0] += 1


THREAD_KINDS = [("computer", computer, COMPUTERS), ("sleeper", sleeper, SLEEPERS), ("queue waiter", queue_waiter, 1)]


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(f"usage: busy_target.py COUNTER_FILE (an existing file of {COUNTER_FILE_SIZE} bytes)\n")
        sys.exit(64)
    counters = Counters(sys.argv[1])
    main_counter = counters.claim("main (sleeps)")
    threads = []
    for name, run, count in THREAD_KINDS:
        for number in range(1, count + 1):
            counter = counters.claim(f"{name} {number}")
            threads.append(threading.Thread(target=run, args=(counter,), name=f"{name} {number}", daemon=True))
    counters.publish()
    for thread in threads:
        thread.start()
    os.write(READY_FD, f"ready {os.getpid()}\n".encode())
    os.close(READY_FD)
    while True:
        time.sleep(0.005)
        main_counter[0] += 1


if __name__ == "__main__":
    main()
