#!/usr/bin/python3
"""Makes the reports of a simulated many-node job from real ones, for `hangdoc merge`'s tests and benchmark.

    merge_cluster.py --healthy REPORT --out DIR --hosts N [--ranks-per-host K] [--world-size W]
                     [--culprit REPORT --culprit-rank R] [--samples S] [--moving-rank R] [--pid-offsets]
                     [--collective NAME]

REPORT files are real `hangdoc --json` reports of one process tree each. Host i (node-0000, node-0001, ...) gets a
copy of the healthy report, or of the culprit's for the host of rank R; the root process of the copy and K - 1
copies of it with other pids become the host's ranks i*K .. i*K+K-1 (on the culprit's host the root is rank R),
and the other processes of the copy become the root's workers (a DataLoader's, say). Every copy gets its
host name, a boot id, a time taken, and the job labels a real report of a torchrun job carries (process.job);
with --pid-offsets the pids of every host but the culprit's are moved, as they differ from host to host.

The rank processes' main threads get synthetic Python stacks, as a torchrun rank shows them: the culprit rank
waits for a DataLoader batch, every other rank in the collective (all_reduce unless --collective says otherwise).
With --samples S each host writes S reports, 30 s apart (node-0000.s0.json ...); --moving-rank R moves that rank's
stack between them, as a slow rank would.
"""
import argparse
import copy
import json
import os
import uuid

PID_KEYS = {"pid", "ppid", "tid", "owner_pid", "owner_tid", "rank_pid"}
DATALOADER = "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py"
DISTRIBUTED = "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"


def python_frame(function, file, line, entry=False):
    return {"function": function, "file": file, "line": line, "entry": entry}


def training_frames(step_line):
    """The outer frames of every rank: the script, its main(), its training step."""
    return [python_frame("train_step", "/srv/job/train.py", step_line),
            python_frame("main", "/srv/job/train.py", 88),
            python_frame("<module>", "/srv/job/train.py", 95, entry=True)]


def collective_stack(name, step_line=41):
    return [python_frame(name, DISTRIBUTED, 2050),
            python_frame("wrapper", "/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py", 47)] \
        + training_frames(step_line)


def dataloader_stack():
    return [python_frame("Queue.get", "/usr/lib/python3.11/multiprocessing/queues.py", 113),
            python_frame("_MultiProcessingDataLoaderIter._try_get_data", DATALOADER, 1133),
            python_frame("_MultiProcessingDataLoaderIter._get_data", DATALOADER, 1295),
            python_frame("_MultiProcessingDataLoaderIter._next_data", DATALOADER, 1328),
            python_frame("_BaseDataLoaderIter.__next__", DATALOADER, 631)] + training_frames(38)


def shift_pids(value, offset, chain=False):
    """Every pid and tid of a report moved by `offset`: the keys that hold one, and the verdict's chains."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in PID_KEYS and isinstance(item, int) and item > 0:
                value[key] = item + offset
            elif key == "chain" and isinstance(item, list):
                value[key] = [pid + offset if isinstance(pid, int) else pid for pid in item]
            else:
                shift_pids(item, offset)
    elif isinstance(value, list):
        for item in value:
            shift_pids(item, offset)


def job_label(role, rank, rank_pid, arguments, host_index, local_rank):
    return {"role": role, "rank": rank, "world_size": arguments.world_size, "local_rank": local_rank,
            "local_world_size": arguments.ranks_per_host, "group_rank": host_index,
            "rank_variable": "RANK", "rank_pid": rank_pid, "job_id": "4242", "step_id": "0",
            "node_id": host_index, "run_id": "merge-test", "master": "node-0000:29500", "cgroup": None}


def main_thread(process):
    for thread in process.get("threads", []):
        if thread.get("tid") == process["pid"]:
            return thread
    return None


def host_report(template, arguments, host_index, sample, is_culprit):
    report = copy.deepcopy(template)
    offset = 0 if is_culprit or not arguments.pid_offsets else 1000 * (host_index % 97)
    if offset:
        shift_pids(report, offset)
    snapshot = report["snapshot"]
    snapshot["host"] = "node-%04d" % host_index
    snapshot["boot_id"] = str(uuid.uuid5(uuid.NAMESPACE_DNS, "node-%04d" % host_index))
    snapshot["taken_at"] = 1800000000.0 + 30 * sample + host_index / 1000.0
    processes = report["processes"]
    root = processes[0]
    first_rank = host_index * arguments.ranks_per_host
    for process in processes:
        process["job"] = job_label("worker", first_rank, root["pid"], arguments, host_index, 0)
    ranks = [root]
    for extra in range(1, arguments.ranks_per_host):
        clone = copy.deepcopy(root)
        shift_pids(clone, 100000 * extra)
        clone["ppid"] = root["ppid"]
        ranks.append(clone)
        processes.append(clone)
    # the culprit's root (whose workers the report shows) is the culprit rank; its copies take the host's others
    local_ranks = list(range(arguments.ranks_per_host))
    if is_culprit:
        local_ranks.remove(arguments.culprit_rank - first_rank)
        local_ranks.insert(0, arguments.culprit_rank - first_rank)
    for local_rank, process in zip(local_ranks, ranks):
        rank = first_rank + local_rank
        process["job"] = job_label("rank", rank, process["pid"], arguments, host_index, local_rank)
        thread = main_thread(process)
        if thread is None:
            continue
        if is_culprit and rank == arguments.culprit_rank:
            thread["python_frames"] = dataloader_stack()
        elif rank == arguments.moving_rank:
            thread["python_frames"] = collective_stack(arguments.collective, 41 + sample)
        else:
            thread["python_frames"] = collective_stack(arguments.collective)
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--healthy", required=True)
    parser.add_argument("--culprit")
    parser.add_argument("--culprit-rank", type=int, default=-1)
    parser.add_argument("--out", required=True)
    parser.add_argument("--hosts", type=int, required=True)
    parser.add_argument("--ranks-per-host", type=int, default=1)
    parser.add_argument("--world-size", type=int)
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--moving-rank", type=int, default=-1)
    parser.add_argument("--collective", default="all_reduce")
    parser.add_argument("--pid-offsets", action="store_true")
    arguments = parser.parse_args()
    if arguments.world_size is None:
        arguments.world_size = arguments.hosts * arguments.ranks_per_host
    with open(arguments.healthy, encoding="utf-8", errors="surrogateescape") as file:
        healthy = json.load(file)
    culprit = None
    if arguments.culprit:
        with open(arguments.culprit, encoding="utf-8", errors="surrogateescape") as file:
            culprit = json.load(file)
    os.makedirs(arguments.out, exist_ok=True)
    culprit_host = arguments.culprit_rank // arguments.ranks_per_host if culprit else -1
    for host_index in range(arguments.hosts):
        is_culprit = host_index == culprit_host
        for sample in range(arguments.samples):
            report = host_report(culprit if is_culprit else healthy, arguments, host_index, sample, is_culprit)
            name = "node-%04d.json" % host_index if arguments.samples == 1 else \
                "node-%04d.s%d.json" % (host_index, sample)
            with open(os.path.join(arguments.out, name), "w", encoding="utf-8", errors="surrogateescape") as file:
                json.dump(report, file)


if __name__ == "__main__":
    main()
