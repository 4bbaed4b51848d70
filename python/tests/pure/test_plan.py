"""Plan: golden layouts (Colossal-AI's own output), the JSON schema, per-rank queries."""

import json

import pytest

import pgroups
from _support import golden_files, load_json, plan_of
from pgroups import ParallelMode, Plan

GOLDEN = golden_files("golden")


def test_golden_files_are_there():
    assert len(GOLDEN) >= 25


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_to_json_reproduces_golden_layout(path):
    golden = load_json(path)
    # The golden files hold Colossal-AI's contiguous sequence_dp blocks: the legacy switch.
    plan = plan_of(golden["config"], legacy_sequence_dp=golden["config"]["tensor"]["mode"] == "sequence")
    ours = json.loads(plan.to_json())
    assert ours["data_parallel_size"] == golden["data_parallel_size"]
    assert ours["config"]["world_size"] == golden["config"]["world_size"]
    assert ours["config"]["pipeline"] == golden["config"]["pipeline"]
    assert ours["config"]["tensor"]["size"] == golden["config"]["tensor"]["size"]
    assert ours["config"]["tensor"]["mode"] == golden["config"]["tensor"]["mode"]
    assert set(ours["modes"]) == set(golden["modes"])
    for name, expected in golden["modes"].items():
        got = ours["kinds"][name]
        # Colossal-AI creates some modes' groups in another order: compare as sets.
        assert sorted(got["groups"]) == sorted(expected["groups"]), name
        assert got["local_rank"] == expected["local_rank"], name
        assert got["group_size"] == expected["world_size"], name


def test_modes_are_parallel_mode_members_in_creation_order():
    plan = Plan(16, pipeline=2, tensor=8, mode="2.5d", depth=2)
    assert plan.modes == [ParallelMode.GLOBAL, ParallelMode.DATA, ParallelMode.MODEL, ParallelMode.PIPELINE,
                          ParallelMode.TENSOR, ParallelMode.PARALLEL_2P5D_COL, ParallelMode.PARALLEL_2P5D_ROW,
                          ParallelMode.PARALLEL_2P5D_DEP, ParallelMode.PARALLEL_2P5D_XZ]


def test_parallel_mode_has_colossal_ai_values():
    assert [m.value for m in ParallelMode] == [
        "global", "data", "model", "pipe", "tensor", "1d", "sequence", "sequence_dp", "2d_row", "2d_col",
        "2p5d_col", "2p5d_row", "2p5d_dep", "2p5d_xz", "3d_input", "3d_weight", "3d_output",
        "3d_input_x_weight", "3d_output_x_weight"]
    assert ParallelMode.PARALLEL_3D_INPUT_X_WEIGHT.value == "3d_input_x_weight"
    assert ParallelMode.PIPELINE.value == "pipe"


def test_queries_accept_members_and_strings_alike():
    plan = Plan(8, pipeline=2, tensor=4, mode="2d")
    assert plan.group_of(5, "2d_col") == [5, 7]
    assert plan.group_of(5, ParallelMode.PARALLEL_2D_COL) == [5, 7]
    assert plan.local_rank(7, ParallelMode.PARALLEL_2D_COL) == 1
    assert plan.groups("pipe") == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert plan.group_size("tensor") == 4
    assert plan.group_count("2d_row") == 4
    assert plan.group_index(6, "2d_row") == 3


def test_coordinates_are_a_dict_slowest_first():
    plan = Plan(16, pipeline=2, tensor=4, mode="2d")
    assert plan.coordinates(13) == {"data": 1, "pipe": 1, "tensor": 1, "row": 1, "col": 0}
    assert plan.coordinate_sizes() == {"data": 2, "pipe": 2, "tensor": 4, "row": 2, "col": 2}


def test_default_sequence_dp_is_one_pipeline_stage_and_legacy_is_colossal_blocks():
    documented = Plan(16, pipeline=2, tensor=2, mode="sequence")
    legacy = Plan(16, pipeline=2, tensor=2, mode="sequence", legacy_sequence_dp=True)
    assert documented.group_of(0, "sequence_dp") == [0, 1, 4, 5, 8, 9, 12, 13]
    assert legacy.group_of(0, "sequence_dp") == [0, 1, 2, 3, 4, 5, 6, 7]
    assert json.loads(legacy.to_json())["config"]["legacy_sequence_dp"] is True


