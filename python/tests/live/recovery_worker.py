"""One worker of test_torch_recovery.py: joins the parent's store, creates a plan's groups,
dies by SIGKILL when it is the one to, or else waits for a collective to fail, recovers, and
prints what it ended with as one JSON line."""

import argparse
import datetime
import json
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed import PrefixStore, TCPStore

import pgroups
import pgroups.torch


def peer_sockets(store_port: int) -> dict:
    """This process's established TCP connections but those to the store (gloo's pairs):
    socket inode -> [local port, remote port]."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    sockets = {}
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                ports = [int(address.rsplit(":", 1)[1], 16) for address in fields[1:3]]
                if fields[3] == "01" and fields[9] in inodes and store_port not in ports:
                    sockets[fields[9]] = ports
    return sockets


def old_sockets_left(store_port: int, old: dict, seconds: float = 10.0) -> dict:
    """The old world's connections still open after up to ``seconds``: gloo closes an
    aborted pair's socket on its own thread, so a loaded machine may lag behind recover."""
    deadline = time.monotonic() + seconds
    while True:
        left = {inode: ports for inode, ports in peer_sockets(store_port).items() if inode in old}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mesh", required=True, help="tp=2,dp=2 (fastest first)")
    parser.add_argument("--groups", required=True)
    parser.add_argument("--kill", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=6.0)
    parser.add_argument("--no-heartbeat", action="store_true")
    parser.add_argument("--recover-timeout", type=float, help="recover's timeout (0: none); default --timeout")
    args = parser.parse_args()
    store = TCPStore("127.0.0.1", args.port, is_master=False, timeout=datetime.timedelta(seconds=60))
    dist.init_process_group("gloo", store=PrefixStore(pgroups.torch.default_group_prefix(0), store), rank=args.rank,
                            world_size=args.world, timeout=datetime.timedelta(seconds=args.timeout / 2))
    heartbeat = None if args.no_heartbeat else pgroups.torch.start_heartbeat(store, args.rank)
    mesh = {name: int(size) for name, size in (item.split("=") for item in args.mesh.split(","))}
    plan = pgroups.Plan(mesh=mesh, groups=args.groups.split(","))
    groups = pgroups.torch.create_groups(plan, timeout=args.timeout / 2)
    dist.barrier()
    if args.rank == args.kill:
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        for _ in range(100):
            dist.all_reduce(torch.ones(1))
        raise AssertionError("the collectives went on without the killed rank")
    except RuntimeError:
        pass
    old = peer_sockets(args.port)
    try:
        outcome = pgroups.torch.recover(groups, store=store, step=7 + args.rank,
                                         timeout=args.timeout if args.recover_timeout is None else args.recover_timeout)
    except pgroups.Error as error:
        print(json.dumps({"rank": args.rank, "error": type(error).__name__, "message": str(error)}), flush=True)
        return 0
    result = {"rank": args.rank, "fate": outcome.fate, "new_rank": outcome.rank, "step": outcome.step,
              "rank_map": outcome.recovery.rank_map, "spares": outcome.recovery.spares,
              "world": outcome.plan.world_size, "generation": outcome.generation}
    if outcome.fate == "active":
        new = outcome.groups
        # Before any collective of the new world: recover forms it eager.
        # Sockets recover made, told from the old world's by inode: the new world's pairs.
        result["new_connections"] = {i: p for i, p in peer_sockets(args.port).items() if i not in old}
        result["old_connections_left"] = old_sockets_left(args.port, old)
        result["members"] = {kind: [outcome.recovery.rank_map[r] for r in new.get_ranks_in_group(kind)]
                             for kind in new.kinds}
        # Every new group works: a sum over it of the old ranks.
        sums = {}
        for kind in new.kinds:
            value = torch.tensor([float(args.rank)])
            dist.all_reduce(value, group=new.get_group(kind))
            sums[kind] = value.item()
        result["sums"] = sums
        new.destroy()
        dist.destroy_process_group()
    if heartbeat is not None:
        heartbeat.stop()
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    code = main()
    # Past its result a worker ends at once: torch tears aborted gloo groups down at
    # interpreter exit, which can abort the process after the result was printed.
    sys.stdout.flush()
    os._exit(code)
