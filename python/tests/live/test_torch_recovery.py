"""pgroups.torch.recover on real gloo processes: a worker SIGKILLed after its groups were
made, the survivors agreeing through the parent's store and rebuilding every kind of the
survivors' plan, or all raising the same error when no layout remains; with
TORCH_GLOO_LAZY_INIT set and unset, with and without heartbeats. torch 2.x only."""

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


def run(world, mesh, groups, kill, lazy=False, heartbeat=True, timeout=6.0):
    from torch.distributed import TCPStore

    store = TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=60))
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    env.pop("TORCH_GLOO_LAZY_INIT", None)
    if lazy:
        env["TORCH_GLOO_LAZY_INIT"] = "1"
    extra = [] if heartbeat else ["--no-heartbeat"]
    procs = [subprocess.Popen([sys.executable, str(WORKER), "--rank", str(r), "--world", str(world), "--port",
                               str(store.port), "--mesh", mesh, "--groups", groups, "--kill", str(kill),
                               "--timeout", str(timeout), *extra], env=env, stdout=subprocess.PIPE, text=True)
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
    assert results[0]["generation"] == results[2]["generation"] == 1


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
