"""pgroups.torch.device_mesh under torchrun (torch >= 2.4, gloo): the DeviceMesh's groups are
pgroups' own, none created twice, and DTensor runs on it. Exits non-zero on a failure.

    torchrun --nproc_per_node 8 python/tests/live/torchrun_mesh.py
"""

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as c10d

import pgroups
import pgroups.torch as pgt

dist.init_process_group("gloo")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
assert SIZE == 8, "run with --nproc_per_node 8"


def live_groups() -> int:
    return len(c10d._world.pg_map)


# A named mesh: dimensions slowest first, every dimension and flattened kind is pgroups' group.
plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2), groups=["tp", "dp", "pp", "tp-dp"])
groups = pgt.create_groups(plan)
before = live_groups()
mesh = pgt.device_mesh(groups, "cpu")
assert live_groups() == before, "device_mesh created a group the plan already had"
assert mesh.mesh_dim_names == ("pp", "dp", "tp"), mesh.mesh_dim_names
for kind in ("tp", "dp", "pp"):
    assert mesh[kind].get_group() is groups.get_group(kind), kind
    assert dist.get_process_group_ranks(mesh[kind].get_group()) == plan.group_of(RANK, kind), kind
assert mesh["tp-dp"].get_group() is groups.get_group("tp-dp")
assert mesh["dp", "tp"].mesh.flatten().tolist() == plan.group_of(RANK, "tp-dp")
assert pgt.mesh_groups(mesh) == [groups]
# torch's own flattening reaches the kind's group, under torch's name or the kind's, with
# no second group and no deprecation warning.
import warnings  # noqa: E402

held = live_groups()
with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert mesh["dp", "tp"]._flatten().get_group() is groups.get_group("tp-dp")
    assert mesh["dp", "tp"]._flatten("tp-dp").get_group() is groups.get_group("tp-dp")
    # pgroups' other spelling of the kind reaches it too.
    assert mesh["dp", "tp"]._flatten("dp-tp").get_group() is groups.get_group("tp-dp")
    # torch's idiom: _flatten(), then the flattened dimension by the name it was given.
    assert mesh["dp", "tp"]._flatten().mesh_dim_names == ("dp_tp",)
# (Slicing a flattened dimension from the root mesh warns of its deprecation in torch itself.)
for name in ("dp_tp", "tp-dp", "dp-tp"):
    assert mesh[name].mesh_dim_names == (name,), name
    assert mesh[name].get_group() is groups.get_group("tp-dp"), name
assert live_groups() == held, "_flatten() created a second group"

# DTensor on the mesh: a tensor sharded over tp, gathered back.
from torch.distributed.tensor import Shard, distribute_tensor  # noqa: E402

full = torch.arange(8.0).reshape(4, 2)
dtensor = distribute_tensor(full, mesh["tp"], [Shard(0)])
assert dtensor.to_local().shape == (2, 2)
assert torch.equal(dtensor.full_tensor(), full)
assert torch.equal((dtensor * 2).full_tensor(), full * 2)

# A dimension whose one-dimension kind the plan lacks is created for the mesh, and counted.
partial = pgroups.Plan(mesh=plan.mesh, groups=["tp", "pp"])
some = pgt.create_groups(partial)
mesh2 = pgt.device_mesh(some, "cpu")
backing = pgt.mesh_groups(mesh2)
assert [g.kinds for g in backing] == [["tp", "pp"], ["dp"]], [g.kinds for g in backing]
assert mesh2["dp"].get_group() is backing[1].get_group("dp")
assert backing[1].communicators == backing[1].plan.communicators(RANK)  # the C++ bill: the world and dp
assert backing[1].communicators["created"] == 2
for g in backing:
    g.destroy()

# A rank map (pgroups place's): the mesh tensor holds the launcher ranks, each dimension's
# group is the mapped ranks, and the coordinates follow the mesh, not the launcher rank.
swap = [0, 2, 1, 3, 4, 6, 5, 7]
mapped = pgroups.Plan(mesh=plan.mesh, groups=["tp", "dp", "pp", "tp-dp"], rank_map=swap)
mapped_groups = pgt.create_groups(mapped)
mesh4 = pgt.device_mesh(mapped_groups, "cpu")
assert mesh4.mesh.flatten().tolist() == swap, mesh4.mesh
for kind in ("tp", "dp", "pp"):
    assert dist.get_process_group_ranks(mesh4[kind].get_group()) == mapped.group_of(RANK, kind), kind
    assert mesh4.get_local_rank(kind) == mapped.local_rank(RANK, kind), kind
# tp-dp's mesh order 0, 1, 2, 3 runs on launcher ranks 0, 2, 1, 3: a flattened dimension's
# coordinate would not be the group rank, so it is no flattened dimension of this mesh (the
# kind's group is still pgroups').
try:
    mesh4["tp-dp"]
except KeyError:
    pass
else:
    raise AssertionError("a kind the rank map reorders was offered as a flattened dimension")
assert dist.get_process_group_ranks(mapped_groups.get_group("tp-dp")) == mapped.group_of(RANK, "tp-dp")
assert mapped.group_of(0, "tp") == [0, 2]
mapped_groups.destroy()

# A preset: data, pipe (size 1 here, created for the mesh without a collective), the 2d
# sub-dimensions, and "tensor" as a flattened dimension over them.
preset = pgroups.Plan(SIZE, tensor=4, mode="2d")
mesh3 = pgt.device_mesh(preset, "cpu")
tensor_groups = pgt.mesh_groups(mesh3)[0]
assert mesh3.mesh_dim_names == ("data", "pipe", "2d_col", "2d_row"), mesh3.mesh_dim_names
assert mesh3["pipe"].size() == 1
assert mesh3["tensor"].get_group() is tensor_groups.get_group("tensor")
assert mesh3["2d_row"].get_group() is tensor_groups.get_group("2d_row")
assert dist.get_process_group_ranks(mesh3["tensor"].get_group()) == preset.group_of(RANK, "tensor")

# Errors: the wrong source type, on this rank alone (no collective involved).
try:
    pgt.device_mesh("tp", "cpu")
except TypeError as error:
    assert "must be a pgroups.Plan" in str(error)
else:
    raise AssertionError("device_mesh('tp') did not raise")

# A second mesh over the same groups is the first: no group-name collision in torch.
held = live_groups()
assert pgt.device_mesh(groups, "cpu") is mesh
assert live_groups() == held, "a second device_mesh created groups"

# Over a kind destroyed since, or over destroyed groups: a StateError naming it (never a
# mesh whose dimension reduces over one rank), on every rank.
dropped = pgt.create_groups(plan)
dropped.destroy_group("dp")
try:
    pgt.device_mesh(dropped, "cpu")
except pgroups.StateError as error:
    assert "group of kind 'dp'" in str(error), error
else:
    raise AssertionError("device_mesh over a destroyed kind did not raise")
dropped.destroy()
try:
    pgt.device_mesh(dropped, "cpu")
except pgroups.StateError as error:
    assert "were destroyed" in str(error), error
else:
    raise AssertionError("device_mesh over destroyed groups did not raise")

tensor_groups.destroy()
groups.destroy()
value = torch.ones(1)
dist.all_reduce(value)
assert int(value) == SIZE  # the default group survives every destroy
if RANK == 0:
    print("device_mesh checks passed", flush=True)
dist.destroy_process_group()
