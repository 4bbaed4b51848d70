"""pgroups quick start under torchrun (torch >= 2.4): env:// initialisation, the groups of a
named mesh, and a torch DeviceMesh over them.

    PYTHONPATH=build/python GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 \\
        .venv/bin/torchrun --nproc_per_node 8 python/examples/torchrun_quickstart.py
"""

import torch
import torch.distributed as dist

import pgroups
import pgroups.torch as pgt

dist.init_process_group("gloo")  # env://: torchrun sets RANK, WORLD_SIZE, MASTER_ADDR/PORT
rank = dist.get_rank()
plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2), groups=["tp", "dp", "pp", "tp-dp"])
mesh = pgt.device_mesh(plan, "cpu")  # creates the plan's groups once, agreed across ranks
groups = pgt.mesh_groups(mesh)[0]

value = torch.tensor([rank])
dist.all_reduce(value, group=mesh["tp"].get_group())
print(f"rank {rank}: mesh {mesh.mesh_dim_names}, tp group {groups.get_ranks_in_group('tp')}, "
      f"all-reduce over tp = {int(value)}, next pp rank {groups.get_next_global_rank('pp')}, "
      f"flattened dp x tp size {mesh['dp', 'tp']._flatten().size()}, bill {groups.communicators}", flush=True)
groups.destroy()
dist.destroy_process_group()
