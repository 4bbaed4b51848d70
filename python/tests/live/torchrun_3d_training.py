"""A torchtitan-style 3-D training on pgroups' DeviceMesh against the same on torch's own
init_device_mesh, step by step: 8 ranks, mesh pp=2 x dp=2 x tp=2 ("pp", "dp", "tp"); a
two-block model split into two pipeline stages (torch.distributed.pipelining,
PipelineStage over mesh["pp"], the GPipe and the 1F1B schedules, two microbatches), each stage's block
tensor- and sequence-parallel over mesh["tp"] (parallelize_module: SequenceParallel norm,
colwise/rowwise linears with the sequence sharded between them) and FSDP2's fully_shard
over mesh["dp"]. CPU and gloo; every rank's loss of every step must equal its loss on
init_device_mesh's mesh. Exits non-zero on a failure.

    torchrun --nproc_per_node 8 python/tests/live/torchrun_3d_training.py
"""

import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe
from torch.distributed.tensor import Shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, SequenceParallel, parallelize_module

import pgroups
import pgroups.torch as pgt

STEPS, BATCH, SEQ, HIDDEN, MICROBATCHES = 3, 4, 8, 16, 2


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(HIDDEN)
        self.w1 = nn.Linear(HIDDEN, 2 * HIDDEN)
        self.w2 = nn.Linear(2 * HIDDEN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.w2(torch.relu(self.w1(self.norm(x))))


def stage_module(stage: int, mesh) -> nn.Module:
    torch.manual_seed(stage)  # the same weights for a stage on every rank and both meshes
    block = Block()
    parallelize_module(block, mesh["tp"], {
        "norm": SequenceParallel(),
        "w1": ColwiseParallel(input_layouts=Shard(1)),
        "w2": RowwiseParallel(output_layouts=Shard(1)),
    })
    return fully_shard(block, mesh=mesh["dp"])


def data(step: int):
    generator = torch.Generator().manual_seed(100 + step)
    return torch.randn(BATCH, SEQ, HIDDEN, generator=generator), torch.randn(BATCH, SEQ, HIDDEN, generator=generator)


def train(mesh, schedule_class):
    """This rank's loss of every step (the last stage's; None on the first)."""
    pp, dp, tp = (mesh.get_local_rank(name) for name in ("pp", "dp", "tp"))
    stages = mesh["pp"].size()
    module = stage_module(pp, mesh)
    stage = PipelineStage(module, pp, stages, torch.device("cpu"), group=mesh["pp"].get_group())
    schedule = schedule_class(stage, n_microbatches=MICROBATCHES, loss_fn=nn.functional.mse_loss)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    rows, tokens = BATCH // mesh["dp"].size(), SEQ // mesh["tp"].size()
    losses = []
    for step in range(STEPS):
        x, y = data(step)
        # This rank's share: its dp rank's batch rows, its tp rank's sequence positions.
        x = x[dp * rows:(dp + 1) * rows, tp * tokens:(tp + 1) * tokens].contiguous()
        y = y[dp * rows:(dp + 1) * rows, tp * tokens:(tp + 1) * tokens].contiguous()
        optimizer.zero_grad()
        if pp == 0:
            schedule.step(x)
            losses.append(None)
        else:
            held = []
            schedule.step(target=y, losses=held)
            losses.append(torch.stack(held).mean().item())
        optimizer.step()
    return losses


def main() -> int:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 8, "run with --nproc_per_node 8"
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2), groups=["tp", "dp", "pp"])
    ours = pgt.device_mesh(plan, "cpu")
    theirs = init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=("pp", "dp", "tp"))
    assert ours.mesh.tolist() == theirs.mesh.tolist()
    same = True
    for schedule_class in (ScheduleGPipe, Schedule1F1B):
        mine, reference = train(ours, schedule_class), train(theirs, schedule_class)
        same = same and all((a is None and b is None) or
                            (a is not None and b is not None and abs(a - b) <= 1e-6 * max(1, abs(b)))
                            for a, b in zip(mine, reference))
        if rank == world - 1:
            for step, (a, b) in enumerate(zip(mine, reference)):
                print(f"{schedule_class.__name__} step {step}: loss {a:.6f} on pgroups' mesh, {b:.6f} on "
                      f"init_device_mesh's", flush=True)
    flags = torch.tensor([0 if same else 1])
    dist.all_reduce(flags)
    if rank == 0:
        print("3-D training losses match init_device_mesh's on every rank" if int(flags) == 0 else
              f"3-D training losses differ on {int(flags)} ranks", flush=True)
    for groups in pgt.mesh_groups(ours):
        groups.destroy()
    dist.destroy_process_group()
    return 0 if int(flags) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
