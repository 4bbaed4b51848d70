"""Python takes Python's types: every entry point checks its arguments by pgroups._checks,
so that a wrong type is a TypeError and a wrong value a ConfigError, each naming the
argument and the value; never int()/bool() coercion, never a pybind11 signature dump."""

import datetime
import math

import numpy
import pytest
from hypothesis import given, settings, strategies as st

import pgroups
from pgroups import Mesh, Plan, _pgroups
from pgroups._checks import check_bool, check_int, check_timeout, check_token, check_tokens

# Values that are not ints, though int() would take most of them.
NOT_INTS = st.one_of(
    st.booleans(), st.floats(allow_nan=True), st.text(max_size=5), st.just(numpy.bool_(True)),
    st.just(numpy.float64(2.0)), st.just("4"), st.just(b"4"), st.lists(st.integers(), max_size=2),
    st.just(2.0), st.just(complex(2, 0)))
INTEGERS = st.one_of(st.integers(min_value=-2**40, max_value=2**40),
                     st.sampled_from([numpy.int8(2), numpy.int32(4), numpy.int64(8), numpy.uint16(2)]))


def assert_named(error, name, value):
    text = str(error.value)
    assert name in text and "incompatible function arguments" not in text, text
    assert repr(value)[:20] in text or str(value)[:20] in text, text


@given(NOT_INTS)
def test_check_int_refuses_every_other_type_naming_argument_and_value(value):
    with pytest.raises(TypeError) as error:
        check_int("tensor", value)
    assert_named(error, "tensor", value)


@given(INTEGERS)
def test_check_int_takes_ints_and_numpy_integers_as_exact_ints(value):
    result = check_int("tensor", value)
    assert type(result) is int and result == int(value)


def test_check_int_minimum_and_none():
    assert check_int("device", None, allow_none=True) is None
    with pytest.raises(TypeError, match="device must be an int, not None"):
        check_int("device", None)
    with pytest.raises(pgroups.ConfigError, match=r"^world_size 0 is invalid: it must be at least 1$"):
        check_int("world_size", 0, minimum=1)


@given(st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none(), st.just(numpy.int64(1))))
def test_check_bool_takes_only_bools(value):
    with pytest.raises(TypeError, match="^flag must be a bool"):
        check_bool("flag", value)


def test_check_bool_takes_numpy_bools():
    assert check_bool("flag", numpy.bool_(True)) is True
    assert check_bool("flag", False) is False


def test_a_bare_string_is_no_list_of_tokens_but_a_dashed_token_is_one_token():
    with pytest.raises(TypeError, match=r"groups must be a list of tokens, not the string 'tp': write \['tp'\]"):
        check_tokens("groups", "tp")
    assert check_tokens("groups", ("tp", "tp-dp")) == ["tp", "tp-dp"]
    assert check_token("kind", "tp-dp") == "tp-dp"
    with pytest.raises(pgroups.ConfigError, match=r"groups\[1\] '' is invalid: a token must not be empty"):
        check_tokens("groups", ["tp", ""])
    with pytest.raises(TypeError, match=r"groups\[0\] must be a string token"):
        check_tokens("groups", [3])


# Timeouts: one cap and one "0 means none" rule, both C++'s.
def test_timeouts_are_seconds_or_timedeltas_and_zero_means_none():
    assert check_timeout("timeout", 0) is None
    assert check_timeout("timeout", 0.0) is None
    assert check_timeout("timeout", datetime.timedelta(0)) is None
    assert check_timeout("timeout", 2) == 2.0
    assert check_timeout("timeout", datetime.timedelta(minutes=1, milliseconds=500)) == 60.5
    assert check_timeout("timeout", 0.0001) == 0.001, "rounded up, never to no timeout"
    assert check_timeout("timeout", numpy.int64(3)) == 3.0


def test_a_timeout_at_the_cap_works_and_just_over_it_is_a_config_error():
    cap = _pgroups.largest_timeout_seconds
    assert cap == 1e9
    assert check_timeout("timeout", cap) == cap
    assert check_timeout("timeout", datetime.timedelta(seconds=cap)) == cap
    with pytest.raises(pgroups.ConfigError,
                       match=r"^timeout 1000000000.001 is not a valid timeout: it must be at most 1000000000 seconds$"):
        check_timeout("timeout", cap + 0.001)
    for huge in (10**400, math.inf, datetime.timedelta.max):
        with pytest.raises(pgroups.ConfigError, match="it must be at most 1000000000 seconds"):
            check_timeout("timeout", huge)


