"""torch.distributed process groups of a pgroups plan, and a DeviceMesh over them.

After ``torch.distributed.init_process_group`` (``env://`` under torchrun),
:func:`create_groups` creates the groups of a plan (all its kinds, or the ones asked
for) and :func:`device_mesh` hands them to torch as a ``DeviceMesh``. Before the first
group, every rank validates its arguments and the plan, and the ranks agree through
torch's default store (a few store operations per rank, no collective over the world)
that they hold the same plan, kinds, method and options: a mismatch raises
:class:`pgroups.MismatchError`, an invalid plan :class:`pgroups.ConfigError`, a wrong
type ``TypeError``, on every rank (an error one rank hits is carried to every rank),
instead of leaving ranks waiting in ``new_group`` forever.

Economy (``share=True``, the default): kinds whose groups are the same partition of the
world share one torch group, created once; a kind that is the whole world is the default
group (never created, never destroyed) when the backend asked for is the default group's
(:func:`world_is_default_group`; another backend: one new group of it); a kind of one-rank
groups is created by each rank alone, without a collective (torch >= 2.2: ``new_group([rank],
use_local_synchronization=True)``; torch 1.x with gloo: a one-rank ``ProcessGroupGloo``
registered as ``new_group`` would; otherwise the plain loop, which torch requires).
``TorchGroups.destroy_group`` frees a shared group when the last kind sharing it goes.
``share=False`` gives every kind its own group (code that calls
``torch.distributed.destroy_process_group`` on each kind's group needs that). The one cost
of sharing: operations on two kinds that share a group are ordered on it, so code driving
them from different threads or streams must not rely on them overlapping. Groups carry
their kinds' names as ``group_desc`` where torch has it (``pgroups:tp+tp-cp``).

Creation methods (``method=``; the default is the fastest the installed torch offers for the backend):

``split_group``
    ``torch.distributed.split_group`` (torch >= 2.5), NCCL default group only: one call
    per distinct partition;
``new_group_local``
    ``new_group(ranks, use_local_synchronization=True)`` (torch >= 2.2): each rank
    creates its own group only, synchronising with its members; every rank creates its
    kinds in the same order, so overlapping groups cannot deadlock;
``new_group``
    plain ``new_group(ranks)`` for every group: every rank enters every creation, with a
    barrier over the world each time, which torch 1.x requires;
``gloo_direct``
    (torch 1.x with gloo, the default there) each rank constructs only its own
    ``ProcessGroupGloo`` per kind over a prefix of the default store and registers it
    with torch as ``new_group`` does; skips the world barrier per group (4.8x to 6.5x
    faster than the plain loop at 8 and 16 ranks, docs/developing/performance.md) but relies on
    torch 1.x's private registry: ``method="new_group"`` is the public path.

A method the installed torch lacks is a ConfigError on every rank naming the torch
version and the methods it has.

``timeout`` (seconds, or a ``datetime.timedelta``; default ``PGROUPS_TIMEOUT`` or 300;
0 = none) bounds the whole call: a rank that waits that long at the agreement raises
:class:`pgroups.TimeoutError` naming the step and the missing ranks; torch's own timeout
of the new groups is the time left; and a rank still blocked a few seconds past the
timeout (a gloo call cannot be cancelled) is ended by a watchdog with the message and
exit status 8, as the C++ watchdog does.
"""

from __future__ import annotations

import datetime
import functools
import inspect
import time
import types
from typing import Any, Dict, Iterable, List, NoReturn, Optional, Tuple, Union

import torch
import torch.distributed as dist

from . import _pgroups
from ._checks import check_bool, check_int, check_token, timeout_seconds
from ._modes import ModeLike, ParallelMode, mode_value
from ._plan import Mesh, Plan
from ._renamed import renamed_keywords
from ._torch_agree import Watchdog, agree
from ._torch_groups import TorchGroups, _Handle

