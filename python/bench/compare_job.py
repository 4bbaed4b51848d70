"""The torch side of python/bench/compare.py, one mpirun job: every front door of pgroups
and what it replaces, alternating in the same job, each timed until every process group
it made has carried one all-reduce (so that a lazily connected group cannot hide its
cost), the slowest rank of each run. Then one more run of each with the default store
wrapped in a counter: torch's group-creation calls and store operations per rank, exact.

Run by compare.py; by hand:

    mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 8 \\
        env PYTHONPATH=build/python GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 \\
        .venv/bin/python python/bench/compare_job.py --out result.json

Writes (rank 0) a JSON object: per case its seconds per run, process groups, new_group
calls, process groups built and store operations of the busiest rank.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "live"))

import colossal_legacy  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402
from torch.distributed import distributed_c10d as c10d  # noqa: E402
from torch_world import CountingStore, init_gloo  # noqa: E402

import pgroups  # noqa: E402
import pgroups.torch as pgt  # noqa: E402

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()


# Counting -----------------------------------------------------------------------------
class Calls:
    """Torch's group-creation calls on this rank: ``new_group`` entries (members and
    non-members alike, as every rank enters every new_group) and process groups built."""

    new_group = 0
    built = 0


def _counted(module: Any, name: str, field: str) -> None:
    original = getattr(module, name)

    @functools.wraps(original)  # keeps the signature, which pgroups.torch inspects
    def counting(*args: Any, **kwargs: Any) -> Any:
        setattr(Calls, field, getattr(Calls, field) + 1)
        return original(*args, **kwargs)

    setattr(module, name, counting)


# Every new_group (torch's own, DeviceMesh's, the frameworks') goes through this helper,
# and every process group built through the next one; both are looked up at call time.
# (torch 1.x has no _new_group_with_tag: its new_group, as the package exports it, is the entry.)
if hasattr(c10d, "_new_group_with_tag"):
    _counted(c10d, "_new_group_with_tag", "new_group")
else:
    _counted(dist, "new_group", "new_group")
_counted(c10d, "_new_process_group_helper", "built")


def _registry() -> Dict[Any, Any]:
    """torch's map of live process groups to (backend, store)."""
    return c10d._world.pg_map if hasattr(c10d, "_world") else c10d._pg_map


def _live_groups() -> List[Any]:
    return [pg for pg in _registry() if pg is not c10d._get_default_group()]


# The cases ------------------------------------------------------------------------------
def plain_loop(plan: pgroups.Plan) -> Callable[[], None]:
    """What a user writes without pgroups: new_group for every group of every kind."""
    def run() -> None:
        for kind in plan.group_kinds:
            for ranks in plan.groups(kind):
                dist.new_group(ranks)
    return run


def colossal_run(registered: bool, parallel: Dict[str, Any]) -> Callable[[], None]:
    """Colossal-AI's legacy ParallelContext.init_parallel_groups(), with its own
    initializers or pgroups' (register())."""
    def run() -> None:
        legacy = colossal_legacy.load()
        from colossalai.legacy.global_variables import tensor_parallel_env as env

        from pgroups import colossal

        env.load()
        context = object.__new__(legacy.ParallelContext)
        legacy.ParallelContext.__init__(context)
        context.load_config(dict(parallel=parallel))
        context._register_dist(RANK, SIZE, dist.GroupMember.WORLD, None, list(range(SIZE)),
                               legacy.ParallelMode.GLOBAL)
        context.add_global_rank(legacy.ParallelMode.GLOBAL, RANK)
        if registered:
            colossal.register()
        try:
            context.init_parallel_groups()
        finally:
            if registered:
                colossal.unregister()
    return run


def megatron_run(own: bool, config: Dict[str, Any]) -> Callable[[], None]:
    def run() -> None:
        if own:
            from megatron.core import parallel_state as ps
        else:
            from pgroups import megatron as ps
        ps.initialize_model_parallel(**config)
    return run


def megatron_cleanup(own: bool) -> None:
    """After the timing: megatron-core's destroy forgets its groups (the job destroys
    them), pgroups' destroys its own."""
    if own:
        from megatron.core import parallel_state as ps
    else:
        from pgroups import megatron as ps
    ps.destroy_model_parallel()


def init_device_mesh(shape: List[int], names: List[str]) -> Callable[[], None]:
    def run() -> None:
        from torch.distributed.device_mesh import init_device_mesh as torch_init

        torch_init("cpu", tuple(shape), mesh_dim_names=tuple(names))
    return run


def has_module(name: str) -> bool:
    try:
        __import__(name)
    except Exception:
        return False
    return True


