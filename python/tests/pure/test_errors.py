"""Errors: Python exceptions under pgroups.Error, carrying the C++ messages."""

import json
import os
import pathlib

import pytest

import pgroups
from pgroups import Plan

DATA_DIR = pathlib.Path(os.environ.get("PGROUPS_TEST_DATA_DIR",
                                       pathlib.Path(__file__).resolve().parents[3] / "tests" / "data"))
INVALID = json.loads((DATA_DIR / "golden" / "invalid.json").read_text())


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
    c = case["config"]
    with pytest.raises(pgroups.ConfigError) as error:
        Plan(c["world_size"], pipeline=c["pipeline"], tensor=c["tensor"]["size"], mode=c["tensor"]["mode"],
             depth=c["tensor"].get("depth"))
    assert str(error.value)


def test_message_names_the_value_and_the_rule():
    with pytest.raises(pgroups.ConfigError, match="tensor size 8 is not a perfect square, required by mode 2d"):
        Plan(8, tensor=8, mode="2d")
    with pytest.raises(pgroups.ConfigError, match="world size 10 is not divisible by pipeline size 3"):
        Plan(10, pipeline=3)
    with pytest.raises(pgroups.ConfigError, match="mode 2.5d requires a depth"):
        Plan(8, tensor=8, mode="2.5d")


def test_unknown_tensor_mode_suggests_the_closest():
    with pytest.raises(pgroups.ConfigError, match="'2D'") as error:
        Plan(8, tensor=4, mode="2D")
    assert "2d" in str(error.value)


def test_unknown_group_kind_names_the_closest_one():
    with pytest.raises(pgroups.StateError, match="2d_rows") as error:
        Plan(8, tensor=4, mode="2d").groups("2d_rows")
    assert "2d_row" in str(error.value).replace("2d_rows", "")


def test_mode_the_plan_lacks_is_a_state_error():
    with pytest.raises(pgroups.StateError, match="2d_row"):
        Plan(8, tensor=4, mode="1d").groups("2d_row")


def test_rank_out_of_range_is_a_config_error():
    with pytest.raises(pgroups.ConfigError, match="8"):
        Plan(8).group_of(8, "data")


def test_mode_of_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="ParallelMode"):
        Plan(8).groups(3)


def test_parse_error_names_file_line_and_column(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("import os\nparallel = dict(pipeline=2)\n")
    with pytest.raises(pgroups.ParseError, match=r"bad\.py:1:1"):
        Plan.from_config(path, world_size=8)


def test_missing_file_is_an_io_error(tmp_path):
    with pytest.raises(pgroups.IoError, match="missing.toml"):
        Plan.from_config(tmp_path / "missing.toml", world_size=8)


def test_config_without_world_size_says_how_to_give_one(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[parallel]\npipeline = 2\n")
    with pytest.raises(pgroups.ConfigError, match="world_size="):
        Plan.from_config(path)


def test_all_errors_are_caught_by_the_root():
    with pytest.raises(pgroups.Error):
        Plan(0)
