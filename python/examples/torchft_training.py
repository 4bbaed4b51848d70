"""torchft re-forms the replicated dimension, pgroups builds the kinds inside each replica
group: two replica groups of tp=2, each its own torch world with pgroups' tp group; a
torchft Manager per replica group (its lighthouse in the torchft wheel) all-reduces the
gradients across the replica groups that take part in a step. Replica group 1 loses a rank
(SIGKILL) at a chosen step: group 0 goes on alone, the parent restarts group 1 a few seconds later, which heals
from group 0 (torchft sends it the weights) and takes part again, its tp group rebuilt by
pgroups in its new world. Every step's loss of each group is compared with one process
training the unsplit model (toy_mlp: a step's global batch is split among the replica
groups that take part in it, so any number gives the same losses).

    PYTHONPATH=build/python .venv-resiliency/bin/python python/examples/torchft_training.py

Each worker prints "group G rank R: ok" when its losses matched; the parent exits 0 only
when every worker of the last attempt of each group did, and the killed rank died by its
signal.
"""

import argparse
import datetime
import os
import signal
import subprocess
import sys
import tempfile
import time

import toy_mlp as toy

TP = 2
GROUPS = 2


def worker(args) -> int:
    import torch
    import torch.distributed as dist
    from torchft import Manager, ProcessGroupGloo

    import pgroups
    import pgroups.torch as pgt
    group, rank, attempt = args.group, int(os.environ["RANK"]), args.attempt
    who = f"group {group} rank {rank} (attempt {attempt})"
    seconds = datetime.timedelta(seconds=1)
    # The replica group's own world: the default group over the parent's store of the group.
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                          timeout=args.timeout * 3 * seconds)
    pgt.init_process_group("gloo", store=store, rank=rank, world_size=TP, timeout=args.timeout / 2)
    tp_groups = pgt.create_groups(pgroups.Plan(mesh={"tp": TP}, groups=["tp"]), timeout=args.timeout / 2)
    model = toy.ShardedMlp(tp_groups.get_local_rank("tp"), TP, tp_groups.get_group("tp"))
    params = list(model.parameters())

    def state_dict():
        return {"weights": [p.detach().clone() for p in params]}

    def load_state_dict(state):
        with torch.no_grad():
            for p, saved in zip(params, state["weights"]):
                p.copy_(saved)

    manager = Manager(pg=ProcessGroupGloo(timeout=args.timeout / 2 * seconds), min_replica_size=1,
                      load_state_dict=load_state_dict, state_dict=state_dict, use_async_quorum=False,
                      replica_id=f"group{group}", timeout=args.timeout * seconds,
                      quorum_timeout=args.timeout * 3 * seconds, connect_timeout=args.timeout * seconds)
    x, y = toy.make_data(args.steps)
    expected = toy.reference_losses(args.steps)
    losses = {}
    timed = False
    while manager.current_step() < args.steps:
        step = manager.current_step()
        if attempt == 0 and group == args.kill_group and rank == 0 and step >= args.kill_step:
            print(f"{who}: killed at the start of step {step}", flush=True)
            with open(args.mark, "w") as mark:
                mark.write(repr(time.time()))
            os.kill(os.getpid(), signal.SIGKILL)
        manager.start_quorum()
        # After the quorum: a group that healed from a peer has the peer's step now.
        step = manager.current_step()
        replica, replicas = manager.participating_rank(), manager.num_participants()
        xb, yb = toy.batch_of(x, y, step, replica or 0, max(replicas, 1))
        try:
            loss = ((model(xb) - yb) ** 2).mean()
            for p in params:
                p.grad = None
            loss.backward()
        except RuntimeError as lost:  # a rank of this replica group is gone: the group ends
            print(f"{who}: its replica group lost a rank at step {step} ({str(lost).splitlines()[0][:60]})",
                  flush=True)
            return 3
        works = [manager.allreduce(p.grad) for p in params]
        total = loss.detach().clone()
        works.append(manager.allreduce(total))
        for work in works:
            work.wait()
        if manager.should_commit():  # else the step is retried by the next quorum
            with torch.no_grad():
                for p in params:
                    p -= toy.LR * p.grad
            losses[step] = total.item()
            time.sleep(args.step_seconds)  # a training step's time, so that the groups overlap
            print(f"{who}: step {step} loss {losses[step]:.12f} over {replicas} replica groups", flush=True)
            if not timed and (attempt, group) != (0, args.kill_group) and os.path.getsize(args.mark):
                timed = True
                with open(args.mark) as mark:
                    since = time.time() - float(mark.read())
                print(f"{who}: first step after the kill done {since:.2f} s after it", flush=True)
    bad = [k for k in losses if abs(losses[k] - expected[k]) > 1e-5 * abs(expected[k])]
    manager.shutdown(wait=False)
    tp_groups.destroy()
    dist.destroy_process_group()
    print(f"{who}: {'ok' if not bad else f'MISMATCH at steps {bad}'} (steps {min(losses)}-{max(losses)})",
          flush=True)
    return 0 if not bad else 1


