"""pgroups' gloo backend against torch's own gloo groups, one torchrun job: the groups of
the mesh tp=2, dp=W/4, pp=2 built by

    loop              torch's new_group for every group of every kind (what a user writes)
    init_device_mesh  torch's DeviceMesh on the CPU for the same mesh
    pgroups           pgroups.ParallelContext(backend="gloo", bootstrap="env") (C++: the
                      agreement, one all-gather of every pair's address, the connections)

alternating in the same job, each timed until every group it made carried one collective
(an all-reduce for torch's, pgroups' all-gather of the global ranks), the slowest rank, the
median of --repeats runs after a warm-up. Eager against eager: TORCH_GLOO_LAZY_INIT must be
unset (it defers torch's connections to the first collective, which the timing includes
anyway). Run by python/bench/compare.py (--gloo-ranks); by hand:

    GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 PYTHONPATH=build/python \\
        .venv/bin/torchrun --standalone --nproc_per_node 8 python/bench/gloo_backend.py --out gloo.json

Writes (rank 0) a JSON object: per case its seconds per run, and the world size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any, Callable, Dict, List

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as c10d

import pgroups


def live_groups() -> List[Any]:
    registry = c10d._world.pg_map if hasattr(c10d, "_world") else c10d._pg_map
    return [pg for pg in registry if pg is not c10d._get_default_group()]


def torch_case(build: Callable[[], None]) -> Callable[[], None]:
    """Builds torch's groups, then one all-reduce on each this rank is in; the groups are
    destroyed after the timing."""
    def run() -> None:
        before = set(live_groups())
        build()
        made = [pg for pg in live_groups() if pg not in before]
        for pg in made:
            dist.all_reduce(torch.ones(1), group=pg)
        run.made = made  # type: ignore[attr-defined]
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    if os.environ.get("TORCH_GLOO_LAZY_INIT"):
        raise SystemExit("gloo_backend.py: unset TORCH_GLOO_LAZY_INIT (eager against eager)")
    dist.init_process_group("gloo")
    size = dist.get_world_size()
    sizes = {"tp": 2, "dp": size // 4, "pp": 2}
    plan = pgroups.Plan(mesh=pgroups.Mesh(sizes))

    def loop() -> None:
        for kind in plan.group_kinds:
            for ranks in plan.groups(kind):
                dist.new_group(ranks)

    def device_mesh() -> None:
        from torch.distributed.device_mesh import init_device_mesh

        init_device_mesh("cpu", (2, size // 4, 2), mesh_dim_names=("pp", "dp", "tp"))

    held: List[pgroups.ParallelContext] = []  # pgroups' context, closed after its timing

    def pgroups_groups() -> None:
        context = pgroups.ParallelContext(mesh=pgroups.Mesh(sizes), backend="gloo", bootstrap="env",
                                          timeout=args.timeout)
        carried = set()  # kinds of one partition share a gloo context: one all-gather each
        for kind in context.group_kinds:
            if context.is_member(kind):
                group = context.get_group(kind)
                if tuple(group.members) not in carried:
                    carried.add(tuple(group.members))
                    group.all_gather(context.get_global_rank())
        held.append(context)

    cases: Dict[str, Callable[[], Any]] = {
        "loop": torch_case(loop),
        "init_device_mesh": torch_case(device_mesh),
        "pgroups": pgroups_groups,
    }
    seconds: Dict[str, List[float]] = {name: [] for name in cases}
    closing: List[float] = []  # pgroups' closing of its contexts, outside the timing
    for repeat in range(args.repeats + 1):  # the first round warms up
        for name, run in cases.items():
            dist.barrier()
            start = time.perf_counter()
            run()
            elapsed = torch.tensor([time.perf_counter() - start])
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
            # Each side's groups are closed after its timing.
            for pg in getattr(run, "made", []):
                dist.destroy_process_group(pg)
            if name == "pgroups":
                start = time.perf_counter()
                held.pop().destroy()
                closing.append(time.perf_counter() - start)
            if repeat > 0:
                seconds[name].append(float(elapsed))
    if dist.get_rank() == 0:
        result = {"world_size": size, "seconds": seconds, "pgroups_closing_s": statistics.median(closing[1:]),
                  "median": {name: statistics.median(values) for name, values in seconds.items()}}
        print(json.dumps({**result["median"], "pgroups_closing": result["pgroups_closing_s"]}))
        if args.out:
            with open(args.out, "w") as out:
                json.dump(result, out)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
