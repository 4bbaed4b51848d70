"""pgroups.ParallelContext under mpirun: real mpi4py communicators on the context's handles.

Every rank runs every test in the same order (each test is collective). Works on any
world size divisible by 4; the issue's case (pipeline 2, tensor 4, 2d) needs 8 ranks.
"""

import gc
import threading

import pytest
from mpi4py import MPI

import pgroups
from pgroups import ParallelContext, ParallelMode

WORLD = MPI.COMM_WORLD
RANK = WORLD.Get_rank()
SIZE = WORLD.Get_size()


def plan_args():
    return dict(pipeline=2, tensor=4, mode="2d") if SIZE % 8 == 0 else dict(pipeline=1, tensor=4, mode="2d")


def check_every_group(ctx, world_rank=RANK):
    for mode in ctx.modes:
        comm = ctx.get_group(mode)
        assert isinstance(comm, MPI.Intracomm)
        ranks = ctx.get_ranks_in_group(mode)
        assert comm.Get_size() == ctx.get_world_size(mode) == len(ranks)
        assert comm.Get_rank() == ctx.get_local_rank(mode)
        assert ranks[ctx.get_local_rank(mode)] == world_rank
        # The communicator really holds those ranks: the sum of their global ranks.
        assert comm.allreduce(world_rank, op=MPI.SUM) == sum(ranks), mode
        assert comm.allgather(world_rank) == ranks, mode


@pytest.mark.parametrize("strategy", [None, "create_group", "comm_split", "comm_create", "per_group"])
def test_all_reduce_over_each_group_agrees_with_its_ranks(strategy):
    with ParallelContext(**plan_args(), strategy=strategy) as ctx:
        assert ctx.strategy == (strategy or "create_group")
        assert ctx.plan == pgroups.Plan(SIZE, **plan_args())
        assert ctx.modes == ctx.plan.modes
        check_every_group(ctx)


def test_strategy_split_is_deprecated_and_runs_the_default():
    with pytest.warns(DeprecationWarning, match=r"strategy 'split' is deprecated: it runs MPI_Comm_create_group"):
        ctx = ParallelContext(**plan_args(), strategy="split")
    with ctx:
        assert ctx.strategy == "create_group"
        check_every_group(ctx)


def test_get_group_returns_the_same_communicator_not_a_copy():
    with ParallelContext(**plan_args()) as ctx:
        a = ctx.get_group(ParallelMode.PARALLEL_2D_ROW)
        b = ctx.get_group("2d_row")
        assert MPI.Comm.Compare(a, b) == MPI.IDENT
        assert MPI._handleof(a) == MPI._handleof(b)
        assert MPI._handleof(ctx.get_cpu_group("2d_row")) == MPI._handleof(a)
        assert MPI.Comm.Compare(ctx.get_group("global"), WORLD) == MPI.CONGRUENT  # a duplicate of the world
        # Dropping the Python objects frees nothing: the context owns the handles.
        del a, b
        gc.collect()
        assert ctx.get_group("2d_row").allreduce(1) == 2


def test_colossal_ai_queries():
    with ParallelContext(**plan_args()) as ctx:
        plan = ctx.plan
        assert ctx.get_global_rank() == RANK
        assert ctx.data_parallel_size == plan.data_parallel_size
        assert ctx.pipeline_parallel_size == plan.pipeline_size
        assert ctx.tensor_parallel_size == 4
        for mode in ctx.modes:
            ranks = plan.group_of(RANK, mode)
            local = ranks.index(RANK)
            assert ctx.get_next_global_rank(mode) == ranks[(local + 1) % len(ranks)]
            assert ctx.get_prev_global_rank(mode) == ranks[(local - 1) % len(ranks)]
            assert ctx.is_first_rank(mode) == (local == 0)
            assert ctx.is_last_rank(mode) == (local == len(ranks) - 1)
        stage = plan.coordinates(RANK)["pipe"]
        assert ctx.is_pipeline_first_stage() == (stage == 0)
        assert ctx.is_pipeline_last_stage() == (stage == plan.pipeline_size - 1)
        assert ctx.get_seed("data") == 1024
        assert ctx.get_seed("tensor") == plan.seed(RANK, "tensor")
        assert ctx.seeds[ParallelMode.TENSOR] == plan.seed(RANK, "tensor")
        assert ctx.num_processes_on_current_node == SIZE
        assert 0 <= ctx.device < SIZE
        assert ctx.creation_seconds("tensor") >= 0.0
        assert "ParallelContext(Plan(" in repr(ctx) and "live" in repr(ctx)


