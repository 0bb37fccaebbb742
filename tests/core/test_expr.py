"""The expression layer: numpy evaluation, folding, substitution and the text renderer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from chronorank import expr as ex
from chronorank.errors import InvalidInput

X = ex.Var("x", None)
xs = arrays(np.float64, st.integers(1, 30), elements=st.floats(-50, 50, allow_nan=False))


def test_operations_are_numpy() -> None:
    x = np.array([0.0, 0.5, 2.0, 30.0])
    cases = {
        ex.add(X, 1.0, X): x + 1.0 + x,
        ex.sub(1.0, X): 1.0 - x,
        ex.mul(-0.5, X, X): -0.5 * x * x,
        ex.div(X, 4.0): x / 4.0,
        ex.power(X, 3.0): x**3.0,
        ex.exp(ex.neg(X)): np.exp(-x),
        ex.ln(ex.add(X, 1.0)): np.log(x + 1.0),
        ex.log1p(X): np.log1p(x),
        ex.softplus(ex.mul(40.0, X)): np.logaddexp(0.0, 40.0 * x),
        ex.clamp(X, 0.25, 1.0): np.clip(x, 0.25, 1.0),
        ex.where(ex.gt(X, 1.0), 7.0, X): np.where(x > 1.0, 7.0, x),
        ex.interp(X, ((0, 1), (1, 0.5), (10, 0.25))): np.interp(x, [0, 1, 10], [1, 0.5, 0.25]),
    }
    for e, want in cases.items():
        np.testing.assert_array_equal(ex.evaluate(e, {"x": x}), want, err_msg=ex.to_text(e))


def test_missing_inputs_take_the_default_and_conditions_are_zero() -> None:
    t = np.array([1.0, np.nan, 5.0])
    np.testing.assert_array_equal(ex.evaluate(ex.Var("t", 9.0), {"t": t}), [1.0, 9.0, 5.0])
    assert np.isnan(ex.evaluate(ex.Var("t", None), {"t": t})[1])
    np.testing.assert_array_equal(ex.evaluate(ex.Cond("t", "le", 1.0), {"t": t}), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(ex.evaluate(ex.Cond("t", "empty"), {"t": t}), [0.0, 1.0, 0.0])


def test_pool_operations_compare_candidates_along_the_last_axis() -> None:
    x = np.array([[3.0, 1.0, 3.0, 2.0], [0.5, 0.9, -1.0, 0.9]])
    np.testing.assert_array_equal(ex.evaluate(ex.pool_rank(X), {"x": x}), [[1, 4, 1, 3], [3, 1, 4, 1]])
    np.testing.assert_array_equal(ex.evaluate(ex.pool_min(X), {"x": x}), [[1.0], [-1.0]])
    valid = np.array([[True, False, True, True], [True, True, False, True]])
    np.testing.assert_array_equal(ex.evaluate(ex.pool_min(X), {"x": x}, mask=valid), [[2.0], [0.5]])
    np.testing.assert_array_equal(ex.evaluate(ex.pool_max(X), {"x": x}, mask=valid), [[3.0], [0.9]])
    assert ex.evaluate(ex.pool_rank(X), {"x": x}, mask=valid)[1, 2] == 4  # padding ranks last


@given(x=xs)
@settings(max_examples=50, deadline=None)
def test_a_where_that_holds_everywhere_gives_the_same_numbers(x: np.ndarray) -> None:
    # the evaluator computes one branch when the test is uniform: nothing else changes
    e = ex.where(ex.gt(X, 0.0), ex.mul(X, 2.0), ex.mul(X, 3.0))
    np.testing.assert_array_equal(ex.evaluate(e, {"x": x}), np.where(x > 0, 2 * x, 3 * x))


def test_fold_keeps_the_values() -> None:
    s = ex.Var("s", None)
    e = ex.where(ex.eq(s, 0.0), X, ex.add(ex.sub(1.0, s), ex.mul(s, X)))
    x = np.array([0.0, 0.25, 1.0])
    for sv in (0.0, 0.3, 1.0):
        folded = ex.fold(ex.substitute(e, {"s": ex.Const(sv)}))
        np.testing.assert_array_equal(ex.evaluate(folded, {"x": x}), ex.evaluate(e, {"x": x, "s": sv}))
    assert ex.fold(ex.substitute(e, {"s": ex.Const(0.0)})) == X
    assert ex.fold(ex.substitute(e, {"s": ex.Const(1.0)})) == X
    assert ex.fold(ex.substitute(e, {"s": ex.Const(0.3)})) == ex.add(ex.Const(1.0 - 0.3), ex.mul(0.3, X))
    assert ex.fold(ex.power(X, 1.0)) == X


def test_substitute_composes_formulas() -> None:
    age = ex.div(ex.sub(ex.Var("now", None), ex.Var("t", None)), 86400.0)
    e = ex.substitute(ex.exp(ex.mul(-0.1, X)), {"x": age})
    got = ex.evaluate(e, {"now": np.array([10 * 86400.0]), "t": np.array([0.0])})
    assert got[0] == pytest.approx(math.exp(-1.0))
    assert ex.ops(e) == {"exp", "mult", "div", "sub"}


def test_text_reads_like_the_formula() -> None:
    age = ex.Var("age", None)
    assert ex.to_text(ex.exp(ex.mul(-0.0231049, age))) == "exp(-0.0231049 * age)"
    assert ex.to_text(ex.maximum(ex.sub(1.0, ex.div(age, 360.0)), 0.0)) == "max(1 - age / 360, 0)"
    assert ex.to_text(ex.exp(ex.neg(ex.power(ex.div(age, 90.0), 2.0)))) == "exp(-(age / 90) ** 2)"
    assert ex.to_text(ex.sub(age, ex.sub(1.0, age))) == "age - (1 - age)"
    assert ex.to_text(ex.where(ex.lt(age, 7.0), 1.0, ex.log1p(age))) == "1 if age < 7 else ln(1 + age)"
    # log-space forms print as what they compute
    assert ex.to_text(ex.exp(ex.mul(-1.5, ex.log1p(ex.div(age, 30.0))))) == "(1 + age / 30) ** -1.5"
    assert ex.to_text(ex.exp(ex.sub(math.log(2.0), ex.softplus(age)))) == "2 / (1 + exp(age))"


def test_tests_evaluate_as_booleans() -> None:
    t = np.array([1.0, np.nan, 5.0, 3.0])
    early, known = ex.Cond("t", "lt", 4.0), ex.one_minus(ex.Cond("t", "empty"))
    for e in (early, known, ex.mul(early, known), ex.one_minus(early), ex.mul(ex.Cond("t", "ge", 1.0), early)):
        (got,) = ex.evaluate_tests([e], {"t": t})
        assert got.dtype == bool
        np.testing.assert_array_equal(got, ex.evaluate(e, {"t": t}) == 1.0, err_msg=ex.to_text(e))
    with pytest.raises(InvalidInput, match="not a 0/1 test"):
        ex.evaluate_tests([ex.add(early, early)], {"t": t})


def test_unknown_operator_is_an_error() -> None:
    with pytest.raises(InvalidInput, match="unknown expression operator 'cube'"):
        ex.evaluate(ex.Op("cube", (X,)), {"x": np.ones(2)})
