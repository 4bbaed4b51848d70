"""pgroups.megatron against megatron-core's own parallel_state (0.16.1) under mpirun on 8
ranks (gloo): for a dense and a MoE configuration, megatron-core's RankGenerator and its
initialize_model_parallel() give, rank for rank, the groups and answers of
pgroups.megatron's; a Megatron-style script using only parallel_state getters runs
unchanged on pgroups.megatron (an all-reduce per group)."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from torch_world import init_gloo  # noqa: E402

try:
    from megatron.core import parallel_state as ps
    from megatron.core.parallel_state import RankGenerator
    from megatron.core.process_groups_config import ProcessGroupCollection
except Exception as error:  # noqa: BLE001 - any failure to import means "not installed here"
    pytest.skip(f"megatron-core is not importable in this interpreter ({error}); "
                "python/requirements/torch2-nodeps.txt installs megatron-core==0.16.1 into the torch 2.x venv",
                allow_module_level=True)

import pgroups  # noqa: E402
from pgroups import megatron as mpu  # noqa: E402

RANK = MPI.COMM_WORLD.Get_rank()
SIZE = MPI.COMM_WORLD.Get_size()
init_gloo()
pytestmark = pytest.mark.skipif(SIZE != 8, reason="the cases are sized for 8 ranks")

CONFIGS = {
    "dense": dict(tensor_model_parallel_size=2, pipeline_model_parallel_size=2, context_parallel_size=2,
                  virtual_pipeline_model_parallel_size=2),
    "moe": dict(tensor_model_parallel_size=2, pipeline_model_parallel_size=2, expert_model_parallel_size=2,
                expert_tensor_parallel_size=1),
}

# (megatron-core getter of a group, its pgroups.megatron twin's name, keyword arguments)
GROUPS = [
    ("get_model_parallel_group", {}), ("get_tensor_model_parallel_group", {}),
    ("get_pipeline_model_parallel_group", {}), ("get_data_parallel_group", {}),
    ("get_data_parallel_group", {"with_context_parallel": True}), ("get_context_parallel_group", {}),
    ("get_embedding_group", {}), ("get_position_embedding_group", {}),
    ("get_tensor_and_data_parallel_group", {}), ("get_tensor_and_data_parallel_group", {"with_context_parallel": True}),
    ("get_tensor_and_context_parallel_group", {}), ("get_expert_model_parallel_group", {}),
    ("get_expert_tensor_parallel_group", {}), ("get_expert_tensor_and_model_parallel_group", {}),
    ("get_expert_tensor_model_pipeline_parallel_group", {}), ("get_expert_data_parallel_group", {}),
    ("get_data_parallel_group_gloo", {}),
]
ANSWERS = [
    ("get_tensor_model_parallel_world_size", {}), ("get_tensor_model_parallel_rank", {}),
    ("get_pipeline_model_parallel_world_size", {}), ("get_pipeline_model_parallel_rank", {}),
    ("get_data_parallel_world_size", {}), ("get_data_parallel_rank", {}),
    ("get_data_parallel_world_size", {"with_context_parallel": True}),
    ("get_data_parallel_rank", {"with_context_parallel": True}),
    ("get_context_parallel_world_size", {}), ("get_context_parallel_rank", {}),
    ("get_context_parallel_global_ranks", {}),
    ("get_tensor_and_context_parallel_world_size", {}), ("get_tensor_and_context_parallel_rank", {}),
    ("is_pipeline_first_stage", {}), ("is_pipeline_last_stage", {}),
    ("is_pipeline_first_stage", {"ignore_virtual": False, "vp_stage": 0}),
    ("is_pipeline_last_stage", {"ignore_virtual": False, "vp_stage": 0}),
    ("is_rank_in_embedding_group", {}), ("is_rank_in_position_embedding_group", {}),
    ("get_virtual_pipeline_model_parallel_world_size", {}), ("get_virtual_pipeline_model_parallel_rank", {}),
    ("get_tensor_model_parallel_src_rank", {}), ("get_model_parallel_src_rank", {}),
    ("get_data_parallel_src_rank", {}), ("get_data_parallel_src_rank", {"with_context_parallel": True}),
    ("get_pipeline_model_parallel_first_rank", {}), ("get_pipeline_model_parallel_last_rank", {}),
    ("get_pipeline_model_parallel_next_rank", {}), ("get_pipeline_model_parallel_prev_rank", {}),
    ("get_expert_model_parallel_world_size", {}), ("get_expert_model_parallel_rank", {}),
    ("get_expert_model_parallel_src_rank", {}),
    ("get_expert_tensor_parallel_world_size", {}), ("get_expert_tensor_parallel_rank", {}),
    ("get_expert_tensor_and_model_parallel_world_size", {}), ("get_expert_tensor_and_model_parallel_rank", {}),
    ("get_expert_data_parallel_world_size", {}), ("get_expert_data_parallel_rank", {}),
    ("model_parallel_is_initialized", {}),
]


def observe(module):
    """What a Megatron-style script asks: each group's ranks (an all-reduce of the members'
    ranks checks it) and every answer."""
    seen = {}
    for name, kwargs in GROUPS:
        try:
            group = getattr(module, name)(**kwargs)
        except (AssertionError, pgroups.StateError):  # megatron-core asserts, pgroups raises StateError
            group = None
        if group is None:  # a rank in no embedding group
            seen[(name, str(kwargs))] = None
            continue
        ranks = dist.get_process_group_ranks(group)
        value = torch.tensor([RANK], dtype=torch.int64)
        dist.all_reduce(value, group=group)
        assert int(value) == sum(ranks), name
        seen[(name, str(kwargs))] = ranks
    for name, kwargs in ANSWERS:
        seen[(name, str(kwargs))] = getattr(module, name)(**kwargs)
    return seen


@pytest.mark.parametrize("name", list(CONFIGS))
def test_pgroups_megatron_matches_megatron_core(name):
    config = CONFIGS[name]
    ps.initialize_model_parallel(**config)
    own = observe(ps)
    ps.destroy_model_parallel()
    mpu.initialize_model_parallel(**config)
    try:
        ours = observe(mpu)
        assert isinstance(mpu.get_process_group_collection(), ProcessGroupCollection)
    finally:
        mpu.destroy_model_parallel()
    for key in own:
        assert ours[key] == own[key], key


@pytest.mark.parametrize("name", list(CONFIGS))
def test_rank_generator_groups_are_pgroups_mesh_groups(name):
    config = CONFIGS[name]
    tp, pp = config["tensor_model_parallel_size"], config["pipeline_model_parallel_size"]
    cp, ep = config.get("context_parallel_size", 1), config.get("expert_model_parallel_size", 1)
    etp = config.get("expert_tensor_parallel_size") or tp
    order = "tp-cp-ep-dp-pp"
    dense = RankGenerator(tp=tp, ep=1, dp=SIZE // (tp * pp * cp), pp=pp, cp=cp, order=order)
    expert = RankGenerator(tp=etp, ep=ep, dp=SIZE // (etp * ep * pp), pp=pp, cp=1, order=order)
    mine = mpu._mesh_plan(order, dict(tp=tp, cp=cp, ep=1, dp=SIZE // (tp * pp * cp), pp=pp), mpu._DENSE)
    mine_expert = mpu._mesh_plan(order, dict(tp=etp, cp=1, ep=ep, dp=SIZE // (etp * ep * pp), pp=pp), mpu._EXPERT)
    for token in ("tp", "pp", "dp", "cp", "dp-cp", "tp-pp", "tp-dp", "tp-cp", "tp-dp-cp"):
        assert mine.groups(token) == dense.get_ranks(token), token
    for token in ("tp", "ep", "tp-ep", "tp-ep-pp", "dp"):
        assert mine_expert.groups(token) == expert.get_ranks(token), token
    assert mine.groups("pp") == expert.get_ranks("pp")  # why pgroups.megatron shares the pp groups


def test_unimplemented_argument_with_a_non_default_value_is_named():
    with pytest.raises(pgroups.ConfigError, match="does not implement use_sharp=True"):
        mpu.initialize_model_parallel(use_sharp=True)
    with pytest.raises(pgroups.ConfigError, match="not divisible by tensor_model_parallel_size 3"):
        mpu.initialize_model_parallel(tensor_model_parallel_size=3)
    assert not mpu.model_parallel_is_initialized()


def test_megatron_defaults_destroy_keeps_the_default_group_and_init_works_again():
    """Megatron's defaults (tp = pp = 1): the data parallel group is the whole world, as
    megatron-core's answers say; destroy_model_parallel() leaves torch's default group
    alone, so a second initialize_model_parallel() works."""
    ps.initialize_model_parallel()
    own = observe(ps)
    ps.destroy_model_parallel()
    for _ in range(2):
        mpu.initialize_model_parallel()
        try:
            ours = observe(mpu)
            value = torch.tensor([RANK], dtype=torch.int64)
            dist.all_reduce(value, group=mpu.get_data_parallel_group())
            assert int(value) == sum(range(SIZE))
        finally:
            mpu.destroy_model_parallel()
        for key in own:
            assert ours[key] == own[key], key
    value = torch.ones(1)
    dist.all_reduce(value)
    assert int(value) == SIZE