# One direction only: _torch_mesh is given create_groups, and imports nothing of this module.
from ._torch_mesh import init_default_group, make_device_mesh, mesh_groups
from ._torch_store import rendezvous_store

METHODS = ("split_group", "new_group_local", "new_group", "gloo_direct")
# The key of the default group among a creation's groups: a tuple, never a kind's name.
_WORLD: Tuple[str] = ("world",)
DEFAULT_TIMEOUT_SECONDS: float = _pgroups.default_timeout_seconds
_generation = 0

__all__ = ["METHODS", "TorchGroups", "available_method", "create_groups", "device_mesh", "gloo_direct_available",
           "init_device_mesh",
           "methods_available", "mesh_groups", "world_is_default_group"]


def gloo_direct_available() -> bool:
    """Whether ``method="gloo_direct"`` works with this torch: gloo is built and the
    group registry is the module globals of torch 1.x."""
    from torch.distributed import distributed_c10d as c10d

    # torch 2.x keeps names like these for compatibility but registers groups elsewhere.
    names = ("_pg_map", "_pg_names", "_pg_group_ranks", "_get_default_store", "ProcessGroupGloo", "PrefixStore")
    return (int(torch.__version__.split(".")[0]) < 2 and dist.is_gloo_available()
            and all(hasattr(c10d, name) for name in names))


def _has_local_synchronization() -> bool:
    return "use_local_synchronization" in _parameters(dist.new_group)


@functools.lru_cache(maxsize=None)
def _parameters(function: Any) -> Tuple[str, ...]:
    """The parameter names of a torch function: read once per function object, since
    inspect.signature costs a fraction of a millisecond and creation asks per group."""
    return tuple(inspect.signature(function).parameters)


def methods_available() -> List[str]:
    """The creation methods the installed torch has (whatever the backend)."""
    have = {"split_group": hasattr(dist, "split_group"), "new_group_local": _has_local_synchronization(),
            "new_group": True, "gloo_direct": gloo_direct_available()}
    return [m for m in METHODS if have[m]]


def available_method(backend: Optional[str] = None) -> str:
    """The fastest creation method the installed torch offers for ``backend`` (default:
    the default group's backend)."""
    if backend is None and dist.is_initialized():
        backend = str(dist.get_backend())
    if hasattr(dist, "split_group") and backend == "nccl":
        return "split_group"
    if _has_local_synchronization():
        return "new_group_local"
    if backend == "gloo" and gloo_direct_available():
        return "gloo_direct"  # torch 1.x: the plain loop pays a barrier over the world per group
    return "new_group"


def _check_method(method: str, backend: str) -> None:
    if method not in METHODS:
        raise _pgroups.ConfigError(f"creation method '{method}' is unknown; the methods are {', '.join(METHODS)}")
    have = methods_available()
    if method not in have:
        raise _pgroups.ConfigError(
            f"creation method '{method}' is not in torch {torch.__version__}: it has {', '.join(have)}")
    if method == "split_group" and backend != "nccl":
        raise _pgroups.ConfigError(f"creation method 'split_group' needs the nccl backend, not {backend} "
                                   f"(torch {torch.__version__} has {', '.join(have)})")
    if method == "gloo_direct" and backend != "gloo":
        raise _pgroups.ConfigError(f"creation method 'gloo_direct' needs the gloo backend, not {backend} "
                                   f"(torch {torch.__version__} has {', '.join(have)})")


def default_backend() -> str:
    """The default group's backend, from which every front door decides whether a kind may
    be the default group and whether separate gloo groups are needed (one place, so that
    the decision is the same in create_groups, pgroups.megatron and pgroups.colossal)."""
    return str(dist.get_backend())


def world_is_default_group(backend: Optional[str], default: str) -> bool:
    """Whether a kind that is the whole world may be torch's default group: only when the
    backend asked for (None: the default group's) is the default group's own. A gloo kind
    over an NCCL world is a new gloo group, so host-tensor collectives work on it."""
    return backend is None or str(backend).lower() == str(default).lower()


