"""pgroups.torch.device_mesh: a torch DeviceMesh over the groups pgroups created."""

from __future__ import annotations

import os
import uuid
import weakref
from typing import Any, Dict, List, Optional, Tuple, Union

import torch
import torch.distributed as dist

from . import _pgroups
from . import _torch_create as creation
from ._checks import check_int, check_token, timeout_seconds
from ._plan import Mesh, Plan
from ._torch_groups import TorchGroups, mesh_made, remember_mesh
from ._torch_start import ENV_VARIABLES, init_process_group

# The TorchGroups behind each mesh, by a key the mesh carries as an attribute: a copy
# (deepcopy, pickle) keeps the key, so it finds the same groups.
_BACKING: Dict[str, Any] = {}
_KEY = "_pgroups_key"

# The backend a device type's default group takes when device_mesh initialises it (as
# init_device_mesh does).
_BACKENDS = {"cpu": "gloo", "cuda": "nccl"}


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
        DeviceMesh = None  # type: ignore[misc,assignment]  # torch < 2.2: no device_mesh module
    if version < (2, 4) or DeviceMesh is None or not hasattr(DeviceMesh, "from_group"):
        raise _pgroups.ConfigError(
            f"pgroups.torch.device_mesh needs torch >= 2.4 (DeviceMesh.from_group); torch {torch.__version__} is "
            "installed: use pgroups.torch.create_groups and the groups themselves")
    return DeviceMesh


def make_device_mesh(source: Union[Plan, TorchGroups], device_type: str, timeout: Any, method: Optional[str],
                     share: bool) -> Any:
    """pgroups.torch.device_mesh (its docstring says what), its groups made by the creation
    module (_torch_create), as every torch front door makes them."""
    if not dist.is_initialized():
        init_default_group(device_type)
    # Every check runs before the call's one agreement and its failure is carried into it,
    # so that one rank's rejection reaches every rank.
    error: Optional[BaseException] = None
    plan: Optional[Plan] = None
    groups: Optional[TorchGroups] = None
    seconds: Optional[float] = None
    try:
        seconds = timeout_seconds(timeout)
        DeviceMesh = _require_device_mesh()
        device_type = check_token("device_type", device_type)
        check_device_type(device_type)
        if isinstance(source, TorchGroups):
            groups = source
            plan = source.plan
            if source.destroyed:
                raise _pgroups.StateError(
                    f"pgroups.torch.device_mesh: the TorchGroups of {plan!r} were destroyed (destroy()); create the "
                    "groups again, or pass the plan")
            _check_dims_alive(source, mesh_dims(plan))
        elif isinstance(source, Plan):
            plan = source
        else:
            raise TypeError(f"source must be a pgroups.Plan or pgroups.torch.TorchGroups, not "
                            f"{type(source).__name__} {source!r}")
    except Exception as caught:
        error = caught
    if plan is None:  # only a failed check leaves no plan
        creation.reject(error or _pgroups.StateError("pgroups.torch.device_mesh: no plan"), None)
    door = (("mesh", "device_mesh"), ("device_type", str(device_type)),
            ("source", "groups" if groups is not None else "plan"))
    dims = mesh_dims(plan)
    # Dimensions of more than one rank that the plan has no kind for need groups of their
    # own; only a named mesh can lack one (a preset has a kind for each such dimension).
    # A one-rank dimension is backed below by this rank's own group.
    missing = [name for name, size in dims if size > 1 and not plan.has_kind(name)]
    backing: List[TorchGroups] = []
    if groups is None:
        # One creation, one agreement: the plan's kinds and the mesh's missing dimensions.
        wanted = (Plan(mesh=plan.mesh, groups=plan.group_kinds + missing, rank_map=plan.rank_map) if missing
                  else plan)
        groups = creation.create_groups(wanted, timeout=timeout, method=method, share=share, door=door,
                                        door_error=error)
    elif missing:
        backing.append(creation.create_groups(Plan(mesh=plan.mesh, groups=missing, rank_map=plan.rank_map),
                                              timeout=timeout, method=method, share=share, door=door,
                                              door_error=error))
    else:
        if error is not None:
            creation.reject(error, None)
        creation.agree_on(creation.plan_fields(plan, **dict(door)), None, seconds)
        made = mesh_made(groups, device_type)
        if made is not None:
            # A second mesh over the same groups is the first: torch registers a mesh's groups
            # by name, so a second one over them would collide.
            return made
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
        single = creation.singleton_group(rank, name, {"group_desc": f"pgroups:{name}"})
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
    # the groups' plan is no picklable object; the mesh carries only the key (unique across
    # processes, so an unpickled mesh finds nothing rather than another process's groups).
    key = uuid.uuid4().hex
    setattr(mesh, _KEY, key)
    _BACKING[key] = (backing, extra)
    weakref.finalize(mesh, _BACKING.pop, key, None)
    remember_mesh(groups, device_type, mesh)
    return mesh


