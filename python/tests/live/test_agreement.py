"""The cross-rank agreement from Python under mpirun: an error one rank hits before the
agreement is raised on every rank, settings that naive text confuses mismatch, a file's
settings are overridden by the CLI's rule, and a timeout up to the cap works.

Every rank runs every test in the same order (each test is collective)."""

import datetime

import pytest
from mpi4py import MPI

import pgroups
from pgroups import ParallelContext, _pgroups

WORLD = MPI.COMM_WORLD
RANK = WORLD.Get_rank()
SIZE = WORLD.Get_size()
ALL = "rank 0" if SIZE == 1 else f"ranks 0-{SIZE - 1}"


def test_a_type_error_on_one_rank_is_raised_on_every_rank_naming_it():
    tensor = "2" if RANK == SIZE - 1 else 2
    with pytest.raises(TypeError, match=f"^rank {SIZE - 1} hit before the configuration agreement: "
                                        r"tensor must be an int, not '2' \(str\)$"):
        ParallelContext(tensor=tensor, timeout=60)


def test_an_invalid_value_on_one_rank_is_a_config_error_on_every_rank():
    device = -1 if RANK == 0 else None
    with pytest.raises(pgroups.ConfigError, match="^rank 0 hit before the configuration agreement: "
                                                  "device -1 is invalid: it must be at least 0$"):
        ParallelContext(device=device, timeout=60)
    # Nothing is left behind: the next context works.
    with ParallelContext(timeout=60) as ctx:
        assert ctx.world_size == SIZE


def test_a_missing_file_on_one_rank_is_raised_on_every_rank(tmp_path):
    path = tmp_path / ("missing.toml" if RANK == 1 else "present.toml")
    path.with_name("present.toml").write_text(f"[parallel]\nworld_size = {SIZE}\n")
    with pytest.raises(pgroups.IoError, match="^rank 1 hit before the configuration agreement: .*missing.toml"):
        ParallelContext(config=path, timeout=60)


def test_settings_that_naive_text_confuses_mismatch_on_every_rank():
    fields = [("a", "1"), ("b", "2")] if RANK == SIZE - 1 else [("a", "1 b=2")]
    with pytest.raises(pgroups.MismatchError, match=f"^configuration mismatch across {SIZE} ranks: "):
        _pgroups.agree(WORLD, _pgroups.encode_settings(fields), "configuration", 60.0)
    _pgroups.agree(WORLD, _pgroups.encode_settings([("a", "1")]), "configuration", 60.0)


def test_a_mode_over_a_2p5d_file_works_as_in_the_cli(tmp_path):
    # 2.5d with tensor = q * q * depth = 2 * 2 * 1 on SIZE ranks; a 2d override drops the depth.
    path = tmp_path / "2p5d.toml"
    path.write_text(f'[parallel]\nworld_size = {SIZE}\n[parallel.tensor]\nsize = 4\nmode = "2.5d"\ndepth = 1\n')
    with ParallelContext(config=path, mode="2d", timeout=60) as ctx:
        assert (ctx.plan.tensor_mode, ctx.plan.depth, ctx.tensor_parallel_size) == ("2d", None, 4)
        assert ctx.get_world_size("2d_row") == 2


def test_a_timeout_at_the_cap_works_and_just_over_it_fails_on_every_rank():
    cap = _pgroups.largest_timeout_seconds
    with ParallelContext(timeout=cap) as ctx:
        assert ctx.timeout == cap
    with ParallelContext(timeout=datetime.timedelta(minutes=2)) as ctx:
        assert ctx.timeout == 120.0
    with ParallelContext(timeout=0) as ctx:
        assert ctx.timeout == 0.0, "0 means no timeout"
    with pytest.raises(pgroups.ConfigError, match=f"^{ALL} hit before the configuration agreement: timeout "
                                                  "1000000001 is not a valid timeout: it must be at most"):
        ParallelContext(timeout=cap + 1)
