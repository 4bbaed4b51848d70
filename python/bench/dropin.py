"""Colossal-AI's and megatron-core's own group creation against pgroups' drop-ins, side by
side in one job (torch 2.x venv with python/requirements/torch2-nodeps.txt):

  colossal   legacy ParallelContext.init_parallel_groups() with Colossal-AI's own
             initializers, then with pgroups.colossal.register()'s;
  megatron   megatron.core.parallel_state.initialize_model_parallel, then
             pgroups.megatron.initialize_model_parallel, same arguments.

    mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 8 \\
        env PYTHONPATH=build/python GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 \\
        .venv/bin/python python/bench/dropin.py

Rank 0 prints, per framework, the slowest rank's seconds and the number of torch process
groups created (torch.distributed.new_group calls that returned a group on some rank,
counted on rank 0 as calls, since every rank enters Colossal-AI's and megatron-core's),
and the ratio own / pgroups; each side runs twice, in alternating order, and the faster
run counts. Groups stay alive (see test_colossal_dropin.py on torch's
group names).
"""

import argparse
import functools
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "live"))

import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402

import colossal_legacy  # noqa: E402
from torch_world import init_gloo  # noqa: E402

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
_calls = [0]
_new_group = dist.new_group


@functools.wraps(_new_group)  # keeps its signature, which pgroups.torch inspects
def counting_new_group(*args, **kwargs):
    _calls[0] += 1
    return _new_group(*args, **kwargs)


dist.new_group = counting_new_group


def timed(run):
    COMM.Barrier()
    before = _calls[0]
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    calls = _calls[0] - before
    return COMM.allreduce(seconds, op=MPI.MAX), COMM.allreduce(calls, op=MPI.MAX)


def colossal_run(registered, parallel):
    legacy = colossal_legacy.load()
    from colossalai.legacy.global_variables import tensor_parallel_env as env

    from pgroups import colossal

    env.load()
    context = object.__new__(legacy.ParallelContext)
    legacy.ParallelContext.__init__(context)
    context.load_config(dict(parallel=parallel))
    context._register_dist(RANK, SIZE, dist.GroupMember.WORLD, None, list(range(SIZE)), legacy.ParallelMode.GLOBAL)
    context.add_global_rank(legacy.ParallelMode.GLOBAL, RANK)
    if registered:
        colossal.register()
    try:
        context.init_parallel_groups()
    finally:
        colossal.unregister()


def megatron_run(own, config):
    if own:
        from megatron.core import parallel_state as ps
    else:
        from pgroups import megatron as ps
    ps.initialize_model_parallel(**config)
    if own:
        ps.destroy_model_parallel()  # forgets the groups, does not destroy them
    else:
        ps._state = ps._State()  # likewise: keep the groups alive, forget them


def best(first, second, runs=2):
    """Alternating order, the faster of each side's runs (time; the group counts are the
    same every run)."""
    own, ours = [], []
    for i in range(runs):
        for side, results in ((first, own), (second, ours))[:: 1 if i % 2 == 0 else -1]:
            results.append(timed(side))
    return min(own), min(ours)


def report(name, own, ours):
    if RANK == 0:
        print(f"{name:9s} W={SIZE:<3d} own {own[0]:8.3f} s {own[1]:4d} groups | pgroups {ours[0]:8.3f} s "
              f"{ours[1]:4d} groups | own/pgroups time {own[0] / ours[0]:5.2f}x, groups {own[1] / max(ours[1], 1):5.2f}x",
              flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip", choices=["colossal", "megatron"], action="append", default=[])
    args = parser.parse_args()
    init_gloo()
    # Warm-up: the first group of a job pays for connections that later ones reuse.
    warm = _new_group(list(range(SIZE)))
    dist.barrier(group=warm)
    if "colossal" not in args.skip:
        parallel = dict(pipeline=2, tensor=dict(size=4, mode="2d"))
        own, ours = best(lambda: colossal_run(False, parallel), lambda: colossal_run(True, parallel))
        report("colossal", own, ours)
    if "megatron" not in args.skip:
        config = dict(tensor_model_parallel_size=2, pipeline_model_parallel_size=2, expert_model_parallel_size=2,
                      expert_tensor_parallel_size=1)
        own, ours = best(lambda: megatron_run(True, config), lambda: megatron_run(False, config))
        report("megatron", own, ours)


if __name__ == "__main__":
    main()
