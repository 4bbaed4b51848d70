"""The cross-rank agreement of pgroups.torch, through torch's default store, and the
watchdog that bounds what a timeout cannot cancel.

What the ranks compare is the MPI context's own: a record of named fields
(``_pgroups.encode_settings``, or ``encode_error`` for an error a rank hit before it), its
64-bit digest (``settings_digest``), and on a failure every rank's record judged by
``judge_records``, so that a mismatch or a carried error reads, and is of the class, the
same on torch as on MPI (pgroups/layout/agreement_record.hpp).

The transport is a handful of store operations per rank (no collective over the world):
each rank publishes that it arrived and its record, compares its digest with the first one
stored, and marks a mismatch or its own error before counting itself in; the last to
arrive opens the gate, and everyone waits for the gate with the timeout. Because each rank
marks before it counts, the marks are complete when the gate opens, so every rank takes
the same branch, and on a failure reads every record from the store. A rank that waits
past the timeout names the ranks that never arrived and leaves a note, so a rank that
comes later still gives up at once instead of waiting alone.
"""

from __future__ import annotations

import datetime
import os
import sys
import threading
from typing import Any, Optional, Sequence, Tuple

from . import _pgroups

# The exit status of a rank the watchdog ends: TimeoutError's (docs/errors.md).
WATCHDOG_EXIT_STATUS = 8
# Seconds past the timeout before the watchdog ends a rank stuck in a call torch cannot cancel.
WATCHDOG_GRACE_SECONDS = 5.0
_NO_TIMEOUT = datetime.timedelta(days=365)
# What the agreement is called in its messages, as on MPI.
WHAT = "configuration"
AGREEMENT = f"the {WHAT} agreement"


def record_of(fields: Sequence[Tuple[str, str]], error: Optional[BaseException]) -> bytes:
    """This rank's record: its settings, or the error it hit before the agreement (its
    class by name, so that every rank raises the same class)."""
    if error is not None:
        return _pgroups.encode_error(type(error).__name__, str(error))
    return _pgroups.encode_settings(list(fields))


def _store() -> Any:
    from torch.distributed import distributed_c10d as c10d

    return c10d._get_default_store()


def agree(generation: int, fields: Sequence[Tuple[str, str]], error: Optional[BaseException], rank: int,
          world: int, timeout: Optional[float]) -> None:
    """Returns on every rank alike when every rank holds the same ``fields`` and none hit an
    error; raises otherwise, the same on every rank: the lowest erring rank's error, of its
    class ("rank 3 hit before the configuration agreement: ..."), MismatchError
    ("configuration mismatch across 4 ranks: ranks 0-2 hold '...'; rank 3 holds '...'"),
    or TimeoutError naming the ranks that never came."""
    store = _store()
    prefix = f"pgroups/torch/{generation}/"
    record = record_of(fields, error)
    digest = str(_pgroups.settings_digest(record))
    # Store.add(key, 0) reads a counter (0 when absent): torch 1.x stores have no check().
    if int(store.add(prefix + "abandoned", 0)):
        raise _pgroups.TimeoutError(
            f"the other ranks stopped waiting at {AGREEMENT} before this rank arrived (step 'agreement', rank "
            f"{rank} of {world})")
    store.set(f"{prefix}record/{rank}", record)
    store.add(f"{prefix}rank/{rank}", 1)
    if error is not None:
        store.add(prefix + "errors", 1)
    held = store.compare_set(prefix + "digest", "", digest)
    if (held.decode() if isinstance(held, (bytes, bytearray)) else str(held)) != digest:
        store.add(prefix + "mismatch", 1)
    if int(store.add(prefix + "arrived", 1)) == world:
        store.set(prefix + "gate", "1")
    try:
        store.wait([prefix + "gate"], datetime.timedelta(seconds=timeout) if timeout else _NO_TIMEOUT)
    except RuntimeError:
        store.add(prefix + "abandoned", 1)
        missing = [r for r in range(world) if not int(store.add(f"{prefix}rank/{r}", 0))]
        raise _pgroups.TimeoutError(
            _pgroups.timeout_message(timeout or 0.0, AGREEMENT, "agreement", rank, world, missing)) from None
    if int(store.add(prefix + "errors", 0)) or int(store.add(prefix + "mismatch", 0)):
        # Every rank has published its record: judge them all, as MPI's ranks do.
        records = [bytes(store.get(f"{prefix}record/{r}")) for r in range(world)]
        _pgroups.judge_records(records, WHAT)
        # Different digests of equal records cannot happen; fail loudly rather than go on.
        raise _pgroups.MismatchError(f"{WHAT} mismatch across {world} ranks: the digests differ")


class Watchdog:
    """Ends this rank (the message on stderr, then exit status 8) when a step has not
    finished ``timeout`` + a few seconds after the start: a gloo call blocked on a rank
    that never comes cannot be cancelled, and other ranks must not wait on this one. The
    message is the one timeout text of pgroups (``_pgroups.timeout_message``)."""

    def __init__(self, timeout: Optional[float], rank: int, world: int) -> None:
        self.step = "agreement"
        self.what = AGREEMENT
        self._rank = rank
        self._world = world
        self._timeout = timeout
        self._timer: Optional[threading.Timer] = None
        if timeout:
            self._timer = threading.Timer(timeout + WATCHDOG_GRACE_SECONDS, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def enter(self, step: str, what: str) -> None:
        """The step now running: its short name and what it waits for."""
        self.step, self.what = step, what

    @property
    def limited(self) -> bool:
        """Whether the call has a timeout (else torch's own bounds its calls)."""
        return bool(self._timeout)

    def message(self) -> str:
        return _pgroups.timeout_message(self._timeout or 0.0, self.what, self.step, self._rank, self._world)

    def _fire(self) -> None:
        sys.stderr.write(f"pgroups: error on rank {self._rank}: {self.message()}; this rank is blocked in a torch "
                         f"call that cannot be cancelled, so the watchdog ends it with status "
                         f"{WATCHDOG_EXIT_STATUS}\n")
        sys.stderr.flush()
        os._exit(WATCHDOG_EXIT_STATUS)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
