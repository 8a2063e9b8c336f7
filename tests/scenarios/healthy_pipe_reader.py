"""Look-alikes of subprocess_pipe.py that are not hung: a child writes to a pipe and its parent drains it.

communicate: the child writes a line every 50 ms for ever; the parent reads it all with communicate(), blocked in
             read between lines. Nothing waits for good: the writer sleeps with a timeout.
slow-reader: the child writes as fast as it can, so its write() is blocked on a full pipe almost all the time;
             the parent takes 4 KiB a second. A look of a fraction of a second sees the writer blocked on a full
             pipe without progress, but its reader sleeps with a timeout: the pipe is being drained.
Writes "pids <parent> <child>" to fd 4 (python_fixture.c).
"""
import os
import subprocess
import sys
import time

WRITE_SLOWLY = "import sys, time\nwhile True:\n    sys.stdout.write('tick\\n'); sys.stdout.flush(); time.sleep(0.05)"
WRITE_FAST = "import os\nwhile True:\n    os.write(1, b'x' * (1 << 24))"


def main():
    mode = sys.argv[1]
    program = WRITE_SLOWLY if mode == "communicate" else WRITE_FAST
    child = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE)
    os.write(4, f"pids {os.getpid()} {child.pid}\n".encode())
    os.close(4)
    if mode == "communicate":
        child.communicate()  # the child never ends: reads for ever
    while True:
        os.read(child.stdout.fileno(), 4096)
        time.sleep(1)


if __name__ == "__main__":
    main()
