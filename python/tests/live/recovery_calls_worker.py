"""One worker of test_torch_recovery.py's device path: pgroups.torch.recover with torch's
``fake`` backend standing in for NCCL (no device here), every torch call the rebuild makes
recorded. The fake backend runs no collective, so the killed rank dies before any and the
survivors call recover at once; torch's split_group and shrink_group need a device, so
their stand-ins record the call and make the group they would (one fake group per rank's
partition, a fake world of the remaining ranks). Prints the calls and the outcome as one
JSON line."""

import argparse
import datetime
import json
import os
import signal
import sys

import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d
from torch.distributed import PrefixStore, TCPStore

import torch.testing._internal.distributed.fake_pg  # noqa: F401 - registers the "fake" backend

import pgroups
import pgroups._torch_rebuild
import pgroups.torch

calls = []


def seconds(timeout):
    return None if timeout is None else timeout.total_seconds()


def record(store, can_shrink):
    real_init, real_abort, real_new_group = dist.init_process_group, c10d._abort_process_group, dist.new_group

    def init_process_group(backend, **options):
        calls.append(["init_process_group", backend, options.get("rank"), options.get("world_size"),
                      seconds(options.get("timeout")), options.get("device_id")])
        return real_init(backend, **options)

    def abort_world(group=None):
        calls.append(["abort_world"])
        return real_abort(group)

    def shrink_group(ranks_to_exclude, group=None, shrink_flags=0, pg_options=None):
        calls.append(["shrink_group", list(ranks_to_exclude), shrink_flags])
        rank, world = dist.get_rank(), dist.get_world_size()
        kept = [r for r in range(world) if r not in ranks_to_exclude]
        real_abort()
        real_init("fake", store=PrefixStore("shrunk/", store), rank=kept.index(rank), world_size=len(kept))
        return dist.group.WORLD

    def split_group(parent_pg=None, split_ranks=None, timeout=None, pg_options=None, group_desc=None):
        calls.append(["split_group", split_ranks, seconds(timeout)])
        mine = next(ranks for ranks in split_ranks if dist.get_rank() in ranks)
        return real_new_group(mine, use_local_synchronization=True)

    dist.init_process_group = init_process_group
    c10d._abort_process_group = abort_world
    dist.split_group = split_group
    dist.shrink_group = shrink_group
    # The fake backend says it cannot shrink (supports_shrinking is False): this rank is told
    # whether its NCCL could.
    pgroups._torch_rebuild.can_shrink = lambda: can_shrink


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--kill", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=6.0)
    parser.add_argument("--shrink", choices=("all", "none", "even"), default="all",
                        help="the ranks whose NCCL can shrink")
    args = parser.parse_args()
    store = TCPStore("127.0.0.1", args.port, is_master=False, timeout=datetime.timedelta(seconds=60))
    record(store, args.shrink == "all" or (args.shrink == "even" and args.rank % 2 == 0))
    dist.init_process_group("fake", store=PrefixStore(pgroups.torch.default_group_prefix(0), store), rank=args.rank,
                            world_size=args.world)
    heartbeat = pgroups.torch.start_heartbeat(store, args.rank)
    plan = pgroups.Plan(mesh={"tp": 2, "dp": 2, "pp": 2}, groups=["tp", "dp", "pp"])
    groups = pgroups.torch.create_groups(plan, timeout=args.timeout / 2)
    if args.rank == args.kill:
        os.kill(os.getpid(), signal.SIGKILL)
    del calls[:]
    outcome = pgroups.torch.recover(groups, store=store, step=3, timeout=args.timeout, backend="fake")
    result = {"rank": args.rank, "fate": outcome.fate, "new_rank": outcome.rank, "calls": calls}
    if outcome.fate == "active":
        result["world"] = [dist.get_rank(), dist.get_world_size()]
        result["members"] = {kind: outcome.groups.get_ranks_in_group(kind) for kind in outcome.groups.kinds}
    heartbeat.stop()
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
