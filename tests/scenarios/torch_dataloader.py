"""PyTorch DataLoader workers forked from a parent that ran a parallel op (GNU OpenMP, in Debian's torch).

hang:    each worker raises its thread count back to 2 and runs a parallel op: libgomp's pool was copied without its
         threads, the op waits for ever, and the parent waits for batches that never come.
healthy: the workers hand over their batches and wait for more indices; the parent sleeps.
slow_init: each worker's worker_init_fn takes 40 s (it sleeps) while the parent waits for the first batch: slow,
         not hung (issue 13's look-alike of a hang behind timers).
forkserver: the same hang as Python 3.14 users meet it: a parallel op at the main module's top level, outside the
         main guard, and workers started by the forkserver (3.14's default start method on Linux). The forkserver
         imports the main module before it forks, so GNU OpenMP's pool starts there and every worker inherits it.
forkserver_healthy: the look-alike: the same op under the main guard; the forkserver starts no pool and the workers
         deliver their batches.
Writes "pids <parent> <worker>..." to fd 4 (python_fixture.c).
"""
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

MODE = sys.argv[1]
FORKSERVER = MODE.startswith("forkserver")

if MODE == "forkserver":
    # the top level of the main module: it runs in the forkserver too, which imports this module as __mp_main__
    torch.set_num_threads(2)
    _warm_up = torch.ones(512, 512)
    (_warm_up @ _warm_up).sum()  # where: module-level-op


class ParallelItems(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, index):
        if MODE in ("hang", "forkserver", "forkserver_healthy"):
            torch.set_num_threads(2)  # DataLoader set it to 1 in the worker
            # the parallel fill of torch.ones is the first OpenMP region: it waits for ever
            matrix = torch.ones(512, 512)  # where: getitem
            return float((matrix @ matrix).sum())
        return index


def main():
    torch.set_num_threads(2)
    matrix = torch.ones(512, 512)
    (matrix @ matrix).sum()  # the parent's OpenMP pool now has a second thread
    slow_init = (lambda worker: time.sleep(40)) if MODE == "slow_init" else None
    # the seed's classic is a fork: named, since Python 3.14's default start method is the forkserver
    context = "forkserver" if FORKSERVER else "fork"
    loader = DataLoader(ParallelItems(), batch_size=1, num_workers=2, worker_init_fn=slow_init,
                        multiprocessing_context=context)
    batches = iter(loader)
    pids = [os.getpid()] + [worker.pid for worker in batches._workers]
    if MODE in ("healthy", "forkserver_healthy"):
        next(batches)
    os.write(4, ("pids " + " ".join(map(str, pids)) + "\n").encode())
    os.close(4)
    if MODE in ("hang", "slow_init", "forkserver"):
        next(batches)
    time.sleep(3600)


if __name__ == "__main__":
    main()
