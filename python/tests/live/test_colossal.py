"""pgroups.colossal under mpirun: every Colossal-AI initializer on gloo groups, each
group checked by an all-reduce of its members' global ranks."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from torch_world import init_gloo  # noqa: E402

import pgroups  # noqa: E402
from pgroups import ParallelMode  # noqa: E402
from pgroups import colossal  # noqa: E402

RANK = MPI.COMM_WORLD.Get_rank()
SIZE = MPI.COMM_WORLD.Get_size()
init_gloo()
pytestmark = pytest.mark.skipif(SIZE != 8, reason="the cases are sized for 8 ranks")


def check(result, expected_modes, plan):
    settings = result if isinstance(result, list) else [result]
    assert [s[4] for s in settings] == expected_modes
    for local_rank, group_world_size, group, ranks, mode in settings:
        assert ranks == plan.group_of(RANK, mode)
        assert local_rank == ranks.index(RANK) == dist.get_rank(group)
        assert group_world_size == len(ranks) == dist.get_world_size(group)
        value = torch.tensor([RANK], dtype=torch.int64)
        dist.all_reduce(value, group=group)
        assert int(value) == sum(ranks), mode


# (class, extra constructor arguments, dp, pp, tp, tensor mode, modes returned, a list?)
CASES = [
    (colossal.Initializer_Data, (), 2, 2, 2, None, [ParallelMode.DATA], False),
    (colossal.Initializer_Model, (), 2, 2, 2, None, [ParallelMode.MODEL], False),
    (colossal.Initializer_Pipeline, (), 2, 2, 2, None, [ParallelMode.PIPELINE], True),
    (colossal.Initializer_Tensor, (), 2, 2, 2, None, [ParallelMode.TENSOR], False),
    (colossal.Initializer_1D, (), 1, 2, 4, "1d", [ParallelMode.PARALLEL_1D], False),
    (colossal.Initializer_Sequence, (), 2, 2, 2, "sequence", [ParallelMode.SEQUENCE, ParallelMode.SEQUENCE_DP],
     True),
    (colossal.Initializer_Sequence_DP, (), 2, 2, 2, "sequence", [ParallelMode.SEQUENCE_DP], False),
    (colossal.Initializer_2D, (), 1, 2, 4, "2d", [ParallelMode.PARALLEL_2D_ROW, ParallelMode.PARALLEL_2D_COL], True),
    (colossal.Initializer_2p5D, (2,), 1, 1, 8, "2.5d",
     [ParallelMode.PARALLEL_2P5D_COL, ParallelMode.PARALLEL_2P5D_ROW, ParallelMode.PARALLEL_2P5D_DEP,
      ParallelMode.PARALLEL_2P5D_XZ], True),
    (colossal.Initializer_3D, (), 1, 1, 8, "3d",
     [ParallelMode.PARALLEL_3D_INPUT, ParallelMode.PARALLEL_3D_WEIGHT, ParallelMode.PARALLEL_3D_OUTPUT,
      ParallelMode.PARALLEL_3D_INPUT_X_WEIGHT, ParallelMode.PARALLEL_3D_OUTPUT_X_WEIGHT], True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0].__name__)
def test_initializer_returns_colossal_tuples_of_working_groups(case):
    cls, extra, dp, pp, tp, mode, modes, is_list = case
    initializer = cls(RANK, SIZE, None, dp, pp, tp, *extra)
    result = initializer.init_dist_group()
    assert isinstance(result, list) == is_list
    plan = pgroups.Plan(SIZE, pipeline=pp, tensor=tp, mode=mode, depth=extra[0] if extra else None)
    check(result, modes, plan)
    initializer.groups.destroy()


def test_the_issue_case_initializer_2d():
    row, col = colossal.Initializer_2D(RANK, SIZE, None, 1, 2, 4).init_dist_group()
    check([row, col], [ParallelMode.PARALLEL_2D_ROW, ParallelMode.PARALLEL_2D_COL],
          pgroups.Plan(8, pipeline=2, tensor=4, mode="2d"))


def test_sequence_dp_is_one_pipeline_stage_unless_legacy():
    documented = colossal.Initializer_Sequence_DP(RANK, SIZE, None, 2, 2, 2).init_dist_group()
    legacy = colossal.Initializer_Sequence_DP(RANK, SIZE, None, 2, 2, 2, legacy_sequence_dp=True).init_dist_group()
    stage = (RANK // 2) % 2
    assert documented[3] == [r for r in range(8) if (r // 2) % 2 == stage]
    assert legacy[3] == list(range(RANK // 4 * 4, RANK // 4 * 4 + 4))  # Colossal-AI's contiguous blocks
    value = torch.tensor([RANK], dtype=torch.int64)
    dist.all_reduce(value, group=legacy[2])
    assert int(value) == sum(legacy[3])


def test_bad_sizes_raise_config_error_on_every_rank():
    with pytest.raises(pgroups.ConfigError, match="tensor size 8 is not a perfect square"):
        colossal.Initializer_2D(RANK, SIZE, None, 1, 1, 8).init_dist_group()
    with pytest.raises(pgroups.ConfigError, match="data parallel size 3"):
        colossal.Initializer_Data(RANK, SIZE, None, 3, 2, 2).init_dist_group()


def _ranks_sum(group):
    value = torch.tensor([RANK], dtype=torch.int64)
    dist.all_reduce(value, group=group)
    return int(value)


def test_cpu_groups_on_a_gloo_default_group_are_the_process_groups():
    initializer = colossal.Initializer_Data(RANK, SIZE, None, SIZE, 1, 1)
    initializer.init_dist_group()
    try:
        assert colossal.cpu_groups_for(initializer.groups, initializer.modes) is None
    finally:
        initializer.groups.destroy()


def test_cpu_groups_of_a_non_gloo_default_group_are_gloo_and_go_with_the_context(monkeypatch):
    from pgroups import _torch_create

    # Only gloo exists here: the default group is taken as NCCL's where pgroups decides.
    monkeypatch.setattr(_torch_create, "default_backend", lambda: "nccl")
    initializer = colossal.Initializer_Data(RANK, SIZE, None, SIZE, 1, 1)  # DATA is the whole world
    initializer.init_dist_group()
    cpu = colossal.cpu_groups_for(initializer.groups, initializer.modes)
    group = cpu.get_group("data")
    assert group is not dist.group.WORLD and group is not initializer.groups.get_group("data")
    assert str(dist.get_backend(group)) == "gloo"
    assert _ranks_sum(group) == sum(range(SIZE))

    class Context:  # Colossal-AI's ParallelContext.destroy, as register() wraps it
        calls = []

        def destroy(self):
            self.calls.append(cpu.destroyed)

    Context.destroy = colossal._destroying_cpu_groups(Context.destroy)
    Context().destroy()
    assert Context.calls == [True]  # the cpu groups went first, then Colossal-AI's own destroy
    assert not cpu.is_initialized("data")
    colossal.destroy_cpu_groups()  # nothing left: does nothing
    initializer.groups.destroy()
    assert _ranks_sum(dist.group.WORLD) == sum(range(SIZE))
