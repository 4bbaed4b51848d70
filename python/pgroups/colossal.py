"""Colossal-AI's process-group initializers on pgroups.

The classes of ``colossalai.legacy.context.process_group_initializer`` with the same
constructor arguments and ``init_dist_group()`` results, so code written against them
runs unchanged::

    from pgroups.colossal import Initializer_2D
    row, col = Initializer_2D(rank, world_size, config, 1, 2, 4).init_dist_group()
    local_rank, group_world_size, process_group, ranks_in_group, mode = row

Each ``init_dist_group()`` returns ``(local_rank, group_world_size, process_group,
ranks_in_group, mode)`` for a single-group initializer, and a list of such tuples for
``Initializer_Pipeline`` and the multi-group modes (Sequence, 2D, 2.5D, 3D), as
Colossal-AI does. The groups are created by :func:`pgroups.torch.create_groups`, so
ranks agree on the plan before the first group, and a mismatch or an invalid
configuration raises on every rank.

Where pgroups deliberately differs:

* the tuple has five entries, without the ``cpu_group`` that newer Colossal-AI versions
  put fourth (create a gloo group from ``ranks_in_group`` when one is needed);
* ``sequence_dp`` groups are the documented "all ranks of one pipeline stage"; Colossal-AI
  builds contiguous blocks of ``world_size / pipeline`` ranks, which mix pipeline stages
  when both pipeline and data parallelism are above 1. Pass ``legacy_sequence_dp=True``
  for Colossal-AI's blocks;
* ``Initializer_Pipeline`` with a pipeline size of 1 raises StateError (Colossal-AI's
  ParallelContext never calls it then);
* invalid sizes raise :class:`pgroups.ConfigError` with a message naming the values and
  the rule, instead of an AssertionError; an argument of the wrong type or a rank that is
  not this process's is kept by the constructor and raised by ``init_dist_group()``, the
  collective call, on every rank (carried by the agreement), not on one rank alone.

Colossal-AI's own code on pgroups' groups: :func:`register` puts pgroups' initializers into
Colossal-AI's registry (``colossalai.legacy.registry.DIST_GROUP_INITIALIZER``) under its
class names, so its legacy ``ParallelContext.init_parallel_groups()`` runs unchanged on
them; :func:`unregister` puts Colossal-AI's own back. The registered classes return
exactly what Colossal-AI's return: 6-tuples ``(local_rank, world_size, process_group,
cpu_group, ranks_in_group, mode)`` (the cpu group a gloo group when the backend is not
gloo, destroyed by Colossal-AI's ``ParallelContext.destroy()`` while registered, the same
group on gloo), lists where Colossal-AI returns lists, Colossal-AI's own
``ParallelMode`` members, its legacy ``sequence_dp`` blocks, and its side effects on
``colossalai.legacy.global_variables.tensor_parallel_env``; every mode has a group object
of its own, so Colossal-AI's ``destroy()`` destroys them one by one.
"""

from __future__ import annotations

import importlib
import math
from typing import Any, Dict, List, Optional, Tuple, Union

import torch.distributed as dist

from . import _pgroups
from . import _torch_create as creation
from ._checks import check_bool, check_int
from ._modes import ParallelMode

GroupTuple = Tuple[int, int, Any, List[int], ParallelMode]


