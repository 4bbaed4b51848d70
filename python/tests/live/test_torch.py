"""pgroups.torch under mpirun: gloo process groups of a plan, agreed before creation."""

import datetime
import inspect
import os
import re
import sys
import time

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from torch_world import CountingStore, init_gloo  # noqa: E402

import pgroups  # noqa: E402
import pgroups.torch as pgt
from pgroups import _torch_create  # noqa: E402

RANK = MPI.COMM_WORLD.Get_rank()
SIZE = MPI.COMM_WORLD.Get_size()
init_gloo()


def check_groups(groups):
    for mode in groups.kinds:
        if not groups.is_member(mode):  # a partial kind this rank is not in
            assert not groups.plan.is_member(RANK, mode)
            with pytest.raises(pgroups.StateError, match=f"^rank {RANK} is in no group of kind {mode}:"):
                groups.get_group(mode)
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


def test_a_rank_map_puts_every_group_on_the_mapped_ranks():
    # Mesh ranks 1 <-> 2 and 5 <-> 6 swapped: tp's groups are {0, 2}, {1, 3}, ...
    swap = [0, 2, 1, 3, 4, 6, 5, 7]
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2),
                        groups=["tp", "dp", "pp", "tp-dp"], rank_map=swap)
    assert plan.rank_map == swap
    groups = pgt.create_groups(plan)
    try:
        assert plan.group_of(0, "tp") == [0, 2]
        check_groups(groups)
        assert groups.get_ranks_in_group("tp") == plan.group_of(RANK, "tp")
    finally:
        groups.destroy()
    # With the sizes, and agreed: a rank given another map is refused on every rank.
    preset = pgt.create_groups(pipeline=2, tensor=2, rank_map=swap)
    try:
        assert preset.get_ranks_in_group("tensor") == pgroups.Plan(SIZE, pipeline=2, tensor=2, rank_map=swap).group_of(
            RANK, "tensor")
        check_groups(preset)
    finally:
        preset.destroy()
    with pytest.raises(pgroups.MismatchError):
        pgt.create_groups(pipeline=2, tensor=2, rank_map=swap if RANK else None)


def test_the_megatron_drop_in_builds_its_groups_over_a_rank_map():
    from pgroups import megatron as mpu

    swap = [0, 2, 1, 3, 4, 6, 5, 7]
    mpu.initialize_model_parallel(tensor_model_parallel_size=2, pipeline_model_parallel_size=2, rank_map=swap)
    try:
        plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-cp-ep-dp-pp", tp=2, cp=1, ep=1, dp=2, pp=2),
                            groups=["tp", "dp", "pp"], rank_map=swap)
        assert mpu.get_tensor_model_parallel_rank() == plan.local_rank(RANK, "tp")
        assert mpu.get_data_parallel_rank() == plan.local_rank(RANK, "dp")
        assert mpu.get_pipeline_model_parallel_first_rank() == plan.group_of(RANK, "pp")[0]
        for kind, group in (("tp", mpu.get_tensor_model_parallel_group()), ("dp", mpu.get_data_parallel_group())):
            value = torch.tensor([RANK], dtype=torch.int64)
            dist.all_reduce(value, group=group)
            assert int(value) == sum(plan.group_of(RANK, kind)), kind
    finally:
        mpu.destroy_model_parallel()


def test_a_rank_map_that_breaks_a_kinds_order_is_refused_on_every_rank():
    with pytest.raises(pgroups.ConfigError, match="rank map breaks the order of kind 'tp'"):
        pgt.create_groups(pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2),
                                       rank_map=[1, 0, 2, 3, 4, 5, 6, 7]))


def test_method_is_the_fastest_this_torch_offers():
    if "use_local_synchronization" in inspect.signature(dist.new_group).parameters:
        expected = "new_group_local"
    else:
        expected = "gloo_direct" if pgt.gloo_direct_available() else "new_group"
    assert pgt.available_method("gloo") == expected


def test_a_subset_of_modes_from_a_plan():
    plan = pgroups.Plan(SIZE, tensor=2, mode="sequence")
    groups = pgt.create_groups(plan, kinds=[pgroups.ParallelMode.SEQUENCE_DP, "sequence"])
    try:
        assert [m.value for m in groups.modes] == ["sequence_dp", "sequence"]
        check_groups(groups)
        with pytest.raises(pgroups.StateError, match="tensor"):
            groups.get_group("tensor")
    finally:
        groups.destroy()