def test_seeds_follow_colossal_ai():
    plan = Plan(8, pipeline=2, tensor=4, mode="1d", seed=7)
    assert plan.seed(6, "data") == 7
    assert plan.seed(6, "tensor") == 7 + 2 + 1024 * 1


def test_explain_matches_the_cli_layout():
    text = Plan(8, pipeline=2, tensor=4, mode="2d").explain(5)
    lines = text.splitlines()
    assert lines[0].startswith("rank 5 of 8 (")
    assert lines[1].startswith("coordinates: data=0/1 pipe=1/2")
    row = next(line for line in lines if line.startswith("2d_col"))
    assert row.split()[1:] == ["0", "2", "[5,", "7]"]


def test_explain_elides_long_groups():
    text = Plan(64).explain(3)
    assert "[0, 1, 2, 3, ..., 60, 61, 62, 63]" in text


def test_to_json_config_has_depth_only_for_2p5d():
    assert json.loads(Plan(8, tensor=8, mode="2.5d", depth=2).to_json())["config"]["tensor"] == {
        "size": 8, "mode": "2.5d", "depth": 2}
    assert json.loads(Plan(4).to_json())["config"]["tensor"] == {"size": 1, "mode": None}


def test_repr_and_equality():
    plan = Plan(16, pipeline=2, tensor=8, mode="2.5d", depth=2)
    assert repr(plan) == "Plan(world_size=16, pipeline=2, tensor=8, mode='2.5d', depth=2)"
    assert plan == eval(repr(plan), {"Plan": Plan})
    assert plan != Plan(16, pipeline=2, tensor=8, mode="1d")


@pytest.mark.parametrize("suffix,text", [
    (".toml", '[parallel]\npipeline = 2\ntensor = { size = 4, mode = "2d" }\n'),
    (".json", '{"parallel": {"pipeline": 2, "tensor": {"size": 4, "mode": "2d"}}}'),
    (".py", "parallel = dict(pipeline=2, tensor=dict(size=4, mode='2d'))\n"),
])
def test_from_config_reads_every_format(write_config, suffix, text):
    path = write_config(f"config{suffix}", text)
    plan = Plan.from_config(path, world_size=8)
    assert plan == Plan(8, pipeline=2, tensor=4, mode="2d")


def test_from_config_takes_world_size_from_the_file(write_config):
    path = write_config("c.toml", "[parallel]\nworld_size = 12\npipeline = 3\ntensor = 2\n")
    assert Plan.from_config(str(path)).data_parallel_size == 2


def test_help_is_useful():
    assert "world_size" in Plan.__doc__ and "ConfigError" in Plan.__doc__
    assert Plan.group_of.__doc__
    assert pgroups.ParallelContext.__doc__ and "mpi4py" in pgroups.ParallelContext.__doc__


def test_importing_pgroups_needs_neither_mpi_nor_torch():
    import subprocess
    import sys

    code = ("import sys, pgroups; pgroups.Plan(8, tensor=4, mode='2d').to_json(); "
            "print(sorted(m for m in ('mpi4py.MPI', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_modes_of_another_enum_are_taken_by_value():
    import enum

    class TheirMode(enum.Enum):
        PARALLEL_2D_ROW = "2d_row"

    assert Plan(8, tensor=4, mode="2d").group_of(3, TheirMode.PARALLEL_2D_ROW) == [2, 3]


MESH_GOLDEN = golden_files("golden-mesh")


def test_mesh_plan_has_one_kind_per_token():
    plan = Plan(mesh=pgroups.Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2), groups=["tp", "dp", "pp", "tp-dp", "embd"])
    assert plan.is_mesh and plan.world_size == 8
    assert plan.group_kinds == ["tp", "dp", "pp", "tp-dp", "embd"]
    assert plan.modes == []
    assert plan.group_of(5, "tp-dp") == [4, 5, 6, 7]
    assert plan.group_of(5, "dp-tp") == [4, 5, 6, 7]
    assert plan.groups("pp") == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert plan.groups("embd") == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert plan.is_member(5, "embd") and plan.is_member(0, "tp")
    assert plan.mesh.dims == {"tp": 2, "dp": 2, "pp": 2}
    assert repr(plan) == "Plan(mesh={'tp': 2, 'dp': 2, 'pp': 2}, groups=['tp', 'dp', 'pp', 'tp-dp', 'embd'])"
    assert plan == eval(repr(plan), {"Plan": Plan})


