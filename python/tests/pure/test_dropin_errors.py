"""pgroups.colossal.register() and pgroups.megatron without what they need: clear errors,
no MPI or torch.distributed group involved."""

import sys

import pytest

pytest.importorskip("torch")

import pgroups  # noqa: E402
from pgroups import colossal  # noqa: E402
from pgroups import megatron as mpu  # noqa: E402


def test_register_without_colossal_says_what_is_missing(monkeypatch):
    for name in [n for n in sys.modules if n == "colossalai" or n.startswith("colossalai.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "colossalai", None)
    with pytest.raises(ImportError, match=r"register\(\) needs Colossal-AI's colossalai.legacy.registry"):
        colossal.register()
    assert not colossal.is_registered()


def test_unregister_without_register_does_nothing():
    colossal.unregister()
    assert not colossal.is_registered()


def test_megatron_initialize_before_torch_distributed_is_a_state_error():
    with pytest.raises(pgroups.StateError, match="needs torch.distributed init_process_group first"):
        mpu.initialize_model_parallel(tensor_model_parallel_size=2)


def test_megatron_getter_before_initialize_names_the_group():
    with pytest.raises(pgroups.StateError, match="tensor model parallel group is not initialized"):
        mpu.get_tensor_model_parallel_group()
    assert mpu.get_tensor_model_parallel_group(check_initialized=False) is None
    assert not mpu.model_parallel_is_initialized()


def test_registered_initializers_keep_colossal_constructor_arguments():
    init = colossal.REGISTERED["Initializer_2p5D"](0, 8, None, 1, 1, 8, 2)
    assert (init.rank, init.world_size, init.tensor_parallel_size, init.depth) == (0, 8, 8, 2)
    assert init.legacy_sequence_dp  # Colossal-AI's sequence_dp blocks
    # The constructor keeps the error for init_dist_group, the collective call, which
    # carries it to every rank (here, without torch.distributed, it raises it at once).
    wrong = colossal.REGISTERED["Initializer_3D"](0, 8, None, 1, 1, "8")
    with pytest.raises(TypeError, match=r"tensor_parallel_size must be an int, not '8' \(str\)"):
        wrong.init_dist_group()
    with pytest.raises(TypeError, match=r"^rank must be an int, not True \(bool\)$"):
        colossal.Initializer_Data(True, 8, None, 8, 1, 1).init_dist_group()


@pytest.mark.parametrize("query", [mpu.is_pipeline_first_stage, mpu.is_pipeline_last_stage,
                                   mpu.is_rank_in_embedding_group])
def test_megatron_stage_queries_take_only_a_bool_and_an_int_stage(query):
    with pytest.raises(TypeError, match=r"^ignore_virtual must be a bool \(True or False\), not 1 \(int\)$"):
        query(ignore_virtual=1)
    with pytest.raises(TypeError, match=r"^vp_stage must be an int, not '0' \(str\)$"):
        query(ignore_virtual=False, vp_stage="0")
    with pytest.raises(pgroups.ConfigError, match="^vp_stage 18446744073709551616 does not fit in a 64-bit integer$"):
        query(ignore_virtual=False, vp_stage=2 ** 64)


def test_megatron_getters_take_only_a_bool_check_initialized():
    with pytest.raises(TypeError, match=r"^check_initialized must be a bool \(True or False\), not None"):
        mpu.get_tensor_model_parallel_group(check_initialized=None)


@pytest.mark.parametrize("query", [mpu.get_data_parallel_group, mpu.get_data_parallel_world_size,
                                   mpu.get_data_parallel_rank, mpu.get_data_parallel_group_gloo])
def test_megatron_data_parallel_flags_are_bools(query):
    with pytest.raises(TypeError, match=r"^with_context_parallel must be a bool \(True or False\), not 1 \(int\)$"):
        query(with_context_parallel=1)
    with pytest.raises(TypeError, match=r"^partial_data_parallel must be a bool \(True or False\), not None"):
        query(partial_data_parallel=None)


def test_megatron_setters_take_ints_only():
    with pytest.raises(TypeError, match=r"^world_size must be an int, not '2' \(str\)$"):
        mpu.set_tensor_model_parallel_world_size("2")
    with pytest.raises(pgroups.ConfigError, match="^rank 18446744073709551616 does not fit in a 64-bit integer$"):
        mpu.set_virtual_pipeline_model_parallel_rank(2 ** 64)


def test_register_with_a_dependency_of_colossal_missing_names_that_dependency():
    """Colossal-AI installed, one of the packages its import needs missing (in the torch 2.x
    venv, colossalai==0.5.0 installed with --no-deps lacks peft): register() names that
    package, not Colossal-AI. In a fresh interpreter, without the tests' stub packages."""
    import importlib.util
    import subprocess

    try:
        installed = importlib.util.find_spec("colossalai") is not None
    except (ImportError, ValueError):
        installed = False
    if not installed:
        pytest.skip("Colossal-AI is not installed in this interpreter")
    code = """
import sys
try:
    import colossalai.legacy.registry
except ModuleNotFoundError as error:
    missing = error.name
else:
    print("IMPORTS")
    sys.exit(0)
from pgroups import colossal
try:
    colossal.register()
except ImportError as error:
    print(repr(missing))
    print(error)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    if done.stdout.startswith("IMPORTS"):
        pytest.skip("Colossal-AI and every package it imports are installed here")
    missing, message = done.stdout.split("\n", 1)
    assert f"the package {missing} it imports is missing" in message
    assert "install colossalai" not in message


def test_device_mesh_without_a_default_group_outside_torchrun_says_what_is_missing(monkeypatch):
    import pgroups.torch as pgt
    from pgroups import _torch_mesh

    for name in _torch_mesh.ENV_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    plan = pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp", tp=2, dp=2), groups=["tp", "dp"])
    try:
        _torch_mesh._require_device_mesh()
    except pgroups.ConfigError:
        with pytest.raises(pgroups.ConfigError, match="needs torch >= 2.4"):
            pgt.device_mesh(plan, "cpu")
        return
    with pytest.raises(pgroups.StateError, match=r"call torch.distributed.init_process_group first, or run under "
                                                 r"torchrun \(env:// needs MASTER_ADDR, MASTER_PORT, RANK, "
                                                 r"WORLD_SIZE; MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE not set\)"):
        pgt.device_mesh(plan, "cpu")


def test_device_types_this_torch_cannot_run_are_named():
    import torch
    from pgroups import _torch_mesh

    _torch_mesh.check_device_type("cpu")
    with pytest.raises(pgroups.ConfigError, match=r"device_type 'cuda:0' names a device index; .* \('cuda'\)"):
        _torch_mesh.check_device_type("cuda:0")
    with pytest.raises(pgroups.ConfigError, match=r"device_type 'gpu' is no device type torch .* knows"):
        _torch_mesh.check_device_type("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(pgroups.ConfigError, match=r"device_type 'cuda' cannot run here: .*is_available\(\) is "
                                                      r"False"):
            _torch_mesh.check_device_type("cuda")
