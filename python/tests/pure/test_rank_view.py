"""Plan.view: the C++ per-rank view from Python (pgroups/layout/rank_view.hpp), at any size."""

import time

import pytest

import pgroups
from pgroups import Mesh, ParallelMode, Plan


def test_a_plan_of_two_to_the_forty_ranks_answers_at_once_for_any_rank():
    world = 2 ** 40
    plan = Plan(world, mesh=[("tp", 8), ("dp", 2 ** 30), ("pp", 128)], groups=["tp", "dp", "pp", "tp-dp", "embd"])
    start = time.perf_counter()
    last = plan.view(world - 1)
    assert last.size("tp") == 8 and last.local_rank("tp") == 7
    assert last.next_rank("tp") == world - 8 and last.previous_rank("tp") == world - 2
    assert last.members("tp") == list(range(world - 8, world))
    assert last.pipeline_stage == 127 and last.pipeline_stages == 128
    assert last.is_member("embd") and last.members("embd") == [world - 1 - 127 * 8 * 2 ** 30, world - 1]
    middle = plan.view(world // 2)
    assert not middle.is_member("embd")
    assert middle.partition_key("tp") == last.partition_key("tp")
    assert last.communicators() == {"kinds": 5, "distinct": 5, "singletons": 0, "created": 6}
    assert time.perf_counter() - start < 1.0  # nothing enumerates the world


def test_a_non_member_asking_a_partial_kind_gets_a_state_error_naming_kind_and_rank():
    plan = Plan(mesh=Mesh.from_order("tp-dp-pp", tp=2, dp=1, pp=4), groups=["tp", "pp", "embd"])
    view = plan.view(3)
    assert not view.is_member("embd")
    for query in (view.size, view.local_rank, view.members, view.next_rank, view.previous_rank, view.first_rank):
        with pytest.raises(pgroups.StateError, match=r"^rank 3 is in no group of kind embd: it is a partial kind"):
            query("embd")


def test_every_answer_of_every_rank_equals_the_plans_group_lists():
    plan = Plan(16, pipeline=2, tensor=4, mode="2d")
    for rank in range(16):
        view = plan.view(rank)
        for kind in plan.group_kinds:
            group = next(g for g in plan.groups(kind) if rank in g)
            assert view.members(kind) == group
            assert view.local_rank(kind) == group.index(rank)
            assert view.next_rank(kind) == group[(group.index(rank) + 1) % len(group)]
            assert view.seed(kind) == plan.seed(rank, kind)
        assert view.seed(ParallelMode.TENSOR) == plan.seed(rank, "tensor")


def test_equal_partitions_have_equal_keys_whichever_notation_made_them():
    legacy = Plan(8, pipeline=2, tensor=4, mode="sequence", legacy_sequence_dp=True).view(0)
    assert legacy.partition_key("sequence_dp") == legacy.partition_key("tensor")
    assert legacy.sharing()["sequence_dp"] == ("shared", "tensor")
    assert legacy.communicators()["distinct"] == 3
    embd = Plan(mesh=Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2), groups=["tp", "pp", "embd"]).view(0)
    assert embd.partition_key("embd") == embd.partition_key("pp")
    assert len({embd.partition_key("embd"), embd.partition_key("pp"), embd.partition_key("tp")}) == 2  # hashable
    # Keys of two plans over one world compare across them (pgroups.megatron's two plans).
    dense = Plan(mesh=Mesh.from_order("tp-dp", tp=2, dp=4), groups=["dp"]).view(0)
    expert = Plan(mesh=Mesh.from_order("tp-ep", tp=2, ep=4), groups=["ep"]).view(0)
    assert dense.partition_key("dp") == expert.partition_key("ep")


def test_flattened_dimensions_come_from_the_layout():
    view = Plan(mesh=Mesh.from_order("tp-cp-dp", tp=2, cp=2, dp=2), groups=["tp", "cp", "dp", "tp-cp", "tp-dp"]).view(0)
    assert view.dimensions() == [("dp", 2), ("cp", 2), ("tp", 2)]
    assert view.flattened_dims("tp-cp") == (1, 3)
    assert view.flattened_dims("tp-dp") is None


def test_a_kind_of_the_wrong_type_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="kind must be a group kind's name or a pgroups.ParallelMode, not int 3"):
        Plan(8, tensor=2).view(0).size(3)
