#!/usr/bin/python3
"""One endless call (issue 40, "stuck in one call"): a worker thread runs a regular expression that backtracks for
ever, holding the GIL (the re module never releases it), while the main thread joins it.
  stuck_call.py regex    the catastrophic backtrack: (a+)+$ against 'aaaa...b'
ready <pid> <worker tid>"""
import os
import re
import sys
import threading

mode = sys.argv[1]


def backtrack():
    # the ready line comes from here: once the match runs, it holds the GIL and the main thread cannot run again
    os.write(3, f"ready {os.getpid()} {threading.get_native_id()}\n".encode())
    os.close(3)
    re.match(r"(a+)+$", "a" * 64 + "b")


worker = threading.Thread(target=backtrack, name="matcher", daemon=True)
if mode != "regex":
    sys.exit(64)
worker.start()
worker.join()
