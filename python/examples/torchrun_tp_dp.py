"""A small MLP trained with tensor parallelism on mesh["tp"] and data parallelism over
mesh["dp"] of a pgroups DeviceMesh, checked step by step against the same model trained in
one process (torch >= 2.4, CPU and gloo are enough).

    PYTHONPATH=build/python GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 \\
        .venv/bin/torchrun --nproc_per_node 8 python/examples/torchrun_tp_dp.py

Data parallelism is FSDP2's fully_shard over mesh["dp"] where this torch runs it on CPU,
else an all-reduce of the gradients over mesh["dp"]'s group (what DDP does). Exits 1 when a
loss differs from the single-process one.
"""

import copy
import sys

import torch
import torch.distributed as dist
from torch import nn

import pgroups
import pgroups.torch as pgt

STEPS = 5
BATCH = 8


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))


def data(step: int):
    generator = torch.Generator().manual_seed(100 + step)
    return torch.randn(BATCH, 16, generator=generator), torch.randn(BATCH, 8, generator=generator)


def reference_losses():
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(STEPS):
        x, y = data(step)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def parallel_losses(mesh):
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    model = parallelize_module(make_model(), mesh["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
    dp_mesh = mesh["dp"]
    dp_size, dp_rank = dp_mesh.size(), dp_mesh.get_local_rank()
    how = "fully_shard"
    try:
        from torch.distributed.fsdp import fully_shard

        trial = fully_shard(copy.deepcopy(model), mesh=dp_mesh)  # a probe: does FSDP2 run here?
        del trial
        model = fully_shard(model, mesh=dp_mesh)
    except Exception as error:  # noqa: BLE001 - any failure means: fall back to DDP's all-reduce
        how = f"gradient all-reduce ({type(error).__name__}: {error})"
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    share = BATCH // dp_size
    for step in range(STEPS):
        x, y = data(step)
        x, y = x[dp_rank * share:(dp_rank + 1) * share], y[dp_rank * share:(dp_rank + 1) * share]
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        if how != "fully_shard":
            for p in model.parameters():
                grad = p.grad.to_local() if hasattr(p.grad, "to_local") else p.grad
                dist.all_reduce(grad, group=dp_mesh.get_group())
                grad /= dp_size
        optimizer.step()
        total = loss.detach().clone()
        dist.all_reduce(total, group=dp_mesh.get_group())
        losses.append(total.item() / dp_size)
    return losses, how


def main() -> int:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    pp = 2 if world % 4 == 0 else 1
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=world // (2 * pp), pp=pp))
    mesh = pgt.device_mesh(plan, "cpu")
    # Each pipeline slice trains the same model on the same data: every slice must match.
    losses, how = parallel_losses(mesh["dp", "tp"])
    expected = reference_losses()
    ok = all(abs(a - b) <= 1e-5 * max(1.0, abs(b)) for a, b in zip(losses, expected))
    if rank == 0:
        print(f"data parallelism: {how}")
        for step, (a, b) in enumerate(zip(losses, expected)):
            print(f"step {step}: loss {a:.6f} single process {b:.6f}")
    flags = torch.tensor([0 if ok else 1])
    dist.all_reduce(flags)
    if rank == 0:
        print("losses match the single-process training on every rank" if int(flags) == 0 else
              f"losses differ on {int(flags)} ranks")
    for groups in pgt.mesh_groups(mesh):
        groups.destroy()
    dist.destroy_process_group()
    return 0 if int(flags) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
