"""pgroups.inprocess.PlanRankAssignment, called as nvidia-resiliency-ext's Wrapper calls its
rank assignment: on every rank, with the terminated ranks in the wrapper's current
numbering. Skips where nvidia-resiliency-ext is not installed (it has a virtual
environment of its own, .venv-resiliency)."""

import pytest

pytest.importorskip("nvidia_resiliency_ext")

from nvidia_resiliency_ext.inprocess.rank_assignment import RankAssignmentCtx, RankDiscarded  # noqa: E402
from nvidia_resiliency_ext.inprocess.state import Mode, State  # noqa: E402

import pgroups  # noqa: E402
from pgroups.inprocess import PlanRankAssignment  # noqa: E402


def tp_dp(dp, rank_map=None):
    return pgroups.Plan(mesh=pgroups.Mesh.from_order("tp-dp", tp=2, dp=dp), groups=["tp", "dp"], rank_map=rank_map)


def start(assignments, states, terminated):
    """One start of the wrapper: every surviving rank's assignment called with its state."""
    out = {}
    for launcher, state in states.items():
        if state.rank in terminated:
            with pytest.raises(RankDiscarded):
                assignments[launcher](RankAssignmentCtx(state, None, set(terminated)))
            continue
        ctx = assignments[launcher](RankAssignmentCtx(state, None, set(terminated)))
        assert ctx.terminated_ranks == set()
        out[launcher] = ctx.state
    return out


def first_start(plan, world):
    assignments = {r: PlanRankAssignment(plan) for r in range(world)}
    states = start(assignments, {r: State(rank=r, world_size=world) for r in range(world)}, set())
    return assignments, states


def test_at_the_first_start_the_plan_runs_on_the_launcher_ranks_and_the_rest_are_reserves():
    _, states = first_start(tp_dp(2), 6)
    assert [states[r].mode for r in range(6)] == [Mode.ACTIVE] * 4 + [Mode.INACTIVE] * 2
    assert [states[r].active_rank for r in range(6)] == [0, 1, 2, 3, None, None]
    assert {states[r].active_world_size for r in range(6)} == {4}


def test_a_loss_drops_the_whole_replica_and_keeps_its_healthy_rank_as_a_reserve():
    assignments, states = first_start(tp_dp(4), 8)
    states = start(assignments, states, {0})  # rank 0 too: the wrapper's store is held outside
    assert set(states) == set(range(1, 8))
    assert states[1].mode == Mode.INACTIVE and states[1].active_rank is None
    assert [states[r].active_rank for r in range(2, 8)] == [0, 1, 2, 3, 4, 5]
    assert {states[r].active_world_size for r in states} == {6}
    assert {states[r].world_size for r in states} == {7}
    assert assignments[2].plan.describe() == "W=6 mesh tp=2,dp=3 groups tp,dp"
    assert assignments[2].lost == {0}


def test_a_second_loss_in_the_wrapper_numbering_is_carried_back_to_the_launcher_ranks():
    assignments, states = first_start(tp_dp(4), 8)
    states = start(assignments, states, {0})
    # Launcher rank 5 is now the wrapper's rank 3: its loss drops replica dp=2 (ranks 4, 5).
    assert states[5].rank == 3
    states = start(assignments, states, {states[5].rank})
    assert assignments[2].lost == {0, 5}
    assert [states[r].active_rank for r in (2, 3, 6, 7)] == [0, 1, 2, 3]
    assert states[1].mode == states[4].mode == Mode.INACTIVE
    assert assignments[6].plan.describe() == "W=4 mesh tp=2,dp=2 groups tp,dp"
    assert assignments[6].recovery.rank_map == [2, 3, 6, 7]


def test_a_placed_plan_loses_the_replica_of_the_mesh_rank_the_lost_launcher_rank_runs():
    placed = [r // 2 + 4 * (r % 2) for r in range(8)]  # mesh rank tp + 2 dp on launcher rank dp + 4 tp
    assignments, states = first_start(tp_dp(4, placed), 8)
    states = start(assignments, states, {1})  # launcher rank 1 runs mesh rank 2: replica dp=1, with launcher 5
    assert states[5].mode == Mode.INACTIVE
    assert sorted(r for r in states if states[r].mode == Mode.ACTIVE) == [0, 2, 3, 4, 6, 7]


def test_every_rank_raises_the_same_error_when_no_layout_remains():
    assignments, states = first_start(tp_dp(1), 2)
    with pytest.raises(pgroups.ConfigError, match="pgroups.inprocess: .*no layout remains"):
        assignments[0](RankAssignmentCtx(states[0], None, {1}))


def test_a_plan_larger_than_the_wrapper_world_is_refused():
    with pytest.raises(pgroups.ConfigError, match="world size 8 is more than the wrapper's 4 ranks"):
        PlanRankAssignment(tp_dp(4))(RankAssignmentCtx(State(rank=0, world_size=4), None, set()))
