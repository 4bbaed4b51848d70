"""pgroups.place places a plan as `pgroups place` does: its to_json() is the CLI's JSON for
the same plan and cluster, byte for byte, and its errors are the CLI's."""

import json

import pytest

import pgroups
from _support import CLI, run_cli
from pgroups import Mesh, Plan

CLUSTER = '[cluster]\ngpus_per_node = 4\nnodes = ["gpu1", "gpu2"]\n'
TOPOLOGY = "SwitchName=s1 Nodes=gpu[1-2]\nSwitchName=s2 Nodes=gpu[3-4]\nSwitchName=top Switches=s[1-2]\n"


def dp_fastest(**kwargs):
    # tp spread over the two nodes by the mesh order (dp fastest); placed, it stays in each.
    return Plan(mesh=Mesh.from_order("dp-tp", dp=2, tp=4), **kwargs)


@pytest.mark.skipif(not CLI, reason="PGROUPS_CLI is not set (the CLI was not built)")
@pytest.mark.parametrize("traffic", [None, "tp=10"])
def test_to_json_is_the_cli_place(tmp_path, traffic):
    cluster = tmp_path / "c.toml"
    cluster.write_text(CLUSTER)
    flags = ["place", "--cluster", str(cluster), "--order", "dp-tp", "--dp", "2", "--tp", "4", "--format", "json"]
    expected = run_cli(*flags, *(["--traffic", traffic] if traffic else [])).stdout
    placement = pgroups.place(dp_fastest(), cluster, traffic=traffic)
    assert placement.to_json() + "\n" == expected
    assert placement.to_dict() == json.loads(expected)


@pytest.mark.skipif(not CLI, reason="PGROUPS_CLI is not set (the CLI was not built)")
def test_slurm_topology_is_placed_as_the_cli_places_it(tmp_path):
    topology = tmp_path / "topology.conf"
    topology.write_text(TOPOLOGY)
    plan = Plan(mesh=Mesh.from_order("dp-tp", dp=4, tp=2), gpus_per_node=2)
    expected = run_cli("place", "--slurm-topology", str(topology), "--nodelist", "gpu[1-4]", "--order", "dp-tp",
                       "--dp", "4", "--tp", "2", "--gpus-per-node", "2", "--format", "json").stdout
    placement = pgroups.place(plan, slurm_topology=topology, nodelist="gpu[1-4]")
    assert placement.to_json() + "\n" == expected


def test_the_placed_plan_keeps_tp_in_a_node_and_writes_the_launchers_files(tmp_path):
    cluster = tmp_path / "c.toml"
    cluster.write_text(CLUSTER)
    placement = pgroups.place(dp_fastest(), str(cluster))
    placed = placement.plan
    assert placed.rank_map == placement.rank_map
    assert placed.gpus_per_node == 4
    for group in placed.groups("tp"):
        assert len({rank // 4 for rank in group}) == 1
    assert dp_fastest(gpus_per_node=4).locality(format="json")["modes"] != placed.locality(format="json")["modes"]
    assert placement.rankfile().splitlines()[0].startswith("rank 0=gpu")
    assert len(placement.hostfile().splitlines()) == 8
    assert "node:" in placement.text()


def test_a_cluster_is_a_file_or_a_topology_and_the_rules_are_the_clis(tmp_path):
    cluster = tmp_path / "c.toml"
    cluster.write_text(CLUSTER)
    with pytest.raises(pgroups.ConfigError, match="give --cluster FILE or --slurm-topology FILE"):
        pgroups.place(dp_fastest())
    with pytest.raises(pgroups.ConfigError, match="not both"):
        pgroups.place(dp_fastest(), cluster, slurm_topology=cluster)
    with pytest.raises(pgroups.ConfigError, match="give them with --slurm-topology"):
        pgroups.place(dp_fastest(), cluster, nodelist="gpu[1-2]")
    with pytest.raises(pgroups.ConfigError, match="gpus_per_node 2 is not the cluster file's 4"):
        pgroups.place(dp_fastest(gpus_per_node=2), cluster)
    with pytest.raises(pgroups.ConfigError, match="traffic"):
        pgroups.place(dp_fastest(), cluster, traffic="pp=2")
    with pytest.raises(TypeError, match="plan must be a pgroups.Plan"):
        pgroups.place("tp=2", cluster)  # type: ignore[arg-type]
    py_cluster = tmp_path / "c.py"
    py_cluster.write_text("cluster = dict(gpus_per_node=4, nodes=2, levels={})\n")
    with pytest.raises(pgroups.ParseError, match="cluster.levels must be a list of dicts, found dict"):
        pgroups.place(dp_fastest(), py_cluster)
