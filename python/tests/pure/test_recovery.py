"""Plan.after_loss: the survivors' plan, rank map and spares from the C++ Recovery, the same
JSON as `pgroups plan --lost`, and the C++ messages for bad input."""

import json

import pytest

import pgroups
from _support import CLI, run_cli
from pgroups import Plan


def mesh_plan():
    return Plan(mesh={"tp": 2, "dp": 4, "pp": 2}, groups=["tp", "dp", "pp", "tp-dp"])


def test_loss_in_one_replica_drops_it_and_keeps_the_other_replicas_groups():
    before = mesh_plan()
    recovery = before.after_loss([3])
    after = recovery.plan
    assert after.world_size == 12
    assert after.data_parallel_size == 3
    assert recovery.shrink_dim == "dp"
    assert recovery.rank_map == [0, 1, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15]
    assert recovery.spares == [2, 10, 11]
    assert recovery.lost == [3]
    assert recovery.fate(10) == "spare" and recovery.fate(3) == "lost" and recovery.fate(12) == "active"
    assert recovery.new_rank(12) == 8 and recovery.new_rank(2) is None
    old_groups = {kind: before.groups(kind) for kind in ("tp", "pp")}
    for kind, groups in old_groups.items():
        for group in after.groups(kind):
            assert [recovery.rank_map[r] for r in group] in groups


def test_several_replicas_and_a_preset():
    recovery = Plan(16, pipeline=2, tensor=2).after_loss([5, 14])
    assert recovery.plan.world_size == 8
    assert recovery.rank_map == [0, 1, 2, 3, 8, 9, 10, 11]
    assert recovery.dropped_replicas == [1, 3]
    assert recovery.bill()["ranks"] == {"active": 8, "spare": 6, "lost": 2, "joined": 0, "renumbered": 4}


def test_alive_past_the_world_joins_and_shrink_names_another_dimension():
    recovery = Plan(8, pipeline=2).after_loss(alive=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert recovery.plan.world_size == 10 and recovery.spares == [10] and recovery.joining == [8, 9, 10]
    shrunk = Plan(mesh={"tp": 4, "dp": 2, "pp": 2}).after_loss(range(8, 16), shrink="pp")
    assert shrunk.plan.pipeline_size == 1 and shrunk.rank_map == list(range(8))


def test_every_replica_lost_is_the_cpp_error():
    with pytest.raises(pgroups.ConfigError, match=r"no layout remains: every replica of dp lost a rank \(dp=0: lost rank 0; dp=1: lost rank 3\)"):
        Plan(mesh={"tp": 2, "dp": 2}).after_loss([0, 3])


@pytest.mark.parametrize("call, message", [
    (lambda p: p.after_loss([16]), "lost rank 16 is outside the world of 16 ranks"),
    (lambda p: p.after_loss([1, 1]), "rank 1 is listed twice as lost"),
    (lambda p: p.after_loss([1], shrink="pd"), "shrinking dimension 'pd' is not a dimension of the mesh"),
    (lambda p: p.after_loss(joining=[3]), "joining rank 3 is not a new process"),
])
def test_bad_input_names_the_value(call, message):
    with pytest.raises(pgroups.ConfigError, match=message):
        call(mesh_plan())


def test_types_are_checked():
    with pytest.raises(TypeError):
        mesh_plan().after_loss(["3"])
    with pytest.raises(ValueError):
        mesh_plan().after_loss([1], alive=[0])


def test_two_to_the_forty_ranks_answers_at_once_and_refuses_the_list():
    recovery = Plan(2 ** 40, pipeline=8, tensor=8).after_loss([5])
    assert recovery.plan.world_size == 2 ** 40 - 64
    assert recovery.old_rank(0) == 64
    assert recovery.spare_count == 63
    with pytest.raises(pgroups.ConfigError, match="too large to list"):
        recovery.rank_map


@pytest.mark.skipif(not CLI, reason="PGROUPS_CLI is not set (the CLI was not built)")
def test_json_is_the_clis():
    recovery = mesh_plan().after_loss([3, 12])
    out = run_cli("plan", "--mesh", "tp=2,dp=4,pp=2", "--group", "tp,dp,pp,tp-dp", "--lost", "3,12", "--format", "json")
    assert json.loads(out.stdout) == json.loads(recovery.to_json())
    assert "dropped dp=1" in str(recovery)


def test_placed_plan_loses_the_replica_of_the_launcher_rank_and_maps_back_to_old_groups():
    before = Plan(mesh={"tp": 2, "dp": 4}, rank_map=[0, 4, 1, 5, 2, 6, 3, 7])
    recovery = before.after_loss([3])  # launcher rank 3 runs mesh rank 6: dp=3
    assert recovery.plan.rank_map is None
    assert recovery.dropped_replicas == [3]
    assert recovery.rank_map == [0, 4, 1, 5, 2, 6]
    assert recovery.spares == [7]
    for group in recovery.plan.groups("tp"):
        assert [recovery.rank_map[r] for r in group] in before.groups("tp")
    assert json.loads(recovery.to_json())["rank_map"] == recovery.rank_map
    joined = Plan(mesh={"tp": 2, "dp": 2}, rank_map=[0, 2, 1, 3]).after_loss(alive=[0, 2, 3, 4, 5])
    assert joined.rank_map == [0, 2, 4, 5]
    assert joined.spares == [3]


def test_what_if_node_is_the_clis_and_each_class_is_the_recovery_of_its_first_node():
    plan = Plan(mesh={"tp": 2, "dp": 4, "pp": 2}, gpus_per_node=4)
    what_if = plan.what_if("node")
    cli = json.loads(run_cli("plan", "--mesh", "tp=2,dp=4,pp=2", "--gpus-per-node", "4", "--what-if", "node",
                             "--format", "json").stdout)
    assert what_if == cli["what_if"]
    (only,) = what_if["classes"]
    assert (only["nodes"], only["dropped"], only["new_size"], only["spares"]) == (4, 2, 2, 4)
    first = plan.after_loss(range(only["first_node"] * 4, only["first_node"] * 4 + 4))
    assert first.plan.world_size == 8 and first.spares == [8, 9, 10, 11]
    with pytest.raises(pgroups.ConfigError, match="gpus_per_node"):
        Plan(mesh={"tp": 2, "dp": 4}).what_if("node")


def test_resized_gives_whole_replicas_of_the_new_world_and_the_rest_are_spares():
    plan = pgroups.Plan(mesh=pgroups.Mesh({"tp": 2, "dp": 4, "pp": 2}))
    fewer = plan.resized(13)
    assert fewer.world_size == 12  # ranks 12.. are spares
    assert fewer.mesh.dims["dp"] == 3
    assert plan.resized(24).mesh.dims["dp"] == 6
    assert plan.resized(12, shrink="pp").world_size == 8
    with pytest.raises(pgroups.ConfigError, match="a world of 3 ranks holds no whole replica of dp"):
        plan.resized(3)