def make_init_device_mesh(device_type: str, mesh_shape: Any, mesh_dim_names: Any, timeout: Any,
                          method: Optional[str], share: bool) -> Any:
    """pgroups.torch.init_device_mesh (its docstring says what)."""
    if not dist.is_initialized():
        init_default_group(device_type)  # first: it is the channel that carries a check's failure
    try:
        plan = _plan_of_torch_shape(mesh_shape, mesh_dim_names)
    except Exception as error:  # every class a check raises is carried, as it is
        creation.reject(error, timeout)
    return make_device_mesh(plan, device_type, timeout, method, share)


def _plan_of_torch_shape(mesh_shape: Any, mesh_dim_names: Any) -> Plan:
    """The plan of torch's mesh (slowest dimension first): pgroups' mesh lists the fastest
    first, so the dimensions are reversed; every dimension is a kind."""
    if mesh_dim_names is None:
        raise _pgroups.ConfigError(
            "pgroups.torch.init_device_mesh needs mesh_dim_names (one name per dimension of mesh_shape, as torch "
            "slices a mesh by name): e.g. init_device_mesh('cpu', (2, 4), mesh_dim_names=('dp', 'tp'))")
    if not isinstance(mesh_shape, (tuple, list)):
        raise TypeError(f"mesh_shape must be a tuple of sizes, not {type(mesh_shape).__name__} {mesh_shape!r}")
    names = [check_token(f"mesh_dim_names[{i}]", name) for i, name in enumerate(
        mesh_dim_names if isinstance(mesh_dim_names, (tuple, list)) else [mesh_dim_names])]
    if not isinstance(mesh_dim_names, (tuple, list)) or len(names) != len(mesh_shape):
        raise _pgroups.ConfigError(
            f"mesh_dim_names {mesh_dim_names!r} must name each of the {len(mesh_shape)} dimensions of mesh_shape "
            f"{tuple(mesh_shape)!r}, in the same order")
    sizes = [check_int(f"mesh_shape[{i}]", size, minimum=1) for i, size in enumerate(mesh_shape)]
    dims = list(zip(names, sizes))[::-1]
    return Plan(mesh=Mesh(dims), groups=names)


def check_device_type(device_type: str) -> None:
    """ConfigError naming the device type where this torch cannot run it: a device index
    (DeviceMesh takes the type alone), a type torch does not know, or one without a usable
    device (``"cuda"`` on a CPU-only torch)."""
    if ":" in device_type:
        raise _pgroups.ConfigError(f"device_type '{device_type}' names a device index; a DeviceMesh takes the "
                                   f"device type alone ('{device_type.split(':')[0]}')")
    if device_type == "cpu":
        return
    handle = getattr(torch, device_type, None)
    available = getattr(handle, "is_available", None)
    if not callable(available):
        raise _pgroups.ConfigError(f"device_type '{device_type}' is no device type torch {torch.__version__} knows "
                                   f"(a DeviceMesh takes 'cpu', 'cuda', ...)")
    if not available():
        raise _pgroups.ConfigError(f"device_type '{device_type}' cannot run here: torch {torch.__version__} has no "
                                   f"usable {device_type} device (torch.{device_type}.is_available() is False)")


def init_default_group(device_type: Any) -> None:
    """torch's default group from torchrun's env:// variables, as init_device_mesh makes it
    when there is none (gloo for "cpu", NCCL for "cuda", torch's choice otherwise), the
    CUDA device set from LOCAL_RANK as it sets it; StateError saying what is missing
    outside torchrun. The group is made before the device type is judged: the default
    group carries the agreement, so a device type this rank cannot run is refused there,
    on every rank at once, instead of here on this rank alone while the others wait for it
    at the rendezvous (and no backend the torch lacks is asked for)."""
    _require_device_mesh()  # torch 1.x: that error, without a default group made for nothing
    missing = [name for name in ENV_VARIABLES if name not in os.environ]
    if missing:
        raise _pgroups.StateError(
            f"pgroups.torch.device_mesh needs torch.distributed's default group: call "
            f"torch.distributed.init_process_group first, or run under torchrun (env:// needs "
            f"{', '.join(ENV_VARIABLES)}; {', '.join(missing)} not set)")
    backend = None
    if isinstance(device_type, str) and device_type in _BACKENDS:
        try:
            check_device_type(device_type)
            backend = _BACKENDS[device_type]
        except _pgroups.ConfigError:
            backend = None  # judged again once the group is there, and carried to every rank
    if backend == "nccl" and not torch.cuda.is_initialized():
        local_rank = _pgroups.environment_count("LOCAL_RANK")  # malformed: ConfigError, as nccl::choose_device
        if local_rank is not None:
            torch.cuda.set_device(local_rank)
    # Under the attempt's prefix: a restarted attempt must not meet the dead one's keys.
    init_process_group(backend)