def test_virtual_pipeline():
    with ParallelContext(**plan_args()) as ctx:
        first = ctx.is_pipeline_first_stage()
        ctx.set_virtual_pipeline_parallel_size(2)
        ctx.set_virtual_pipeline_parallel_rank(1)
        assert ctx.virtual_pipeline_parallel_size == 2 and ctx.virtual_pipeline_parallel_rank == 1
        assert ctx.is_pipeline_first_stage() is False
        assert ctx.is_pipeline_first_stage(ignore_virtual=True) == first
        with pytest.raises(pgroups.ConfigError, match=r"^virtual pipeline size 0 is invalid: it must be a positive integer$"):
            ctx.set_virtual_pipeline_parallel_size(0)


def test_destroy_frees_every_group_and_later_use_is_a_state_error():
    ctx = ParallelContext(**plan_args())
    with ctx:
        pass
    assert ctx.modes == [] and not ctx.is_initialized("tensor")
    assert "destroyed" in repr(ctx)
    with pytest.raises(pgroups.StateError, match="tensor"):
        ctx.get_group("tensor")
    ctx.destroy()  # a second call does nothing
    assert ctx.plan.world_size == SIZE  # the plan outlives the groups


def test_config_file_and_explicit_arguments(write_config):
    path = write_config(f"config_{RANK}.py", "parallel = dict(pipeline=1, tensor=dict(size=2, mode='1d'))\n")
    with ParallelContext(config=path) as ctx:
        assert ctx.tensor_parallel_size == 2 and ParallelMode.PARALLEL_1D in ctx.modes
        check_every_group(ctx)
    with ParallelContext(config=path, tensor=4) as ctx:
        assert ctx.tensor_parallel_size == 4


def test_timeout_is_in_seconds():
    with ParallelContext(timeout=30) as ctx:
        assert ctx.timeout == 30.0
    with pytest.raises(pgroups.ConfigError, match="timeout"):
        ParallelContext(timeout=-1)


def test_on_a_sub_communicator():
    half = WORLD.Split(RANK % 2, RANK)
    try:
        with ParallelContext(tensor=2, comm=half) as ctx:
            assert ctx.world_size == SIZE // 2
            assert ctx.get_global_rank() == half.Get_rank()
            check_every_group(ctx, world_rank=half.Get_rank())
    finally:
        half.Free()


def test_mismatch_raises_on_every_rank():
    pipeline = 2 if RANK == 0 else 1
    with pytest.raises(pgroups.MismatchError, match="mismatch"):
        ParallelContext(pipeline=pipeline, timeout=60)


def test_invalid_plan_raises_the_same_config_error_on_every_rank():
    with pytest.raises(pgroups.ConfigError, match="tensor size 2 is not a perfect square, required by mode 2d"):
        ParallelContext(tensor=2, mode="2d", timeout=60)
    # Nothing is left half-built: the next context works.
    with ParallelContext(**plan_args()) as ctx:
        check_every_group(ctx)


@pytest.mark.skipif(MPI.Query_thread() != MPI.THREAD_MULTIPLE, reason="needs MPI_THREAD_MULTIPLE")
def test_gil_is_released_while_ranks_wait():
    # Rank 1 enters construction only after rank 0's helper thread tells it to, and that
    # thread runs while rank 0's main thread is inside construction: were the GIL held
    # there, rank 1 would never come and rank 0 would time out.
    side = WORLD.Dup()
    try:
        if RANK == 0:
            timer = threading.Timer(0.3, lambda: side.send("go", dest=1, tag=7))
            timer.start()
            with ParallelContext(timeout=30) as ctx:
                assert ctx.get_group("global").allreduce(1) == SIZE
            timer.join()
        else:
            if RANK == 1:
                assert side.recv(source=0, tag=7) == "go"
            with ParallelContext(timeout=30) as ctx:
                assert ctx.get_group("global").allreduce(1) == SIZE
    finally:
        side.Free()


