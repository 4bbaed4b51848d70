"""pgroups.colossal.register() called before Colossal-AI's legacy context is imported (the
order a new script writes), then Colossal-AI's own global context: gpc.init_parallel_groups()
and gpc.destroy(), unmodified, in each of the five tensor modes, one fresh default group per
mode (registered as gpc.init_global_dist() registers it; that function itself puts an IPv4
host in brackets, which torch 2.13 refuses). Every group is the layout's, works (an all-reduce of its
members' ranks), and is gone after destroy(); unregister() puts Colossal-AI's own classes
back. 8 ranks, gloo."""

import datetime
import os
import socket
import sys

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import colossal_legacy  # noqa: E402

if not colossal_legacy.stub():
    pytest.skip("Colossal-AI is not installed in this interpreter (python/requirements/torch2-nodeps.txt installs "
                "colossalai==0.5.0 into the torch 2.x venv)", allow_module_level=True)

import pgroups  # noqa: E402
from pgroups import colossal  # noqa: E402

# The order under test: pgroups first, Colossal-AI's context after.
CONTEXT_IMPORTED_BEFORE = "colossalai.legacy.context" in sys.modules
colossal.register()

from colossalai.legacy.context import ParallelMode as PM  # noqa: E402
from colossalai.legacy.context import process_group_initializer as own  # noqa: E402
from colossalai.legacy.core import global_context as gpc  # noqa: E402
from colossalai.legacy.global_variables import tensor_parallel_env as env  # noqa: E402
from colossalai.legacy.registry import DIST_GROUP_INITIALIZER  # noqa: E402

RANK = MPI.COMM_WORLD.Get_rank()
SIZE = MPI.COMM_WORLD.Get_size()
pytestmark = pytest.mark.skipif(SIZE != 8, reason="the cases are sized for 8 ranks")

# (Colossal-AI's parallel config, pgroups' Plan of the same layout). Every config names its
# pipeline size: the singleton gpc keeps a size from the previous config that does not.
MODES = {
    "1d": (dict(pipeline=2, tensor=dict(size=2, mode="1d")), dict(pipeline=2, tensor=2, mode="1d")),
    "2d": (dict(pipeline=2, tensor=dict(size=4, mode="2d")), dict(pipeline=2, tensor=4, mode="2d")),
    "2.5d": (dict(pipeline=1, tensor=dict(size=8, mode="2.5d", depth=2)), dict(tensor=8, mode="2.5d", depth=2)),
    "3d": (dict(pipeline=1, tensor=dict(size=8, mode="3d")), dict(tensor=8, mode="3d")),
    "sequence": (dict(pipeline=2, tensor=dict(size=2, mode="sequence")),
                 dict(pipeline=2, tensor=2, mode="sequence", legacy_sequence_dp=True)),
}


def free_port():
    port = None
    if RANK == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    return MPI.COMM_WORLD.bcast(port, root=0)


def test_context_was_not_imported_before_register_and_colossal_classes_are_replaced():
    assert not CONTEXT_IMPORTED_BEFORE
    assert colossal.is_registered()
    for name, cls in colossal.REGISTERED.items():
        assert DIST_GROUP_INITIALIZER.get_module(name) is cls, name


@pytest.mark.parametrize("mode", list(MODES))
def test_gpc_init_parallel_groups_after_register_first_gives_the_layout_and_destroys_clean(mode):
    parallel, plan_args = MODES[mode]
    env.load()
    gpc.load_config(dict(parallel=parallel))
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=RANK, world_size=SIZE,
                            timeout=datetime.timedelta(seconds=120))
    gpc._register_dist(RANK, SIZE, dist.GroupMember.WORLD, None, list(range(SIZE)), PM.GLOBAL)
    gpc.add_global_rank(PM.GLOBAL, RANK)
    gpc.init_parallel_groups()
    view = pgroups.Plan(SIZE, **plan_args).view(RANK)
    groups = []
    for parallel_mode, group in list(gpc._groups.items()):
        assert isinstance(parallel_mode, PM)
        ranks = gpc.get_ranks_in_group(parallel_mode)
        if parallel_mode is not PM.GLOBAL:
            assert ranks == view.members(parallel_mode.value), parallel_mode
            assert sorted(dist.get_process_group_ranks(group)) == sorted(ranks), parallel_mode
            groups.append(group)
        assert gpc.get_local_rank(parallel_mode) == ranks.index(RANK)
        value = torch.tensor([RANK], dtype=torch.int64)
        dist.all_reduce(value, group=group)
        assert int(value) == sum(ranks), parallel_mode
    assert groups and len({id(g) for g in groups}) == len(groups)  # one group object per mode
    gpc.destroy()  # Colossal-AI's own: every mode's group, then the default group
    assert not dist.is_initialized()
    for group in groups:
        with pytest.raises(Exception):
            dist.get_rank(group)


def test_unregister_restores_colossal_own_classes():
    colossal.unregister()
    assert not colossal.is_registered()
    for name in colossal.REGISTERED:
        cls = DIST_GROUP_INITIALIZER.get_module(name)
        assert cls.__name__ == name and cls.__module__.startswith(own.__name__ + "."), (name, cls.__module__)
    colossal.register()  # and again, Colossal-AI's context already imported
    assert DIST_GROUP_INITIALIZER.get_module("Initializer_2D") is colossal.REGISTERED["Initializer_2D"]
    colossal.unregister()
    assert DIST_GROUP_INITIALIZER.get_module("Initializer_2D") is own.Initializer_2D
