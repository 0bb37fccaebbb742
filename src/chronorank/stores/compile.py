"""Kernel compilation: one small expression tree, rendered to Qdrant formulas, SQL and numpy.

A kernel's closed form (see :mod:`chronorank.kernels`) is written once as an :class:`Expr`
tree over named inputs, then rendered three ways:

- :func:`to_qdrant` -> a ``qdrant_client.models`` expression for a ``FormulaQuery``;
- :func:`to_sql`    -> a PostgreSQL expression (``exp``, ``ln``, ``power``, ``greatest``,
  ``least``, ``CASE``);
- :func:`evaluate`  -> numpy, the reference the other two are tested against.

Inputs are :class:`Var` (a number: the document's start/end in epoch seconds, a similarity)
and :class:`Cond` (a 0/1 test on a stored time: ``end <= T``, ``start is missing``). Both
renderers receive a mapping from input name to the engine's own field (payload key,
``$score[i]``, SQL column). Missing values are never NaN inside an expression: each
``Var`` carries the default the engine substitutes, and every branch that could read it is
multiplied by a 0/1 condition.

Supported kernels: exponential, gaussian, linear, weibull, power_law, cliff, piecewise,
constant. Anything else raises :class:`~chronorank.errors.InvalidInput` from
:func:`kernel_expr` (the stores fall back to client-side scoring only when asked to).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from chronorank.errors import InvalidInput, require

__all__ = [
    "COMPILABLE_KERNELS",
    "Cond",
    "Expr",
    "Var",
    "add",
    "evaluate",
    "kernel_expr",
    "mul",
    "to_qdrant",
    "to_sql",
]

COMPILABLE_KERNELS = (
    "exponential", "gaussian", "linear", "weibull", "power_law", "cliff", "piecewise", "constant",
)
#: exp() arguments are clamped here so that no engine overflows (exp(700) ~ 1e304).
EXP_CAP = 700.0
#: a step at age X is min(max((age - X) * STEP_GAIN, 0), 1): exact except within 1e-12 days of X.
STEP_GAIN = 1e12


# ---------------------------------------------------------------------- the tree


@dataclass(frozen=True)
class Const:
    value: float


@dataclass(frozen=True)
class Var:
    """A numeric input; ``default`` is what the engine uses where the value is absent."""

    name: str
    default: float = 0.0


@dataclass(frozen=True)
class Cond:
    """A 0/1 test on a stored time: ``op`` in le, lt, ge, gt (against ``value``) or empty."""

    name: str
    op: str
    value: float = 0.0


@dataclass(frozen=True)
class Op:
    """``op`` in sum, mult, max, min (n-ary), neg, exp, ln (unary), div, pow (binary)."""

    op: str
    args: tuple[Expr, ...]


Expr = Union[Const, Var, Cond, Op]  # noqa: UP007 (a runtime alias; | needs 3.10 types)


def _e(x: Expr | float) -> Expr:
    return Const(float(x)) if isinstance(x, (int, float)) else x


def add(*xs: Expr | float) -> Expr:
    return Op("sum", tuple(_e(x) for x in xs))


def mul(*xs: Expr | float) -> Expr:
    return Op("mult", tuple(_e(x) for x in xs))


def neg(x: Expr | float) -> Expr:
    return Op("neg", (_e(x),))


def exp(x: Expr | float) -> Expr:
    """exp(max(x, -EXP_CAP)): PostgreSQL raises on float underflow, so tiny results stop at ~1e-304."""
    return Op("exp", (maximum(_e(x), -EXP_CAP),))


def ln(x: Expr | float) -> Expr:
    return Op("ln", (_e(x),))


def div(a: Expr | float, b: Expr | float) -> Expr:
    return Op("div", (_e(a), _e(b)))


def power(a: Expr | float, b: Expr | float) -> Expr:
    return Op("pow", (_e(a), _e(b)))


def maximum(*xs: Expr | float) -> Expr:
    return Op("max", tuple(_e(x) for x in xs))


def minimum(*xs: Expr | float) -> Expr:
    return Op("min", tuple(_e(x) for x in xs))


def clamp(x: Expr, lo: float, hi: float) -> Expr:
    return minimum(maximum(x, lo), hi)


def one_minus(x: Expr) -> Expr:
    return add(1.0, neg(x))


# ---------------------------------------------------------------------- kernels


def kernel_expr(kernel: Any, age: Expr) -> Expr:
    """The weight ``floor + (1 - floor) * r(age)`` of a built-in kernel as an expression.

    ``age`` must already be >= 0 (days). Raises InvalidInput for kernels without a closed
    form here (callables, curves, delayed peaks, user kernels).
    """
    name = getattr(kernel, "name", None)
    if name not in COMPILABLE_KERNELS:
        raise InvalidInput(
            f"kernel {kernel!r} cannot be compiled to a server-side expression; compilable kernels "
            f"are {list(COMPILABLE_KERNELS)}. Use one of them, or pass fallback='client' to score "
            "the store's candidates client-side."
        )
    raw = _raw(kernel, name, age)
    floor = float(getattr(kernel, "floor", 0.0))
    if floor == 0.0:
        return raw
    return add(floor, mul(1.0 - floor, raw))


def _raw(k: Any, name: str, age: Expr) -> Expr:
    if name == "constant":
        return Const(1.0)
    if name == "exponential":
        return exp(mul(-float(k.rate), age))
    if name == "gaussian":
        s = float(k.sigma)
        return exp(mul(-0.5 / (s * s), age, age))
    if name == "linear":
        return maximum(0.0, add(1.0, mul(-1.0 / float(k.zero_at), age)))
    if name == "weibull":
        shape = float(k.shape)
        # (age/scale)**shape is capped below overflow; exp(-700) is already ~0
        x = minimum(mul(1.0 / float(k.scale), age), math.exp(min(EXP_CAP / shape, 700.0)))
        return exp(neg(minimum(power(x, shape), EXP_CAP)))
    if name == "power_law":
        return exp(mul(-float(k.beta), ln(add(1.0, mul(1.0 / float(k.scale), age)))))
    if name == "cliff":
        steep, mid = float(k.steepness), float(k.midpoint)
        x = minimum(add(mul(steep / mid, age), -steep), EXP_CAP)
        return div(float(k.norm), add(1.0, exp(x)))
    # piecewise: y0 + sum of clamped linear segments, then an optional step to `after`
    pts = [(float(a), float(w)) for a, w in k.points]
    terms: list[Expr | float] = [pts[0][1]]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if y1 != y0:
            slope = (y1 - y0) / (x1 - x0)
            terms.append(mul(slope, add(clamp(age, x0, x1), -x0)))
    curve = add(*terms) if len(terms) > 1 else Const(pts[0][1])
    after = getattr(k, "after", None)
    if after is None:
        return curve
    last_x, last_y = pts[-1]
    step = clamp(mul(STEP_GAIN, add(age, -last_x)), 0.0, 1.0)
    return add(curve, mul(float(after) - last_y, step))


# ---------------------------------------------------------------------- numpy


def evaluate(expr: Expr, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
    """Evaluate over arrays; a Var's NaN takes its default, a Cond on NaN is 0 (empty: 1)."""
    if isinstance(expr, Const):
        return np.asarray(expr.value, dtype=np.float64)
    if isinstance(expr, Var):
        v = np.asarray(inputs[expr.name], dtype=np.float64)
        return np.where(np.isnan(v), expr.default, v)
    if isinstance(expr, Cond):
        v = np.asarray(inputs[expr.name], dtype=np.float64)
        with np.errstate(invalid="ignore"):
            out = {
                "le": v <= expr.value, "lt": v < expr.value, "ge": v >= expr.value,
                "gt": v > expr.value, "empty": np.isnan(v),
            }[expr.op]
        return out.astype(np.float64)
    a = [evaluate(x, inputs) for x in expr.args]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if expr.op == "sum":
            return np.sum(np.broadcast_arrays(*a), axis=0)
        if expr.op == "mult":
            return np.prod(np.broadcast_arrays(*a), axis=0)
        if expr.op == "max":
            return np.max(np.broadcast_arrays(*a), axis=0)
        if expr.op == "min":
            return np.min(np.broadcast_arrays(*a), axis=0)
        if expr.op == "neg":
            return -a[0]
        if expr.op == "exp":
            return np.exp(a[0])
        if expr.op == "ln":
            return np.log(a[0])
        if expr.op == "div":
            return a[0] / a[1]
        if expr.op == "pow":
            return np.power(a[0], a[1])
    raise InvalidInput(f"unknown expression operator {expr.op!r}")


