"""Time to create every torch process group of a plan: pgroups.torch.create_groups with
each creation method against Colossal-AI's algorithm, a plain loop of new_group over every
group of every mode, in the same job, alternating which goes first; on torch >= 2.4 also
torch's init_device_mesh against pgroups.torch.device_mesh on the same mesh, with the
process groups each creates.

    mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 16 \\
        env PYTHONPATH=build/python GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 \\
        /usr/bin/python3 python/bench/torch_groups.py --pipeline 2 --tensor 4 --mode 2d --repeats 3

Rank 0 prints one line per run, then per method the median (slowest rank of each run)
and the ratio loop / method (above 1: faster than the loop).
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "live"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402
from torch.distributed import distributed_c10d as c10d  # noqa: E402
from torch_world import init_gloo  # noqa: E402

import pgroups  # noqa: E402
import pgroups.torch as pgt  # noqa: E402


def live_groups():
    world = getattr(c10d, "_world", None)
    return len(world.pg_map) if world is not None and hasattr(world, "pg_map") else len(c10d._pg_map)


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


def torch_mesh(shape, names):
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", shape, mesh_dim_names=names)


def destroy_torch_mesh(mesh):
    for dim in range(mesh.ndim):
        group = mesh.get_group(dim)
        if group is not dist.group.WORLD:
            dist.destroy_process_group(group)


def run(comm, label, create, destroy, times, counts):
    before = live_groups()
    result, seconds = timed(comm, create)
    counts[label] = live_groups() - before
    destroy(result)
    times.setdefault(label, []).append(seconds)
    if comm.Get_rank() == 0:
        print(f"run {len(times[label]) - 1} {label:24s} {seconds * 1e3:9.1f} ms", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", type=int, default=2)
    parser.add_argument("--tensor", type=int, default=4)
    parser.add_argument("--mode", default="2d")
    parser.add_argument("--depth", type=int)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    world = comm.Get_size()
    init_gloo()
    plan = pgroups.Plan(world, pipeline=args.pipeline, tensor=args.tensor, mode=args.mode, depth=args.depth)
    calls = sum(plan.group_count(m) for m in plan.modes)
    methods = [None] + [m for m in pgt.methods_available() if m != "split_group"]  # split_group: NCCL only
    cases = {"loop": (lambda: baseline(plan), lambda created: [dist.destroy_process_group(g) for g in created])}
    for method in methods:
        label = "default (" + pgt.available_method("gloo") + ")" if method is None else method
        cases[label] = (lambda m=method: pgt.create_groups(plan, method=m), lambda groups: groups.destroy())
    # The agreement alone (no kind): what pgroups adds before the first group.
    cases["agreement alone"] = (lambda: pgt.create_groups(plan, modes=[]), lambda groups: groups.destroy())
    meshes = {}
    has_mesh = True
    try:
        from torch.distributed.device_mesh import DeviceMesh  # noqa: F401

        has_mesh = hasattr(DeviceMesh, "from_group")
    except ImportError:
        has_mesh = False
    if has_mesh:
        dp = world // (args.pipeline * args.tensor)
        mesh_plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=args.tensor, dp=dp, pp=args.pipeline))
        shape, names = (args.pipeline, dp, args.tensor), ("pp", "dp", "tp")
        meshes = {"init_device_mesh": (lambda: torch_mesh(shape, names), destroy_torch_mesh),
                  "pgroups.device_mesh": (lambda: pgt.device_mesh(mesh_plan, "cpu"),
                                          lambda mesh: [g.destroy() for g in pgt.mesh_groups(mesh)]),
                  "its create_groups alone": (lambda: pgt.create_groups(mesh_plan), lambda groups: groups.destroy())}
    times, counts = {}, {}
    for repeat in range(args.repeats):
        for group_cases in (cases, meshes):
            order = list(group_cases) if repeat % 2 == 0 else list(reversed(group_cases))
            for label in order:
                create, destroy = group_cases[label]
                run(comm, label, create, destroy, times, counts)
    if comm.Get_rank() == 0:
        print(f"{plan!r} on {world} ranks, torch {torch.__version__}, {len(plan.modes)} modes, {calls} groups")
        loop = statistics.median(times["loop"])
        for label in cases:
            median = statistics.median(times[label])
            print(f"{label:24s} median {median * 1e3:8.1f} ms  loop/this {loop / median:5.2f}x  "
                  f"process groups on rank 0: {counts[label]}")
        if meshes:
            base = statistics.median(times["init_device_mesh"])
            print(f"mesh {dict(zip(names, shape))}:")
            for label in meshes:
                median = statistics.median(times[label])
                print(f"{label:24s} median {median * 1e3:8.1f} ms  init_device_mesh/this {base / median:5.2f}x  "
                      f"process groups on rank 0: {counts[label]}")


if __name__ == "__main__":
    main()