def test_mesh_plan_without_groups_has_one_kind_per_dimension():
    plan = Plan(mesh={"tp": 2, "cp": 2, "dp": 2})
    assert plan.group_kinds == ["tp", "cp", "dp"]


def test_partial_kind_has_no_local_rank_for_non_members():
    plan = Plan(mesh={"tp": 1, "pp": 4}, groups=["pp", "embd"])
    data = plan.to_dict()["kinds"]["embd"]
    assert data["groups"] == [[0, 3]]
    assert data["local_rank"] == [0, None, None, 1]
    assert data["group_size"] == [2, None, None, 2]
    assert not plan.is_member(1, "embd")
    assert "not a member" in plan.explain(1)


def test_mesh_plan_rejects_preset_arguments():
    with pytest.raises(pgroups.ConfigError, match="mesh"):
        Plan(mesh={"tp": 2}, pipeline=2)
    with pytest.raises(pgroups.ConfigError, match="mesh="):
        Plan(8, groups=["tp"])


def test_mesh_from_config_file(write_config):
    path = write_config("mesh.toml", '[mesh]\norder = "tp-dp-pp"\ntp = 2\ndp = 2\npp = 2\ngroups = ["tp", "tp-dp"]\n')
    plan = Plan.from_config(path)
    assert plan.group_kinds == ["tp", "tp-dp"] and plan.world_size == 8


@pytest.mark.skipif(not MESH_GOLDEN, reason="no golden-mesh files")
@pytest.mark.parametrize("path", MESH_GOLDEN, ids=lambda p: p.stem)
def test_mesh_plan_reproduces_megatron_groups(path):
    golden = load_json(path)
    mesh = pgroups.Mesh.from_order(golden["config"]["order"], **golden["config"]["sizes"])
    plan = Plan(mesh=mesh, groups=list(golden["modes"]))
    ours = plan.to_dict()["modes"]
    for token, expected in golden["modes"].items():
        assert sorted(ours[token]["groups"]) == sorted(expected["groups"]), token
        assert ours[token]["local_rank"] == expected["local_rank"], token
        assert ours[token]["world_size"] == expected["world_size"], token


def test_pipeline_stage_is_the_pipe_or_pp_coordinate():
    preset = Plan(8, pipeline=2, tensor=2)
    assert [preset.pipeline_stage(r) for r in range(8)] == [preset.coordinates(r)["pipe"] for r in range(8)]
    mesh = Plan(mesh={"tp": 2, "dp": 2, "pp": 2})
    assert [mesh.pipeline_stage(r) for r in range(8)] == [mesh.coordinates(r)["pp"] for r in range(8)]
    assert Plan(mesh={"tp": 2, "dp": 2}).pipeline_stage(3) == 0


def test_to_dict_carries_schema_version_two_and_config_is_its_config():
    for plan in (Plan(16, pipeline=2, tensor=8, mode="2.5d", depth=2), Plan(mesh={"tp": 2, "dp": 4})):
        data = plan.to_dict()
        assert data["schema_version"] == 2
        assert plan.config == data["config"]
    assert Plan(mesh={"tp": 2, "dp": 4}).config["groups"] == ["tp", "dp"]


def test_kind_notes_explain_sequence_dp_and_the_embedding_groups():
    assert list(Plan(8, pipeline=2, tensor=2, mode="sequence").kind_notes) == ["sequence_dp"]
    assert list(Plan(mesh={"tp": 2, "pp": 2}, groups=["tp", "embd", "pos_embd"]).kind_notes) == ["embd", "pos_embd"]
    assert Plan(8, pipeline=2, tensor=4, mode="2d").kind_notes == {}


def test_groups_without_a_mesh_are_refused_by_the_merge_rule():
    expected = ("group 'tp' needs a mesh: groups are the group kinds of a mesh (give mesh=, or a [mesh] table in the "
                "config file); presets have fixed modes")
    with pytest.raises(pgroups.ConfigError) as error:
        Plan(8, groups=["tp"])
    assert str(error.value) == expected