# ---------------------------------------------------------------------- Qdrant


def to_qdrant(expr: Expr, fields: Mapping[str, str]) -> Any:
    """A ``qdrant_client.models`` expression; ``fields`` maps input names to payload keys
    or ``$score[i]``. Conditions become payload field conditions (range / is_empty)."""
    m = require("qdrant_client.models", extra="qdrant", package="qdrant-client")
    return _qd(expr, fields, m)


def _qd(expr: Expr, f: Mapping[str, str], m: Any) -> Any:
    if isinstance(expr, Const):
        return float(expr.value)
    if isinstance(expr, Var):
        return f[expr.name]
    if isinstance(expr, Cond):
        key = f[expr.name]
        if expr.op == "empty":
            return m.IsEmptyCondition(is_empty=m.PayloadField(key=key))
        rng = m.Range(**{{"le": "lte", "lt": "lt", "ge": "gte", "gt": "gt"}[expr.op]: expr.value})
        return m.FieldCondition(key=key, range=rng)
    a = [_qd(x, f, m) for x in expr.args]
    op = expr.op
    if op == "sum":
        return m.SumExpression(sum=a)
    if op == "mult":
        return m.MultExpression(mult=a)
    if op == "max":
        return m.MaxExpression(max=a)
    if op == "min":
        return m.MinExpression(min=a)
    if op == "neg":
        return m.NegExpression(neg=a[0])
    if op == "exp":
        return m.ExpExpression(exp=a[0])
    if op == "ln":
        return m.LnExpression(ln=a[0])
    if op == "div":
        return m.DivExpression(div=m.DivParams(left=a[0], right=a[1]))
    if op == "pow":
        return m.PowExpression(pow=m.PowParams(base=a[0], exponent=a[1]))
    raise InvalidInput(f"unknown expression operator {op!r}")


