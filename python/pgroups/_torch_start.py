"""pgroups.torch.init_process_group: torch's default group, each launcher attempt's keys apart.

torchrun (torch >= 2.4) keeps one TCPStore for the whole job: its agent serves it, and a
restarted attempt (``--max-restarts``) or a new rendezvous round meets in the same store as
the attempt that died. torch's own default group and every group made after it write their
rendezvous keys under names that do not change between attempts (``default_pg/...``, a
group's hashed name), so the new attempt reads the dead one's addresses and fails ``Gloo
connectFullMesh failed ... Connection refused`` (measured on torch 2.13, the default group
alone as well as ``init_device_mesh``). The default group pgroups starts puts every key of
the attempt under :func:`attempt_prefix`: the restart count, which a failure raises, and the
world size, which a new round with another number of nodes changes (it keeps the count).
Every group made from it, by pgroups or by torch, inherits the prefix.
"""

from __future__ import annotations

import datetime
import os
from typing import Any, Optional

import torch.distributed as dist

from . import _pgroups
from ._checks import check_int, timeout_seconds

# torchrun's env:// variables.
ENV_VARIABLES = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")
_RESTART_COUNT = "TORCHELASTIC_RESTART_COUNT"


def attempt_prefix(world_size: Optional[int] = None) -> str:
    """The store prefix of this launcher attempt: ``pgroups/attempt<restart count>/world<size>/``
    (the count from ``TORCHELASTIC_RESTART_COUNT``, 0 outside torchrun; the size from
    ``world_size`` or ``WORLD_SIZE``). ConfigError for a malformed variable, naming it."""
    restart = _pgroups.environment_count(_RESTART_COUNT) or 0
    if world_size is None:
        world_size = _pgroups.environment_count("WORLD_SIZE") or 0
    return _pgroups.store_keys.attempt_prefix(restart, check_int('world_size', world_size, minimum=0))


def init_process_group(backend: Optional[str] = None, *, timeout: Any = None, store: Any = None,
                       rank: Optional[int] = None, world_size: Optional[int] = None) -> None:
    """torch's ``init_process_group`` for a job a launcher may restart: the same default
    group, its store under :func:`attempt_prefix` (see the module). Without ``store``, the
    rendezvous is torchrun's ``env://`` (StateError naming the missing variables outside
    it); with one (and ``rank``, ``world_size``), that store, prefixed alike. ``timeout``:
    seconds or a timedelta (None: ``PGROUPS_TIMEOUT``, else the default every call has; 0:
    torch's own default)."""
    seconds = timeout_seconds(timeout)
    delta = dist.default_pg_timeout if seconds is None else datetime.timedelta(seconds=seconds)
    if store is None:
        missing = [name for name in ENV_VARIABLES if name not in os.environ]
        if missing:
            raise _pgroups.StateError(
                f"pgroups.torch.init_process_group needs a store, or torchrun's env:// variables "
                f"({', '.join(ENV_VARIABLES)}; {', '.join(missing)} not set)")
        store, rank, world_size = next(dist.rendezvous("env://", timeout=delta))
    elif rank is None or world_size is None:
        raise _pgroups.ConfigError("pgroups.torch.init_process_group: a store needs rank and world_size too")
    size = check_int("world_size", world_size, minimum=1)
    if check_int("rank", rank, minimum=0) >= size:
        raise _pgroups.ConfigError(f"rank {rank} is invalid: a rank must be below the world size {size}")
    dist.init_process_group(backend, store=dist.PrefixStore(attempt_prefix(size), store), rank=rank,
                            world_size=size, timeout=delta)
