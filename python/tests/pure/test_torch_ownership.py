"""What pgroups' torch front doors decide without a world: which backend makes a
whole-world kind the default group, and that no assert guards anything (python -O)."""

import ast
import os

import pytest

pytest.importorskip("torch")

import pgroups.torch as pgt  # noqa: E402

PACKAGE = os.path.dirname(pgt.__file__)


@pytest.mark.parametrize("asked, default, expected", [
    (None, "nccl", True), ("nccl", "nccl", True), ("NCCL", "nccl", True), ("gloo", "gloo", True),
    ("gloo", "nccl", False), ("nccl", "gloo", False), ("mpi", "gloo", False),
])
def test_a_whole_world_kind_is_the_default_group_only_in_its_backend(asked, default, expected):
    assert pgt.world_is_default_group(asked, default) is expected


def test_no_assert_statement_in_the_package():
    found = []
    for name in sorted(os.listdir(PACKAGE)):
        if name.endswith(".py"):
            with open(os.path.join(PACKAGE, name), encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), name)
            found += [f"{name}:{node.lineno}" for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    assert found == [], f"assert statements vanish under python -O: {found}"