@renamed_keywords(modes="kinds")
def create_groups(
    plan: Optional[Plan] = None,
    *,
    pipeline: int = 1,
    tensor: int = 1,
    mode: Optional[str] = None,
    depth: Optional[int] = None,
    legacy_sequence_dp: bool = False,
    kinds: Optional[Iterable[ModeLike]] = None,
    backend: Optional[str] = None,
    timeout: Any = None,
    method: Optional[str] = None,
    share: bool = True,
    rank_map: Any = None,
) -> TorchGroups:
    """Creates the torch process groups of ``plan`` (or of the plan of ``pipeline``,
    ``tensor``, ``mode``, ``depth`` over the default group's world), for ``kinds`` (default:
    every kind of the plan, in creation order). Collective over the default group: every
    rank must call it with the same arguments. ``backend`` goes to torch; ``timeout`` is
    seconds or a timedelta (see the module); ``method`` forces one of METHODS;
    ``share=False`` gives every kind its own torch group. ``rank_map`` (with the sizes; a
    plan carries its own) says which torch rank runs each mesh rank (``pgroups.Plan``).

    Raises, on every rank and before any group is created: MismatchError when ranks
    disagree (the message lists which ranks hold what), ConfigError for an invalid plan, a
    method this torch lacks or a plan whose world size is not torch's, StateError for a
    kind the plan lacks, TypeError for an argument of the wrong type, TimeoutError when a
    rank does not come.
    """
    return _create_groups(plan, pipeline=pipeline, tensor=tensor, mode=mode, depth=depth,
                          legacy_sequence_dp=legacy_sequence_dp, kinds=kinds, backend=backend, timeout=timeout,
                          method=method, share=share, rank_map=rank_map)


def _create_groups(plan: Optional[Plan] = None, *, pipeline: int = 1, tensor: int = 1, mode: Optional[str] = None,
                   depth: Optional[int] = None, legacy_sequence_dp: bool = False,
                   kinds: Optional[Iterable[ModeLike]] = None, backend: Optional[str] = None, timeout: Any = None,
                   method: Optional[str] = None, share: bool = True, door: Tuple[Tuple[str, str], ...] = (),
                   door_error: Optional[BaseException] = None, rank_map: Any = None) -> TorchGroups:
    """create_groups, also for a front door that creates groups as one step of its own
    call (device_mesh, the drop-ins): ``door`` is the door's own settings and
    ``door_error`` the error its checks hit, both carried by this one agreement, so that
    the call agrees once."""
    if not dist.is_initialized():
        raise _pgroups.StateError("pgroups.torch.create_groups needs torch.distributed.init_process_group first")
    world = dist.get_world_size()
    rank = dist.get_rank()
    error: Optional[BaseException] = door_error
    names: List[str] = []
    seconds: Optional[float] = DEFAULT_TIMEOUT_SECONDS
    chosen = "?"
    try:
        seconds = timeout_seconds(timeout)
        share = check_bool("share", share)
        if backend is not None:
            backend = check_token("backend", backend)
        chosen = available_method(backend) if method is None else check_token("method", method)
        _check_method(chosen, backend or str(dist.get_backend()))
        if plan is None:
            # Plan checks the types, and C++ the sizes, with the CLI's messages.
            plan = Plan(world, pipeline, tensor, mode, depth, legacy_sequence_dp, rank_map=rank_map)
        elif rank_map is not None:
            raise TypeError("rank_map= goes with the sizes; a plan carries its own (pgroups.Plan(..., rank_map=...))")
        elif not isinstance(plan, Plan):
            raise TypeError(f"plan must be a pgroups.Plan, not {type(plan).__name__} {plan!r}")
        elif plan.world_size != world:
            raise _pgroups.ConfigError(
                f"the plan's world size {plan.world_size} is not torch.distributed's world size {world}")
        if kinds is not None and isinstance(kinds, (str, ParallelMode)):
            raise TypeError(f"kinds must be a list of kinds, not {kinds!r} (write [{kinds!r}])")
        names = plan.group_kinds if kinds is None else [mode_value(k) for k in kinds]
        for i, name in enumerate(names):
            if not plan.has_mode(name):
                raise _pgroups.StateError(
                    f"group kind '{name}' is not a group kind of {plan!r}; its kinds are "
                    f"{', '.join(plan.group_kinds)}")
            names[i] = plan._layout.kind_name(name)
            if names[i] in names[:i]:
                raise _pgroups.ConfigError(f"kinds lists the group kind '{names[i]}' twice")
    except Exception as caught:  # every class a check raises is carried, as it is
        error = caught if error is None else error
    # The timeout is per rank (as the CLI's --timeout): it decides no collective.
    fields = [] if error is not None else plan_fields(
        plan, **dict(door), modes=",".join(names), method=chosen, backend=str(backend), share="1" if share else "0")
    deadline = None if not seconds else time.monotonic() + seconds
    watchdog = Watchdog(seconds, rank, world)
    try:
        agree_on(fields, error, seconds)
        if plan is None:  # not reached: without a plan this rank carried its error, and agree_on raised it
            raise _pgroups.StateError("pgroups.torch.create_groups: no plan after the agreement")
        groups = TorchGroups(plan, rank, chosen, share)
        _create(groups, names, backend, deadline, watchdog)
    finally:
        watchdog.cancel()
    return groups


