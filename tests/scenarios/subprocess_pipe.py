"""The deadlock that the subprocess documentation warns about under Popen.wait(): the parent starts a child with
stdout=PIPE and wait()s for it without reading, and the child writes more than the pipe holds. The child blocks in
write to the full pipe; the parent, its only reader, waits for it in wait4.
Writes "pids <parent> <child>" to fd 4 (python_fixture.c).
"""
import os
import subprocess
import sys

# 1 MiB, sixteen times what a Linux pipe holds, written as programs that mean it do: again after a short write. A
# tracer that stops the writer (hangdoc, to take its stack) ends a pipe write that has moved some bytes with a short
# count (pipe_write returns what it wrote when a signal or a ptrace stop interrupts it), and BufferedWriter.write
# would return that count rather than go on, so that the child would finish and the hang go away.
WRITE_LARGE_OUTPUT = "import os\ndata = b'x' * (1 << 20)\nwhile data:\n    data = data[os.write(1, data):]"


def main():
    child = subprocess.Popen([sys.executable, "-c", WRITE_LARGE_OUTPUT], stdout=subprocess.PIPE)
    os.write(4, f"pids {os.getpid()} {child.pid}\n".encode())
    os.close(4)
    child.wait()  # never returns: nobody reads the child's output


if __name__ == "__main__":
    main()