# ---------------------------------------------------------------------- SQL


def _lit(x: float) -> str:
    if not math.isfinite(x):
        raise InvalidInput(f"cannot write the non-finite constant {x!r} into SQL")
    return f"({float(x)!r}::float8)"


def _sql_test(expr: Expr, columns: Mapping[str, str]) -> str | None:
    """A SQL boolean that is TRUE exactly where a 0/1 expression is 1: a Cond, ``1 - Cond``, or a
    product of those; None for anything else."""
    if isinstance(expr, Cond):
        col = columns[expr.name]
        if expr.op == "empty":
            return f"({col} IS NULL)"
        return f"({col} {_SYM[expr.op]} {_lit(expr.value)})"
    if isinstance(expr, Op) and expr.op == "sum" and len(expr.args) == 2 and expr.args[0] == Const(1.0):
        neg_ = expr.args[1]
        if isinstance(neg_, Op) and neg_.op == "neg":
            inner = _sql_test(neg_.args[0], columns)
            return None if inner is None else f"({inner} IS NOT TRUE)"  # a test on NULL is 0, its complement 1
    if isinstance(expr, Op) and expr.op == "mult":
        parts = [_sql_test(x, columns) for x in expr.args]
        if all(p is not None for p in parts):
            return "(" + " AND ".join(p for p in parts if p is not None) + ")"
    return None


_SYM = {"le": "<=", "lt": "<", "ge": ">=", "gt": ">"}


def to_sql(expr: Expr, columns: Mapping[str, str]) -> str:
    """A PostgreSQL expression; ``columns`` maps input names to column expressions.

    A NULL column takes the Var's default (COALESCE); a condition on NULL is 0, except
    ``empty`` which tests IS NULL. A product with 0/1 conditions among its factors is written
    ``CASE WHEN conditions THEN other factors ELSE 0 END``: the same numbers (1 x a = a,
    0 x a = 0 for the finite values here), and the branch a row does not take is not evaluated.
    """
    if isinstance(expr, Op) and expr.op == "mult":
        tests = [_sql_test(x, columns) for x in expr.args]
        if any(t is not None for t in tests):
            rest = [to_sql(x, columns) for x, t in zip(expr.args, tests) if t is None]
            then = _lit(1.0) if not rest else rest[0] if len(rest) == 1 else "(" + " * ".join(rest) + ")"
            cond = " AND ".join(t for t in tests if t is not None)
            return f"(CASE WHEN {cond} THEN {then} ELSE {_lit(0.0)} END)"
    if isinstance(expr, Const):
        return _lit(expr.value)
    if isinstance(expr, Var):
        return f"COALESCE({columns[expr.name]}, {_lit(expr.default)})"
    if isinstance(expr, Cond):
        col = columns[expr.name]
        if expr.op == "empty":
            return f"(CASE WHEN {col} IS NULL THEN 1.0 ELSE 0.0 END)"
        return f"(CASE WHEN {col} {_SYM[expr.op]} {_lit(expr.value)} THEN 1.0 ELSE 0.0 END)"
    a = [to_sql(x, columns) for x in expr.args]
    op = expr.op
    if op == "sum":
        return "(" + " + ".join(a) + ")"
    if op == "mult":
        return "(" + " * ".join(a) + ")"
    if op == "max":
        return "GREATEST(" + ", ".join(a) + ")"
    if op == "min":
        return "LEAST(" + ", ".join(a) + ")"
    if op == "neg":
        return f"(-{a[0]})"
    if op == "exp":
        return f"exp({a[0]})"
    if op == "ln":
        return f"ln({a[0]})"
    if op == "div":
        return f"({a[0]} / NULLIF({a[1]}, 0.0))"
    if op == "pow":
        return f"power({a[0]}, {a[1]})"
    raise InvalidInput(f"unknown expression operator {op!r}")
