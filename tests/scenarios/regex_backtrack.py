#!/usr/bin/python3
"""A worker thread stuck in one call: a regular expression whose nested quantifier backtracks for ever on a subject
that almost matches, holding the GIL in the engine, while the main thread joins it.
  regex_backtrack.py regex: re.match(r"(a+)+$", "a" * 64 + "b"): about 2**64 steps, in C, in one Python call
  regex_backtrack.py moving: the look-alike: the worker computes as long, but moves through four Python functions,
                 40 ms of the clock in each, round and round
ready <pid> <worker tid>"""
import os
import re
import sys
import threading
import time

mode = sys.argv[1]


def backtrack():
    re.match(r"(a+)+$", "a" * 64 + "b")  # where: match


def squares(until):
    total = 0
    while time.monotonic() < until:
        total += sum(i * i for i in range(100))
    return total


def cubes(until):
    total = 0
    while time.monotonic() < until:
        total += sum(i * i * i for i in range(100))
    return total


def words(until):
    text = ""
    while time.monotonic() < until:
        text = " ".join(str(i) for i in range(100))
    return text


def sorts(until):
    numbers = list(range(200, 0, -1))
    while time.monotonic() < until:
        numbers = sorted(numbers, key=lambda n: -n)
    return numbers


def move_on():
    while True:
        for phase in (squares, cubes, words, sorts):
            phase(time.monotonic() + 0.04)


def report_when_in_position(parent):
    """In a grandchild forked before any thread (the backtracking engine holds the GIL: no thread of the parent could
    report): says "ready" once a thread of the parent other than its main one has run for 0.3 s and the main thread
    sleeps on a futex (its join, or the GIL on its way there), then exits."""
    deadline = time.monotonic() + 10
    found = 0
    while time.monotonic() < deadline and not found:
        time.sleep(0.02)
        try:
            with open(f"/proc/{parent}/task/{parent}/wchan") as wchan:
                waits = "futex" in wchan.read()
            for tid in map(int, os.listdir(f"/proc/{parent}/task")):
                with open(f"/proc/{parent}/task/{tid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                ran_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
                if tid != parent and ran_s >= 0.3 and waits:
                    found = tid
        except OSError:
            pass
    os.write(3, f"ready {parent} {found}\n".encode())
    os._exit(0)


parent = os.getpid()
middle = os.fork()
if middle == 0:  # a grandchild, orphaned at once: no zombie of it stays in the tree
    if os.fork() == 0:
        report_when_in_position(parent)
    os._exit(0)
os.waitpid(middle, 0)
os.close(3)
worker = threading.Thread(target=backtrack if mode == "regex" else move_on, name="worker")
worker.start()
worker.join()  # where: join
