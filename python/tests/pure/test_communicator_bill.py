"""Plan.communicators: the communicator bill (docs/using/context.md, "Communicator economy"), bound from C++, equal to explain's."""

import json

import pytest

from _support import CLI, run_cli
from pgroups import Plan

MESH = {"tp": 8, "cp": 1, "ep": 1, "dp": 16, "pp": 8}
GROUPS = ["tp", "cp", "ep", "dp", "pp", "tp-pp", "tp-dp", "dp-cp", "tp-cp", "embd"]


def megatron_plan():
    return Plan(1024, mesh=list(MESH.items()), groups=GROUPS)


def test_first_stage_rank_creates_seven_and_middle_stage_rank_six():
    plan = megatron_plan()
    assert plan.communicators(5) == {"kinds": 10, "distinct": 6, "singletons": 2, "created": 7}
    assert plan.communicators(300)["created"] == 6
    assert plan.communicators() == plan.communicators(0)


def test_nccl_adds_the_estimate_and_sharing_off_counts_every_kind():
    plan = megatron_plan()
    bill = plan.communicators(5, backend="nccl")
    assert bill["nccl_created"] == 7 and bill["estimated_nccl_mib"] > 0
    assert plan.communicators(5, share=False)["created"] == 9


def test_unknown_backend_is_a_config_error_naming_it():
    import pgroups
    with pytest.raises(pgroups.ConfigError, match="backend 'gloo' is unknown"):
        megatron_plan().communicators(0, backend="gloo")


@pytest.mark.skipif(not CLI, reason="PGROUPS_CLI is not set (the CLI was not built)")
def test_equals_explain_json():
    mesh = ",".join(f"{k}={v}" for k, v in MESH.items())
    out = run_cli("explain", "-w", "1024", "-r", "5", "--mesh", mesh, "--group", ",".join(GROUPS), "--format",
                  "json").stdout
    assert json.loads(out)["communicators"] == megatron_plan().communicators(5)
