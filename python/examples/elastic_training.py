"""A job that loses a rank and goes on: DDP over the dp dimension of a tp x dp mesh on torch
gloo, one rank SIGKILLed at the start of a chosen step, the survivors rebuilt by
pgroups.torch.recover on the layout Plan.after_loss gives them.

    python python/examples/elastic_training.py --nproc 8 --kill-rank 3 --kill-step 3 [--placed]

The parent holds the TCPStore (torchrun's agent would end every worker when one fails; an
in-process-restart launcher keeps the store and the survivors, as this parent does) and
starts the workers. Each worker trains toy_mlp's MLP, split over tp by hand, wrapped in
DDP over its dp group, on toy_mlp's data rule (any number of replicas gives the same
losses). After the loss
the survivors resume from the last step they all completed, with their own weights of that
step; their per-step losses are compared with one process training the unsplit model on
the same global batches. Each survivor prints its losses and `rank N: ok` (N its old rank)
when every one matched within 1e-5 relative, or `rank N: spare` when it was left idle; the
parent exits 0 only then.
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import subprocess
import sys
import time

import toy_mlp as toy


def placed_rank_map(nproc: int):
    """A placement of the tp x dp mesh (as `pgroups place` writes one): mesh rank tp + 2 dp
    runs on launcher rank dp + D tp, so every tp pair spans the job's two halves. A lost
    launcher rank then drops the replica of the mesh rank it runs, not the one its number
    names."""
    replicas = nproc // 2
    return [r // 2 + replicas * (r % 2) for r in range(nproc)]


def worker(args) -> int:
    import torch
    import torch.distributed as dist
    from torch.distributed import PrefixStore, TCPStore
    from torch.nn.parallel import DistributedDataParallel as DDP

    import pgroups.torch
    identity = args.worker
    store = TCPStore("127.0.0.1", args.port, is_master=False, timeout=datetime.timedelta(seconds=args.timeout * 3))
    collective_timeout = datetime.timedelta(seconds=args.timeout / 2)
    dist.init_process_group("gloo", store=PrefixStore(pgroups.torch.default_group_prefix(0), store), rank=identity,
                            world_size=args.nproc, timeout=collective_timeout)
    heartbeat = pgroups.torch.start_heartbeat(store, identity)
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp", tp=2, dp=args.nproc // 2), groups=["tp", "dp"],
                        rank_map=placed_rank_map(args.nproc) if args.placed else None)
    # Collectives time out in half the recovery's timeout: a rank blocked on a dead peer
    # fails and joins the survivors' agreement in time.
    groups = pgroups.torch.create_groups(plan, timeout=args.timeout / 2)

    x, y = toy.make_data(args.steps)
    losses = {}
    snapshots = {}

    def build(groups):
        model = toy.ShardedMlp(groups.get_local_rank("tp"), groups.get_world_size("tp"), groups.get_group("tp"))
        ddp = DDP(model, process_group=groups.get_group("dp"))
        return model, ddp

    model, ddp = build(groups)
    snapshots[0] = [p.detach().clone() for p in model.parameters()]
    step = 0
    recovered = stepped_after = False
    since_loss = 0.0
    while step < args.steps:
        if identity == args.kill_rank and step == args.kill_step and not recovered:
            print(f"rank {identity}: killing itself at the start of step {step}", flush=True)
            store.set("example/killed_at", repr(time.time()))
            os.kill(os.getpid(), signal.SIGKILL)
        try:
            dp, dp_rank = groups.get_world_size("dp"), groups.get_local_rank("dp")
            xb, yb = toy.batch_of(x, y, step, dp_rank, dp)
            losses[step] = toy.sgd_step(model, ddp, xb, yb, groups.get_group("dp"))
            step += 1
            if recovered and not stepped_after:
                stepped_after = True
                print(f"rank {identity}: first step after the loss done "
                      f"{time.time() - float(store.get('example/killed_at').decode()):.2f} s after the kill", flush=True)
            snapshots[step] = [p.detach().clone() for p in model.parameters()]
            print(f"rank {identity}: step {step - 1} loss {losses[step - 1]:.12f} (dp {dp})", flush=True)
        except RuntimeError as failure:
            if recovered:
                raise
            started = time.monotonic()
            print(f"rank {identity}: {time.time():.2f} step {step} failed ({str(failure).splitlines()[0][:80]}); recovering", flush=True)
            # The agreement ends as soon as every survivor joined (about the collective
            # timeout after the loss); the new world's groups get the whole timeout.
            outcome = pgroups.torch.recover(groups, store=store, step=step, timeout=args.timeout)
            recovered = True
            since_loss = time.time() - float(store.get("example/killed_at").decode())
            print(f"rank {identity}: recovered {since_loss:.2f} s after the loss ({time.monotonic() - started:.2f} s "
                  f"after its own failure): {outcome.fate}, new rank "
                  f"{outcome.rank}, resume at step {outcome.step}, {outcome.plan.describe()}, lost {outcome.recovery.lost}, "
                  f"spares {outcome.recovery.spares}", flush=True)
            if outcome.fate == "spare":
                heartbeat.stop()
                print(f"rank {identity}: spare", flush=True)
                return 0
            groups = outcome.groups
            step = outcome.step
            model, ddp = build(groups)
            with torch.no_grad():
                for p, saved in zip(model.parameters(), snapshots[step]):
                    p.copy_(saved)
            for later in [k for k in losses if k >= step]:
                del losses[later]
    expected = toy.reference_losses(args.steps)
    bad = toy.matches([losses[k] for k in range(args.steps)], expected)
    if recovered and since_loss > args.timeout + 5:
        print(f"rank {identity}: recovered {since_loss:.2f} s after the loss, past the timeout {args.timeout} s + 5 s",
              flush=True)
        bad.append(-1)
    for k in bad:
        print(f"rank {identity}: step {k} loss {losses[k]!r} differs from the reference {expected[k]!r}", flush=True)
    heartbeat.stop()
    groups.destroy()
    dist.destroy_process_group()
    print(f"rank {identity}: {'ok' if not bad else 'MISMATCH'}", flush=True)
    return 0 if not bad else 1


def parent(args) -> int:
    from torch.distributed import TCPStore

    store = TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                     timeout=datetime.timedelta(seconds=args.timeout * 3))
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME=os.environ.get("GLOO_SOCKET_IFNAME", "lo"))
    workers = [subprocess.Popen([sys.executable, __file__, "--worker", str(r), "--port", str(store.port),
                                 "--nproc", str(args.nproc), "--kill-rank", str(args.kill_rank), "--kill-step",
                                 str(args.kill_step), "--steps", str(args.steps), "--timeout", str(args.timeout)]
                                + (["--placed"] if args.placed else []),
                                env=env) for r in range(args.nproc)]
    lost = {}
    codes = toy.wait_for(workers, args.timeout * 6 + 120,
                         lambda r: lost.setdefault("at", time.monotonic()) if r == args.kill_rank else None)
    if lost:
        print(f"parent: the survivors ended {time.monotonic() - lost['at']:.1f} s after rank {args.kill_rank} died "
              f"(recovery timeout {args.timeout} s)", flush=True)
    return toy.judge_exits(codes, args.kill_rank)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nproc", type=int, default=8)
    parser.add_argument("--kill-rank", type=int, default=3)
    parser.add_argument("--kill-step", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="the recovery's timeout in seconds (the collectives before the loss get half, so that "
                             "a rank blocked on the dead one fails and joins in time)")
    parser.add_argument("--placed", action="store_true",
                        help="run the mesh under a rank map (mesh rank tp + 2 dp on launcher rank dp + nproc/2 tp)")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.nproc % 2 or args.nproc < 4:
        parser.error(f"--nproc {args.nproc}: the mesh is tp=2 x dp=nproc/2, so an even number of at least 4")
    if not 0 <= args.kill_rank < args.nproc:
        parser.error(f"--kill-rank {args.kill_rank} is not a rank of {args.nproc}")
    if args.worker is None:
        return parent(args)
    toy.end_worker(worker(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
