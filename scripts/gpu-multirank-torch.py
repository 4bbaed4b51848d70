"""gpu-multirank-torch.py: torch's NCCL path of pgroups on several ranks of one GPU (docs/using/gpu-kit.md).

Run by scripts/gpu-check-multirank.sh under torchrun (`--nproc-per-node N`) with
NCCL_MULTI_RANK_GPU_ENABLE=1 and PYTHONPATH at the built pgroups module. Every rank uses
cuda:0 (rank modulo the visible devices); the NCCL default group is bound to that device
so that create_groups can take torch's split_group path. Then, on a mesh tp=2,dp=N/2:
create_groups(plan, backend="nccl") (its method must be split_group where torch has it),
an all-reduce of the global rank on every group it made, and device_mesh(plan, "cuda").
Rank 0 prints lines "row|<N>|<what>|<size>|<seconds>|||<ok or the error>", the rows of the
script's table, and the torch and NCCL versions. Exit 0 when every row is ok, 1 otherwise.
"""

import datetime
import os
import sys
import time

import torch
import torch.distributed as dist


def main() -> int:
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    # device_id binds the default group to the device: torch's split_group needs that.
    kwargs = {"backend": "nccl", "timeout": datetime.timedelta(seconds=120)}
    try:
        dist.init_process_group(device_id=device, **kwargs)
    except TypeError:  # torch < 2.3 has no device_id
        dist.init_process_group(**kwargs)
    import pgroups
    import pgroups.torch as pgt

    rows = []
    ok = True
    if rank == 0:
        nccl = ".".join(str(part) for part in torch.cuda.nccl.version())
        print(f"torch {torch.__version__}, torch's NCCL {nccl}, pgroups from {os.path.dirname(pgroups.__file__)}",
              flush=True)
    plan = pgroups.Plan(mesh={"tp": 2, "dp": world // 2})

    def step(what, size, call):
        nonlocal ok
        dist.barrier()
        start = time.perf_counter()
        try:
            result = call()
            status = "ok"
        except Exception as error:  # reported in the table, not raised: the next rows still run
            result, status = None, f"FAILED: {type(error).__name__}: {error}".replace("|", "/")
        seconds = time.perf_counter() - start
        flag = torch.tensor([0 if status == "ok" else 1], device=device)
        dist.all_reduce(flag)
        if flag.item() != 0 and status == "ok":
            status = "FAILED on another rank"
        ok = ok and status == "ok"
        rows.append(f"row|{world}|{what}|{size}|{seconds:.4f}|||{status}")
        return result

    groups = step("torch create_groups(plan, backend=nccl)", world, lambda: pgt.create_groups(plan, backend="nccl"))
    if groups is not None:
        method = groups.method
        if hasattr(dist, "split_group") and method != "split_group":
            ok = False
            rows.append(f"row|{world}|torch method|{world}||||FAILED: {method}, not split_group")
        else:
            rows.append(f"row|{world}|torch method|{world}||||ok: {method}")
        for name in groups.kinds():
            # Every rank runs every step (each ends in a collective over the world); a rank
            # outside this kind's groups only takes part in that.
            members = groups.get_ranks_in_group(name) if groups.is_member(name) else None

            def check(name=name, members=members):
                if members is None:
                    return
                value = torch.tensor([rank], device=device, dtype=torch.int64)
                dist.all_reduce(value, group=groups.get_group(name))
                torch.cuda.synchronize()
                if value.item() != sum(members):
                    raise RuntimeError(f"sum {value.item()}, expected {sum(members)}")

            step(f"torch all-reduce on '{name}'", groups.get_world_size(name) if members else "", check)
    step("torch device_mesh(plan, 'cuda')", world, lambda: pgt.device_mesh(plan, "cuda"))
    if rank == 0:
        print("\n".join(rows), flush=True)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
