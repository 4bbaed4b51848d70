"""TorchGroups: the torch process groups of one plan on one rank, with ParallelContext's queries."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

import torch.distributed as dist

from . import _pgroups
from ._checks import check_int
from ._modes import KindLike, ParallelMode, mode_value
from ._plan import Plan


class GroupHandle:
    """One torch group and the kinds that share it. ``owned`` is False for the default
    group, which pgroups never destroys; ``collective`` says whether its creation took a
    collective among two or more ranks (what the bill counts as created)."""

    def __init__(self, group: Any, owned: bool, collective: bool) -> None:
        self.group = group
        self.owned = owned
        self.collective = collective
        self.kinds: List[str] = []


class TorchGroups:
    """The torch process groups of one plan on this rank, answering what
    :class:`pgroups.ParallelContext` answers, with the same names. Every answer comes from
    the plan's C++ view of this rank (``view``, :meth:`pgroups.Plan.view`); this class
    holds only the torch handles. A rank in no group of a partial kind (``embd``) gets a
    StateError naming the kind and the rank from the group, size, rank and neighbour
    queries, as from ParallelContext (ask ``is_member`` first).

    ``get_group(kind)`` is a ``torch.distributed.ProcessGroup`` (None for a partial kind
    this rank is not in). Kinds whose groups are the same partition of the world share one
    torch group, a kind that is the whole world is the default group when the backend
    asked for is the default group's (another backend: one new group of that backend),
    unless the groups were created with ``share=False``. ``destroy_group(kind)`` frees a shared group only
    when the last kind sharing it goes; ``destroy()`` frees every group; neither ever
    destroys the default group.
    """

    def __init__(self, plan: Plan, rank: int, method: str, share: bool) -> None:
        self.plan = plan
        self.rank = rank
        self.method = method
        self.share = share
        self.view = plan.view(rank)
        self.seconds = 0.0
        self.calls = 0
        self._kinds: Dict[str, Optional[GroupHandle]] = {}
        self._virtual = _pgroups.VirtualPipeline()
        self.destroyed = False  # set by destroy(): a DeviceMesh over these groups is refused then
        self._meshes: Dict[str, Any] = {}  # device_type -> the DeviceMesh made over these groups

    @property
    def kinds(self) -> List[str]:
        """The names of the group kinds created, in creation order."""
        return list(self._kinds)

    group_kinds = kinds

    @property
    def modes(self) -> List[ParallelMode]:
        """The preset modes among kinds."""
        values = {m.value for m in ParallelMode}
        return [ParallelMode(name) for name in self._kinds if name in values]

    def _name(self, kind: KindLike) -> str:
        name = mode_value(kind)
        # A mesh token may be written with its dimensions in another order ("dp-tp").
        if name not in self._kinds and self.plan.has_kind(name):
            canonical = self.view.kind_name(name)
            if canonical in self._kinds:
                return canonical
        if name not in self._kinds:
            raise _pgroups.StateError(
                f"group kind '{name}' has no torch group here; the kinds created are "
                f"{', '.join(repr(m) for m in self._kinds) or 'none'}")
        return name

    def is_initialized(self, kind: KindLike) -> bool:
        """Whether the kind was created (and not destroyed)."""
        try:
            self._name(kind)
        except _pgroups.StateError:
            return False
        return True

    def is_member(self, kind: KindLike) -> bool:
        """False only for a partial kind (``embd``, ``pos_embd``) this rank is not in."""
        return self.view.is_member(self._name(kind))

    def _member(self, kind: KindLike) -> str:
        # The kind's name, or the view's StateError for a rank in none of its groups.
        name = self._name(kind)
        if not self.view.is_member(name):
            self.view.size(name)  # raises the one non-member's StateError
        return name

    def get_group(self, kind: KindLike) -> Any:
        """This rank's group of the kind; StateError when the rank is in no group of a
        partial kind."""
        name = self._member(kind)
        handle = self._kinds[name]
        if handle is None:  # not reached: a member holds a handle of every kind created
            raise _pgroups.StateError(f"rank {self.rank} holds no torch group of kind {name}")
        return handle.group

    def get_cpu_group(self, kind: KindLike) -> Any:
        """The group for host traffic: the same group when it is a gloo group."""
        group = self.get_group(kind)
        if group is not None and str(dist.get_backend(group)) != "gloo":
            raise _pgroups.StateError(
                f"group kind '{mode_value(kind)}' has a {dist.get_backend(group)} group; pgroups.torch creates no "
                "separate gloo copy: create the groups again with backend='gloo' for host traffic")
        return group

    def shared_kinds(self, kind: KindLike) -> List[str]:
        """Every kind whose queries answer from the same torch group as ``kind``."""
        handle = self._kinds[self._name(kind)]
        return [] if handle is None else list(handle.kinds)

    # ParallelContext's queries -------------------------------------------------------
    def get_global_rank(self) -> int:
        return self.rank

    def get_ranks_in_group(self, kind: KindLike) -> List[int]:
        return self.view.members(self._member(kind))

    def get_local_rank(self, kind: KindLike) -> int:
        return self.view.local_rank(self._member(kind))

    def get_world_size(self, kind: KindLike) -> int:
        return self.view.size(self._member(kind))

    def get_next_global_rank(self, kind: KindLike) -> int:
        return self.view.next_rank(self._member(kind))

    def get_prev_global_rank(self, kind: KindLike) -> int:
        return self.view.previous_rank(self._member(kind))

    def is_first_rank(self, kind: KindLike) -> bool:
        return self.view.is_first(self._member(kind))

    def is_last_rank(self, kind: KindLike) -> bool:
        return self.view.is_last(self._member(kind))

    def get_seed(self, kind: KindLike) -> int:
        """The kind's seed: the base seed, and for TENSOR ``seed + tp_local + 1024 * pp_local``."""
        return self.view.seed(self._member(kind))

    @property
    def seeds(self) -> Dict[Union[ParallelMode, str], int]:
        """Every kind's seed, keyed by ParallelMode for presets, by name for a mesh."""
        if self.modes:
            return {mode: self.get_seed(mode) for mode in self.modes}
        return {kind: self.get_seed(kind) for kind in self._kinds if self.view.is_member(kind)}

    @property
    def world_size(self) -> int:
        return self.plan.world_size

    @property
    def data_parallel_size(self) -> int:
        return self.plan.data_parallel_size

    @property
    def pipeline_parallel_size(self) -> int:
        return self.plan.pipeline_size

    @property
    def tensor_parallel_size(self) -> int:
        return self.plan.tensor_size

    def _pipeline_stage(self) -> int:
        # The pipeline coordinate, whether or not a pipeline kind was created.
        return self.view.pipeline_stage

    def _pipeline_stages(self) -> int:
        return self.view.pipeline_stages

    def is_pipeline_first_stage(self, ignore_virtual: bool = False) -> bool:
        if not ignore_virtual and not self._virtual.runs_first_chunk():
            return False
        return self._pipeline_stage() == 0

    def is_pipeline_last_stage(self, ignore_virtual: bool = False) -> bool:
        if not ignore_virtual and not self._virtual.runs_last_chunk():
            return False
        return self._pipeline_stage() == self._pipeline_stages() - 1

    def set_virtual_pipeline_parallel_size(self, size: Optional[int]) -> None:
        self._virtual.set_size(check_int("size", size, allow_none=True))

    def set_virtual_pipeline_parallel_rank(self, rank: int) -> None:
        self._virtual.set_rank(check_int("rank", rank))

    @property
    def virtual_pipeline_parallel_size(self) -> Optional[int]:
        return self._virtual.size

    @property
    def virtual_pipeline_parallel_rank(self) -> int:
        return self._virtual.rank

    # The bill ------------------------------------------------------------------------
    @property
    def communicators(self) -> Dict[str, int]:
        """This rank's bill, the C++ one (``Plan.communicators``, ``verify --format json``)
        for the plan with this object's ``share``: ``kinds``, ``distinct`` partitions with
        more than one rank per group, ``singletons`` (kinds of one-rank groups), and
        ``created``: communicators made with a collective among two or more ranks, the
        world's counted as one (torch's default group, which pgroups did not create, stands
        for the duplicate of the world MPI makes)."""
        return dict(self.view.communicators(self.share))

    # Lifetime ------------------------------------------------------------------------
    def destroy_group(self, kind: KindLike) -> None:
        """Forgets one kind; its torch group is destroyed when no other kind shares it
        (never the default group)."""
        name = self._name(kind)
        handle = self._kinds.pop(name)
        if handle is None:
            return
        handle.kinds.remove(name)
        # A mesh over this kind's group would reduce over a dead group: made again on asking.
        self._meshes.clear()
        if not handle.kinds and handle.owned and handle.group is not dist.GroupMember.WORLD:
            dist.destroy_process_group(handle.group)

    def destroy(self) -> None:
        """Destroys every group created (not the default group, nor any group pgroups did
        not create); a second call does nothing."""
        for name in list(self._kinds):
            self.destroy_group(name)
        self.destroyed = True
        self._meshes.clear()

    def __repr__(self) -> str:
        return (f"TorchGroups({self.plan!r}, kinds={len(self._kinds)}, method={self.method!r}, share={self.share}, "
                f"calls={self.calls}, seconds={self.seconds:.3f})")


# What the creation module (_torch_create), the DeviceMesh adapter (_torch_mesh) and the
# recovery (_torch_recovery) do to a TorchGroups, kept here, beside the state they touch.

def bind_kind(groups: TorchGroups, name: str, handle: Optional[GroupHandle]) -> None:
    """Gives kind ``name`` its group (None: a partial kind this rank is not in)."""
    groups._kinds[name] = handle
    if handle is not None:
        handle.kinds.append(name)


def owned_groups(groups: TorchGroups) -> List[Any]:
    """The torch groups pgroups created for ``groups`` (not the default group), once each."""
    seen: List[Any] = []
    for handle in groups._kinds.values():
        if handle is not None and handle.owned and handle.group not in seen:
            seen.append(handle.group)
    return seen


def mesh_made(groups: TorchGroups, device_type: str) -> Any:
    """The DeviceMesh already made over ``groups`` for ``device_type``, or None."""
    return groups._meshes.get(device_type)


def remember_mesh(groups: TorchGroups, device_type: str, mesh: Any) -> None:
    """Keeps the DeviceMesh made over ``groups``: a second one would collide in torch's
    registry of groups by name (forgotten when a group of ``groups`` is destroyed)."""
    groups._meshes[device_type] = mesh