def test_named_mesh_groups_by_token():
    mesh = pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=SIZE // 4, pp=2)
    with ParallelContext(mesh=mesh, groups=["tp", "dp", "pp", "tp-dp", "embd"]) as ctx:
        assert ctx.group_kinds == ["tp", "dp", "pp", "tp-dp", "embd"]
        assert ctx.modes == []
        plan = ctx.plan
        for kind in ctx.group_kinds:
            if not ctx.is_member(kind):
                assert kind == "embd" and not plan.is_member(RANK, kind)
                with pytest.raises(pgroups.StateError, match=f"^rank {RANK} is in no group of kind embd: it is a partial "
                                                             r"kind, and this rank has no communicator of it \(ask "
                                                             r"is_member first\)$"):
                    ctx.get_group(kind)
                continue
            comm = ctx.get_group(kind)
            ranks = ctx.get_ranks_in_group(kind)
            assert ranks == plan.group_of(RANK, kind)
            assert comm.Get_rank() == ctx.get_local_rank(kind) == ranks.index(RANK)
            assert comm.allreduce(RANK) == sum(ranks), kind
        # A token names its dimensions in any order: the same communicator.
        assert MPI._handleof(ctx.get_group("dp-tp")) == MPI._handleof(ctx.get_group("tp-dp"))
        assert ctx.is_pipeline_first_stage() == (plan.coordinates(RANK)["pp"] == 0)


def _answers(ctx, kind):
    if not ctx.is_member(kind):
        return None
    return (ctx.get_local_rank(kind), ctx.get_world_size(kind), MPI._handleof(ctx.get_group(kind)),
            MPI._handleof(ctx.get_cpu_group(kind)), ctx.get_ranks_in_group(kind), ctx.get_next_global_rank(kind),
            ctx.get_prev_global_rank(kind), ctx.is_first_rank(kind), ctx.is_last_rank(kind), ctx.get_seed(kind),
            ctx.creation_seconds(kind))


@pytest.mark.parametrize("layout", ["preset", "mesh"])
def test_a_kind_handle_answers_every_query_as_the_name_does(layout):
    if layout == "preset":
        args = plan_args()
    else:
        args = dict(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=SIZE // 4, pp=2),
                    groups=["tp", "dp", "pp", "tp-dp", "embd"])
    with ParallelContext(**args) as ctx:
        for name in ctx.group_kinds:
            handle = ctx.kind(name)
            assert handle.name == name and handle == ctx.kind(name)
            assert ctx.is_member(handle) == ctx.is_member(name)
            assert ctx.is_initialized(handle)
            assert _answers(ctx, handle) == _answers(ctx, name), name


def test_a_kind_handle_of_another_context_is_a_state_error_naming_the_kind():
    with ParallelContext(**plan_args()) as first, ParallelContext(**plan_args()) as second:
        handle = first.kind(ParallelMode.GLOBAL)
        with pytest.raises(pgroups.StateError,
                           match=r"^the handle of group global belongs to another context \(or to one since "
                                 r"destroyed\): ask this context for it, kind\(\"global\"\)$"):
            second.get_local_rank(handle)
        assert second.get_local_rank(second.kind("global")) == RANK
    with pytest.raises(pgroups.StateError, match=r"^group global is not initialized: the context was destroyed"):
        first.get_group(handle)


@pytest.mark.parametrize("share", [True, False])
def test_kinds_of_one_partition_share_a_communicator_unless_sharing_is_off(share):
    # tp-cp is tp and cp has one-rank groups, so both share; every kind still answers for itself.
    mesh = {"tp": 2, "cp": 1, "dp": SIZE // 2}
    with ParallelContext(mesh=mesh, groups=["tp", "cp", "dp", "tp-cp"], share_communicators=share) as ctx:
        assert ctx.share_communicators is share
        same = MPI._handleof(ctx.get_group("tp-cp")) == MPI._handleof(ctx.get_group("tp"))
        assert same is share
        assert ctx.get_group("cp").Get_size() == 1
        for kind in ctx.group_kinds:
            assert ctx.get_group(kind).allreduce(RANK) == sum(ctx.get_ranks_in_group(kind)), kind
        bill = ctx.communicators()
        assert (bill["kinds"], bill["distinct"], bill["singletons"]) == (4, 2 if SIZE > 2 else 1, 1)
        assert bill == ctx.plan.communicators(RANK, share)
