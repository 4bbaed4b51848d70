"""Errors: Python exceptions under pgroups.Error, carrying the C++ messages."""

import os
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


def test_an_empty_config_path_is_an_io_error_as_for_the_cli():
    with pytest.raises(pgroups.IoError, match=r"^the configuration file path is empty: name a \.toml"):
        Plan.from_config("", world_size=8)


def test_a_config_path_with_a_nul_is_an_io_error_not_the_file_before_it(write_config):
    path = write_config("c.toml", "[parallel]\npipeline = 2\n")
    with pytest.raises(pgroups.IoError, match=r"holds a NUL byte, which no file name can$"):
        Plan.from_config(str(path) + "\0.json", world_size=8)


def test_an_io_error_for_an_odd_path_has_its_escaped_message(tmp_path):
    # A name that is not UTF-8 reaches Python as surrogates; the message still names it.
    odd = os.fsdecode(bytes(tmp_path) + b"/r\xff.toml")
    with pytest.raises(pgroups.IoError) as caught:
        Plan.from_config(odd, world_size=8)
    assert str(caught.value).endswith("/r\\xff.toml' does not exist")


def test_unknown_top_level_keys_of_toml_and_json_name_the_key(write_config):
    toml = write_config("c.toml", "world_size = 8\n[parallel]\npipeline = 2\n")
    with pytest.raises(pgroups.ParseError, match=r"c\.toml:1:1: unknown top-level key 'world_size'.*under \[parallel\]"):
        Plan.from_config(toml)
    json_file = write_config("c.json", '{"parallel": {"pipeline": 2}, "gpus_per_node": 4}')
    with pytest.raises(pgroups.ParseError, match=r"unknown top-level key 'gpus_per_node'"):
        Plan.from_config(json_file, world_size=8)
    # A Colossal-AI .py config keeps a training run's other keys.
    python = write_config("c.py", "BATCH = 8\nparallel = dict(pipeline=2)\n")
    assert Plan.from_config(python, world_size=8).pipeline_size == 2


def test_config_without_world_size_says_how_to_give_one(write_config):
    path = write_config("c.toml", "[parallel]\npipeline = 2\n")
    message = ("world size is missing: give world_size= or world_size in the config file")
    with pytest.raises(pgroups.ConfigError, match=f"^{re.escape(message)}$"):
        Plan.from_config(path)


def test_all_errors_are_caught_by_the_root():
    with pytest.raises(pgroups.Error, match=r"^world size 0 is invalid: it must be a positive integer$"):
        Plan(0)
