"""pgroups.torch.recover on real gloo processes: a worker SIGKILLed after its groups were
made, the survivors agreeing through the parent's store and rebuilding every kind of the
survivors' plan, or all raising the same error when no layout remains; with
TORCH_GLOO_LAZY_INIT set and unset, with and without heartbeats; the device path on torch's
fake backend (the calls and their timeouts). torch 2.x only."""

import datetime
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest
import torch

pytestmark = pytest.mark.skipif(int(torch.__version__.split(".")[0]) < 2, reason="recover needs torch 2.x")

WORKER = pathlib.Path(__file__).with_name("recovery_worker.py")
CALLS_WORKER = pathlib.Path(__file__).with_name("recovery_calls_worker.py")


def run(world, mesh, groups, kill, lazy=False, heartbeat=True, timeout=6.0, recover_timeout=None):
    extra = ["--mesh", mesh, "--groups", groups] + ([] if heartbeat else ["--no-heartbeat"])
    if recover_timeout is not None:
        extra += ["--recover-timeout", str(recover_timeout)]
    return run_workers(WORKER, world, kill, timeout, extra, lazy)


def run_workers(worker, world, kill, timeout, extra, lazy=False):
    """Starts ``world`` workers over a store of this process's; their last JSON lines by
    rank, but the killed one's, which must have died by SIGKILL."""
    from torch.distributed import TCPStore

    store = TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=60))
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    env.pop("TORCH_GLOO_LAZY_INIT", None)
    if lazy:
        env["TORCH_GLOO_LAZY_INIT"] = "1"
    procs = [subprocess.Popen([sys.executable, str(worker), "--rank", str(r), "--world", str(world), "--port",
                               str(store.port), "--kill", str(kill), "--timeout", str(timeout), *extra], env=env,
                              stdout=subprocess.PIPE, text=True)
             for r in range(world)]
    start = time.monotonic()
    results = {}
    for r, proc in enumerate(procs):
        out, _ = proc.communicate(timeout=120)
        if r == kill:
            assert proc.returncode == -9
            continue
        assert proc.returncode == 0, out
        results[r] = json.loads(out.strip().splitlines()[-1])
    return results, time.monotonic() - start


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_survivors_rebuild_every_kind_of_the_new_plan(lazy):
    # dp=2 x pp=2 (dp fastest): rank 3 is dp 1, pp 1; replica dp=1 is {1, 3}, so 1 is a spare.
    results, _ = run(4, "dp=2,pp=2", "dp,pp,dp-pp", kill=3, lazy=lazy)
    assert results[1]["fate"] == "spare" and results[1]["new_rank"] is None
    for r in (0, 2):
        got = results[r]
        assert got["fate"] == "active"
        assert got["rank_map"] == [0, 2] and got["spares"] == [1] and got["world"] == 2
        assert got["step"] == 7  # the least step the survivors completed
        assert got["members"] == {"dp": [r], "pp": [0, 2], "dp-pp": [0, 2]}
        assert got["sums"] == {"dp": float(r), "pp": 2.0, "dp-pp": 2.0}
        # The new world's pairs connected when recover returned, lazy gloo or not: its one
        # pair (pp and dp-pp are the whole new world, so its default group; dp has no peer).
        assert len(got["new_connections"]) == 1, got["new_connections"]
        # And the old world's connections closed: recover aborted every old group.
        assert got["old_connections_left"] == {}
    assert results[0]["generation"] == results[2]["generation"] == 1


def test_a_recovery_with_no_timeout_decides_when_the_dead_ranks_heartbeat_stops():
    # 0 means no limit, as everywhere in pgroups: the survivors decide by the heartbeats alone.
    results, _ = run(4, "dp=2,pp=2", "dp,pp,dp-pp", kill=3, recover_timeout=0)
    assert results[1]["fate"] == "spare"
    assert [results[r]["fate"] for r in (0, 2)] == ["active", "active"]
    assert results[0]["rank_map"] == [0, 2]


def test_every_survivor_raises_the_same_error_when_no_layout_remains():
    results, elapsed = run(4, "tp=4,dp=1", "tp,dp", kill=2)
    messages = {results[r]["message"] for r in (0, 1, 3)}
    assert {results[r]["error"] for r in (0, 1, 3)} == {"ConfigError"}
    assert len(messages) == 1
    assert "no layout remains: every replica of dp lost a rank (dp=0: lost rank 2)" in messages.pop()


def test_without_heartbeats_the_timeout_decides():
    results, _ = run(4, "tp=2,dp=2", "tp,dp", kill=0, heartbeat=False, timeout=4.0)
    assert results[1]["fate"] == "spare"
    assert results[2]["rank_map"] == results[3]["rank_map"] == [2, 3]
    assert results[2]["members"]["tp"] == [2, 3]


# The device path (_torch_rebuild) on torch's fake backend, standing in for NCCL: tp=2 x dp=2
# x pp=2, rank 7 lost, so replica dp=1 (ranks 2, 3, 6, 7) goes and ranks 0, 1, 4, 5 are
# the new world 0-3. Its kinds are split from the new default group, one split_group per
# distinct partition, within the timeout that is left.
SPLITS = [[[0, 1], [2, 3]], [[0, 2], [1, 3]]]


def _check_splits(calls, timeout):
    assert [call[:2] for call in calls] == [["split_group", ranks] for ranks in SPLITS]
    assert all(0 < call[2] <= timeout for call in calls)


@pytest.mark.parametrize("shrink", ["all", "none", "even"])
def test_on_a_device_backend_the_world_is_shrunk_only_when_every_survivor_can(shrink):
    results, elapsed = run_workers(CALLS_WORKER, 8, 7, 6.0, ["--shrink", shrink])
    for spare in (2, 3, 6):
        assert results[spare]["fate"] == "spare" and results[spare]["calls"] == [["abort_world"]]
    for new_rank, old in enumerate((0, 1, 4, 5)):
        got = results[old]
        assert got["fate"] == "active" and got["world"] == [new_rank, 4]
        assert got["members"]["tp"] == [2 * (new_rank // 2), 2 * (new_rank // 2) + 1]
        if shrink == "all":  # the old world kept and shrunk, SHRINK_ABORT: no new rendezvous
            assert got["calls"][0] == ["shrink_group", [2, 3, 6, 7], 1]
        else:  # one survivor could not: every one aborts its world and makes a new one
            assert got["calls"][:2] == [["abort_world"], ["init_process_group", "fake", new_rank, 4, 6.0, None]]
        _check_splits(got["calls"][1 if shrink == "all" else 2:], 6.0)
    assert elapsed < 60
