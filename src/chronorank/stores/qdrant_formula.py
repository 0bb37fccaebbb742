"""The Qdrant renderer of :mod:`chronorank.expr`: an expression as a ``FormulaQuery`` formula.

Takes the engine form (:func:`chronorank.stores.compile.lower`). A :class:`~chronorank.expr.Cond`
becomes a payload condition (range / is_empty); Qdrant has no test on a computed value, so a
``where`` on ``x > c`` (or ``x < c``) becomes a ramp ``b + step x (a - b)`` with
``step = clamp((x - c) x STEP_GAIN, 0, 1)``: exact except within ``1 / STEP_GAIN`` of ``c``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chronorank import expr as ex
from chronorank.errors import InvalidInput, require
from chronorank.expr import Cond, Const, Expr, Var

__all__ = ["STEP_GAIN", "to_qdrant"]

#: a step at age X is min(max((age - X) * STEP_GAIN, 0), 1): exact except within 1e-12 days of X.
STEP_GAIN = 1e12


def to_qdrant(expr: Expr, fields: Mapping[str, str]) -> Any:
    """A ``qdrant_client.models`` expression of an engine-form expression; ``fields`` maps input
    names to payload keys or ``$score[i]``. Use :func:`chronorank.stores.compile.to_qdrant` for
    any expression."""
    m = require("qdrant_client.models", extra="qdrant", package="qdrant-client")
    return _qd(expr, fields, m)


def ramp(test: Expr) -> Expr:
    """The 0/1 value of ``x > c`` or ``x < c`` (a constant ``c``) as a steep clamped line."""
    if isinstance(test, ex.Op) and test.op in ("gt", "lt") and isinstance(test.args[1], Const):
        x, c = test.args[0], test.args[1].value
        away = ex.add(x, -c) if test.op == "gt" else ex.add(c, ex.neg(x))
        return ex.clamp(ex.mul(STEP_GAIN, away), 0.0, 1.0)
    raise InvalidInput(f"Qdrant formulas cannot test {ex.to_text(test)}; only x > c and x < c against a constant")


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
    op = expr.op
    if op == "where":
        test, then, other = expr.args
        return _qd(ex.add(other, ex.mul(ramp(test), ex.add(then, ex.neg(other)))), f, m)
    if op == "sub":
        return _qd(ex.add(expr.args[0], ex.neg(expr.args[1])), f, m)
    a = [_qd(x, f, m) for x in expr.args]
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
