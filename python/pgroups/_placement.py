"""pgroups.place: a plan placed on a cluster, by the rules and the search of
``pgroups place`` (docs/using/placement.md), computed by the C++ library."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Union

from . import _pgroups
from ._plan import Plan

PathLike = Union[str, "os.PathLike[str]"]


class Placement:
    """Where each rank of a plan runs on a cluster: the answer of :func:`place`.

    ``to_json()`` is byte for byte what ``pgroups place --format json`` prints (without
    its newline) for the same plan and cluster; ``rank_map`` is the map that realizes the
    placement (entry r: the launcher rank that runs mesh rank r); ``plan`` is the placed
    plan, with that map and the cluster's GPUs per node."""

    def __init__(self, job: "_pgroups.PlacedJob") -> None:
        self._job = job
        self.plan = Plan.from_layout(job.placed_layout())

    @property
    def rank_map(self) -> List[int]:
        return list(self._job.rank_map)

    def to_json(self, indent: Optional[int] = None) -> str:
        return self._job.json(-1 if indent is None else indent)

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self._job.json(-1))

    def text(self) -> str:
        """``pgroups place``'s text report."""
        return self._job.text()

    def rankfile(self) -> str:
        """Open MPI's rankfile for the placement (``pgroups place --rankfile``)."""
        return self._job.rankfile()

    def hostfile(self) -> str:
        """Slurm's hostfile for the placement (``pgroups place --hostfile``)."""
        return self._job.hostfile()

    def __str__(self) -> str:
        return self.text()


def place(plan: Plan, cluster: Optional[PathLike] = None, *, slurm_topology: Optional[PathLike] = None,
          nodelist: Optional[str] = None, level_costs: Optional[str] = None,
          traffic: Optional[str] = None) -> Placement:
    """Places ``plan`` on a cluster as ``pgroups place`` does: ``cluster`` is a cluster
    file (``--cluster``); otherwise ``slurm_topology`` is Slurm's topology.conf, with the
    job's hosts in ``nodelist`` (else SLURM_JOB_NODELIST) and the plan's ``gpus_per_node``,
    and ``level_costs`` its levels' costs (``"switch=4,rest=16"``). ``traffic``
    (``"tp=8,dp=1"``) is the job's own bytes per kind over the cluster's. Raises
    :class:`pgroups.ConfigError` or :class:`pgroups.ParseError` with the CLI's messages."""
    if not isinstance(plan, Plan):
        raise TypeError(f"plan must be a pgroups.Plan, not {type(plan).__name__}")
    for name, text in (("nodelist", nodelist), ("level_costs", level_costs), ("traffic", traffic)):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"{name} must be a str, not {type(text).__name__}")
    job = _pgroups.place(plan.layout, None if cluster is None else os.fspath(cluster),
                         None if slurm_topology is None else os.fspath(slurm_topology), nodelist, level_costs,
                         traffic)
    return Placement(job)
