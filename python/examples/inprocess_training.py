"""A training loop under NVIDIA's in-process restart (nvidia-resiliency-ext's
inprocess.Wrapper) with pgroups' rank assignment: a rank SIGKILLed (rank 0 too), the
wrapper restarts the training function in the surviving processes, pgroups.inprocess
drops the replica that lost it and keeps its healthy ranks as the wrapper's reserves, and
the function builds the new plan's groups over the wrapper's store and resumes from its
checkpoint with the reference losses.

    PYTHONPATH=build/python .venv-resiliency/bin/python python/examples/inprocess_training.py \\
        --nproc 8 --kill-rank 0 --kill-step 3

The parent holds the store (the wrapper's own lives on rank 0 unless one is there already,
and a rank-0 store dies with rank 0; torchrun's agent would stop the survivors) and starts
the workers. Each trains toy_mlp's model on tp=2 x dp=nproc/2 of pgroups groups on gloo.
The wrapper's abort handles NCCL only, so a gloo collective's timeout (--timeout / 2) is
below the wrapper's soft timeout (--timeout). Each active survivor prints "rank N: ok" when
every step's loss matched the reference, each reserve "rank N: reserve"; the parent exits 0
only then, the killed rank dead by its signal.
"""

# No "from __future__ import annotations": the wrapper finds the parameter it fills by its
# annotation, which must be the class itself.
import argparse
import datetime
import os
import pathlib
import signal
import subprocess
import sys
import tempfile

import toy_mlp as toy

TP = 2


def worker(args) -> int:
    import torch
    import torch.distributed as dist
    from nvidia_resiliency_ext import inprocess

    import pgroups.inprocess
    import pgroups.torch as pgt
    launcher_rank = int(os.environ["RANK"])
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp", tp=TP, dp=args.nproc // TP), groups=["tp", "dp"])
    assignment = pgroups.inprocess.PlanRankAssignment(plan)
    root = pathlib.Path(args.checkpoint)
    seconds = datetime.timedelta(seconds=1)

    class ParentHeldStore(inprocess.store.TCPStore):
        """The wrapper's store, which the parent serves: no rank is critical to it."""

        @property
        def critical_ranks(self):
            return ()

    def kill(step: int, root: pathlib.Path) -> None:
        if call.iteration == 0 and launcher_rank == args.kill_rank and step == args.kill_step:
            toy.mark_killed(root, f"rank {launcher_rank}", step)
            os.kill(os.getpid(), signal.SIGKILL)

    @inprocess.Wrapper(store_factory=ParentHeldStore, store_kwargs={"timeout": 60 * seconds},
                       rank_assignment=assignment, monitor_thread_interval=seconds / 2,
                       monitor_process_interval=seconds / 2, heartbeat_interval=seconds / 2,
                       progress_watchdog_interval=seconds / 2, last_call_wait=seconds / 2,
                       heartbeat_timeout=args.timeout * seconds, soft_timeout=args.timeout * seconds,
                       hard_timeout=2 * args.timeout * seconds, barrier_timeout=6 * args.timeout * seconds,
                       completion_timeout=6 * args.timeout * seconds)
    def train(call_wrapper: inprocess.CallWrapper = None):
        nonlocal call
        call = call_wrapper
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        store = dist.PrefixStore(f"train/{call_wrapper.iteration}/", call_wrapper.base_store)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world,
                                timeout=args.timeout / 2 * seconds)
        groups = pgt.create_groups(assignment.plan, timeout=args.timeout / 2)
        who = f"rank {launcher_rank}: iteration {call_wrapper.iteration} as rank {rank} of {world}"
        losses = toy.train(root, args.steps, groups, TP, who, kill)
        bad = toy.matches(losses, toy.reference_losses(args.steps))
        flags = torch.tensor([len(bad)])
        dist.all_reduce(flags)
        groups.destroy()
        dist.destroy_process_group()
        return int(flags), call_wrapper.iteration

    call = None
    result = train()
    if result is None:
        print(f"rank {launcher_rank}: reserve ({assignment.plan.describe()}, lost {sorted(assignment.lost)})",
              flush=True)
        return 0
    mismatches, iteration = result
    if mismatches or iteration == 0:
        print(f"rank {launcher_rank}: {mismatches} losses differ from the reference in iteration {iteration}",
              flush=True)
        return 1
    print(f"rank {launcher_rank}: ok ({assignment.plan.describe()}, lost {sorted(assignment.lost)})", flush=True)
    return 0


def parent(args) -> int:
    from torch.distributed import TCPStore

    store = TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                     timeout=datetime.timedelta(seconds=args.timeout * 6))
    checkpoint = tempfile.mkdtemp(prefix="pgroups-inprocess-")
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME=os.environ.get("GLOO_SOCKET_IFNAME", "lo"),
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(store.port), WORLD_SIZE=str(args.nproc))
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    workers = [subprocess.Popen([sys.executable, __file__, "--worker", "--nproc", str(args.nproc), "--kill-rank",
                                 str(args.kill_rank), "--kill-step", str(args.kill_step), "--steps", str(args.steps),
                                 "--timeout", str(args.timeout), "--checkpoint", checkpoint],
                                env=dict(env, RANK=str(r))) for r in range(args.nproc)]
    return toy.judge_exits(toy.wait_for(workers, args.timeout * 12 + 120), args.kill_rank)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nproc", type=int, default=8)
    parser.add_argument("--kill-rank", type=int, default=0)
    parser.add_argument("--kill-step", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=10.0, help="the wrapper's soft timeout in seconds")
    parser.add_argument("--checkpoint", help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.nproc % TP or args.nproc < 2 * TP:
        parser.error(f"--nproc {args.nproc}: the mesh is tp=2 x dp=nproc/2, so an even number of at least 4")
    if not 0 <= args.kill_rank < args.nproc:
        parser.error(f"--kill-rank {args.kill_rank} is not a rank of {args.nproc}")
    if not args.worker:
        return parent(args)
    toy.end_worker(worker(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
