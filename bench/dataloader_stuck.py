"""A PyTorch DataLoader whose worker is stuck: __getitem__ waits on a lock that will never be released.
Prints "ready <main pid> <worker pid>" once the worker sleeps in it. Benchmark target of bench/run.sh."""
import os
import sys
import threading
import time

import torch
from torch.utils.data import DataLoader, Dataset

never_released = threading.Lock()
never_released.acquire()


class StuckDataset(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        never_released.acquire()  # the copy in the worker was taken before fork: never released
        return torch.zeros(1)


def announce(parent):
    deadline = time.time() + 60
    while time.time() < deadline:
        children = open(f"/proc/{parent}/task/{parent}/children").read().split()
        if children:
            worker = children[0]
            time.sleep(2)  # its first __getitem__ is reached within this
            print(f"ready {parent} {worker}", flush=True)
            return
        time.sleep(0.1)


if __name__ == "__main__":
    threading.Thread(target=announce, args=(os.getpid(),), daemon=True).start()
    # forked, whatever the interpreter's default (Python 3.14's is the forkserver): the worker is the parent's child
    for batch in DataLoader(StuckDataset(), num_workers=1, timeout=0, multiprocessing_context="fork"):
        pass
    sys.exit(1)
