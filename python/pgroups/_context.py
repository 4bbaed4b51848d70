"""ParallelContext: the live process groups of a job, on MPI through mpi4py, or on any
bootstrap (torchrun's store, PMIx, MPI, processes started by hand) with gloo's groups."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Union

from . import _pgroups
from ._checks import carrying_timeout_seconds, check_bool, check_int, timeout_seconds
from ._modes import KindLike, ParallelMode, mode_value
from ._plan import Plan, _checked_overrides, _path
from ._renamed import renamed_keywords

#: A group kind of one live context, looked up once (:meth:`ParallelContext.kind`).
KindHandle = getattr(_pgroups, "KindHandle", None)
KindOrHandle = Union[KindLike, Any]


#: The backends a context is built with: MPI's over an mpi4py communicator, the others over
#: a bootstrap.
BACKENDS = ("mpi", "gloo", "nccl")

#: The bootstraps this process started by name, kept for its life: an environment
#: bootstrap's keys follow one sequence per process, so a second one would read the first's.
_started: Dict[str, Any] = {}


def start_bootstrap(kind: str = "auto", timeout: Any = None) -> Any:
    """The bootstrap ``kind`` names (``"auto"``, ``"mpi"``, ``"pmix"`` or ``"env"``), started
    through the C++ library's one door once per process and kept: ``rank``, ``size``,
    ``local_rank``, ``local_size``, ``all_gather(bytes, timeout, what)`` and ``barrier``.
    ``timeout`` bounds its start (seconds; default ``PGROUPS_TIMEOUT`` or 300, 0 = none).
    ConfigError for an unknown name or a launch whose variables it refuses; TimeoutError
    when rank 0 (or the store) never comes."""
    if not isinstance(kind, str):
        raise TypeError(f"bootstrap must be a name such as 'auto' or a started bootstrap, not {kind!r}")
    if kind not in _started:
        _started[kind] = _pgroups.start_bootstrap(kind, timeout_seconds(timeout) or 0.0)
    return _started[kind]


def _carrier(bootstrap: Any, timeout: Any) -> Any:
    """The bootstrap a construction's error travels on to the other ranks: the one the call
    gave, or started by the name it gave, else "auto" (a name or object that is no
    bootstrap), under the timeout the error is carried with; None when none starts."""
    if isinstance(bootstrap, _pgroups.Bootstrap):
        return bootstrap
    name = bootstrap if isinstance(bootstrap, str) and bootstrap in _pgroups.bootstrap_names() else "auto"
    try:
        return start_bootstrap(name, carrying_timeout_seconds(timeout))
    except Exception:  # noqa: BLE001 - the construction's own error is the one to raise
        return None


def _kind_arg(kind: KindOrHandle) -> Any:
    """A KindHandle as it is; a mode or a name as its string value."""
    if KindHandle is not None and isinstance(kind, KindHandle):
        return kind
    return mode_value(kind)


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
    ``"per_group"``). ``timeout`` (seconds or a ``datetime.timedelta``, at most
    ``_pgroups.largest_timeout_seconds``; default ``PGROUPS_TIMEOUT`` or 300, 0 = none)
    bounds the wait for the other ranks (:class:`pgroups.TimeoutError`). The GIL is
    released while ranks wait on each other.

    ``config`` is a TOML, JSON or Colossal-AI ``.py`` file; explicit arguments override
    its values by the CLI's own rule (a new ``mode`` drops the file's 2.5d ``depth``). An
    argument of the wrong type (TypeError) or value, or an unreadable file, on any rank is
    raised on every rank, its message naming the rank that hit it. ``mesh=`` (a pgroups.Mesh
    or a dict, fastest first) and ``groups=`` (group tokens such as ``"tp-dp"``) build a
    named mesh's groups instead of the presets, as Plan does; every query then takes the
    token (``get_group("tp-dp")``). ``get_group`` / ``get_cpu_group`` return
    ``mpi4py.MPI.Intracomm`` objects wrapping the context's own communicators (``MPI.Comm.Compare`` says IDENT across
    calls): never ``Free()`` them; ``destroy()`` (or leaving a ``with`` block) frees them,
    collectively, after which they must not be used.

    ``share_communicators`` (default True, the same on every rank): kinds with the same
    groups share one communicator, a whole-world kind is the world's duplicate, a kind of
    one-rank groups gets a local one (docs/using/context.md); ``communicators()`` gives the bill.
    Operations on two kinds that share a communicator are ordered on it.

    ``backend="gloo"`` (or ``"nccl"``, with gloo's groups as its CPU groups) builds the
    groups over ``bootstrap`` instead, with no MPI in the job unless the bootstrap is MPI's:
    a name (``"auto"``, the default, lets the launcher choose; ``"mpi"``, ``"pmix"``,
    ``"env"``), started once per process (:func:`pgroups.start_bootstrap`), or a started
    bootstrap. ``comm`` and ``strategy`` are then refused. ``get_group`` / ``get_cpu_group``
    return :class:`pgroups.Group` objects: ``name``, ``backend``, ``members`` (global
    ranks), and, through the group's own gloo context, ``rank``, ``size`` and
    ``all_gather(value)`` (every member's integer, by rank in the group; bounded by the
    timeout). An error a rank hits before the construction is carried to every rank as over
    MPI.
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
        rank_map: Any = None,
        backend: str = "mpi",
        bootstrap: Any = "auto",
    ) -> None:
        if backend != "mpi":
            # An unknown backend too: its error is carried over the bootstrap the call names,
            # which the other ranks of a bootstrap job wait in.
            self._build_on_bootstrap(backend, bootstrap, comm, strategy, timeout, device, devices_per_node,
                                     share_communicators, config,
                                     lambda: _checked_overrides(pipeline, tensor, mode, depth, legacy_sequence_dp,
                                                                seed, mesh, groups, rank_map=rank_map))
            return
        if not getattr(_pgroups, "with_mpi", False):
            raise _pgroups.ConfigError(
                "pgroups.ParallelContext with backend 'mpi' needs MPI: this build of the module has no MPI "
                "backend (configure with PGROUPS_WITH_MPI=ON and python3-mpi4py installed); backend='gloo' "
                "runs on any bootstrap without it")
        if comm is None:
            from mpi4py import MPI

            comm = MPI.COMM_WORLD
        try:
            # This front door's one resolution (the argument, else PGROUPS_TIMEOUT, else the
            # default); None from it is "no timeout", which the C++ layer reads as 0.
            checked_timeout = timeout_seconds(timeout) or 0.0
            overrides = _checked_overrides(pipeline, tensor, mode, depth, legacy_sequence_dp, seed, mesh, groups,
                                           rank_map=rank_map)
            if strategy is not None and not isinstance(strategy, str):
                raise TypeError(f"strategy must be a string such as 'create_group', not {strategy!r}")
            if strategy is not None:
                _pgroups.check_strategy(strategy)  # the name too, by the constructor's own parser
            checked_device = check_int("device", device, minimum=0, allow_none=True)
            checked_per_node = check_int("devices_per_node", devices_per_node, minimum=0)
            checked_share = check_bool("share_communicators", share_communicators)
            # The one merge of overrides over a file, the CLI's (pgroups/config/config_merge.hpp),
            # in C++; the configuration stays a C++ value on its way to the context.
            settings = _pgroups.resolve_config(None if config is None else _path("config", config), overrides)
        except Exception as error:  # every class a check raises (OverflowError, ImportError, ...)
            # Carried into the agreement, so that every rank raises it rather than this
            # one alone while the others wait for it.
            _pgroups.agree(comm, _pgroups.encode_error(type(error).__name__, str(error)), "configuration",
                           carrying_timeout_seconds(timeout) or 0.0)
            raise  # not reached: agree raises the carried error on every rank
        self._context = _pgroups.Context(settings, comm, strategy, checked_timeout, checked_device, checked_per_node,
                                         checked_share)
        # The context's own Layout (world size resolved), copied: no second merge or validation.
        self._plan = Plan.from_layout(self._context.layout())

    def _build_on_bootstrap(self, backend: str, bootstrap: Any, comm: Any, strategy: Any, timeout: Any,
                            device: Any, devices_per_node: Any, share_communicators: Any, config: Any,
                            overrides: Any) -> None:
        """The context over a bootstrap (launch's one door); an error before it (a bad
        argument, the bootstrap's name, object or timeout included) is carried into the
        construction's agreement, so that every rank raises it at once."""
        try:
            if not isinstance(backend, str) or backend not in BACKENDS:
                raise _pgroups.ConfigError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
            started = start_bootstrap(bootstrap, timeout) if isinstance(bootstrap, str) else bootstrap
            if not isinstance(started, _pgroups.Bootstrap):
                raise TypeError(f"bootstrap must be a name such as 'auto' or a started bootstrap, not {bootstrap!r}")
            if comm is not None or strategy is not None:
                raise _pgroups.ConfigError(f"backend {backend!r} is built over a bootstrap: comm and strategy "
                                           "belong to backend 'mpi'")
            checked_timeout = timeout_seconds(timeout) or 0.0
            checked_device = check_int("device", device, minimum=0, allow_none=True)
            checked_per_node = check_int("devices_per_node", devices_per_node, minimum=0)
            checked_share = check_bool("share_communicators", share_communicators)
            settings = _pgroups.resolve_config(None if config is None else _path("config", config), overrides())
        except Exception as error:  # carried as over MPI: every rank raises it
            carrier = _carrier(bootstrap, timeout)
            if carrier is None:
                raise  # no bootstrap starts here: nothing to carry the error over
            _pgroups.agree_over_bootstrap(carrier, _pgroups.encode_error(type(error).__name__, str(error)),
                                          carrying_timeout_seconds(timeout) or 0.0, "configuration")
            raise  # not reached: the agreement raises the carried error on every rank
        self._context = _pgroups.Context.on_bootstrap(settings, started, backend, checked_timeout, checked_device,
                                                      checked_per_node, checked_share)
        self._plan = Plan.from_layout(self._context.layout())

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
        """The creation strategy over MPI; "gloo" for a context over a bootstrap."""
        return self._context.strategy() if self._context.bootstrap is None else "gloo"

    @property
    def backend(self) -> str:
        """"mpi", "gloo" or "nccl"."""
        return self._context.backend()

    @property
    def bootstrap(self) -> Any:
        """The bootstrap the context was built over (None over an mpi4py communicator)."""
        return self._context.bootstrap

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
        return self._context.kind_names()

    def kind(self, kind: KindLike) -> Any:
        """The kind as a handle, looked up once: every query below takes it where it takes
        a name, without looking the name up again. A handle of another context, or one
        used after destroy(), raises StateError naming the kind; an unknown name raises
        the StateError the queries raise."""
        return self._context.kind(mode_value(kind))

    def is_member(self, kind: KindOrHandle) -> bool:
        """Whether this rank has a group of the kind: False only for a partial kind
        (``embd``, ``pos_embd``), for which get_group raises StateError."""
        return self._context.is_member(_kind_arg(kind))

    # Colossal-AI's queries ------------------------------------------------------------
    @renamed_keywords(mode="kind")
    def is_initialized(self, kind: KindOrHandle) -> bool:
        if KindHandle is not None and isinstance(kind, KindHandle):
            return self._context.is_initialized(kind.name)
        return self._context.is_initialized(mode_value(kind))

    def get_global_rank(self) -> int:
        return self._context.global_rank()

    @property
    def view(self) -> Any:
        """This rank's view of the plan (:meth:`pgroups.Plan.view`), which every per-rank
        query here answers from."""
        return self._plan.view(self.get_global_rank())

    @renamed_keywords(mode="kind")
    def get_local_rank(self, kind: KindOrHandle) -> int:
        return self._context.local_rank(_kind_arg(kind))

    @renamed_keywords(mode="kind")
    def get_world_size(self, kind: KindOrHandle) -> int:
        return self._context.world_size(_kind_arg(kind))

    @renamed_keywords(mode="kind")
    def get_group(self, kind: KindOrHandle) -> Any:
        """The kind's communicator, an ``mpi4py.MPI.Intracomm`` on the context's handle;
        over a bootstrap a :class:`pgroups.Group`."""
        return self._context.get_group(_kind_arg(kind))

    @renamed_keywords(mode="kind")
    def get_cpu_group(self, kind: KindOrHandle) -> Any:
        """The kind's communicator for host traffic (the same as get_group on MPI; the gloo
        Group beside NCCL's)."""
        return self._context.get_cpu_group(_kind_arg(kind))

    @renamed_keywords(mode="kind")
    def get_ranks_in_group(self, kind: KindOrHandle) -> List[int]:
        return self._context.ranks_in_group(_kind_arg(kind))

    @renamed_keywords(mode="kind")
    def get_next_global_rank(self, kind: KindOrHandle) -> int:
        return self._context.next_global_rank(_kind_arg(kind))

    @renamed_keywords(mode="kind")
    def get_prev_global_rank(self, kind: KindOrHandle) -> int:
        return self._context.prev_global_rank(_kind_arg(kind))

    @renamed_keywords(mode="kind")
    def is_first_rank(self, kind: KindOrHandle) -> bool:
        return self._context.is_first_rank(_kind_arg(kind))

    @renamed_keywords(mode="kind")
    def is_last_rank(self, kind: KindOrHandle) -> bool:
        return self._context.is_last_rank(_kind_arg(kind))

    def is_pipeline_first_stage(self, ignore_virtual: bool = False) -> bool:
        return self._context.is_pipeline_first_stage(check_bool("ignore_virtual", ignore_virtual))

    def is_pipeline_last_stage(self, ignore_virtual: bool = False) -> bool:
        return self._context.is_pipeline_last_stage(check_bool("ignore_virtual", ignore_virtual))

    def set_virtual_pipeline_parallel_size(self, size: Optional[int]) -> None:
        self._context.set_virtual_pipeline_parallel_size(check_int("size", size, allow_none=True))

    def set_virtual_pipeline_parallel_rank(self, rank: int) -> None:
        self._context.set_virtual_pipeline_parallel_rank(check_int("rank", rank))

    @property
    def virtual_pipeline_parallel_size(self) -> Optional[int]:
        return self._context.virtual_pipeline_parallel_size()

    @property
    def virtual_pipeline_parallel_rank(self) -> int:
        return self._context.virtual_pipeline_parallel_rank()

    @renamed_keywords(mode="kind")
    def get_seed(self, kind: KindOrHandle) -> int:
        """The kind's seed: the base seed, and for TENSOR ``seed + tp_local + 1024 * pp_local``."""
        return self._context.seed(_kind_arg(kind))

    @property
    def seeds(self) -> Dict[Union[ParallelMode, str], int]:
        """Every live kind's seed, keyed by ParallelMode for presets, by name for a mesh."""
        if self.modes:
            return {mode: self.get_seed(mode) for mode in self.modes}
        return {kind: self.get_seed(kind) for kind in self.group_kinds if self.is_member(kind)}

    @renamed_keywords(mode="kind")
    def creation_seconds(self, kind: KindOrHandle) -> float:
        return self._context.creation_seconds(_kind_arg(kind))

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
        state = "live" if self._context.kind_names() else "destroyed"
        return (f"ParallelContext({self._plan!r}, rank={self.get_global_rank()}, strategy={self.strategy!r}, "
                f"{state})")
