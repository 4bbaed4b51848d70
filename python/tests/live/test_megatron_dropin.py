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
from pgroups._megatron_state import DENSE_KINDS, EXPERT_KINDS, mesh_plan  # noqa: E402

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
    mine = mesh_plan(order, dict(tp=tp, cp=cp, ep=1, dp=SIZE // (tp * pp * cp), pp=pp), DENSE_KINDS)
    mine_expert = mesh_plan(order, dict(tp=etp, cp=1, ep=ep, dp=SIZE // (etp * ep * pp), pp=pp), EXPERT_KINDS)
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


# megatron-core's own code on pgroups' groups -------------------------------------------------


def test_megatron_core_getters_answer_pgroups_groups_after_pgroups_initialize():
    """After pgroups.megatron.initialize_model_parallel, megatron-core's own parallel_state
    getters (which its layers read) hold pgroups' groups and give the answers its own
    initialize_model_parallel gives; ProcessGroupCollection.use_mpu_process_groups() works;
    pgroups' destroy leaves megatron-core uninitialized."""
    config = CONFIGS["dense"]
    ps.initialize_model_parallel(**config)
    own = observe(ps)
    ps.destroy_model_parallel()
    mpu.initialize_model_parallel(**config)
    try:
        seen = observe(ps)
        assert ps.get_tensor_model_parallel_group() is mpu.get_tensor_model_parallel_group()
        assert ps.get_data_parallel_group(with_context_parallel=True) is \
            mpu.get_data_parallel_group(with_context_parallel=True)
        collection = ProcessGroupCollection.use_mpu_process_groups()
        assert collection.tp is mpu.get_tensor_model_parallel_group()
        assert collection.pp is mpu.get_pipeline_model_parallel_group()
        assert dist.get_process_group_ranks(collection.dp_cp) == dist.get_process_group_ranks(
            mpu.get_data_parallel_group(with_context_parallel=True))
        mpu.set_tensor_model_parallel_world_size(1)  # pgroups' setter reaches megatron-core's getter
        assert ps.get_tensor_model_parallel_world_size() == 1
        mpu.set_tensor_model_parallel_world_size(None)
    finally:
        mpu.destroy_model_parallel()
    for key in own:
        assert seen[key] == own[key], key
    assert not ps.is_initialized() and not ps.model_parallel_is_initialized()
    with pytest.raises(AssertionError, match="not initialized"):
        ps.get_tensor_model_parallel_group()


def test_pgroups_initialize_refuses_megatron_core_initialized_by_itself_on_every_rank():
    ps.initialize_model_parallel(tensor_model_parallel_size=2)
    try:
        with pytest.raises(pgroups.StateError, match="megatron-core's parallel_state is already initialized"):
            mpu.initialize_model_parallel(tensor_model_parallel_size=2)
        assert not mpu.is_initialized()
    finally:
        ps.destroy_model_parallel()


def _full(*shape, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=torch.float64).float()


def test_megatron_core_layers_with_no_group_passed_shard_on_pgroups_tp_and_match_plain_math():
    """megatron-core's ColumnParallelLinear -> RowParallelLinear, VocabParallelEmbedding and
    a mapping (reduce_from_tensor_model_parallel_region), built and called without any
    group, on pgroups' tp=2 groups: each rank holds its shard (tp=2 halves the weights),
    and forward and backward equal one process's plain math (torch.nn.functional on the
    full weights)."""
    from megatron.core import ModelParallelConfig
    from megatron.core.tensor_parallel import ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding
    from megatron.core.tensor_parallel.mappings import reduce_from_tensor_model_parallel_region

    tp = 2
    mpu.initialize_model_parallel(tensor_model_parallel_size=tp)
    try:
        rank = ps.get_tensor_model_parallel_rank()
        assert rank == mpu.get_tensor_model_parallel_rank() == RANK % tp
        config = ModelParallelConfig(tensor_model_parallel_size=tp, use_cpu_initialization=True,
                                     params_dtype=torch.float32)
        hidden, inner, vocab = 4, 8, 16
        w1, w2, table = _full(inner, hidden, seed=1), _full(hidden, inner, seed=2), _full(vocab, hidden, seed=3)
        column = ColumnParallelLinear(hidden, inner, config=config, init_method=torch.nn.init.zeros_, bias=False,
                                      gather_output=False)
        row = RowParallelLinear(inner, hidden, config=config, init_method=torch.nn.init.zeros_, bias=False,
                                input_is_parallel=True, skip_bias_add=False)
        embedding = VocabParallelEmbedding(vocab, hidden, init_method=torch.nn.init.zeros_, config=config)
        # The shards megatron-core's layers hold on pgroups' tp group: half of each weight.
        assert tuple(column.weight.shape) == (inner // tp, hidden)
        assert tuple(row.weight.shape) == (hidden, inner // tp)
        assert tuple(embedding.weight.shape) == (vocab // tp, hidden)
        part, rows = inner // tp, vocab // tp
        with torch.no_grad():
            column.weight.copy_(w1[rank * part:(rank + 1) * part])
            row.weight.copy_(w2[:, rank * part:(rank + 1) * part])
            embedding.weight.copy_(table[rank * rows:(rank + 1) * rows])

        ids = torch.tensor([[0, 5, 9, 15]])
        x = _full(1, 4, hidden, seed=4).requires_grad_()
        hidden_states, _ = column(x)
        out, _ = row(torch.relu(hidden_states))
        looked_up = embedding(ids)
        # An all-reduce over the tp group the mapping finds itself (the gathers allocate on CUDA).
        summed = reduce_from_tensor_model_parallel_region(hidden_states.detach().sum(dim=-1))
        loss = (out * out).sum() + (looked_up * looked_up).sum()
        loss.backward()

        w1_, w2_, table_ = (t.clone().requires_grad_() for t in (w1, w2, table))
        x_ = x.detach().clone().requires_grad_()
        inner_ = torch.nn.functional.linear(x_, w1_)
        out_ = torch.nn.functional.linear(torch.relu(inner_), w2_)
        looked_up_ = torch.nn.functional.embedding(ids, table_)
        ((out_ * out_).sum() + (looked_up_ * looked_up_).sum()).backward()

        torch.testing.assert_close(out, out_)
        torch.testing.assert_close(looked_up, looked_up_)
        torch.testing.assert_close(summed, inner_.detach().sum(dim=-1))
        torch.testing.assert_close(x.grad, x_.grad)
        torch.testing.assert_close(column.weight.grad, w1_.grad[rank * part:(rank + 1) * part])
        torch.testing.assert_close(row.weight.grad, w2_.grad[:, rank * part:(rank + 1) * part])
        torch.testing.assert_close(embedding.weight.grad, table_.grad[rank * rows:(rank + 1) * rows])
    finally:
        mpu.destroy_model_parallel()


def test_initialize_destroy_initialize_beyond_the_defaults_keeps_the_default_group():
    """initialize -> destroy -> initialize at tp = pp = 1 and at tp = pp = 2, megatron-core's
    globals set and cleared each time, and the default group alive at the end."""
    for sizes in (dict(), dict(tensor_model_parallel_size=2, pipeline_model_parallel_size=2), dict()):
        for _ in range(2):
            mpu.initialize_model_parallel(**sizes)
            assert ps.get_tensor_model_parallel_world_size() == sizes.get("tensor_model_parallel_size", 1)
            value = torch.tensor([RANK], dtype=torch.int64)
            dist.all_reduce(value, group=ps.get_data_parallel_group())
            assert int(value) == sum(mpu._ranks("dense:dp", "data parallel"))
            mpu.destroy_model_parallel()
            assert not ps.is_initialized()
    value = torch.ones(1)
    dist.all_reduce(value)
    assert int(value) == SIZE


def test_megatron_core_own_destroy_call_destroys_pgroups_groups_never_the_default_group():
    """Code calling megatron-core's destroy_model_parallel (Megatron-LM's scripts do) while
    pgroups' groups are installed gets pgroups.megatron's: at tp = pp = 1 on gloo the data
    parallel gloo group is torch's default group, which megatron-core's own would destroy."""
    own = ps.destroy_model_parallel
    mpu.initialize_model_parallel()
    assert ps.get_data_parallel_group_gloo() is dist.GroupMember.WORLD
    ps.destroy_model_parallel()
    assert not mpu.is_initialized() and not ps.is_initialized()
    assert ps.destroy_model_parallel is own  # megatron-core's own is back
    value = torch.ones(1)
    dist.all_reduce(value)
    assert int(value) == SIZE
    mpu.initialize_model_parallel(tensor_model_parallel_size=2)
    mpu.destroy_model_parallel()
    assert ps.destroy_model_parallel is own
