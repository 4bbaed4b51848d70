"""The cross-rank agreement of pgroups.torch, through torch's default store, and the
watchdog that bounds what a timeout cannot cancel.

The agreement is a handful of store operations per rank (no collective over the world):
each rank publishes that it arrived, compares its digest with the first one stored, and
marks a mismatch or its own error before counting itself in; the last to arrive opens the
gate, and everyone waits for the gate with the timeout. Because each rank marks before it
counts, the marks are complete when the gate opens, so every rank takes the same branch.
A rank that waits past the timeout names the ranks that never arrived and leaves a note,
so a rank that comes later still gives up at once instead of waiting alone.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import sys
import threading
from typing import Any, Dict, List, Optional, Sequence

import torch.distributed as dist

from . import _pgroups

# The exit status of a rank the watchdog ends: TimeoutError's (docs/errors.md).
WATCHDOG_EXIT_STATUS = 8
# Seconds past the timeout before the watchdog ends a rank stuck in a call torch cannot cancel.
WATCHDOG_GRACE_SECONDS = 5.0
_NO_TIMEOUT = datetime.timedelta(days=365)


def encode(settings: Dict[str, Any]) -> str:
    """The canonical text of everything that decides the collectives: JSON with sorted
    keys, so no two different settings read the same."""
    return json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)


def _store() -> Any:
    from torch.distributed import distributed_c10d as c10d

    return c10d._get_default_store()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, (bytes, bytearray)) else str(value)


def _raise_carried(carried: str, rank: int) -> None:
    origin, kind, message = carried.split("\x00", 2)
    if int(origin) == rank:
        return  # this rank raises its own error, with its traceback
    cls = getattr(_pgroups, kind, None) if kind != "TypeError" else TypeError
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        cls = _pgroups.ConfigError
    raise cls(f"rank {origin} rejected the call: {message}")


def agree(generation: int, settings: Dict[str, Any], text: str, error: Optional[BaseException], rank: int,
          world: int, timeout: Optional[float]) -> None:
    """Raises on every rank, alike, unless every rank holds the same ``settings`` and none
    hit an error: the first error (carried to every rank), MismatchError listing which
    ranks hold what, or TimeoutError naming the step and the ranks that never came."""
    store = _store()
    prefix = f"pgroups/torch/{generation}/"
    digest = hashlib.sha256(encode(settings).encode()).hexdigest()
    # Store.add(key, 0) reads a counter (0 when absent): torch 1.x stores have no check().
    if int(store.add(prefix + "abandoned", 0)):
        raise _pgroups.TimeoutError(
            f"timed out at step 'agreement' of pgroups.torch.create_groups (rank {rank} of {world}): the other "
            f"ranks stopped waiting for this rank before it arrived")
    store.add(f"{prefix}rank/{rank}", 1)
    if error is not None:
        store.compare_set(prefix + "error", "", f"{rank}\x00{type(error).__name__}\x00{error}")
        store.add(prefix + "errors", 1)
    if _text(store.compare_set(prefix + "digest", "", digest)) != digest:
        store.add(prefix + "mismatch", 1)
    if int(store.add(prefix + "arrived", 1)) == world:
        store.set(prefix + "gate", "1")
    try:
        store.wait([prefix + "gate"], datetime.timedelta(seconds=timeout) if timeout else _NO_TIMEOUT)
    except RuntimeError:
        store.add(prefix + "abandoned", 1)
        missing = [r for r in range(world) if not int(store.add(f"{prefix}rank/{r}", 0))]
        raise _pgroups.TimeoutError(
            f"timed out after {timeout:g} s at step 'agreement' of pgroups.torch.create_groups (rank {rank} of "
            f"{world}): ranks {_ranges(missing) if missing else '?'} did not arrive") from None
    if int(store.add(prefix + "errors", 0)):
        _raise_carried(_text(store.get(prefix + "error")), rank)
        assert error is not None
        raise error
    if int(store.add(prefix + "mismatch", 0)):
        # Every rank is here, so a collective is safe: say who holds what.
        texts: List[Any] = [None] * world
        dist.all_gather_object(texts, f"{text} (settings {digest[:12]})")
        holders: Dict[str, List[int]] = {}
        for r, held in enumerate(texts):
            holders.setdefault(str(held), []).append(r)
        parts = "; ".join(f"ranks {_ranges(ranks)} hold {held}" for held, ranks in holders.items())
        raise _pgroups.MismatchError(f"torch group plan mismatch across ranks: {parts}")


class Watchdog:
    """Ends this rank (the message on stderr, then exit status 8) when a step has not
    finished ``timeout`` + a few seconds after the start: a gloo call blocked on a rank
    that never comes cannot be cancelled, and other ranks must not wait on this one."""

    def __init__(self, timeout: Optional[float], rank: int, world: int) -> None:
        self.step = "agreement"
        self._rank = rank
        self._world = world
        self._timeout = timeout
        self._timer: Optional[threading.Timer] = None
        if timeout:
            self._timer = threading.Timer(timeout + WATCHDOG_GRACE_SECONDS, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        sys.stderr.write(f"pgroups: error on rank {self._rank}: timed out after {self._timeout:g} s at step "
                         f"'{self.step}' of pgroups.torch.create_groups (rank {self._rank} of {self._world}); "
                         f"the watchdog ends this rank\n")
        sys.stderr.flush()
        os._exit(WATCHDOG_EXIT_STATUS)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


def _ranges(ranks: Sequence[int]) -> str:
    out: List[str] = []
    start = prev = ranks[0]
    for r in list(ranks[1:]) + [None]:  # type: ignore[list-item]
        if r is not None and r == prev + 1:
            prev = r
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if r is not None:
            start = prev = r
    return ",".join(out)
