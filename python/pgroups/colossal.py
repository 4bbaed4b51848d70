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
  the rule, instead of an AssertionError.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union

import torch.distributed as dist

from . import _pgroups
from ._modes import ParallelMode
from .torch import create_groups

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
        self.rank = rank
        self.world_size = world_size
        self.config = config
        self.data_parallel_size = data_parallel_size
        self.pipeline_parallel_size = pipeline_parallel_size
        self.tensor_parallel_size = tensor_parallel_size
        self.legacy_sequence_dp = legacy_sequence_dp
        self.depth: Optional[int] = None
        self.groups = None

    def init_dist_group(self) -> Union[GroupTuple, List[GroupTuple]]:
        """Creates this initializer's groups (collective over the default group)."""
        if dist.is_initialized() and self.rank != dist.get_rank():
            raise _pgroups.ConfigError(
                f"rank {self.rank} given to {type(self).__name__} is not this process's rank {dist.get_rank()}")
        if dist.is_initialized() and self.world_size != dist.get_world_size():
            raise _pgroups.ConfigError(
                f"world size {self.world_size} given to {type(self).__name__} is not torch.distributed's world "
                f"size {dist.get_world_size()}")
        # Checked before any collective; every rank given the same arguments raises alike.
        model = self.pipeline_parallel_size * self.tensor_parallel_size
        if self.data_parallel_size * model != self.world_size:
            raise _pgroups.ConfigError(
                f"data parallel size {self.data_parallel_size} * pipeline size {self.pipeline_parallel_size} * "
                f"tensor size {self.tensor_parallel_size} = {self.data_parallel_size * model} is not the world "
                f"size {self.world_size}: the data parallel size must be world size / (pipeline * tensor)")
        groups = create_groups(pipeline=self.pipeline_parallel_size, tensor=self.tensor_parallel_size,
                               mode=self.tensor_mode, depth=self.depth,
                               legacy_sequence_dp=self.legacy_sequence_dp, modes=self.modes,
                               # Colossal-AI's destroy() destroys every kind's group itself.
                               share=False)
        plan = groups.plan
        self.groups = groups
        out = [(plan.local_rank(self.rank, m), plan.group_size(m), groups.get_group(m), plan.group_of(self.rank, m),
                ParallelMode(m)) for m in self.modes]
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
        self.depth = depth


class Initializer_3D(ProcessGroupInitializer):
    """3D: returns [input, weight, output, input_x_weight, output_x_weight]."""

    tensor_mode = "3d"
    modes = ("3d_input", "3d_weight", "3d_output", "3d_input_x_weight", "3d_output_x_weight")
    returns_list = True


__all__ = [
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