class ProcessGroupInitializer:
    """Base of the initializers: ``(rank, world_size, config, data_parallel_size,
    pipeline_parallel_size, tensor_parallel_size)``. ``config`` is accepted and ignored
    (the sizes are the arguments)."""

    tensor_mode: Optional[str] = None
    modes: Tuple[str, ...] = ()
    returns_list = False

    def __init__(self, rank: int, world_size: int, config: Any, data_parallel_size: int,
                 pipeline_parallel_size: int, tensor_parallel_size: int, *,
                 legacy_sequence_dp: bool = False) -> None:
        # The arguments are checked here, but an error is raised by init_dist_group, the
        # collective call, carried to every rank: a rank raising here alone would leave the
        # others waiting in theirs.
        self._error: Optional[BaseException] = None
        self.rank = self._checked(check_int, "rank", rank, minimum=0)
        self.world_size = self._checked(check_int, "world_size", world_size, minimum=1)
        self.config = config
        self.data_parallel_size = self._checked(check_int, "data_parallel_size", data_parallel_size, minimum=1)
        self.pipeline_parallel_size = self._checked(check_int, "pipeline_parallel_size", pipeline_parallel_size,
                                                    minimum=1)
        self.tensor_parallel_size = self._checked(check_int, "tensor_parallel_size", tensor_parallel_size, minimum=1)
        self.legacy_sequence_dp = self._checked(check_bool, "legacy_sequence_dp", legacy_sequence_dp)
        self.depth: Optional[int] = None
        self.groups: Any = None  # a TorchGroups once init_dist_group ran

    def _checked(self, check: Any, name: str, value: Any, **options: Any) -> Any:
        """``check(name, value)``, or ``value`` as given with the first error kept for
        init_dist_group."""
        try:
            return check(name, value, **options)
        except Exception as error:
            if self._error is None:
                self._error = error
            return value

    def _check_arguments(self) -> None:
        """Every check of the arguments against this process and each other; raises the
        first failure. Run by init_dist_group inside the agreement."""
        if self._error is not None:
            raise self._error
        if not dist.is_initialized():
            raise _pgroups.StateError(f"{type(self).__name__}.init_dist_group needs torch.distributed "
                                      "init_process_group first")
        if self.rank != dist.get_rank():
            raise _pgroups.ConfigError(
                f"rank {self.rank} given to {type(self).__name__} is not this process's rank {dist.get_rank()}")
        if self.world_size != dist.get_world_size():
            raise _pgroups.ConfigError(
                f"world size {self.world_size} given to {type(self).__name__} is not torch.distributed's world "
                f"size {dist.get_world_size()}")
        model = self.pipeline_parallel_size * self.tensor_parallel_size
        if self.data_parallel_size * model != self.world_size:
            raise _pgroups.ConfigError(
                f"data parallel size {self.data_parallel_size} * pipeline size {self.pipeline_parallel_size} * "
                f"tensor size {self.tensor_parallel_size} = {self.data_parallel_size * model} is not the world "
                f"size {self.world_size}: the data parallel size must be world size / (pipeline * tensor)")

    def init_dist_group(self) -> Union[GroupTuple, List[GroupTuple]]:
        """Creates this initializer's groups (collective over the default group). An
        argument one rank got wrong raises on every rank, carried by the agreement."""
        if not dist.is_initialized():
            self._check_arguments()  # no agreement without torch.distributed: raise here
        groups = _job.groups_for(self) if _job is not None else None
        if groups is None:
            try:
                self._check_arguments()
            except Exception as error:
                creation.reject(error, None)
            groups = creation.create_groups(pipeline=self.pipeline_parallel_size,
                                            tensor=self.tensor_parallel_size, mode=self.tensor_mode, depth=self.depth,
                                            legacy_sequence_dp=self.legacy_sequence_dp, kinds=self.modes,
                                            # Colossal-AI's destroy() destroys every kind's group itself.
                                            share=False)
        self.groups = groups
        # Every answer from the one per-rank view (Colossal-AI's presets have no partial kind).
        view = groups.view
        out = [(view.local_rank(m), view.size(m), groups.get_group(m), view.members(m), ParallelMode(m))
               for m in self.modes]
        return out if self.returns_list else out[0]


class Initializer_Data(ProcessGroupInitializer):
    """DATA: ranks that differ only in their data-parallel index."""

    modes = ("data",)


class Initializer_Model(ProcessGroupInitializer):
    """MODEL: the pipeline_size * tensor_size ranks of one model replica."""

    modes = ("model",)


class Initializer_Pipeline(ProcessGroupInitializer):
    """PIPELINE: ranks that differ only in their stage; returns a list of one tuple."""

    modes = ("pipe",)
    returns_list = True


