"""The spec grammar: parse_spec / format_spec."""

from __future__ import annotations

import keyword
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronorank.errors import InvalidInput
from chronorank.spec import format_spec, parse_spec


def test_name_and_params():
    assert parse_spec("weibull(half_life_days=90, shape=2)") == (
        "weibull",
        {"half_life_days": 90, "shape": 2},
    )


def test_bare_name_and_empty_call():
    assert parse_spec("exponential") == ("exponential", {})
    assert parse_spec("  exponential()  ") == ("exponential", {})


def test_value_kinds():
    name, params = parse_spec(
        "k(a=1e-3, b=-2, c=+1.5, d='x y', e=true, f=False, g=none, h=[(0,1),(30,1),(180,0.3)], i=inf)"
    )
    assert name == "k"
    assert params["a"] == 0.001 and params["b"] == -2 and params["c"] == 1.5
    assert params["d"] == "x y"
    assert params["e"] is True and params["f"] is False and params["g"] is None
    assert params["h"] == [(0, 1), (30, 1), (180, 0.3)]
    assert math.isinf(params["i"])


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "empty"),
        ("weibull(90)", "positional"),
        ("weibull(shape=foo)", "bare word"),
        ("weibull(shape=1+2)", "unsupported value"),
        ("weibull(shape=__import__('os'))", "unsupported value"),
        ("weibull(shape=2", "not valid syntax"),
        ("weibull(shape=1, shape=2)", "given twice"),
        ("weibull(**d)", "'**'"),
        ("3(x=1)", "name"),
    ],
)
def test_malformed_specs_show_the_text(text, fragment):
    with pytest.raises(InvalidInput) as err:
        parse_spec(text)
    assert fragment in str(err.value)
    if text:
        assert repr(text) in str(err.value)


def test_non_string_rejected():
    with pytest.raises(InvalidInput, match="must be a string"):
        parse_spec(42)  # type: ignore[arg-type]


def test_format_spec_examples():
    assert format_spec("exponential", {}) == "exponential"
    assert format_spec("weibull", {"half_life_days": 90, "shape": 2.0}) == "weibull(half_life_days=90, shape=2.0)"
    assert format_spec("k", {"a": None, "b": True, "c": (1,), "d": "q"}) == "k(a=none, b=true, c=(1,), d='q')"


def test_words_parse_case_insensitively():
    assert parse_spec("k(a=TRUE, b=None, c=NaN)")[1]["b"] is None
    assert parse_spec("k(a=TRUE)")[1]["a"] is True


def test_format_spec_rejects_unwritable_values():
    with pytest.raises(InvalidInput, match="cannot be written"):
        format_spec("k", {"a": object()})
    with pytest.raises(InvalidInput, match="identifier"):
        format_spec("bad name", {})
    with pytest.raises(InvalidInput, match="identifier"):
        format_spec("k", {"if": 1})


scalars = (
    st.integers(-10**12, 10**12)
    | st.floats(allow_nan=False)
    | st.booleans()
    | st.none()
    | st.text(max_size=12)
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner), max_leaves=8)
keys = st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True).filter(
    lambda k: not keyword.iskeyword(k)
)


@given(st.dictionaries(keys, values, max_size=4))
def test_format_then_parse_round_trips(params):
    name, parsed = parse_spec(format_spec("kernel_x", params))
    assert name == "kernel_x"
    assert parsed == params
