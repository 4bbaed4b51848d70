"""torch.distributed process groups of a pgroups plan.

After ``torch.distributed.init_process_group``, :func:`create_groups` creates the groups of
a plan (all its modes, or the ones asked for). Before the first group, every rank
validates the plan and one all-reduce over the default group checks that all ranks hold
the same plan, modes and creation method: a mismatch raises
:class:`pgroups.MismatchError`, and an invalid plan :class:`pgroups.ConfigError`, on
every rank, instead of leaving ranks waiting in ``new_group`` forever.

Groups are created with the fastest call the installed torch offers:

``split_group``
    ``torch.distributed.split_group`` (torch >= 2.5): one call per mode, NCCL default
    group only;
``new_group_local``
    ``new_group(ranks, use_local_synchronization=True)`` (torch >= 2.2): every rank
    creates its own group only, synchronising with its members, not the world;
``new_group``
    plain ``new_group(ranks)``: every rank enters every group's creation, which
    torch requires, with a barrier over the world each time (Colossal-AI's algorithm).

The repr of :class:`TorchGroups` names the method used.

One more method is available on request, ``method="gloo_direct"``, for the torch
versions older than 2.0 that keep their group registry in module globals (Debian 12's
torch 1.13): every rank constructs only its own group per mode
(``ProcessGroupGloo`` over a prefix of the default store, as ``new_group`` does inside)
and registers it with torch.distributed as ``new_group`` would, so ``get_rank(group)``,
``all_reduce(..., group=group)`` and ``destroy_process_group(group)`` work. It skips
``new_group``'s barrier over the whole world per group, but relies on torch's private
registry, hence opt-in; :func:`gloo_direct_available` tells whether this torch has it.
"""

from __future__ import annotations

import inspect
import time
import zlib
from typing import Any, Dict, Iterable, List, Optional, Sequence

import torch
import torch.distributed as dist

from . import _pgroups
from ._modes import ModeLike, ParallelMode, mode_value
from ._plan import Plan

METHODS = ("split_group", "new_group_local", "new_group", "gloo_direct")
_generation = 0


def gloo_direct_available() -> bool:
    """Whether ``method="gloo_direct"`` works with this torch: gloo is built and the
    group registry is the module globals of torch 1.x."""
    from torch.distributed import distributed_c10d as c10d

    return (dist.is_gloo_available() and all(hasattr(c10d, name) for name in (
        "_pg_map", "_pg_names", "_pg_group_ranks", "_get_default_store", "ProcessGroupGloo", "PrefixStore")))


def available_method(backend: Optional[str] = None) -> str:
    """The fastest creation method the installed torch offers for ``backend`` (default:
    the default group's backend)."""
    if backend is None and dist.is_initialized():
        backend = str(dist.get_backend())
    if hasattr(dist, "split_group") and backend == "nccl":
        return "split_group"
    if "use_local_synchronization" in inspect.signature(dist.new_group).parameters:
        return "new_group_local"
    return "new_group"


