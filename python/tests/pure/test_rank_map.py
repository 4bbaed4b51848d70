"""rank_map= in Python: the C++ Layout's groups over mapped launcher ranks, its refusals, and
place's JSON file read as it is."""

import json

import pytest

import pgroups
from pgroups import Mesh, Plan

SWAP = [0, 2, 1, 3, 4, 6, 5, 7]


def mesh_plan(**kwargs):
    return Plan(mesh=Mesh.from_order("tp-dp-pp", tp=2, dp=2, pp=2), groups=["tp", "dp", "pp", "tp-dp"], **kwargs)


def test_groups_are_the_mapped_ranks_ascending():
    plan = mesh_plan(rank_map=SWAP)
    assert plan.rank_map == SWAP
    assert plan.group_of(0, "tp") == [0, 2]
    assert plan.group_of(1, "dp") == [0, 1]
    assert plan.group_of(6, "tp-dp") == [4, 5, 6, 7]
    assert plan.local_rank(2, "tp") == 1
    assert json.loads(plan.to_json())["config"]["rank_map"] == SWAP
    assert mesh_plan().rank_map is None
    assert mesh_plan(rank_map=list(range(8))).rank_map is None  # the identity is no map


def test_a_path_is_read_as_the_clis_rank_map_file(tmp_path):
    path = tmp_path / "placed.json"
    path.write_text(json.dumps({"cost": 1.0, "rank_map": SWAP}))
    assert mesh_plan(rank_map=path).rank_map == SWAP
    assert mesh_plan(rank_map=str(path)).group_of(0, "tp") == [0, 2]


def test_bad_maps_are_the_cpp_errors():
    with pytest.raises(pgroups.ConfigError, match=r"^rank map entries 1 and 2 are both launcher rank 1"):
        mesh_plan(rank_map=[0, 1, 1, 3, 4, 5, 6, 7])
    with pytest.raises(pgroups.ConfigError, match=r"^rank map breaks the order of kind 'tp'"):
        mesh_plan(rank_map=[1, 0, 2, 3, 4, 5, 6, 7])
    with pytest.raises(pgroups.ConfigError, match=r"^rank map has 3 entries, but the world has 8 ranks"):
        mesh_plan(rank_map=[0, 1, 2])
    with pytest.raises(TypeError, match=r"^rank_map\[1\] must be an int"):
        mesh_plan(rank_map=[0, 1.5])
    with pytest.raises(TypeError, match=r"^rank_map must be a list of ints"):
        mesh_plan(rank_map=3)


def test_an_empty_map_given_outright_is_refused_never_taken_for_no_map(tmp_path):
    with pytest.raises(pgroups.ConfigError, match=r"^rank_map is empty: a rank map lists the launcher rank of every"):
        mesh_plan(rank_map=[])
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"rank_map": []}))
    with pytest.raises(pgroups.ParseError, match=r"empty.json: rank_map is empty"):
        mesh_plan(rank_map=path)


def test_presets_and_config_files_take_a_map(tmp_path):
    assert Plan(8, pipeline=2, tensor=2, rank_map=SWAP).group_of(0, "tensor") == [0, 2]
    config = tmp_path / "c.toml"
    config.write_text('[mesh]\norder = "tp-dp"\ntp = 2\ndp = 2\n[parallel]\nrank_map = [0, 2, 1, 3]\n')
    assert Plan.from_config(config).group_of(0, "tp") == [0, 2]
    assert Plan.from_config(config, rank_map=[0, 1, 2, 3]).group_of(0, "tp") == [0, 1]
