"""Recovery: what Plan.after_loss computed, in C++ (pgroups/layout/recovery.hpp)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Dict, List, Optional

from . import _pgroups
from ._checks import check_int

if TYPE_CHECKING:  # a Recovery holds the Plan that after_loss made; it makes none itself
    from ._plan import Plan


class Recovery:
    """What :meth:`Plan.after_loss` computed, in C++ (pgroups/layout/recovery.hpp).

    ``plan`` is the survivors' Plan, its groups in new ranks; ``rank_map`` lists, for each
    new rank r, the old (launcher) rank that runs it, so that a new group mapped through it
    is a surviving replica's old group; ``spares`` are the old ranks alive but idle,
    ``lost`` the dead ones, ``joining`` the new ids given. ``rank_map`` and ``spares`` are
    lists (refused, as ``to_json``, past 2^22 entries); ``old_rank``, ``new_rank`` and
    ``fate`` answer one rank at any size."""

    def __init__(self, recovery: "_pgroups.Recovery", plan: "Plan") -> None:
        self._recovery = recovery
        self.plan = plan

    @property
    def rank_map(self) -> List[int]:
        return self._recovery.rank_map()

    @property
    def spares(self) -> List[int]:
        return self._recovery.spares()

    @property
    def lost(self) -> List[int]:
        return self._recovery.lost

    @property
    def joining(self) -> List[int]:
        return self._recovery.joining

    @property
    def shrink_dim(self) -> str:
        """The dimension that lost (or gained) replicas, by the layout's name (``data`` for a preset)."""
        return self._recovery.shrink_dim

    @property
    def replica_size(self) -> int:
        return self._recovery.replica_size

    @property
    def dropped_replicas(self) -> List[int]:
        """The shrinking dimension's coordinates of the dropped replicas, ascending."""
        return self._recovery.dropped_replicas

    @property
    def spare_count(self) -> int:
        return self._recovery.spare_count

    def old_rank(self, new_rank: int) -> int:
        return self._recovery.old_rank(check_int("new_rank", new_rank))

    def new_rank(self, old_rank: int) -> Optional[int]:
        """The new rank ``old_rank`` runs, or None for a spare or a lost rank."""
        return self._recovery.new_rank(check_int("old_rank", old_rank))

    def fate(self, old_rank: int) -> str:
        """``"active"``, ``"spare"`` or ``"lost"``."""
        return self._recovery.fate(check_int("old_rank", old_rank))

    def bill(self) -> Dict[str, object]:
        """Ranks kept, spare, lost, joined and renumbered; communicators destroyed and
        created per surviving rank (``recovery_bill`` of the JSON)."""
        return json.loads(self._recovery.bill_json())

    def to_dict(self) -> Dict[str, object]:
        return json.loads(self._recovery.plan_json())

    def to_json(self, indent: Optional[int] = None) -> str:
        """``pgroups plan --lost ... --format json``: the new plan, ``rank_map``, ``spares``,
        ``lost``, ``joining``, ``shrink`` and ``recovery_bill``."""
        return self._recovery.plan_json(-1 if indent is None else check_int("indent", indent, minimum=0))

    def __str__(self) -> str:
        return self._recovery.text()

    def __repr__(self) -> str:
        return f"<pgroups.Recovery {self.plan.describe()} lost={self.lost} spare_count={self.spare_count}>"
