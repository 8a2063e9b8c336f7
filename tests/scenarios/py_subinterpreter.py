"""A thread that runs code in a sub-interpreter (concurrent.interpreters, Python 3.14): hangdoc reads the main
interpreter's threads only, and must say so in a note rather than be silent.
ready <pid> <the thread in the sub-interpreter>"""
import os
import threading
import time
from concurrent import interpreters

interpreter = interpreters.create()
thread = threading.Thread(target=interpreter.exec, args=("import time; time.sleep(600)",), name="in-sub")
thread.start()
deadline = time.monotonic() + 20
while time.monotonic() < deadline and "nanosleep" not in open(f"/proc/self/task/{thread.native_id}/wchan").read():
    time.sleep(0.01)
os.write(3, f"ready {os.getpid()} {thread.native_id}\n".encode())
os.close(3)
thread.join()
