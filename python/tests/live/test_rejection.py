"""One rank's rejection reaches every rank at once, on MPI and on torch alike.

The MPI context (ParallelContext) and the torch front doors (create_groups, device_mesh,
pgroups.megatron, pgroups.colossal) agree on the same record through the same C++
functions: a mismatch reads the same, and an error one rank hits before the agreement is
raised on every rank with the same text and class. Each case below is wrong on one rank
only; every rank must raise within seconds, not wait for its timeout.

Every rank runs every test in the same order (each test is collective)."""

import os
import re
import sys
import time

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from torch_world import init_gloo  # noqa: E402

import pgroups  # noqa: E402
import pgroups.torch as pgt  # noqa: E402
from pgroups import ParallelContext, colossal  # noqa: E402
from pgroups import megatron as mpu  # noqa: E402

RANK = MPI.COMM_WORLD.Get_rank()
SIZE = MPI.COMM_WORLD.Get_size()
# Far above what a carried error takes, far below the timeouts the calls are given.
QUICK_SECONDS = 20.0
TIMEOUT = 120
init_gloo()


def raised(call):
    """The error ``call`` raises on this rank, asserting it came quickly."""
    start = time.monotonic()
    with pytest.raises(Exception) as info:
        call()
    assert time.monotonic() - start < QUICK_SECONDS, f"rank {RANK} waited for {time.monotonic() - start:.1f} s"
    return info.value


def carried(call, cls, origin, message):
    """Asserts that ``call`` raises ``cls`` on every rank with the carried text of rank
    ``origin``'s error."""
    error = raised(call)
    assert type(error) is cls, (type(error), error)
    assert re.match(rf"^rank {origin} hit before the configuration agreement: {message}", str(error)), str(error)
    return error


def test_a_mismatch_reads_the_same_on_mpi_and_on_torch():
    tensor = 2 if RANK == SIZE - 1 else 1
    on_mpi = raised(lambda: ParallelContext(tensor=tensor, timeout=TIMEOUT))
    on_torch = raised(lambda: pgt.create_groups(tensor=tensor, timeout=TIMEOUT))
    # The plan's part of each record is the same C++ text; each front door adds its own
    # options after it (strategy on MPI, method on torch).
    shape = re.compile(rf"^configuration mismatch across {SIZE} ranks: ranks 0-{SIZE - 2} hold '(world_size=\S+ "
                       r"pipeline=\S+ tensor=1 .*?mesh=\S+) [^']*'; "
                       rf"rank {SIZE - 1} holds '(world_size=\S+ pipeline=\S+ tensor=2 .*?mesh=\S+) [^']*'$")
    texts = []
    for error in (on_mpi, on_torch):
        assert type(error) is pgroups.MismatchError
        found = shape.match(str(error))
        assert found, str(error)
        texts.append(found.groups())
    assert texts[0] == texts[1]


@pytest.mark.parametrize("bad, cls, message", [
    ("2", TypeError, r"tensor must be an int, not '2' \(str\)$"),
    (2 ** 64, pgroups.ConfigError, "tensor 18446744073709551616 does not fit in a 64-bit integer$"),
])
def test_a_carried_error_keeps_its_class_and_text_on_mpi_and_on_torch(bad, cls, message):
    tensor = bad if RANK == 1 else 2
    on_mpi = carried(lambda: ParallelContext(tensor=tensor, timeout=TIMEOUT), cls, 1, message)
    on_torch = carried(lambda: pgt.create_groups(tensor=tensor, timeout=TIMEOUT), cls, 1, message)
    assert str(on_mpi) == str(on_torch)


def test_a_strategy_of_an_unknown_name_on_one_rank_reaches_every_rank():
    strategy = "bogus" if RANK == 2 else "create_group"
    carried(lambda: ParallelContext(strategy=strategy, timeout=TIMEOUT), pgroups.ConfigError, 2,
            "unknown creation strategy 'bogus'")


def test_a_seed_beyond_64_bits_on_one_rank_reaches_every_rank():
    seed = 2 ** 64 if RANK == 0 else 7
    carried(lambda: ParallelContext(seed=seed, timeout=TIMEOUT), pgroups.ConfigError, 0,
            "seed 18446744073709551616 does not fit in a 64-bit integer$")
    mesh = {"tp": 2 ** 64} if RANK == 3 else {"tp": SIZE}
    carried(lambda: ParallelContext(mesh=mesh, groups=["tp"], timeout=TIMEOUT), pgroups.ConfigError, 3,
            r"mesh\['tp'\] 18446744073709551616 does not fit in a 64-bit integer$")


