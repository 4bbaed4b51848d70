"""pgroups.torch.init_process_group's attempt prefix and its refusals (no group is made:
every case here fails before torch's rendezvous, or names the prefix alone)."""

import threading
import time

import pytest

pytest.importorskip("torch")

import pgroups  # noqa: E402
import pgroups.torch as pgt  # noqa: E402


def _agree(store, sizes, delays=None):
    """Every rank of `sizes` (rank -> its world size) agrees through `store`, as threads."""
    results = {}

    def rank_main(rank):
        time.sleep((delays or {}).get(rank, 0.0))
        try:
            results[rank] = pgt.attempt_prefix(store, rank, sizes[rank], timeout=10)
        except Exception as error:  # noqa: BLE001 - the test judges each rank's outcome
            results[rank] = error

    threads = [threading.Thread(target=rank_main, args=(rank,)) for rank in sizes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_every_rank_of_an_attempt_gets_one_prefix_and_the_next_attempt_the_next():
    import torch.distributed as dist

    store = dist.HashStore()
    assert _agree(store, {0: 3, 1: 3, 2: 3}) == {r: "pgroups/attempt1/" for r in range(3)}
    # rank 0 last: the others must wait for its attempt, not take the one before
    assert _agree(store, {0: 3, 1: 3, 2: 3}, {0: 0.3}) == {r: "pgroups/attempt2/" for r in range(3)}


def test_a_world_size_other_than_rank_0s_is_refused_naming_both():
    import torch.distributed as dist

    results = _agree(dist.HashStore(), {0: 2, 1: 3})
    assert results[0] == "pgroups/attempt1/"
    assert isinstance(results[1], pgroups.ConfigError)
    assert str(results[1]) == "WORLD_SIZE is 3 on rank 1 but 2 on rank 0: every rank of one job gives the same"


def test_a_rank_past_the_world_is_refused_before_the_store_is_asked():
    with pytest.raises(pgroups.ConfigError, match="rank 4 is invalid"):
        pgt.attempt_prefix(None, 4, 4)


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