class TorchGroups:
    """The torch process groups of one plan on this rank: per mode, this rank's group.

    ``get_group(mode)`` is a ``torch.distributed.ProcessGroup``; ranks lists, local
    ranks and sizes come from the plan. ``destroy()`` destroys every group it created.
    """

    def __init__(self, plan: Plan, rank: int, method: str) -> None:
        self.plan = plan
        self.rank = rank
        self.method = method
        self.seconds = 0.0
        self.calls = 0
        self._groups: Dict[str, Any] = {}

    @property
    def kinds(self) -> List[str]:
        """The names of the group kinds created, in creation order."""
        return list(self._groups)

    @property
    def modes(self) -> List[ParallelMode]:
        """The preset modes among kinds."""
        values = {m.value for m in ParallelMode}
        return [ParallelMode(name) for name in self._groups if name in values]

    def get_group(self, mode: ModeLike) -> Any:
        """This rank's group of the kind; None when the rank is in no group of a partial
        kind (Megatron-LM's ``embd``, ``pos_embd``)."""
        name = self._name(mode)
        try:
            return self._groups[name]
        except KeyError:
            raise _pgroups.StateError(
                f"group kind '{name}' has no torch group here; the kinds created are "
                f"{', '.join(repr(m) for m in self._groups) or 'none'}") from None

    def _name(self, mode: ModeLike) -> str:
        name = mode_value(mode)
        # A mesh token may be written with its dimensions in another order ("dp-tp").
        if name not in self._groups and self.plan.has_mode(name):
            canonical = self.plan._layout.kind_name(name)
            return canonical if canonical in self._groups else name
        return name

    def get_ranks_in_group(self, mode: ModeLike) -> List[int]:
        return self.plan.group_of(self.rank, self._name(mode)) if self._check(mode) else []

    def get_local_rank(self, mode: ModeLike) -> int:
        return self.plan.local_rank(self.rank, self._name(mode)) if self._check(mode) else -1

    def get_world_size(self, mode: ModeLike) -> int:
        return self.plan.group_size(self._name(mode)) if self._check(mode) else -1

    def _check(self, mode: ModeLike) -> bool:
        return self.get_group(mode) is not None

    def destroy(self) -> None:
        """Destroys every group created (not the default group); a second call does nothing."""
        for group in self._groups.values():
            if group is not None and group is not dist.GroupMember.NON_GROUP_MEMBER:
                dist.destroy_process_group(group)
        self._groups.clear()

    def __repr__(self) -> str:
        return (f"TorchGroups({self.plan!r}, modes={len(self._groups)}, method={self.method!r}, "
                f"calls={self.calls}, seconds={self.seconds:.3f})")


def create_groups(
    plan: Optional[Plan] = None,
    *,
    pipeline: int = 1,
    tensor: int = 1,
    mode: Optional[str] = None,
    depth: Optional[int] = None,
    legacy_sequence_dp: bool = False,
    modes: Optional[Iterable[ModeLike]] = None,
    backend: Optional[str] = None,
    timeout: Optional[Any] = None,
    method: Optional[str] = None,
) -> TorchGroups:
    """Creates the torch process groups of ``plan`` (or of the plan of ``pipeline``,
    ``tensor``, ``mode``, ``depth`` over the default group's world), for ``modes`` (default:
    every mode of the plan, in creation order). Collective over the default group: every
    rank must call it with the same arguments. ``backend`` and ``timeout`` go to torch;
    ``method`` forces one of METHODS (default: :func:`available_method`).

    Raises, on every rank and before any group is created: MismatchError when ranks
    disagree (the message lists which ranks hold what), ConfigError for an invalid plan
    or a plan whose world size is not torch's, StateError for a mode the plan lacks.
    """
    if not dist.is_initialized():
        raise _pgroups.StateError("pgroups.torch.create_groups needs torch.distributed.init_process_group first")
    world = dist.get_world_size()
    rank = dist.get_rank()
    chosen = method or available_method(backend)

    error: Optional[BaseException] = None
    names: List[str] = []
    try:
        if chosen not in METHODS:
            raise _pgroups.ConfigError(f"creation method '{chosen}' is unknown; the methods are {', '.join(METHODS)}")
        if chosen == "gloo_direct" and not (gloo_direct_available() and (backend or str(dist.get_backend())) == "gloo"):
            raise _pgroups.ConfigError(
                f"creation method 'gloo_direct' needs the gloo backend and torch < 2.0 (torch {torch.__version__}, "
                f"backend {backend or dist.get_backend()}); use {available_method(backend)!r}")
        if plan is None:
            plan = Plan(world, pipeline, tensor, mode, depth, legacy_sequence_dp)
        elif plan.world_size != world:
            raise _pgroups.ConfigError(
                f"the plan's world size {plan.world_size} is not torch.distributed's world size {world}")
        names = plan.group_kinds if modes is None else [mode_value(m) for m in modes]
        for i, name in enumerate(names):
            if not plan.has_mode(name):
                raise _pgroups.StateError(
                    f"group kind '{name}' is not a group kind of {plan!r}; its kinds are "
                    f"{', '.join(plan.group_kinds)}")
            names[i] = plan._layout.kind_name(name)
    except _pgroups.Error as caught:
        error = caught
    described = (f"{plan!r}" if plan is not None else
                 f"pipeline={pipeline} tensor={tensor} mode={mode} depth={depth} legacy={legacy_sequence_dp}")
    described += f" modes={','.join(names) if error is None else '?'} method={chosen} backend={backend}"
    _agree(described, error, rank, world)
    assert plan is not None

    global _generation
    _generation += 1  # every rank calls create_groups collectively, so the counts agree
    groups = TorchGroups(plan, rank, chosen)
    start = time.perf_counter()
    options: Dict[str, Any] = {}
    if backend is not None:
        options["backend"] = backend
    if timeout is not None:
        options["timeout"] = timeout
    for name in names:
        member = plan.is_member(rank, name)
        if not member:
            groups._groups[name] = None
        if chosen == "split_group":
            groups._groups[name] = dist.split_group(split_ranks=plan.groups(name), **options)
            groups.calls += 1
        elif not member and chosen in ("gloo_direct", "new_group_local"):
            pass  # the ranks of a partial kind's groups create them among themselves
        elif chosen == "gloo_direct":
            groups._groups[name] = _gloo_direct_group(plan.group_of(rank, name), rank,
                                                      f"pgroups/{_generation}/{name}/{plan.group_index(rank, name)}",
                                                      timeout)
            groups.calls += 1
        elif chosen == "new_group_local":
            groups._groups[name] = dist.new_group(plan.group_of(rank, name), use_local_synchronization=True,
                                                  **options)
            groups.calls += 1
        else:
            for ranks in plan.groups(name):
                group = dist.new_group(ranks, **options)
                groups.calls += 1
                if rank in ranks:
                    groups._groups[name] = group
    groups.seconds = time.perf_counter() - start
    return groups


