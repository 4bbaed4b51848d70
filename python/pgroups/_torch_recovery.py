"""Rebuilding every group on torch after a rank process died (pgroups.torch.recover).

The survivors of generation g meet in a store that outlived the dead rank (a TCPStore
held by the launcher's agent or the parent process), decide once who is alive, take the
layout Plan.after_loss computes in C++ for them, and re-form the default group as
generation g+1 under a new store prefix, their new ranks those of the recovery's rank map,
then create every kind of the new plan. The protocol, all through the store:

1. Each survivor takes its old groups down (a group over a dead rank cannot be reused;
   per backend, _torch_rebuild: on gloo closing its connections wakes the peers still
   blocked in a collective with it; on NCCL the default group is kept for a shrink where
   NCCL has one), writes ``shrink/<rank>`` (whether it kept it), then ``joined/<rank>``
   with the last step it completed.
2. A rank missing from ``joined`` is dead when its heartbeat (start_heartbeat, a thread
   with its own store client bumping ``heartbeat/<id>``) has not moved for
   ``heartbeat_window`` seconds, or, without heartbeats, when the timeout passes; a rank
   still beating is waited for until the timeout.
3. The first survivor to see every rank joined or dead wins ``store.add(decider)`` and
   writes the decision (the alive ranks, the step to resume from: the least completed one,
   whether every survivor can shrink, and the C++ error when no layout remains); every
   survivor reads the same decision, so every one ends with the same plan or raises the
   same error, and none waits past the timeout.
"""

from __future__ import annotations

import datetime
import json
import math
import threading
import time
from typing import Any, Dict, List, Optional

import torch.distributed as dist

from . import _pgroups
from . import _torch_create as creation
from . import _torch_rebuild as rebuild
from ._checks import check_int, check_token, timeout_seconds
from ._defaults import HEARTBEAT_INTERVAL_SECONDS, HEARTBEAT_WINDOW_SECONDS
from ._plan import Plan
from ._recovery import Recovery
from ._renamed import renamed_keywords
from ._torch_groups import TorchGroups

_POLL_SECONDS = _pgroups.store_retry_interval_seconds

# This process's place in the job: the generation of its default group, its launcher id
# and the launcher ids of the current world's ranks (the rank maps composed).
_state: Dict[str, Any] = {"generation": 0, "ids": None}


def default_group_prefix(generation: int) -> str:
    """The store prefix of generation ``generation``'s default group: a launcher gives
    ``PrefixStore(default_group_prefix(0), store)`` to its first init_process_group."""
    return _pgroups.store_keys.generation_prefix(check_int('generation', generation, minimum=0))


class Heartbeat:
    """A thread bumping ``heartbeat/<id>`` in the store every ``interval`` seconds over its
    own client (a TCPStore's host and port), so that a survivor blocked in a store call never
    stalls it. ``stop()`` ends it."""

    def __init__(self, store: Any, identity: int, interval: float = HEARTBEAT_INTERVAL_SECONDS) -> None:
        from torch.distributed import TCPStore

        host, port = getattr(store, "host", None), getattr(store, "port", None)
        if host is None or port is None:
            raise TypeError(f"start_heartbeat needs a TCPStore (its host and port), not {type(store).__name__}")
        self._store = TCPStore(host, port, is_master=False,
                               timeout=datetime.timedelta(seconds=_pgroups.heartbeat_store_timeout_seconds))
        self._key = _pgroups.store_keys.recovery_heartbeat(check_int('identity', identity, minimum=0))
        self._interval = interval
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"pgroups-heartbeat-{identity}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                self._store.add(self._key, 1)
            except RuntimeError:
                return  # the store is gone: the job is ending
            self._stopped.wait(self._interval)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()


def start_heartbeat(store: Any, identity: int, interval: float = HEARTBEAT_INTERVAL_SECONDS) -> Heartbeat:
    """Starts this process's heartbeat under its launcher id ``identity`` (its rank in the
    first world); recover() then tells a dead rank from a slow one within
    ``heartbeat_window`` instead of the whole timeout."""
    return Heartbeat(store, identity, interval)


