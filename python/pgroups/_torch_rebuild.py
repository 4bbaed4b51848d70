"""How pgroups.torch.recover takes the old world down and forms the new one, per backend.

gloo: every old group is aborted (closing its connections wakes the peers still blocked
in a collective with this rank), then destroyed; the new default group is a new
rendezvous under the generation's store prefix; the kinds are created as create_groups
creates them. The new world is formed eager even under ``TORCH_GLOO_LAZY_INIT``
(eager_gloo): recover returns with every pair of it connected, inside its timeout, rather
than leaving the connections to the first training collective, where a peer lost before
it (or gloo's lazy connect, which has its own races: gloo#444, gloo#520) would fail or
hang a survivor outside the agreement.

A device backend (NCCL): a communicator over a dead rank must be aborted, never destroyed
(destroying waits for its work), and aborting NCCL communicators one at a time can
deadlock while another has a kernel in flight (pytorch#119797): torch's abort of the
world (``_abort_process_group``) aborts every group inside one NCCL group. Where NCCL
shrinks (``ncclCommShrink``, NCCL 2.27+, torch's ``shrink_group``) and every survivor can,
the old default group is kept through the agreement and shrunk to the new world with
``SHRINK_ABORT`` (no new rendezvous, no new bootstrap), the other groups aborted together
first; otherwise the world is aborted and a new default group made, bound to this rank's
device so that ``split_group`` can split it. Either way the kinds are split from the new
default group, one ``split_group`` per distinct partition.

torch's ``fake`` backend stands in for NCCL where there is no device: the tests drive this
path on it and check the calls and the timeouts.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from typing import Any, Iterator, List, Optional

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

from ._defaults import NO_TIMEOUT
from ._torch_groups import TorchGroups, owned_groups
from ._torch_store import GLOO_LAZY_VARIABLE, gloo_is_lazy

DEVICE_BACKENDS = ("nccl", "fake")


def is_device_backend(backend: str) -> bool:
    return str(backend).lower() in DEVICE_BACKENDS


def _world_backend() -> Any:
    """The backend object of the default group (NCCL's under "cuda", the fake one's), or None."""
    world = dist.group.WORLD
    for device in ("cuda", "cpu"):
        with contextlib.suppress(RuntimeError, AttributeError):
            return world._get_backend(torch.device(device))  # type: ignore[union-attr]
    return None


def can_shrink() -> bool:
    """Whether this rank's default group can be shrunk: torch has ``shrink_group`` and the
    default group's backend says it supports shrinking (NCCL 2.27+)."""
    if not hasattr(dist, "shrink_group") or not dist.is_initialized():
        return False
    return bool(getattr(_world_backend(), "supports_shrinking", False))


def abort_world() -> None:
    """Aborts every group of this process, the default one included, together (see the
    module), and forgets them; torch without the call (< 2.3) destroys them."""
    if not dist.is_initialized():
        return
    abort = getattr(c10d, "_abort_process_group", None)
    if abort is not None:
        with contextlib.suppress(RuntimeError, ValueError):
            abort()
            return
    with contextlib.suppress(RuntimeError):
        dist.destroy_process_group()


def take_down(groups: TorchGroups, backend: str, keep_world: bool) -> None:
    """Takes the old world's groups down before the agreement (see the module):
    ``keep_world`` keeps the default group for a shrink, its other groups aborted together."""
    if not is_device_backend(backend):
        _abort_each(groups)
        return
    if not keep_world:
        abort_world()
        return
    handles = owned_groups(groups)
    world = _world_backend()
    start, end = getattr(world, "_group_start", None), getattr(world, "_group_end", None)
    if start is not None and end is not None:
        start()
    for group in handles:
        with contextlib.suppress(RuntimeError):
            group.abort()
    if start is not None and end is not None:
        end()
    for group in handles:
        with contextlib.suppress(RuntimeError, ValueError):
            dist.destroy_process_group(group)


def _abort_each(groups: TorchGroups) -> None:
    """gloo: aborts, then destroys, every group of the old world (see the module); a
    caller's references (DDP holds its group) would otherwise keep a destroyed group's
    connections open. torch without abort (1.x) only destroys."""
    handles = owned_groups(groups)
    if dist.is_initialized():
        handles.append(dist.group.WORLD)
    for group in handles:
        abort = getattr(group, "abort", None)
        if abort is not None:
            with contextlib.suppress(RuntimeError):
                abort()
    with contextlib.suppress(RuntimeError):
        groups.destroy()
    if dist.is_initialized():
        with contextlib.suppress(RuntimeError):
            dist.destroy_process_group()


def form_world(backend: str, store: Any, new_rank: int, rank_map: List[int], old_world: int, shrink: bool,
               seconds: Optional[float]) -> None:
    """The new default group of this active survivor: the old one shrunk when ``shrink``
    (every survivor could) and the new ranks keep the old ranks' order (a shrink numbers
    the remaining ranks in order); else a new one over ``store``, whose timeout is
    ``seconds`` (None: none)."""
    if shrink and rank_map == sorted(rank_map):
        excluded = [old for old in range(old_world) if old not in rank_map]
        dist.shrink_group(excluded, shrink_flags=c10d.SHRINK_ABORT)
        return
    abort_world()
    timeout = NO_TIMEOUT if seconds is None else datetime.timedelta(seconds=seconds)
    if backend == "nccl" and torch.cuda.is_available():
        # Bound to the device, so eager, so that split_group can split it.
        dist.init_process_group(backend, store=store, rank=new_rank, world_size=len(rank_map), timeout=timeout,
                                device_id=torch.device("cuda", torch.cuda.current_device()))
    else:
        dist.init_process_group(backend, store=store, rank=new_rank, world_size=len(rank_map), timeout=timeout)


@contextlib.contextmanager
def eager_gloo(backend: str) -> Iterator[None]:
    """Within it, gloo groups are created eager (every pair connected at creation), whatever
    ``TORCH_GLOO_LAZY_INIT`` says outside it (see the module): torch reads the variable
    when it creates a group's device. Restores the caller's value, or its absence."""
    if is_device_backend(backend) or not gloo_is_lazy():
        yield
        return
    saved = os.environ[GLOO_LAZY_VARIABLE]
    os.environ[GLOO_LAZY_VARIABLE] = "0"
    try:
        yield
    finally:
        os.environ[GLOO_LAZY_VARIABLE] = saved


def creation_method(backend: str, old_method: str) -> str:
    """How the new kinds are made: split from the new default group on a device backend
    where torch splits, else as the old ones were."""
    return "split_group" if is_device_backend(backend) and hasattr(dist, "split_group") else old_method
