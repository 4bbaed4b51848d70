"""pgroups: the process groups of hybrid-parallel training (Colossal-AI's 19 parallel modes,
Megatron-style named meshes), computed by the C++ library.

Pure layout, no MPI needed: :class:`Plan`, :class:`Mesh`, :class:`ParallelMode`.
Live groups on MPI (mpi4py): :class:`ParallelContext`.
torch.distributed groups: ``import pgroups.torch`` and ``import pgroups.colossal``
(Colossal-AI's ``Initializer_*`` classes).

Every error pgroups raises is a :class:`pgroups.Error`: ConfigError, ParseError, IoError,
BackendError, MismatchError, TimeoutError, StateError, each with the C++ message.
"""

from ._context import ParallelContext
from ._modes import ParallelMode
from ._pgroups import (
    BackendError,
    ConfigError,
    Error,
    IoError,
    MismatchError,
    ParseError,
    StateError,
    TimeoutError,
    __version__,
)
from ._placement import Placement, place
from ._plan import Mesh, Plan
from ._recovery import Recovery

__all__ = [
    "__version__",
    "BackendError",
    "ConfigError",
    "Error",
    "IoError",
    "Mesh",
    "MismatchError",
    "ParallelContext",
    "ParallelMode",
    "ParseError",
    "Placement",
    "Plan",
    "Recovery",
    "StateError",
    "TimeoutError",
    "place",
]

Error.__doc__ = "Root of every error pgroups raises (C++ pgroups::Error)."
ConfigError.__doc__ = "A configuration that breaks a layout rule; the message names the values and the rule."
ParseError.__doc__ = "Configuration text that cannot be read; the message starts with source:line:column."
IoError.__doc__ = "A configuration file that cannot be opened."
BackendError.__doc__ = "MPI (or NCCL) reported an error; the message names the call."
MismatchError.__doc__ = "Ranks of one job hold different configurations; raised on every rank."
TimeoutError.__doc__ = "A rank did not arrive within the timeout."
StateError.__doc__ = "API misuse: a mode that was not created, a destroyed context."
