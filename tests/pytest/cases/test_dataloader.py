"""PyTorch DataLoader workers forked after the test ran a parallel op (GNU OpenMP, in Debian's torch): each worker
runs a parallel op of its own, which waits for ever in libgomp's copied pool; the test waits for a batch."""
import torch
from torch.utils.data import DataLoader, Dataset

from conftest import record_process


class ParallelItems(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        torch.set_num_threads(2)  # DataLoader set it to 1 in the worker
        matrix = torch.ones(512, 512)  # where: getitem
        return float((matrix @ matrix).sum())


def test_dataloader_worker_hangs_in_openmp():
    torch.set_num_threads(2)
    matrix = torch.ones(512, 512)
    (matrix @ matrix).sum()  # the pytest process's OpenMP pool now has a second thread
    loader = DataLoader(ParallelItems(), batch_size=1, num_workers=2, multiprocessing_context="fork")
    batches = iter(loader)
    for worker in batches._workers:
        record_process(worker.pid)
    next(batches)