def plan_fields(plan: Optional[Plan], **options: str) -> List[Tuple[str, str]]:
    """The fields a torch front door agrees on: the plan's settings as the MPI context
    encodes them (``_pgroups.setting_fields``), then the front door's own ``options``, and
    the text a mismatch shows: the MPI context's text of the plan, then the options."""
    fields: List[Tuple[str, str]] = list(_pgroups.setting_fields(plan._layout)) if plan is not None else []
    fields += list(options.items())
    text = _pgroups.setting_text(plan._layout) if plan is not None else "plan=-"
    fields.append(("text", " ".join([text] + [f"{name}={value}" for name, value in options.items()])))
    return fields


def agree_on(fields: List[Tuple[str, str]], error: Optional[BaseException], timeout: Optional[float]) -> None:
    """The agreement of one collective call of a torch front door (create_groups,
    device_mesh, the drop-ins), over the default store: returns when every rank holds the
    same ``fields`` and none hit an error; otherwise raises on every rank alike (see
    _torch_agree.agree). Every rank makes the same calls in the same order, so the
    generations match."""
    global _generation
    _generation += 1
    agree(_generation, fields, error, dist.get_rank(), dist.get_world_size(), timeout)


def reject(error: BaseException, timeout: Any = None) -> NoReturn:
    """Raises ``error`` on every rank: this rank's check of a collective call failed, so it
    meets the other ranks at the call's agreement carrying it, rather than leaving them
    waiting. ``timeout`` is the call's (None: PGROUPS_TIMEOUT or the default)."""
    try:
        seconds = timeout_seconds(timeout)
    except Exception:  # a bad timeout is the error being carried, or beside it
        seconds = timeout_seconds(None)
    agree_on([], error, seconds)
    raise error  # not reached: the agreement raises the carried error on every rank


def _options(backend: Optional[str], deadline: Optional[float], names: List[str]) -> Dict[str, Any]:
    options: Dict[str, Any] = {}
    if backend is not None:
        options["backend"] = backend
    if deadline is not None:
        options["timeout"] = datetime.timedelta(seconds=max(deadline - time.monotonic(), 1.0))
    if "group_desc" in _parameters(dist.new_group):
        options["group_desc"] = "pgroups:" + "+".join(names)
    return options


