"""Colossal-AI's own legacy ParallelContext.init_parallel_groups(), unmodified, on
pgroups' registered initializers (pgroups.colossal.register()), against the same code on
Colossal-AI's own initializers: the same groups, local ranks, sizes and modes, the same
gpc-style answers and tensor-parallel environment, an all-reduce per group, and groups
its own destroy() loop destroys one by one. 8 ranks, gloo."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import colossal_legacy  # noqa: E402
from torch_world import init_gloo  # noqa: E402

legacy = colossal_legacy.load()
if legacy is None:
    pytest.skip("Colossal-AI is not installed in this interpreter (python/requirements/torch2-nodeps.txt installs "
                "colossalai==0.5.0 into the torch 2.x venv)", allow_module_level=True)

from colossalai.legacy.global_variables import tensor_parallel_env as env  # noqa: E402
from colossalai.legacy.registry import DIST_GROUP_INITIALIZER  # noqa: E402

from pgroups import colossal  # noqa: E402

PM = legacy.ParallelMode
RANK = MPI.COMM_WORLD.Get_rank()
SIZE = MPI.COMM_WORLD.Get_size()
init_gloo()
pytestmark = pytest.mark.skipif(SIZE != 8, reason="the cases are sized for 8 ranks")

CONFIGS = [
    dict(pipeline=2, tensor=dict(size=4, mode="2d")),
    dict(tensor=dict(size=8, mode="2.5d", depth=2)),
    dict(tensor=dict(size=8, mode="3d")),
    dict(pipeline=2, tensor=dict(size=2, mode="1d")),
    dict(pipeline=2, tensor=dict(size=2, mode="sequence")),
    dict(pipeline=4, tensor=dict(size=2)),
]


def fresh_context(parallel):
    """A new legacy ParallelContext (not the singleton) with the global group registered
    as its init_global_dist() does after init_process_group."""
    context = object.__new__(legacy.ParallelContext)
    legacy.ParallelContext.__init__(context)
    context.load_config(dict(parallel=parallel))
    context._register_dist(RANK, SIZE, dist.GroupMember.WORLD, None, list(range(SIZE)), PM.GLOBAL)
    context.add_global_rank(PM.GLOBAL, RANK)
    return context


def observe(context):
    """Everything a Colossal-AI program asks of the context, per mode, and a check of each
    group by an all-reduce of its members' global ranks."""
    seen = {}
    for mode in context._groups:
        group = context.get_group(mode)
        ranks = context.get_ranks_in_group(mode)
        value = torch.tensor([RANK], dtype=torch.int64)
        dist.all_reduce(value, group=group)
        assert int(value) == sum(ranks), mode
        assert isinstance(mode, PM)
        cpu = context.get_cpu_group(mode)
        seen[mode] = dict(
            local_rank=context.get_local_rank(mode), world_size=context.get_world_size(mode), ranks=ranks,
            group_ranks=sorted(dist.get_process_group_ranks(group)) if mode is not PM.GLOBAL else ranks,
            cpu_same=cpu is group, next=context.get_next_global_rank(mode), prev=context.get_prev_global_rank(mode),
            first=context.is_first_rank(mode), last=context.is_last_rank(mode))
    if PM.PIPELINE in context._groups:  # Colossal-AI's own answer needs the mode
        seen["pipeline"] = (context.is_pipeline_first_stage(), context.is_pipeline_last_stage())
    seen["sizes"] = (context.data_parallel_size, context.pipeline_parallel_size, context.tensor_parallel_size)
    seen["env"] = env.save()
    return seen


def destroy(context):
    """Colossal-AI's destroy(), less its destruction of the default group."""
    for mode, group in context._groups.items():
        if mode is not PM.GLOBAL:
            dist.destroy_process_group(group)
    context._groups.clear()


# pgroups' contexts stay alive until the last test destroys them: torch names a group
# made with use_local_synchronization after its ranks and the number of live groups, so
# a group of the same ranks made after a destroy can take a destroyed group's name and
# meet its stale store keys (torch 2.13; docs/using/python.md, "Colossal-AI's own code on pgroups' groups").
LIVE = []


def run(parallel, registered):
    env.load()
    if registered:
        colossal.register()
    try:
        context = fresh_context(parallel)
        context.init_parallel_groups()
        seen = observe(context)
        if registered:
            LIVE.append(context)
        else:
            destroy(context)
    finally:
        colossal.unregister()
    return seen


@pytest.mark.parametrize("parallel", CONFIGS, ids=lambda c: f"p{c.get('pipeline', 1)}_{c['tensor'].get('mode')}")
def test_init_parallel_groups_on_pgroups_matches_colossal(parallel):
    own = run(parallel, registered=False)
    ours = run(parallel, registered=True)
    assert list(ours) == list(own)  # the same modes, registered in the same order
    for key in own:
        assert ours[key] == own[key], key


