"""Launcher variables through the one C++ environment reader: a malformed LOCAL_RANK is
refused in the words `pgroups info` warns with and nccl::choose_device refuses with."""

import pytest

import pgroups
from pgroups import _pgroups

RULE = "is malformed: it must be a non-negative decimal integer (digits only) that fits in 64 bits"


@pytest.mark.parametrize("text", ["abc", "-1", "-0", "+1", " 1", "99999999999999999999"])
def test_a_malformed_local_rank_is_a_config_error_naming_the_variable_the_value_and_the_rule(monkeypatch, text):
    monkeypatch.setenv("LOCAL_RANK", text)
    with pytest.raises(pgroups.ConfigError) as raised:
        _pgroups.environment_count("LOCAL_RANK")
    assert str(raised.value) == f"environment variable LOCAL_RANK='{text}' {RULE}"


def test_unset_and_empty_are_not_given_and_digits_are_read(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert _pgroups.environment_count("LOCAL_RANK") is None
    monkeypatch.setenv("LOCAL_RANK", "")
    assert _pgroups.environment_count("LOCAL_RANK") is None
    monkeypatch.setenv("LOCAL_RANK", "7")
    assert _pgroups.environment_count("LOCAL_RANK") == 7
