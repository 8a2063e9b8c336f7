#!/usr/bin/python3
"""A pexpect session whose child writes more than its terminal holds (issue 40, pseudo-terminals).
  pexpect_pty.py wait:    child.wait() without reading: `yes` blocks writing its full pty, and the parent, the
                          only reader of the pty's master, waits for it to exit (pexpect's documented trap)
  pexpect_pty.py expect:  the look-alike: child.expect(pexpect.EOF) reads the master while a shell loop writes a
                          line every 50 ms
ready <parent pid> <child pid>"""
import ctypes
import os
import sys
import time

import pexpect

PR_SET_PDEATHSIG = 1
SIGKILL = 9


def die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, SIGKILL)


def blocked_in_write(pid):
    try:
        with open(f"/proc/{pid}/syscall") as text:
            return text.read().split()[0] == "1"  # write(2) on x86_64
    except (OSError, IndexError):
        return False


mode = sys.argv[1]
if mode == "wait":
    child = pexpect.spawn("yes", preexec_fn=die_with_parent)
    deadline = time.monotonic() + 10
    while not blocked_in_write(child.pid):
        if time.monotonic() > deadline:
            sys.exit(1)
        time.sleep(0.01)
    os.write(3, f"ready {os.getpid()} {child.pid}\n".encode())
    os.close(3)
    child.wait()
elif mode == "expect":
    child = pexpect.spawn("/bin/sh", ["-c", "while :; do echo tick; sleep 0.05; done"], preexec_fn=die_with_parent)
    os.write(3, f"ready {os.getpid()} {child.pid}\n".encode())
    os.close(3)
    child.expect(pexpect.EOF, timeout=None)
else:
    sys.exit(64)
