"""User sizes and options that do not apply (docs/reference/errors.md, "Input rules") as Python sees them: the C++ rules bound by the package."""

import pytest

import pgroups
from pgroups import Mesh, Plan


@pytest.mark.parametrize(
    "name,text",
    [
        ("z.toml", "[parallel]\nworld_size = 0\n"),
        ("z.json", '{"parallel": {"world_size": 0}}\n'),
        ("z.py", "parallel = dict(world_size=0)\n"),
    ],
)
def test_zero_world_size_in_a_config_file_is_a_config_error(write_config, name, text):
    path = write_config(name, text)
    with pytest.raises(pgroups.ConfigError, match=r"parallel\.world_size 0 is invalid: it must be a positive integer"):
        Plan.from_config(path)


def test_a_dimension_named_twice_in_mesh_groups_is_the_layouts_error():
    mesh = Mesh({"tp": 2, "dp": 2})
    with pytest.raises(pgroups.ConfigError, match=r"^dimension 'tp' appears twice in group 'tp-dp-tp'$"):
        mesh.groups(["tp", "dp", "tp"])
