"""Creating a plan's torch groups: the one place every torch front door creates them through
(pgroups.torch's create_groups, device_mesh and init_device_mesh, pgroups.megatron,
pgroups.colossal, pgroups.torch.recover). It holds the methods this torch offers, the
agreement of one collective call over the default store (plan_fields, agree_on, reject),
the creation of each kind by the C++ sharing decision, and the adapters to torch's internals
(gloo_direct's registry, one-rank and local groups, the private store exchange).
pgroups.torch is the facade: the public names and their documentation."""

from __future__ import annotations

import datetime
import functools
import inspect
import time
from typing import Any, Dict, Iterable, List, NoReturn, Optional, Tuple

import torch
import torch.distributed as dist

from . import _pgroups
from ._checks import carrying_timeout_seconds, check_bool, check_token, timeout_seconds
from ._modes import KindLike, ParallelMode, mode_value
from ._plan import Plan
from ._torch_agree import Watchdog, agree
from ._torch_groups import GroupHandle, TorchGroups, bind_kind
from ._torch_rebuild import is_device_backend
from ._torch_store import rendezvous_store

METHODS = ("split_group", "new_group_local", "new_group", "gloo_direct")
# The key of the default group among a creation's groups: a tuple, never a kind's name.
_WORLD: Tuple[str] = ("world",)
DEFAULT_TIMEOUT_SECONDS: float = _pgroups.default_timeout_seconds
# The agreements made by this process: each collective call's is the next, the same on every rank.
_generation = 0


def agreements_made() -> int:
    """How many agreements this process has made (each collective call of a front door makes one)."""
    return _generation


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
    if method == "split_group" and not is_device_backend(backend):
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


def create_groups(plan: Optional[Plan] = None, *, pipeline: int = 1, tensor: int = 1, mode: Optional[str] = None,
                  depth: Optional[int] = None, legacy_sequence_dp: bool = False,
                  kinds: Optional[Iterable[KindLike]] = None, backend: Optional[str] = None, timeout: Any = None,
                  method: Optional[str] = None, share: bool = True, door: Tuple[Tuple[str, str], ...] = (),
                  door_error: Optional[BaseException] = None, rank_map: Any = None) -> TorchGroups:
    """pgroups.torch.create_groups (its docstring says what), also for a front door that
    creates groups as one step of its own call (device_mesh, the drop-ins): ``door`` is
    the door's own settings and ``door_error`` the error its checks hit, both carried by
    this one agreement, so that the call agrees once."""
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
            if not plan.has_kind(name):
                raise _pgroups.StateError(
                    f"group kind '{name}' is not a group kind of {plan!r}; its kinds are "
                    f"{', '.join(plan.group_kinds)}")
            names[i] = plan.kind_name(name)
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
    fields: List[Tuple[str, str]] = plan.setting_fields() if plan is not None else []
    fields += list(options.items())
    text = plan.setting_text() if plan is not None else "plan=-"
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
    agree_on([], error, carrying_timeout_seconds(timeout))
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
    handles: Dict[Tuple[Any, ...], Optional[GroupHandle]] = {}
    try:
        for key in order:
            kinds = owners[key]
            watchdog.enter("group", f"the creation of the group of kind {'+'.join(kinds)}")
            if key == _WORLD:
                handles[key] = GroupHandle(dist.group.WORLD, owned=False, collective=False)
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
        bind_kind(groups, name, handles[key_of[name]])
    groups.seconds = time.perf_counter() - start


def _create_kind(groups: TorchGroups, name: str, options: Dict[str, Any]) -> Optional[GroupHandle]:
    """This rank's group of one kind (None for a partial kind it is not in), by the method."""
    plan, rank, method, view = groups.plan, groups.rank, groups.method, groups.view
    member = view.is_member(name)
    if plan.group_size(name) == 1:
        if not member:
            return None  # a partial kind of one-rank groups (Megatron's pos_embd) leaves this rank out
        single = singleton_group(rank, name, options)
        if single is not None:
            groups.calls += 1
            return GroupHandle(single, owned=True, collective=False)
    local_options = {k: v for k, v in options.items() if k != "group_desc"} if method == "gloo_direct" else options
    if method == "split_group":
        split_options = {k: v for k, v in options.items() if k in ("timeout", "group_desc", "backend")}
        group = dist.split_group(split_ranks=plan.groups(name), **split_options)
        groups.calls += 1
        return GroupHandle(group, owned=True, collective=plan.group_size(name) > 1) if member and group is not None \
            else None
    if not member and method in ("gloo_direct", "new_group_local"):
        return None  # the ranks of a partial kind's groups create them among themselves
    if method == "gloo_direct":
        timeout = local_options.get("timeout")
        group = _gloo_direct_group(view.members(name), rank,
                                   _pgroups.store_keys.direct_group_name(_generation, name, view.group_index(name)),
                                   timeout)
        groups.calls += 1
        return GroupHandle(group, owned=True, collective=True)
    if method == "new_group_local":
        group = local_group(view.members(name), rank,
                            _pgroups.store_keys.local_group_name(_generation, name, view.group_index(name)), options)
        groups.calls += 1
        return GroupHandle(group, owned=True, collective=True)
    mine = None
    for ranks in plan.groups(name):
        group = dist.new_group(ranks, **options)
        groups.calls += 1
        if rank in ranks:
            mine = GroupHandle(group, owned=True, collective=len(ranks) > 1)
    return mine


def _singleton_is_local(backend: Optional[str]) -> bool:
    """Whether this torch makes a one-rank group by the rank alone (_singleton) for
    ``backend`` (None: the default group's), rather than by the plain loop."""
    return _has_local_synchronization() or (gloo_direct_available() and (backend or str(dist.get_backend())) == "gloo")


def singleton_group(rank: int, name: str, options: Dict[str, Any]) -> Any:
    """This rank's one-rank group, created by this rank alone: the cheapest correct choice
    of the installed torch; None where only the plain loop is correct."""
    if _has_local_synchronization():
        return local_group([rank], rank, _pgroups.store_keys.local_group_name(_generation, name, 0, rank), options)
    backend = options.get("backend") or str(dist.get_backend())
    if gloo_direct_available() and backend == "gloo":
        return _gloo_direct_group([rank], rank, _pgroups.store_keys.direct_group_name(_generation, name, 0, rank),
                                  options.get("timeout"))
    return None


def local_group(ranks: List[int], rank: int, name: str, options: Dict[str, Any]) -> Any:
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