def test_a_wrong_rank_given_to_a_colossal_initializer_reaches_every_rank():
    given = 0 if RANK == 2 else RANK  # rank 2 gives rank 0, as code that passes 0 everywhere does
    carried(lambda: colossal.Initializer_Data(given, SIZE, None, SIZE, 1, 1).init_dist_group(),
            pgroups.ConfigError, 2, "rank 0 given to Initializer_Data is not this process's rank 2$")


def test_a_wrong_type_given_to_a_colossal_constructor_reaches_every_rank():
    tensor = "2" if RANK == 3 else 2
    carried(lambda: colossal.Initializer_Tensor(RANK, SIZE, None, SIZE // 2, 1, tensor).init_dist_group(),
            TypeError, 3, r"tensor_parallel_size must be an int, not '2' \(str\)$")


@pytest.mark.parametrize("arguments, cls, message", [
    (dict(tensor_model_parallel_size=3), pgroups.ConfigError, "world size 4 is not divisible by"),
    (dict(tensor_model_parallel_size=2 ** 64), pgroups.ConfigError,
     "tensor_model_parallel_size 18446744073709551616 does not fit in a 64-bit integer$"),
    (dict(use_sharp=True), pgroups.ConfigError, "pgroups.megatron.initialize_model_parallel does not implement "
                                                "use_sharp=True"),
    (dict(use_sharp=0), pgroups.ConfigError, "pgroups.megatron.initialize_model_parallel does not implement "
                                             "use_sharp=0; only its default False"),
    (dict(create_all_gather_group=None), pgroups.ConfigError, "pgroups.megatron.initialize_model_parallel does "
                                                              "not implement create_all_gather_group=None"),
    (dict(pipeline_model_parallel_size="2"), TypeError, "pipeline_model_parallel_size must be an int"),
])
def test_a_bad_megatron_argument_on_one_rank_reaches_every_rank(arguments, cls, message):
    if SIZE != 4:
        pytest.skip("the sizes are those of 4 ranks")
    given = arguments if RANK == 1 else {}
    carried(lambda: mpu.initialize_model_parallel(**given), cls, 1, message)
    assert not mpu.model_parallel_is_initialized()


@pytest.mark.parametrize("setting, value", [
    ("create_gloo_process_groups", False),
    ("order", "tp-cp-ep-pp-dp"),
    ("virtual_pipeline_model_parallel_size", 3),
])
def test_one_ranks_other_megatron_setting_is_a_mismatch_on_every_rank(setting, value):
    # Each decides which creations follow the first agreement: a rank that differs must
    # meet the others there, not skip a creation they wait in.
    if SIZE != 4:
        pytest.skip("the sizes are those of 4 ranks")
    given = dict(pipeline_model_parallel_size=2, virtual_pipeline_model_parallel_size=2)
    if RANK == 2:
        given[setting] = value
    error = raised(lambda: mpu.initialize_model_parallel(**given))
    assert type(error) is pgroups.MismatchError, (type(error), error)
    text = str(error)
    assert text.startswith(f"configuration mismatch across {SIZE} ranks: ranks 0-1, 3 hold '"), text
    assert "rank 2 holds '" in text, text
    assert not mpu.model_parallel_is_initialized()


def _has_device_mesh():
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    return (major, minor) >= (2, 4)


@pytest.mark.parametrize("which", ["device_type", "source"])
def test_a_bad_device_mesh_argument_on_one_rank_reaches_every_rank(which):
    plan = pgroups.Plan(SIZE, tensor=2)
    device_type = 5 if which == "device_type" and RANK == 2 else "cpu"
    source = "plan" if which == "source" and RANK == 2 else plan
    call = lambda: pgt.device_mesh(source, device_type, timeout=TIMEOUT)  # noqa: E731
    if not _has_device_mesh():
        # Every rank lacks DeviceMesh.from_group: the same ConfigError everywhere, at once.
        error = raised(call)
        assert type(error) is pgroups.ConfigError
        assert str(error).startswith(f"ranks 0-{SIZE - 1} hit before the configuration agreement: "
                                     "pgroups.torch.device_mesh needs torch >= 2.4")
        return
    message = r"device_type must be a string token" if which == "device_type" else \
        r"source must be a pgroups.Plan or pgroups.torch.TorchGroups, not str 'plan'$"
    carried(call, TypeError, 2, message)


def test_after_every_rejection_the_next_calls_work():
    with ParallelContext(tensor=2, timeout=TIMEOUT) as ctx:
        assert ctx.get_world_size("tensor") == 2
    groups = pgt.create_groups(tensor=2, timeout=TIMEOUT)
    try:
        value = torch.tensor([RANK], dtype=torch.int64)
        dist.all_reduce(value, group=groups.get_group("tensor"))
        assert int(value) == sum(groups.get_ranks_in_group("tensor"))
    finally:
        groups.destroy()