def test_negative_nan_and_other_types_are_refused():
    with pytest.raises(pgroups.ConfigError, match=r"^timeout -1 is not a valid timeout: it must not be negative"):
        check_timeout("timeout", -1)
    with pytest.raises(pgroups.ConfigError, match="expected a number of seconds"):
        check_timeout("timeout", math.nan)
    for value in (True, "5", None, [5]):
        with pytest.raises(TypeError, match="^timeout must be a number of seconds or a datetime.timedelta"):
            check_timeout("timeout", value)


# The entry points, by property: every wrong type is a TypeError naming the argument.
PLAN_INT_ARGS = ["world_size", "pipeline", "tensor", "depth", "seed"]


@settings(max_examples=60)
@given(st.sampled_from(PLAN_INT_ARGS), NOT_INTS.filter(lambda v: v is not None))
def test_plan_refuses_any_non_int_size(argument, value):
    kwargs = dict(world_size=8, pipeline=2, tensor=4, mode="2d")
    kwargs[argument] = value
    with pytest.raises(TypeError) as error:
        Plan(**kwargs)
    assert_named(error, argument, value)


@settings(max_examples=30)
@given(st.sampled_from([0, -1, -2**40]))
def test_a_world_size_below_one_is_a_config_error_none_is_not_given(world_size):
    # The C++ merge rule's message, the CLI's `-w 0` one.
    with pytest.raises(pgroups.ConfigError, match=f"^world size {world_size} is invalid: it must be a positive integer$"):
        Plan(world_size, pipeline=1)
    with pytest.raises(pgroups.ConfigError, match=f"^world size {world_size} is invalid: it must be a positive integer$"):
        _pgroups.resolve_config(None, _pgroups.ConfigOverrides(world_size=world_size))


def test_plan_takes_numpy_ints_and_refuses_a_non_bool_flag():
    assert Plan(numpy.int64(8), numpy.int32(2), numpy.int8(4), "2d").world_size == 8
    with pytest.raises(TypeError, match="legacy_sequence_dp must be a bool"):
        Plan(16, 2, 2, "sequence", legacy_sequence_dp=1)
    with pytest.raises(TypeError, match="groups must be a list of tokens, not the string 'tp'"):
        Plan(mesh={"tp": 2}, groups="tp")


@settings(max_examples=40)
@given(NOT_INTS)
def test_plan_queries_refuse_a_non_int_rank(rank):
    plan = Plan(8, pipeline=2, tensor=4, mode="2d")
    for query in (lambda: plan.group_of(rank, "2d_col"), lambda: plan.local_rank(rank, "tensor"),
                  lambda: plan.explain(rank), lambda: plan.coordinates(rank)):
        with pytest.raises(TypeError) as error:
            query()
        assert_named(error, "rank", rank)


@settings(max_examples=40)
@given(NOT_INTS)
def test_mesh_refuses_non_int_sizes_and_ranks(value):
    with pytest.raises(TypeError) as error:
        Mesh({"tp": value})
    assert_named(error, "'tp'", value)
    with pytest.raises(TypeError) as error:
        Mesh.from_order("tp-dp", tp=value)
    assert_named(error, "tp", value)
    with pytest.raises(TypeError) as error:
        Mesh({"tp": 2}).group_of(value, "tp")
    assert_named(error, "rank", value)


@given(st.sampled_from(["order", "world_size", "global", "cls", "sizes"]))
def test_a_dimension_may_be_called_anything_even_an_internal_name(name):
    mesh = Mesh.from_order(f"tp-{name}", tp=2, **{name: 3})
    assert mesh.dims == {"tp": 2, name: 3}
    plan = Plan(mesh=mesh, groups=[name, f"tp-{name}"])
    assert plan.group_size(name) == 3 and plan.group_size(f"{name}-tp") == 6


def test_mesh_from_order_is_the_cpp_rule():
    assert Mesh.from_order("tp-cp-dp", tp=2, dp=3, ep=1).dims == {"tp": 2, "cp": 1, "dp": 3}
    with pytest.raises(pgroups.ConfigError, match="ep"):
        Mesh.from_order("tp-dp", tp=2, ep=2)


def test_from_config_overrides_type_checked(data_dir):
    with pytest.raises(TypeError, match="^tensor must be an int, not '4' \\(str\\)$"):
        Plan.from_config(data_dir / "configs" / "2p5d.toml", tensor="4")
    with pytest.raises(TypeError, match="^path must be a str or os.PathLike, not 3"):
        Plan.from_config(3)


def test_a_mode_over_a_2p5d_file_drops_the_files_depth(data_dir):
    plan = Plan.from_config(data_dir / "configs" / "2p5d.toml", mode="2d", tensor=4)
    assert (plan.tensor_mode, plan.depth, plan.tensor_size, plan.pipeline_size) == ("2d", None, 4, 2)


