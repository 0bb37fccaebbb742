"""One formula, many renderers: a small expression tree over named inputs.

Each kernel writes its raw decay ``r(age)`` once as an :data:`Expr`
(:meth:`chronorank.kernels.BaseKernel.expr`), and each fusion strategy its fused score
(:mod:`chronorank.fusion`). The same tree is then rendered:

- :func:`evaluate` -> numpy: the reference, used by the kernels and :func:`chronorank.fusion.combine`
  themselves, and by the fitting grid with inputs broadcast over (configurations, queries,
  candidates);
- :func:`to_text` -> the readable formula of ``Kernel.describe()``;
- :func:`chronorank.stores.compile.lower`, then :func:`chronorank.stores.sql.to_sql`
  (PostgreSQL) and :func:`chronorank.stores.qdrant_formula.to_qdrant` (a Qdrant
  ``FormulaQuery``): the engines' forms, with their overflow guards.

Leaves are :class:`Const`, :class:`Var` (a number; ``default`` is what stands in for a
missing value, None keeps NaN) and :class:`Cond` (a 0/1 test on a stored input: a Qdrant
payload condition, a SQL test). Every operation is an :class:`Op`. The ``pool_*`` operations
compare the candidates of one query with each other (along the last axis); the engines cannot
run them. numpy only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from chronorank.errors import InvalidInput

__all__ = [
    "Cond",
    "Const",
    "Expr",
    "Op",
    "Var",
    "add",
    "clamp",
    "div",
    "eq",
    "evaluate",
    "evaluate_tests",
    "exp",
    "fold",
    "gt",
    "interp",
    "ln",
    "log1p",
    "lt",
    "maximum",
    "minimum",
    "mul",
    "neg",
    "one_minus",
    "ops",
    "pool_max",
    "pool_min",
    "pool_rank",
    "power",
    "softplus",
    "sub",
    "substitute",
    "to_text",
    "where",
]


# ---------------------------------------------------------------------- the tree


@dataclass(frozen=True)
class Const:
    value: float


@dataclass(frozen=True)
class Var:
    """A numeric input; ``default`` is what stands in where the value is missing (None: NaN stays)."""

    name: str
    default: float | None = 0.0


@dataclass(frozen=True)
class Cond:
    """A 0/1 test on a stored input: ``op`` in le, lt, ge, gt (against ``value``) or empty."""

    name: str
    op: str
    value: float = 0.0


@dataclass(frozen=True)
class Op:
    """``op`` over ``args``; ``params`` holds the constants of ``interp`` (ages, weights)."""

    op: str
    args: tuple[Expr, ...]
    params: tuple[Any, ...] = ()


Expr = Union[Const, Var, Cond, Op]  # noqa: UP007 (a runtime alias)
Num = Union[Expr, float]  # noqa: UP007

NARY = ("sum", "mult", "max", "min")
UNARY = ("neg", "exp", "ln", "log1p", "softplus")
BINARY = ("sub", "div", "pow")
COMPARE = ("lt", "le", "gt", "ge", "eq")
POOL = ("pool_min", "pool_max", "pool_rank")


def _e(x: Num) -> Expr:
    return Const(float(x)) if isinstance(x, (int, float)) else x


def add(*xs: Num) -> Expr:
    return Op("sum", tuple(_e(x) for x in xs))


def mul(*xs: Num) -> Expr:
    return Op("mult", tuple(_e(x) for x in xs))


def sub(a: Num, b: Num) -> Expr:
    return Op("sub", (_e(a), _e(b)))


def neg(x: Num) -> Expr:
    return Op("neg", (_e(x),))


def exp(x: Num) -> Expr:
    return Op("exp", (_e(x),))


def ln(x: Num) -> Expr:
    return Op("ln", (_e(x),))


def log1p(x: Num) -> Expr:
    """ln(1 + x), exact for small x."""
    return Op("log1p", (_e(x),))


def softplus(x: Num) -> Expr:
    """ln(1 + exp(x)) without overflow (numpy's ``logaddexp(0, x)``)."""
    return Op("softplus", (_e(x),))


def div(a: Num, b: Num) -> Expr:
    return Op("div", (_e(a), _e(b)))


def power(a: Num, b: Num) -> Expr:
    return Op("pow", (_e(a), _e(b)))


def maximum(*xs: Num) -> Expr:
    return Op("max", tuple(_e(x) for x in xs))


def minimum(*xs: Num) -> Expr:
    return Op("min", tuple(_e(x) for x in xs))


def clamp(x: Num, lo: float, hi: float) -> Expr:
    return minimum(maximum(x, lo), hi)


def one_minus(x: Num) -> Expr:
    return add(1.0, neg(x))


def lt(a: Num, b: Num) -> Expr:
    return Op("lt", (_e(a), _e(b)))


def gt(a: Num, b: Num) -> Expr:
    return Op("gt", (_e(a), _e(b)))


def eq(a: Num, b: Num) -> Expr:
    return Op("eq", (_e(a), _e(b)))


def where(test: Expr, a: Num, b: Num) -> Expr:
    """``a`` where ``test`` (a comparison) holds, else ``b``."""
    return Op("where", (test, _e(a), _e(b)))


def interp(x: Num, points: tuple[tuple[float, float], ...]) -> Expr:
    """Linear interpolation through ``(x, y)`` points, constant outside them (``np.interp``)."""
    xs = tuple(float(p[0]) for p in points)
    ys = tuple(float(p[1]) for p in points)
    return Op("interp", (_e(x),), (xs, ys))


def pool_min(x: Num) -> Expr:
    """The smallest value among one query's candidates."""
    return Op("pool_min", (_e(x),))


def pool_max(x: Num) -> Expr:
    """The largest value among one query's candidates."""
    return Op("pool_max", (_e(x),))


def pool_rank(x: Num) -> Expr:
    """1-based descending rank among one query's candidates; ties share the best rank ("1224")."""
    return Op("pool_rank", (_e(x),))


# ---------------------------------------------------------------------- walking


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node, parents first."""
    yield expr
    if isinstance(expr, Op):
        for a in expr.args:
            yield from walk(a)


def ops(expr: Expr) -> set[str]:
    """The operation names the expression uses."""
    return {n.op for n in walk(expr) if isinstance(n, Op)}


def substitute(expr: Expr, values: Mapping[str, Expr]) -> Expr:
    """``expr`` with each ``Var`` named in ``values`` replaced by its expression."""
    if isinstance(expr, Var):
        return values.get(expr.name, expr)
    if isinstance(expr, Op):
        return Op(expr.op, tuple(substitute(a, values) for a in expr.args), expr.params)
    return expr


def fold(expr: Expr) -> Expr:
    """Constant folding: operations over constants computed, ``x + 0``, ``x * 1``, ``x ** 1``
    dropped, a ``where`` on a constant test reduced to its branch. Values are unchanged."""
    if not isinstance(expr, Op):
        return expr
    args = tuple(fold(a) for a in expr.args)
    op = expr.op
    if op == "where" and isinstance(args[0], Const):
        return args[1] if args[0].value else args[2]
    if op not in POOL and op != "where" and all(isinstance(a, Const) for a in args):
        with np.errstate(all="ignore"):
            return Const(float(evaluate(Op(op, args, expr.params), {})))
    if op in ("sum", "mult"):
        unit = 0.0 if op == "sum" else 1.0
        kept = tuple(a for a in args if a != Const(unit))
        if not kept:
            return Const(unit)
        if len(kept) == 1:
            return kept[0]
        args = kept
    if op == "pow" and args[1] == Const(1.0):
        return args[0]
    return Op(op, args, expr.params)


# ---------------------------------------------------------------------- numpy


def _rank(x: np.ndarray) -> np.ndarray:
    """1-based descending competition rank along the last axis."""
    order = np.argsort(-x, axis=-1, kind="stable")
    s = np.take_along_axis(x, order, axis=-1)
    n = x.shape[-1]
    is_new = np.ones(s.shape, dtype=bool)
    is_new[..., 1:] = s[..., 1:] != s[..., :-1]
    first = np.maximum.accumulate(np.where(is_new, np.arange(n), 0), axis=-1) + 1
    ranks = np.empty(x.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, first.astype(np.float64), axis=-1)
    return ranks


_REDUCE: dict[str, Callable[[Any, Any], Any]] = {
    "sum": np.add, "mult": np.multiply, "max": np.maximum, "min": np.minimum,
}
_UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": np.negative, "exp": np.exp, "ln": np.log, "log1p": np.log1p,
    "softplus": lambda x: np.logaddexp(0.0, x),
}
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "sub": np.subtract, "div": np.true_divide, "pow": np.power,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
}
_COND: dict[str, Callable[[Any, Any], Any]] = {
    "le": np.less_equal, "lt": np.less, "ge": np.greater_equal, "gt": np.greater,
}


def evaluate(expr: Expr, inputs: Mapping[str, Any], *, mask: Any = None) -> np.ndarray:
    """The expression over numpy arrays (they broadcast).

    A ``Var``'s NaN takes its default (None: stays NaN); a ``Cond`` on NaN is 0 (``empty``: 1).
    ``mask`` (broadcastable to the inputs) marks the real candidates for the ``pool_*``
    operations, e.g. the padding of a ``(queries, candidates)`` matrix left out.
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        return np.asarray(_eval(expr, inputs, mask), dtype=np.float64)


def evaluate_tests(exprs: Sequence[Expr], inputs: Mapping[str, Any]) -> list[np.ndarray]:
    """0/1 expressions -- a :class:`Cond`, a product of them, ``1 - `` one -- as numpy bool
    arrays (the numbers :func:`evaluate` gives, as booleans; the SQL renderer writes the same
    forms as SQL tests). A test they share (the same object) is computed once."""
    memo: dict[int, np.ndarray] = {}
    with np.errstate(invalid="ignore"):
        return [np.asarray(_test(e, inputs, memo), dtype=bool) for e in exprs]


def _test(expr: Expr, inputs: Mapping[str, Any], memo: dict[int, np.ndarray]) -> np.ndarray:
    out = memo.get(id(expr))
    if out is not None:
        return out
    if isinstance(expr, Cond):
        v = np.asarray(inputs[expr.name], dtype=np.float64)
        out = np.isnan(v) if expr.op == "empty" else _COND[expr.op](v, expr.value)
    elif isinstance(expr, Op) and expr.op == "mult":
        out = _test(expr.args[0], inputs, memo)
        for x in expr.args[1:]:
            out = out & _test(x, inputs, memo)
    elif (isinstance(expr, Op) and expr.op == "sum" and len(expr.args) == 2 and expr.args[0] == Const(1.0)
          and isinstance(expr.args[1], Op) and expr.args[1].op == "neg"):
        out = ~_test(expr.args[1].args[0], inputs, memo)
    else:
        raise InvalidInput(f"{to_text(expr)} is not a 0/1 test (a condition, a product of them, 1 - one)")
    memo[id(expr)] = out
    return out


def _eval(expr: Expr, inputs: Mapping[str, Any], mask: Any) -> np.ndarray:
    if isinstance(expr, Const):
        return np.asarray(expr.value, dtype=np.float64)
    if isinstance(expr, Var):
        v = np.asarray(inputs[expr.name], dtype=np.float64)
        return v if expr.default is None else np.where(np.isnan(v), expr.default, v)
    if isinstance(expr, Cond):
        v = np.asarray(inputs[expr.name], dtype=np.float64)
        out = np.isnan(v) if expr.op == "empty" else _COND[expr.op](v, expr.value)
        return out.astype(np.float64)
    op = expr.op
    if op == "where":
        # a test that holds everywhere (or nowhere) evaluates one branch: the same numbers
        test = np.asarray(_eval(expr.args[0], inputs, mask), dtype=bool)
        if test.all():
            return _eval(expr.args[1], inputs, mask)
        if not test.any():
            return _eval(expr.args[2], inputs, mask)
        return np.where(test, _eval(expr.args[1], inputs, mask), _eval(expr.args[2], inputs, mask))
    a = [_eval(x, inputs, mask) for x in expr.args]
    if op in _REDUCE:
        out = a[0]
        for x in a[1:]:
            out = _REDUCE[op](out, x)
        return out
    if op in _UNARY:
        return _UNARY[op](a[0])
    if op in _BINARY:
        return _BINARY[op](a[0], a[1])
    if op == "interp":
        xs, ys = expr.params
        return np.interp(a[0], np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64))
    if op in ("pool_min", "pool_max"):
        x = a[0]
        where = True if mask is None else np.broadcast_to(mask, x.shape)
        if op == "pool_min":
            return np.min(x, axis=-1, keepdims=True, initial=np.inf, where=where)
        return np.max(x, axis=-1, keepdims=True, initial=-np.inf, where=where)
    if op == "pool_rank":
        x = a[0] if mask is None else np.where(mask, a[0], -np.inf)
        return _rank(x)
    raise InvalidInput(f"unknown expression operator {op!r}")