def _check_dims_alive(groups: TorchGroups, dims: List[Tuple[str, int]]) -> None:
    """StateError naming the kind when a mesh dimension's kind was created in ``groups``
    and destroyed since (destroy_group): its group is gone, and a one-rank stand-in would
    make a silently wrong mesh."""
    plan = groups.plan
    for name, size in dims:
        if size > 1 and plan.has_kind(name) and not groups.is_initialized(name):
            raise _pgroups.StateError(
                f"pgroups.torch.device_mesh: the group of kind '{name}' ({size} ranks) is not in these TorchGroups "
                f"(destroyed, or not created); the kinds held are {', '.join(groups.kinds) or 'none'}")


def mesh_groups(mesh: Any) -> List[TorchGroups]:
    """The TorchGroups behind a mesh made by :func:`device_mesh`: the plan's, then any
    created for dimensions the plan lacked."""
    found = _BACKING.get(getattr(mesh, _KEY, None))  # type: ignore[arg-type]
    if found is None:
        raise _pgroups.StateError("this DeviceMesh was not made by pgroups.torch.device_mesh")
    return list(found[0])


def _flatten_kinds(mesh: Any, groups: TorchGroups, layout: torch.Tensor, names: Tuple[str, ...]) -> None:
    # torch's own _flatten creates a new group; here the flattened dimension is the kind's
    # existing group, registered in the root mesh as _flatten would register its own. This is
    # the one place pgroups writes DeviceMesh's private state: a DeviceMesh without the
    # internals it writes (another torch than the supported ones) is refused by name, not
    # left silently without the flattened dimensions a user asked for.
    view = groups.view
    wanted = [kind for kind in groups.kinds
              if kind not in names and view.is_member(kind) and view.flattened_dims(kind) is not None]
    internals = ("_layout", "_flatten_mapping", "_pg_registry", "_rank_map", "_device_type")
    missing = [attr for attr in internals if not hasattr(mesh, attr)]
    if wanted and missing:
        raise _pgroups.ConfigError(
            f"pgroups.torch.device_mesh cannot make {', '.join(wanted)} flattened dimensions of a torch "
            f"{torch.__version__} DeviceMesh: it lacks {', '.join(missing)}, which pgroups writes as torch 2.13's "
            f"_flatten does (ask for the mesh of a plan without those kinds, or use torch 2.13)")
    DeviceMesh = type(mesh)
    for kind in wanted:
        if kind in mesh._flatten_mapping:
            continue
        # Which run of the mesh's dimensions the kind flattens is the layout's to say.
        run = view.flattened_dims(kind)
        if run is not None:
            first, end = run
            sub = mesh[names[first:end]]
            group = groups.get_group(kind)
            mesh._pg_registry[group.group_name] = group
            # Under the kind's name, the other spellings pgroups takes for it (its dimensions
            # joined by '-' slowest or fastest first: "dp-tp" is "tp-dp"), and the name torch's
            # own _flatten() gives these dimensions ("dp_tp" for mesh["dp", "tp"]._flatten()),
            # so that each reaches this group and torch creates no second one. Each name has a
            # flattened mesh of its own name: torch finds a flattened dimension by looking its
            # name up in that mesh's mesh_dim_names (mesh["dp_tp"] after _flatten()).
            dim_names = names[first:end]
            for name in (kind, "_".join(dim_names), "-".join(dim_names), "-".join(reversed(dim_names))):
                if name in mesh._flatten_mapping:
                    continue
                flat = DeviceMesh(mesh._device_type, _layout=type(sub._layout)([sub._layout.collapse()]),
                                  _rank_map=mesh._rank_map, mesh_dim_names=(name,), _root_mesh=mesh,
                                  _init_backend=False)
                flat._dim_group_names = [group.group_name]
                mesh._flatten_mapping[name] = flat
