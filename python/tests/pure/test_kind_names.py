"""The one word for a group kind: "kinds"/"group_size" in every JSON the package returns
(the deprecated "modes"/"world_size" beside them, holding the same), and kind=/kinds=
parameters, whose old spellings mode=/modes= still work under a DeprecationWarning."""

import warnings

import pytest

from pgroups import Plan
from pgroups._renamed import renamed_keywords


def _plans():
    return (Plan(16, pipeline=2, tensor=8, mode="2.5d", depth=2), Plan(mesh={"tp": 2, "pp": 2}, groups=["tp", "pp", "embd"]))


def test_plan_json_has_kinds_and_group_size_and_the_old_keys_hold_the_same():
    for plan in _plans():
        data = plan.to_dict()
        assert data["schema_version"] == 2
        assert data["kinds"] == data["modes"]
        for name, entry in data["kinds"].items():
            assert entry["group_size"] == entry["world_size"], name
            size = plan.group_size(name)
            assert set(entry["group_size"]) <= {size, None}, name


def test_locality_json_has_kinds_beside_modes():
    for plan in _plans():
        data = plan.locality(2, format="json")
        assert data["kinds"] == data["modes"]
        assert set(data["kinds"]) == set(plan.group_kinds)


def test_mode_keyword_warns_naming_kind_and_answers_the_same():
    plan = Plan(8, pipeline=2, tensor=2)
    with pytest.warns(DeprecationWarning, match=r"group_size\(mode=\.\.\.\) is deprecated: use kind="):
        old = plan.group_size(mode="tensor")
    assert old == plan.group_size(kind="tensor") == plan.group_size("tensor") == 2
    with pytest.warns(DeprecationWarning, match="use kind="):
        assert plan.local_rank(3, mode="tensor") == plan.local_rank(3, kind="tensor")
    with pytest.warns(DeprecationWarning, match="use kind="):
        assert plan.groups(mode="pipe") == plan.groups(kind="pipe")


def test_new_keyword_does_not_warn():
    plan = Plan(8, pipeline=2, tensor=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plan.group_of(1, kind="tensor") == [0, 1]
        assert plan.has_kind(kind="data")


def test_old_and_new_keyword_together_is_a_type_error_naming_both():
    plan = Plan(8, pipeline=2, tensor=2)
    with pytest.raises(TypeError, match=r"got both kind= and its deprecated spelling mode="):
        plan.group_size(kind="tensor", mode="tensor")


def test_renamed_keywords_maps_any_old_name_given():
    @renamed_keywords(modes="kinds")
    def pick(*, kinds=None):
        return kinds

    with pytest.warns(DeprecationWarning, match=r"pick\(modes=\.\.\.\) is deprecated: use kinds="):
        assert pick(modes=["tp"]) == ["tp"]
    assert pick(kinds=["dp"]) == ["dp"]


def test_torch_create_groups_and_recover_take_kinds():
    torch = pytest.importorskip("torch")
    del torch
    import inspect

    import pgroups.torch as pgt
    assert "kinds" in inspect.signature(pgt.create_groups).parameters
    assert "modes" not in inspect.signature(pgt.create_groups).parameters
    assert "kinds" in inspect.signature(pgt.recover).parameters


def test_the_docs_table_of_kind_names_is_the_header_the_enum_and_the_bound_list():
    import pathlib
    import re

    from pgroups import ParallelMode, _pgroups

    root = pathlib.Path(__file__).resolve().parents[3]
    page = (root / "docs/reference/seed-api.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \|$", page, flags=re.M)
    header = (root / "include/pgroups/layout/parallel_mode.hpp").read_text()
    body = re.search(r"enum class ParallelMode : std::uint8_t \{(.*?)\};", header, flags=re.S)
    assert body, "parallel_mode.hpp: no enum class ParallelMode"
    enumerators = re.findall(r"(\w+),", body.group(1))
    # The three are in creation order, so the table's rows line up with each.
    assert [value for value, _, _ in rows] == list(_pgroups.mode_names)
    assert [cpp for _, cpp, _ in rows] == enumerators
    assert [(member, value) for value, _, member in rows] == [(m.name, m.value) for m in ParallelMode]


def test_old_method_names_answer_the_same_with_a_warning():
    plan = Plan(8, pipeline=2, tensor=2)
    with pytest.warns(DeprecationWarning, match=r"has_mode\(\) is deprecated: use has_kind\(\)"):
        assert plan.has_mode("pipe") == plan.has_kind("pipe") is True