# ---------------------------------------------------------------------- text

_SYMBOL = {"sum": " + ", "sub": " - ", "mult": " * ", "div": " / ",
           "lt": " < ", "le": " <= ", "gt": " > ", "ge": " >= ", "eq": " == "}
_PREC = {"where": 0, "lt": 1, "le": 1, "gt": 1, "ge": 1, "eq": 1, "sum": 2, "sub": 2,
         "mult": 3, "div": 3, "neg": 4, "pow": 5}


def to_text(expr: Expr) -> str:
    """A readable formula, constants to 6 significant digits: ``exp(-0.0231049 * age)``."""
    return _text(expr, 0)


def _num(v: float) -> str:
    return f"{v:.6g}"


def _text(expr: Expr, outer: int) -> str:
    if isinstance(expr, Const):
        s = _num(expr.value)
        return f"({s})" if expr.value < 0 and outer > 3 else s
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, Cond):
        return f"({expr.name} is missing)" if expr.op == "empty" else f"({expr.name} {_SYMBOL[expr.op].strip()} {_num(expr.value)})"
    op, a = expr.op, expr.args
    prec = _PREC.get(op, 6)
    if op == "exp" and isinstance(a[0], Op) and len(a[0].args) == 2 and isinstance(a[0].args[0], Const):
        # the log-space forms read as what they compute: (1 + x) ** c, e^c / (1 + exp(x))
        c, inner = a[0].args[0].value, a[0].args[1]
        if a[0].op == "mult" and isinstance(inner, Op) and inner.op == "log1p":
            s = f"(1 + {_text(inner.args[0], 2)}) ** {_num(c)}"
            return f"({s})" if outer > 5 else s
        if a[0].op == "sub" and isinstance(inner, Op) and inner.op == "softplus":
            s = f"{_num(np.exp(c))} / (1 + exp({_text(inner.args[0], 0)}))"
            return f"({s})" if outer > 3 else s
    if op in _SYMBOL:
        # left-associative: a right operand of the same precedence keeps its parentheses
        parts = [_text(a[0], prec)] + [_text(x, prec + (op in ("sub", "div"))) for x in a[1:]]
        s = _SYMBOL[op].join(parts)
    elif op == "neg":
        s = "-" + _text(a[0], prec)
    elif op == "pow":
        s = f"{_text(a[0], prec + 1)} ** {_text(a[1], prec)}"
    elif op == "where":
        s = f"{_text(a[1], 1)} if {_text(a[0], 1)} else {_text(a[2], 0)}"
    elif op == "interp":
        pts = ", ".join(f"({x:g}, {y:g})" for x, y in zip(*expr.params))
        at = "" if isinstance(a[0], Var) and a[0].name == "age" else f" at {_text(a[0], 0)}"
        s = f"linear through [{pts}]{at}"
        prec = 0
    elif op == "log1p":
        s, prec = f"ln(1 + {_text(a[0], 2)})", 6
    elif op == "softplus":
        s, prec = f"ln(1 + exp({_text(a[0], 0)}))", 6
    else:
        name = {"pool_min": "min over candidates", "pool_max": "max over candidates",
                "pool_rank": "rank"}.get(op, op)
        s = f"{name}({', '.join(_text(x, 0) for x in a)})"
    return f"({s})" if prec < outer else s