class Initializer_Tensor(ProcessGroupInitializer):
    """TENSOR: the tensor_size consecutive ranks of one tensor group."""

    modes = ("tensor",)


class Initializer_1D(ProcessGroupInitializer):
    """PARALLEL_1D: the tensor group, under mode 1d."""

    tensor_mode = "1d"
    modes = ("1d",)


class Initializer_Sequence_DP(ProcessGroupInitializer):
    """SEQUENCE_DP: every rank of one pipeline stage (see the module note)."""

    tensor_mode = "sequence"
    modes = ("sequence_dp",)


class Initializer_Sequence(ProcessGroupInitializer):
    """SEQUENCE and SEQUENCE_DP (tensor_size is the sequence-parallel size); returns
    [sequence, sequence_dp]."""

    tensor_mode = "sequence"
    modes = ("sequence", "sequence_dp")
    returns_list = True


class Initializer_2D(ProcessGroupInitializer):
    """PARALLEL_2D_ROW and PARALLEL_2D_COL of a q x q SUMMA grid; returns [row, col]."""

    tensor_mode = "2d"
    modes = ("2d_row", "2d_col")
    returns_list = True


class Initializer_2p5D(ProcessGroupInitializer):
    """2.5D (Tesseract): ``(rank, world_size, config, data_parallel_size,
    pipeline_parallel_size, tensor_parallel_size, depth)``; returns [col, row, dep, xz]."""

    tensor_mode = "2.5d"
    modes = ("2p5d_col", "2p5d_row", "2p5d_dep", "2p5d_xz")
    returns_list = True

    def __init__(self, rank: int, world_size: int, config: Any, data_parallel_size: int,
                 pipeline_parallel_size: int, tensor_parallel_size: int, depth: int, **kwargs: Any) -> None:
        super().__init__(rank, world_size, config, data_parallel_size, pipeline_parallel_size,
                         tensor_parallel_size, **kwargs)
        self.depth = self._checked(check_int, "depth", depth, minimum=1)


class Initializer_3D(ProcessGroupInitializer):
    """3D: returns [input, weight, output, input_x_weight, output_x_weight]."""

    tensor_mode = "3d"
    modes = ("3d_input", "3d_weight", "3d_output", "3d_input_x_weight", "3d_output_x_weight")
    returns_list = True


# Colossal-AI's own code on pgroups' groups --------------------------------------------

class _Job:
    """The initializers of one Colossal-AI ``init_parallel_groups()`` call, which all get
    the context's sizes and config: the first of them creates the groups of every
    initializer the call runs, under one agreement, and the others take theirs. (An
    agreement per initializer is a barrier over the world per initializer.)"""

    def __init__(self) -> None:
        self.groups: Any = None
        self.sizes: Optional[Tuple[int, ...]] = None

    @staticmethod
    def _tensor_settings(config: Any) -> Tuple[Optional[str], Optional[int]]:
        parallel: Any = config.get("parallel") if hasattr(config, "get") else None
        tensor: Any = parallel.get("tensor") if hasattr(parallel, "get") else None
        if not hasattr(tensor, "get"):
            return None, None
        return tensor.get("mode"), tensor.get("depth")

    def _modes(self, initializer: "ProcessGroupInitializer", mode: Optional[str]) -> List[str]:
        # Which initializers the call runs, as Colossal-AI's init_parallel_groups() chooses them.
        mapping = _colossal("constants").INITIALIZER_MAPPING
        runs = ["data", "model"] + (["pipeline"] if initializer.pipeline_parallel_size > 1 else []) + ["tensor"]
        runs += [str(mode).lower()] if mode is not None else []
        modes: List[str] = []
        for run in runs:
            cls = REGISTERED.get(mapping.get(run, ""))
            modes += [m for m in (cls.modes if cls is not None else ()) if m not in modes]
        return modes

    def groups_for(self, initializer: "ProcessGroupInitializer") -> Any:
        """The job's groups for ``initializer``; None where it is not one of the job's
        (its own create_groups then)."""
        sizes = (initializer.rank, initializer.world_size, initializer.data_parallel_size,
                 initializer.pipeline_parallel_size, initializer.tensor_parallel_size)
        if self.groups is None:
            error: Optional[BaseException] = None
            modes: List[str] = []
            mode = depth = None
            try:
                initializer._check_arguments()
                mode, depth = self._tensor_settings(initializer.config)
                modes = self._modes(initializer, mode)
                if not set(initializer.modes) <= set(modes):
                    return None
            except Exception as caught:  # carried into the job's one agreement
                error = caught
            self.groups = creation.create_groups(
                pipeline=initializer.pipeline_parallel_size, tensor=initializer.tensor_parallel_size, mode=mode,
                depth=depth, legacy_sequence_dp=initializer.legacy_sequence_dp, kinds=modes, share=False,
                door=(("door", "colossal.init_parallel_groups"),), door_error=error)
            self.sizes = sizes
            return self.groups
        if sizes != self.sizes or not all(self.groups.is_initialized(m) for m in initializer.modes):
            return None
        initializer._check_arguments()  # the same arguments the job agreed on: raises alike on every rank
        return self.groups


