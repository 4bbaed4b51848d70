"""pgroups.torch.init_device_mesh under torchrun, as torch users write it: torch's call and
order (slowest dimension first), no init_process_group before it, the same groups as
torch's own init_device_mesh for every dimension name, no warning from pgroups' calls, torch's
flatten idiom on the result, and a bad argument refused on every rank. Exits non-zero on a
failure.

    torchrun --standalone --nproc_per_node 8 python/tests/live/torchrun_init_device_mesh.py
"""

import warnings

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

import pgroups
import pgroups.torch as pgt

assert not dist.is_initialized()
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    mesh = pgt.init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=("pp", "dp", "tp"))
assert not seen, [str(w.message) for w in seen]
assert dist.is_initialized() and dist.get_backend() == "gloo", dist.get_backend()
RANK, SIZE = dist.get_rank(), dist.get_world_size()
assert SIZE == 8, "run with --nproc_per_node 8"

reference = init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=("pp", "dp", "tp"))
assert mesh.mesh_dim_names == ("pp", "dp", "tp"), mesh.mesh_dim_names
assert mesh.mesh.tolist() == reference.mesh.tolist()
for name in ("pp", "dp", "tp"):
    assert dist.get_process_group_ranks(mesh[name].get_group()) == \
        dist.get_process_group_ranks(reference[name].get_group()), name
    assert mesh.get_local_rank(name) == reference.get_local_rank(name), name
    assert mesh.get_group(name) is mesh[name].get_group(), name

# torch's flatten idiom: the default name and a name of the caller's, the same members as
# torch's own flattening of its own mesh.
flat = mesh["dp", "tp"]._flatten()
assert flat.mesh_dim_names == ("dp_tp",)
assert dist.get_process_group_ranks(flat.get_group()) == \
    dist.get_process_group_ranks(reference["dp", "tp"]._flatten().get_group())
named = mesh["pp", "dp"]._flatten("replicas")
assert dist.get_process_group_ranks(named.get_group()) == \
    dist.get_process_group_ranks(reference["pp", "dp"]._flatten("replicas").get_group())
value = torch.ones(1)
dist.all_reduce(value, group=flat.get_group())
assert int(value) == 4

# A one-rank dimension costs no collective, and the whole world is the default group.
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    single = pgt.init_device_mesh("cpu", (SIZE, 1), mesh_dim_names=("dp", "tp"))
assert not seen, [str(w.message) for w in seen]
assert single["tp"].size() == 1 and single["dp"].get_group() is dist.group.WORLD

# mesh_dim_names is required, and must name every dimension: refused on every rank, also
# when one rank alone is wrong (carried by the agreement).
for names in (None, ("pp", "dp") if RANK == 3 else ("pp", "dp", "tp")):
    try:
        pgt.init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=names)
    except pgroups.ConfigError as error:
        assert "mesh_dim_names" in str(error), (RANK, str(error))
    else:
        raise AssertionError(f"rank {RANK}: mesh_dim_names={names!r} was not refused")
try:
    pgt.init_device_mesh("cpu", (3, 3), mesh_dim_names=("dp", "tp"))
except pgroups.ConfigError as error:
    assert "9" in str(error) and "8" in str(error), (RANK, str(error))
else:
    raise AssertionError("a mesh of 9 ranks over 8 was not refused")

for made in (mesh, single):
    for groups in pgt.mesh_groups(made):
        groups.destroy()
if RANK == 0:
    print("init_device_mesh checks passed", flush=True)
dist.destroy_process_group()