class Recovered:
    """What recover() leaves this process with: ``fate`` ``"active"`` (``groups`` the new
    plan's groups, ``rank`` its new rank), or ``"spare"`` (alive, in no group: ``groups`` and
    ``rank`` None); ``recovery`` the C++ Recovery (``plan``, ``rank_map``, ``spares``,
    ``lost``); ``step`` the step every survivor resumes from; ``identity`` this process's
    launcher id, ``generation`` the new default group's."""

    def __init__(self, recovery: Recovery, fate: str, groups: Optional[TorchGroups], rank: Optional[int],
                 step: Optional[int], identity: int, generation: int, alive: List[int]) -> None:
        self.recovery = recovery
        self.fate = fate
        self.groups = groups
        self.rank = rank
        self.step = step
        self.identity = identity
        self.generation = generation
        self.alive = alive

    @property
    def plan(self) -> Plan:
        return self.recovery.plan

    def __repr__(self) -> str:
        return (f"<pgroups.torch.Recovered {self.fate} id={self.identity} rank={self.rank} step={self.step} "
                f"generation={self.generation} {self.plan.describe()}>")


def launcher_ids(world_size: int) -> List[int]:
    """The launcher ids of the current world's ranks (the identity map before any recovery)."""
    ids = _state["ids"]
    return list(range(world_size)) if ids is None or len(ids) != world_size else list(ids)


def _heartbeat(store: Any, identity: int) -> Optional[int]:
    key = _pgroups.store_keys.recovery_heartbeat(identity)
    return int(store.add(key, 0)) if store.check([key]) else None


def _decide(store: Any, prefix: str, world: int, ids: List[int], deadline: float, window: float,
            give_up: float) -> Dict[str, Any]:
    """Polls until a decision is in the store, or makes it: the ranks joined once every
    missing one is judged dead, or at the deadline. A decider that died between winning and
    writing leaves the others waiting: they give up at ``give_up``."""
    beats: Dict[int, Any] = {}
    while True:
        if store.check([prefix + "decision"]):
            return json.loads(store.get(prefix + "decision").decode())
        now = time.monotonic()
        if now >= give_up:
            raise _pgroups.TimeoutError(
                f"pgroups.torch.recover: no decision on the survivors in {prefix} by the timeout: the rank that "
                f"was to write it is gone")
        joined: Dict[int, int] = {}
        waiting = False
        for rank in range(world):
            key = f"{prefix}joined/{rank}"
            if store.check([key]):
                joined[rank] = int(store.get(key).decode())
                continue
            beat = _heartbeat(store, ids[rank])
            seen = beats.get(rank)
            if seen is None or seen[0] != beat:
                beats[rank] = (beat, now)
                seen = beats[rank]
            # No heartbeat at all: only the deadline tells; a stalled one, the window.
            if beat is None or now - seen[1] < window:
                waiting = True
        if (not waiting or now >= deadline) and int(store.add(prefix + "decider", 1)) == 1:
            # A shrink of the old world only when every survivor kept it for one.
            shrink = bool(joined) and all(store.get(f"{prefix}shrink/{r}") == b"1" for r in joined)
            decision = {"alive": sorted(joined), "step": min(joined.values()) if joined else None, "shrink": shrink}
            store.set(prefix + "decision", json.dumps(decision))
            return decision
        time.sleep(_POLL_SECONDS)