_job: Optional[_Job] = None


def _one_job(original: Any) -> Any:
    # Colossal-AI's init_parallel_groups(), its initializers made one job (see _Job).
    def init_parallel_groups(self: Any, *args: Any, **kwargs: Any) -> Any:
        global _job
        _job = _Job()
        try:
            return original(self, *args, **kwargs)
        finally:
            _job = None

    init_parallel_groups.__wrapped__ = original  # type: ignore[attr-defined]
    init_parallel_groups.__doc__ = original.__doc__
    return init_parallel_groups


_REGISTERED_NAMES = ("Initializer_Data", "Initializer_Model", "Initializer_Pipeline", "Initializer_Tensor",
                     "Initializer_1D", "Initializer_2D", "Initializer_2p5D", "Initializer_3D", "Initializer_Sequence",
                     "Initializer_Sequence_DP")
_saved: Dict[str, Any] = {}


def _colossal(module: str) -> Any:
    """``colossalai.legacy.<module>``, or ImportError saying what is missing: Colossal-AI
    itself, or one of the packages it imports (named, with Colossal-AI installed)."""
    name = f"colossalai.legacy.{module}"
    try:
        return importlib.import_module(name)
    except ImportError as error:
        missing = getattr(error, "name", None) or ""
        if isinstance(error, ModuleNotFoundError) and missing and missing.split(".")[0] != "colossalai":
            raise ImportError(
                f"pgroups.colossal.register() needs Colossal-AI's {name}, which cannot be imported: Colossal-AI is "
                f"installed, but the package {missing!r} it imports is missing ({error}); install "
                f"{missing.split('.')[0]!r}") from error
        raise ImportError(
            f"pgroups.colossal.register() needs Colossal-AI's {name}, which cannot be imported ({error}); install "
            f"colossalai (pgroups is tested with colossalai==0.5.0, installed with --no-deps)") from error


