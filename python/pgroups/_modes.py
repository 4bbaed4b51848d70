"""ParallelMode: the kinds of process group, with Colossal-AI's member names and values."""

from __future__ import annotations

import enum
from typing import Union

from . import _pgroups


class ParallelMode(enum.Enum):
    """A kind of process group, as Colossal-AI's ``colossalai.legacy.context.ParallelMode``.

    Members are listed in creation order. Every pgroups function that takes a mode also
    accepts its string value (``"2d_row"``) or the member itself
    (``ParallelMode.PARALLEL_2D_ROW``).
    """

    GLOBAL = "global"
    DATA = "data"
    MODEL = "model"
    PIPELINE = "pipe"
    TENSOR = "tensor"
    PARALLEL_1D = "1d"
    SEQUENCE = "sequence"
    SEQUENCE_DP = "sequence_dp"
    PARALLEL_2D_ROW = "2d_row"
    PARALLEL_2D_COL = "2d_col"
    PARALLEL_2P5D_COL = "2p5d_col"
    PARALLEL_2P5D_ROW = "2p5d_row"
    PARALLEL_2P5D_DEP = "2p5d_dep"
    PARALLEL_2P5D_XZ = "2p5d_xz"
    PARALLEL_3D_INPUT = "3d_input"
    PARALLEL_3D_WEIGHT = "3d_weight"
    PARALLEL_3D_OUTPUT = "3d_output"
    PARALLEL_3D_INPUT_X_WEIGHT = "3d_input_x_weight"
    PARALLEL_3D_OUTPUT_X_WEIGHT = "3d_output_x_weight"


# The kinds are C++'s (pgroups::kAllParallelModes, bound as _pgroups.mode_names), in its
# order; the members are written out above so that type checkers see them, and held to the
# bound list here, so that the two cannot drift apart.
if [mode.value for mode in ParallelMode] != list(_pgroups.mode_names):
    raise ImportError(f"pgroups.ParallelMode {[mode.value for mode in ParallelMode]} is not the library's kinds "
                      f"{list(_pgroups.mode_names)}: the extension and the package are from different builds")

# A group kind as every function takes it: a ParallelMode or its name, a mesh token.
KindLike = Union[ParallelMode, str]
# The same, under its pre-0.2.0 name (one word, kind, since then).
ModeLike = KindLike


def mode_value(mode: KindLike) -> str:
    """The string value of a mode given as a ParallelMode or as its value.

    Anything else raises TypeError; an unknown string is reported by the C++ layer
    (ConfigError naming it and the known modes).
    """
    if isinstance(mode, ParallelMode):
        return mode.value
    if isinstance(mode, str):
        return mode
    # Another enum with the same values (e.g. Colossal-AI's own ParallelMode) works too.
    value = getattr(mode, "value", None)
    if isinstance(value, str):
        return value
    raise TypeError(f"a parallel mode must be a pgroups.ParallelMode or its string value, not {mode!r}")