@renamed_keywords(modes="kinds")
def recover(groups: TorchGroups, *, store: Any, step: Optional[int] = None, timeout: Any = None,
            shrink: Optional[str] = None, backend: str = "gloo", heartbeat_window: float = HEARTBEAT_WINDOW_SECONDS,
            kinds: Optional[List[str]] = None) -> Recovered:
    """Rebuilds the job on the survivors after a rank died: call it on every surviving rank
    once a collective failed or timed out (see the module). ``store`` is the store that
    outlives every rank (the launcher's TCPStore, not the default group's PrefixStore);
    ``step`` the last step this rank completed (the survivors resume from the least);
    ``timeout`` (seconds or a timedelta; None: ``PGROUPS_TIMEOUT``, else the default every
    call has, as create_groups reads it; 0: no limit, the house rule, so that the survivors
    decide only when every missing rank's heartbeat has stopped for ``heartbeat_window``:
    a rank that never beat is then waited for forever) bounds the agreement on who is alive, and again the new world's
    forming (its default group and its groups get it as their timeout), so the call ends
    within twice it (three times when the rank that won the decision died before writing
    it: the others then raise TimeoutError); the groups' collective timeout should be below it, so that a rank
    blocked on a dead peer fails and joins in time; ``shrink`` names the dimension that loses
    replicas (Plan.after_loss); ``backend`` is the new world's: ``"nccl"`` aborts the old
    communicators together and shrinks the old world where NCCL can (2.27+), else makes a
    new one, and splits the kinds from it (the module _torch_rebuild; NCCL's watchdog must
    not end the process on the failed collective: ``TORCH_NCCL_ASYNC_ERROR_HANDLING=0`` or
    ``2``). Returns a :class:`Recovered`; raises ConfigError on every
    survivor alike when no layout remains (the C++ message), TimeoutError when this rank was
    judged dead or the new groups did not form in time."""
    if not isinstance(groups, TorchGroups):
        raise TypeError(f"groups must be what pgroups.torch.create_groups returned, not {type(groups).__name__}")
    seconds = timeout_seconds(timeout)  # None: no limit
    shrink_name = None if shrink is None else check_token("shrink", shrink)
    step_value = -1 if step is None else check_int("step", step, minimum=0)
    deadline = math.inf if seconds is None else time.monotonic() + seconds
    old_plan, rank = groups.plan, groups.rank
    world = old_plan.world_size
    ids = launcher_ids(world)
    generation = int(_state["generation"]) + 1
    prefix = _pgroups.store_keys.recovery_round_prefix(generation)
    names = list(groups.kinds) if kinds is None else list(kinds)
    keep_world = rebuild.is_device_backend(backend) and rebuild.can_shrink()
    rebuild.take_down(groups, backend, keep_world)
    store.set(f"{prefix}shrink/{rank}", "1" if keep_world else "0")
    store.set(f"{prefix}joined/{rank}", str(step_value))
    decision = _decide(store, prefix, world, ids, deadline, heartbeat_window,
                       math.inf if seconds is None else deadline + seconds)
    alive: List[int] = decision["alive"]
    _state["generation"] = generation
    shrink_world = keep_world and bool(decision.get("shrink")) and rank in alive
    if not shrink_world:
        rebuild.abort_world()  # kept for a shrink that is not to be, or not with this rank
    if rank not in alive:
        raise _pgroups.TimeoutError(
            f"pgroups.torch.recover: rank {rank} (launcher id {ids[rank]}) joined generation {generation} after the "
            f"survivors decided without it (alive: {alive})")
    try:
        recovery = old_plan.after_loss([r for r in range(world) if r not in alive], shrink_name)
    except _pgroups.ConfigError as error:
        raise _pgroups.ConfigError(f"pgroups.torch.recover: {error}") from None
    new_ids = [ids[old] for old in recovery.rank_map]
    resume = decision["step"]
    new_rank = recovery.new_rank(rank)
    if new_rank is None:
        rebuild.abort_world()
        _state["ids"] = new_ids
        return Recovered(recovery, "spare", None, None, resume if resume is None or resume >= 0 else None, ids[rank],
                         generation, alive)
    # The survivors read the decision within a poll of each other: the new world gets its
    # own timeout from here, whenever this rank's agreement began.
    new_store = dist.PrefixStore(default_group_prefix(generation), store)
    with rebuild.eager_gloo(backend):
        rebuild.form_world(backend, new_store, new_rank, recovery.rank_map, world, shrink_world, seconds)
        _state["ids"] = new_ids
        new_groups = creation.create_groups(recovery.plan, kinds=names, timeout=0 if seconds is None else seconds,
                                            method=rebuild.creation_method(backend, groups.method),
                                            share=groups.share)
    return Recovered(recovery, "active", new_groups, new_rank, resume if resume is None or resume >= 0 else None,
                     ids[rank], generation, alive)