class _ColossalInitializer(ProcessGroupInitializer):
    """What a registered initializer adds to pgroups' own: Colossal-AI's tuple, modes and
    tensor-parallel environment."""

    def __init__(self, rank: int, world_size: int, config: Any, data_parallel_size: int,
                 pipeline_parallel_size: int, tensor_parallel_size: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(rank, world_size, config, data_parallel_size, pipeline_parallel_size,
                         tensor_parallel_size, *args, legacy_sequence_dp=True, **kwargs)

    def _set_env(self, env: Any) -> None:
        """Colossal-AI's checks and settings of its tensor-parallel environment, before
        the groups (only for sizes the plan accepts; pgroups reports the others)."""

    def _after(self, env: Any, mode_type: Any) -> None:
        """Colossal-AI's settings made while creating the groups."""

    def init_dist_group(self) -> Any:
        try:
            if self._error is not None:
                raise self._error  # the arguments' own error first, as pgroups' initializers raise it
            mode_type = _colossal("context.parallel_mode").ParallelMode
            env = _colossal("global_variables").tensor_parallel_env
            self._set_env(env)
        except Exception as error:
            if dist.is_initialized():
                creation.reject(error, None)  # carried: Colossal-AI's own checks fail on one rank alike
            raise
        result = super().init_dist_group()
        settings = result if isinstance(result, list) else [result]
        cpu_groups = cpu_groups_for(self.groups, self.modes)
        out = [(local_rank, size, group, cpu_groups.get_group(m) if cpu_groups else group, ranks, mode_type(m))
               for (local_rank, size, group, ranks, _), m in zip(settings, self.modes)]
        self._after(env, mode_type)
        return out if isinstance(result, list) else out[0]


# The gloo cpu groups made for a non-gloo default group, held until Colossal-AI's context
# is destroyed: its destroy() frees only the process groups it registered.
_cpu_held: List[Any] = []


def cpu_groups_for(groups: Any, modes: Any) -> Any:
    """Colossal-AI's cpu groups of ``modes`` beside ``groups`` (a TorchGroups): None on a
    gloo default group (the process groups serve host traffic), otherwise new gloo groups,
    one per mode (``share=False``, as the process groups: none is the default group, which
    is not gloo), held for :func:`destroy_cpu_groups`."""
    if creation.default_backend() == "gloo":
        return None
    made = creation.create_groups(groups.plan, kinds=list(modes), backend="gloo", share=False)
    _cpu_held.append(made)
    return made


def destroy_cpu_groups() -> None:
    """Destroys every cpu group :func:`cpu_groups_for` made (a second call does nothing).
    Colossal-AI's ``ParallelContext.destroy()`` calls it while :func:`register` is in
    effect, so the cpu groups go with the context."""
    while _cpu_held:
        _cpu_held.pop().destroy()


def _destroying_cpu_groups(original: Any) -> Any:
    # Colossal-AI's destroy(), with pgroups' cpu groups destroyed first (before it destroys
    # the default group, after which no group can be destroyed one by one).
    def destroy(self: Any, *args: Any, **kwargs: Any) -> Any:
        destroy_cpu_groups()
        return original(self, *args, **kwargs)

    destroy.__wrapped__ = original  # type: ignore[attr-defined]
    destroy.__doc__ = original.__doc__
    return destroy


def _check_env(env: Any, field: str, value: int, what: str) -> None:
    held = getattr(env, field)
    if held:
        if int(held) != value:
            raise _pgroups.ConfigError(
                f"Colossal-AI's tensor_parallel_env.{field} is {held}, but this {what} needs {value}")
    else:
        setattr(env, field, value)


class _Registered1D(_ColossalInitializer, Initializer_1D):
    def _after(self, env: Any, mode_type: Any) -> None:
        env.parallel_input_1d = False


class _Registered2D(_ColossalInitializer, Initializer_2D):
    def _set_env(self, env: Any) -> None:
        dim = math.isqrt(self.tensor_parallel_size)
        if dim * dim == self.tensor_parallel_size:
            _check_env(env, "summa_dim", dim, "2D initializer")


class _Registered2p5D(_ColossalInitializer, Initializer_2p5D):
    def __init__(self, rank: int, world_size: int, config: Any, data_parallel_size: int, pipeline_parallel_size: int,
                 tensor_parallel_size: int, depth: int) -> None:
        super().__init__(rank, world_size, config, data_parallel_size, pipeline_parallel_size, tensor_parallel_size,
                         depth)

    def _set_env(self, env: Any) -> None:
        if self.depth is None:  # a 2.5D initializer's constructor requires depth; C++ reports a bad one
            return
        dim = math.isqrt(self.tensor_parallel_size // self.depth)
        if dim * dim * self.depth == self.tensor_parallel_size:
            _check_env(env, "tesseract_dim", dim, "2.5D initializer")
            _check_env(env, "tesseract_dep", self.depth, "2.5D initializer")


class _Registered3D(_ColossalInitializer, Initializer_3D):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)

    def _set_env(self, env: Any) -> None:
        depth = round(self.tensor_parallel_size ** (1 / 3))
        if depth ** 3 == self.tensor_parallel_size:
            _check_env(env, "depth_3d", depth, "3D initializer")

    def _after(self, env: Any, mode_type: Any) -> None:
        for field, mode in zip(("input_group_3d", "weight_group_3d", "output_group_3d", "input_x_weight_group_3d",
                                "output_x_weight_group_3d"), self.modes):
            setattr(env, field, mode_type(mode))


def _registered_class(name: str) -> type:
    own = globals()[name]
    special = {"Initializer_1D": _Registered1D, "Initializer_2D": _Registered2D,
               "Initializer_2p5D": _Registered2p5D, "Initializer_3D": _Registered3D}
    base = special.get(name)
    cls = base if base is not None else type(name, (_ColossalInitializer, own), {})
    cls.__name__ = cls.__qualname__ = name
    cls.__doc__ = f"pgroups' {name} as Colossal-AI's: 6-tuples with Colossal-AI's ParallelMode. {own.__doc__}"
    return cls


REGISTERED: Dict[str, Any] = {name: _registered_class(name) for name in _REGISTERED_NAMES}


def register() -> None:
    """Puts pgroups' initializers into ``colossalai.legacy.registry.DIST_GROUP_INITIALIZER``
    under Colossal-AI's class names, replacing Colossal-AI's (its registry refuses a name
    twice, so they are replaced in place and kept for :func:`unregister`). Works before or
    after Colossal-AI's legacy context is imported: Colossal-AI's own initializers, which
    register themselves when their module is first imported, are loaded first, so none of
    them arrives later to collide with pgroups'. A second call does nothing. ImportError,
    naming what is missing, when Colossal-AI cannot be imported."""
    registry = _colossal("registry").DIST_GROUP_INITIALIZER
    _colossal("context.process_group_initializer")
    for name, cls in REGISTERED.items():
        held = registry._registry.get(name)
        if held is cls:
            continue
        _saved[name] = held
        registry._registry[name] = cls
    context = _parallel_context_class()
    if context is not None and not hasattr(context.destroy, "__wrapped__"):
        context.destroy = _destroying_cpu_groups(context.destroy)
    if context is not None and not hasattr(context.init_parallel_groups, "__wrapped__"):
        context.init_parallel_groups = _one_job(context.init_parallel_groups)


def unregister() -> None:
    """Puts Colossal-AI's own initializers back (those register() replaced); a call
    without register() does nothing."""
    if not _saved:
        return
    registry = _colossal("registry").DIST_GROUP_INITIALIZER
    context = _parallel_context_class()
    if context is not None and hasattr(context.destroy, "__wrapped__"):
        context.destroy = context.destroy.__wrapped__
    if context is not None and hasattr(context.init_parallel_groups, "__wrapped__"):
        context.init_parallel_groups = context.init_parallel_groups.__wrapped__
    for name, held in _saved.items():
        if held is None:
            registry._registry.pop(name, None)
        else:
            registry._registry[name] = held
    _saved.clear()


def _parallel_context_class() -> Any:
    # Colossal-AI's legacy ParallelContext, or None where its module does not import.
    try:
        return _colossal("context.parallel_context").ParallelContext
    except (ImportError, AttributeError):
        return None


def is_registered() -> bool:
    """Whether register() is in effect."""
    return bool(_saved)


__all__ = [
    "register",
    "unregister",
    "is_registered",
    "cpu_groups_for",
    "destroy_cpu_groups",
    "REGISTERED",
    "ProcessGroupInitializer",
    "Initializer_Data",
    "Initializer_Model",
    "Initializer_Pipeline",
    "Initializer_Tensor",
    "Initializer_1D",
    "Initializer_Sequence",
    "Initializer_Sequence_DP",
    "Initializer_2D",
    "Initializer_2p5D",
    "Initializer_3D",
]