def _create(groups: TorchGroups, names: List[str], backend: Optional[str], deadline: Optional[float],
            watchdog: Watchdog) -> None:
    plan, rank, view = groups.plan, groups.rank, groups.view
    # Decided from the layout alone, identically on every rank, by the one C++ rule
    # (pgroups/layout/communicator_sharing.hpp): which kinds share a group, which is the world.
    # The keys are tuples, which no kind's name (a string) can equal: a mesh dimension named
    # "world" or "singleton" gets its own groups.
    sharing = view.sharing(groups.share, names)
    # The default group stands for a whole-world kind only in the backend asked for.
    world_shared = groups.share and world_is_default_group(backend, default_backend())
    local_singletons = _singleton_is_local(backend)
    owners: Dict[Tuple[Any, ...], List[str]] = {}
    order: List[Tuple[Any, ...]] = []
    key_of: Dict[str, Tuple[Any, ...]] = {}
    for name in names:
        source, owner = sharing[name]
        key: Tuple[Any, ...] = ("kind", name)
        if groups.share and source == "world":
            # The default group, or, for another backend, one new group every whole-world kind shares.
            key = _WORLD if world_shared else ("world", str(backend))
        elif source == "shared":
            key = ("kind", owner)
        elif groups.share and source == "singleton" and view.is_member(name) and local_singletons:
            # The C++ rule (communicator_sharing.hpp): every one-rank kind of this rank
            # shares one group of this rank alone, made by this rank without a collective.
            key = ("singleton",)
        elif groups.share and source == "singleton":
            # Only the plain loop makes a one-rank group here, a collective over the world:
            # the key must then be the same on every rank, as the partition is.
            key = ("partition", view.partition_key(name))
        if key not in owners:
            owners[key] = []
            order.append(key)
        owners[key].append(name)
        key_of[name] = key
    start = time.perf_counter()
    handles: Dict[Tuple[Any, ...], Optional[_Handle]] = {}
    try:
        for key in order:
            kinds = owners[key]
            watchdog.enter("group", f"the creation of the group of kind {'+'.join(kinds)}")
            if key == _WORLD:
                handles[key] = _Handle(dist.group.WORLD, owned=False, collective=False)
            else:
                handles[key] = _create_kind(groups, kinds[0], _options(backend, deadline, kinds))
    except RuntimeError as caught:
        for handle in handles.values():
            if handle is not None and handle.owned:
                dist.destroy_process_group(handle.group)
        timed_out = "timeout" in str(caught).lower() or "timed out" in str(caught).lower()
        if timed_out and watchdog.limited:
            # The one timeout text of pgroups, then torch's own words.
            raise _pgroups.TimeoutError(f"{watchdog.message()}; torch: {caught}") from None
        cls = _pgroups.TimeoutError if timed_out else _pgroups.BackendError
        raise cls(f"pgroups.torch.create_groups failed at {watchdog.what} (step '{watchdog.step}', rank {rank} of "
                  f"{plan.world_size}): {caught}") from None
    for name in names:
        groups._bind(name, handles[key_of[name]])
    groups.seconds = time.perf_counter() - start


def _create_kind(groups: TorchGroups, name: str, options: Dict[str, Any]) -> Optional[_Handle]:
    """This rank's group of one kind (None for a partial kind it is not in), by the method."""
    plan, rank, method, view = groups.plan, groups.rank, groups.method, groups.view
    member = view.is_member(name)
    if plan.group_size(name) == 1:
        if not member:
            return None  # a partial kind of one-rank groups (Megatron's pos_embd) leaves this rank out
        single = _singleton(rank, name, options)
        if single is not None:
            groups.calls += 1
            return _Handle(single, owned=True, collective=False)
    local_options = {k: v for k, v in options.items() if k != "group_desc"} if method == "gloo_direct" else options
    if method == "split_group":
        split_options = {k: v for k, v in options.items() if k in ("timeout", "group_desc", "backend")}
        group = dist.split_group(split_ranks=plan.groups(name), **split_options)
        groups.calls += 1
        return _Handle(group, owned=True, collective=plan.group_size(name) > 1) if member and group is not None \
            else None
    if not member and method in ("gloo_direct", "new_group_local"):
        return None  # the ranks of a partial kind's groups create them among themselves
    if method == "gloo_direct":
        timeout = local_options.get("timeout")
        group = _gloo_direct_group(view.members(name), rank, f"pgroups/{_generation}/{name}/{view.group_index(name)}",
                                   timeout)
        groups.calls += 1
        return _Handle(group, owned=True, collective=True)
    if method == "new_group_local":
        group = _local_group(view.members(name), rank, f"pgroups_{_generation}_{name}_{view.group_index(name)}",
                             options)
        groups.calls += 1
        return _Handle(group, owned=True, collective=True)
    mine = None
    for ranks in plan.groups(name):
        group = dist.new_group(ranks, **options)
        groups.calls += 1
        if rank in ranks:
            mine = _Handle(group, owned=True, collective=len(ranks) > 1)
    return mine


