"""A job of WORLD ranks of torch.distributed on the gloo backend over loopback, started the way torchrun starts
them (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT in each rank's environment), each
rank a child of this launcher. After one all_reduce every rank has done (so the process group is up), the ranks go
their ways as MODE says:
  mismatch   rank ODD calls broadcast where the others call all_reduce
  skipped    rank ODD skipped the all_reduce and waits at the barrier after it
  dead       rank ODD dies (exit 1) before the all_reduce; its sockets stay open in a child it forked once the group
             was up, as a rank's forked helper keeps them, so the others are not told and wait
  loading    rank ODD is stuck in its own data loading (its DataLoader's worker takes an hour for a batch) while
             the others wait in all_reduce
  healthy    every rank calls all_reduce every 50 ms, for ever
  torch_collectives.py MODE WORLD ODD
Once in position (about to enter the call MODE gives it) each rank tells the launcher through a pipe; the launcher
then writes "ready <launcher pid> <rank 0 pid> ... <rank WORLD-1 pid> [<pid>]" to fd 3, the last pid the keeper of
mode dead or the DataLoader worker of mode loading. The port of the rendezvous is a free one the launcher finds.
The timeout of the process group is an hour: a test's run ends long before it fires."""
import datetime
import os
import signal
import sys
import time


def tell_position(rank, extra=None):
    """One line to the launcher's pipe: the rank, its pid, and the pid of the process it started, if any."""
    line = "%d %d%s\n" % (rank, os.getpid(), " %d" % extra if extra else "")
    os.write(int(os.environ["HANGDOC_POSITION_FD"]), line.encode())


def rank_main(mode, odd):
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", timeout=datetime.timedelta(hours=1))
    tensor = torch.ones(4)
    dist.all_reduce(tensor)  # every rank: the group works
    if mode == "dead" and rank == odd:
        keeper = os.fork()
        if keeper == 0:
            # holds the process group's sockets open, as a forked helper of a rank does, until the test ends it
            signal.pause()
            os._exit(0)
        tell_position(rank, keeper)
        os._exit(1)
    if mode == "healthy":
        tell_position(rank)
        while True:
            dist.all_reduce(tensor)
            time.sleep(0.05)
    if rank == odd and mode == "mismatch":
        tell_position(rank)
        dist.broadcast(tensor, src=odd)  # where: broadcast
        dist.barrier()
    elif rank == odd and mode == "skipped":
        tell_position(rank)
        dist.barrier()  # where: barrier
    elif rank == odd and mode == "loading":
        load_batches(rank)
    else:
        tell_position(rank)
        dist.all_reduce(tensor)  # where: all_reduce
        dist.barrier()
    signal.pause()


class Stalled:
    """A dataset whose every item takes an hour: a read from a remote store that stalls, retried with back-off."""

    def __len__(self):
        return 1 << 20

    def __getitem__(self, index):
        time.sleep(3600)


def load_batches(rank):
    import torch.utils.data as data
    import multiprocessing

    loader = data.DataLoader(Stalled(), batch_size=1, num_workers=1,
                             multiprocessing_context=multiprocessing.get_context("fork"))
    batches = iter(loader)
    workers = [w.pid for w in batches._workers]
    tell_position(rank, workers[0])
    for _ in batches:  # where: loading
        pass


def free_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launcher(mode, world, odd):
    port = free_port()
    position_read, position_write = os.pipe()
    os.set_inheritable(position_write, True)
    ranks = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   HANGDOC_POSITION_FD=str(position_write),
                   # Debian builds PyTorch 2.x without libuv, which its TCPStore asks for by default
                   USE_LIBUV="0")
        pid = os.fork()
        if pid == 0:
            os.close(position_read)
            os.execve(sys.executable, [sys.executable, __file__, "rank", mode, str(odd)], env)
        ranks.append(pid)
    os.close(position_write)
    extra = []
    with os.fdopen(position_read) as positions:
        for _ in range(world):
            fields = positions.readline().split()
            if not fields:
                sys.exit("a rank ended before it was in position")
            extra += fields[2:]
    os.write(3, ("ready %d %s\n" % (os.getpid(), " ".join([str(p) for p in ranks] + extra))).encode())
    # waits for rank 0 first, as a launcher that waits for its ranks in order: a rank that exits stays a zombie
    os.waitpid(ranks[0], 0)
    signal.pause()


if __name__ == "__main__":
    if sys.argv[1] == "rank":
        rank_main(sys.argv[2], int(sys.argv[3]))
    else:
        launcher(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