def test_the_deprecated_modes_keyword_warns_and_creates_the_same_kinds():
    plan = pgroups.Plan(SIZE, tensor=2)
    with pytest.warns(DeprecationWarning, match=r"create_groups\(modes=\.\.\.\) is deprecated: use kinds="):
        groups = pgt.create_groups(plan, modes=["tensor"])
    try:
        assert groups.kinds == ["tensor"]
        check_groups(groups)
    finally:
        groups.destroy()


def test_mismatch_raises_on_every_rank_before_any_group():
    pipeline = 2 if RANK == 0 else 1
    with pytest.raises(pgroups.MismatchError, match=rf"^configuration mismatch across {SIZE} ranks: rank 0 holds "
                                                    rf"'world_size={SIZE} pipeline=2 .*'; ranks 1-{SIZE - 1} hold"):
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
        pgt.create_groups(pgroups.Plan(SIZE), kinds=["pipe"])


@pytest.mark.skipif(not pgt.gloo_direct_available(), reason="this torch has no module-level group registry")
@pytest.mark.parametrize("plan_args", [dict(pipeline=2, tensor=4, mode="2d"), dict(tensor=8, mode="2.5d", depth=2)])
def test_gloo_direct_groups_work_like_new_group_ones(plan_args):
    groups = pgt.create_groups(method="gloo_direct", **plan_args)
    tensor_group = groups.get_group("2d_row" if plan_args["mode"] == "2d" else "2p5d_row")
    try:
        assert "method='gloo_direct'" in repr(groups)
        # One group per distinct kind on this rank; global is the default group, not created.
        assert groups.calls <= len(groups.modes) - 1
        for mode in groups.modes:
            assert dist.get_backend(groups.get_group(mode)) == "gloo"
        assert groups.get_group("global") is dist.group.WORLD
        check_groups(groups)
    finally:
        groups.destroy()
    # Destroyed groups are gone from torch's registry too; the default group stays.
    with pytest.raises(RuntimeError):
        dist.get_rank(tensor_group)


def test_gloo_direct_is_never_chosen_for_another_backend_and_unknown_methods_are_refused():
    assert pgt.available_method("mpi") != "gloo_direct"
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
        assert groups.is_member("embd") == plan.is_member(RANK, "embd")
        check_groups(groups)
    finally:
        groups.destroy()


def test_kinds_of_one_partition_share_one_group_and_the_world_is_the_default_group():
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-cp-ep-dp", tp=2, cp=1, ep=1, dp=SIZE // 2),
                        groups=["tp", "cp", "ep", "dp", "tp-cp", "dp-cp", "tp-dp"])
    groups = pgt.create_groups(plan)
    assert groups.get_group("tp-cp") is groups.get_group("tp")
    assert groups.get_group("dp-cp") is groups.get_group("dp")
    assert groups.get_group("tp-dp") is dist.group.WORLD
    assert groups.get_group("cp") is groups.get_group("ep")  # one-rank groups: one partition too
    assert dist.get_world_size(groups.get_group("cp")) == 1
    assert groups.shared_kinds("tp") == ["tp", "tp-cp"]
    # The C++ bill: the world (the default group here), tp and dp created with a collective;
    # cp and ep by this rank alone; tp-dp is the world.
    assert groups.communicators == {"kinds": 7, "distinct": 3, "singletons": 2, "created": 3}
    assert groups.communicators == plan.communicators(RANK)
    check_groups(groups)
    # Colossal-AI's destroy loop, kind by kind: the shared group goes once, the default never.
    for kind in plan.group_kinds:
        groups.destroy_group(kind)
    value = torch.ones(1)
    dist.all_reduce(value)
    assert int(value) == SIZE


