"""pgroups' recovery rule as the rank assignment of NVIDIA's in-process restart
(``nvidia-resiliency-ext``, ``nvidia_resiliency_ext.inprocess.Wrapper``).

The wrapper restarts the training function inside the surviving processes and asks its
``rank_assignment``, on every rank at every start, which ranks stay active. Its own
assignments shift or fill ranks one by one; :class:`PlanRankAssignment` answers with
pgroups' rule for every kind at once: the replicas of the shrinking dimension that lost a
rank are dropped whole (``Plan.after_loss``), their healthy ranks kept as the wrapper's
reserves (inactive, idle), the rank map of a placed plan respected, and the active ranks
numbered as the new plan's ranks, so that the restarted function builds the plan's groups
(``assignment.plan``) with pgroups over the wrapper's store::

    assignment = pgroups.inprocess.PlanRankAssignment(plan)

    @inprocess.Wrapper(rank_assignment=assignment, ...)
    def train(call_wrapper=None):
        store = torch.distributed.PrefixStore(f"train/{call_wrapper.iteration}/", call_wrapper.base_store)
        torch.distributed.init_process_group("gloo", store=store, rank=int(os.environ["RANK"]),
                                             world_size=int(os.environ["WORLD_SIZE"]))
        groups = pgroups.torch.create_groups(assignment.plan)

The wrapper hands the terminated ranks in its current numbering, which each assignment
changes; the class carries the history back to the launcher's ranks (the ranks of the
first call, those of ``plan``). Every rank computes the same answer from the same
terminated ranks. When no layout remains every rank raises the same ConfigError, which
ends the wrapper. Importing this module needs ``nvidia-resiliency-ext`` (ImportError
saying so otherwise).
"""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Set

try:
    from nvidia_resiliency_ext.inprocess.rank_assignment import RankAssignment, RankDiscarded
    from nvidia_resiliency_ext.inprocess.state import Mode
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"pgroups.inprocess needs nvidia-resiliency-ext ({missing}); pip install nvidia-resiliency-ext") from None

from . import _pgroups
from ._checks import check_token
from ._plan import Plan
from ._recovery import Recovery

__all__ = ["PlanRankAssignment"]


class PlanRankAssignment(RankAssignment):
    """See the module. ``plan``: the job's plan over the launcher's first ranks (its world
    may be smaller than the wrapper's: the ranks past it are reserves from the start);
    ``shrink``: the dimension that loses replicas (``dp`` unless named). ``plan`` is the
    plan of the current start; ``recovery`` the last Recovery (None before a loss);
    ``lost`` the launcher ranks lost so far."""

    def __init__(self, plan: Plan, shrink: Optional[str] = None) -> None:
        if not isinstance(plan, Plan):
            raise TypeError(f"plan must be a pgroups.Plan, not {type(plan).__name__}")
        self._first = plan
        self._shrink = None if shrink is None else check_token("shrink", shrink)
        self._order: Optional[List[int]] = None  # the launcher rank of each rank of the wrapper's numbering
        self.plan = plan
        self.recovery: Optional[Recovery] = None
        self.lost: Set[int] = set()

    def _active(self, world: int) -> List[int]:
        """The launcher ranks that run the plan, in its rank order."""
        in_plan = sorted(r for r in self.lost if r < self._first.world_size)
        if not in_plan:
            return list(range(self._first.world_size))
        try:
            self.recovery = self._first.after_loss(in_plan, self._shrink)
        except _pgroups.ConfigError as error:
            raise _pgroups.ConfigError(f"pgroups.inprocess: {error}") from None
        self.plan = self.recovery.plan
        return list(self.recovery.rank_map)

    def __call__(self, ctx: Any) -> Any:
        state = ctx.state
        if self._order is None:
            if state.world_size < self._first.world_size:
                raise _pgroups.ConfigError(
                    f"pgroups.inprocess: the plan's world size {self._first.world_size} is more than the wrapper's "
                    f"{state.world_size} ranks")
            self._order = list(range(state.world_size))
        order = self._order
        if state.rank in ctx.terminated_ranks:
            raise RankDiscarded(f"rank={state.rank} terminated_ranks={sorted(ctx.terminated_ranks)}")
        self.lost |= {order[r] for r in ctx.terminated_ranks}
        active = self._active(state.world_size)
        reserves = [r for r in order if r not in self.lost and r not in active]
        self._order = active + reserves
        me = self._order.index(order[state.rank])
        is_active = me < len(active)
        ctx.state = dataclasses.replace(state, rank=me, world_size=len(self._order),
                                        mode=Mode.ACTIVE if is_active else Mode.INACTIVE,
                                        active_rank=me if is_active else None, active_world_size=len(active))
        ctx.terminated_ranks = set()
        return ctx
