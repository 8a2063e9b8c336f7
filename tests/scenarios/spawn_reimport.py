"""A script without the `if __name__ == '__main__':` guard, run with the spawn start method (issue 16): it takes a
single-instance lock file at module level, then starts a child. The child imports the script again as __mp_main__,
runs its top level, and waits for ever for the lock its parent holds, never reaching its target; the parent waits
in join(). hangdoc must report spawn-reimport about the child, naming the script's line.
Arguments: the lock file's path.
ready <parent pid> <child pid>"""
import fcntl
import multiprocessing
import os
import sys
import time

lock_file = open(sys.argv[1], "w")
fcntl.flock(lock_file, fcntl.LOCK_EX)  # where: flock


def work():
    return 42


context = multiprocessing.get_context("spawn")
child = context.Process(target=work)
child.start()
if multiprocessing.parent_process() is None:
    # the parent only (the child never gets here): say so once the child sleeps on the lock
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(f"/proc/{child.pid}/wchan") as wchan:
            if "lock" in wchan.read():
                break
        time.sleep(0.05)
    time.sleep(0.3)
    os.write(3, f"ready {os.getpid()} {child.pid}\n".encode())
    os.close(3)
    child.join()
