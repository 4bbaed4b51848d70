"""ParallelContext: the live process groups of a job on MPI, through mpi4py."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Union

from . import _pgroups
from ._modes import ModeLike, ParallelMode, mode_value
from ._plan import Plan, _mesh_dims


class ParallelContext:
    """Every process group of a configuration as MPI communicators, with the query API of
    Colossal-AI's ``ParallelContext`` (same method names).

    ``ParallelContext(pipeline=1, tensor=1, mode=None, depth=None, config=None, comm=None,
    strategy=None, timeout=None, legacy_sequence_dp=None, seed=None, device=None,
    devices_per_node=0)`` is collective over ``comm`` (an ``mpi4py.MPI.Intracomm``,
    default ``MPI.COMM_WORLD``, borrowed, never freed). It is built by the C++
    ``pgroups::ParallelContext``: the whole plan is validated, every rank checks that all
    hold the same configuration and strategy (:class:`pgroups.MismatchError` on every
    rank otherwise, :class:`pgroups.ConfigError` on every rank for an invalid plan, before
    any group is created), then one communicator per mode is created with ``strategy``
    (``"create_group"``, the default, ``"comm_split"``, ``"comm_create"`` or
    ``"per_group"``). ``timeout`` (seconds; default ``PGROUPS_TIMEOUT`` or 300, 0 = none)
    bounds the wait for the other ranks (:class:`pgroups.TimeoutError`). The GIL is
    released while ranks wait on each other.

    ``config`` is a TOML, JSON or Colossal-AI ``.py`` file; explicit arguments override
    its values. ``mesh=`` (a pgroups.Mesh or a dict, fastest first) and ``groups=`` (group
    tokens such as ``"tp-dp"``) build a named mesh's groups instead of the presets, as
    Plan does; every query then takes the token (``get_group("tp-dp")``). ``get_group`` / ``get_cpu_group`` return ``mpi4py.MPI.Intracomm`` objects
    wrapping the context's own communicators (``MPI.Comm.Compare`` says IDENT across
    calls): never ``Free()`` them; ``destroy()`` (or leaving a ``with`` block) frees them,
    collectively, after which they must not be used.

    ``share_communicators`` (default True, the same on every rank): kinds with the same
    groups share one communicator, a whole-world kind is the world's duplicate, a kind of
    one-rank groups gets a local one (docs/context.md); ``communicators()`` gives the bill.
    Operations on two kinds that share a communicator are ordered on it.
    """

    def __init__(
        self,
        pipeline: Optional[int] = None,
        tensor: Optional[int] = None,
        mode: Optional[str] = None,
        depth: Optional[int] = None,
        config: Optional[Union[str, "os.PathLike[str]"]] = None,
        comm: Any = None,
        strategy: Optional[str] = None,
        timeout: Optional[float] = None,
        legacy_sequence_dp: Optional[bool] = None,
        seed: Optional[int] = None,
        device: Optional[int] = None,
        devices_per_node: int = 0,
        *,
        mesh: Any = None,
        groups: Optional[List[str]] = None,
        share_communicators: bool = True,
    ) -> None:
        if not getattr(_pgroups, "with_mpi", False):
            raise _pgroups.ConfigError(
                "pgroups.ParallelContext needs MPI: this build of the module has no MPI backend "
                "(configure with PGROUPS_WITH_MPI=ON and python3-mpi4py installed)")
        if comm is None:
            from mpi4py import MPI

            comm = MPI.COMM_WORLD
        settings: Dict[str, Any] = {"world_size": 0, "pipeline": 1, "tensor": 1, "mode": None, "depth": None,
                                    "legacy_sequence_dp": False, "seed": 1024, "mesh": None, "groups": []}
        if config is not None:
            settings.update(_pgroups.read_config_file(os.fspath(config)))
        explicit = {"pipeline": pipeline, "tensor": tensor, "mode": mode, "depth": depth,
                    "legacy_sequence_dp": legacy_sequence_dp, "seed": seed, "mesh": _mesh_dims(mesh),
                    "groups": None if groups is None else [str(g) for g in groups]}
        settings.update({key: value for key, value in explicit.items() if value is not None})
        self._context = _pgroups.Context(
            int(settings["world_size"]), int(settings["pipeline"]), int(settings["tensor"]), settings["mode"],
            settings["depth"], bool(settings["legacy_sequence_dp"]), int(settings["seed"]), settings["mesh"],
            settings["groups"] or [], comm, strategy,
            None if timeout is None else float(timeout), device, int(devices_per_node),
            bool(share_communicators))
        self._plan = Plan._from_config_dict(self._context.layout().config())

    # The plan and sizes ---------------------------------------------------------------
    @property
    def plan(self) -> Plan:
        """The validated layout (world size resolved); valid after destroy()."""
        return self._plan

    @property
    def world_size(self) -> int:
        return self._plan.world_size

    @property
    def data_parallel_size(self) -> int:
        return self._plan.data_parallel_size

    @property
    def pipeline_parallel_size(self) -> int:
        return self._plan.pipeline_size

    @property
    def tensor_parallel_size(self) -> int:
        return self._plan.tensor_size

    @property
    def strategy(self) -> str:
        return self._context.strategy()

    @property
    def share_communicators(self) -> bool:
        return self._context.share_communicators()

    def communicators(self) -> Dict[str, object]:
        """This rank's communicator bill, as ``pgroups verify`` reports it."""
        return self._plan.communicators(self.get_global_rank(), self.share_communicators)

    @property
    def timeout(self) -> float:
        """The timeout in effect, in seconds (0 = none)."""
        return self._context.timeout_seconds()

    @property
    def modes(self) -> List[ParallelMode]:
        """The preset modes with a live communicator, in creation order; empty for a mesh
        and after destroy()."""
        return [ParallelMode(name) for name in self._context.modes()]

    @property
    def group_kinds(self) -> List[str]:
        """Every group kind's name (modes' values, or a mesh's tokens), in creation order;
        empty after destroy()."""
        return self._context.groups()

    def is_member(self, kind: ModeLike) -> bool:
        """Whether this rank has a group of the kind: False only for a partial kind
        (``embd``, ``pos_embd``), for which get_group raises StateError."""
        return self._context.is_member(mode_value(kind))

    # Colossal-AI's queries ------------------------------------------------------------
    def is_initialized(self, mode: ModeLike) -> bool:
        return self._context.is_initialized(mode_value(mode))

    def get_global_rank(self) -> int:
        return self._context.global_rank()

    def get_local_rank(self, mode: ModeLike) -> int:
        return self._context.local_rank(mode_value(mode))

    def get_world_size(self, mode: ModeLike) -> int:
        return self._context.world_size(mode_value(mode))

    def get_group(self, mode: ModeLike) -> Any:
        """The mode's communicator, an ``mpi4py.MPI.Intracomm`` on the context's handle."""
        return self._context.get_group(mode_value(mode))

    def get_cpu_group(self, mode: ModeLike) -> Any:
        """The mode's communicator for host traffic (the same as get_group on MPI)."""
        return self._context.get_cpu_group(mode_value(mode))

    def get_ranks_in_group(self, mode: ModeLike) -> List[int]:
        return self._context.ranks_in_group(mode_value(mode))

    def get_next_global_rank(self, mode: ModeLike) -> int:
        return self._context.next_global_rank(mode_value(mode))

    def get_prev_global_rank(self, mode: ModeLike) -> int:
        return self._context.prev_global_rank(mode_value(mode))

    def is_first_rank(self, mode: ModeLike) -> bool:
        return self._context.is_first_rank(mode_value(mode))

    def is_last_rank(self, mode: ModeLike) -> bool:
        return self._context.is_last_rank(mode_value(mode))

    def is_pipeline_first_stage(self, ignore_virtual: bool = False) -> bool:
        return self._context.is_pipeline_first_stage(ignore_virtual)

    def is_pipeline_last_stage(self, ignore_virtual: bool = False) -> bool:
        return self._context.is_pipeline_last_stage(ignore_virtual)

    def set_virtual_pipeline_parallel_size(self, size: Optional[int]) -> None:
        self._context.set_virtual_pipeline_parallel_size(size)

    def set_virtual_pipeline_parallel_rank(self, rank: int) -> None:
        self._context.set_virtual_pipeline_parallel_rank(rank)

    @property
    def virtual_pipeline_parallel_size(self) -> Optional[int]:
        return self._context.virtual_pipeline_parallel_size()

    @property
    def virtual_pipeline_parallel_rank(self) -> int:
        return self._context.virtual_pipeline_parallel_rank()

    def get_seed(self, mode: ModeLike) -> int:
        """The mode's seed: the base seed, and for TENSOR ``seed + tp_local + 1024 * pp_local``."""
        return self._context.seed(mode_value(mode))

    @property
    def seeds(self) -> Dict[Union[ParallelMode, str], int]:
        """Every live kind's seed, keyed by ParallelMode for presets, by name for a mesh."""
        if self.modes:
            return {mode: self.get_seed(mode) for mode in self.modes}
        return {kind: self.get_seed(kind) for kind in self.group_kinds if self.is_member(kind)}

    def creation_seconds(self, mode: ModeLike) -> float:
        return self._context.creation_seconds(mode_value(mode))

    @property
    def num_processes_on_current_node(self) -> int:
        return self._context.processes_on_node()

    @property
    def device(self) -> int:
        """This rank's device ordinal (advice with MPI: global rank % devices per node)."""
        return self._context.device()

    # Lifetime ------------------------------------------------------------------------
    def destroy(self) -> None:
        """Frees every communicator, collectively; a second call does nothing."""
        self._context.destroy()

    def __enter__(self) -> "ParallelContext":
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    def __repr__(self) -> str:
        if not hasattr(self, "_context"):
            return "ParallelContext(<not constructed>)"
        state = "live" if self._context.groups() else "destroyed"
        return (f"ParallelContext({self._plan!r}, rank={self.get_global_rank()}, strategy={self.strategy!r}, "
                f"{state})")
