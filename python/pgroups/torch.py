"""torch.distributed process groups of a pgroups plan, and a DeviceMesh over them.

After ``torch.distributed.init_process_group`` (``env://`` under torchrun; under a
launcher that restarts the job, :func:`init_process_group`, whose keys each attempt keeps
apart),
:func:`create_groups` creates the groups of a plan (all its kinds, or the ones asked
for) and :func:`device_mesh` hands them to torch as a ``DeviceMesh``. Before the first
group, every rank validates its arguments and the plan, and the ranks agree through
torch's default store (a few store operations per rank, no collective over the world)
that they hold the same plan, kinds, method and options: a mismatch raises
:class:`pgroups.MismatchError`, an invalid plan :class:`pgroups.ConfigError`, a wrong
type ``TypeError``, on every rank (an error one rank hits is carried to every rank),
instead of leaving ranks waiting in ``new_group`` forever.

Economy (``share=True``, the default): kinds whose groups are the same partition of the
world share one torch group, created once; a kind that is the whole world is the default
group (never created, never destroyed) when the backend asked for is the default group's
(:func:`world_is_default_group`; another backend: one new group of it); a kind of one-rank
groups is created by each rank alone, without a collective (torch >= 2.2: ``new_group([rank],
use_local_synchronization=True)``; torch 1.x with gloo: a one-rank ``ProcessGroupGloo``
registered as ``new_group`` would; otherwise the plain loop, which torch requires).
``TorchGroups.destroy_group`` frees a shared group when the last kind sharing it goes.
``share=False`` gives every kind its own group (code that calls
``torch.distributed.destroy_process_group`` on each kind's group needs that). The one cost
of sharing: operations on two kinds that share a group are ordered on it, so code driving
them from different threads or streams must not rely on them overlapping. Groups carry
their kinds' names as ``group_desc`` where torch has it (``pgroups:tp+tp-cp``).

Creation methods (``method=``; the default is the fastest the installed torch offers for the backend):

``split_group``
    ``torch.distributed.split_group`` (torch >= 2.5), NCCL default group only: one call
    per distinct partition;
``new_group_local``
    ``new_group(ranks, use_local_synchronization=True)`` (torch >= 2.2): each rank
    creates its own group only, synchronising with its members; every rank creates its
    kinds in the same order, so overlapping groups cannot deadlock;
``new_group``
    plain ``new_group(ranks)`` for every group: every rank enters every creation, with a
    barrier over the world each time, which torch 1.x requires;
``gloo_direct``
    (torch 1.x with gloo, the default there) each rank constructs only its own
    ``ProcessGroupGloo`` per kind over a prefix of the default store and registers it
    with torch as ``new_group`` does; skips the world barrier per group (4.8x to 6.5x
    faster than the plain loop at 8 and 16 ranks, docs/developing/performance.md) but relies on
    torch 1.x's private registry: ``method="new_group"`` is the public path.

A method the installed torch lacks is a ConfigError on every rank naming the torch
version and the methods it has.

``timeout`` (seconds, or a ``datetime.timedelta``; default ``PGROUPS_TIMEOUT`` or 300;
0 = none) bounds the whole call: a rank that waits that long at the agreement raises
:class:`pgroups.TimeoutError` naming the step and the missing ranks; torch's own timeout
of the new groups is the time left; and a rank still blocked a few seconds past the
timeout (a gloo call cannot be cancelled) is ended by a watchdog with the message and
exit status 8, as the C++ watchdog does.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Union

from . import _torch_create as creation
from ._modes import KindLike
from ._plan import Plan
from ._renamed import renamed_keywords
from ._torch_create import (
    DEFAULT_TIMEOUT_SECONDS,
    METHODS,
    available_method,
    default_backend,
    gloo_direct_available,
    methods_available,
    world_is_default_group,
)
from ._torch_groups import TorchGroups
from ._torch_mesh import make_device_mesh, make_init_device_mesh, mesh_groups

# Rebuilding after a lost rank (docs/using/recovery.md): a module of its own.
from ._torch_recovery import Heartbeat, Recovered, default_group_prefix, recover, start_heartbeat

# The default group of a job a launcher may restart: each attempt's keys apart.
from ._torch_start import agree_on_attempt, attempt_prefix, init_process_group

__all__ = ["DEFAULT_TIMEOUT_SECONDS", "METHODS", "Heartbeat", "Recovered", "TorchGroups", "agree_on_attempt",
           "attempt_prefix",
           "available_method", "create_groups", "default_backend", "default_group_prefix", "device_mesh",
           "gloo_direct_available", "init_device_mesh", "init_process_group", "methods_available", "mesh_groups",
           "recover", "start_heartbeat", "world_is_default_group"]


@renamed_keywords(modes="kinds")
def create_groups(
    plan: Optional[Plan] = None,
    *,
    pipeline: int = 1,
    tensor: int = 1,
    mode: Optional[str] = None,
    depth: Optional[int] = None,
    legacy_sequence_dp: bool = False,
    kinds: Optional[Iterable[KindLike]] = None,
    backend: Optional[str] = None,
    timeout: Any = None,
    method: Optional[str] = None,
    share: bool = True,
    rank_map: Any = None,
) -> TorchGroups:
    """Creates the torch process groups of ``plan`` (or of the plan of ``pipeline``,
    ``tensor``, ``mode``, ``depth`` over the default group's world), for ``kinds`` (default:
    every kind of the plan, in creation order). Collective over the default group: every
    rank must call it with the same arguments. ``backend`` goes to torch; ``timeout`` is
    seconds or a timedelta (see the module); ``method`` forces one of METHODS;
    ``share=False`` gives every kind its own torch group. ``rank_map`` (with the sizes; a
    plan carries its own) says which torch rank runs each mesh rank (``pgroups.Plan``).

    Raises, on every rank and before any group is created: MismatchError when ranks
    disagree (the message lists which ranks hold what), ConfigError for an invalid plan, a
    method this torch lacks or a plan whose world size is not torch's, StateError for a
    kind the plan lacks, TypeError for an argument of the wrong type, TimeoutError when a
    rank does not come.
    """
    return creation.create_groups(plan, pipeline=pipeline, tensor=tensor, mode=mode, depth=depth,
                                  legacy_sequence_dp=legacy_sequence_dp, kinds=kinds, backend=backend, timeout=timeout,
                                  method=method, share=share, rank_map=rank_map)


def device_mesh(source: Union[Plan, TorchGroups], device_type: str = "cpu", *, timeout: Any = None,
                method: Optional[str] = None, share: bool = True) -> Any:
    """A ``torch.distributed.device_mesh.DeviceMesh`` over pgroups' own groups, with
    ``mesh_dim_names`` the plan's mesh dimensions slowest first (a mesh tp=2,dp=2,pp=2
    gives ``("pp", "dp", "tp")``; a preset ``("data", "pipe", "tensor")``, or the kinds
    that split the tensor group in place of ``tensor``, with ``mesh["tensor"]`` a
    flattened dimension then). Every kind of the plan whose groups are a run of adjacent
    dimensions is a flattened dimension too (``mesh["tp-dp"]``, ``mesh["model"]``), as the
    plan's view says (``RankView.flattened_dims``).

    ``source`` is a Plan (its groups are created here, collectively, as
    :func:`create_groups` does, with ``timeout``, ``method``, ``share``) or the
    TorchGroups of an earlier ``create_groups``. No group is created twice; a dimension
    whose one-dimension kind the plan lacks is created for the mesh (a one-rank group
    costs no collective). :func:`mesh_groups` gives the TorchGroups behind the mesh (their
    ``communicators`` are its bill). torch >= 2.4; ConfigError before.
    """
    return make_device_mesh(source, device_type, timeout, method, share)


def init_device_mesh(device_type: str, mesh_shape: Any, *, mesh_dim_names: Any = None, timeout: Any = None,
                     method: Optional[str] = None, share: bool = True) -> Any:
    """torch's ``init_device_mesh`` on pgroups' engine: the same call, in torch's order
    (``mesh_shape`` slowest dimension first, ``mesh_dim_names`` naming each), so that
    migrating is one line; the groups are pgroups' (one agreement, the timeout, sharing:
    a one-rank dimension costs no collective, the whole world is the default group).
    Under torchrun with no default group yet it makes one, as torch's does.

    ``mesh_dim_names`` is required (torch's own call needs it to slice by name). Torch's
    flatten idiom works on the result: ``mesh["dp", "tp"]._flatten()`` gives the flattened
    dimension (``"dp_tp"``, or the name given). ConfigError or TypeError on every rank for a
    missing or mismatched ``mesh_dim_names``, a size below 1 or a shape whose product is not
    the world; as :func:`device_mesh` otherwise."""
    return make_init_device_mesh(device_type, mesh_shape, mesh_dim_names, timeout, method, share)
