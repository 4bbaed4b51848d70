"""Plan.to_json and Plan.explain print what the CLI prints (`pgroups plan --format json`,
`pgroups explain`), byte for byte. PGROUPS_CLI names the executable (CTest sets it when
the CLI is built); without it these tests skip."""

import json
from pathlib import Path

import pytest

import pgroups
from _support import CLI, DATA_DIR, run_cli
from pgroups import Plan

pytestmark = pytest.mark.skipif(not CLI, reason="PGROUPS_CLI is not set (the CLI was not built)")

CASES = [
    (dict(world_size=8, pipeline=2, tensor=4, mode="2d"), "-w 8 -p 2 -t 4 -m 2d"),
    (dict(world_size=16, pipeline=2, tensor=8, mode="2.5d", depth=2), "-w 16 -p 2 -t 8 -m 2.5d -d 2"),
    (dict(world_size=16, pipeline=2, tensor=2, mode="sequence", legacy_sequence_dp=True),
     "-w 16 -p 2 -t 2 -m sequence --legacy-sequence-dp"),
    (dict(world_size=16, pipeline=2, tensor=2, mode="sequence"), "-w 16 -p 2 -t 2 -m sequence"),
    (dict(world_size=64, tensor=8, mode="3d"), "-w 64 -t 8 -m 3d"),
    (dict(world_size=12, pipeline=3), "-w 12 -p 3"),
    (dict(mesh={"tp": 2, "dp": 2, "pp": 2}, groups=["tp", "pp", "tp-dp", "embd", "pos_embd"]),
     "--mesh tp=2,dp=2,pp=2 --group tp,pp,tp-dp,embd,pos_embd"),
    (dict(mesh={"tp": 2, "cp": 2, "dp": 3}), "--mesh tp=2,cp=2,dp=3"),
]


def cli(*args):
    return run_cli(*args).stdout


@pytest.mark.parametrize("kwargs,flags", CASES, ids=lambda c: c if isinstance(c, str) else None)
def test_to_json_is_the_cli_plan(kwargs, flags):
    expected = cli("plan", *flags.split(), "--format", "json")
    assert Plan(**kwargs).to_json() + "\n" == expected
    assert json.loads(expected) == Plan(**kwargs).to_dict()


