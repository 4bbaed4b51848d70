"""One set of per-rank queries against both front doors under mpirun: pgroups.ParallelContext
(MPI) and the torch result of pgroups.torch.create_groups (gloo) answer alike, members and
non-members of partial kinds alike, because both answer from the one C++ view (Plan.view)."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from torch_world import init_gloo  # noqa: E402

import pgroups  # noqa: E402
import pgroups.torch as pgt  # noqa: E402

RANK = MPI.COMM_WORLD.Get_rank()
SIZE = MPI.COMM_WORLD.Get_size()
init_gloo()

QUERIES = ("get_local_rank", "get_world_size", "get_ranks_in_group", "get_next_global_rank", "get_prev_global_rank",
           "is_first_rank", "is_last_rank", "get_seed")

# (ParallelContext's keywords, the same plan for torch): presets, a legacy sequence_dp, and
# meshes with Megatron's partial kinds (ranks of the middle stages are in no embd group).
PLANS = {
    "2d": dict(tensor=4, mode="2d"),
    "pipe_sequence_legacy": dict(pipeline=2, tensor=4, mode="sequence", legacy_sequence_dp=True),
    "mesh_pp4_embd": dict(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=1, pp=4),
                          groups=["tp", "pp", "tp-dp", "embd", "pos_embd"]),
    "mesh_pp2_embd": dict(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2),
                          groups=["tp", "dp", "pp", "embd", "pos_embd"]),
    # A dimension named after the keys the torch front door once used for itself.
    "mesh_named_world": dict(mesh=pgroups.Mesh({"world": 2, "singleton": 4}), groups=["world", "singleton"]),
}


def answers(front, kind):
    """Each query's answer, or the class of the error it raised."""
    out = {"is_member": front.is_member(kind)}
    for query in QUERIES:
        try:
            out[query] = getattr(front, query)(kind)
        except pgroups.Error as error:
            out[query] = (type(error).__name__, str(error))
    return out


@pytest.mark.parametrize("name", sorted(PLANS))
def test_parallel_context_and_torch_groups_answer_alike(name):
    keywords = PLANS[name]
    with pgroups.ParallelContext(**keywords) as context:
        plan = context.plan
        groups = pgt.create_groups(plan)
        try:
            assert groups.kinds == context.group_kinds
            view = plan.view(RANK)
            for kind in plan.group_kinds:
                mpi, torch_side = answers(context, kind), answers(groups, kind)
                assert mpi == torch_side, (kind, mpi, torch_side)
                assert mpi["is_member"] == view.is_member(kind)
                if not mpi["is_member"]:
                    # Every query but the seed's refuses, naming the kind and the rank.
                    for query in QUERIES[:-1]:
                        cls, message = mpi[query]
                        assert cls == "StateError" and f"rank {RANK} " in message and f"kind {kind}:" in message
                    with pytest.raises(pgroups.StateError, match=f"rank {RANK} is in no group of kind {kind}"):
                        groups.get_group(kind)
                    continue
                assert mpi["get_ranks_in_group"] == view.members(kind)
                # The torch group itself holds what the view says.
                group = groups.get_group(kind)
                assert dist.get_process_group_ranks(group) == view.members(kind) if hasattr(
                    dist, "get_process_group_ranks") else dist.get_world_size(group) == view.size(kind)
                assert dist.get_rank(group) == view.local_rank(kind)
            assert context.is_pipeline_first_stage() == groups.is_pipeline_first_stage()
            assert context.is_pipeline_last_stage() == groups.is_pipeline_last_stage()
            # One bill for both front doors, the C++ one.
            assert groups.communicators == context.communicators() == plan.communicators(RANK)
        finally:
            groups.destroy()


def test_a_mesh_dimension_named_world_gets_its_plans_groups_not_the_world():
    plan = pgroups.Plan(mesh=pgroups.Mesh({"world": 2, "singleton": SIZE // 2}), groups=["world", "singleton"])
    groups = pgt.create_groups(plan)
    try:
        assert dist.get_world_size(groups.get_group("world")) == 2
        assert dist.get_world_size(groups.get_group("singleton")) == SIZE // 2
        assert groups.get_group("world") is not dist.group.WORLD
        value = torch.tensor([RANK], dtype=torch.int64)
        dist.all_reduce(value, group=groups.get_group("world"))
        assert int(value) == sum(plan.view(RANK).members("world"))
    finally:
        groups.destroy()
