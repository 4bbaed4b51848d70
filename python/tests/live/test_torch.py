"""pgroups.torch under mpirun: gloo process groups of a plan, agreed before creation."""

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


def check_groups(groups):
    for mode in groups.kinds:
        if groups.get_group(mode) is None:  # a partial kind this rank is not in
            assert not groups.plan.is_member(RANK, mode)
            continue
        ranks = groups.get_ranks_in_group(mode)
        group = groups.get_group(mode)
        assert dist.get_world_size(group) == len(ranks) == groups.get_world_size(mode)
        assert dist.get_rank(group) == groups.get_local_rank(mode)
        value = torch.tensor([RANK], dtype=torch.int64)
        dist.all_reduce(value, group=group)
        assert int(value) == sum(ranks), mode


def test_every_group_of_the_2d_plan_all_reduces_its_ranks():
    groups = pgt.create_groups(pipeline=2, tensor=4, mode="2d")
    try:
        assert groups.plan == pgroups.Plan(SIZE, pipeline=2, tensor=4, mode="2d")
        assert groups.modes == groups.plan.modes
        check_groups(groups)
        assert f"method={pgt.available_method()!r}" in repr(groups)
    finally:
        groups.destroy()


def test_method_is_the_fastest_this_torch_offers():
    expected = "new_group_local" if "use_local_synchronization" in dist.new_group.__code__.co_varnames \
        else "new_group"
    assert pgt.available_method("gloo") == expected


def test_a_subset_of_modes_from_a_plan():
    plan = pgroups.Plan(SIZE, tensor=2, mode="sequence")
    groups = pgt.create_groups(plan, modes=[pgroups.ParallelMode.SEQUENCE_DP, "sequence"])
    try:
        assert [m.value for m in groups.modes] == ["sequence_dp", "sequence"]
        check_groups(groups)
        with pytest.raises(pgroups.StateError, match="tensor"):
            groups.get_group("tensor")
    finally:
        groups.destroy()


def test_mismatch_raises_on_every_rank_before_any_group():
    pipeline = 2 if RANK == 0 else 1
    with pytest.raises(pgroups.MismatchError, match=r"ranks 0 hold .*pipeline=2.*ranks 1-\d+ hold"):
        pgt.create_groups(pipeline=pipeline)
    # Nobody was left inside new_group: the next creation works on every rank.
    groups = pgt.create_groups(tensor=2, mode="1d")
    check_groups(groups)
    groups.destroy()


def test_invalid_plan_raises_config_error_on_every_rank():
    with pytest.raises(pgroups.ConfigError, match="tensor size 8 is not a perfect square, required by mode 2d"):
        pgt.create_groups(tensor=8, mode="2d")


def test_plan_of_another_world_size_is_rejected_everywhere():
    with pytest.raises(pgroups.ConfigError, match=f"world size {SIZE * 2} is not torch.distributed's"):
        pgt.create_groups(pgroups.Plan(SIZE * 2))


def test_mode_missing_from_the_plan_is_a_state_error_everywhere():
    with pytest.raises(pgroups.StateError, match="pipe"):
        pgt.create_groups(pgroups.Plan(SIZE), modes=["pipe"])


@pytest.mark.skipif(not pgt.gloo_direct_available(), reason="this torch has no module-level group registry")
@pytest.mark.parametrize("plan_args", [dict(pipeline=2, tensor=4, mode="2d"), dict(tensor=8, mode="2.5d", depth=2)])
def test_gloo_direct_groups_work_like_new_group_ones(plan_args):
    groups = pgt.create_groups(method="gloo_direct", **plan_args)
    tensor_group = groups.get_group("tensor")
    try:
        assert "method='gloo_direct'" in repr(groups)
        assert groups.calls == len(groups.modes)  # one group per mode on this rank
        for mode in groups.modes:
            assert dist.get_backend(groups.get_group(mode)) == "gloo"
        check_groups(groups)
    finally:
        groups.destroy()
    # Destroyed groups are gone from torch's registry too.
    with pytest.raises(RuntimeError):
        dist.get_rank(tensor_group)


def test_gloo_direct_must_be_asked_for_and_backed():
    if pgt.gloo_direct_available():
        assert pgt.available_method("gloo") != "gloo_direct"
    with pytest.raises(pgroups.ConfigError, match="creation method 'nope' is unknown"):
        pgt.create_groups(method="nope")


@pytest.mark.parametrize("method", ["default", "gloo_direct"])
def test_mesh_plan_groups_by_token(method):
    if method == "gloo_direct" and not pgt.gloo_direct_available():
        pytest.skip("no gloo_direct here")
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=SIZE // 4, pp=2),
                        groups=["tp", "pp", "tp-dp", "embd"])
    groups = pgt.create_groups(plan, method=None if method == "default" else method)
    try:
        assert groups.kinds == ["tp", "pp", "tp-dp", "embd"]
        assert groups.get_group("dp-tp") is groups.get_group("tp-dp")
        assert (groups.get_group("embd") is None) == (not plan.is_member(RANK, "embd"))
        check_groups(groups)
    finally:
        groups.destroy()
