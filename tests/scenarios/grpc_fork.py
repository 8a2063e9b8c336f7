#!/usr/bin/python3
"""gRPC's channel across fork() (Debian's python3-grpcio).
  grpc_fork.py hang: the parent serves (its server's thread waits in gRPC's epoll_wait()), calls its own server over a
                     channel, then forks; the child calls on the parent's channel, with a 1 s deadline (a call that
                     fails is retried, as clients do). The child keeps the parent's gRPC state but none of its threads:
                     GRPC_ENABLE_FORK_SUPPORT=0 (and, without it, the parent's thread inside gRPC at fork()) makes
                     gRPC skip its fork handlers. In the child's memory the parent's server thread is still gRPC's
                     one polling thread, so the child's call never polls its socket; no timer thread is left to fire
                     its deadline: the first call waits for ever, on a condition variable that only its 200 ms
                     timeouts wake.
  grpc_fork.py healthy: the look-alike: the child is forked before the parent starts gRPC, makes a channel of its
                        own to the parent's server and waits on a call (deadline an hour away) that the server's
                        handler is still working on (it sleeps): slow, not hung.
ready <parent pid> <child pid>"""
import ctypes
import os
import sys
import time

os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
from concurrent import futures  # noqa: E402
import grpc  # noqa: E402

PR_SET_PDEATHSIG = 1
MODE = sys.argv[1] if len(sys.argv) > 1 else "hang"


def ping(request, context):
    return b"pong"


def slow(request, context):
    time.sleep(3600)
    return b""


def serve():
    server = grpc.server(futures.ThreadPoolExecutor(4))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "fixture.Fork", {"Ping": grpc.unary_unary_rpc_method_handler(ping),
                         "Slow": grpc.unary_unary_rpc_method_handler(slow)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


parent = os.getpid()
if MODE == "hang":
    server, port = serve()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    call = channel.unary_unary("/fixture.Fork/Ping")
    for _ in range(3):
        call(b"ping", timeout=5)
    time.sleep(0.3)
    child = os.fork()
    if child == 0:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, 9)
        if os.getppid() != parent:
            os._exit(1)
        for _ in range(1000):  # "hang": one of these calls never returns, deadline or not
            try:
                call(b"ping", timeout=1)
            except grpc.RpcError:
                pass
        os._exit(0)
else:
    port_read, port_write = os.pipe()
    child = os.fork()
    if child == 0:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, 9)
        if os.getppid() != parent:
            os._exit(1)
        os.close(port_write)
        port = int(os.read(port_read, 16))
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        channel.unary_unary("/fixture.Fork/Slow")(b"work", timeout=3600)  # returns in an hour
        os._exit(0)
    os.close(port_read)
    server, port = serve()
    os.write(port_write, f"{port}\n".encode())
    os.close(port_write)


def child_in_position():
    """The child's main thread has waited (on a futex, or in "healthy" mode also in epoll_wait(), woken only by
    gRPC's 200 ms polling timeouts) for 1.5 s, longer than a call's deadline; in "healthy" mode the server's handler has the call too (a
    thread of ours sleeps in it)."""
    try:
        with open(f"/proc/{child}/task/{child}/wchan") as file:
            # "hang": on the condition variable; "healthy": gRPC's own poller, in epoll_wait()
            waits = file.read() in (("futex_do_wait", "futex_wait_queue") if MODE == "hang" else
                                    ("do_epoll_wait", "futex_do_wait", "futex_wait_queue"))
        with open(f"/proc/{child}/task/{child}/status") as file:
            switches = int(next(line for line in file if line.startswith("voluntary_ctxt_switches")).split()[1])
    except (OSError, StopIteration):
        return False
    now = time.monotonic()
    if not waits:
        waiting.clear()
        return False
    waiting.append((now, switches))
    elapsed, woken = now - waiting[0][0], switches - waiting[0][1]
    if elapsed < 1.5 or woken > elapsed * 10:
        if woken > elapsed * 10:
            waiting.clear()
        return False
    if MODE == "hang":
        return True
    sleeping = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/wchan") as file:
                sleeping += file.read() == "hrtimer_nanosleep"
        except OSError:
            pass
    return sleeping > 0


waiting = []
deadline = time.monotonic() + 20
while time.monotonic() < deadline and not child_in_position():
    time.sleep(0.02)
time.sleep(0.5)
os.write(3, f"ready {parent} {child}\n".encode())
os.close(3)
os.waitpid(child, 0)