def parent(args) -> int:
    from torch.distributed import TCPStore
    from torchft._torchft import LighthouseServer

    lighthouse = LighthouseServer(bind="127.0.0.1:0", min_replicas=1, join_timeout_ms=2000, quorum_tick_ms=100,
                                  heartbeat_timeout_ms=2000)
    stores = []
    mark = os.path.join(tempfile.mkdtemp(prefix="pgroups-torchft-"), "killed_at")
    open(mark, "w").close()  # empty until the kill

    def start(group: int, attempt: int):
        # A fresh store for each attempt of a group: no key of the dead one is met again.
        store = TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                         timeout=datetime.timedelta(seconds=args.timeout * 6))
        stores.append(store)
        env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME=os.environ.get("GLOO_SOCKET_IFNAME", "lo"),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(store.port), WORLD_SIZE=str(TP),
                   TORCHFT_LIGHTHOUSE=lighthouse.address(), REPLICA_GROUP_ID=str(group))
        here = os.path.dirname(os.path.abspath(__file__))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
        return [subprocess.Popen([sys.executable, __file__, "--worker", "--group", str(group), "--attempt",
                                  str(attempt), "--kill-group", str(args.kill_group), "--kill-step",
                                  str(args.kill_step), "--steps", str(args.steps), "--timeout", str(args.timeout),
                                  "--step-seconds", str(args.step_seconds), "--mark", mark],
                                 env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in range(TP)]

    procs = {g: start(g, 0) for g in range(GROUPS)}
    first_codes, ended, restarted = None, None, False
    limit = time.monotonic() + args.timeout * 12 + 180
    while time.monotonic() < limit:
        if ended is None and all(p.poll() is not None for p in procs[args.kill_group]):
            ended = time.monotonic()
            first_codes = [p.returncode for p in procs[args.kill_group]]
            print(f"parent: replica group {args.kill_group} ended {first_codes}: restarting it in "
                  f"{args.rejoin_after} s", flush=True)
        if first_codes is not None and not restarted and time.monotonic() >= ended + args.rejoin_after:
            procs[args.kill_group] = start(args.kill_group, 1)
            restarted = True
        if restarted and all(p.poll() is not None for ps in procs.values() for p in ps):
            break
        time.sleep(0.1)
    codes = {g: [p.poll() for p in ps] for g, ps in procs.items()}
    for ps in procs.values():
        for p in ps:
            if p.poll() is None:
                p.kill()
    lighthouse.shutdown()
    ok = first_codes is not None and first_codes[0] == -signal.SIGKILL and all(
        code == 0 for cs in codes.values() for code in cs)
    print(f"parent: killed group's first exits {first_codes}, last exits {codes}: {'ok' if ok else 'FAILED'}",
          flush=True)
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kill-group", type=int, default=1)
    parser.add_argument("--kill-step", type=int, default=5,
                        help="the killed group's first step at or past it (it may have joined late)")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--step-seconds", type=float, default=0.5, help="each step's time, a pause after it")
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--rejoin-after", type=float, default=3.0,
                        help="seconds between the killed group's end and its restart (the other goes on alone)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--group", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--attempt", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--mark", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.worker:
        return parent(args)
    toy.end_worker(worker(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
