"""Plan.to_json and Plan.explain print what the CLI prints (`pgroups plan --format json`,
`pgroups explain`), byte for byte. PGROUPS_CLI names the executable (CTest sets it when
the CLI is built); without it these tests skip."""

import json

import pytest

import pgroups
from _support import CLI, run_cli
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