def _gloo_direct_group(ranks: List[int], rank: int, name: str, timeout: Optional[Any]) -> Any:
    # What torch 1.x's new_group does for a member of the group, without the barrier over
    # the world: the members rendezvous through a prefix of the default store.
    from torch.distributed import distributed_c10d as c10d

    store = c10d._get_default_store()
    pg = c10d.ProcessGroupGloo(c10d.PrefixStore(name + "/", store), ranks.index(rank), len(ranks),
                               timeout=timeout or c10d.default_pg_timeout)
    c10d._pg_map[pg] = (c10d.Backend.GLOO, store)
    c10d._pg_names[pg] = name
    c10d._pg_group_ranks[pg] = {global_rank: group_rank for group_rank, global_rank in enumerate(ranks)}
    return pg


def _agree(described: str, error: Optional[BaseException], rank: int, world: int) -> None:
    # One all-reduce (MAX) of (hash, -hash, failed): the hashes agree exactly when the
    # maximum of h equals the minimum. Every rank then takes the same branch.
    digest = zlib.crc32(described.encode())
    device = torch.device("cuda", torch.cuda.current_device()) if str(dist.get_backend()) == "nccl" \
        else torch.device("cpu")
    flags = torch.tensor([digest, -digest, 1 if error is not None else 0], dtype=torch.int64, device=device)
    dist.all_reduce(flags, op=dist.ReduceOp.MAX)
    if int(flags[0]) != -int(flags[1]):
        texts: List[Any] = [None] * world
        dist.all_gather_object(texts, described)
        holders: Dict[str, List[int]] = {}
        for r, text in enumerate(texts):
            holders.setdefault(str(text), []).append(r)
        parts = "; ".join(f"ranks {_ranges(ranks)} hold {text}" for text, ranks in holders.items())
        raise _pgroups.MismatchError(f"torch group plan mismatch across ranks: {parts}")
    if int(flags[2]):
        if error is not None:
            raise error
        raise _pgroups.ConfigError(f"another rank rejected the plan {described} (rank {rank} accepted it)")


def _ranges(ranks: Sequence[int]) -> str:
    out: List[str] = []
    start = prev = ranks[0]
    for r in list(ranks[1:]) + [None]:  # type: ignore[list-item]
        if r is not None and r == prev + 1:
            prev = r
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if r is not None:
            start = prev = r
    return ",".join(out)
