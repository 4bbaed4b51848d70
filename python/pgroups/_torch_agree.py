"""The cross-rank agreement of pgroups.torch, through torch's default store, and the
watchdog that bounds what a timeout cannot cancel.

What the ranks compare is the MPI context's own: a record of named fields
(``_pgroups.encode_settings``, or ``encode_error`` for an error a rank hit before it), its
64-bit digest (``settings_digest``), and on a failure every rank's record judged by
``judge_records``, so that a mismatch or a carried error reads, and is of the class, the
same on torch as on MPI (pgroups/layout/agreement_record.hpp).

The transport is four store operations per rank (the last one: five) when the ranks agree (no collective over
the world, no record sent): each rank publishes its digest under its own key and counts
itself in; the last to arrive reads every digest at once and opens the gate with the
verdict, which everyone else waits for with the timeout. Only on a mismatch or an error
do the ranks publish their records, and every rank reads them all, so that every rank
raises the same error. A rank that waits past the timeout names the ranks that never
arrived and closes the gate as abandoned, so a rank that comes later gives up at once
instead of waiting alone.
"""

from __future__ import annotations

import datetime
import os
import sys
import threading
import time
from typing import Any, Dict, List, NoReturn, Optional, Sequence, Tuple

from . import _pgroups
from ._defaults import NO_TIMEOUT, WATCHDOG_GRACE_SECONDS

# The exit status of a rank the watchdog ends: TimeoutError's (docs/reference/errors.md).
WATCHDOG_EXIT_STATUS: int = _pgroups.exit_codes["timeout"]
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
    prefix = _pgroups.store_keys.agreement_prefix(generation)
    record = record_of(fields, error)
    digest = str(_pgroups.settings_digest(record))
    wait_for = datetime.timedelta(seconds=timeout) if timeout else NO_TIMEOUT
    store.set(f"{prefix}rank/{rank}", digest)
    arrival = int(store.add(prefix + "arrived", 1))
    if arrival == world:
        digests = _read(store, [f"{prefix}rank/{r}" for r in range(world)])
        verdict = _OPEN if all(d == digests[0] for d in digests) else _DIFFER
        # compare_set keeps an earlier "abandoned": a gate closed by a rank that gave up stays
        # closed. torch 1.x's compare_set wakes no waiter, so the opener sets the gate again.
        gate = _text(store.compare_set(prefix + "gate", "", verdict))
        if gate == verdict:
            store.set(prefix + "gate", verdict)
    else:
        try:
            store.wait([prefix + "gate"], wait_for)
        except RuntimeError:
            # The gate says how many had arrived when it closed: those ranks time out as this
            # one does, a rank that comes later learns that the others stopped waiting.
            there = int(store.add(prefix + "arrived", 0))
            store.compare_set(prefix + "gate", "", f"{_ABANDONED}{there}")
            _raise_timeout(store, prefix, timeout, rank, world)
        gate = _text(store.get(prefix + "gate"))
    if gate.startswith(_ABANDONED):
        if arrival <= int(gate[len(_ABANDONED):]):
            _raise_timeout(store, prefix, timeout, rank, world)
        raise _pgroups.TimeoutError(
            f"the other ranks stopped waiting at {AGREEMENT} before this rank arrived (step 'agreement', rank "
            f"{rank} of {world})")
    if gate == _OPEN:
        if error is not None:
            # Every rank carried this same error: the records are equal, so judge them here.
            _pgroups.judge_records([record] * world, WHAT)
        return
    # A mismatch or an error: every rank publishes its record and judges them all, as MPI's ranks do.
    store.set(f"{prefix}record/{rank}", record)
    keys = [f"{prefix}record/{r}" for r in range(world)]
    try:
        store.wait(keys, wait_for)
    except RuntimeError:
        missing = [r for r in range(world) if not _present(store, keys[r])]
        raise _pgroups.TimeoutError(
            _pgroups.timeout_message(timeout or 0.0, AGREEMENT, "agreement", rank, world, missing)) from None
    _pgroups.judge_records([bytes(value) for value in _read(store, keys, raw=True)], WHAT)
    # Different digests of equal records cannot happen; fail loudly rather than go on.
    raise _pgroups.MismatchError(f"{WHAT} mismatch across {world} ranks: the digests differ")


def _raise_timeout(store: Any, prefix: str, timeout: Optional[float], rank: int, world: int) -> NoReturn:
    missing = [r for r in range(world) if not _present(store, f"{prefix}rank/{r}")]
    raise _pgroups.TimeoutError(
        _pgroups.timeout_message(timeout or 0.0, AGREEMENT, "agreement", rank, world, missing)) from None


_OPEN, _DIFFER, _ABANDONED = "open", "differ", "abandoned:"
_PROBE = "\x00pgroups-absent"  # no digest, record or gate value


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, (bytes, bytearray)) else str(value)


def _present(store: Any, key: str) -> bool:
    """Whether ``key`` is set. torch 1.x stores have no check(), and a wait that times out
    there leaves the server's answer to it in the connection, to be read as the answer to
    the next operation; compare_set with an expected value no key holds sets nothing and
    answers that value only where the key is absent."""
    if hasattr(store, "check"):
        return bool(store.check([key]))
    return _text(store.compare_set(key, _PROBE, _PROBE)) != _PROBE


def _read(store: Any, keys: List[str], raw: bool = False) -> List[Any]:
    """The values of ``keys``, in one operation where the store has it (torch >= 2.3)."""
    values = store.multi_get(keys) if hasattr(store, "multi_get") else [store.get(key) for key in keys]
    return list(values) if raw else [_text(value) for value in values]


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
        if timeout:
            _Watcher.arm(self, time.monotonic() + timeout + WATCHDOG_GRACE_SECONDS)

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
        _Watcher.disarm(self)


class _Watcher:
    """The one thread of a process that fires its Watchdogs: started with the first and
    kept, since a thread per call costs milliseconds on a busy host, at every call."""

    _lock = threading.Condition()
    _armed: Dict[int, Tuple[float, Watchdog]] = {}
    _thread: Optional[threading.Thread] = None

    @classmethod
    def arm(cls, dog: Watchdog, deadline: float) -> None:
        with cls._lock:
            cls._armed[id(dog)] = (deadline, dog)
            if cls._thread is None or not cls._thread.is_alive():
                cls._thread = threading.Thread(target=cls._run, name="pgroups-watchdog", daemon=True)
                cls._thread.start()
            cls._lock.notify()

    @classmethod
    def disarm(cls, dog: Watchdog) -> None:
        with cls._lock:
            cls._armed.pop(id(dog), None)

    @classmethod
    def _run(cls) -> None:
        with cls._lock:
            while True:
                now = time.monotonic()
                due = [dog for deadline, dog in cls._armed.values() if deadline <= now]
                if due:
                    due[0]._fire()
                soonest = min((deadline for deadline, _ in cls._armed.values()), default=None)
                cls._lock.wait(None if soonest is None else max(soonest - now, 0.0))
