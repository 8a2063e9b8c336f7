#!/usr/bin/python3
"""A healthy Python parent: its main thread runs `sleep 0.2` again and again with subprocess.run, which reaps each
child itself (waitpid), while a background thread waits on an Event with a long timeout. Nothing here is hung: the
children that come and go during sampling were reaped by their parent, and the timed wait is a thread at rest.
ready <parent pid>"""
import os
import subprocess
import threading

threading.Thread(target=threading.Event().wait, args=(300,), name="waiter", daemon=True).start()
subprocess.run(["sleep", "0.2"], check=True)
os.write(3, f"ready {os.getpid()}\n".encode())
os.close(3)
while True:
    subprocess.run(["sleep", "0.2"], check=True)