def test_share_false_gives_every_kind_its_own_group():
    plan = pgroups.Plan(SIZE, tensor=2, mode="1d")
    groups = pgt.create_groups(plan, share=False)
    try:
        assert groups.get_group("tensor") is not groups.get_group("1d")
        assert groups.get_group("global") is not dist.group.WORLD
        assert groups.communicators["created"] == len(plan.group_kinds)
        check_groups(groups)
    finally:
        groups.destroy()
    shared = pgt.create_groups(plan)
    try:
        assert shared.get_group("tensor") is shared.get_group("1d")
        assert shared.get_group("global") is dist.group.WORLD
        assert "share=True" in repr(shared)
    finally:
        shared.destroy()


def test_group_desc_names_the_kinds_where_torch_has_it():
    if "group_desc" not in inspect.signature(dist.new_group).parameters:
        pytest.skip(f"torch {torch.__version__} has no group_desc")
    groups = pgt.create_groups(pgroups.Plan(SIZE, tensor=2, mode="1d"))
    try:
        assert groups.get_group("1d").group_desc == "pgroups:model+tensor+1d"  # pipeline 1: model is tensor
    finally:
        groups.destroy()


def test_the_per_rank_api_answers_what_parallel_context_answers():
    plan = pgroups.Plan(SIZE, pipeline=2, tensor=2)
    groups = pgt.create_groups(plan)
    try:
        pipe = plan.group_of(RANK, "pipe")
        here = pipe.index(RANK)
        assert groups.get_global_rank() == RANK
        assert groups.get_next_global_rank("pipe") == pipe[(here + 1) % len(pipe)]
        assert groups.get_prev_global_rank("pipe") == pipe[here - 1]
        assert groups.is_first_rank("pipe") == (here == 0)
        assert groups.is_last_rank("pipe") == (here == len(pipe) - 1)
        assert groups.is_pipeline_first_stage() == (plan.coordinates(RANK)["pipe"] == 0)
        assert groups.is_pipeline_last_stage() == (plan.coordinates(RANK)["pipe"] == 1)
        groups.set_virtual_pipeline_parallel_size(2)
        groups.set_virtual_pipeline_parallel_rank(1)
        assert not groups.is_pipeline_first_stage()
        assert groups.is_pipeline_first_stage(ignore_virtual=True) == (plan.coordinates(RANK)["pipe"] == 0)
        with pytest.raises(pgroups.ConfigError, match="virtual pipeline rank 2 is invalid"):
            groups.set_virtual_pipeline_parallel_rank(2)
        assert groups.get_seed("tensor") == plan.seed(RANK, "tensor")
        assert groups.seeds[pgroups.ParallelMode.TENSOR] == plan.seed(RANK, "tensor")
        assert groups.is_member("tensor") and groups.is_initialized("pipe") and not groups.is_initialized("2d_row")
        assert (groups.data_parallel_size, groups.pipeline_parallel_size, groups.tensor_parallel_size) == \
            (SIZE // 4, 2, 2)
        assert groups.get_cpu_group("tensor") is groups.get_group("tensor")
    finally:
        groups.destroy()


def test_a_type_error_on_one_rank_raises_on_every_rank():
    tensor = "2" if RANK == SIZE - 1 else 2
    # The same text and class on every rank, the erring one too, as on MPI.
    with pytest.raises(TypeError, match=f"^rank {SIZE - 1} hit before the configuration agreement: tensor must be "
                                        r"an int, not '2' \(str\)$"):
        pgt.create_groups(tensor=tensor)


@pytest.mark.parametrize("bad", [True, "5", [5]])
def test_a_timeout_of_another_type_is_refused_everywhere(bad):
    with pytest.raises(TypeError, match="timeout must be a number of seconds or a datetime.timedelta"):
        pgt.create_groups(tensor=2, timeout=bad)


def test_timeouts_are_seconds_or_timedeltas():
    for timeout in (30, 30.5, datetime.timedelta(seconds=30), 0):
        groups = pgt.create_groups(pgroups.Plan(SIZE, tensor=2), timeout=timeout)
        check_groups(groups)
        groups.destroy()


def test_a_method_this_torch_lacks_is_a_config_error_naming_the_version():
    lacking = next(m for m in pgt.METHODS if m not in pgt.methods_available())
    message = f"'{lacking}' is not in torch {torch.__version__}: it has "
    with pytest.raises(pgroups.ConfigError, match=re.escape(message)):
        pgt.create_groups(tensor=2, method=lacking)
    with pytest.raises(pgroups.ConfigError, match="'split_group' needs the nccl backend|'split_group' is not in"):
        pgt.create_groups(tensor=2, method="split_group")


def test_a_late_rank_ends_every_rank_within_the_timeout():
    late = SIZE - 1
    MPI.COMM_WORLD.Barrier()
    start = time.monotonic()
    if RANK == late:
        # Late by an event, not a guessed sleep: it arrives once every other rank has
        # timed out and said so.
        for other in range(SIZE - 1):
            MPI.COMM_WORLD.recv(source=other, tag=30)
        arrived = time.monotonic()
        with pytest.raises(pgroups.TimeoutError, match="stopped waiting at the configuration agreement before this "
                                                       r"rank arrived \(step 'agreement'"):
            pgt.create_groups(tensor=2, timeout=2)
        assert time.monotonic() - arrived < 3
    else:
        with pytest.raises(pgroups.TimeoutError,
                           match=rf"^timed out after 2 s waiting for all ranks at the configuration agreement "
                                 rf"\(step 'agreement', rank {RANK} of {SIZE}\): rank {late} did not arrive$"):
            pgt.create_groups(tensor=2, timeout=2)
        assert time.monotonic() - start < 2 + 3
        MPI.COMM_WORLD.send(True, dest=late, tag=30)
    MPI.COMM_WORLD.Barrier()
    groups = pgt.create_groups(tensor=2, timeout=30)  # the next creation works everywhere
    check_groups(groups)
    groups.destroy()


def test_device_mesh_before_torch_2_4_is_a_clear_config_error():
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    if (major, minor) >= (2, 4):
        pytest.skip("torch >= 2.4 has DeviceMesh.from_group (tested under torchrun)")
    with pytest.raises(pgroups.ConfigError, match=rf"needs torch >= 2.4 .*torch {re.escape(torch.__version__)} is"):
        pgt.device_mesh(pgroups.Plan(SIZE, tensor=2))


def _bad_values():
    from hypothesis import strategies as st

    return st.one_of(st.booleans(), st.floats(allow_nan=False), st.text(max_size=3), st.none(),
                     st.lists(st.integers(), max_size=2))


def test_sizes_and_flags_of_other_types_raise_type_errors_on_every_rank():
    hypothesis = pytest.importorskip("hypothesis")

    # derandomize: every rank draws the same values, so each call stays collective.
    @hypothesis.settings(derandomize=True, max_examples=20, deadline=None, database=None)
    @hypothesis.given(value=_bad_values(), argument=hypothesis.strategies.sampled_from(["pipeline", "tensor", "share"]))
    def check(value, argument):
        if argument == "share" and isinstance(value, bool):
            return  # a bool is a valid share
        with pytest.raises(TypeError, match=f"{argument} must be an? (int|bool)"):
            pgt.create_groups(**{argument: value})

    check()


def test_modes_as_a_bare_string_is_refused_everywhere():
    with pytest.raises(TypeError, match="kinds must be a list of kinds, not 'tensor'"):
        pgt.create_groups(kinds="tensor")


def test_a_kind_listed_twice_is_refused_everywhere():
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp", tp=2, dp=SIZE // 2), groups=["tp", "tp-dp"])
    with pytest.raises(pgroups.ConfigError, match="kinds lists the group kind 'tp-dp' twice"):
        pgt.create_groups(plan, kinds=["tp-dp", "dp-tp"])


def test_ranks_may_hold_different_timeouts():
    groups = pgt.create_groups(tensor=2, timeout=30 + RANK)
    check_groups(groups)
    groups.destroy()


def _all_reduce_ranks(group):
    value = torch.tensor([RANK], dtype=torch.int64)
    dist.all_reduce(value, group=group)
    return int(value)


def test_megatron_defaults_destroy_keeps_the_default_group_and_init_works_again():
    from pgroups import megatron as mpu

    for _ in range(2):  # init, destroy, init again
        mpu.initialize_model_parallel()  # tp = pp = 1: the data parallel group is the whole world
        assert mpu.get_data_parallel_group() is dist.group.WORLD
        assert _all_reduce_ranks(mpu.get_data_parallel_group()) == sum(range(SIZE))
        mpu.destroy_model_parallel()
        assert not mpu.is_initialized()
        assert _all_reduce_ranks(dist.group.WORLD) == sum(range(SIZE))


def test_torch_groups_destroy_never_destroys_the_default_group():
    for share in (True, False):
        groups = pgt.create_groups(pgroups.Plan(SIZE, tensor=2), share=share)
        groups.destroy()
        groups.destroy()  # a second call does nothing
        assert _all_reduce_ranks(dist.group.WORLD) == sum(range(SIZE))


@pytest.fixture
def nccl_default(monkeypatch):
    """The default group taken as NCCL's where pgroups decides from its backend (only gloo
    exists on these CPU machines): the decisions of an NCCL world, on real gloo groups."""
    monkeypatch.setattr(_torch_create, "default_backend", lambda: "nccl")
    return dist.get_backend


def test_a_whole_world_kind_in_the_default_groups_backend_is_the_default_group():
    groups = pgt.create_groups(pgroups.Plan(SIZE, tensor=2), backend="gloo")
    try:
        assert groups.get_group("global") is dist.group.WORLD
    finally:
        groups.destroy()


def test_a_whole_world_kind_in_another_backend_is_a_new_group_of_it(nccl_default):
    plan = pgroups.Plan(SIZE, tensor=2, mode="1d")
    groups = pgt.create_groups(plan, backend="gloo")
    try:
        world = groups.get_group("global")
        assert world is not dist.group.WORLD
        assert str(nccl_default(world)) == "gloo"
        assert _all_reduce_ranks(world) == sum(range(SIZE))
        assert groups.get_cpu_group("global") is world
        assert groups.get_group("tensor") is groups.get_group("1d")  # other kinds still share
        check_groups(groups)
    finally:
        groups.destroy()
    assert _all_reduce_ranks(dist.group.WORLD) == sum(range(SIZE))


def test_megatron_gloo_groups_are_gloo_where_the_default_group_is_not(nccl_default):
    from pgroups import megatron as mpu

    for _ in range(2):  # init, destroy, init again
        mpu.initialize_model_parallel()
        try:
            gloo = mpu.get_data_parallel_group_gloo()
            assert gloo is not dist.group.WORLD
            assert str(nccl_default(gloo)) == "gloo"
            assert _all_reduce_ranks(gloo) == sum(range(SIZE))
            assert str(nccl_default(mpu.get_expert_data_parallel_group_gloo())) == "gloo"
        finally:
            mpu.destroy_model_parallel()
        assert _all_reduce_ranks(dist.group.WORLD) == sum(range(SIZE))


def _store_ops(create):
    """The default store's operations on this rank during ``create()``, and what it made."""
    from torch.distributed import distributed_c10d as c10d

    default = c10d._get_default_group()
    backend, store = c10d._world.pg_map[default]
    counter = CountingStore(store)
    c10d._world.pg_map[default] = (backend, counter)
    try:
        made = create()
    finally:
        c10d._world.pg_map[default] = (backend, store)
    return counter.ops, made


@pytest.mark.skipif(not hasattr(dist.TCPStore, "multi_get"), reason="torch 1.x stores read one key at a time")
def test_creation_costs_four_store_operations_per_agreement_and_three_per_gloo_group():
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=SIZE // 4, pp=2))
    ops, groups = _store_ops(lambda: pgt.create_groups(plan))
    try:
        check_groups(groups)
        # The agreement: 4 (5 on the rank that opens the gate); each group: gloo's set, one
        # wait and one read of every member's address. A plain new_group costs 1 + 2n.
        assert ops <= 5 + 3 * 3, ops
        loop_ops = sum(1 + 2 * plan.group_size(kind) for kind in plan.group_kinds)
        assert ops < loop_ops
    finally:
        groups.destroy()


@pytest.mark.skipif(not hasattr(dist.TCPStore, "multi_get"), reason="torch 1.x stores read one key at a time")
def test_device_mesh_agrees_once():
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=SIZE // 4, pp=2))
    before = _torch_create.agreements_made()
    ops, mesh = _store_ops(lambda: pgt.device_mesh(plan, "cpu"))
    try:
        assert _torch_create.agreements_made() == before + 1
        assert ops <= 5 + 3 * 3, ops
    finally:
        for groups in pgt.mesh_groups(mesh):
            groups.destroy()
