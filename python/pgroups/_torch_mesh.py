"""pgroups.torch.device_mesh: a torch DeviceMesh over the groups pgroups created."""

from __future__ import annotations

import math
import weakref
from typing import Any, Dict, List, Optional, Tuple, Union

import torch
import torch.distributed as dist

from . import _pgroups
from ._checks import check_token
from ._plan import Plan
from ._torch_groups import TorchGroups

_BACKING: Dict[int, Any] = {}


def mesh_dims(plan: Plan) -> List[Tuple[str, int]]:
    """The mesh of a plan, slowest first: a named mesh's dimensions reversed; for a preset
    ``data``, ``pipe`` and the kinds that split the tensor group (size-1 ones included):
    the layout's own dimensions, named by the kind of each (``Layout.dimension_kinds``)."""
    return [(name, size) for name, size in plan._layout.dimension_kinds()]


def _require_device_mesh() -> Any:
    version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2] if p.isdigit())
    try:
        from torch.distributed.device_mesh import DeviceMesh
    except ImportError:
        DeviceMesh = None
    if version < (2, 4) or DeviceMesh is None or not hasattr(DeviceMesh, "from_group"):
        raise _pgroups.ConfigError(
            f"pgroups.torch.device_mesh needs torch >= 2.4 (DeviceMesh.from_group); torch {torch.__version__} is "
            "installed: use pgroups.torch.create_groups and the groups themselves")
    return DeviceMesh


def device_mesh(source: Union[Plan, TorchGroups], device_type: str = "cpu", *, timeout: Any = None,
                method: Optional[str] = None, share: bool = True) -> Any:
    """A ``torch.distributed.device_mesh.DeviceMesh`` over pgroups' own groups, with
    ``mesh_dim_names`` the plan's mesh dimensions slowest first (a mesh tp=2,dp=2,pp=2
    gives ``("pp", "dp", "tp")``; a preset ``("data", "pipe", "tensor")``, or the kinds
    that split the tensor group in place of ``tensor``, with ``mesh["tensor"]`` a
    flattened dimension then). Every kind of the plan whose groups are a run of adjacent
    dimensions is a flattened dimension too (``mesh["tp-dp"]``, ``mesh["model"]``).

    ``source`` is a Plan (its groups are created here, collectively, as
    :func:`create_groups` does, with ``timeout``, ``method``, ``share``) or the
    TorchGroups of an earlier ``create_groups``. No group is created twice; a dimension
    whose one-dimension kind the plan lacks is created for the mesh (a one-rank group
    costs no collective). :func:`mesh_groups` gives the TorchGroups behind the mesh (their
    ``communicators`` are its bill). torch >= 2.4; ConfigError before.
    """
    from .torch import _singleton, _timeout_seconds, agree_on, create_groups, plan_fields, reject

    if not dist.is_initialized():
        raise _pgroups.StateError("pgroups.torch.device_mesh needs torch.distributed.init_process_group first")
    # Every check runs before the mesh's own agreement and its failure is carried into it,
    # so that one rank's rejection reaches every rank (a TorchGroups source creates nothing
    # else collectively to meet the others in).
    try:
        DeviceMesh = _require_device_mesh()
        device_type = check_token("device_type", device_type)
        seconds = _timeout_seconds(timeout)
        if isinstance(source, TorchGroups):
            groups: Optional[TorchGroups] = source
            plan = source.plan
        elif isinstance(source, Plan):
            plan = source
            groups = None
        else:
            raise TypeError(f"source must be a pgroups.Plan or pgroups.torch.TorchGroups, not "
                            f"{type(source).__name__} {source!r}")
    except Exception as error:
        reject(error, None)
    agree_on(plan_fields(plan, mesh="device_mesh", device_type=device_type,
                         source="groups" if groups is not None else "plan"), None, seconds)
    backing: List[TorchGroups] = []
    dims = mesh_dims(plan)
    # Dimensions of more than one rank that the plan has no kind for need groups of their
    # own; only a named mesh can lack one (a preset has a kind for each such dimension).
    # A one-rank dimension is backed below by this rank's own group.
    missing = [name for name, size in dims if size > 1 and not plan.has_mode(name)]
    if missing:
        assert plan.mesh is not None, (plan, missing)
    if groups is None:
        if missing:
            # One creation for the plan's kinds and the mesh's missing dimensions.
            plan = Plan(mesh=plan.mesh, groups=plan.group_kinds + missing)
            missing = []
        groups = create_groups(plan, timeout=timeout, method=method, share=share)
    elif missing:
        backing.append(create_groups(Plan(mesh=plan.mesh, groups=missing), timeout=timeout, method=method,
                                     share=share))
    backing.insert(0, groups)
    rank = dist.get_rank()
    extra: List[Any] = []
    handles: List[Any] = []
    for name, size in dims:
        owner = next((g for g in backing if g.is_initialized(name)), None)
        if owner is not None:
            handles.append(owner.get_group(name))
            continue
        # A dimension without a kind has size 1 (a preset's pipe when pipeline = 1).
        assert size == 1, (name, size)
        single = _singleton(rank, name, {"group_desc": f"pgroups:{name}"})
        extra.append(single)
        handles.append(single)
    sizes = [size for _, size in dims]
    layout = torch.arange(plan.world_size, dtype=torch.int).reshape(sizes)
    names = tuple(name for name, _ in dims)
    mesh = DeviceMesh.from_group(handles, device_type, mesh=layout, mesh_dim_names=names)
    _flatten_kinds(mesh, groups, layout, names)
    # Kept beside the mesh, not on it: DTensor and FSDP copy meshes (deepcopy, pickle), and
    # the groups' plan is no picklable object.
    _BACKING[id(mesh)] = (backing, extra)
    weakref.finalize(mesh, _BACKING.pop, id(mesh), None)
    return mesh


