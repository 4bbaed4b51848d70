"""pgroups.torch.device_mesh: a torch DeviceMesh over the groups pgroups created."""

from __future__ import annotations

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
    the layout's own dimensions, named by the kind of each (``RankView.dimensions``)."""
    return [(name, size) for name, size in plan.view(0).dimensions()]


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


def make_device_mesh(front: Any, source: Union[Plan, TorchGroups], device_type: str, timeout: Any,
                     method: Optional[str], share: bool) -> Any:
    """pgroups.torch.device_mesh (its docstring says what). ``front`` holds pgroups.torch's
    machinery (create_groups, singleton, timeout_seconds, agree_on, plan_fields, reject),
    handed over by pgroups.torch: this module imports nothing of pgroups.torch, which
    imports it, so there is no import cycle."""
    if not dist.is_initialized():
        raise _pgroups.StateError("pgroups.torch.device_mesh needs torch.distributed.init_process_group first")
    # Every check runs before the mesh's own agreement and its failure is carried into it,
    # so that one rank's rejection reaches every rank (a TorchGroups source creates nothing
    # else collectively to meet the others in).
    try:
        DeviceMesh = _require_device_mesh()
        device_type = check_token("device_type", device_type)
        seconds = front.timeout_seconds(timeout)
        if isinstance(source, TorchGroups):
            groups: Optional[TorchGroups] = source
            plan = source.plan
            if source.destroyed:
                raise _pgroups.StateError(
                    f"pgroups.torch.device_mesh: the TorchGroups of {plan!r} were destroyed (destroy()); create the "
                    "groups again, or pass the plan")
            _check_dims_alive(source, mesh_dims(plan))
        elif isinstance(source, Plan):
            plan = source
            groups = None
        else:
            raise TypeError(f"source must be a pgroups.Plan or pgroups.torch.TorchGroups, not "
                            f"{type(source).__name__} {source!r}")
    except Exception as error:
        front.reject(error, None)
    front.agree_on(front.plan_fields(plan, mesh="device_mesh", device_type=device_type,
                                     source="groups" if groups is not None else "plan"), None, seconds)
    backing: List[TorchGroups] = []
    dims = mesh_dims(plan)
    # Dimensions of more than one rank that the plan has no kind for need groups of their
    # own; only a named mesh can lack one (a preset has a kind for each such dimension).
    # A one-rank dimension is backed below by this rank's own group.
    missing = [name for name, size in dims if size > 1 and not plan.has_mode(name)]
    if missing and plan.mesh is None:  # not reached: a preset has a kind for each such dimension
        raise _pgroups.StateError(f"pgroups.torch.device_mesh: {plan!r} has no kind for the dimensions "
                                  f"{', '.join(missing)}")
    if groups is not None and not missing and device_type in groups._meshes:
        # A second mesh over the same groups is the first: torch registers a mesh's groups
        # by name, so a second one over them would collide.
        return groups._meshes[device_type]
    if groups is None:
        if missing:
            # One creation for the plan's kinds and the mesh's missing dimensions.
            plan = Plan(mesh=plan.mesh, groups=plan.group_kinds + missing, rank_map=plan.rank_map)
            missing = []
        groups = front.create_groups(plan, timeout=timeout, method=method, share=share)
    elif missing:
        backing.append(front.create_groups(Plan(mesh=plan.mesh, groups=missing, rank_map=plan.rank_map),
                                           timeout=timeout, method=method,
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
        # A dimension without a kind has size 1 (a preset's pipe when pipeline = 1);
        # _check_dims_alive refused a destroyed kind of more ranks before the agreement.
        if size != 1:  # not reached
            raise _pgroups.StateError(f"pgroups.torch.device_mesh: dimension '{name}' of {size} ranks has no group")
        single = front.singleton(rank, name, {"group_desc": f"pgroups:{name}"})
        extra.append(single)
        handles.append(single)
    sizes = [size for _, size in dims]
    # Mesh rank r is the flat index of its coordinates (slowest first); under a rank map the
    # mesh holds the launcher rank running it.
    mapped = plan.rank_map
    layout = (torch.arange(plan.world_size, dtype=torch.int) if mapped is None
              else torch.tensor(mapped, dtype=torch.int)).reshape(sizes)
    names = tuple(name for name, _ in dims)
    mesh = DeviceMesh.from_group(handles, device_type, mesh=layout, mesh_dim_names=names)
    _flatten_kinds(mesh, groups, layout, names)
    # Kept beside the mesh, not on it: DTensor and FSDP copy meshes (deepcopy, pickle), and
    # the groups' plan is no picklable object.
    _BACKING[id(mesh)] = (backing, extra)
    weakref.finalize(mesh, _BACKING.pop, id(mesh), None)
    groups._meshes[device_type] = mesh
    return mesh


def _check_dims_alive(groups: TorchGroups, dims: List[Tuple[str, int]]) -> None:
    """StateError naming the kind when a mesh dimension's kind was created in ``groups``
    and destroyed since (destroy_group): its group is gone, and a one-rank stand-in would
    make a silently wrong mesh."""
    plan = groups.plan
    for name, size in dims:
        if size > 1 and plan.has_mode(name) and not groups.is_initialized(name):
            raise _pgroups.StateError(
                f"pgroups.torch.device_mesh: the group of kind '{name}' ({size} ranks) is not in these TorchGroups "
                f"(destroyed, or not created); the kinds held are {', '.join(groups.kinds) or 'none'}")


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
    view = groups.view
    for kind in groups.kinds:
        if kind in names or not view.is_member(kind) or kind in mesh._flatten_mapping:
            continue
        # Which run of the mesh's dimensions the kind flattens is the layout's to say.
        run = view.flattened_dims(kind)
        if run is not None:
            first, end = run
            sub = mesh[names[first:end]]
            flat = DeviceMesh(mesh._device_type, _layout=type(sub._layout)([sub._layout.collapse()]),
                              _rank_map=mesh._rank_map, mesh_dim_names=(kind,), _root_mesh=mesh,
                              _init_backend=False)
            group = groups.get_group(kind)
            flat._dim_group_names = [group.group_name]
            mesh._pg_registry[group.group_name] = group
            mesh._flatten_mapping[kind] = flat
