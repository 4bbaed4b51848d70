"""A training loop that torchrun restarts after a SIGKILL and that resumes from its
checkpoint with the reference losses: tp=2 x dp of pgroups groups on torch gloo, the
default group started by pgroups.torch.init_process_group, whose keys each attempt keeps
apart (torch's own default group and init_device_mesh fail the restarted attempt with
"Gloo connectFullMesh failed ... Connection refused" on torch 2.13: the agent's store still
holds the dead attempt's keys).

    PYTHONPATH=build/python GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 \\
        .venv/bin/torchrun --standalone --nproc-per-node 4 --max-restarts 1 \\
        python/examples/torchrun_restart.py --checkpoint DIR --kill-rank 1 --kill-step 3

Attempt 0's rank ``--kill-rank`` SIGKILLs itself at the start of step ``--kill-step``
(``--kill-node`` kills its torchrun agent's whole process group: a node lost, for an
elastic ``--nnodes MIN:MAX`` job). The next attempt makes the job's layout for the world it
got, ``Plan.resized(world)`` (whole replicas of dp; the ranks past it wait as spares),
agrees on the last step every tp shard saved, loads the unsplit model from the shards and
trains on. The model, data and reference are toy_mlp's: the losses of any number of
replicas are those of one process. Rank 0 prints "losses match the reference" and every
rank exits 0 only when every step's loss, before and after the restart, matched.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import signal
import sys

import torch
import torch.distributed as dist
import toy_mlp as toy

import pgroups
import pgroups.torch as pgt

TP = 2


def kill_at(args, attempt: int, rank: int):
    """The hook that kills attempt 0's rank ``--kill-rank`` at the start of ``--kill-step``."""
    def hook(step: int, root: pathlib.Path) -> None:
        if attempt == 0 and rank == args.kill_rank and step == args.kill_step:
            toy.mark_killed(root, f"rank {rank}", step)
            if args.kill_node:
                os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)
    return hook


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True, help="a folder every rank reads and writes (empty at first)")
    parser.add_argument("--dp", type=int, default=2, help="the job's replicas when every rank is there")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--kill-rank", type=int, default=1)
    parser.add_argument("--kill-step", type=int, default=3)
    parser.add_argument("--kill-node", action="store_true", help="kill the rank's torchrun agent and its workers")
    parser.add_argument("--timeout", type=float, default=20.0, help="the groups' timeout in seconds")
    args = parser.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp", tp=TP, dp=args.dp), groups=["tp", "dp"])
    if world != plan.world_size:
        plan = plan.resized(world)  # another number of ranks after an elastic restart
    if rank >= plan.world_size:
        print(f"rank {rank}: spare ({plan.describe()} on {world} ranks)", flush=True)
        return 0
    store, _, _ = next(dist.rendezvous("env://", timeout=datetime.timedelta(seconds=args.timeout)))
    # Attempts counted from 0 here: the one the ranks agreed on, not torchrun's restart
    # count, which each agent keeps for itself (a node restarted for another's failure keeps 0).
    attempt = pgt.init_process_group("gloo", store=store, rank=rank, world_size=plan.world_size,
                                     timeout=args.timeout) - 1
    print(f"rank {rank}: attempt {attempt}, its agent's restart count "
          f"{os.environ.get('TORCHELASTIC_RESTART_COUNT', 'unset')}", flush=True)
    groups = pgt.create_groups(plan, timeout=args.timeout)
    losses = toy.train(pathlib.Path(args.checkpoint), args.steps, groups, TP, f"rank {rank}: attempt {attempt}",
                       kill_at(args, attempt, rank))
    bad = toy.matches(losses, toy.reference_losses(args.steps))
    for k in bad:
        print(f"rank {rank}: step {k} loss {losses[k]!r} differs from the reference", flush=True)
    flags = torch.tensor([len(bad)])
    dist.all_reduce(flags)
    if rank == 0:
        print(json.dumps({"attempt": attempt, "world": world, "losses": losses}), flush=True)
        print("losses match the reference after the restart" if int(flags) == 0 and attempt > 0 else
              f"losses differ on {int(flags)} steps" if int(flags) else "no restart happened", flush=True)
    groups.destroy()
    dist.destroy_process_group()
    return 0 if int(flags) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