# The agreement's encoding, bound for pgroups.torch's own collective.
def test_the_bound_encoding_tells_apart_what_naive_text_confuses():
    one = _pgroups.encode_settings([("a", "1 b=2")])
    two = _pgroups.encode_settings([("a", "1"), ("b", "2")])
    assert one != two and _pgroups.settings_digest(one) != _pgroups.settings_digest(two)
    with pytest.raises(pgroups.MismatchError, match="^configuration mismatch across 2 ranks: rank 0 holds"):
        _pgroups.judge_records([one, two])
    _pgroups.judge_records([one, one])


def test_a_carried_error_is_raised_with_its_own_class():
    fine = _pgroups.encode_settings([("a", "1")])
    error = _pgroups.encode_error("TypeError", "tensor must be an int, not '4' (str)")
    assert _pgroups.is_error_record(error) and not _pgroups.is_error_record(fine)
    with pytest.raises(TypeError, match=r"^rank 1 hit before the configuration agreement: tensor must be an int"):
        _pgroups.judge_records([fine, error])
    with pytest.raises(pgroups.ConfigError, match="^rank 0 hit before the configuration agreement: bad$"):
        _pgroups.judge_records([_pgroups.encode_error("ConfigError", "bad"), fine])


def test_a_carried_error_of_any_builtin_class_keeps_it_and_a_foreign_one_is_a_runtime_error():
    fine = _pgroups.encode_settings([("a", "1")])
    for cls in (OverflowError, ImportError, KeyError, ValueError):
        with pytest.raises(cls) as caught:
            _pgroups.judge_records([fine, _pgroups.encode_error(cls.__name__, "bad")])
        assert type(caught.value) is cls
    with pytest.raises(RuntimeError, match="^rank 1 hit before the configuration agreement: bad$") as caught:
        _pgroups.judge_records([fine, _pgroups.encode_error("DistBackendError", "bad")])
    assert not isinstance(caught.value, pgroups.Error)


def test_the_one_timeout_text_names_missing_ranks_only_where_given():
    assert _pgroups.timeout_message(2.0, "the configuration agreement", "agreement", 0, 4, [1, 2, 3]) == (
        "timed out after 2 s waiting for all ranks at the configuration agreement (step 'agreement', rank 0 of 4): "
        "ranks 1-3 did not arrive")
    assert _pgroups.timeout_message(0.5, "the node query") == \
        "timed out after 0.5 s waiting for all ranks at the node query"


# Ints beyond 64 bits are the CLI's ConfigError naming the argument, and
# every public entry takes only its own types.
BEYOND = [2 ** 64, 2 ** 63, -(2 ** 63) - 1, 10 ** 30]


@pytest.mark.parametrize("value", BEYOND)
def test_check_int_refuses_ints_beyond_64_bits_in_the_clis_words(value):
    with pytest.raises(pgroups.ConfigError, match=rf"^tensor {value} does not fit in a 64-bit integer$"):
        check_int("tensor", value)
    assert check_int("tensor", 2 ** 63 - 1) == 2 ** 63 - 1 and check_int("tensor", -(2 ** 63)) == -(2 ** 63)


@pytest.mark.parametrize("make, name", [
    (lambda v: Plan(v), "world_size"),
    (lambda v: Plan(8, tensor=v), "tensor"),
    (lambda v: Plan(8, seed=v), "seed"),
    (lambda v: Mesh({"tp": v}), "dims['tp']"),
    (lambda v: Plan(mesh={"tp": v}, groups=["tp"]), "['tp']"),
    (lambda v: Plan(8).group_of(v, "data"), "rank"),
    (lambda v: Plan(8).explain(v), "rank"),
    (lambda v: Plan(8).communicators(rank=v), "rank"),
    (lambda v: Mesh({"tp": 2}).group_of(v, ["tp"]), "rank"),
])
@pytest.mark.parametrize("value", [2 ** 64, 2 ** 63])
def test_public_entries_refuse_ints_beyond_64_bits_naming_the_argument(make, name, value):
    with pytest.raises(pgroups.ConfigError) as error:
        make(value)
    text = str(error.value)
    assert f"{name} {value} does not fit in a 64-bit integer" in text, text
    assert "incompatible function arguments" not in text


@pytest.mark.parametrize("arguments, message", [
    (dict(rank=True), r"^rank must be an int, not True \(bool\)$"),
    (dict(rank=1.0), r"^rank must be an int, not 1.0 \(float\)$"),
    (dict(share=None), r"^share must be a bool \(True or False\), not None \(NoneType\)$"),
    (dict(share=0), r"^share must be a bool \(True or False\), not 0 \(int\)$"),
    (dict(backend=1), r"^backend must be a string token"),
])
def test_communicators_takes_only_its_own_types(arguments, message):
    with pytest.raises(TypeError, match=message):
        Plan(8).communicators(**arguments)
    assert Plan(8).communicators(rank=3, share=False)["kinds"] >= 1
