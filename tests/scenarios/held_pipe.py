#!/usr/bin/python3
"""A pipe read to its end that a process left behind keeps open (pipe-held-open), and the look-alikes.
  held_pipe.py subprocess:  subprocess.run(capture_output=True) of `sh -c '<holder> & echo started'`: sh exits, the
                            holder (a background job, reparented) keeps sh's stdout and stderr; the reader waits in
                            communicate() for ever, its child sh a zombie
  held_pipe.py bash:        bash's $(sh -c '<holder> & echo started'): bash reaps sh at once, and reads for ever
  held_pipe.py working:     the look-alike: the child itself still writes (it sleeps in a loop): in the tree
  held_pipe.py pipeline:    the look-alike: `producer | consumer` under bash; the consumer, diagnosed alone, reads
                            from its sibling, a producer at work
ready <reader pid> <holder, writer or producer pid> [<consumer pid>]
The roles below are the processes the modes start (holder, writer, producer, consumer)."""
import os
import subprocess
import sys
import time

SCRIPT = os.path.abspath(__file__)
role = sys.argv[1]


def syscall_of(pid):
    try:
        with open(f"/proc/{pid}/syscall") as text:
            return text.read().split()[0]
    except (OSError, IndexError):
        return ""


def zombie_children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as text:
            children = text.read().split()
    except OSError:
        return 0
    count = 0
    for child in children:
        try:
            with open(f"/proc/{child}/stat") as stat:
                count += stat.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            pass
    return count


def report_when(condition, line):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not condition():
        time.sleep(0.01)
    os.write(3, (line + "\n").encode())
    os.close(3)


def sleep_for_ever():
    while True:
        time.sleep(3600)


# read (0) or poll (7) on x86-64; the syscall file names the number
READS = {"0", "7"}

if role == "subprocess":
    subprocess.run(["sh", "-c", f"{sys.executable} {SCRIPT} holder {os.getpid()} $$ zombie & echo started"],
                   capture_output=True, pass_fds=(3,))
elif role == "bash":
    os.execvp("bash", ["bash", "-c", f'x=$(sh -c "{sys.executable} {SCRIPT} holder $$ \\$\\$ reaped & echo started"); '
                                     'echo "$x"'])
elif role == "working":
    subprocess.run(["sh", "-c", f"exec {sys.executable} {SCRIPT} writer {os.getpid()}"], capture_output=True,
                   pass_fds=(3,))
elif role == "pipeline":
    os.execvp("bash", ["bash", "-c", f"{sys.executable} {SCRIPT} producer | {sys.executable} {SCRIPT} consumer $$"])
elif role == "holder":
    # in position once sh has exited (this process adopted) and the reader reads, its child sh a zombie or reaped
    reader, shell = int(sys.argv[2]), int(sys.argv[3])
    report_when(lambda: os.getppid() != shell and syscall_of(reader) in READS and
                (sys.argv[4] != "zombie" or zombie_children(reader) == 1),
                f"ready {reader} {os.getpid()}")
    sleep_for_ever()
elif role == "writer":
    reader = int(sys.argv[2])
    report_when(lambda: syscall_of(reader) in READS, f"ready {reader} {os.getpid()}")
    sleep_for_ever()
elif role == "producer":
    sleep_for_ever()  # holds the pipe, at work
elif role == "consumer":
    shell = int(sys.argv[2])
    with open(f"/proc/{shell}/task/{shell}/children") as text:
        producer = [int(pid) for pid in text.read().split() if int(pid) != os.getpid()][0]
    os.write(3, f"ready {shell} {producer} {os.getpid()}\n".encode())
    os.close(3)
    sys.stdin.buffer.read()