def test_one_init_parallel_groups_agrees_once_for_all_its_initializers():
    from pgroups import _torch_create

    before = _torch_create.agreements_made()
    seen = run(CONFIGS[0], registered=True)  # data, model, pipeline, tensor and 2d: five initializers
    assert len(seen) > 5
    assert _torch_create.agreements_made() == before + 1


def test_register_replaces_and_unregister_restores_colossal_entries():
    own = DIST_GROUP_INITIALIZER.get_module("Initializer_2D")
    colossal.register()
    colossal.register()  # a second call changes nothing
    try:
        assert DIST_GROUP_INITIALIZER.get_module("Initializer_2D") is colossal.REGISTERED["Initializer_2D"]
        assert colossal.is_registered()
    finally:
        colossal.unregister()
    assert DIST_GROUP_INITIALIZER.get_module("Initializer_2D") is own
    assert not colossal.is_registered()


def test_registered_initializers_return_colossal_six_tuples():
    env.load()
    setting = colossal.REGISTERED["Initializer_Data"](RANK, SIZE, None, 4, 1, 2).init_dist_group()
    local_rank, world_size, group, cpu_group, ranks, mode = setting
    assert mode is PM.DATA and cpu_group is group and world_size == 4 and ranks[local_rank] == RANK
    settings = colossal.REGISTERED["Initializer_2D"](RANK, SIZE, None, 2, 1, 4).init_dist_group()
    assert [s[5] for s in settings] == [PM.PARALLEL_2D_ROW, PM.PARALLEL_2D_COL]
    assert env.summa_dim == 2
    LIVE.append(settings)
    LIVE.append(setting)


def test_registered_2d_with_a_conflicting_summa_dim_names_both():
    env.load()
    env.summa_dim = 3
    with pytest.raises(Exception, match="summa_dim is 3, but this 2D initializer needs 2"):
        colossal.REGISTERED["Initializer_2D"](RANK, SIZE, None, 2, 1, 4).init_dist_group()
    env.load()


def test_cpu_groups_of_a_non_gloo_world_are_gloo_and_destroyed_by_colossal_destroy(monkeypatch):
    """Colossal-AI's own destroy(), with pgroups registered, over a context whose default
    group is taken as NCCL's (only gloo exists here): the registered DATA initializer's
    cpu group is a gloo group of its own (DATA is the whole world at tp = pp = 1), and
    destroy() frees it with the process groups. Colossal-AI's destruction of the default
    group itself is stood in for, so the later tests keep their world."""
    from pgroups import _torch_create

    monkeypatch.setattr(_torch_create, "default_backend", lambda: "nccl")
    real_destroy = dist.destroy_process_group
    default_destroyed = []

    def destroy_process_group(group=None):
        if group is None:
            default_destroyed.append(True)
        else:
            real_destroy(group)

    env.load()
    colossal.register()
    try:
        assert legacy.ParallelContext.destroy.__wrapped__ is not None
        context = fresh_context(dict(tensor=dict(size=1)))
        context.init_parallel_groups()
        group, cpu = context.get_group(PM.DATA), context.get_cpu_group(PM.DATA)
        assert cpu is not group and cpu is not dist.group.WORLD and str(dist.get_backend(cpu)) == "gloo"
        value = torch.tensor([RANK], dtype=torch.int64)
        dist.all_reduce(value, group=cpu)
        assert int(value) == sum(range(SIZE))
        monkeypatch.setattr(dist, "destroy_process_group", destroy_process_group)
        context.destroy()
    finally:
        colossal.unregister()
    assert default_destroyed == [True]
    with pytest.raises(Exception):
        dist.get_rank(cpu)  # torch no longer knows the cpu group
    assert not hasattr(legacy.ParallelContext.destroy, "__wrapped__")  # unregister() put Colossal-AI's back


def test_colossal_destroy_loop_destroys_pgroups_groups_one_by_one():
    """Last: Colossal-AI's destroy() loop over every context made on pgroups' groups; each
    group is destroyed once, and afterwards torch no longer knows it."""
    groups = []
    for item in LIVE:
        if isinstance(item, legacy.ParallelContext):
            groups += [g for m, g in item._groups.items() if m is not PM.GLOBAL]
            destroy(item)
        else:
            for setting in item if isinstance(item, list) else [item]:
                groups.append(setting[2])
                dist.destroy_process_group(setting[2])
    assert groups and len({id(g) for g in groups}) == len(groups)
    for group in groups:
        with pytest.raises(Exception):
            dist.get_rank(group)
