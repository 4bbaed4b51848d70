"""Errors: Python exceptions under pgroups.Error, carrying the C++ messages."""

import re

import pytest

import pgroups
from _support import invalid_cases, invalid_message, plan_of
from pgroups import Plan

INVALID = invalid_cases()


def test_hierarchy_mirrors_the_cpp_classes():
    for name in ["ConfigError", "ParseError", "IoError", "BackendError", "MismatchError", "TimeoutError",
                 "StateError"]:
        cls = getattr(pgroups, name)
        assert issubclass(cls, pgroups.Error), name
        assert cls.__doc__
    assert issubclass(pgroups.Error, RuntimeError)
    assert not issubclass(pgroups.ConfigError, pgroups.ParseError)


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c["note"])
def test_every_configuration_colossal_ai_rejects_raises_config_error(case):
    with pytest.raises(pgroups.ConfigError) as error:
        plan_of(case["config"])
    assert str(error.value) == invalid_message(case["note"])


def test_message_names_the_value_and_the_rule():
    with pytest.raises(pgroups.ConfigError, match="tensor size 8 is not a perfect square, required by mode 2d"):
        Plan(8, tensor=8, mode="2d")
    with pytest.raises(pgroups.ConfigError, match="world size 10 is not divisible by pipeline size 3"):
        Plan(10, pipeline=3)
    with pytest.raises(pgroups.ConfigError, match="mode 2.5d requires a depth"):
        Plan(8, tensor=8, mode="2.5d")


def test_unknown_tensor_mode_suggests_the_closest():
    with pytest.raises(pgroups.ConfigError, match=r"^unknown tensor mode '2D'; the mode must be one of none, 1d, 2d, "
                                                  r"2\.5d, 3d, sequence \(did you mean 2d\?\)$"):
        Plan(8, tensor=4, mode="2D")


def test_unknown_group_kind_names_the_closest_one():
    message = ("group kind '2d_rows' is not created for W=8 pipeline=1 tensor=4 mode=2d; the kinds are: global, "
               "data, model, tensor, 2d_row, 2d_col (did you mean 2d_row?)")
    with pytest.raises(pgroups.StateError, match=f"^{re.escape(message)}$"):
        Plan(8, tensor=4, mode="2d").groups("2d_rows")


def test_mode_the_plan_lacks_is_a_state_error():
    message = ("group kind '2d_row' is not created for W=8 pipeline=1 tensor=4 mode=1d; the kinds are: global, "
               "data, model, tensor, 1d")
    with pytest.raises(pgroups.StateError, match=f"^{re.escape(message)}$"):
        Plan(8, tensor=4, mode="1d").groups("2d_row")


def test_rank_out_of_range_is_a_config_error():
    with pytest.raises(pgroups.ConfigError, match=r"^rank 8 is outside the world of 8 ranks \(valid: 0\.\.7\)$"):
        Plan(8).group_of(8, "data")


def test_mode_of_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="ParallelMode"):
        Plan(8).groups(3)


def test_parse_error_names_file_line_and_column(write_config):
    path = write_config("bad.py", "import os\nparallel = dict(pipeline=2)\n")
    with pytest.raises(pgroups.ParseError, match=r"bad\.py:1:1"):
        Plan.from_config(path, world_size=8)


def test_missing_file_is_an_io_error(tmp_path):
    with pytest.raises(pgroups.IoError, match="missing.toml"):
        Plan.from_config(tmp_path / "missing.toml", world_size=8)


def test_config_without_world_size_says_how_to_give_one(write_config):
    path = write_config("c.toml", "[parallel]\npipeline = 2\n")
    message = ("world size is missing: give world_size= or world_size in the config file")
    with pytest.raises(pgroups.ConfigError, match=f"^{re.escape(message)}$"):
        Plan.from_config(path)


def test_all_errors_are_caught_by_the_root():
    with pytest.raises(pgroups.Error, match=r"^world size 0 is invalid: it must be a positive integer$"):
        Plan(0)
