"""pgroups: the process groups of hybrid-parallel training (Colossal-AI's 19 parallel modes,
Megatron-style named meshes), computed by the C++ library.

Pure layout, no MPI needed: :class:`Plan`, :class:`Mesh`, :class:`ParallelMode`.
Live groups: :class:`ParallelContext`, on MPI (mpi4py) or, with ``backend="gloo"``, on any
bootstrap (:func:`start_bootstrap`; its groups are :class:`Group` objects).
torch.distributed groups: ``import pgroups.torch`` and ``import pgroups.colossal``
(Colossal-AI's ``Initializer_*`` classes).

Every error pgroups raises is a :class:`pgroups.Error`: ConfigError, ParseError, IoError,
BackendError, MismatchError, TimeoutError, StateError, each with the C++ message.
"""

from . import _pgroups
from ._context import ParallelContext, start_bootstrap
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

#: A kind's group of a context over a bootstrap (rank, size, members, all_gather).
Group = getattr(_pgroups, "Group", None)

__all__ = [
    "__version__",
    "BackendError",
    "ConfigError",
    "Error",
    "IoError",
    "Mesh",
    "MismatchError",
    "Group",
    "ParallelContext",
    "ParallelMode",
    "ParseError",
    "Placement",
    "Plan",
    "Recovery",
    "StateError",
    "TimeoutError",
    "place",
    "start_bootstrap",
]

Error.__doc__ = "Root of every error pgroups raises (C++ pgroups::Error)."
ConfigError.__doc__ = "A configuration that breaks a layout rule; the message names the values and the rule."
ParseError.__doc__ = "Configuration text that cannot be read; the message starts with source:line:column."
IoError.__doc__ = "A configuration file that cannot be opened."
BackendError.__doc__ = "MPI (or NCCL) reported an error; the message names the call."
MismatchError.__doc__ = "Ranks of one job hold different configurations; raised on every rank."
TimeoutError.__doc__ = "A rank did not arrive within the timeout."
StateError.__doc__ = "API misuse: a mode that was not created, a destroyed context."
