"""pgroups.torch.device_mesh under torchrun as torch's own init_device_mesh is used there:
with no init_process_group call, device_mesh initialises the default group from env://
(gloo for "cpu"), and its mesh has init_device_mesh's groups; a device type this torch
cannot run raises on every rank, also when only one rank asked for it (carried by the
agreement); copy.deepcopy of the mesh keeps pgroups' state. Exits non-zero on a failure.

    torchrun --nproc_per_node 8 python/tests/live/torchrun_mesh_env.py
"""

import copy

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

import pgroups
import pgroups.torch as pgt

assert not dist.is_initialized()
plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2), groups=["tp", "dp", "pp"])
mesh = pgt.device_mesh(plan, "cpu")  # no init_process_group before: as init_device_mesh
assert dist.is_initialized() and dist.get_backend() == "gloo", dist.get_backend()
RANK, SIZE = dist.get_rank(), dist.get_world_size()
assert SIZE == 8, "run with --nproc_per_node 8"

reference = init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=("pp", "dp", "tp"))
assert mesh.mesh.tolist() == reference.mesh.tolist()
for name in ("pp", "dp", "tp"):
    assert dist.get_process_group_ranks(mesh[name].get_group()) == \
        dist.get_process_group_ranks(reference[name].get_group()), name
    assert mesh.get_local_rank(name) == reference.get_local_rank(name), name

# A device type this torch cannot run: a ConfigError naming it on every rank, before any group.
if not torch.cuda.is_available():
    for asked in ("cuda", "cuda" if RANK == 0 else "cpu"):  # every rank, then rank 0 alone
        try:
            pgt.device_mesh(plan, asked)
        except pgroups.Error as error:
            assert "device_type 'cuda' cannot run here" in str(error), (RANK, str(error))
        else:
            raise AssertionError(f"rank {RANK}: device_mesh({asked!r}) did not raise")

# A deep copy (as DTensor and FSDP make) keeps pgroups' state: the same groups behind it.
twin = copy.deepcopy(mesh)
assert twin is not mesh and pgt.mesh_groups(twin) == pgt.mesh_groups(mesh)
assert dist.get_process_group_ranks(twin["tp"].get_group()) == plan.group_of(RANK, "tp")
value = torch.tensor([RANK], dtype=torch.int64)
dist.all_reduce(value, group=twin["dp"].get_group())
assert int(value) == sum(plan.group_of(RANK, "dp"))

value = torch.ones(1)
dist.all_reduce(value)  # the default group device_mesh made, alive
assert int(value) == SIZE
dist.barrier()
if RANK == 7:
    print("device_mesh env checks passed", flush=True)
dist.destroy_process_group()