@pytest.mark.parametrize("kwargs,flags", CASES, ids=lambda c: c if isinstance(c, str) else None)
def test_explain_is_the_cli_explain(kwargs, flags):
    plan = Plan(**kwargs)
    for rank in {0, plan.world_size // 2 + 1, plan.world_size - 1}:
        assert plan.explain(rank) == cli("explain", *flags.split(), "--rank", str(rank))


@pytest.mark.parametrize("overrides,flags", [
    # The case that drifted: a mode over a 2.5d file drops the file's depth, in both.
    (dict(mode="2d", tensor=4), "--mode 2d -t 4"),
    (dict(mode="2.5d", depth=1, tensor=4), "--mode 2.5d -d 1 -t 4"),
    (dict(world_size=32, seed=7), "-w 32 --seed 7"),
], ids=lambda c: c if isinstance(c, str) else None)
def test_overrides_over_a_config_file_are_the_clis(overrides, flags, data_dir):
    path = data_dir / "configs" / "2p5d.toml"
    expected = cli("plan", "--config", str(path), *flags.split(), "--format", "json")
    assert Plan.from_config(path, **overrides).to_json() + "\n" == expected


def test_a_mesh_over_a_preset_file_is_refused_alike(data_dir):
    path = data_dir / "configs" / "2p5d.toml"
    run = run_cli("plan", "--config", str(path), "--mesh", "tp=2,dp=8", "--format", "json", check=False)
    assert run.returncode == 3
    with pytest.raises(pgroups.ConfigError) as error:
        Plan.from_config(path, mesh={"tp": 2, "dp": 8})
    assert str(error.value) in run.stderr


@pytest.mark.parametrize("name", ["2p5d.toml", "2p5d.json", "colossal_2p5d.py"])
def test_a_mode_alone_over_a_2p5d_file_is_refused_alike(name, data_dir):
    # The drifted case: `--mode 2d` over a 2.5d file drops its depth in both, and then the
    # file's tensor size 8 is no perfect square, in both.
    path = data_dir / "configs" / name
    run = run_cli("plan", "--config", str(path), "-w", "16", "--mode", "2d", "--format", "json", check=False)
    assert run.returncode == 3
    with pytest.raises(pgroups.ConfigError) as error:
        Plan.from_config(path, 16, mode="2d")
    assert "is not a perfect square" in str(error.value)
    assert run.stderr == f"pgroups: error: {error.value}\n"


@pytest.mark.parametrize("kwargs,flags", CASES, ids=lambda c: c if isinstance(c, str) else None)
def test_summary_and_kind_notes_are_the_cli_plans_first_lines(kwargs, flags):
    plan = Plan(**kwargs)
    lines = cli("plan", *flags.split()).split("\n\n")[0].splitlines()
    assert lines[0] == f"world size {plan.world_size} = {plan.summary}"
    assert lines[1:] == [f"{name}: {note}" for name, note in plan.kind_notes.items()]


@pytest.mark.parametrize("kwargs,flags", CASES, ids=lambda c: c if isinstance(c, str) else None)
def test_config_is_the_cli_plans_config_object(kwargs, flags):
    assert Plan(**kwargs).config == json.loads(cli("plan", *flags.split(), "--format", "json"))["config"]


# Every configuration file of the tests, gpus_per_node (the locality key) included; a file
# without a world size is planned for 64 ranks, which every one of them divides.
CONFIG_FILES = sorted(path.name for path in (DATA_DIR / "configs").iterdir())


def _world_flags(path):
    config = pgroups._pgroups.read_config_file(path)
    return ([], {}) if config.world_size or config.mesh else (["-w", "64"], {"world_size": 64})


def test_the_config_files_include_ones_with_gpus_per_node(data_dir):
    with_nodes = [name for name in CONFIG_FILES
                  if pgroups._pgroups.read_config_file(data_dir / "configs" / name).gpus_per_node]
    assert {Path(name).suffix for name in with_nodes} == {".toml", ".json", ".py"}


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_from_config_to_json_is_the_cli_plan_of_every_config_file(name, data_dir):
    path = data_dir / "configs" / name
    flags, kwargs = _world_flags(path)
    expected = cli("plan", "--config", str(path), *flags, "--format", "json")
    plan = Plan.from_config(path, **kwargs)
    assert plan.to_json() + "\n" == expected
    assert ("locality" in json.loads(expected)) == (plan.gpus_per_node is not None)


@pytest.mark.parametrize("name", [name for name in CONFIG_FILES if name.startswith(("nodes_", "colossal_nodes"))])
def test_locality_and_its_warnings_are_the_clis(name, data_dir):
    path = data_dir / "configs" / name
    run = run_cli("plan", "--config", str(path))
    plan = Plan.from_config(path)
    assert "\n" + plan.locality() + "\n" in run.stdout
    assert plan.locality(format="json") == json.loads(cli("plan", "--config", str(path), "--format", "json"))["locality"]
    assert run.stderr.splitlines() == [f"pgroups: warning: {warning}" for warning in plan.locality_warnings()]


def test_colossal_nodes_file_warns_of_tensor_groups_across_nodes(data_dir):
    plan = Plan.from_config(data_dir / "configs" / "colossal_nodes.py")
    assert plan.gpus_per_node == 2
    assert plan.locality_warnings() and all("tensor" in warning for warning in plan.locality_warnings())


def test_locality_takes_another_node_size_and_refuses_none():
    plan = Plan(16, tensor=4, mode="1d")
    assert plan.locality(4, format="json")["kinds"]["tensor"] == {"groups_within_node": 4, "groups_across_nodes": 0}
    assert plan.locality(2, format="json")["kinds"]["tensor"] == {"groups_within_node": 0, "groups_across_nodes": 4}
    with pytest.raises(pgroups.ConfigError, match="gpus per node is not known"):
        plan.locality()
    with pytest.raises(pgroups.ConfigError, match="gpus per node 3"):
        plan.locality(3)


def test_gpus_per_node_given_to_plan_is_the_clis_flag():
    expected = cli("plan", "-w", "16", "-t", "4", "-m", "1d", "--gpus-per-node", "8", "--format", "json")
    assert Plan(16, tensor=4, mode="1d", gpus_per_node=8).to_json() + "\n" == expected


def test_the_rest_dimension_is_sized_as_the_clis_order_without_dp():
    # `--order` without `--dp`: dp is what the world leaves over, by merge_config's one rule.
    overrides = pgroups._pgroups.ConfigOverrides(world_size=24, mesh=[("tp", 2), ("dp", 1), ("pp", 3)],
                                                 rest_dimension="dp")
    plan = Plan.from_layout(pgroups._pgroups.resolve_layout(None, overrides))
    assert plan.mesh.dims == {"tp": 2, "dp": 4, "pp": 3}
    assert plan.to_json() + "\n" == cli("plan", "-w", "24", "--order", "tp-dp-pp", "--tp", "2", "--pp", "3",
                                        "--format", "json")
