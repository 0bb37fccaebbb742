"""One small metadata filter language for the index, the stores and the integrations.

A filter is a dict in the Mongo style most vector stores already take::

    {"project": "flask"}                                  # equality
    {"project": {"$in": ["flask", "click"]}}              # membership ($nin: not in)
    {"year": {"$gte": 2020, "$lt": 2024}}                 # ranges ($gt, $gte, $lt, $lte)
    {"$or": [{"project": "flask"}, {"tier": {"$ne": "free"}}]}
    {"project": "flask", "lang": "en"}                    # several keys: all must hold ($and)

Fields name keys of a document's ``metadata``. :func:`parse_filter` checks the dict once
and returns a tree (:class:`Cond`, :class:`And`, :class:`Or`); three renderers give the
same answer for it (tests hold them to each other):

- :func:`filter_mask`: a boolean numpy mask over metadata dicts (the embedded index);
- :func:`filter_sql`: a SQL ``WHERE`` fragment with bound parameters over a jsonb column;
- :func:`filter_qdrant`: a ``qdrant_client.models.Filter`` over ``metadata.<field>``.

Semantics, the same in all three: values compare as JSON scalars (``2 == 2.0``; ``True`` is
not ``1``); a range needs a number (a string, a bool or a missing value never satisfies it);
``$ne`` / ``$nin`` hold for a document that lacks the field. List-valued metadata is not
matched element by element.

This module needs numpy only; the Qdrant renderer imports ``qdrant_client`` when called.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from chronorank.errors import InvalidInput, require

__all__ = ["And", "Cond", "FieldColumn", "Filter", "Or", "and_filters", "filter_mask", "filter_qdrant", "filter_sql", "parse_filter"]

COMPARE_OPS = ("$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte")
RANGE_OPS = ("$gt", "$gte", "$lt", "$lte")
LOGIC_OPS = ("$and", "$or")
Scalar: TypeAlias = "str | int | float | bool"


@dataclass(frozen=True)
class Cond:
    """``metadata[field] <op> value``."""

    field: str
    op: str
    value: Any


@dataclass(frozen=True)
class And:
    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Filter, ...]


Filter: TypeAlias = "Cond | And | Or"


def parse_filter(spec: Any) -> Filter | None:
    """The checked tree for a filter dict (None or ``{}``: no filter); a parsed tree is kept."""
    if spec is None or isinstance(spec, (Cond, And, Or)):
        return spec
    if not isinstance(spec, Mapping):
        raise InvalidInput(
            f"filter={spec!r}; give a dict such as {{'project': 'flask'}} or "
            "{'year': {'$gte': 2020}} (see chronorank.filters)."
        )
    if not spec:
        return None
    parts: list[Filter] = []
    for key, value in spec.items():
        if not isinstance(key, str) or not key:
            raise InvalidInput(f"filter key {key!r}; keys are metadata field names or '$and' / '$or'.")
        if key.startswith("$"):
            if key not in LOGIC_OPS:
                raise InvalidInput(f"filter operator {key!r} at the top level; use one of {list(LOGIC_OPS)} there.")
            if not isinstance(value, (list, tuple)) or not value:
                raise InvalidInput(f"filter {key}={value!r}; give a non-empty list of filters, e.g. [{{'a': 1}}, {{'b': 2}}].")
            subs = [parse_filter(v) for v in value]
            if any(s is None for s in subs):
                raise InvalidInput(f"filter {key}={value!r} holds an empty filter; remove it.")
            kids = tuple(s for s in subs if s is not None)
            parts.append(kids[0] if len(kids) == 1 else (And(kids) if key == "$and" else Or(kids)))
            continue
        if isinstance(value, Mapping):
            if not value:
                raise InvalidInput(f"filter {key!r}: {{}}; give a value or operators such as {{'$gte': 2020}}.")
            for op, v in value.items():
                parts.append(_cond(key, op, v))
        else:
            parts.append(_cond(key, "$eq", value))
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def _scalar(field: str, op: str, v: Any) -> Scalar:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        raise InvalidInput(f"filter {field!r} {op} {v!r}; give a finite number.")
    if not isinstance(v, (str, int, float, bool)):
        raise InvalidInput(
            f"filter {field!r} {op} {v!r} ({type(v).__name__}); compare with a string, number or bool."
        )
    return v


def _cond(field: str, op: Any, v: Any) -> Cond:
    if op not in COMPARE_OPS:
        raise InvalidInput(f"filter {field!r}: unknown operator {op!r}; use one of {list(COMPARE_OPS)}.")
    if op in ("$in", "$nin"):
        if not isinstance(v, (list, tuple)) or not v:
            raise InvalidInput(f"filter {field!r} {op} {v!r}; give a non-empty list, e.g. ['a', 'b'].")
        return Cond(field, op, tuple(_scalar(field, op, x) for x in v))
    value = _scalar(field, op, v)
    if op in RANGE_OPS and (isinstance(value, (bool, str))):
        raise InvalidInput(
            f"filter {field!r} {op} {value!r}; ranges compare numbers only (store dates as epoch seconds "
            "or years, e.g. {'year': {'$gte': 2020}})."
        )
    return Cond(field, op, value)


def and_filters(*filters: Any) -> Filter | None:
    """Every given filter at once (None parts are skipped)."""
    parts = [f for f in (parse_filter(x) for x in filters) if f is not None]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def fields(flt: Filter | None) -> set[str]:
    """The metadata fields a filter reads."""
    if flt is None:
        return set()
    if isinstance(flt, Cond):
        return {flt.field}
    return set().union(*(fields(p) for p in flt.parts))


# ---------------------------------------------------------------------- numpy


_MISSING = object()


def _key(v: Any) -> Any:
    """A comparison key that keeps bools apart from numbers (JSON semantics)."""
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return ("n", float(v))
    if isinstance(v, str):
        return ("s", v)
    return ("o", id(v))  # lists, dicts, None: equal to no filter value


def _num(v: Any) -> float:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return math.nan


class FieldColumn:
    """One metadata field over every document, columnar: a code per document for equality
    (-1 = missing; equal codes = equal :func:`_key`) and its number for ranges (NaN otherwise)."""

    __slots__ = ("codes", "index", "nums")

    def __init__(self, values: Sequence[Any]) -> None:
        index: dict[Any, int] = {}
        codes = np.full(len(values), -1, dtype=np.int64)
        for i, v in enumerate(values):  # once per field and index state, not per search
            if v is not _MISSING:
                codes[i] = index.setdefault(_key(v), len(index))
        self.codes, self.index = codes, index
        self.nums = np.fromiter((_num(v) for v in values), dtype=np.float64, count=len(values))


def filter_mask(
    flt: Any,
    metadatas: Sequence[Mapping[str, Any] | None],
    columns: dict[str, FieldColumn] | None = None,
) -> np.ndarray:
    """Which of ``metadatas`` pass ``flt`` (a boolean array; all True without a filter).

    Each field is read once into a :class:`FieldColumn` (kept in ``columns`` when the caller
    passes a dict, e.g. one per index snapshot), then every condition compares in numpy.
    """
    tree = parse_filter(flt)
    n = len(metadatas)
    if tree is None:
        return np.ones(n, dtype=bool)
    return _mask(tree, metadatas, {} if columns is None else columns, n)


def _mask(t: Filter, metas: Sequence[Mapping[str, Any] | None], cols: dict[str, FieldColumn], n: int) -> np.ndarray:
    if isinstance(t, And):
        out = np.ones(n, dtype=bool)
        for p in t.parts:
            out &= _mask(p, metas, cols, n)
        return out
    if isinstance(t, Or):
        out = np.zeros(n, dtype=bool)
        for p in t.parts:
            out |= _mask(p, metas, cols, n)
        return out
    col = cols.get(t.field)
    if col is None:
        col = cols[t.field] = FieldColumn([_MISSING if m is None else m.get(t.field, _MISSING) for m in metas])
    if t.op in RANGE_OPS:
        x = col.nums
        with np.errstate(invalid="ignore"):
            res = {"$gt": x > t.value, "$gte": x >= t.value, "$lt": x < t.value, "$lte": x <= t.value}[t.op]
        return np.asarray(res, dtype=bool)
    values = t.value if t.op in ("$in", "$nin") else (t.value,)
    wanted = [c for c in (col.index.get(_key(v)) for v in values) if c is not None]
    hit = np.isin(col.codes, np.asarray(wanted, dtype=np.int64))
    return ~hit if t.op in ("$ne", "$nin") else hit


# ---------------------------------------------------------------------- SQL


def filter_sql(flt: Any, metadata_sql: str, params: dict[str, Any], prefix: str = "mf") -> str:
    """A ``WHERE`` fragment for ``flt`` over the jsonb expression ``metadata_sql``.

    Field names and values are bound parameters (``%(mf0)s`` ...) added to ``params``; only
    ``metadata_sql`` (chosen by the caller, never by the user) is pasted into the text.
    Without a filter the fragment is ``TRUE``.
    """
    tree = parse_filter(flt)
    if tree is None:
        return "TRUE"
    counter = [0]

    def bind(value: Any) -> str:
        name = f"{prefix}{counter[0]}"
        counter[0] += 1
        params[name] = value
        return f"%({name})s"

    def render(t: Filter) -> str:
        if isinstance(t, (And, Or)):
            glue = " AND " if isinstance(t, And) else " OR "
            return "(" + glue.join(render(p) for p in t.parts) + ")"
        x = f"({metadata_sql} -> {bind(t.field)}::text)"
        if t.op in RANGE_OPS:
            sym = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[t.op]
            num = f"(CASE WHEN jsonb_typeof({x}) = 'number' THEN ({x} #>> '{{}}')::float8 END)"
            return f"COALESCE({num} {sym} {bind(float(t.value))}::float8, FALSE)"
        values = t.value if t.op in ("$in", "$nin") else (t.value,)
        match = f"COALESCE({x} = ANY({bind([json.dumps(v) for v in values])}::text[]::jsonb[]), FALSE)"
        return f"(NOT {match})" if t.op in ("$ne", "$nin") else match

    return render(tree)


# ---------------------------------------------------------------------- Qdrant


def filter_qdrant(flt: Any, prefix: str = "metadata.") -> Any:
    """A ``qdrant_client.models.Filter`` for ``flt`` over payload keys ``prefix + field``
    (None without a filter)."""
    tree = parse_filter(flt)
    if tree is None:
        return None

    m = require("qdrant_client.models", extra="qdrant", package="qdrant-client")

    def match_one(key: str, v: Scalar) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            # a range matches 2024 and 2024.0 alike (MatchValue(2024) misses a float payload)
            return m.FieldCondition(key=key, range=m.Range(gte=float(v), lte=float(v)))
        return m.FieldCondition(key=key, match=m.MatchValue(value=v))

    def equal_any(key: str, values: Sequence[Scalar]) -> Any:
        conds = [match_one(key, v) for v in values]
        return conds[0] if len(conds) == 1 else m.Filter(should=conds)

    def render(t: Filter) -> Any:
        if isinstance(t, And):
            return m.Filter(must=[render(p) for p in t.parts])
        if isinstance(t, Or):
            return m.Filter(should=[render(p) for p in t.parts])
        key = prefix + t.field
        if t.op in RANGE_OPS:
            return m.FieldCondition(key=key, range=m.Range(**{t.op[1:]: float(t.value)}))
        values = t.value if t.op in ("$in", "$nin") else (t.value,)
        cond = equal_any(key, values)
        return m.Filter(must_not=[cond]) if t.op in ("$ne", "$nin") else cond

    out = render(tree)
    return out if isinstance(out, m.Filter) else m.Filter(must=[out])