def cases(args: argparse.Namespace) -> Dict[str, Dict[str, Any]]:
    """Each case: its function, the anchor it is compared with, and its front door."""
    sizes = dict(item.split("=") for item in args.mesh.split(","))
    fixed = 1
    for value in sizes.values():
        if value != "-":
            fixed *= int(value)
    sizes = {name: (SIZE // fixed if value == "-" else int(value)) for name, value in sizes.items()}
    mesh = pgroups.Mesh(sizes)
    plan = pgroups.Plan(mesh=mesh)
    # DeviceMesh's dimensions run slowest first: a mesh's order reversed.
    dims = list(reversed(list(sizes.items())))
    out: Dict[str, Dict[str, Any]] = {
        "loop": dict(run=plain_loop(plan), anchor=None, door="create_groups"),
        "create_groups": dict(run=lambda: pgt.create_groups(plan), anchor="loop", door="create_groups"),
    }
    version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    if version >= (2, 4):
        out["init_device_mesh"] = dict(run=init_device_mesh([s for _, s in dims], [n for n, _ in dims]),
                                       anchor=None, door="device_mesh")
        out["device_mesh"] = dict(run=lambda: pgt.device_mesh(plan, "cpu"), anchor="init_device_mesh",
                                  door="device_mesh")
    if colossal_legacy.load() is not None and version >= (2, 4):
        tensor, mode = (4, "2d") if SIZE % 8 == 0 else (2, "1d")
        parallel = dict(pipeline=2, tensor=dict(size=tensor, mode=mode))
        out["colossal_own"] = dict(run=colossal_run(False, parallel), anchor=None, door="colossal")
        out["colossal_register"] = dict(run=colossal_run(True, parallel), anchor="colossal_own", door="colossal")
    if has_module("megatron.core.parallel_state") and version >= (2, 4):
        config = dict(tensor_model_parallel_size=sizes.get("tp", 1), pipeline_model_parallel_size=sizes.get("pp", 1))
        out["megatron_own"] = dict(run=megatron_run(True, config), anchor=None, door="megatron",
                                   cleanup=lambda: megatron_cleanup(True))
        out["megatron_pgroups"] = dict(run=megatron_run(False, config), anchor="megatron_own", door="megatron",
                                       cleanup=lambda: megatron_cleanup(False))
    return out


def once(run: Callable[[], None], cleanup: Optional[Callable[[], None]] = None) -> Dict[str, Any]:
    """One run of a case: its seconds on the slowest rank, until every group it made
    carried one all-reduce, and the process groups it made here; then they are destroyed."""
    before = set(_live_groups())
    Calls.new_group = Calls.built = 0
    COMM.Barrier()
    start = time.perf_counter()
    run()
    made = [pg for pg in _live_groups() if pg not in before]
    for pg in made:
        dist.all_reduce(torch.zeros(1), group=pg)
    seconds = time.perf_counter() - start
    result = dict(seconds=COMM.allreduce(seconds, op=MPI.MAX),
                  process_groups=COMM.allreduce(len(made), op=MPI.MAX),
                  new_group=COMM.allreduce(Calls.new_group, op=MPI.MAX),
                  built=COMM.allreduce(Calls.built, op=MPI.MAX))
    if cleanup is not None:
        cleanup()
    for pg in made:
        if pg in _registry():
            dist.destroy_process_group(pg)
    return result


def counted(run: Callable[[], None], cleanup: Optional[Callable[[], None]]) -> int:
    """The store operations of one run on the busiest rank."""
    default = c10d._get_default_group()
    backend, store = _registry()[default]
    counter = CountingStore(store)
    _registry()[default] = (backend, counter)
    try:
        once(run, cleanup)
    finally:
        _registry()[default] = (backend, store)
    return COMM.allreduce(counter.ops, op=MPI.MAX)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mesh", default="tp=2,dp=-,pp=2", help="NAME=SIZE,... fastest first; '-' takes the rest")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    init_gloo()
    # The first group of a job pays once for what later ones reuse (the store's clients).
    warm = dist.new_group(list(range(SIZE)))
    dist.barrier(group=warm)
    dist.destroy_process_group(warm)
    table = cases(args)
    if args.only:
        keep = set(args.only.split(","))
        table = {name: case for name, case in table.items() if name in keep}
    runs: Dict[str, List[Dict[str, Any]]] = {name: [] for name in table}
    names = list(table)
    for repeat in range(args.repeats):
        # Alternating order: a slow moment of the machine hits one run of each case.
        for name in (names if repeat % 2 == 0 else list(reversed(names))):
            runs[name].append(once(table[name]["run"], table[name].get("cleanup")))
            if RANK == 0:
                print(f"W={SIZE} run {repeat} {name:18s} {runs[name][-1]['seconds'] * 1e3:9.1f} ms", flush=True)
    # torch 1.x's gloo cannot rendezvous through a store written in Python: no count there.
    countable = int(torch.__version__.split(".")[0]) >= 2
    stores = {name: counted(table[name]["run"], table[name].get("cleanup")) if countable else None
              for name in names}
    if RANK == 0:
        result: Dict[str, Any] = dict(world=SIZE, torch=torch.__version__, mesh=args.mesh, cases={})
        for name in names:
            last = runs[name][-1]
            result["cases"][name] = dict(
                anchor=table[name]["anchor"], door=table[name]["door"],
                seconds=[r["seconds"] for r in runs[name]],
                median_s=statistics.median(r["seconds"] for r in runs[name]),
                process_groups=last["process_groups"], new_group=last["new_group"], built=last["built"],
                store_ops=stores[name])
        with open(args.out, "w") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