def _singleton_is_local(backend: Optional[str]) -> bool:
    """Whether this torch makes a one-rank group by the rank alone (_singleton) for
    ``backend`` (None: the default group's), rather than by the plain loop."""
    return _has_local_synchronization() or (gloo_direct_available() and (backend or str(dist.get_backend())) == "gloo")


def _singleton(rank: int, name: str, options: Dict[str, Any]) -> Any:
    """This rank's one-rank group, created by this rank alone: the cheapest correct choice
    of the installed torch; None where only the plain loop is correct."""
    if _has_local_synchronization():
        return _local_group([rank], rank, f"pgroups_{_generation}_{name}_r{rank}", options)
    backend = options.get("backend") or str(dist.get_backend())
    if gloo_direct_available() and backend == "gloo":
        return _gloo_direct_group([rank], rank, f"pgroups/{_generation}/{name}/single/{rank}", options.get("timeout"))
    return None


def _local_group(ranks: List[int], rank: int, name: str, options: Dict[str, Any]) -> Any:
    """``new_group(ranks, use_local_synchronization=True)`` under a name unique in the job.

    torch names such a group by a hash of its ranks and of how many groups this process
    holds now, so a group created after another with the same ranks was destroyed gets
    the destroyed one's name, and gloo then reads the dead group's addresses from the
    store (connection refused). Where torch's helper takes a name, pgroups gives one that
    never repeats (the call's generation, the kind, the group), and registers the ranks
    as new_group does; elsewhere the public call."""
    from torch.distributed import distributed_c10d as c10d

    helper = getattr(c10d, "_new_process_group_helper", None)
    wanted = ("group_name", "group_desc", "timeout", "backend_options")
    if helper is None or not all(p in _parameters(helper) for p in wanted) or \
            not hasattr(getattr(c10d, "_world", None), "pg_group_ranks"):
        return dist.new_group(ranks, use_local_synchronization=True, **options)
    backend = c10d.Backend(options.get("backend") or str(dist.get_backend()))
    store = c10d._get_default_store()
    if backend == c10d.Backend.GLOO:
        store = rendezvous_store(store, len(ranks))
    group, _ = helper(len(ranks), ranks.index(rank), ranks, backend, store, name,
                      backend_options=None, timeout=options.get("timeout") or c10d.default_pg_timeout,
                      group_desc=options.get("group_desc"))
    c10d._world.pg_group_ranks[group] = {global_rank: group_rank for group_rank, global_rank in enumerate(ranks)}
    return group


def _gloo_direct_group(ranks: List[int], rank: int, name: str, timeout: Optional[Any]) -> Any:
    # What torch 1.x's new_group does for a member of the group, without the barrier over
    # the world: the members rendezvous through a prefix of the default store.
    from torch.distributed import distributed_c10d as c10d

    store = c10d._get_default_store()
    pg = c10d.ProcessGroupGloo(c10d.PrefixStore(name + "/", store), ranks.index(rank), len(ranks),
                               timeout=timeout or c10d.default_pg_timeout)
    # c10d's private maps are typed for torch 2's ProcessGroup keys; torch 1.x (the only
    # caller: gloo_direct) keys them by the backend object itself.
    c10d._pg_map[pg] = (c10d.Backend.GLOO, store)  # type: ignore[index]
    c10d._pg_names[pg] = name  # type: ignore[index,assignment]
    ranks_of = {global_rank: group_rank for group_rank, global_rank in enumerate(ranks)}
    c10d._pg_group_ranks[pg] = ranks_of  # type: ignore[index]
    return pg


