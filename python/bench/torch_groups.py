"""Time to create every torch process group of a plan: pgroups.torch.create_groups against
Colossal-AI's algorithm, a plain loop of new_group over every group of every mode, in the
same job, alternating which goes first.

    mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 8 \\
        env PYTHONPATH=build/python GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 \\
        /usr/bin/python3 python/bench/torch_groups.py --pipeline 2 --tensor 4 --mode 2d --repeats 3

Rank 0 prints one line per run and the ratio of the medians (slowest rank of each run).
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "live"))

import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402
from torch_world import init_gloo  # noqa: E402

import pgroups  # noqa: E402
import pgroups.torch as pgt  # noqa: E402


def baseline(plan):
    created = []
    for mode in plan.modes:
        for ranks in plan.groups(mode):
            group = dist.new_group(ranks)
            if dist.get_rank() in ranks:
                created.append(group)
    return created


def timed(comm, fn):
    comm.Barrier()
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    return result, comm.allreduce(elapsed, op=MPI.MAX)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", type=int, default=2)
    parser.add_argument("--tensor", type=int, default=4)
    parser.add_argument("--mode", default="2d")
    parser.add_argument("--depth", type=int)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    init_gloo()
    plan = pgroups.Plan(comm.Get_size(), pipeline=args.pipeline, tensor=args.tensor, mode=args.mode,
                        depth=args.depth)
    calls = sum(plan.group_count(m) for m in plan.modes)
    ours, theirs = [], []
    for repeat in range(args.repeats):
        order = ["pgroups", "loop"] if repeat % 2 == 0 else ["loop", "pgroups"]
        for name in order:
            if name == "pgroups":
                groups, seconds = timed(comm, lambda: pgt.create_groups(plan))
                ours.append(seconds)
                last = groups
                groups.destroy()
            else:
                created, seconds = timed(comm, lambda: baseline(plan))
                theirs.append(seconds)
                for group in created:
                    dist.destroy_process_group(group)
            if comm.Get_rank() == 0:
                print(f"run {repeat} {name:8s} {seconds * 1e3:9.1f} ms", flush=True)
    if comm.Get_rank() == 0:
        print(f"{plan!r} on {comm.Get_size()} ranks, torch {__import__('torch').__version__}, "
              f"{len(plan.modes)} modes, {calls} groups")
        print(f"pgroups.torch ({last.method}, {last.calls} calls): median {statistics.median(ours) * 1e3:.1f} ms")
        print(f"new_group loop ({calls} calls): median {statistics.median(theirs) * 1e3:.1f} ms")
        print(f"ratio loop / pgroups = {statistics.median(theirs) / statistics.median(ours):.2f}")


if __name__ == "__main__":
    main()
