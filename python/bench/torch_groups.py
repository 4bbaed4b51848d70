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
    methods = {"pgroups": None}
    if pgt.gloo_direct_available():
        methods["gloo_direct"] = "gloo_direct"
    times = {name: [] for name in [*methods, "loop"]}
    last = {}
    for repeat in range(args.repeats):
        order = list(times) if repeat % 2 == 0 else list(reversed(times))
        for name in order:
            if name in methods:
                groups, seconds = timed(comm, lambda: pgt.create_groups(plan, method=methods[name]))
                last[name] = groups
                groups.destroy()
            else:
                created, seconds = timed(comm, lambda: baseline(plan))
                for group in created:
                    dist.destroy_process_group(group)
            times[name].append(seconds)
            if comm.Get_rank() == 0:
                print(f"run {repeat} {name:12s} {seconds * 1e3:9.1f} ms", flush=True)
    if comm.Get_rank() == 0:
        print(f"{plan!r} on {comm.Get_size()} ranks, torch {__import__('torch').__version__}, "
              f"{len(plan.modes)} modes, {calls} groups")
        loop = statistics.median(times["loop"])
        print(f"new_group loop ({calls} calls): median {loop * 1e3:.1f} ms")
        for name, groups in last.items():
            median = statistics.median(times[name])
            print(f"pgroups.torch method={groups.method} ({groups.calls} calls per rank): median "
                  f"{median * 1e3:.1f} ms, loop / pgroups = {loop / median:.2f}")


if __name__ == "__main__":
    main()
