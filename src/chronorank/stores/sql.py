"""The PostgreSQL renderer of :mod:`chronorank.expr`: an expression as a SQL expression.

Takes the engine form (:func:`chronorank.stores.compile.lower`): ``exp``, ``ln``, ``power``,
``GREATEST``, ``LEAST``, ``CASE``. Constants are written as ``float8`` literals; inputs are
the column expressions the caller maps them to.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from chronorank.errors import InvalidInput
from chronorank.expr import Cond, Const, Expr, Op, Var

__all__ = ["to_sql"]

_SYM = {"le": "<=", "lt": "<", "ge": ">=", "gt": ">", "eq": "="}


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


def to_sql(expr: Expr, columns: Mapping[str, str]) -> str:
    """A PostgreSQL expression of an engine-form expression; ``columns`` maps input names to
    column expressions. Use :func:`chronorank.stores.compile.to_sql` for any expression.

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
        col = columns[expr.name]
        return col if expr.default is None else f"COALESCE({col}, {_lit(expr.default)})"
    if isinstance(expr, Cond):
        col = columns[expr.name]
        if expr.op == "empty":
            return f"(CASE WHEN {col} IS NULL THEN 1.0 ELSE 0.0 END)"
        return f"(CASE WHEN {col} {_SYM[expr.op]} {_lit(expr.value)} THEN 1.0 ELSE 0.0 END)"
    op = expr.op
    if op == "where":
        test, then, other = (to_sql(x, columns) for x in expr.args)
        return f"(CASE WHEN {test} THEN {then} ELSE {other} END)"
    a = [to_sql(x, columns) for x in expr.args]
    if op in _SYM:  # a comparison: a SQL boolean (the test of a where)
        return f"({a[0]} {_SYM[op]} {a[1]})"
    if op == "sum":
        return "(" + " + ".join(a) + ")"
    if op == "sub":
        return f"({a[0]} - {a[1]})"
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
