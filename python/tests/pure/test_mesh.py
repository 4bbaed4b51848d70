"""Mesh: named dimensions, Megatron-LM's order, groups over any set of dimensions."""

import re

import pytest

import pgroups
from _support import golden_files, load_json
from pgroups import Mesh

# Megatron-LM's RankGenerator output.
MESH_GOLDEN = golden_files("golden-mesh")


def test_first_dimension_varies_fastest():
    mesh = Mesh({"tp": 2, "dp": 2, "pp": 2})
    assert mesh.size == 8
    assert mesh.order == "tp-dp-pp"
    assert mesh.coordinates(5) == {"tp": 1, "dp": 0, "pp": 1}
    assert mesh.rank_of({"tp": 1, "pp": 1}) == 5
    assert mesh.group_of(5, "tp") == [4, 5]
    assert mesh.group_of(5, "tp-dp") == [4, 5, 6, 7]
    assert mesh.group_of(5, ["dp", "tp"]) == [4, 5, 6, 7]
    assert mesh.groups("pp") == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert mesh.local_rank(6, "tp-dp") == 2
    assert mesh.group_size("dp-pp") == 4 and mesh.group_count("dp-pp") == 2


def test_from_order_fills_missing_sizes_with_one():
    mesh = Mesh.from_order("tp-cp-dp-pp", tp=2, dp=3, pp=2, ep=1)
    assert mesh.dims == {"tp": 2, "cp": 1, "dp": 3, "pp": 2}
    message = ("size ep=2 is given, but 'ep' is not in the order 'tp-dp'; a name missing from the order must "
               "have size 1")
    with pytest.raises(pgroups.ConfigError, match=f"^{re.escape(message)}$"):
        Mesh.from_order("tp-dp", tp=2, ep=2)


def test_unknown_dimension_names_the_known_ones():
    with pytest.raises(pgroups.ConfigError, match=r"^unknown mesh dimension 'cp'; the mesh has tp, dp$"):
        Mesh({"tp": 2, "dp": 2}).group_of(0, "tp-cp")


def test_bad_dimensions_are_rejected():
    with pytest.raises(pgroups.ConfigError, match=r"^mesh dimension 'tp' has size 0, must be a positive integer$"):
        Mesh({"tp": 0})
    with pytest.raises(pgroups.ConfigError, match=r"^mesh dimension name 'tp' appears twice$"):
        Mesh([("tp", 2), ("tp", 2)])


@pytest.mark.skipif(not MESH_GOLDEN, reason="no golden-mesh files")
@pytest.mark.parametrize("path", MESH_GOLDEN, ids=lambda p: p.stem)
def test_megatron_rank_generator_groups(path):
    golden = load_json(path)
    mesh = Mesh.from_order(golden["config"]["order"], **golden["config"]["sizes"])
    assert mesh.size == golden["config"]["world_size"]
    for token, expected in golden["modes"].items():
        assert sorted(mesh.groups(token)) == sorted(expected["groups"]), token
        assert [mesh.local_rank(r, token) for r in range(mesh.size)] == expected["local_rank"], token