def mesh_groups(mesh: Any) -> List[TorchGroups]:
    """The TorchGroups behind a mesh made by :func:`device_mesh`: the plan's, then any
    created for dimensions the plan lacked."""
    found = _BACKING.get(id(mesh))
    if found is None:
        raise _pgroups.StateError("this DeviceMesh was not made by pgroups.torch.device_mesh")
    return list(found[0])


def _flatten_kinds(mesh: Any, groups: TorchGroups, layout: torch.Tensor, names: Tuple[str, ...]) -> None:
    # torch's own _flatten creates a new group; here the flattened dimension is the kind's
    # existing group, registered in the root mesh as _flatten would register its own.
    if not all(hasattr(mesh, attr) for attr in ("_layout", "_flatten_mapping", "_pg_registry", "_rank_map")):
        return  # a DeviceMesh without these internals: no flattened dimensions
    DeviceMesh = type(mesh)
    sizes = list(layout.shape)
    plan = groups.plan
    for kind in groups.kinds:
        if kind in names or not groups.is_member(kind) or kind in mesh._flatten_mapping:
            continue
        size = plan.group_size(kind)
        partition = {tuple(g) for g in plan.groups(kind)}
        if sum(len(g) for g in partition) != plan.world_size:
            continue  # a partial kind is no dimension
        for first in range(len(sizes)):
            last = next((j for j in range(first, len(sizes)) if math.prod(sizes[first:j + 1]) >= size), None)
            if last is None or last == first or math.prod(sizes[first:last + 1]) != size:
                continue
            run = layout.reshape(sizes[:first] + [size] + sizes[last + 1:]).movedim(first, -1).reshape(-1, size)
            if {tuple(row) for row in run.tolist()} != partition:
                continue
            sub = mesh[names[first:last + 1]]
            flat = DeviceMesh(mesh._device_type, _layout=type(sub._layout)([sub._layout.collapse()]),
                              _rank_map=mesh._rank_map, mesh_dim_names=(kind,), _root_mesh=mesh,
                              _init_backend=False)
            group = groups.get_group(kind)
            flat._dim_group_names = [group.group_name]
            mesh._pg_registry[group.group_name] = group
            mesh._flatten_mapping[kind] = flat
            break
