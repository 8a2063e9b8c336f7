#!/usr/bin/python3
"""gRPC across fork() (issue 13): the parent serves and calls an RPC on a channel; a forked child calls an RPC on
the same channel from a worker thread and waits for its result. The call never completes, long past its 1 s
deadline: the child's main thread sleeps without timeout on the future, and the only threads that could wake it
are gRPC's timer threads and the worker ticking in gRPC's wait loop.
ready <parent pid> <child pid>"""
import ctypes
import os
import time
from concurrent import futures

import grpc

PR_SET_PDEATHSIG = 1


def echo(request, context):
    return request


server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
    "hangdoc.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}),))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
channel = grpc.insecure_channel(f"127.0.0.1:{port}")
call = channel.unary_unary("/hangdoc.Echo/Echo")
call(b"parent", timeout=10)
parent = os.getpid()
child = os.fork()
if child == 0:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:
        os._exit(1)
    with futures.ThreadPoolExecutor(1) as pool:
        pool.submit(call, b"child", timeout=1).result()  # never returns
    os._exit(0)
time.sleep(2.5)  # past the call's deadline, and the main thread asleep longer than the tests' --stuck-after
with open(f"/proc/{child}/wchan") as wchan:
    if "futex" not in wchan.read():
        os._exit(2)
os.write(3, f"ready {parent} {child}\n".encode())
os.close(3)
os.waitpid(child, 0)
