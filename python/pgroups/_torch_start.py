"""pgroups.torch.init_process_group: torch's default group, each launcher attempt's keys apart.

torchrun (torch >= 2.4) keeps one TCPStore for the whole job: its agent serves it, and a
restarted attempt (``--max-restarts``) or a new rendezvous round meets in the same store as
the attempt that died. torch's own default group and every group made after it write their
rendezvous keys under names that do not change between attempts (``default_pg/...``, a
group's hashed name), so the new attempt reads the dead one's addresses and fails ``Gloo
connectFullMesh failed ... Connection refused`` (measured on torch 2.13, the default group
alone as well as ``init_device_mesh``). The default group pgroups starts puts every key of
the attempt under :func:`attempt_prefix`, the attempt every rank agreed on through the
store. torchrun's restart count cannot name it: each agent keeps its own, so after one
node's failure the other nodes, restarted for the new membership, still count 0. Every
group made from the default group, by pgroups or by torch, inherits the prefix.
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


def agree_on_attempt(store: Any, rank: int, world_size: int, timeout: Any = None) -> int:
    """The launcher attempt this process belongs to (1, 2, ...), agreed on by every rank of
    the attempt through ``store`` (pgroups/launch/attempt.hpp; every rank asks once per
    process, with the job's store). ``timeout``: seconds or a timedelta (None:
    ``PGROUPS_TIMEOUT``, else the default every call has; 0: none). ConfigError for a world
    size other than rank 0's, naming both; TimeoutError naming what was awaited."""
    size = check_int("world_size", world_size, minimum=1)
    if check_int("rank", rank, minimum=0) >= size:
        raise _pgroups.ConfigError(f"rank {rank} is invalid: a rank must be below the world size {size}")
    seconds = timeout_seconds(timeout)
    return int(_pgroups.agree_on_attempt(store, rank, size, 0.0 if seconds is None else seconds))


def attempt_prefix(store: Any, rank: int, world_size: int, timeout: Any = None) -> str:
    """The store prefix of this launcher attempt, ``pgroups/attempt<A>/``, A from
    :func:`agree_on_attempt` (which see)."""
    return _pgroups.store_keys.attempt_prefix(agree_on_attempt(store, rank, world_size, timeout))


def init_process_group(backend: Optional[str] = None, *, timeout: Any = None, store: Any = None,
                       rank: Optional[int] = None, world_size: Optional[int] = None) -> int:
    """torch's ``init_process_group`` for a job a launcher may restart: the same default
    group, its store under :func:`attempt_prefix` (see the module); returns the attempt
    (1 for the job's first, :func:`agree_on_attempt`). Without ``store``, the
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
    attempt = agree_on_attempt(store, rank, world_size, timeout)
    prefix = _pgroups.store_keys.attempt_prefix(attempt)
    dist.init_process_group(backend, store=dist.PrefixStore(prefix, store), rank=rank, world_size=world_size,
                            timeout=delta)
    return attempt
