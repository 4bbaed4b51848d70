"""Where a gloo group's construction spends its time on torch 2.x, and what changing how
pgroups builds it would buy: one mpirun job, each variant building this rank's groups of
the mesh tp=2, dp=W/4, pp=2 (three gloo groups) and carrying one all-reduce on each,
alternating, the slowest rank, the median of --repeats runs after a warm-up.

    mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -np 16 \\
        env PYTHONPATH=build/python GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 \\
        .venv/bin/python python/bench/gloo_construction.py [--repeats 5]

Variants (docs/developing/performance.md, "What was tried for create_groups"):

    default   what create_groups does: torch's group helper, one group after another
    threads   the groups built at once, one thread each, each thread with its own client
              of the store (over one client the threads' waits queue behind each other
              and ranks deadlock)
    options   each group's ProcessGroupGloo given a device of its own and one worker
              thread instead of torch's two
    shared    one device for every group of the process, one worker thread
    lazy      TORCH_GLOO_LAZY_INIT: pairs connect at the first collective
    create_groups   pgroups.torch.create_groups itself (share=False), agreement included

Prints per variant the median ms, its ratio to default (above 1: faster than default), the
mean CPU ms per rank (every thread of the process) and how busy the machine was.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import threading
import time
from typing import Any, Callable, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "live"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402
from torch.distributed import distributed_c10d as c10d  # noqa: E402
from torch_world import init_gloo  # noqa: E402

import pgroups  # noqa: E402
import pgroups.torch as pgt  # noqa: E402
from pgroups._torch_create import local_group  # noqa: E402

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
KINDS = ("tp", "dp", "pp")
TIMEOUT = datetime.timedelta(seconds=60)


def machine_ticks() -> List[int]:
    """(all ticks, idle ticks) of the whole machine, from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return [sum(fields), fields[3] + fields[4]]


class Builder:
    """Builds this rank's groups of the plan by one variant; every call a new generation
    of names, so no store key of an earlier run is read."""

    def __init__(self, plan: pgroups.Plan) -> None:
        self.plan = plan
        self.generation = 0
        self.device = dist.ProcessGroupGloo.create_device(interface=os.environ.get("GLOO_SOCKET_IFNAME", "lo"))
        self.clients: Dict[int, Any] = {}

    def name(self, kind: str, variant: str) -> str:
        return f"probe_{self.generation}_{variant}_{kind}_{self.plan.group_index(RANK, kind)}"

    def local_group(self, kind: str, variant: str) -> Any:
        """This rank's group of one kind, by pgroups' own path (what create_groups calls)."""
        name = self.name(kind, variant)
        return local_group(self.plan.group_of(RANK, kind), RANK, name, {"timeout": TIMEOUT, "group_desc": name})

    def helper(self, kind: str, variant: str, store: Any) -> Any:
        """The same through another store client: pgroups' path always takes the default one."""
        members = self.plan.group_of(RANK, kind)
        name = self.name(kind, variant)
        group, _ = c10d._new_process_group_helper(len(members), members.index(RANK), members, c10d.Backend("gloo"),
                                                  pgt.rendezvous_store(store, len(members)), name,
                                                  backend_options=None, timeout=TIMEOUT, group_desc=name)
        c10d._world.pg_group_ranks[group] = {r: i for i, r in enumerate(members)}
        return group

    def build(self, variant: str) -> List[Any]:
        self.generation += 1
        if variant == "threads":
            return self.in_threads(variant)
        if variant == "create_groups":
            groups = pgt.create_groups(self.plan, kinds=KINDS, share=False)
            return [groups.get_group(kind) for kind in KINDS]
        if variant == "lazy":
            os.environ["TORCH_GLOO_LAZY_INIT"] = "1"
        original = c10d.ProcessGroupGloo
        if variant in ("options", "shared"):
            c10d.ProcessGroupGloo = self.gloo_class(shared=variant == "shared")
        try:
            return [self.local_group(kind, variant) for kind in KINDS]
        finally:
            c10d.ProcessGroupGloo = original
            os.environ.pop("TORCH_GLOO_LAZY_INIT", None)

    def in_threads(self, variant: str) -> List[Any]:
        made: List[Any] = [None] * len(KINDS)

        def one(index: int, kind: str) -> None:
            if index not in self.clients:
                self.clients[index] = c10d._get_default_store().clone()
            made[index] = self.helper(kind, variant, self.clients[index])

        threads = [threading.Thread(target=one, args=(i, kind)) for i, kind in enumerate(KINDS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return made

    def gloo_class(self, shared: bool) -> type:
        builder = self

        class Gloo(dist.ProcessGroupGloo):  # torch's helper constructs the class by this name
            def __init__(self, store: Any, rank: int, size: int, timeout: Any = TIMEOUT) -> None:
                options = dist.ProcessGroupGloo._Options()
                options._devices = [builder.device if shared else dist.ProcessGroupGloo.create_device(
                    interface=os.environ.get("GLOO_SOCKET_IFNAME", "lo"))]
                options._threads = 1
                options._timeout = timeout
                super().__init__(store, rank, size, options)

        return Gloo


def timed(build: Callable[[], List[Any]]) -> Dict[str, float]:
    COMM.Barrier()
    cpu, ticks = time.process_time(), machine_ticks()
    start = time.perf_counter()
    groups = build()
    for group in groups:
        dist.all_reduce(torch.ones(1), group=group)
    seconds = time.perf_counter() - start
    after = machine_ticks()
    busy = 1 - (after[1] - ticks[1]) / max(1, after[0] - ticks[0])
    result = dict(ms=COMM.allreduce(seconds, op=MPI.MAX) * 1e3,
                  cpu_ms=COMM.allreduce(time.process_time() - cpu) / SIZE * 1e3, busy=COMM.bcast(busy, root=0))
    for group in groups:
        dist.destroy_process_group(group)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--variants", default="default,threads,options,shared,lazy,create_groups")
    args = parser.parse_args()
    if SIZE % 4:
        raise SystemExit(f"gloo_construction: {SIZE} ranks; the mesh tp=2, dp=W/4, pp=2 needs a multiple of 4")
    init_gloo()
    builder = Builder(pgroups.Plan(mesh={"tp": 2, "dp": SIZE // 4, "pp": 2}))
    variants = args.variants.split(",")
    runs: Dict[str, List[Dict[str, float]]] = {v: [] for v in variants}
    for repeat in range(args.repeats + 1):
        for variant in variants:
            result = timed(lambda v=variant: builder.build(v))
            if repeat:  # the first round warms up
                runs[variant].append(result)
    if RANK == 0:
        base = statistics.median(r["ms"] for r in runs[variants[0]])
        print(f"{SIZE} ranks, torch {torch.__version__}, median of {args.repeats} (slowest rank)")
        print(f"{'variant':13} {'ms':>8} {'vs ' + variants[0]:>12} {'cpu ms/rank':>12} {'busy':>6}")
        for variant in variants:
            ms = statistics.median(r["ms"] for r in runs[variant])
            cpu = statistics.median(r["cpu_ms"] for r in runs[variant])
            busy = statistics.median(r["busy"] for r in runs[variant])
            print(f"{variant:13} {ms:8.1f} {base / ms:11.2f}x {cpu:12.1f} {busy:6.2f}")


if __name__ == "__main__":
    main()
