"""pgroups.torch.init_process_group's attempt prefix and its refusals (no group is made:
every case here fails before torch's rendezvous, or names the prefix alone)."""

import pytest

pytest.importorskip("torch")

import pgroups  # noqa: E402
import pgroups.torch as pgt  # noqa: E402


def test_the_attempt_prefix_holds_the_restart_count_and_the_world_size(monkeypatch):
    monkeypatch.setenv("TORCHELASTIC_RESTART_COUNT", "3")
    monkeypatch.setenv("WORLD_SIZE", "8")
    assert pgt.attempt_prefix() == "pgroups/attempt3/world8/"
    assert pgt.attempt_prefix(4) == "pgroups/attempt3/world4/"


def test_outside_torchrun_the_attempt_is_0(monkeypatch):
    monkeypatch.delenv("TORCHELASTIC_RESTART_COUNT", raising=False)
    assert pgt.attempt_prefix(2) == "pgroups/attempt0/world2/"


def test_a_malformed_restart_count_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv("TORCHELASTIC_RESTART_COUNT", "two")
    with pytest.raises(pgroups.ConfigError, match="TORCHELASTIC_RESTART_COUNT"):
        pgt.attempt_prefix(2)


def test_without_a_store_or_torchrun_the_missing_variables_are_named(monkeypatch):
    for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(pgroups.StateError, match="MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE not set"):
        pgt.init_process_group("gloo")


def test_a_store_without_rank_and_world_size_is_refused():
    import torch.distributed as dist

    with pytest.raises(pgroups.ConfigError, match="needs rank and world_size"):
        pgt.init_process_group("gloo", store=dist.HashStore())


def test_a_rank_past_the_world_is_refused_naming_both():
    import torch.distributed as dist

    with pytest.raises(pgroups.ConfigError, match="rank 4 is invalid: a rank must be below the world size 4"):
        pgt.init_process_group("gloo", store=dist.HashStore(), rank=4, world_size=4)