def device_mesh(source: Union[Plan, TorchGroups], device_type: str = "cpu", *, timeout: Any = None,
                method: Optional[str] = None, share: bool = True) -> Any:
    """A ``torch.distributed.device_mesh.DeviceMesh`` over pgroups' own groups, with
    ``mesh_dim_names`` the plan's mesh dimensions slowest first (a mesh tp=2,dp=2,pp=2
    gives ``("pp", "dp", "tp")``; a preset ``("data", "pipe", "tensor")``, or the kinds
    that split the tensor group in place of ``tensor``, with ``mesh["tensor"]`` a
    flattened dimension then). Every kind of the plan whose groups are a run of adjacent
    dimensions is a flattened dimension too (``mesh["tp-dp"]``, ``mesh["model"]``), as the
    plan's view says (``RankView.flattened_dims``).

    ``source`` is a Plan (its groups are created here, collectively, as
    :func:`create_groups` does, with ``timeout``, ``method``, ``share``) or the
    TorchGroups of an earlier ``create_groups``. No group is created twice; a dimension
    whose one-dimension kind the plan lacks is created for the mesh (a one-rank group
    costs no collective). :func:`mesh_groups` gives the TorchGroups behind the mesh (their
    ``communicators`` are its bill). torch >= 2.4; ConfigError before.
    """
    return make_device_mesh(_FRONT, source, device_type, timeout, method, share)


def init_device_mesh(device_type: str, mesh_shape: Any, *, mesh_dim_names: Any = None, timeout: Any = None,
                     method: Optional[str] = None, share: bool = True) -> Any:
    """torch's ``init_device_mesh`` on pgroups' engine: the same call, in torch's order
    (``mesh_shape`` slowest dimension first, ``mesh_dim_names`` naming each), so that
    migrating is one line; the groups are pgroups' (one agreement, the timeout, sharing:
    a one-rank dimension costs no collective, the whole world is the default group).
    Under torchrun with no default group yet it makes one, as torch's does.

    ``mesh_dim_names`` is required (torch's own call needs it to slice by name). Torch's
    flatten idiom works on the result: ``mesh["dp", "tp"]._flatten()`` gives the flattened
    dimension (``"dp_tp"``, or the name given). ConfigError or TypeError on every rank for a
    missing or mismatched ``mesh_dim_names``, a size below 1 or a shape whose product is not
    the world; as :func:`device_mesh` otherwise."""
    if not dist.is_initialized():
        init_default_group(device_type)  # first: it is the channel that carries a check's failure
    try:
        plan = _plan_of_torch_shape(mesh_shape, mesh_dim_names)
    except Exception as error:  # every class a check raises is carried, as it is
        reject(error, timeout)
    return make_device_mesh(_FRONT, plan, device_type, timeout, method, share)


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


# What _torch_mesh needs of this module, handed to it rather than imported by it.
_FRONT = types.SimpleNamespace(create_groups=_create_groups, singleton=_singleton, timeout_seconds=timeout_seconds,
                               agree_on=agree_on, plan_fields=plan_fields, reject=reject)


# Rebuilding after a lost rank (docs/using/recovery.md): a module of its own, which imports this
# one only when a recovery runs.
from ._torch_recovery import Heartbeat, Recovered, default_group_prefix, recover, start_heartbeat  # noqa: E402

__all__ += ["Heartbeat", "Recovered", "default_group_prefix", "recover", "start_heartbeat"]
