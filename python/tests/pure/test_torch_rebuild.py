"""How recover forms the new world: eager gloo whatever TORCH_GLOO_LAZY_INIT says, and the
caller's setting back afterwards (tests/live/test_torch_recovery.py checks the pairs)."""

import os

import pytest

pytest.importorskip("torch")

from pgroups._torch_rebuild import eager_gloo  # noqa: E402

LAZY = "TORCH_GLOO_LAZY_INIT"


@pytest.mark.parametrize("outside", ["1", "true"])
def test_gloo_groups_are_formed_eager_inside_and_lazy_again_after(monkeypatch, outside):
    monkeypatch.setenv(LAZY, outside)
    with eager_gloo("gloo"):
        assert os.environ[LAZY] == "0"
    assert os.environ[LAZY] == outside


def test_the_setting_comes_back_when_the_forming_raises(monkeypatch):
    monkeypatch.setenv(LAZY, "1")
    with pytest.raises(RuntimeError), eager_gloo("gloo"):
        raise RuntimeError("the new world did not form")
    assert os.environ[LAZY] == "1"


def test_an_unset_variable_stays_unset(monkeypatch):
    monkeypatch.delenv(LAZY, raising=False)
    with eager_gloo("gloo"):
        assert LAZY not in os.environ
    assert LAZY not in os.environ


def test_a_device_backend_is_left_as_the_caller_set_it(monkeypatch):
    monkeypatch.setenv(LAZY, "1")
    with eager_gloo("nccl"):
        assert os.environ[LAZY] == "1"
