"""Compilation for the engines: kernels and fusion, already expressions, in the engines' form.

Each kernel writes its raw decay once as a :mod:`chronorank.expr` tree
(:meth:`chronorank.kernels.BaseKernel.expr`), each fusion strategy its score
(:mod:`chronorank.fusion`); the stores compose them with the query's validity and time
tests (:mod:`chronorank.stores.plan`). Here that tree is brought into the form both engines
evaluate (:func:`lower`) and rendered:

- :func:`to_qdrant` -> a ``qdrant_client.models`` expression for a ``FormulaQuery``
  (:mod:`chronorank.stores.qdrant_formula`);
- :func:`to_sql`    -> a PostgreSQL expression (:mod:`chronorank.stores.sql`);
- :func:`evaluate`  -> numpy, the reference the other two are tested against.

Inputs are :class:`Var` (a number: the document's start/end in epoch seconds, a similarity)
and :class:`Cond` (a 0/1 test on a stored time: ``end <= T``, ``start is missing``). Both
renderers receive a mapping from input name to the engine's own field (payload key,
``$score[i]``, SQL column). Missing values are never NaN inside an expression: each
``Var`` carries the default the engine substitutes, and every branch that could read it is
multiplied by a 0/1 condition.

A kernel compiles when it writes an expression (:func:`chronorank.kernels.base.compiles`):
the built-ins in :data:`COMPILABLE_KERNELS` and any registered kernel that does. Anything else
(callables, delayed peaks, kernels with only a numpy ``_raw``) raises
:class:`~chronorank.errors.InvalidInput` from :func:`kernel_expr` (the stores fall back to
client-side scoring only when asked to).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from chronorank import expr as ex
from chronorank.errors import InvalidInput
from chronorank.expr import (
    Cond,
    Const,
    Expr,
    Op,
    Var,
    _e,  # noqa: F401 (the stores' builders use it)
    add,
    clamp,
    div,
    evaluate,
    exp,
    ln,
    maximum,
    minimum,
    mul,
    neg,
    one_minus,
    power,
    sub,
)
from chronorank.kernels.base import compiles
from chronorank.stores import qdrant_formula, sql
from chronorank.stores.qdrant_formula import STEP_GAIN

__all__ = [  # _e is re-exported too, for the stores' builders
    "COMPILABLE_KERNELS",
    "EXP_CAP",
    "STEP_GAIN",
    "Cond",
    "Const",
    "Expr",
    "Op",
    "Var",
    "add",
    "clamp",
    "compiles",
    "div",
    "evaluate",
    "exp",
    "kernel_expr",
    "ln",
    "lower",
    "maximum",
    "minimum",
    "mul",
    "neg",
    "one_minus",
    "power",
    "sub",
    "to_qdrant",
    "to_sql",
]

#: the built-in kernels that compile (a test holds it to the kernels' own declarations)
COMPILABLE_KERNELS = (
    "exponential", "gaussian", "linear", "weibull", "power_law", "cliff", "piecewise", "constant",
)
#: exp() arguments are clamped here so that no engine overflows (exp(700) ~ 1e304).
EXP_CAP = 700.0


def compilable_kernels() -> list[str]:
    """The names of the registered kernels that compile, the built-ins first."""
    from chronorank.kernels.registry import KERNELS

    extra = [name for name, cls in KERNELS.items() if name not in COMPILABLE_KERNELS and compiles(cls)]
    return list(COMPILABLE_KERNELS) + extra


def kernel_expr(kernel: Any, age: Expr) -> Expr:
    """The weight ``floor + (1 - floor) * r(age)`` of a kernel as an expression.

    ``age`` must already be >= 0 (days). Raises InvalidInput for kernels that do not compile
    (callables, delayed peaks, kernels without an expression).
    """
    if not compiles(kernel):
        raise InvalidInput(
            f"kernel {kernel!r} cannot be compiled to a server-side expression; compilable kernels "
            f"are {compilable_kernels()}. Use one of them, or pass fallback='client' to score "
            "the store's candidates client-side."
        )
    out: Expr = kernel.weight_expr(age)
    return out


# ---------------------------------------------------------------------- the engines' form


def lower(expr: Expr) -> Expr:
    """The form both engines evaluate, with their guards; the same numbers wherever they are
    above ~1e-304 (``evaluate`` of the result is what the engine computes):

    - ``exp(x)`` -> ``exp(max(x, -EXP_CAP))`` (PostgreSQL raises on float underflow);
    - ``softplus(x)`` -> ``ln(1 + exp(clamp(x, -EXP_CAP, EXP_CAP)))``; ``log1p(x)`` -> ``ln(1 + x)``;
    - ``x ** c`` (a constant c > 1) -> ``min(x, exp(min(EXP_CAP / c, 700))) ** c``: no overflow;
    - ``interp`` -> the first weight plus one clamped linear segment per pair of points.

    The ``pool_*`` operations compare candidates and raise InvalidInput.
    """
    if not isinstance(expr, Op):
        return expr
    op = expr.op
    if op in ex.POOL:
        raise InvalidInput(
            f"{ex.to_text(expr)} compares the candidates with each other and cannot run inside the engine"
        )
    args = [lower(a) for a in expr.args]
    if op == "exp":
        return Op("exp", (maximum(args[0], -EXP_CAP),))
    if op == "softplus":
        return ln(add(1.0, Op("exp", (clamp(args[0], -EXP_CAP, EXP_CAP),))))
    if op == "log1p":
        return ln(add(1.0, args[0]))
    if op == "pow" and isinstance(args[1], Const) and args[1].value > 1.0:
        c = args[1].value
        return power(minimum(args[0], math.exp(min(EXP_CAP / c, 700.0))), c)
    if op == "interp":
        return _segments(args[0], expr.params)
    return Op(op, tuple(args), expr.params)


def _segments(x: Expr, params: tuple[Any, ...]) -> Expr:
    """y0 + sum of clamped linear segments: ``np.interp`` with min, max and products only."""
    xs, ys = params
    terms: list[Expr | float] = [ys[0]]
    for x0, y0, x1, y1 in zip(xs, ys, xs[1:], ys[1:]):
        if y1 != y0:
            slope = (y1 - y0) / (x1 - x0)
            terms.append(mul(slope, add(clamp(x, x0, x1), -x0)))
    return add(*terms) if len(terms) > 1 else Const(ys[0])


def to_qdrant(expr: Expr, fields: Mapping[str, str]) -> Any:
    """A ``qdrant_client.models`` expression; ``fields`` maps input names to payload keys
    or ``$score[i]``. Conditions become payload field conditions (range / is_empty)."""
    return qdrant_formula.to_qdrant(lower(expr), fields)


def to_sql(expr: Expr, columns: Mapping[str, str]) -> str:
    """A PostgreSQL expression; ``columns`` maps input names to column expressions (see
    :func:`chronorank.stores.sql.to_sql`)."""
    return sql.to_sql(lower(expr), columns)
